"""Exact fixed-excitation-number (N-sector) states for long arrays: bases, sector H_eff, propagator, state.

Every channel keeps a definite excitation number between events (a_l lowers
N by one, n_l and the projectors keep it, |0><n|_L lowers it by n), and H_eff
conserves N.  A trajectory state is therefore held exactly as a direct sum of
state vectors on fixed-N bases of L qutrits (dimension L(L+1)/2 for N = 2 and
L(L-1) + C(L,3) for N = 3), with sparse H_eff per sector and exact
propagation: eigendecomposition for sectors up to ``eig_max_dim`` states
(:mod:`lru_mps.engines.common.eigen`), above that a compiled Chebyshev expansion in
fixed sub-steps (:mod:`lru_mps.engines.sector.chebyshev`; ``large =
"expm_multiply"`` keeps scipy's ``expm_multiply`` as the reference; with a
``backend`` other than numpy the same expansion over an array library, torch
or cupy on a GPU: :mod:`lru_mps.engines.sector.array_chebyshev`).  Sector
bases are shared between realizations; H_eff blocks are built on demand and
cached per realization (the initial states of one trajectory index share
them).

A basis state is a multiset of occupied positions p_1 <= ... <= p_N (site
indices, 0-based, each repeated n_l times); its key sum_k p_k L^(N-1-k) is
unique and sorts the basis lexicographically.
"""

from __future__ import annotations

import itertools
from functools import lru_cache, partial

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.sparse.linalg import expm_multiply

from ...errors import require
from ...physics.model import ArraySpec, Realization
from ..common.eigen import BlockPropagator
from .array_chebyshev import ArrayChebyshevBlock
from .chebyshev import ChebyshevBlock

MAX_SECTOR_DIM = 2_000_000
#: sectors up to this many states are propagated through their eigendecomposition (O(d^3) once per realization,
#: O(d^2) per stop), larger ones by the Chebyshev expansion (O(nnz) per unit of r t).  The eigendecomposition's
#: cost does not grow with the evolution time: the ideal length-scaling branches (N = 2, 820 states at L = 40,
#: t ~ 16,000/J) cost 3.2 s per index with it and 21 s with Chebyshev (BENCHMARKS.md, sector engine)
EIG_MAX_DIM = 1000
#: the eigendecomposition of a d-state block costs about this many sparse products of d + nnz memory touches per
#: d^3 / (d + nnz) (one core, measured 1.5-2.8 for d = 350-1220: benchmarks/sector_blocks.py, docs/benchmarks.md);
#: a run's propagator with a horizon (:func:`eig_pays`) takes it only where the Chebyshev expansion to the horizon
#: costs more
EIG_COST = 2.0
#: blocks up to this many states always take the eigendecomposition (<= 0.05 s; Chebyshev's fixed cost per stop,
#: which :func:`eig_pays` does not price, is as large there)
EIG_MIN_DIM = 256
#: a real symmetric block (ideal conditions: no decay, no dephasing) is diagonalized by real eigh, which costs about
#: this many sparse products per d^3 / (d + nnz) (one core, measured 0.13-0.22 for d = 465-3240, chains' N = 2
#: sectors: benchmarks/sector_blocks.py --conditions ideal, docs/benchmarks.md), a tenth of eig's EIG_COST ...
EIG_COST_REAL = 0.15
#: ... and applied at every stop of a row by real matrix-vector products with V, about this many sparse products per
#: d^2 / (d + nnz) (measured 0.5-1.5: 0.9 while V fits the caches), which at d in the thousands is what it costs
EIG_STOP_COST_REAL = 0.9
#: a real symmetric block may take the eigendecomposition up to this many times ``eig_max_dim`` states (where it pays:
#: a chain's N = 2 sector to L = 89 with the default; V alone is 8 d^2 bytes, 128 MB at d = 4000)
EIG_REAL_DIM_FACTOR = 4


def is_real_symmetric(H: sp.csr_matrix) -> bool:
    """Whether the sparse block H is real symmetric (an ideal run's: no decay, no dephasing), exactly."""
    if np.iscomplexobj(H.data) and np.any(H.data.imag):
        return False
    R = H.real if np.iscomplexobj(H.data) else H
    return (R != R.T).nnz == 0


