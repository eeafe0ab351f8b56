"""Exact density-matrix (Lindblad) reference for small arrays (L <= 4).

Physics (docs/physics.md §1-§5): the model of the trajectories, written as a
master equation for the full 3^L x 3^L density matrix in the frame rotating
at wbar N,

    d rho/dt = -i [H, rho] + sum_k ( c_k rho c_k^dag - 1/2 {c_k^dag c_k, rho} ),

with H = ``hamiltonian_eff(spec, real, hermitian_only=True)`` and
c_k = sqrt(rate_k) op_k for every channel of ``spec.channels()``: engineered
dissipation, the three measurement operators sqrt(G) |0><n|_L of random
feedback, hardware decay and dephasing.  Periodic feedback adds, at the times
t0 + k/G (k = 0, 1, ...), the measurement rho -> sum_n P_n rho P_n^dag with
P_n = |0><n|_L (with a readout error at the reset site, rho -> sum_{m,n}
p(n|m) X_0n P_m rho P_m X_0n, and random feedback's operators are
sqrt(G p(n|m)) X_0n |m><m|_L: :mod:`lru_mps.physics.readout`).  The unknown phase t0 is averaged over [0, 1/G) by the
midpoint rule with M = ``t0_nodes`` nodes.  An observable at a fixed time is
a smooth function of t0 except where a measurement time crosses that time,
where it jumps; the midpoint rule therefore converges like O(1/M) (at most
|jump| / (2M) per crossing: largest when a crossing falls on a node, O(1/M^2)
when it falls on a cell boundary), not O(1/M^2) in general.  As in the trajectory code, a
measurement at exactly a grid time acts after the observables are recorded.

Leakage injection (optional, ``injection=(p, t_c)``; docs/physics.md §8 "The QEC view"): at every cycle
boundary t = k t_c (k = 0, 1, ...) the Kraus map rho -> sum_i K_i rho K_i^dag on site 1 with
K_0 = sqrt(1-p) (|0><0| + |1><1|) + |2><2|, K_1 = sqrt(p) |2><0|, K_2 = sqrt(p) |2><1|
(:func:`injection_kraus`).  It acts after the observables at that time are recorded, like a measurement, so the
value at a boundary is the one just before the map.  It acts on site 1 and the measurement on site L, so at equal
times their order does not matter.  A boundary within 1e-9 max(t_c, 1) of a grid time is taken at that grid time.
Without it (None) every number is the same, bit for bit, as before the option existed.

Initial state: site 1 in ``site1_state(init)`` (or ``init`` = "ground": site 1 in |0>), sites 2..L in the diagonal
J = 0 Gibbs state ``spec.thermal_probabilities(real)``, ordered as np.kron
over the sites with site 1 first.

Units: energies and rates in J, times in 1/J (hbar = 1).

Observables are those of :class:`~lru_mps.mcwf.records.TrajectoryRecord`: the
level populations of every site and <sigma^-_1> = Tr(|0><1|_1 rho) in the
frame of the coding qubit, exp(+i w_q t) rho_1[1, 0], with w_q chosen as in
:func:`~lru_mps.mcwf.loop.run_trajectory` (``qubit_frequency`` None: the
dressed frequency ``spec.qubit_frequency(real)``; pass ``real.dw[0]`` for
the bare frame), so that a trajectory ensemble mean can be compared with
them field by field.

Main solver (:func:`lindblad_observables`).  The superoperator acts on
rho flattened row-major (vec(A rho B) = (A kron B^T) vec(rho)).  H and every
op^dag op conserve N, and every jump and measurement lowers N equally on the
ket and the bra side, so the Liouvillian and the measurement keep the charge
q = N_ket - N_bra of a matrix element (a readout error's |x><m|_L changes N
by x - m on both sides: q is kept too).  Each sector q present in the initial
state (q = 0, and q = 1 for the coherence state; q < 0 follows by Hermiticity)
is propagated on its own: its Liouvillian is diagonalized once, so the
evolution over any time is exact and costs one elementwise exponential, and
the measurement and the whole period "evolve 1/G, measure" are fixed matrices
in that eigenbasis.  A sector whose eigenvectors are too ill-conditioned
falls back to scipy.linalg.expm (exact but slow for many t0 nodes).  The sector's propagation is
:mod:`lru_mps.references.sector_propagation`; this module builds the sectors from the model.

:func:`lindblad_observables_ode` is an independent check: it integrates the
matrix-form equation d rho/dt = -i (H_eff rho - rho H_eff^dag) + sum_k c_k rho
c_k^dag, H_eff = H - i/2 sum_k c_k^dag c_k, with scipy's solve_ivp.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import reduce

import numpy as np
import scipy.sparse as sp
from scipy.integrate import solve_ivp
from threadpoolctl import threadpool_limits

from ..physics import operators as ops
from ..engines.exact.state import embed, hamiltonian_eff, number_of_excitations
from ..errors import require
from ..physics.initial_states import site1_state
from ..physics.model import ArraySpec, Realization
from ..physics.readout import kraus
from .sector_propagation import _measurement_counts, _propagate, _sector, _Sector  # noqa: F401 (_Sector: injection.py)

MAX_LENGTH = 4


@dataclass
class ReferenceResult:
    """Ensemble-averaged observables on the time grid (fields as in TrajectoryRecord).

    ``populations[k, l, m]`` = probability of level m on site l at times[k];
    ``coherence[k]`` = <sigma^-_1> = Tr(|0><1|_1 rho) exp(+i w_q t).
    """

    times: np.ndarray
    populations: np.ndarray
    coherence: np.ndarray


# ----------------------------------------------------------------- public API
def lindblad_observables(
    spec: ArraySpec, real: Realization, init: str, times, t0_nodes: int = 400, qubit_frequency: float | None = None,
    injection: tuple[float, float] | None = None,
) -> ReferenceResult:
    """Observables of the master equation, propagated exactly (units of J, 1/J).

    ``qubit_frequency`` sets the coherence frame as in run_trajectory (None: dressed); ``injection`` = (p, t_c):
    the leakage-injection map at every boundary k t_c (module docstring).
    """
    rho = lindblad_density_matrices(spec, real, init, times, t0_nodes, injection)
    return _observables(rho, spec, real, np.asarray(times, dtype=float), qubit_frequency)


def lindblad_density_matrices(spec: ArraySpec, real: Realization, init: str, times, t0_nodes: int = 400,
                              injection: tuple[float, float] | None = None) -> np.ndarray:
    """The (t0-averaged) density matrices rho(t), shape (T, 3^L, 3^L), of the main solver."""
    times = _check(spec, real, times, t0_nodes)
    _check_injection(injection)
    with _one_blas_thread():
        return _density_matrices(spec, real, init, times, t0_nodes, injection)


def lindblad_observables_ode(
    spec: ArraySpec, real: Realization, init: str, times, t0_nodes: int = 400, qubit_frequency: float | None = None,
    injection: tuple[float, float] | None = None,
) -> ReferenceResult:
    """The same observables from solve_ivp on the matrix-form master equation (slow; for checks)."""
    times = _check(spec, real, times, t0_nodes)
    _check_injection(injection)
    with _one_blas_thread():
        rho = _density_matrices_ode(spec, real, init, times, t0_nodes, injection)
    return _observables(rho, spec, real, times, qubit_frequency)


def _one_blas_thread():
    """Small dense matrices: BLAS threads only add overhead and contention (as in ensemble.py)."""
    return threadpool_limits(limits=1, user_api="blas")


# ------------------------------------------------------------------ the model
def _check(spec: ArraySpec, real: Realization, times, t0_nodes) -> np.ndarray:
    require(
        spec.L <= MAX_LENGTH,
        "length",
        spec.L,
        f"2 <= L <= {MAX_LENGTH} for the density-matrix reference (3^L x 3^L density matrix)",
        "use the trajectory engines for longer arrays",
    )
    require(real.L == spec.L, "realization", real.L, f"a realization of L = {spec.L} sites")
    times = np.asarray(times, dtype=float)
    require(
        times.ndim == 1 and np.all(np.isfinite(times)) and np.all(times >= 0) and np.all(np.diff(times) >= 0),
        "times",
        times,
        "a 1-D, non-decreasing grid of finite times >= 0 (units of 1/J)",
    )
    require(
        isinstance(t0_nodes, (int, np.integer)) and t0_nodes >= 1,
        "t0_nodes",
        t0_nodes,
        "an integer number of t0 nodes >= 1",
    )
    return times


def _jump_operators(spec: ArraySpec) -> list[sp.csr_matrix]:
    """c_k = sqrt(rate) op on the full space, for every channel of the master equation."""
    return [np.sqrt(ch.rate) * embed(ch.op, ch.site, spec.L) for ch in spec.channels()]


def _measurement_operators(spec: ArraySpec) -> list[sp.csr_matrix]:
    """P_n = |0><n| on the last site (periodic feedback), n = 0, 1, 2; with a readout error the Kraus operators
    sqrt(p(n|m)) X_0n |m><m|_L = sqrt(p) |x(m, n)><m|_L (:func:`lru_mps.physics.readout.kraus`).  With several
    reset sites every site is measured at once: the products of one operator per site (they commute)."""
    def on(site):
        if spec.readout is None:
            return [embed(ops.reset_op(n), site, spec.L) for n in range(3)]
        return [np.sqrt(p) * embed(np.outer(ops.ket(k), ops.ket(m)), site, spec.L) for p, k, m in kraus(spec.readout)]

    out = on(spec.reset_sites[0])
    for site in spec.reset_sites[1:]:
        out = [(A @ B).tocsr() for A in out for B in on(site)]
    return out


def _t0_nodes(spec: ArraySpec, t0_nodes: int) -> tuple[np.ndarray, float]:
    """Midpoint nodes for t0 in [0, 1/G) and the period 1/G; one node at inf without periodic feedback."""
    if spec.reset.kind != "periodic":
        return np.array([np.inf]), np.inf
    period = 1.0 / spec.reset.rate
    return (np.arange(t0_nodes) + 0.5) * period / t0_nodes, period


def _initial_rho(spec: ArraySpec, real: Realization, init: str) -> np.ndarray:
    """Site 1 in the prepared pure state ("ground": |0>), sites 2..L in their diagonal thermal states."""
    psi = ops.ket(0) if init == "ground" else site1_state(init)
    p = spec.thermal_probabilities(real)
    return reduce(np.kron, [np.outer(psi, psi.conj())] + [np.diag(p[l]).astype(complex) for l in range(1, spec.L)])


def _observables(rho: np.ndarray, spec: ArraySpec, real: Realization, times, qubit_frequency) -> ReferenceResult:
    """Site populations and <sigma^-_1> (coding-qubit frame) from rho(t), shape (T, 3^L, 3^L)."""
    T, L = len(times), real.L
    w_q = spec.qubit_frequency(real) if qubit_frequency is None else qubit_frequency
    populations = np.empty((T, L, 3))
    for l in range(L):
        r = rho.reshape(T, 3**l, 3, 3 ** (L - l - 1), 3**l, 3, 3 ** (L - l - 1))
        rdm = np.einsum("taibajb->tij", r)
        populations[:, l] = np.real(np.diagonal(rdm, axis1=1, axis2=2))
        if l == 0:
            coherence = rdm[:, 1, 0] * np.exp(1j * w_q * times)
    return ReferenceResult(times=times, populations=populations, coherence=coherence)


# ------------------------------------------------------------- ODE check
def _density_matrices_ode(spec: ArraySpec, real: Realization, init: str, times, t0_nodes: int,
                          injection=None) -> np.ndarray:
    """rho(t) averaged over the t0 nodes: solve_ivp on -i(H_eff rho - rho H_eff^dag) + sum_k c_k rho c_k^dag."""
    H = hamiltonian_eff(spec, real, hermitian_only=True, dense=True)
    cs = np.array([c.toarray() for c in _jump_operators(spec)]).reshape(-1, *H.shape)
    cdag = cs.conj().transpose(0, 2, 1)
    heff = H - 0.5j * (cdag @ cs).sum(axis=0)
    projs = [P.toarray() for P in _measurement_operators(spec)]
    D = H.shape[0]

    def rhs(t, y):
        rho = y.reshape(D, D)
        drho = -1j * (heff @ rho - rho @ heff.conj().T) + (cs @ rho @ cdag).sum(axis=0)
        return drho.ravel()

    def evolve(rho, t_from, t_to):
        if t_to <= t_from:
            return rho
        sol = solve_ivp(rhs, (t_from, t_to), rho.ravel(), method="DOP853", rtol=1e-10, atol=1e-12)
        return sol.y[:, -1].reshape(D, D)

    offsets, period = _t0_nodes(spec, t0_nodes)
    rho0 = _initial_rho(spec, real, init)
    grid, inject, keep = _with_boundaries(times, injection)
    kraus = [] if injection is None else [embed(K, 0, spec.L).toarray() for K in injection_kraus(injection[0])]
    mean = np.zeros((len(grid), D, D), dtype=complex)
    for t0 in offsets:
        rho, t, t_meas = rho0, 0.0, t0
        for k, t_grid in enumerate(grid):
            while t_meas < t_grid:  # a measurement at exactly t_grid comes after recording
                rho = evolve(rho, t, t_meas)
                rho = sum(P @ rho @ P.conj().T for P in projs)
                t, t_meas = t_meas, t_meas + period
            rho = evolve(rho, t, t_grid)
            t = t_grid
            mean[k] += rho / len(offsets)
            if inject is not None and inject[k]:  # also after recording
                rho = sum(K @ rho @ K.conj().T for K in kraus)
    return mean[keep]


# -------------------------------------------------------------- main solver
def _density_matrices(spec: ArraySpec, real: Realization, init: str, times: np.ndarray, t0_nodes: int,
                      injection=None) -> np.ndarray:
    """rho(t) averaged over the t0 nodes, assembled from its charge sectors q = N_ket - N_bra."""
    H = hamiltonian_eff(spec, real, hermitian_only=True)
    D = H.shape[0]
    cs = _jump_operators(spec)
    heff = H - 0.5j * sum((c.conj().T @ c for c in cs), sp.csr_matrix(H.shape))
    eye = sp.identity(D, format="csr")
    liouvillian = -1j * (sp.kron(heff, eye) - sp.kron(eye, heff.conj()))
    liouvillian = (liouvillian + sum((sp.kron(c, c.conj()) for c in cs), sp.csr_matrix(liouvillian.shape))).tocsr()
    measurement = sum(sp.kron(P, P.conj()) for P in _measurement_operators(spec)).tocsr()
    offsets, period = _t0_nodes(spec, t0_nodes)
    grid, inject, keep = _with_boundaries(times, injection)
    kraus = None if injection is None else sum(
        sp.kron(K, K.conj()) for K in (embed(K, 0, spec.L) for K in injection_kraus(injection[0]))).tocsr()
    counts = _measurement_counts(grid, offsets, period)

    rho0 = _initial_rho(spec, real, init).ravel()
    N = number_of_excitations(spec.L)
    charge = (N[:, None] - N[None, :]).ravel()
    rho = np.zeros((len(times), D * D), dtype=complex)
    for q in range(0, 2 * spec.L + 1):
        idx = np.flatnonzero(charge == q)
        if not np.any(rho0[idx]):
            continue
        sector = _sector(liouvillian[idx][:, idx].toarray(), measurement[idx][:, idx].toarray(), period,
                         None if kraus is None else kraus[idx][:, idx].toarray())
        rho[:, idx] = _propagate(sector, rho0[idx], grid, offsets, counts, inject)[keep]
    rho = rho.reshape(len(times), D, D)
    below = charge.reshape(D, D) < 0  # q < 0 elements are the conjugates of the q > 0 ones
    rho[:, below] = np.conj(np.transpose(rho, (0, 2, 1))[:, below])
    return rho


# ------------------------------------------------------------ leakage injection
def injection_kraus(p: float) -> list[np.ndarray]:
    """K_0 = sqrt(1-p)(|0><0| + |1><1|) + |2><2|, K_1 = sqrt(p)|2><0|, K_2 = sqrt(p)|2><1| (one qutrit)."""
    K0 = np.diag([math.sqrt(1.0 - p), math.sqrt(1.0 - p), 1.0]).astype(complex)
    K1, K2 = np.zeros((3, 3), complex), np.zeros((3, 3), complex)
    K1[2, 0], K2[2, 1] = math.sqrt(p), math.sqrt(p)
    return [K0, K1, K2]


def _check_injection(injection) -> None:
    if injection is None:
        return
    try:
        p, t_c = (float(x) for x in injection)
        ok = True
    except (TypeError, ValueError):
        ok, p, t_c = False, math.nan, math.nan
    require(ok and 0.0 <= p <= 1.0 and math.isfinite(t_c) and t_c > 0, "injection", injection,
            "(p, t_c): a probability per cycle in [0, 1] and a cycle time > 0 (units of 1/J)")


def _with_boundaries(times: np.ndarray, injection):
    """(grid, inject, keep): the output times with every boundary k t_c <= times[-1] added (one within
    1e-9 max(t_c, 1) of an output time is that time, its last copy), inject[i] whether a map follows grid[i],
    and the grid indices of the output times.  Without injection: (times, None, slice(None))."""
    if injection is None:
        return times, None, slice(None)
    t_c = float(injection[1])
    b = np.arange(int(np.floor(times[-1] / t_c * (1.0 + 1e-12))) + 1) * t_c
    b = b[b <= times[-1] + 1e-9 * max(t_c, 1.0)]
    up = np.minimum(np.searchsorted(times, b), len(times) - 1)  # the first output time >= b, and the one before
    near = np.where(np.abs(times[np.maximum(up - 1, 0)] - b) <= np.abs(times[up] - b), np.maximum(up - 1, 0), up)
    snap = np.abs(times[near] - b) <= 1e-9 * max(t_c, 1.0)
    near = np.searchsorted(times, times[near], side="right") - 1  # the last copy of that time
    extra = b[~snap]
    grid = np.concatenate([times, extra])
    order = np.argsort(grid, kind="stable")
    where = np.empty(len(grid), dtype=int)
    where[order] = np.arange(len(grid))
    inject = np.zeros(len(grid), dtype=bool)
    inject[where[near[snap]]] = True
    inject[where[len(times):]] = True
    return grid[order], inject, where[: len(times)]
