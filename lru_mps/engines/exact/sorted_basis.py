"""The batched stores' basis: the kept N-blocks 0..nmax, and the exact batch's form of it (the 3^L product states
sorted by excitation number N, cut after block nmax).

:class:`KeptBasis` holds what a batched store needs of any such basis (the level-population maps, the local
transfers); :class:`SortedBasis` the exact batch's sort; :func:`hopping_blocks` and :func:`bond_blocks` the hopping of H (uniform, and per bond for the
per-bond couplings J_l) on each N-block, from the same sparse terms as :func:`.state.hamiltonian_eff`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from functools import lru_cache, reduce

import numpy as np
import scipy.sparse as sp

from ...physics import operators as ops
from .state import embed, embed_edge, number_of_excitations


class KeptBasis(ABC):
    """What a batched store needs of its basis: the kept N-blocks 0..nmax of L qutrits, one after the other.

    Built from ``levels`` (L, dim): the level of every site in every kept basis state, and ``slices``: block n's
    positions.  Holds the level-population maps (``M``, ``M2``), the coherence pairs of site 1 (``rdm_1``,
    ``rdm_0``) and the local transfers |k><m| (:meth:`transfer`); a subclass says where a configuration with one
    site's level changed sits (:meth:`_images`).  The exact batch's :class:`SortedBasis` (the 3^L product states
    sorted by N) and the sector batch's basis (:class:`lru_mps.engines.sector.kept_basis.SectorKeptBasis`, built
    from the sector bases without the 3^L space) are its two forms.
    """

    def __init__(self, L: int, nmax: int, levels: np.ndarray, slices: list[slice]):
        self.L = L
        self.nmax = nmax
        self.levels = levels
        self.slices = slices
        self.dim = levels.shape[1]
        self._maps: dict = {}  # (m, k, site) -> transfer's (src, dst)
        self._columns: dict = {}  # site -> site_columns, sites other than the last
        # level populations of every site: |psi|^2 @ M, M[s, 3 l + m] = [level of site l in s is m];
        # M2 acts on the float view (re, im interleaved) of psi
        M = np.zeros((self.dim, 3 * L))
        M[np.arange(self.dim)[:, None], 3 * np.arange(L)[None, :] + levels.T] = 1.0
        self.M = M
        self.M2 = np.repeat(M, 2, axis=0)
        self.M2_last = np.ascontiguousarray(self.M2[:, 3 * (L - 1) :])
        # coherence of site 1: rho[1, 0] = sum_k psi(1, k) conj(psi(0, k))
        self.rdm_1, self.rdm_0 = self.transfer(1, 0, 0)

    @abstractmethod
    def _images(self, src: np.ndarray, m: int, k: int, site: int) -> np.ndarray:
        """Positions of the configurations ``src`` (whose ``site`` is in level m) with that site's level set to k;
        -1 where that configuration is not kept (a block above nmax)."""

    def transfer(self, m: int, k: int, site: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """|k><m| on ``site`` (None: the last): new[dst] = old[src] (a readout error's k = x(m, n); the blocks
        must reach N + k - m)."""
        site = self.L - 1 if site is None else int(site)
        key = (m, k, site)
        if key not in self._maps:  # (built once: a feedback time asks again for every row batch)
            src = np.nonzero(self.levels[site] == m)[0]
            dst = self._images(src, m, k, site)
            if np.any(dst < 0):
                raise RuntimeError(f"|{k}><{m}| on site {site} leaves the kept N-blocks 0..{self.nmax}")
            self._maps[key] = (src, dst)
        return self._maps[key]

    def site_columns(self, site: int) -> tuple[np.ndarray, np.ndarray]:
        """(M, M2) restricted to the three level columns of ``site`` (contiguous; the last site's kept)."""
        if site == self.L - 1:
            return self.M[:, 3 * site:], self.M2_last
        if site not in self._columns:  # (built once per site)
            self._columns[site] = (np.ascontiguousarray(self.M[:, 3 * site:3 * site + 3]),
                                   np.ascontiguousarray(self.M2[:, 3 * site:3 * site + 3]))
        return self._columns[site]

    def local(self, op: np.ndarray, site: int) -> sp.csr_matrix:
        """A one-site operator on the kept basis (dim, dim), sparse; entries that leave the kept blocks dropped."""
        rows, cols, vals = [], [], []
        for m in range(3):
            src = np.nonzero(self.levels[site] == m)[0]
            for k in range(3):
                if op[k, m] == 0 or not len(src):
                    continue
                dst = self._images(src, m, k, site)
                ok = dst >= 0
                rows.append(dst[ok])
                cols.append(src[ok])
                vals.append(np.full(int(ok.sum()), op[k, m], dtype=complex))
        if not rows:
            return sp.csr_matrix((self.dim, self.dim), dtype=complex)
        return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(self.dim, self.dim))

    @abstractmethod
    def product(self, sites) -> np.ndarray:
        """The amplitudes of the product state of ``sites`` (one 3-vector per site) on the kept basis."""


