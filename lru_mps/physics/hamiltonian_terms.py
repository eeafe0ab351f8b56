"""The local terms of H_eff every engine is built from: on-site parts, the hopping on every bond, their scales.

A base of :class:`~lru_mps.physics.model.ArraySpec` (no fields of its own; it
reads the spec's ``L``, ``geometry``, disorder and channels).  H_eff (units
of J) is a sum of one-site terms (dw_l n_l - (U_l/2) n_l (n_l - 1) and
-(i/2) rate op^dag op of every continuous jump channel) and of two-site
hopping terms J_b (a_i^dag a_j + h.c.) on the bonds b = (i, j) of the
chain, (l, l+1), or of a coupling graph (:mod:`lru_mps.physics.geometry`).
Every engine (dense, sector, MPS) and the Lindblad reference take these
terms from here, so there is one Hamiltonian everywhere.
"""

from __future__ import annotations

import math
import numpy as np

from . import disorder
from . import operators as ops
from ..errors import require


class HamiltonianTerms:
    """The one-site and bond terms of H_eff and their scales (a base of ArraySpec; see the module docstring).

    ``real`` is always a :class:`~lru_mps.physics.model.Realization` of the spec.
    """

    def edges(self) -> tuple:
        """The bonds (i, j) that carry a hopping: the chain's (l, l+1), or the geometry's edges."""
        return tuple((l, l + 1) for l in range(self.L - 1)) if self.geometry is None else self.geometry.edges

    @property
    def is_chain(self) -> bool:
        """True on the chain (no geometry, or a geometry whose edges are the chain's)."""
        return self.geometry is None or self.geometry.is_chain

    def _real_edges(self):
        return None if self.geometry is None else self.geometry.edges

    def couplings(self, real) -> np.ndarray:
        """J_b of every bond of :meth:`edges` (units of J; ``real.J`` None: 1 on every bond), checked against the
        realization's own bonds."""
        E = self.edges()
        J = np.ones(len(E)) if real.J is None else np.asarray(real.J, dtype=float)
        require(J.shape == (len(E),) and (real.edges is None or tuple(real.edges) == E), "realization",
                f"{real.n_bonds} bonds", f"one coupling per bond of the spec ({len(E)}: {E})")
        return J

    def one_particle_hamiltonian(self, real, dw: np.ndarray | None = None) -> np.ndarray:
        """``H1 = diag(dw) + sum_b J_b (|i><j| + h.c.)``: H on the N = 1 sector (L x L; ``dw``: real.dw if None)."""
        h = np.diag(np.asarray(real.dw if dw is None else dw, dtype=float))
        for (i, j), x in zip(self.edges(), self.couplings(real)):
            h[i, j] += x
            h[j, i] += x
        return h

    def onsite_terms(self, real) -> np.ndarray:
        """On-site parts of H_eff, shape (L, 3, 3) complex.

        Includes -(i/2) rate op^dag op of every :meth:`jump_channels` channel.
        """
        nd = np.array([0.0, 1.0, 2.0])
        h = np.zeros((self.L, 3, 3), dtype=complex)
        for l in range(self.L):
            h[l] = np.diag(real.dw[l] * nd - 0.5 * real.U[l] * nd * (nd - 1.0))
        for ch in self.jump_channels():
            h[ch.site] += -0.5j * ch.rate * (ch.op.conj().T @ ch.op)
        return h

    def bond_term(self) -> np.ndarray:
        """Hopping on one bond, J (a^dag a' + a a'^dag) as a 9x9 matrix (J = 1)."""
        return np.kron(ops.adag, ops.a) + np.kron(ops.a, ops.adag)

    def bond_terms(self, real) -> np.ndarray:
        """The hopping of every bond (i, j) of :meth:`edges`, J_b (a_i^dag a_j + h.c.), shape (bonds, 9, 9), acting on
        (i, j) in that order (J_b = 1: :meth:`bond_term`)."""
        return self.couplings(real)[:, None, None] * self.bond_term()[None]

    def fastest_scale(self) -> float:
        """The largest frequency in H_eff (units of J), for time-step checks."""
        dw_max, du_max = disorder.extent(self.disorder_pattern, self.W, self.e2_spread, self.frequency_noise)
        umax = self.Ubar + du_max  # box, no spreads: Ubar + W (|dw_l| <= W/2)
        total_rate = sum(ch.rate * np.abs(ch.op.conj().T @ ch.op).max() for ch in self.jump_channels())
        P = self.profile()
        degree = 2 if self.geometry is None else max(2, int(self.geometry.degrees().max()))
        hop = degree * (1.0 if P is None else float(P.max())) * (1.0 + disorder.NEGLIGIBLE_SIGMAS * self.hopping_spread)
        # (2 max J_l: 2 J without the profile and the spread; on a graph the max degree times max J_l)
        if self.device is not None:  # W = 0: the extent is the spreads'; add the file's own extremes
            dw_dev, u_dev, j_dev = self.device.extent()
            dw_max, umax, hop = dw_max + dw_dev, umax - self.Ubar + u_dev, hop * j_dev
        return max(umax, dw_max + hop, total_rate, self.reset.rate)

    def check_time_step(self, dt: float, name: str = "dt") -> float:
        """Refuse a step that cannot resolve the fastest scale (Nyquist: dt * fastest < pi)."""
        fastest = self.fastest_scale()
        limit = math.pi / fastest
        require(math.isfinite(dt) and 0 < dt < limit, name, dt,
                f"0 < dt < {limit:.4g}/J = pi/(fastest scale {fastest:.4g} J)",
                "the on-site anharmonicity U_l and the channel rates must be resolved")
        return dt
