"""The exact N = 1 rates of the coding qubit: eigenvalue problems of the reset's generator on the one-excitation sector.

H1 = diag(dw) + the couplings (units of J) on the chain's bonds or a graph's edges, the reset site(s) the last:
dissipation (H1 - (i G/2) Pi), periodic feedback (the one-period map P0 exp(-i H1/G)) and random feedback (the
L^2 x L^2 Liouvillian -i[H1, .] + G (P0 . P0 - .); the coherence's H1 - i G Pi).  The physics, the choice of the
qubit mode and the round-off floor: :mod:`lru_mps.analysis.rates`, which checks and reports these numbers.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import ArpackNoConvergence, eigs

#: the random-feedback Liouvillian (L^2 x L^2) is diagonalized densely up to this L, by sparse shift-invert above
DENSE_LIOUVILLIAN_MAX_L = 12


def _pick(vecs: np.ndarray, ref: np.ndarray) -> int:
    """Column of ``vecs`` with the largest normalized overlap with ``ref``."""
    ov = np.abs(ref.conj() @ vecs) / np.linalg.norm(vecs, axis=0)
    return int(np.argmax(ov))


def _liouvillian(H: np.ndarray, G: float, sparse: bool, resets: tuple = (-1,)):
    """-i[H, .] + G (P0 . P0 - .) on column-stacked vec(rho) (rho[i, j] at i + L j); P0 = 1 on every site but
    the reset sites ``resets``."""
    L = H.shape[0]
    p0 = np.ones(L)
    p0[list(resets)] = 0.0
    if sparse:
        Hs = sp.csr_matrix(H)
        I = sp.identity(L, format="csr")
        P = sp.diags(np.kron(p0, p0))
        return (-1j * (sp.kron(I, Hs) - sp.kron(Hs.T, I)) + G * (P - sp.identity(L * L))).tocsc()
    I = np.eye(L)
    return -1j * (np.kron(I, H) - np.kron(H.T, I)) + G * (np.diag(np.kron(p0, p0)) - np.eye(L * L))


def _random_gamma1(H: np.ndarray, G: float, qv: np.ndarray, guess: float, dense: bool | None = None,
                   resets: tuple = (-1,)) -> float:
    """-Re of the qubit eigenvalue of the random-feedback Liouvillian (dense or sparse shift-invert)."""
    L = H.shape[0]
    ref = np.kron(qv, qv)  # vec(|q><q|)
    if dense is None:
        dense = L <= DENSE_LIOUVILLIAN_MAX_L
    if dense:
        lam, vec = np.linalg.eig(_liouvillian(H, G, sparse=False, resets=resets))
        return float(-lam[_pick(vec, ref)].real)
    Lop = _liouvillian(H, G, sparse=True, resets=resets)
    k = min(8, L * L - 2)
    # shift just off the estimate, so that the shifted operator is never exactly singular
    sigma = -abs(guess) * (1.0 + 1e-3)
    try:
        lam, vec = eigs(Lop, k=k, sigma=sigma, which="LM", v0=ref.astype(complex))
    except (ArpackNoConvergence, RuntimeError):
        if L > 3 * DENSE_LIOUVILLIAN_MAX_L:
            raise
        return _random_gamma1(H, G, qv, guess, dense=True, resets=resets)
    return float(-lam[_pick(vec, ref)].real)


def graph_spectrum(H: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`~lru_mps.analysis.edge.spectrum` of a dense H1 (a coupling graph's): eigenvalues, eigenvectors and the
    qubit mode's index (the largest weight on site 1, index 0; its site-1 sign positive)."""
    E, V = np.linalg.eigh(H)
    q = int(np.argmax(V[0] ** 2))
    if V[0, q] < 0:
        V[:, q] = -V[:, q]
    return E, V, q


def eigen_rates(spec, dw, J, E, V, q, guess, dense_liouvillian=None, H=None) -> tuple[float, float]:
    """(Gamma_1, Gamma_2) of the qubit mode q (units of J) from H1's spectrum (E, V) for the spec's reset kind and
    rate (:mod:`lru_mps.analysis.rates`' module docstring); ``guess``: the log-space Gamma_1 (the shift of the
    sparse eigensolver); ``H``: a graph's dense H1 (None: the chain's, from dw and J).  The reset acts on the
    spec's reset sites (the chain's: the last; a graph's: its last ``resets`` indices)."""
    kind, G = spec.reset.kind, float(spec.reset.rate)
    L = dw.size
    resets = list(spec.reset_sites)
    if H is None:
        H = np.diag(dw) + np.diag(J, 1) + np.diag(J, -1)
    qv = V[:, q]
    if kind == "dissipation":
        Heff = H.astype(complex)
        Heff[resets, resets] -= 0.5j * G
        lam, vec = np.linalg.eig(Heff)
        g1 = -2.0 * float(lam[_pick(vec, qv)].imag)
        return g1, 0.5 * g1
    if kind == "periodic":
        U = (V * np.exp(-1j * E / G)) @ V.T
        U[resets, :] = 0.0  # P0 U
        mu, vec = np.linalg.eig(U)
        # P0 U has rank L - R (R reset sites): its zero eigenvalues belong to U^dag|r>, the states that sit on a
        # reset site at the measurement, not to a mode of the qubit; they must not be picked even when the qubit
        # mode is hybridized with a reset site (dw_1 ~ dw_r), where their overlap can be the largest
        modes = np.delete(np.arange(L), np.argsort(np.abs(mu))[:len(resets)])
        m = abs(mu[modes[_pick(vec[:, modes], qv)]])
        g1 = -2.0 * G * math.log(m) if m > 0 else math.inf
        return g1, 0.5 * g1
    # random feedback
    g1 = _random_gamma1(H, G, qv, guess, dense_liouvillian, tuple(resets))
    Hc = H.astype(complex)
    Hc[resets, resets] -= 1j * G
    lam, vec = np.linalg.eig(Hc)
    g2 = -float(lam[_pick(vec, qv)].imag)
    return g1, g2