def eig_pays(H: sp.csr_matrix, horizon: float, stops: float = 0.0) -> bool:
    """Whether propagating the block H up to ``horizon`` (1/J) costs less through its eigendecomposition than by
    Chebyshev (~ r horizon sparse products, r the scale of its expansion, about the half-width of H's spectrum);
    always for d <= EIG_MIN_DIM.  The eigendecomposition costs EIG_COST d^3 / (d + nnz) products' worth, once; a
    real symmetric block's (:func:`is_real_symmetric`) EIG_COST_REAL d^3 / (d + nnz), and EIG_STOP_COST_REAL
    d^2 / (d + nnz) more at each of the run's ``stops`` (its time points and feedback measurements), which is what
    decides past d ~ 1000.  A row in the block for all of the horizon (a decay-integrated row, the ideal branches) is
    what it prices; a row that leaves the block earlier costs Chebyshev less, so the rule errs towards eig."""
    from .chebyshev import scale_radius, spectral_bounds

    d = H.shape[0]
    if d <= EIG_MIN_DIM:
        return True
    if is_real_symmetric(H):
        cost = (EIG_COST_REAL * d**3 + EIG_STOP_COST_REAL * stops * d**2) / (d + H.nnz)
    else:
        cost = EIG_COST * d**3 / (d + H.nnz)
    return cost <= scale_radius(*spectral_bounds(H)) * horizon


def block_rule() -> str:
    """How a run's blocks are propagated, in words (part of a run's cache key: a change of the rule changes it)."""
    return (f"eigendecomposition for blocks of <= {EIG_MIN_DIM} states, and up to eig_max_dim (a real symmetric "
            f"block: {EIG_REAL_DIM_FACTOR} x eig_max_dim) where it costs less than Chebyshev to t_final (EIG_COST "
            f"{EIG_COST:g}; real symmetric {EIG_COST_REAL:g}, {EIG_STOP_COST_REAL:g} per stop)")


class SectorBasis:
    """Occupations of all L-qutrit configurations with total N, lexicographic."""

    def __init__(self, L: int, N: int):
        self.L, self.N = L, N
        combos = [c for c in itertools.combinations_with_replacement(range(L), N) if _max_mult(c) <= 2]
        require(
            len(combos) <= MAX_SECTOR_DIM,
            "length",
            L,
            f"an N = {N} sector of at most {MAX_SECTOR_DIM} states (this one has {len(combos)})",
            "use the MPS engine for many excitations on long arrays",
        )
        pos = np.array(combos, dtype=np.int64).reshape(len(combos), N)
        self.dim = len(combos)
        self.occ = np.zeros((self.dim, L), dtype=np.int8)
        if N:
            np.add.at(self.occ, (np.repeat(np.arange(self.dim), N), pos.ravel()), 1)
        self.keys = self._keys_from_positions(pos)
        assert np.all(np.diff(self.keys) > 0)
        # indicator matrices for level populations: (dim, L) sparse, per level 1, 2
        self.indicator = {
            k: sp.csr_matrix((self.occ == k).astype(float)) for k in (1, 2)
        }

    def _keys_from_positions(self, pos: np.ndarray) -> np.ndarray:
        weights = self.L ** np.arange(self.N - 1, -1, -1, dtype=np.int64)
        return pos @ weights if self.N else np.zeros(len(pos), dtype=np.int64)

    def index_of(self, occ: np.ndarray) -> np.ndarray:
        """Indices of configurations given as occupation rows (m, L) with total N."""
        m = len(occ)
        if m == 0:
            return np.zeros(0, dtype=np.int64)
        pos = np.repeat(np.tile(np.arange(self.L), m), occ.astype(np.int64).ravel()).reshape(m, self.N)
        idx = np.searchsorted(self.keys, self._keys_from_positions(pos))
        return idx


def sector_limit() -> int:
    """The sector engine's limit on a sector's states, :data:`MAX_SECTOR_DIM` (read at each call)."""
    return MAX_SECTOR_DIM


@lru_cache(maxsize=4096)
def sector_dimension(L: int, N: int) -> int:
    """Number of configurations of L qutrits with N excitations: the coefficient of x^N in (1 + x + x^2)^L."""
    if N < 0 or N > 2 * L:
        return 0
    c = [1]
    for _ in range(L):
        c = [sum(c[j - q] for q in range(3) if 0 <= j - q < len(c)) for j in range(len(c) + 2)]
    return int(c[N])


@lru_cache(maxsize=4096)
def largest_number(L: int, limit: int) -> int | None:
    """The largest N whose sector of L qutrits has at most ``limit`` states (the sector engine's reach: every
    smaller N fits too, the dimensions growing up to N = L), or None where every sector fits."""
    n = 0
    while n < 2 * L and sector_dimension(L, n + 1) <= limit:
        n += 1
    return None if n >= 2 * L else n


