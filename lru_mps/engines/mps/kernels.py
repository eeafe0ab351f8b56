"""The compiled half of :mod:`lru_mps.engines.mps.tebd` (numba): the kernels that run per gate, per sweep or per row.

A gate on bond b: the two-site theta of A_b and A_{b+1} with the gate
applied (:func:`gated_theta`, by loops for small tensors and by one BLAS
product per charge block for large ones), split back by the truncated block
SVD of :mod:`lru_mps.engines.mps.svd`; a sweep applies a schedule's gates to
one row (:func:`sweep`), the batch's rows in one call (:func:`sweep_rows`,
:func:`sweep_rows_steps`); canonical moves (:func:`move_centre`) and norms.
The physics, the representation and the rules are described in
:mod:`lru_mps.engines.mps.tebd`; import these kernels from here.

These kernels call those of :mod:`~lru_mps.engines.mps.svd`; numba's cache
stamps a kernel by its own file only, so this file declares the dependency
(:func:`lru_mps.engines.common.numba_cache.depends_on`: an edit of the SVD
recompiles the sweeps too).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..common.numba_cache import depends_on
from .svd import KEEP_ALL, UNBOUNDED, _indices_of, block_svd, split, workspace

depends_on(__file__, _indices_of, block_svd, split, workspace)

#: thetas with a * k * c up to this are built by compiled loops, larger ones by BLAS (per charge block)
LOOPS_MAX = 1000


@njit(cache=True)
def _apply_gate(th, G):
    """out[x, m, y] = sum_n G[m, n] th[x, n, y], skipping the zeros of the gate (it conserves n_b + n_{b+1})."""
    a, c = th.shape[0], th.shape[2]
    out = np.zeros((a, 9, c), dtype=np.complex128)
    for m in range(9):
        for n in range(9):
            g = G[m, n]
            if g != 0:
                for x in range(a):
                    for y in range(c):
                        out[x, m, y] += g * th[x, n, y]
    return out


@njit(cache=True)
def _theta_blocks(A, B, rkey, qk, ckey):
    """theta by charge blocks: its rows (x, i) of charge v (rkey) meet only the bond indices of charge v (qk)
    and the columns (j, y) of charge v (ckey), so each charge is one BLAS product of the gathered blocks."""
    a, k, c = A.shape[0], A.shape[2], B.shape[2]
    A2, B2 = A.reshape(a * 3, k), B.reshape(k, 3 * c)
    th = np.zeros((a, 9, c), dtype=np.complex128)
    ir, ik, ic = np.empty(3 * a, dtype=np.int64), np.empty(k, dtype=np.int64), np.empty(3 * c, dtype=np.int64)
    for v in range(qk.min(), qk.max() + 1):
        nk, nr, nc = _indices_of(qk, v, ik), _indices_of(rkey, v, ir), _indices_of(ckey, v, ic)
        if nk == 0 or nr == 0 or nc == 0:
            continue
        Ab, Bb = np.empty((nr, nk), dtype=np.complex128), np.empty((nk, nc), dtype=np.complex128)
        for t in range(nk):
            for p in range(nr):
                Ab[p, t] = A2[ir[p], ik[t]]
            for q in range(nc):
                Bb[t, q] = B2[ik[t], ic[q]]
        Tb = np.dot(Ab, Bb)
        for p in range(nr):
            x, i = ir[p] // 3, ir[p] % 3
            for q in range(nc):
                th[x, 3 * i + ic[q] // c, ic[q] % c] = Tb[p, q]
    return th


@njit(cache=True)
def gated_theta(A, B, G, rkey, qk, ckey):
    """G (9 x 9) on the two-site theta of A (a, 3, k) and B (k, 3, c): out[x, m, y] = sum_n G[m, n] theta[x, n, y].

    theta[x, 3 i + j, y] = sum_k A[x, i, k] B[k, j, y]; small ones by loops that skip the zeros of A (its
    charge blocks), large ones by one BLAS product per charge (:func:`_theta_blocks`; rkey, qk, ckey: the
    charges of theta's rows 3 x + i, of the bond and of its columns c j + y)."""
    a, k, c = A.shape[0], A.shape[2], B.shape[2]
    if a * k * c > LOOPS_MAX:
        return _apply_gate(_theta_blocks(A, B, rkey, qk, ckey), G)
    th = np.zeros((a, 9, c), dtype=np.complex128)
    for x in range(a):
        for i in range(3):
            for kk in range(k):
                v = A[x, i, kk]
                if v != 0:
                    for j in range(3):
                        n = 3 * i + j
                        for y in range(c):
                            th[x, n, y] += v * B[kk, j, y]
    return _apply_gate(th, G)


@njit(cache=True)
def _row_keys(qa, pc):
    out = np.empty(qa.size * 3, dtype=np.int64)
    for x in range(qa.size):
        for i in range(3):
            out[3 * x + i] = qa[x] + pc[i]
    return out


@njit(cache=True)
def _col_keys(qc, pc):
    out = np.empty(qc.size * 3, dtype=np.int64)
    for j in range(3):
        for y in range(qc.size):
            out[j * qc.size + y] = qc[y] - pc[j]
    return out


@njit(cache=True)
def move_centre(arrs, qs, pc, centre, site):
    """Move the orthogonality centre from ``centre`` to ``site`` by block SVDs (no truncation); returns site."""
    while centre < site:
        A, B = arrs[centre], arrs[centre + 1]
        a, b, c = A.shape[0], A.shape[2], B.shape[2]
        U, R, qk, _, k = block_svd(A.reshape(a * 3, b), _row_keys(qs[centre], pc), qs[centre + 1], KEEP_ALL,
                                   UNBOUNDED, True)
        arrs[centre] = U.reshape(a, 3, k)
        arrs[centre + 1] = np.dot(R, B.reshape(b, 3 * c)).reshape(k, 3, c)
        qs[centre + 1] = qk
        centre += 1
    while centre > site:
        A, B = arrs[centre - 1], arrs[centre]
        a, b, c = A.shape[0], B.shape[0], B.shape[2]
        Lf, V, qk, _, k = block_svd(B.reshape(b, 3 * c), qs[centre], _col_keys(qs[centre + 1], pc), KEEP_ALL,
                                    UNBOUNDED, False)
        arrs[centre] = V.reshape(k, 3, c)
        arrs[centre - 1] = np.dot(A.reshape(a * 3, b), Lf).reshape(a, 3, k)
        qs[centre] = qk
        centre -= 1
    return centre


@njit(cache=True)
def sweep(arrs, qs, pc, gates, bonds, right, cutoff, max_bond):
    """Apply the schedule's gates (n, 9, 9) to a row whose centre is at the first gate; (discarded weight, max bond)."""
    disc, maxb, _ = _sweep(arrs, qs, pc, gates, bonds, right, cutoff, max_bond, workspace(0))
    return disc, maxb


@njit(cache=True)
def _sweep(arrs, qs, pc, gates, bonds, right, cutoff, max_bond, ws):
    """:func:`sweep` with the scratch arrays ``ws`` (grown when a theta needs more); returns them too."""
    disc = 0.0
    maxb = 1
    for s in range(bonds.size):
        b = bonds[s]
        A, B = arrs[b], arrs[b + 1]
        a, c = A.shape[0], B.shape[2]
        if ws[2].size < 12 * max(a, c):
            ws = workspace(4 * max(a, c))  # n >= 3 max(a, c), with room for the bonds to grow
        rkey, ckey = _row_keys(qs[b], pc), _col_keys(qs[b + 2], pc)
        out = gated_theta(A, B, gates[s], rkey, qs[b + 1], ckey)
        left, rt, qk, d, kept = split(out.reshape(a * 3, 3 * c), rkey, ckey, cutoff, max_bond, right[s], ws)
        arrs[b] = left.reshape(a, 3, kept)
        arrs[b + 1] = rt.reshape(kept, 3, c)
        qs[b + 1] = qk
        disc += d
        maxb = max(maxb, kept)
    return disc, maxb, ws


@njit(cache=True)
def sweep_rows(rows_arrs, rows_qs, pcs, idx, gates, gidx, bonds, right, cutoff, max_bond, disc, maxb):
    """:func:`sweep` on the rows ``idx`` of a batch, row idx[j] with the gates gates[gidx[j]]."""
    ws = workspace(0)
    for j in range(idx.size):
        r = idx[j]
        d, mb, ws = _sweep(rows_arrs[r], rows_qs[r], pcs[r], gates[gidx[j]], bonds, right, cutoff, max_bond, ws)
        disc[r] += d
        maxb[r] = max(maxb[r], mb)


@njit(cache=True)
def sweep_rows_steps(rows_arrs, rows_qs, pcs, idx, gates, gidx, bonds, right, cutoff, max_bond, disc, maxb, counts,
                     floors, factors, done):
    """Up to counts[j] steps (sweeps) of row idx[j], each taken only while its squared norm times factors[j] (a
    lower bound on what one step keeps of it) stays above floors[j]; done[j]: the steps taken."""
    ws = workspace(0)
    for j in range(idx.size):
        r = idx[j]
        arrs = rows_arrs[r]
        last = len(arrs) - 1
        n = 0
        while n < counts[j] and centre_norm2(arrs[last]) * factors[j] > floors[j]:
            d, mb, ws = _sweep(arrs, rows_qs[r], pcs[r], gates[gidx[j]], bonds, right, cutoff, max_bond, ws)
            disc[r] += d
            maxb[r] = max(maxb[r], mb)
            n += 1
        done[j] = n


# ------------------------------------------------------------------ environments and diagnostics
@njit(cache=True)
def centre_norm2(A):
    """||A||^2 of the centre tensor: <psi|psi> of a row in canonical form."""
    acc = 0.0
    for v in A.ravel():
        acc += v.real * v.real + v.imag * v.imag
    return acc


@njit(cache=True)
def last_norms(rows_arrs, idx):
    """<psi|psi> of the rows idx of a batch (centres on the last site)."""
    out = np.empty(idx.size)
    for j in range(idx.size):
        arrs = rows_arrs[idx[j]]
        out[j] = centre_norm2(arrs[len(arrs) - 1])
    return out
