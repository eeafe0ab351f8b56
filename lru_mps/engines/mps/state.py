"""Qutrit MPS backend: TEBD of the non-Hermitian H_eff on ordinary (one-trajectory) states.

The TEBD kernel (bond gates, Trotter schedule, charge-block SVD split with an
absolute cutoff and a maximum bond, environments, diagnostics) lives in
:mod:`lru_mps.engines.mps.tebd`; this module holds the engine's options
(:class:`MPSOptions`, validated), the propagator of one realization and the
state object the trajectory loop uses (the engine itself:
:mod:`lru_mps.engines.mps.engine`).  A state is a row of :mod:`~lru_mps.engines.mps.tebd`
(tensors A_l[chi_l, 3, chi_{l+1}] with bond charges) in mixed canonical form
around ``centre``: sites left of it are left isometries, sites right of it
right isometries, so <psi|psi> = ||A_centre||^2.  Bond splits keep the
singular values above an *absolute* cutoff (default 1e-12; quimb's default
relative cutoff would discard the tiny leading-edge amplitudes that carry the
physics here) up to a maximum bond; the discarded weight, the largest bond and
the Trotter diagnostic (drift of <H> over unitary stretches, when H_eff = H)
are tracked per trajectory.

Two kernels run the same schedule: ``lean`` (:func:`~lru_mps.engines.mps.kernels.sweep`,
the production path) and ``quimb`` (quimb's MatrixProductState.gate_split_ for
the split, the reference; no charge blocks).  They agree to ~1e-12 on the same
input.  The Hamiltonian is also available as a quimb MPO
(:func:`hamiltonian_mpo`) built from the same local terms, which contracts to
the exact backend's H at small L.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...defaults import MPS
from ...errors import ParameterError, require
from ...physics.model import ArraySpec, Realization
from ...physics import operators as ops
from .environments import copy_row, environments
from .kernels import centre_norm2, move_centre, sweep
from .tebd import ORDERS, BondGates, apply_local, bond_hamiltonians, product_row, row_from_configurations

#: warn when a trajectory exceeds these
DISCARDED_WEIGHT_WARN = 1e-6
NORM_ERROR_WARN = 1e-8


def refuse_graph(spec: ArraySpec) -> None:
    """The MPS engine's bonds are the chain's (l, l+1): refuse a coupling graph with one line."""
    if not spec.is_chain:
        require(False, "engine", "mps", f"a chain for the MPS engine (its bonds are (l, l+1)); geometry "
                f"{spec.geometry.name} is a graph", "use the exact or sector engine on a graph geometry")


def hamiltonian_mpo(spec: ArraySpec, real: Realization, hermitian_only: bool = True):
    """H (or H_eff) as a quimb MatrixProductOperator of bond dimension 4, from the model's local terms.

    W_l = [[1, 0, 0, 0], [a, 0, 0, 0], [a^dag, 0, 0, 0], [h_l, J_l a^dag, J_l a, 1]], J_l the coupling of
    bond (l, l+1) (``real.hoppings``).
    """
    import quimb.tensor as qtn

    refuse_graph(spec)
    L = spec.L
    onsite = spec.onsite_terms(real)
    if hermitian_only:
        onsite = 0.5 * (onsite + onsite.conj().transpose(0, 2, 1))
    J = np.append(real.hoppings, 0.0)  # (the last site's row 3 is not used)
    arrays = []
    for l in range(L):
        W = np.zeros((4, 4, 3, 3), dtype=complex)
        W[0, 0] = ops.identity
        W[1, 0] = ops.a
        W[2, 0] = ops.adag
        W[3, 0] = onsite[l]
        W[3, 1] = J[l] * ops.adag
        W[3, 2] = J[l] * ops.a
        W[3, 3] = ops.identity
        if l == 0:
            arrays.append(W[3])  # (r, u, d)
        elif l == L - 1:
            arrays.append(W[:, 0])  # (l, u, d)
        else:
            arrays.append(W)  # (l, r, u, d)
    return qtn.MatrixProductOperator(arrays, shape="lrud")


class MPSPropagator:
    """Bond terms and gates of one realization; makes MPS states."""

    def __init__(self, spec: ArraySpec, real: Realization, engine: "MPSOptions"):
        refuse_graph(spec)
        self.spec, self.realization, self.engine, self.L = spec, real, engine, spec.L
        self.h_bonds = bond_hamiltonians(spec, real)
        #: the bond terms of the Hermitian H (for <H>)
        self.h_hermitian = 0.5 * (self.h_bonds + self.h_bonds.conj().transpose(0, 2, 1))
        self.gates = BondGates(self.h_bonds, engine.order)
        self.hermitian = bool(np.allclose(self.h_bonds, self.h_hermitian))

    def state(self, site_vectors) -> "MPSState":
        """The product state of ``site_vectors`` (charge blocks unless the quimb kernel runs it)."""
        quimb = self.engine.kernel == "quimb"
        arrs, qs, pc, centre = product_row(site_vectors, self.gates.symmetric and not quimb)
        return (QuimbMPSState if quimb else MPSState)(self, arrs, qs, pc, centre)

    def state_from_configurations(self, occ, amplitudes) -> "MPSState":
        """The state sum_j amplitudes[j] |occ[j]> (occupations (m, L), distinct rows), truncated as a TEBD split
        is (the engine's cutoff and max_bond; the discarded weight starts the diagnostics): the hand-over of a
        sector trajectory (:func:`~lru_mps.engines.mps.tebd.row_from_configurations`)."""
        quimb = self.engine.kernel == "quimb"
        arrs, qs, pc, centre, discarded, largest = row_from_configurations(
            occ, amplitudes, self.gates.symmetric and not quimb, self.engine.cutoff, self.engine.max_bond)
        diag = {"discarded_weight": discarded, "max_bond": largest, "energy_drift": 0.0, "steps": 0}
        return (QuimbMPSState if quimb else MPSState)(self, arrs, qs, pc, centre, diag)


class MPSState:
    """A qutrit MPS evolved by TEBD (lean kernel); implements TrajectoryState."""

    def __init__(self, prop: MPSPropagator, arrs, qs, pc: np.ndarray, centre: int, diag: dict | None = None):
        self.prop = prop
        self.arrs, self.qs, self.pc = arrs, qs, pc
        self.centre = centre
        self.time_step = prop.engine.dt
        self.diag = diag if diag is not None else {
            "discarded_weight": 0.0,
            "max_bond": 1,
            "energy_drift": 0.0,
            "steps": 0,
        }
        #: <H> at the start of the current unitary stretch (None: none yet)
        self.energy_ref: float | None = None
        self._env = None

    # ---------------------------------------------------------------- evolution
    def evolve(self, dt: float) -> None:
        """One Trotter step of length dt (1/J): the schedule of :mod:`~lru_mps.engines.mps.tebd`."""
        if self.prop.L == 1:
            raise ParameterError("length", 1, "L >= 2")
        self.move_centre(self.prop.L - 1)
        self.swept(*self._sweep(self.prop.gates.step(dt)))

    def _sweep(self, gates: np.ndarray) -> tuple[float, int]:
        g, eng = self.prop.gates, self.prop.engine
        return sweep(self.arrs, self.qs, self.pc, gates, g.bonds, g.right, eng.cutoff, eng.max_bond)

    def swept(self, discarded: float, max_bond: int, steps: int = 1) -> None:
        """Book the truncation of ``steps`` steps (the sweeps ran on this state's tensors)."""
        self.diag["discarded_weight"] += float(discarded)
        self.diag["max_bond"] = max(self.diag["max_bond"], int(max_bond))
        self.diag["steps"] += int(steps)
        self.centre = self.prop.L - 1
        self._env = None

    def move_centre(self, site: int) -> None:
        """Move the orthogonality centre to ``site`` (block SVDs, no truncation)."""
        if site != self.centre:
            self.centre = int(move_centre(self.arrs, self.qs, self.pc, self.centre, site))

    # ----------------------------------------------------------- observables
    def norm2(self) -> float:
        return float(centre_norm2(self.arrs[self.centre]))

    def _environments(self):
        """(rho (L, 3, 3), <H>, <psi|psi> by full contraction), cached until the state changes."""
        if self._env is None:
            track = self.prop.hermitian and self.prop.engine.track_energy
            self._env = environments(self.arrs, self.prop.h_hermitian, track)
        return self._env

    def site_populations(self) -> np.ndarray:
        self._track_energy()
        return np.real(np.diagonal(self._environments()[0], axis1=1, axis2=2)).copy()

    def site_rdm(self, site: int) -> np.ndarray:
        return self._environments()[0][site].copy()

    # ------------------------------------------------------------- operations
    def apply_local(self, op: np.ndarray, site: int) -> None:
        self.centre, self.pc = apply_local(self.arrs, self.qs, self.pc, self.centre, np.asarray(op, complex), site)
        self._env = None
        self.energy_ref = None  # a new unitary stretch starts

    def scale(self, factor: float) -> None:
        self.arrs[self.centre] = self.arrs[self.centre] * factor
        self._env = None

    def copy(self) -> "MPSState":
        arrs, qs = copy_row(self.arrs, self.qs)
        new = type(self)(self.prop, arrs, qs, self.pc, self.centre, dict(self.diag))
        new.energy_ref = self.energy_ref
        return new

    # ------------------------------------------------------------ diagnostics
    def tensors(self) -> list[np.ndarray]:
        """The tensors with the right boundary summed (one index): a plain MPS of the state (copies)."""
        arrs = [np.array(a) for a in self.arrs]
        arrs[-1] = arrs[-1].sum(axis=2, keepdims=True)
        return arrs

    def to_quimb(self):
        """The state as a quimb MatrixProductState (a copy)."""
        import quimb.tensor as qtn

        arrs = self.tensors()
        if len(arrs) == 1:
            return None
        q = [arrs[0][0].T] + [a.transpose(0, 2, 1) for a in arrs[1:-1]] + [arrs[-1][:, :, 0]]
        return qtn.MatrixProductState(q, shape="lrp")

    def dense(self) -> np.ndarray:
        """Full 3^L vector (small L only; site 1 most significant)."""
        arrs = self.tensors()
        v = arrs[0]
        for A in arrs[1:]:
            v = np.einsum("...a,aib->...ib", v, A)
        return v.reshape(-1)

    def energy(self) -> float:
        """<psi|H|psi> / <psi|psi> with the Hermitian H (its bond terms)."""
        _, e, full = environments(self.arrs, self.prop.h_hermitian, True)
        return float(e / full)

    def _track_energy(self) -> None:
        """Drift of <H> over unitary stretches (only meaningful when H_eff = H)."""
        if not self.prop.hermitian or not self.prop.engine.track_energy:
            return
        _, e, full = self._environments()
        e = e / full
        if self.energy_ref is None:
            self.energy_ref = e
        else:
            self.diag["energy_drift"] = max(self.diag["energy_drift"], abs(e - self.energy_ref))

    def norm_error(self) -> float:
        """| <psi|psi> by full contraction - ||centre||^2 | relative (canonical-form consistency)."""
        full = float(self._environments()[2])
        n2 = self.norm2()
        return abs(full - n2) / max(n2, 1e-300)

    def diagnostics(self) -> dict:
        d = dict(self.diag)
        d["norm_error"] = self.norm_error()
        return d


class QuimbMPSState(MPSState):
    """Reference kernel: the same schedule with quimb's gate_split_ for every split (slow, for validation)."""

    def _sweep(self, gates: np.ndarray) -> tuple[float, int]:
        g, eng = self.prop.gates, self.prop.engine
        q = self.to_quimb()
        opts = dict(cutoff=eng.cutoff, cutoff_mode="abs", max_bond=eng.max_bond)
        for s, b in enumerate(g.bonds):
            q.gate_split_(gates[s].reshape(9, 9), (int(b), int(b) + 1), absorb="right" if g.right[s] else "left",
                          **opts)
        L = self.prop.L
        maxb = 1
        for l in range(L):
            t = q[l]
            k = q.site_ind(l)
            if l == 0:
                A = np.asarray(t.transpose(k, q.bond(0, 1)).data).reshape(1, 3, -1)
            elif l == L - 1:
                A = np.asarray(t.transpose(q.bond(l - 1, l), k).data).reshape(-1, 3, 1)
            else:
                A = np.asarray(t.transpose(q.bond(l - 1, l), k, q.bond(l, l + 1)).data)
            self.arrs[l] = np.ascontiguousarray(A, dtype=complex)
            self.qs[l + 1] = np.zeros(A.shape[2], dtype=np.int64)
            maxb = max(maxb, A.shape[2])
        return 0.0, maxb


class MPSOptions:
    """The MPS engine's validated options and its propagators: what the engine and its batched stores share.

    :class:`~lru_mps.engines.mps.engine.MPSEngine` adds what an engine names
    (its batched store, checks, description); the stores build an
    MPSOptions from ``settings.engine_options`` (the engine names them, so
    they do not import it).
    """

    max_length = 1000

    def __init__(self, dt: float = MPS["dt"], order: int = MPS["order"], max_bond: int = MPS["max_bond"],
                 cutoff: float = MPS["cutoff"], kernel: str = "lean", track_energy: bool = True):
        require(order in ORDERS, "order", order, "2, 4 or 6 (Trotter order)")
        require(int(max_bond) == max_bond and max_bond >= 1, "max_bond", max_bond, "an integer >= 1")
        require(math.isfinite(cutoff) and cutoff >= 0, "cutoff", cutoff, "an absolute singular-value cutoff >= 0")
        require(kernel in ("lean", "quimb"), "kernel", kernel, "lean or quimb")
        require(math.isfinite(dt) and dt > 0, "dt", dt, "a time step > 0 (units of 1/J)")
        self.dt, self.order, self.max_bond, self.cutoff = float(dt), int(order), int(max_bond), float(cutoff)
        self.kernel, self.track_energy = kernel, track_energy

    def prepare(self, spec: ArraySpec, real: Realization) -> MPSPropagator:
        refuse_graph(spec)
        spec.check_time_step(self.dt, "dt")
        return MPSPropagator(spec, real, self)


def warn_diagnostics(diag: dict, label: str = "trajectory") -> None:
    """Warn when a trajectory's truncation or norm error exceeds the thresholds."""
    if diag.get("discarded_weight", 0.0) > DISCARDED_WEIGHT_WARN:
        warnings.warn(f"{label}: MPS discarded weight {diag['discarded_weight']:.2e} > {DISCARDED_WEIGHT_WARN:g}; "
                      "raise --max-bond or lower --cutoff", RuntimeWarning, stacklevel=2)
    if diag.get("norm_error", 0.0) > NORM_ERROR_WARN:
        warnings.warn(f"{label}: MPS norm error {diag['norm_error']:.2e} > {NORM_ERROR_WARN:g}", RuntimeWarning,
                      stacklevel=2)


def the_last(site: int, last: int) -> None:
    """An MPS row is a chain whose one reset site is the last (the orthogonality centre at rest): refuse another."""
    if site != last:
        raise ValueError(f"the MPS engine resets the last site ({last}) only, not site {site}")
