"""exp(-i H t) of small dense blocks: eigendecomposition where it is well conditioned, expm otherwise.

H_eff conserves the excitation number, so every engine propagates small
dense blocks exactly: H = V diag(lam) V^-1 and exp(-i H t) = V exp(-i lam t)
V^-1 for any t, with no time-step error.  The rule, shared by every engine and
by the Lindblad reference: a Hermitian block is diagonalized with eigh
(unitary V); a non-Hermitian one with eig, used only when the eigenvector
matrix is well conditioned (cond_2(V) < :data:`COND_LIMIT`: the error of the
eigen form grows like cond * eps); near an exceptional point the block falls
back to scipy's expm.

The rule is written once, here, in the forms the engines need:
:func:`expm_propagator` (the fallback), :func:`propagator_stack` (the
matrices exp(-i H_j t) of a stack of blocks), :func:`evolve_rows` (row
vectors x -> x V^-T diag(exp(-i lam t)) V^T, i.e. V exp(-i lam t) V^-1 x, for
stacks of rows), :func:`evolve_eigen` (a column vector already in the
eigenbasis), :func:`evolve_real_eigen` (a column vector through a real
symmetric block's real eigenvectors) and :class:`BlockPropagator` (one
block, any t).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

#: eigenvector condition number above which expm is used instead of the eigen form
COND_LIMIT = 1e6


def decompose(M: np.ndarray, hermitian: bool):
    """(lam, V, V^-1) of a square matrix M, or None where its eigenvectors are too ill-conditioned.

    ``hermitian``: M is Hermitian (eigh, V^-1 = V^dag, lam as complex).
    """
    if hermitian:
        lam, V = np.linalg.eigh(M)
        return lam.astype(complex), V, V.conj().T
    lam, V = np.linalg.eig(M)
    try:
        Vinv = np.linalg.inv(V)
    except np.linalg.LinAlgError:
        return None
    # ||V||_F ||V^-1||_F >= cond_2(V) settles almost every case without the SVD of cond (20 % of eig's time)
    if len(lam) > 1 and not np.linalg.norm(V) * np.linalg.norm(Vinv) < COND_LIMIT:
        if not np.linalg.cond(V) < COND_LIMIT:
            return None
    return lam, V, Vinv


def decompose_stack(M: np.ndarray):
    """The eigendecompositions of a stack of matrices (m, d, d): (lam, V, V^-1, bad), bad[j] where block j must use
    expm.

    The rule of :func:`decompose` for every block: an exactly Hermitian block
    with eigh (unitary V, V^-1 = V^dag, never bad), any other with eig and
    cond_2(V) < COND_LIMIT (the bound ||V||_F ||V^-1||_F >= cond_2(V) settles
    almost every case without an SVD).  A stack of only non-Hermitian blocks
    gives numpy's eig numbers (real where M and every eigenvalue are); one
    with Hermitian blocks in it is complex.
    """
    m, d = M.shape[0], M.shape[1]
    herm = np.all(M == M.conj().transpose(0, 2, 1), axis=(1, 2))
    if m and herm.all():
        lam, V = in_pieces(np.linalg.eigh, M)
        V = V.astype(complex, copy=False)
        return lam.astype(complex), V, V.conj().transpose(0, 2, 1), np.zeros(m, dtype=bool)
    if herm.any():
        lam = np.empty((m, d), dtype=complex)
        V, Vinv = np.empty((m, d, d), dtype=complex), np.empty((m, d, d), dtype=complex)
        bad = np.zeros(m, dtype=bool)
        for sel in (herm, ~herm):
            lam[sel], V[sel], Vinv[sel], bad[sel] = decompose_stack(M[sel])
        return lam, V, Vinv, bad
    lam, V = in_pieces(np.linalg.eig, M)
    if not np.iscomplexobj(M) and np.iscomplexobj(lam) and not lam.imag.any():  # (eig's rule, on the whole stack)
        lam, V = lam.real, V.real
    bad = np.zeros(m, dtype=bool)
    try:
        Vinv = in_pieces(np.linalg.inv, V)
    except np.linalg.LinAlgError:
        Vinv = np.empty_like(V)
        for j in range(m):
            try:
                Vinv[j] = np.linalg.inv(V[j])
            except np.linalg.LinAlgError:
                Vinv[j] = np.eye(d)
                bad[j] = True
    if d > 1:
        bound = np.linalg.norm(V, axis=(1, 2)) * np.linalg.norm(Vinv, axis=(1, 2))
        for j in np.nonzero(~bad & ~(bound < COND_LIMIT))[0]:
            bad[j] = not (np.linalg.cond(V[j]) < COND_LIMIT)
    return lam, V, Vinv, bad


#: seconds a piece of :func:`in_pieces` aims at, so that a signal (Ctrl-C, SIGTERM) is handled soon
PIECE_S = 0.1


def in_pieces(fn, M: np.ndarray):
    """``fn(M)`` for a stack M (m, d, d) of one of numpy.linalg's stacked functions (eig, inv), in pieces along
    the stack of about :data:`PIECE_S` seconds each (sized from the last one's speed).

    numpy runs a stack in one call that returns only at its end: the
    eigendecompositions of a block of hot L = 7 rows take 10 s, in which
    Ctrl-C waits; between pieces Python handles the signal.  Each matrix is
    its own LAPACK call either way, so the numbers are the same.  eig's
    results are complex (numpy makes a real stack's real where every
    eigenvalue of the whole stack is: the caller applies that rule).
    """
    import time

    m = M.shape[0]
    if m <= 1:
        return fn(M)
    out, i, n = None, 0, 1
    while i < m:
        start = time.perf_counter()
        got = fn(M[i:i + n])
        seconds = time.perf_counter() - start
        got = got if isinstance(got, tuple) else (got,)
        if out is None:
            out = tuple(np.empty((m,) + g.shape[1:], dtype=np.result_type(g.dtype, complex) if fn is np.linalg.eig
                                 else g.dtype) for g in got)
        for o, g in zip(out, got):
            o[i:i + len(g)] = g
        i += n
        n = int(max(1, min(4 * n, n * PIECE_S / max(seconds, 1e-6))))
    return out if len(out) > 1 else out[0]


def expm_propagator(H: np.ndarray, t: float) -> np.ndarray:
    """exp(-i H t) by scipy's expm (blocks whose eigenvectors are too ill-conditioned)."""
    return sla.expm(-1j * t * H)


def propagator_stack(lam: np.ndarray, V: np.ndarray, Vinv: np.ndarray, bad: np.ndarray, H: np.ndarray,
                     t: float) -> np.ndarray:
    """exp(-i H_j t) of a stack of blocks (m, d, d): V diag(exp(-i lam t)) V^-1, expm where ``bad`` (decompose_stack)."""
    U = V @ (np.exp(-1j * lam * t)[:, :, None] * Vinv)
    for j in np.nonzero(bad)[0]:
        U[j] = expm_propagator(H[j], t)
    return U


def evolve_rows(x, VinvT, VT, phases, xp=np):
    """exp(-i H t) of row vectors in the eigen form: (x @ V^-T * phases) @ V^T, phases = exp(-i lam t).

    Shapes broadcast as matmul does: x (..., m, d) with VinvT, VT (..., d, d)
    and phases (..., m, d) or (..., 1, d); ``xp`` the array library.
    """
    return xp.matmul(xp.matmul(x, VinvT) * phases, VT)


def evolve_eigen(V: np.ndarray, lam: np.ndarray, z: np.ndarray, t: float) -> np.ndarray:
    """V (exp(-i lam t) * z) for a column vector z = V^-1 x already in the eigenbasis."""
    return V @ (np.exp(-1j * lam * t) * z)


def evolve_real_eigen(V: np.ndarray, lam: np.ndarray, x: np.ndarray, t: float) -> np.ndarray:
    """V exp(-i lam t) V^T x for a real orthogonal V (a real symmetric block's eigh): the real and imaginary parts
    through real matrix-vector products, a third of the complex form's time (half the bytes of V read, no complex
    arithmetic; 0.41 against 1.19 ms at d = 820, one core: docs/benchmarks.md)."""
    z = V.T @ x.real + 1j * (V.T @ x.imag)
    w = np.exp(-1j * lam * t) * z
    return V @ w.real + 1j * (V @ w.imag)


class BlockPropagator:
    """exp(-i H t) x for one dense block H and any t (eigen form, or expm cached per t).

    A real symmetric block (the ideal conditions' blocks: no decay, no dephasing) is diagonalized in real
    arithmetic (its eigh gives a real orthogonal V, ~4x faster than the complex eigh of the same matrix) and
    applied by :func:`evolve_real_eigen`; the same propagator to rounding.
    """

    def __init__(self, H: np.ndarray):
        self.H = H
        self._expm_cache: dict[float, np.ndarray] = {}
        hermitian = bool(np.array_equal(H, H.conj().T))
        self.real = hermitian and not (np.iscomplexobj(H) and H.imag.any())
        parts = decompose(H.real if self.real else H, hermitian=hermitian)
        self.use_eig = parts is not None
        if self.use_eig:
            self.lam, self.V, self.Vinv = parts

    def apply(self, x: np.ndarray, t: float) -> np.ndarray:
        if self.use_eig:
            if self.real:
                return evolve_real_eigen(self.V, self.lam, x, t)
            return evolve_eigen(self.V, self.lam, self.Vinv @ x, t)
        return self.expm(t) @ x

    def expm(self, t: float) -> np.ndarray:
        """exp(-i H t) as a matrix (cached for up to 64 values of t)."""
        U = self._expm_cache.get(t)
        if U is None:
            U = expm_propagator(self.H, t)
            if len(self._expm_cache) < 64:
                self._expm_cache[t] = U
        return U
