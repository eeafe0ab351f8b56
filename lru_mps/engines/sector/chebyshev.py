"""exp(-i H_eff t) v on large fixed-N sectors: a Chebyshev expansion in fixed sub-steps, compiled.

H_eff = H - i Gamma on an N sector has a real symmetric H (on-site energies
dw_l n_l - (U_l/2) n_l(n_l - 1) on the diagonal, hopping sqrt(n) factors off
it, times the bond's J_l) and a diagonal Gamma >= 0 (half the rates of the jump channels
times <op^dag op>).  With the real bounds [a, b] of H's spectrum (Gershgorin)
and the centre c = (a + b)/2 - i Gamma_max/2, the scaled H' = (H_eff - c)/r,
r = (b - a)/2, has its numerical range in a thin box around [-1, 1], and

    exp(-i H_eff tau) v = exp(-i c tau) sum_k a_k(r tau) T_k(H') v,
    a_0 = J_0(r tau),  a_k = 2 (-i)^k J_k(r tau)

(the Jacobi-Anger expansion; J_k are Bessel functions, T_k the Chebyshev
polynomials by their three-term recurrence: one sparse product per term).
The series is cut where |J_k| stays below TAIL; a sub-step has r tau <=
:data:`RTAU_MAX`, so the growth of T_k off the real axis (the small imaginary
parts of the eigenvalues) stays bounded and the truncation error is at the
level of rounding.  The cost is about r t sparse products, i.e. it grows with
the spectral width (~ N (U + W)) and the time, not with the number of stops.

A duration t is always cut into the same sub-steps: floor(t / tau_s) full
sub-steps of tau_s (r tau_s <= RTAU_MAX) and one remainder.  So evolving a
state by tau <= t from the same start gives the same numbers whether or not
the sub-step starts of an earlier evolution by t from that start are reused,
which :class:`ChebyshevBlock` does for the jump-time search: a root search
evaluates the norm at many tau inside one stretch, and each evaluation then
costs a linear combination of the kept Chebyshev vectors T_k(H') v of one
sub-step (computed once, by the same recurrence, and summed in the same
order as a fresh evolution: the same bits).
"""

from __future__ import annotations

import math
import time

import numpy as np
import scipy.sparse as sp
from numba import njit

from ...errors import check_stop

#: largest r tau of one sub-step (r = half-width of the spectrum; Bessel orders up to ~ r tau + 30); a block
#: with larger decay rates takes shorter sub-steps, so that T_k grows by at most exp(GROWTH) off the real axis
RTAU_MAX = 150.0
RTAU_MIN = 10.0
GROWTH = 3.0
#: a Chebyshev basis (T_k(H') v of one sub-step) is kept for the jump-time search up to this many numbers
BASIS_MAX = 4_000_000
#: the expansion is cut after the last order with |J_k(r tau)| above this
TAIL = 1e-18
#: evolutions whose sub-step starts are kept for the jump-time search (one per row of a trajectory)
KEEP_STARTS = 4
#: seconds a compiled call of one sub-step's sum aims at (:meth:`ChebyshevBlock._step_in_pieces`)
PIECE_S = 0.2