def _max_mult(c) -> int:
    best = run = 0
    prev = None
    for x in c:
        run = run + 1 if x == prev else 1
        best = max(best, run)
        prev = x
    return best


@lru_cache(maxsize=32)
def sector_basis(L: int, N: int) -> SectorBasis:
    """The (cached) basis of the N-excitation sector of L qutrits."""
    return SectorBasis(L, N)


@lru_cache(maxsize=4096)
def transition(L: int, N: int, site: int, j: int, i: int):
    """Map of |i><j|_site from sector N to sector N + i - j: (source indices, destination indices)."""
    src_basis = sector_basis(L, N)
    src = np.nonzero(src_basis.occ[:, site] == j)[0]
    if N + i - j < 0 or len(src) == 0:
        return src[:0], src[:0]
    occ = src_basis.occ[src].copy()
    occ[:, site] = i
    dst = sector_basis(L, N + i - j).index_of(occ)
    return src, dst


def bond_hop(basis: SectorBasis, l: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """a_l^dag a_m on the sector: one boson from site m to site l, as (source indices, destination indices,
    amplitudes sqrt(n_l + 1) sqrt(n_m)); the bond's hopping is these entries and their transposes, times J_b."""
    occ = basis.occ
    src = np.nonzero((occ[:, m] >= 1) & (occ[:, l] <= 1))[0]
    new = occ[src].copy()
    amp = np.sqrt((new[:, l] + 1.0) * new[:, m])
    new[:, l] += 1
    new[:, m] -= 1
    return src, basis.index_of(new), amp


def sector_hamiltonian(spec: ArraySpec, real: Realization, N: int, onsite: np.ndarray | None = None) -> sp.csr_matrix:
    """Sparse H_eff on the N sector: diagonal on-site terms plus the hopping J_b of every bond (``spec.edges()``)."""
    L = spec.L
    basis = sector_basis(L, N)
    onsite = spec.onsite_terms(real) if onsite is None else onsite
    diag_terms = np.array([np.diagonal(onsite[l]) for l in range(L)])  # (L, 3)
    off = onsite - np.array([np.diag(d) for d in diag_terms])
    require(np.allclose(off, 0.0), "channels", "non-diagonal op^dag op", "number-conserving on-site terms for the sector engine")
    # (the vacuum's own terms: -(i/2) sum_l gamma_l nbar_l with a thermal bath's heating, else 0)
    diag = diag_terms[np.arange(L)[None, :], basis.occ].sum(axis=1) if N else diag_terms[:, :1].sum(axis=0)
    rows, cols, vals = [np.arange(basis.dim)], [np.arange(basis.dim)], [diag.astype(complex)]
    J = spec.couplings(real)
    for b, (l, m) in enumerate(spec.edges()):  # the bonds (l, m): (l, l+1) on the chain, a graph's edges
        src, dst, unit = bond_hop(basis, l, m)
        if len(src) == 0:
            continue
        amp = J[b] * unit
        rows += [dst, src]
        cols += [src, dst]
        vals += [amp.astype(complex), amp.astype(complex)]
    H = sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(basis.dim, basis.dim)
    )
    return H


class ExpmMultiplyBlock:
    """exp(-i H t) v for a large sparse sector by scipy's expm_multiply (the reference of the Chebyshev blocks)."""

    def __init__(self, H: sp.csr_matrix):
        self.H = H.tocsc()

    def apply(self, x: np.ndarray, t: float) -> np.ndarray:
        return expm_multiply(-1j * t * self.H, x)