class SortedBasis(KeptBasis):
    """The 3^L basis sorted by N (stable), cut after block nmax, with local maps on it."""

    def __init__(self, L: int, nmax: int):
        D = 3**L
        levels = np.indices((3,) * L).reshape(L, -1)
        N = number_of_excitations(L)
        perm = np.argsort(N, kind="stable")
        inv = np.empty(D, dtype=np.intp)
        inv[perm] = np.arange(D)
        offsets = np.concatenate([[0], np.cumsum(np.bincount(N, minlength=2 * L + 1))])
        self.inv = inv
        dim = int(offsets[nmax + 1])
        #: natural (ExactState) index of every kept sorted position
        self.keep = perm[:dim]
        slices = [slice(int(offsets[n]), int(offsets[n + 1])) for n in range(nmax + 1)]
        self.natural = [perm[s] for s in slices]
        super().__init__(L, nmax, levels[:, self.keep], slices)

    def _images(self, src: np.ndarray, m: int, k: int, site: int) -> np.ndarray:
        dst = self.inv[self.keep[src] + (k - m) * 3 ** (self.L - 1 - site)]  # natural index: site 0 the top digit
        return np.where(dst < self.dim, dst, -1)

    def local(self, op: np.ndarray, site: int) -> sp.csr_matrix:
        # the exact engine's own embedding, restricted to the kept blocks
        return embed(op, site, self.L)[self.keep][:, self.keep].tocsr()

    def product(self, sites) -> np.ndarray:
        # = reduce(np.kron, ...) of ExactPropagator.state, same products in the same order
        return reduce(np.multiply.outer, sites).reshape(-1).astype(complex)[self.keep]

    def kept(self, state) -> np.ndarray:
        """An ordinary state's amplitudes on the kept basis (the inverse of :meth:`ordinary`)."""
        return state.psi[self.keep]

    def hopping(self, edges) -> tuple[np.ndarray, ...]:
        """The hopping of H (J = 1 on every bond) on each kept block (:func:`hopping_blocks`)."""
        return hopping_blocks(self.L, self.nmax, edges)

    def bonds(self, edges) -> tuple[np.ndarray, ...]:
        """Each bond's hopping (J = 1) on each kept block (:func:`bond_blocks`)."""
        return bond_blocks(self.L, self.nmax, edges)

    def dense_block(self, spec, real, n: int) -> np.ndarray:
        """H_eff of block n built as the exact engine does (on-site terms that are not diagonal)."""
        from .state import hamiltonian_eff

        idx = self.natural[n]
        return hamiltonian_eff(spec, real, dense=True)[np.ix_(idx, idx)]

    def ordinary(self, x: np.ndarray, spec, real):
        """Amplitudes on the kept basis as an :class:`~lru_mps.engines.exact.state.ExactState` on the 3^L space."""
        from types import SimpleNamespace

        from .state import ExactState

        full = np.zeros(3**self.L, dtype=complex)
        full[self.keep] = x
        return ExactState(SimpleNamespace(L=self.L), full)


def _edges(L: int, edges) -> tuple:
    return tuple((l, l + 1) for l in range(L - 1)) if edges is None else tuple(edges)


@lru_cache(maxsize=16)
def hopping_blocks(L: int, nmax: int, edges: tuple | None = None) -> tuple[np.ndarray, ...]:
    """The hopping part of H (no disorder) on each N-block, natural order within a block (``edges``: the bonds
    (i, j) of a coupling graph; None: the chain's (l, l+1)).

    The same terms (embed_edge) that exact.hamiltonian_eff adds at their entries, so the entries are identical.
    """
    bond = np.kron(ops.adag, ops.a) + np.kron(ops.a, ops.adag)
    H = reduce(lambda x, y: x + y, [embed_edge(bond, i, j, L) for i, j in _edges(L, edges)]).tocsr()
    basis = SortedBasis(L, nmax)
    return tuple(H[idx][:, idx].toarray() for idx in basis.natural)


@lru_cache(maxsize=16)
def bond_blocks(L: int, nmax: int, edges: tuple | None = None) -> tuple[np.ndarray, ...]:
    """The hopping of each bond (J_l = 1) on each N-block: block n is (bonds, d_n, d_n), for per-bond couplings."""
    bond = np.kron(ops.adag, ops.a) + np.kron(ops.a, ops.adag)
    per = [embed_edge(bond, i, j, L).tocsr() for i, j in _edges(L, edges)]
    basis = SortedBasis(L, nmax)
    return tuple(np.stack([B[idx][:, idx].toarray() for B in per]) for idx in basis.natural)
