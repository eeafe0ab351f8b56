"""The sector batch's basis: the N-sectors 0..nmax of L qutrits one after the other, built without the 3^L space.

:class:`SectorKeptBasis` is the :class:`~lru_mps.engines.exact.sorted_basis.KeptBasis` of the sector engine's
batched store (:mod:`lru_mps.engines.sector.batch`): block n is the sector basis of N = n
(:class:`~lru_mps.engines.sector.state.SectorBasis`, lexicographic), so a graph of tens of sites with few
excitations costs its sectors' few hundred states, not 3^L.  The hopping blocks are the sector engine's own
entries (:func:`~lru_mps.engines.sector.state.bond_hop`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...errors import require
from ..exact.sorted_basis import KeptBasis
from .state import SectorPropagator, SectorState, bond_hop, sector_basis


class SectorKeptBasis(KeptBasis):
    """The sectors N = 0..nmax of L qutrits, block n the sector basis of N = n."""

    def __init__(self, L: int, nmax: int):
        bases = [sector_basis(L, n) for n in range(nmax + 1)]
        self.offsets = np.concatenate([[0], np.cumsum([b.dim for b in bases])]).astype(np.intp)
        slices = [slice(int(self.offsets[n]), int(self.offsets[n + 1])) for n in range(nmax + 1)]
        levels = np.concatenate([b.occ for b in bases], axis=0).T.astype(np.int64)
        super().__init__(L, nmax, np.ascontiguousarray(levels), slices)

    def _images(self, src: np.ndarray, m: int, k: int, site: int) -> np.ndarray:
        out = np.full(len(src), -1, dtype=np.intp)
        if not len(src):
            return out
        n_src = np.searchsorted(self.offsets, src, side="right") - 1
        occ = self.levels[:, src].T.copy()
        occ[:, site] = k
        target = n_src + (k - m)
        for N in np.unique(target):
            if N < 0 or N > self.nmax:
                continue
            sel = np.nonzero(target == N)[0]
            out[sel] = self.offsets[N] + sector_basis(self.L, int(N)).index_of(occ[sel])
        return out

    def product(self, sites) -> np.ndarray:
        amp = np.asarray(sites[0], dtype=complex)[self.levels[0]]
        for l in range(1, self.L):  # site by site, as the exact batch's outer products multiply
            amp = amp * np.asarray(sites[l], dtype=complex)[self.levels[l]]
        return amp

    def _hops(self, edges, n: int):
        basis = sector_basis(self.L, n)
        E = tuple((l, l + 1) for l in range(self.L - 1)) if edges is None else tuple(edges)
        return basis.dim, [bond_hop(basis, l, m) for l, m in E]

    def hopping(self, edges) -> tuple[np.ndarray, ...]:
        """The hopping of H (J = 1 on every bond) on each block, dense."""
        out = []
        for n in range(self.nmax + 1):
            d, hops = self._hops(edges, n)
            H = np.zeros((d, d), dtype=complex)
            for src, dst, amp in hops:  # (a pair of configurations is joined by one bond only)
                H[dst, src] += amp
                H[src, dst] += amp
            out.append(H)
        return tuple(out)

    def bonds(self, edges) -> tuple[np.ndarray, ...]:
        """Each bond's hopping (J = 1) on each block: block n is (bonds, d_n, d_n)."""
        out = []
        for n in range(self.nmax + 1):
            d, hops = self._hops(edges, n)
            H = np.zeros((len(hops), d, d), dtype=complex)
            for b, (src, dst, amp) in enumerate(hops):
                H[b, dst, src] = amp
                H[b, src, dst] = amp
            out.append(H)
        return tuple(out)

    def dense_block(self, spec, real, n: int) -> np.ndarray:
        require(False, "channels", "non-diagonal op^dag op", "number-conserving on-site terms for the sector engine")

    def ordinary(self, x: np.ndarray, spec, real) -> SectorState:
        """Amplitudes on the kept sectors as a :class:`~lru_mps.engines.sector.state.SectorState` (its occupied
        sectors; a copy), on a propagator of its own."""
        vecs = {n: x[sl].copy() for n, sl in enumerate(self.slices) if np.any(x[sl])}
        return SectorState(SectorPropagator(spec, real), vecs or {0: x[self.slices[0]].copy()})

    def kept(self, state: SectorState) -> np.ndarray:
        x = np.zeros(self.dim, dtype=complex)
        for N, v in state.vecs.items():
            if np.any(v):
                if N > self.nmax:
                    raise RuntimeError(f"a sector state with N = {N} outside the kept sectors 0..{self.nmax}")
                x[self.slices[N]] = v
        return x


@lru_cache(maxsize=32)
def sector_kept_basis(L: int, nmax: int) -> SectorKeptBasis:
    """The (cached) kept basis of the sectors 0..nmax of L qutrits."""
    return SectorKeptBasis(L, nmax)
