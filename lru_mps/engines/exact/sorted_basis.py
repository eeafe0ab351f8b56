"""The exact batch's basis: the 3^L product states sorted by excitation number N, cut after block nmax.

:class:`SortedBasis` holds the sort, the kept N-blocks, the level-population maps and the last site's
transfers; :func:`hopping_blocks` and :func:`bond_blocks` the hopping of H (uniform, and per bond for the
per-bond couplings J_l) on each N-block, from the same sparse terms as :func:`.state.hamiltonian_eff`.
"""

from __future__ import annotations

from functools import lru_cache, reduce

import numpy as np

from ...physics import operators as ops
from .state import embed_edge, number_of_excitations


class SortedBasis:
    """The 3^L basis sorted by N (stable), cut after block nmax, with local maps on it."""

    def __init__(self, L: int, nmax: int):
        D = 3**L
        levels = np.indices((3,) * L).reshape(L, -1)
        N = number_of_excitations(L)
        perm = np.argsort(N, kind="stable")
        inv = np.empty(D, dtype=np.intp)
        inv[perm] = np.arange(D)
        offsets = np.concatenate([[0], np.cumsum(np.bincount(N, minlength=2 * L + 1))])
        self.L = L
        self.nmax = nmax
        self._maps: dict = {}  # (m, k, site) -> transfer's (src, dst), sites other than the last and readout targets
        self._columns: dict = {}  # site -> site_columns, sites other than the last
        self.inv = inv
        self.dim = int(offsets[nmax + 1])
        #: natural (ExactState) index of every kept sorted position
        self.keep = perm[: self.dim]
        self.slices = [slice(int(offsets[n]), int(offsets[n + 1])) for n in range(nmax + 1)]
        self.natural = [perm[s] for s in self.slices]
        lev = levels[:, self.keep]  # (L, dim)
        self.levels = lev
        # level populations of every site: |psi|^2 @ M, M[s, 3 l + m] = [level of site l in s is m];
        # M2 acts on the float view (re, im interleaved) of psi
        M = np.zeros((self.dim, 3 * L))
        M[np.arange(self.dim)[:, None], 3 * np.arange(L)[None, :] + lev.T] = 1.0
        self.M = M
        self.M2 = np.repeat(M, 2, axis=0)
        self.M2_last = np.ascontiguousarray(self.M2[:, 3 * (L - 1) :])
        # coherence of site 1: rho[1, 0] = sum_k psi(1, k) conj(psi(0, k))
        a1 = np.nonzero(lev[0] == 1)[0]
        self.rdm_1 = a1
        self.rdm_0 = inv[self.keep[a1] - 3 ** (L - 1)]
        # feedback reset |0><o| on the last site: new[dst] = old[src]
        self.reset_src, self.reset_dst = [], []
        for o in range(3):
            src = np.nonzero(lev[L - 1] == o)[0]
            self.reset_src.append(src)
            self.reset_dst.append(inv[self.keep[src] - o])

    def transfer(self, m: int, k: int, site: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """|k><m| on ``site`` (None: the last): new[dst] = old[src] (a readout error's k = x(m, n); the blocks
        must reach N + k - m)."""
        site = self.L - 1 if site is None else int(site)
        if k == 0 and site == self.L - 1:
            return self.reset_src[m], self.reset_dst[m]
        key = (m, k, site)
        if key not in self._maps:  # (built once: a feedback time asks again for every row batch)
            src = np.nonzero(self.levels[site] == m)[0]
            dst = self.inv[self.keep[src] + (k - m) * 3 ** (self.L - 1 - site)]  # natural index: site 0 the top digit
            if np.any(dst >= self.dim):
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
