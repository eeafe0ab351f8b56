"""Compiled truncated SVD of a charge-conserving matrix, block by block (numba): the split of a TEBD gate.

A two-site theta of a U(1)-symmetric MPS is block diagonal in the charge of
its rows and columns; :func:`split` (and its allocating form
:func:`block_svd`) decomposes each block, sorts all singular values,
truncates them by one rule (:func:`truncation`: > cutoff, at least one, at
most max_bond) and returns the two factors with the new bond's charges.

The charge blocks of a TEBD split are mostly 1 x n to 5 x 5; for those
:func:`split` runs a one-sided (Hestenes) Jacobi SVD, rotating column pairs
until every pair is orthogonal to machine precision, |g_p^H g_q| <= eps m
|g_p| |g_q|: every singular value to high *relative* accuracy (Demmel and
Veselic 1992), so the absolute 1e-12 cutoff keeps its meaning.  Larger blocks
go to LAPACK's zgesdd, called directly with scratch arrays that live for a
whole sweep (numba's np.linalg.svd copies and sizes its work on every call).
The sweeps that call these kernels are in :mod:`lru_mps.engines.mps.kernels`.
"""

from __future__ import annotations

import llvmlite.binding as llvm
import numpy as np
from numba import njit, types
from numba.extending import get_cython_function_address

#: keep every nonzero singular value (canonical moves); max_bond that never truncates
KEEP_ALL = 0.0
UNBOUNDED = 1 << 30
#: blocks whose smaller side is at most this use the Jacobi SVD; larger ones LAPACK (gesdd)
JACOBI_MAX = 5
#: orthogonality tolerance of the Jacobi rotations (relative, times the column length), and a cap on the sweeps
JACOBI_TOL = 2.2e-16
JACOBI_SWEEPS = 60
#: overlaps below this are zero (no rotation: its phase could not be represented)
TINY = 1e-290

# LAPACK's zgesdd (scipy's), called by symbol name so that the compiled kernels stay cacheable
llvm.add_symbol("lru_mps_zgesdd", get_cython_function_address("scipy.linalg.cython_lapack", "zgesdd"))
_zgesdd = types.ExternalFunction("lru_mps_zgesdd", types.void(*([types.voidptr] * 15)))


@njit(cache=True)
def _orthogonalize_rows(H, W, d):
    """Rotate row pairs of H (and W alike) until all rows of H are mutually orthogonal; the sweeps made.

    H holds the columns of the matrix being orthogonalized as rows (contiguous).
    """
    n, m = H.shape  # d (n,): the squared row norms, recomputed as the rows are rotated
    tol = JACOBI_TOL * max(m, 1)
    for p in range(n):
        acc = 0.0
        for i in range(m):
            acc += H[p, i].real ** 2 + H[p, i].imag ** 2
        d[p] = acc
    for sweep in range(JACOBI_SWEEPS):
        rotated = False
        for p in range(n - 1):
            hp = H[p]
            for q in range(p + 1, n):
                hq = H[q]
                gr, gi = 0.0, 0.0
                for i in range(m):  # gamma = <h_p, h_q>
                    gr += hp[i].real * hq[i].real + hp[i].imag * hq[i].imag
                    gi += hp[i].real * hq[i].imag - hp[i].imag * hq[i].real
                ag = np.hypot(gr, gi)
                if ag <= TINY or ag <= tol * np.sqrt(d[p] * d[q]):
                    continue
                rotated = True
                phc = complex(gr, -gi) / ag  # e^{-i arg gamma}: makes the pair's overlap real
                zeta = (d[q] - d[p]) / (2.0 * ag)
                if abs(zeta) > 1e100:
                    t = 0.5 / zeta
                else:
                    t = (1.0 if zeta >= 0 else -1.0) / (abs(zeta) + np.sqrt(1.0 + zeta * zeta))
                c = 1.0 / np.sqrt(1.0 + t * t)
                s = c * t
                dp, dq = 0.0, 0.0
                for i in range(m):
                    a = hp[i]
                    b = hq[i] * phc
                    a2 = c * a - s * b
                    b2 = s * a + c * b
                    hp[i] = a2
                    hq[i] = b2
                    dp += a2.real * a2.real + a2.imag * a2.imag
                    dq += b2.real * b2.real + b2.imag * b2.imag
                d[p] = dp
                d[q] = dq
                wp, wq = W[p], W[q]
                for i in range(W.shape[1]):
                    a = wp[i]
                    b = wq[i] * phc
                    wp[i] = c * a - s * b
                    wq[i] = s * a + c * b
        if not rotated:
            return sweep
    return JACOBI_SWEEPS


@njit(cache=True)
def truncation(S, n, cutoff, max_bond):
    """The truncation rule: of the singular values S[:n] (sorted, largest first) keep those > cutoff, at least
    one, at most max_bond; returns (kept, discarded weight = sum of the squares of the others)."""
    keep = 0
    for t in range(n):
        if S[t] > cutoff:
            keep += 1
    keep = min(max(keep, 1), max_bond, n)
    disc = 0.0
    for t in range(keep, n):
        disc += S[t] ** 2
    return keep, disc