class SectorPropagator:
    """Sector H_eff blocks of one realization, built on demand.

    A block of at most ``eig_max_dim`` states (a real symmetric one: :data:`EIG_REAL_DIM_FACTOR` times that) is
    propagated through its eigendecomposition, a larger one by ``large`` (Chebyshev); with a ``horizon`` (1/J, the
    run's t_final) such a block takes the eigendecomposition only where it costs less than Chebyshev to the horizon
    with the run's ``time_points`` and feedback measurements as its stops (:func:`eig_pays`).  With a
    ``backend`` other than numpy the Chebyshev blocks run on that array library
    (:class:`~lru_mps.engines.sector.array_chebyshev.ArrayChebyshevBlock`); the states stay on the host.
    """

    def __init__(self, spec: ArraySpec, real: Realization, eig_max_dim: int = EIG_MAX_DIM, large: str = "chebyshev",
                 horizon: float | None = None, backend: str = "numpy", time_points: int = 0):
        self.spec, self.realization, self.L = spec, real, spec.L
        self.eig_max_dim = eig_max_dim
        self.large = ChebyshevBlock if large == "chebyshev" else ExpmMultiplyBlock
        if large == "chebyshev" and backend != "numpy":
            self.large = partial(ArrayChebyshevBlock, backend=backend)
        self.horizon = horizon
        self.stops = 0.0 if horizon is None else time_points + spec.reset.measurements(horizon)
        self._onsite = spec.onsite_terms(real)
        self._blocks: dict[int, object] = {}

    def block(self, N: int):
        blk = self._blocks.get(N)
        if blk is None:
            H = sector_hamiltonian(self.spec, self.realization, N, self._onsite)
            d, real = H.shape[0], False
            if self.horizon is None:
                eig = d <= self.eig_max_dim
            else:  # (a real symmetric block past eig_max_dim may still pay: densified in real numbers, half the bytes)
                real = d > self.eig_max_dim and is_real_symmetric(H)
                eig = d <= self.eig_max_dim * (EIG_REAL_DIM_FACTOR if real else 1) \
                    and eig_pays(H, self.horizon, self.stops)
            blk = BlockPropagator(H.real.toarray() if real else H.toarray()) if eig else self.large(H)
            self._blocks[N] = blk
        return blk

    def state(self, site_vectors) -> "SectorState":
        """Product state of the given site vectors, expanded into sectors."""
        supports = [np.nonzero(np.abs(v) > 0)[0] for v in site_vectors]
        n_terms = int(np.prod([len(s) for s in supports], dtype=float))
        require(n_terms <= 100_000, "initial state", f"{n_terms} product terms", "a product state with few levels per site")
        comps: dict[int, dict[int, complex]] = {}
        for levels in itertools.product(*supports):
            amp = np.prod([site_vectors[l][k] for l, k in enumerate(levels)])
            N = int(sum(levels))
            if N not in comps:  # (a sector over the limit is refused before its basis is built)
                self._check_size(N, site_vectors)
            occ = np.array(levels, dtype=np.int8)[None, :]
            idx = int(sector_basis(self.L, N).index_of(occ)[0])
            comps.setdefault(N, {})
            comps[N][idx] = comps[N].get(idx, 0.0) + amp
        vecs = {}
        for N, entries in comps.items():
            v = np.zeros(sector_basis(self.L, N).dim, dtype=complex)
            for idx, amp in entries.items():
                v[idx] = amp
            vecs[N] = v
        return SectorState(self, vecs)

    def check_raised(self, N: int) -> None:
        """Refuse, naming what raised it, an event that takes a row into an N sector over :data:`MAX_SECTOR_DIM`
        (a thermal bath's heating, a readout error's false report: :func:`lru_mps.physics.rules.number_raisers`)."""
        dim = sector_dimension(self.L, N)
        if dim <= MAX_SECTOR_DIM:
            return
        from ...physics.rules import number_raisers

        raisers = number_raisers(self.spec)
        graph = self.spec.geometry is not None and not self.spec.geometry.is_chain
        require(False, "thermal_bath" if self.spec.thermal_bath else "readout_error",
                True if self.spec.thermal_bath else "set",
                f"sector-engine runs whose events keep every row's N sector at most {MAX_SECTOR_DIM:,} states (an "
                f"event raised a row to N = {N} on L = {self.L} sites, {dim:,} states; what raises N here: "
                + "; ".join(raisers) + ")",
                "fewer sites, a lower temperature or a shorter t_final" if graph else
                "--engine auto: a row raised past the sector engine's size is handed over to MPS")

    def _check_size(self, N: int, site_vectors) -> None:
        """Refuse, before any work, a start whose N sector is over :data:`MAX_SECTOR_DIM`, saying what filled it."""
        dim = sector_dimension(self.L, N)
        if dim <= MAX_SECTOR_DIM:
            return
        excited = sum(1 for v in site_vectors[1:] if np.any(np.abs(v[1:]) > 0))
        graph = self.spec.geometry is not None and not self.spec.geometry.is_chain
        hint = ("fewer sites or a lower temperature" if graph else
                "the MPS engine (--engine mps) for many excitations on long arrays, or a lower temperature")
        require(False, "temperature" if excited else "length",
                f"{1e3 * self.spec.conditions.temperature_K:g} mK" if excited else self.L,
                f"starts whose N sector has at most {MAX_SECTOR_DIM:,} states for the sector engine (a start with "
                f"{excited} excited sites besides the qubit on L = {self.L} sites needs the N = {N} sector of "
                f"{dim:,} states)", hint)


