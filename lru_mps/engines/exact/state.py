"""Exact state-vector backend in the full 3^L space (L <= 7).

Propagation is exact: H_eff conserves the excitation number N (every channel's
op^dag op is diagonal in the number basis), so it is block diagonal; each
N-block is diagonalized once per realization, H_N = V diag(lambda) V^-1, and
exp(-i H_eff t) is applied as V exp(-i lambda t) V^-1 for any t, with no
time-step error (:mod:`lru_mps.engines.common.eigen`: expm near exceptional points).
"""

from __future__ import annotations

import functools
from functools import reduce

import numpy as np
import scipy.sparse as sp

from ...errors import require
from ...physics.model import ArraySpec, Realization
from ..common.eigen import BlockPropagator

MAX_LENGTH = 7


def embed(op: np.ndarray, site: int, L: int) -> sp.csr_matrix:
    """A one-site operator on ``site`` of an L-site qutrit chain (sparse, site 0 leftmost)."""
    return sp.kron(sp.kron(sp.identity(3**site), sp.csr_matrix(op)), sp.identity(3 ** (L - site - 1)), format="csr")


def embed_bond(op9: np.ndarray, site: int, L: int) -> sp.csr_matrix:
    """A two-site operator on (site, site+1)."""
    return sp.kron(sp.kron(sp.identity(3**site), sp.csr_matrix(op9)), sp.identity(3 ** (L - site - 2)), format="csr")


def embed_edge(op9: np.ndarray, i: int, j: int, L: int) -> sp.csr_matrix:
    """A two-site operator on the sites (i, j), i < j, of a coupling graph (op9 in the order site i, site j).

    Adjacent sites are :func:`embed_bond`; otherwise op9 = sum_{a,c} |a><c|_i (x) B_ac with B_ac its block.
    """
    if j == i + 1:
        return embed_bond(op9, i, L)
    T = np.asarray(op9).reshape(3, 3, 3, 3)  # (a, b; c, d): <a b| op |c d>
    out = sp.csr_matrix((3**L, 3**L), dtype=complex)
    for a in range(3):
        for c in range(3):
            B = T[a, :, c, :]
            if np.any(B != 0):
                E = np.zeros((3, 3))
                E[a, c] = 1.0
                out = out + embed(E, i, L) @ embed(B, j, L)
    return out.tocsr()


def hamiltonian_eff(spec: ArraySpec, real: Realization, hermitian_only: bool = False, dense: bool = False):
    """H_eff (or H with ``hermitian_only``) on the full 3^L space, from the model's local terms: sparse (CSR), or
    the dense array with ``dense``.

    The terms (on-site, then every bond) are added in that order into one dense array at the entries of each
    (:func:`term_positions`): entry for entry the same sums as adding the sparse terms of :func:`embed` and
    :func:`embed_edge`, without building them.
    """
    L = spec.L
    onsite = spec.onsite_terms(real)
    if hermitian_only:
        onsite = 0.5 * (onsite + onsite.conj().transpose(0, 2, 1))
    H = np.zeros((3**L, 3**L), dtype=complex)
    for l in range(L):
        rows, cols = term_positions(L, (l,))
        H[rows, cols] += onsite[l][:, :, None]
    bonds = spec.bond_terms(real)  # J_b (a_i^dag a_j + h.c.) on every bond (i, j): (l, l+1) on the chain
    for b, (i, j) in enumerate(spec.edges()):
        rows, cols = term_positions(L, (i, j))
        H[rows, cols] += np.asarray(bonds[b])[:, :, None]
    return H if dense else sp.csr_matrix(H)


@functools.lru_cache(maxsize=256)
def term_positions(L: int, sites: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Where an operator on ``sites`` (its indices: the sites' levels, the first site most significant) times the
    identity on the others sits in the 3^L space: (rows (3^k, 1, 3^(L-k)), columns (1, 3^k, 3^(L-k))), entry
    [m, n, r] of an (m, n) operator element and the others' configuration r."""
    weights = 3 ** (L - 1 - np.arange(L))

    def index(of):  # the 3^L index part of every configuration of the sites ``of`` (first most significant)
        w = weights[list(of)]
        return (w[:, None] * np.indices((3,) * len(w)).reshape(len(w), -1)).sum(axis=0) if len(w) else np.zeros(1, int)

    local, rest = index(sites), index([s for s in range(L) if s not in sites])
    return local[:, None, None] + rest[None, None, :], local[None, :, None] + rest[None, None, :]


def number_of_excitations(L: int) -> np.ndarray:
    """Total N of every basis state of the 3^L space."""
    levels = np.indices((3,) * L).reshape(L, -1)
    return levels.sum(axis=0)


class ExactPropagator:
    """Block-diagonalized H_eff of one realization; makes :class:`ExactState` objects."""

    def __init__(self, spec: ArraySpec, real: Realization):
        require(
            spec.L <= MAX_LENGTH,
            "length",
            spec.L,
            f"L <= {MAX_LENGTH} for the exact engine (3^L states)",
            "use --engine mps or sector for long arrays",
        )
        self.spec = spec
        self.realization = real
        self.L = spec.L
        H = hamiltonian_eff(spec, real, dense=True)
        N = number_of_excitations(spec.L)
        self.blocks = []
        for n in range(2 * spec.L + 1):
            idx = np.nonzero(N == n)[0]
            self.blocks.append((idx, BlockPropagator(H[np.ix_(idx, idx)])))
        #: the basis in block order, and where each block starts in it (a state's empty blocks in one call)
        self.order = np.concatenate([idx for idx, _ in self.blocks])
        self.starts = np.cumsum([0] + [len(idx) for idx, _ in self.blocks[:-1]])

    def state(self, site_vectors) -> "ExactState":
        """The product state of the given site vectors (site 1 first)."""
        psi = reduce(np.kron, site_vectors).astype(complex)
        return ExactState(self, psi)


class ExactState:
    """A 3^L state vector evolved exactly; implements TrajectoryState."""

    time_step = None

    def __init__(self, prop: ExactPropagator, psi: np.ndarray):
        self.prop = prop
        self.psi = psi

    def evolve(self, dt: float) -> None:
        prop = self.prop
        x = self.psi[prop.order]
        occupied = np.logical_or.reduceat(x != 0, prop.starts)
        out = np.empty_like(self.psi)
        for (idx, block), start, full in zip(prop.blocks, prop.starts, occupied):
            part = x[start:start + len(idx)]
            out[idx] = block.apply(part, dt) if full else part
        self.psi = out

    def norm2(self) -> float:
        return float(np.vdot(self.psi, self.psi).real)

    def site_populations(self) -> np.ndarray:
        L = self.prop.L
        p = (np.abs(self.psi) ** 2).reshape((3,) * L)
        return np.array([p.sum(axis=tuple(k for k in range(L) if k != l)) for l in range(L)])

    def site_rdm(self, site: int) -> np.ndarray:
        m = np.moveaxis(self.psi.reshape((3,) * self.prop.L), site, 0).reshape(3, -1)
        return m @ m.conj().T

    def apply_local(self, op: np.ndarray, site: int) -> None:
        L = self.prop.L
        t = self.psi.reshape((3,) * L)
        t = np.moveaxis(np.tensordot(op, t, axes=(1, site)), 0, site)
        self.psi = np.ascontiguousarray(t).reshape(-1)

    def scale(self, factor: float) -> None:
        self.psi = self.psi * factor

    def copy(self) -> "ExactState":
        return ExactState(self.prop, self.psi.copy())

    def dense(self) -> np.ndarray:
        """The state vector (site 1 is the most significant digit)."""
        return self.psi.copy()