@njit(cache=True)
def truncations(S, n, cutoff, max_bond):
    """:func:`truncation` of every row of S (m, K), row j's values S[j, :n[j]]: (kept (m,), discarded (m,))."""
    m = S.shape[0]
    keep = np.empty(m, dtype=np.int64)
    disc = np.empty(m)
    for j in range(m):
        keep[j], disc[j] = truncation(S[j], n[j], cutoff, max_bond)
    return keep, disc


@njit(cache=True)
def _indices_of(keys, v, out):
    """The positions of the value v in keys, into out; returns how many."""
    n = 0
    for t in range(keys.size):
        if keys[t] == v:
            out[n] = t
            n += 1
    return n


@njit(cache=True)
def workspace(n):
    """Scratch arrays for :func:`split` of matrices up to n x n (once per sweep, not per gate; :func:`_slices`),
    and LAPACK's integers, iwork and jobz."""
    J = JACOBI_MAX
    return (np.empty(7 * n * n + (J + 3) * n + J * J + 64, dtype=np.complex128), np.empty(7 * n * n + 11 * n + J),
            np.empty(4 * n, dtype=np.int64), np.empty(8 * n + 8, dtype=np.int32), np.array([ord("S")], dtype=np.uint8))


@njit(cache=True)
def _slices(ws):
    """The parts of a workspace: (Uf, Vf, Jacobi H, W, LAPACK buffer, work) complex, (Jacobi norms, sorted
    values, values, LAPACK values, rwork) real, (charges, order, rows, columns) int64; n its size."""
    cb, fb, ib = ws[0], ws[1], ws[2]
    n, J = ib.size // 4, JACOBI_MAX
    o1, o2, o3 = n * n, 2 * n * n, 2 * n * n + J * n
    o4, o5 = o3 + J * J, o3 + J * J + 3 * n * n
    return (cb[:o1], cb[o1:o2], cb[o2:o3], cb[o3:o4], cb[o4:o5], cb[o5:],
            fb[:J], fb[J:J + n], fb[J + n:J + 2 * n], fb[J + 2 * n:J + 3 * n], fb[J + 3 * n:],
            ib[:n], ib[n:2 * n], ib[2 * n:3 * n], ib[3 * n:], n)


@njit(cache=True)
def _lapack_block(M, rows, cols, buf, work, S, rwork, ints, jobz, Uf, Vf, total):
    """LAPACK's zgesdd of the block M[rows][:, cols], its vectors written as :func:`_jacobi_block` does.

    The block is copied row-major, which LAPACK reads as its transpose B^T =
    Vh^T S U^T: its U comes out as Vh and its Vh as U, both row-major."""
    nrb, ncb = rows.size, cols.size
    k = min(nrb, ncb)
    a, u, vt = buf[:nrb * ncb], buf[nrb * ncb:nrb * ncb + k * ncb], buf[nrb * ncb + k * ncb:]
    for i in range(nrb):
        for j in range(ncb):
            a[i * ncb + j] = M[rows[i], cols[j]]
    iwork = ints[8:]
    ints[0], ints[1], ints[2], ints[3], ints[4], ints[5] = ncb, nrb, ncb, ncb, k, work.size
    _zgesdd(jobz.ctypes, ints[0:].ctypes, ints[1:].ctypes, a.ctypes, ints[2:].ctypes, S.ctypes, u.ctypes,
            ints[3:].ctypes, vt.ctypes, ints[4:].ctypes, work.ctypes, ints[5:].ctypes, rwork.ctypes, iwork.ctypes,
            ints[6:].ctypes)
    if ints[6] != 0:
        raise RuntimeError("LAPACK zgesdd failed on a charge block of a TEBD split")
    for t in range(k):
        for i in range(nrb):
            Uf[rows[i], total + t] = vt[i * k + t]
        for j in range(ncb):
            Vf[total + t, cols[j]] = u[t * ncb + j]
    return S[:k]


@njit(cache=True)
def block_svd(M, rkey, ckey, cutoff, max_bond, absorb_right):
    """Truncated SVD of M (rows with charge rkey, columns ckey; nonzero only where they match), block by block.

    Returns (left, right, charges of the new bond, discarded weight, kept):
    left (rows, k) and right (k, cols) with M ~ left @ right; the singular
    values go right (``absorb_right``: left is an isometry) or left.  Kept:
    the values > cutoff, at least one, at most max_bond, largest first.
    """
    return split(M, rkey, ckey, cutoff, max_bond, absorb_right, workspace(max(M.shape[0], M.shape[1])))