def _level_sums_kernel(indptr, indices, data, w, L):  # pragma: no cover - compiled
    """indicator.T @ w for a (dim, L) CSR indicator: per site the sum of w over the configurations with the level
    there, added in the order of scipy's CSC product of the transpose (configuration by configuration), so the
    same numbers bit for bit, without the sparse product's per-call overhead (a few-state sector's rows call it
    ~10^5 times)."""
    out = np.zeros(L)
    for j in range(len(indptr) - 1):
        for p in range(indptr[j], indptr[j + 1]):
            out[indices[p]] += data[p] * w[j]
    return out


_level_sums_compiled = njit(cache=True, nogil=True)(_level_sums_kernel)


def _level_sums(indicator: sp.csr_matrix, w: np.ndarray) -> np.ndarray:
    """Per site the weight w on the configurations with the level ``indicator`` marks (see the kernel)."""
    return _level_sums_compiled(indicator.indptr, indicator.indices, indicator.data, w, indicator.shape[1])


class SectorState:
    """Direct sum of fixed-N state vectors; implements TrajectoryState."""

    time_step = None

    def __init__(self, prop: SectorPropagator, vecs: dict[int, np.ndarray]):
        self.prop = prop
        self.vecs = vecs

    def evolve(self, dt: float) -> None:
        self.vecs = {N: (self.prop.block(N).apply(v, dt) if np.any(v) else v) for N, v in self.vecs.items()}

    def norm2(self) -> float:
        return float(sum(np.vdot(v, v).real for v in self.vecs.values()))

    def site_populations(self) -> np.ndarray:
        L = self.prop.L
        pops = np.zeros((L, 3))
        total = 0.0
        for N, v in self.vecs.items():
            w = np.abs(v) ** 2
            total += w.sum()
            if N:
                basis = sector_basis(L, N)
                pops[:, 1] += _level_sums(basis.indicator[1], w)
                pops[:, 2] += _level_sums(basis.indicator[2], w)
        pops[:, 0] = total - pops[:, 1] - pops[:, 2]
        return pops

    def site_rdm(self, site: int) -> np.ndarray:
        L = self.prop.L
        rho = np.zeros((3, 3), dtype=complex)
        for N, v in self.vecs.items():
            for i in range(3):
                for j in range(3):
                    target = self.vecs.get(N + j - i)
                    if target is None:
                        continue
                    src, dst = transition(L, N, site, i, j)
                    if len(src):
                        rho[i, j] += np.vdot(target[dst], v[src])
        return rho

    def apply_local(self, op: np.ndarray, site: int) -> None:
        L = self.prop.L
        out: dict[int, np.ndarray] = {}
        for N, v in self.vecs.items():
            for i in range(3):
                for j in range(3):
                    if op[i, j] == 0:
                        continue
                    M = N + i - j
                    if M > N and M not in self.vecs:
                        self.prop.check_raised(M)  # (before the larger sector's basis is built)
                    src, dst = transition(L, N, site, j, i)
                    if len(src) == 0:
                        continue
                    if M not in out:
                        out[M] = np.zeros(sector_basis(L, M).dim, dtype=complex)
                    out[M][dst] += op[i, j] * v[src]  # (dst has no repeats: one configuration maps to one)
        self.vecs = out

    def scale(self, factor: float) -> None:
        self.vecs = {N: v * factor for N, v in self.vecs.items()}

    def copy(self) -> "SectorState":
        return SectorState(self.prop, {N: v.copy() for N, v in self.vecs.items()})

    @property
    def L(self) -> int:
        """Sites of the array."""
        return self.prop.L

    def numbers(self) -> list[int]:
        """The excitation numbers N the state has a component in (its sectors)."""
        return list(self.vecs)

    def configurations(self) -> tuple[np.ndarray, np.ndarray]:
        """The state as (occupations (M, L), amplitudes (M,)): every basis configuration of its sectors (levels
        0..2 of sites 1..L) and its amplitude, sector after sector."""
        occ = np.concatenate([sector_basis(self.prop.L, N).occ for N in self.vecs])
        return occ, np.concatenate(list(self.vecs.values()))

    def dense(self) -> np.ndarray:
        """The full 3^L vector (small L only; site 1 most significant)."""
        L = self.prop.L
        psi = np.zeros(3**L, dtype=complex)
        digits = 3 ** np.arange(L - 1, -1, -1)
        for N, v in self.vecs.items():
            psi[sector_basis(L, N).occ.astype(np.int64) @ digits] += v
        return psi