def _chebyshev_kernel(indptr, indices, codes, table, dr, di, vr, vi, cr, ci, Tr, Ti):  # pragma: no cover - compiled
    """sum_k coef_k T_k(H') v, H' = offdiag (CSR, real) + diag (complex), in real arithmetic (real, imag parts).

    The off-diagonal values are ``table[codes[j]]`` (:func:`compact_values`); the recurrence's vectors hold a
    state's real and imaginary parts side by side (one cache line per gathered neighbour).  T_k(H') v for
    k < len(Tr) is also written into Tr[k], Ti[k] (the basis of :func:`_combine_kernel`).
    """
    n = vr.shape[0]
    K = cr.shape[0]
    keep = Tr.shape[0]
    a0 = np.empty((n, 2))
    a0[:, 0] = vr
    a0[:, 1] = vi
    outr = np.empty(n)
    outi = np.empty(n)
    for i in range(n):
        outr[i] = cr[0] * a0[i, 0] - ci[0] * a0[i, 1]
        outi[i] = cr[0] * a0[i, 1] + ci[0] * a0[i, 0]
    if keep > 0:
        Tr[0, :] = a0[:, 0]
        Ti[0, :] = a0[:, 1]
    if K == 1:
        return outr, outi
    a1 = np.empty((n, 2))
    for i in range(n):
        sr = dr[i] * a0[i, 0] - di[i] * a0[i, 1]
        si = dr[i] * a0[i, 1] + di[i] * a0[i, 0]
        for j in range(indptr[i], indptr[i + 1]):
            c = indices[j]
            h = table[codes[j]]
            sr += h * a0[c, 0]
            si += h * a0[c, 1]
        a1[i, 0] = sr
        a1[i, 1] = si
        outr[i] += cr[1] * sr - ci[1] * si
        outi[i] += cr[1] * si + ci[1] * sr
    if keep > 1:
        Tr[1, :] = a1[:, 0]
        Ti[1, :] = a1[:, 1]
    a2 = np.empty((n, 2))
    for k in range(2, K):
        kr, ki = cr[k], ci[k]
        for i in range(n):
            sr = dr[i] * a1[i, 0] - di[i] * a1[i, 1]
            si = dr[i] * a1[i, 1] + di[i] * a1[i, 0]
            for j in range(indptr[i], indptr[i + 1]):
                c = indices[j]
                h = table[codes[j]]
                sr += h * a1[c, 0]
                si += h * a1[c, 1]
            sr = 2.0 * sr - a0[i, 0]
            si = 2.0 * si - a0[i, 1]
            a2[i, 0] = sr
            a2[i, 1] = si
            outr[i] += kr * sr - ki * si
            outi[i] += kr * si + ki * sr
        if k < keep:
            Tr[k, :] = a2[:, 0]
            Ti[k, :] = a2[:, 1]
        a0, a1, a2 = a1, a2, a0
    return outr, outi


def _chebyshev_open_kernel(indptr, indices, codes, table, dr, di, vr, vi, cr, ci):  # pragma: no cover - compiled
    """The terms k = 0 and 1 of :func:`_chebyshev_kernel` (K > 2), with its arithmetic: (T_0 v, T_1 v, the sums
    so far), which :func:`_chebyshev_more_kernel` continues."""
    n = vr.shape[0]
    a0 = np.empty((n, 2))
    a0[:, 0] = vr
    a0[:, 1] = vi
    outr = np.empty(n)
    outi = np.empty(n)
    for i in range(n):
        outr[i] = cr[0] * a0[i, 0] - ci[0] * a0[i, 1]
        outi[i] = cr[0] * a0[i, 1] + ci[0] * a0[i, 0]
    a1 = np.empty((n, 2))
    for i in range(n):
        sr = dr[i] * a0[i, 0] - di[i] * a0[i, 1]
        si = dr[i] * a0[i, 1] + di[i] * a0[i, 0]
        for j in range(indptr[i], indptr[i + 1]):
            c = indices[j]
            h = table[codes[j]]
            sr += h * a0[c, 0]
            si += h * a0[c, 1]
        a1[i, 0] = sr
        a1[i, 1] = si
        outr[i] += cr[1] * sr - ci[1] * si
        outi[i] += cr[1] * si + ci[1] * sr
    return a0, a1, outr, outi


def _chebyshev_more_kernel(indptr, indices, codes, table, dr, di, a0, a1, a2, outr, outi, cr, ci, k0,
                           k1):  # pragma: no cover - compiled
    """The terms k0 <= k < k1 of :func:`_chebyshev_kernel` (k0 >= 2), with its arithmetic, from T_{k0-2} v and
    T_{k0-1} v (a0, a1; a2 scratch) into the sums outr, outi; returns (T_{k1-2} v, T_{k1-1} v, scratch)."""
    n = a0.shape[0]
    for k in range(k0, k1):
        kr, ki = cr[k], ci[k]
        for i in range(n):
            sr = dr[i] * a1[i, 0] - di[i] * a1[i, 1]
            si = dr[i] * a1[i, 1] + di[i] * a1[i, 0]
            for j in range(indptr[i], indptr[i + 1]):
                c = indices[j]
                h = table[codes[j]]
                sr += h * a1[c, 0]
                si += h * a1[c, 1]
            sr = 2.0 * sr - a0[i, 0]
            si = 2.0 * si - a0[i, 1]
            a2[i, 0] = sr
            a2[i, 1] = si
            outr[i] += kr * sr - ki * si
            outi[i] += kr * si + ki * sr
        a0, a1, a2 = a1, a2, a0
    return a0, a1, a2