@njit(cache=True)
def _jacobi_block(M, rows, cols, Hb, Wb, d, S, Uf, Vf, total):
    """One-sided Jacobi SVD of the block M[rows][:, cols] (smaller side <= JACOBI_MAX), its vectors written into
    the columns total.. of Uf and the rows total.. of Vf; returns its singular values (a view of ``S``)."""
    nrb, ncb = rows.size, cols.size
    tall = nrb >= ncb
    k, r = (ncb, nrb) if tall else (nrb, ncb)
    H = Hb[:k * r].reshape(k, r)  # rows: the columns of the block (tall) or of its adjoint (wide)
    W = Wb[:k * k].reshape(k, k)
    for p in range(k):
        for i in range(r):
            H[p, i] = M[rows[i], cols[p]] if tall else np.conj(M[rows[p], cols[i]])
        for q in range(k):
            W[p, q] = 1.0 if p == q else 0.0
    _orthogonalize_rows(H, W, d[:k])
    S = S[:k]
    for p in range(k):
        acc = 0.0
        for i in range(r):
            acc += H[p, i].real ** 2 + H[p, i].imag ** 2
        S[p] = np.sqrt(acc)
        if S[p] > 0.0:
            for i in range(r):
                H[p, i] /= S[p]
        if tall:  # block = (H^T) S (W^T)^H
            for i in range(nrb):
                Uf[rows[i], total + p] = H[p, i]
            for j in range(ncb):
                Vf[total + p, cols[j]] = np.conj(W[p, j])
        else:  # block^H = H^T S W^T^H, so block = W^T S conj(H)
            for i in range(nrb):
                Uf[rows[i], total + p] = W[p, i]
            for j in range(ncb):
                Vf[total + p, cols[j]] = np.conj(H[p, j])
    return S


@njit(cache=True)
def split(M, rkey, ckey, cutoff, max_bond, absorb_right, ws):
    """:func:`block_svd` with the scratch arrays ``ws`` of :func:`workspace` (at least max(M.shape))."""
    nr, nc = M.shape
    cap = min(nr, nc)
    Ub, Vb, Hb, Wb, Lb, work, d, Ss, Sf, Sb, rwork, kf, order, rows_all, cols_all, n = _slices(ws)
    Uf = Ub[:nr * cap].reshape(nr, cap)  # the blocks' singular vectors, side by side
    Vf = Vb[:cap * nc].reshape(cap, nc)
    Uf[:] = 0.0
    Vf[:] = 0.0
    lo = rkey.min()
    nk = rkey.max() - lo + 1
    total = 0
    for v in range(nk):
        nrb, ncb = _indices_of(rkey, lo + v, rows_all), _indices_of(ckey, lo + v, cols_all)
        if nrb == 0 or ncb == 0:
            continue
        rows, cols = rows_all[:nrb], cols_all[:ncb]
        if nrb == 1 or ncb == 1:  # a vector: its norm is the one singular value
            acc = 0.0
            for i in range(nrb):
                for j in range(ncb):
                    x = M[rows[i], cols[j]]
                    acc += x.real * x.real + x.imag * x.imag
            sv = np.sqrt(acc)
            inv = 1.0 / sv if sv > 0.0 else 0.0
            if ncb == 1:  # a column: U = col / s, Vh = 1
                for i in range(nrb):
                    Uf[rows[i], total] = M[rows[i], cols[0]] * inv
                Vf[total, cols[0]] = 1.0
            else:  # a row: U = 1, Vh = row / s
                Uf[rows[0], total] = 1.0
                for j in range(ncb):
                    Vf[total, cols[j]] = M[rows[0], cols[j]] * inv
            Sf[total] = sv
            kf[total] = lo + v
            total += 1
            continue
        if min(nrb, ncb) <= JACOBI_MAX:
            S = _jacobi_block(M, rows, cols, Hb, Wb, d, Sb, Uf, Vf, total)
        else:
            S = _lapack_block(M, rows, cols, Lb, work, Sb, rwork, ws[3], ws[4], Uf, Vf, total)
        for t in range(S.size):
            Sf[total + t] = S[t]
            kf[total + t] = lo + v
        total += S.size
    if total == 0:  # the zero state: one zero index
        return (np.zeros((nr, 1), dtype=np.complex128), np.zeros((1, nc), dtype=np.complex128),
                np.zeros(1, dtype=np.int64), 0.0, 1)
    for t in range(total):  # stable sort, largest first (insertion: a few dozen values)
        j = t
        while j > 0 and Sf[order[j - 1]] < Sf[t]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = t
    for t in range(total):
        Ss[t] = Sf[order[t]]
    keep, disc = truncation(Ss, total, cutoff, max_bond)
    left = np.empty((nr, keep), dtype=np.complex128)
    right = np.empty((keep, nc), dtype=np.complex128)
    qk = np.empty(keep, dtype=np.int64)
    for t in range(keep):
        o = order[t]
        fl = 1.0 if absorb_right else Sf[o]
        fr = Sf[o] if absorb_right else 1.0
        for i in range(nr):
            left[i, t] = Uf[i, o] * fl
        for j in range(nc):
            right[t, j] = Vf[o, j] * fr
        qk[t] = kf[o]
    return left, right, qk, disc, keep
