"""The coding qubit's steady-state leakage under leakage injection, from the Lindblad reference (L <= 4).

Physics (docs/physics.md §8 "The QEC view", §12).  Leakage events of
probability p per cycle: at every boundary t = k t_c the Kraus map of
:func:`~lru_mps.references.lindblad.injection_kraus` on site 1.  The quantity
is P_star^(1) at a boundary just before the map, in the periodic steady state
(what p D/(1 + p D) counts: the leaked boundaries), from an empty-leakage
start (site 1 in |0>, sites 2..L thermal, the reference's initial state).

With incommensurate t_c and feedback period 1/G the process has no period;
its t0-averaged boundary value converges to a constant, and P_star^(1) is a
site-1 observable that a measurement on site L does not move when it acts,
so it is a smooth periodic function of t0 and a few midpoint nodes suffice
(``T0_NODES`` = 16 agree with 128 to 3e-6 relative at the working point).
With M nodes the boundary values keep a small quasi-periodic ripple (the comb
of M clock phases slides along the boundaries: 2e-4 relative at p = 0.1 with
16 nodes, 1e-5 with 64; ~1e-5 at p = 1e-3 with either, 1e-8 absolute, which
does not shrink with M: likely round-off), so the value is the mean over the last quarter of
the run, the clock-phase average that the boundaries sample (t_c G
irrational).  The run has ``MIN_CYCLES`` cycles (the thermal start relaxes
at 1/T1q, 17 cycles at the defaults) and is doubled, up to ``MAX_CYCLES``,
until the last two quarters' means agree within ``tol`` of the value
(``residual``: their difference).  Without a thermal bath (decay and
dephasing only) the array relaxes to its ground state while it runs: the
steady state's p -> 0 limit is p D_0, D_0 the single-event duration with the
array at 0 K, which :func:`steady_state` also returns (the same Liouvillian,
the leakage start as its initial vector, summed over the boundaries until
S(k) < ``S_FLOOR``).

Every realization's Liouvillian (charge sector q = 0: the starts are diagonal,
and H, the jumps, the measurement and the injection keep q) is diagonalized
once and serves every p and both durations.  It is built as
lindblad._density_matrices builds it, from the same channel and measurement
operators; :func:`lru_mps.references.lindblad.lindblad_observables` with
``injection=(p, t_c)`` gives the same numbers on any grid (tests/test_qec.py
checks both paths against each other).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..engines.exact.state import embed, hamiltonian_eff, number_of_excitations
from ..errors import require
from ..physics.model import ArraySpec, Realization
from . import lindblad as ref

#: t0 nodes of the feedback clock (module docstring: the boundary value is smooth in t0)
T0_NODES = 16
#: cycles of the first run; doubled until converged, at most MAX_CYCLES
MIN_CYCLES = 256
MAX_CYCLES = 2048
#: the durations' first run (doubled until S < S_FLOOR, at most MAX_CYCLES)
DURATION_CYCLES = 128
#: the single-event sum runs until S(k) is below this
S_FLOOR = 1e-12


@dataclass
class SteadyLeakage:
    """P_star^(1) just before the map at a boundary, periodic steady state: ``value`` the mean over the last quarter
    of ``cycles`` boundaries, ``residual`` its difference from the quarter before, ``converged``: below tol."""

    p: float
    value: float
    residual: float
    cycles: int
    converged: bool


@dataclass
class InjectionReference:
    """One realization: the steady states per p and the single-event durations D = sum_{k>=1} S(k) of the same
    Liouvillian, with the array at 0 K (``D_cold``, the steady state's p -> 0 limit) and thermal (``D_thermal``,
    the study's single-event start); ``D_complete``: both sums reached S < S_FLOOR."""

    steady: list[SteadyLeakage]
    D_cold: float
    D_thermal: float
    D_complete: bool


def steady_state(spec: ArraySpec, real: Realization, ps, t_c: float, t0_nodes: int = T0_NODES,
                 tol: float = 1e-4) -> InjectionReference:
    """The steady-state leakage for every p in ``ps`` and the single-event durations, one realization."""
    ps = [float(p) for p in ps]
    require(all(0.0 < p < 1.0 for p in ps), "injection", ps, "probabilities per cycle in (0, 1)")
    require(math.isfinite(t_c) and t_c > 0, "cycle_time", t_c, "a finite time > 0 (units of 1/J)")
    ref._check(spec, real, [0.0], t0_nodes)
    with ref._one_blas_thread():
        problem = _Problem(spec, real, t0_nodes)
        steady = [problem.steady(p, t_c, tol) for p in ps]
        cold, ok_c = problem.duration(problem.leakage_start(thermal=False), t_c)
        warm, ok_w = problem.duration(problem.leakage_start(thermal=True), t_c)
    return InjectionReference(steady, cold, warm, ok_c and ok_w)


def isolated_site_steady_state(p: float, t_c: float, T1q: float) -> float:
    """Closed form, one site without coupling whose |2> decays at 2/T1q: x = (x + p (1 - x)) e, e = e^{-2 t_c/T1q},
    so x = p e/(1 - (1 - p) e), which is p D/(1 + p D) with D = e/(1 - e): no overlapping events, exact renewal."""
    e = math.exp(-2.0 * t_c / T1q)
    return p * e / (1.0 - (1.0 - p) * e)


class _Problem:
    """The q = 0 sector of one realization's master equation (lindblad._density_matrices' operators)."""

    def __init__(self, spec: ArraySpec, real: Realization, t0_nodes: int):
        self.spec, self.real = spec, real
        H = hamiltonian_eff(spec, real, hermitian_only=True)
        D = H.shape[0]
        cs = ref._jump_operators(spec)
        heff = H - 0.5j * sum((c.conj().T @ c for c in cs), sp.csr_matrix(H.shape))
        eye = sp.identity(D, format="csr")
        liouvillian = -1j * (sp.kron(heff, eye) - sp.kron(eye, heff.conj()))
        liouvillian = (liouvillian + sum((sp.kron(c, c.conj()) for c in cs), sp.csr_matrix(liouvillian.shape))).tocsr()
        measurement = sum(sp.kron(P, P.conj()) for P in ref._measurement_operators(spec)).tocsr()
        N = number_of_excitations(spec.L)
        self.idx = np.flatnonzero((N[:, None] - N[None, :]).ravel() == 0)
        self.offsets, self.period = ref._t0_nodes(spec, t0_nodes)
        self.sector = ref._Sector(liouvillian[self.idx][:, self.idx].toarray(),
                                  measurement[self.idx][:, self.idx].toarray(), self.period)
        # P_star^(1) = the diagonal entries with site 1 in |2> (row-major vec: entry i*D + i)
        level1 = np.indices((3,) * spec.L).reshape(spec.L, -1)[0]
        diag2 = np.flatnonzero(level1 == 2) * (D + 1)
        self.leak = np.isin(self.idx, diag2)
        self.D = D

    def _start(self, rho: np.ndarray) -> np.ndarray:
        return rho.ravel()[self.idx]

    def leakage_start(self, thermal: bool) -> np.ndarray:
        spec = self.spec if thermal else self.spec.replace(
            conditions=type(self.spec.conditions)(self.spec.conditions.T1q, self.spec.conditions.Tphi, 0.0))
        return self._start(ref._initial_rho(spec, self.real, "leakage"))

    def _boundaries(self, x0: np.ndarray, t_c: float, cycles: int, p: float | None) -> np.ndarray:
        """P_star^(1) at k t_c, k = 0..cycles (before the map, when there is one)."""
        times = np.arange(cycles + 1) * t_c
        inj = None
        if p is not None:
            kraus = sum(sp.kron(K, K.conj()) for K in (embed(K, 0, self.spec.L) for K in ref.injection_kraus(p)))
            inj = kraus.tocsr()[self.idx][:, self.idx].toarray()
            s = self.sector
            s.inject_matrix = s.Vinv @ inj @ s.V if s.eig else inj
        grid, inject, keep = ref._with_boundaries(times, None if p is None else (p, t_c))
        counts = ref._measurement_counts(grid, self.offsets, self.period)
        y = ref._propagate(self.sector, x0, grid, self.offsets, counts, inject)[keep]
        return np.real(y[:, self.leak].sum(axis=1))

    def steady(self, p: float, t_c: float, tol: float) -> SteadyLeakage:
        x0 = self._start(ref._initial_rho(self.spec, self.real, "ground"))
        cycles = MIN_CYCLES
        while True:
            x = self._boundaries(x0, t_c, cycles, p)
            q = cycles // 4
            last, before = x[-q:].mean(), x[-2 * q:-q].mean()
            ok = abs(last - before) <= tol * abs(last)
            if ok or cycles >= MAX_CYCLES:
                return SteadyLeakage(p, float(last), float(abs(last - before)), cycles, bool(ok))
            cycles *= 2

    def duration(self, x0: np.ndarray, t_c: float) -> tuple[float, bool]:
        cycles = DURATION_CYCLES
        while True:
            S = self._boundaries(x0, t_c, cycles, None)
            if abs(S[-1]) < S_FLOOR or cycles >= MAX_CYCLES:
                return float(S[1:].sum()), bool(abs(S[-1]) < S_FLOOR)
            cycles *= 2