def _combine_kernel(Tr, Ti, cr, ci):  # pragma: no cover - compiled
    """sum_k coef_k T_k from a stored basis, with the arithmetic of :func:`_chebyshev_kernel` (the same bits)."""
    n = Tr.shape[1]
    outr = np.empty(n)
    outi = np.empty(n)
    for i in range(n):
        outr[i] = cr[0] * Tr[0, i] - ci[0] * Ti[0, i]
        outi[i] = cr[0] * Ti[0, i] + ci[0] * Tr[0, i]
    for k in range(1, cr.shape[0]):
        kr, ki = cr[k], ci[k]
        for i in range(n):
            sr = Tr[k, i]
            si = Ti[k, i]
            outr[i] += kr * sr - ki * si
            outi[i] += kr * si + ki * sr
    return outr, outi


def _bessel_kernel(x, kmax):  # pragma: no cover - compiled
    """J_0(x) .. J_kmax(x) for x > 0 by Miller's backward recurrence, normalized by J_0 + 2 sum J_2m = 1."""
    m = kmax + 20 + int(x) + int(10.0 * (x + 1.0) ** (1.0 / 3.0))
    m += m % 2
    out = np.zeros(kmax + 1)
    jp, j = 0.0, 1e-280
    norm = 0.0
    for k in range(m, 0, -1):
        jm = (2.0 * k / x) * j - jp
        jp, j = j, jm
        if abs(j) > 1e250:  # rescale everything kept so far
            j *= 1e-250
            jp *= 1e-250
            norm *= 1e-250
            for q in range(kmax + 1):
                out[q] *= 1e-250
        if k - 1 <= kmax:
            out[k - 1] = j
        if (k - 1) % 2 == 0 and k - 1 > 0:
            norm += 2.0 * j
    norm += j  # J_0
    for q in range(kmax + 1):
        out[q] /= norm
    return out


_chebyshev = njit(cache=True, nogil=True)(_chebyshev_kernel)
_chebyshev_open = njit(cache=True, nogil=True)(_chebyshev_open_kernel)
_chebyshev_more = njit(cache=True, nogil=True)(_chebyshev_more_kernel)
_combine = njit(cache=True, nogil=True)(_combine_kernel)
_bessel = njit(cache=True, nogil=True)(_bessel_kernel)


def compact_values(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, table) with table[codes] == data exactly: the hopping takes few distinct values (a bond's J_b times
    sqrt(n_l + 1) sqrt(n_m), over the spectral radius), so a sector's off-diagonal values are stored as one small
    integer each (1-2 bytes against 8).  The products are memory-bound (a 413,000-state sector's matrix is
    ~250 MB as int64 indices and float64 values); the arithmetic, its values and its order are unchanged, so
    the numbers are the same bit for bit (docs/benchmarks.md, the sector engine)."""
    table, codes = np.unique(data, return_inverse=True)
    dtype = np.uint8 if len(table) <= 2**8 else np.uint16 if len(table) <= 2**16 else np.uint32
    return codes.astype(dtype).ravel(), np.ascontiguousarray(table, dtype=np.float64)


def spectral_bounds(H: sp.csr_matrix) -> tuple[float, float, float]:
    """(a, b, gamma_max): Gershgorin bounds of the real symmetric part's spectrum and the largest decay rate -Im H_ii."""
    H = sp.csr_matrix(H)
    d = H.diagonal()
    off = H - sp.diags(d)
    radius = np.asarray(abs(off).sum(axis=1)).ravel()
    require_real = np.abs(off.data.imag).max() if off.nnz else 0.0
    if require_real > 0:
        raise ValueError("the sector Chebyshev propagator needs a real off-diagonal H_eff")
    a = float(np.min(d.real - radius))
    b = float(np.max(d.real + radius))
    return a, b, float(max(0.0, -np.min(d.imag)))


def scale_radius(a: float, b: float, gmax: float) -> float:
    """The scale r of the Chebyshev expansion of H_eff from its :func:`spectral_bounds`: the real spectrum's
    half-width (0.1 % over), and at least what keeps the growth of T_k off the real axis within exp(GROWTH) over the
    shortest sub-step (r tau = RTAU_MIN): 0.5 gamma_max / r <= (GROWTH / (RTAU_MIN + 30))^2.  The second bound
    matters only for blocks whose spectrum is narrow against their decay rates (a few states: the vacuum's width
    is 0)."""
    return max(0.5 * (b - a) * (1.0 + 1e-3), 0.5 * gmax / (GROWTH / (RTAU_MIN + 30.0)) ** 2, 1e-8)


class ChebyshevBlock:
    """exp(-i H_eff t) x for one sparse sector block (see the module docstring)."""

    def __init__(self, H: sp.csr_matrix):
        H = sp.csr_matrix(H)
        a, b, gmax = spectral_bounds(H)
        self.r = scale_radius(a, b, gmax)
        self.c = 0.5 * (a + b) - 0.5j * gmax
        d = H.diagonal()
        off = (H - sp.diags(d)).tocsr()
        off.sort_indices()
        self.indptr = off.indptr.astype(np.int64)
        self.indices = off.indices.astype(np.int32 if off.shape[0] < 2**31 else np.int64)
        self.codes, self.table = compact_values((off.data.real / self.r).astype(np.float64))
        diag = (d - self.c) / self.r
        self.dr, self.di = np.ascontiguousarray(diag.real), np.ascontiguousarray(diag.imag)
        # imaginary half-extent of the scaled spectrum: T_k grows like exp(k sqrt(delta)) near +-1
        delta = 0.5 * gmax / self.r
        self.tau_s = min(RTAU_MAX, max(RTAU_MIN, GROWTH / math.sqrt(delta) - 30.0 if delta > 0 else RTAU_MAX)) / self.r
        self._coef: dict[float, np.ndarray] = {}
        self._starts: list[tuple[np.ndarray, list[np.ndarray]]] = []
        self._basis: tuple | None = None  # (starts list, index, Tr, Ti) of the last sub-step probed
        self._none = np.zeros((0, 0))
        self.products = 0  # sparse products so far (cost diagnostics)
        #: seconds per sparse product (measured by each call; a first guess of 2 ns per nonzero, benchmarks.md)
        self._product_s = 2e-9 * (len(self.indices) + len(self.dr))

    def coefficients(self, tau: float) -> np.ndarray:
        """Chebyshev coefficients of exp(-i H_eff tau), phase exp(-i c tau) included."""
        co = self._coef.get(tau)
        if co is None:
            x = self.r * tau
            kmax = int(x + 12.0 * max(1.0, x) ** (1.0 / 3.0) + 40)
            j = _bessel(float(x), kmax) if x > 0 else np.eye(1, kmax + 1).ravel()
            big = np.nonzero(np.abs(j) > TAIL)[0]
            K = int(big[-1]) + 1 if len(big) else 1
            k = np.arange(K)
            co = (np.where(k == 0, 1.0, 2.0) * (-1j) ** (k % 4) * j[:K]) * np.exp(-1j * self.c * tau)
            if len(self._coef) < 256:
                self._coef[tau] = co
        return co

    def _step(self, x: np.ndarray, tau: float) -> np.ndarray:
        co = self.coefficients(tau)
        K = len(co)
        self.products += K - 1
        xr, xi = np.ascontiguousarray(x.real), np.ascontiguousarray(x.imag)
        cr, ci = np.ascontiguousarray(co.real), np.ascontiguousarray(co.imag)
        if K <= 2 or (K - 1) * self._product_s <= PIECE_S:
            start = time.perf_counter()
            yr, yi = _chebyshev(self.indptr, self.indices, self.codes, self.table, self.dr, self.di, xr, xi, cr, ci,
                                self._none, self._none)
            self._timed(time.perf_counter() - start, K - 1)
            return yr + 1j * yi
        return self._step_in_pieces(xr, xi, cr, ci)

    def _step_in_pieces(self, xr, xi, cr, ci) -> np.ndarray:
        """:meth:`_step`'s sum in compiled calls of about :data:`PIECE_S` seconds each, so that Python handles a
        signal (Ctrl-C, SIGTERM) between them (a sub-step of a 10^6-state sector is ~200 products, seconds in one
        call); the same recurrence and the same sums term by term: the same numbers bit for bit."""
        K = len(cr)
        args = (self.indptr, self.indices, self.codes, self.table, self.dr, self.di)
        a0, a1, outr, outi = _chebyshev_open(*args, xr, xi, cr, ci)
        a2 = np.empty_like(a0)
        k = 2
        while k < K:
            check_stop()
            stop = min(K, k + max(1, int(PIECE_S / self._product_s)))
            start = time.perf_counter()
            a0, a1, a2 = _chebyshev_more(*args, a0, a1, a2, outr, outi, cr, ci, k, stop)
            self._timed(time.perf_counter() - start, stop - k)
            k = stop
        return outr + 1j * outi

    def _timed(self, seconds: float, products: int) -> None:
        """Book a compiled call's seconds per sparse product (up at once, down halfway), which sizes the pieces."""
        if products > 0:
            now = seconds / products
            self._product_s = max(now if now > self._product_s else 0.5 * (self._product_s + now), 1e-9)

    def _from_basis(self, starts: list, k: int, tau: float) -> np.ndarray:
        """The remainder step from sub-step start k of a kept evolution, through that sub-step's Chebyshev basis.

        Built once (one full sub-step of sparse products), then every tau of a jump-time search costs a
        linear combination; the numbers are those of :meth:`_step` (same recurrence, same summation).
        """
        co = self.coefficients(tau)
        b = self._basis
        if b is None or b[0] is not starts or b[1] != k:
            K = len(self.coefficients(self.tau_s))
            n = len(starts[k])
            if max(K, len(co)) * n > BASIS_MAX:
                return self._step(starts[k], tau)
            K = max(K, len(co))
            Tr, Ti = np.empty((K, n)), np.empty((K, n))
            full = self.coefficients(self.tau_s) if K == len(self.coefficients(self.tau_s)) else co
            x = starts[k]
            self.products += K - 1
            _chebyshev(self.indptr, self.indices, self.codes, self.table, self.dr, self.di, np.ascontiguousarray(x.real),
                       np.ascontiguousarray(x.imag), np.ascontiguousarray(full.real), np.ascontiguousarray(full.imag),
                       Tr, Ti)
            b = self._basis = (starts, k, Tr, Ti)
        yr, yi = _combine(b[2], b[3], np.ascontiguousarray(co.real), np.ascontiguousarray(co.imag))
        return yr + 1j * yi

    def substeps(self, t: float) -> tuple[int, float]:
        """(full sub-steps, remainder) of a duration t > 0 (1/J): floor(t / tau_s) sub-steps of tau_s and the rest,
        a remainder of (nearly) zero taken as one more full sub-step."""
        n_full = int(math.floor(t / self.tau_s))
        rem = t - n_full * self.tau_s
        if rem <= 1e-14 * max(1.0, t) and n_full > 0:
            n_full, rem = n_full - 1, self.tau_s
        return n_full, rem

    def apply(self, x: np.ndarray, t: float) -> np.ndarray:
        """exp(-i H_eff t) x: floor(t / tau_s) sub-steps of tau_s, then the remainder."""
        if t <= 0.0:
            return x.copy()
        n_full, rem = self.substeps(t)
        starts = self._cached_starts(x)
        y, k0 = x, 0
        if starts is not None:
            k0 = min(n_full, len(starts) - 1)
            y = starts[k0]
            if k0 == n_full:  # a jump-time search inside a kept evolution
                return self._from_basis(starts, k0, rem)
        else:
            starts = [x.copy()]
            self._starts.append((starts[0], starts))
            del self._starts[:-KEEP_STARTS]
        for k in range(k0, n_full):
            y = self._step(y, self.tau_s)
            if len(starts) == k + 1:
                starts.append(y)
        return self._step(y, rem)

    def _cached_starts(self, x: np.ndarray):
        for v0, starts in reversed(self._starts):
            if v0.shape == x.shape and np.array_equal(v0, x):
                return starts
        return None
