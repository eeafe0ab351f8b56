"""The coding qubit's mode of the single-excitation Hamiltonian H1, its weight on the reset site, the reset factor.

H1 = sum_l dw_l |l><l| + sum_l J_l (|l><l+1| + h.c.) (units of J), the N = 1
sector of the array; ``J`` is one hopping for every bond or the per-bond J_l
(length L - 1, a hopping spread).  The qubit mode is its eigenvector with the largest
weight on site 1; its weight |psi_L|^2 on the reset site falls like
exp(-L/xi) and is computed in log space (:func:`log_edge_weight`), so that
rates far below double precision stay finite.  ``reset_factor`` is the factor
c of Gamma_1 = c G |psi_L|^2 (docs/physics.md §10.6).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import eigh_tridiagonal

from ..errors import ParameterError, require

#: small-G limits of c in Gamma_1 = c G |psi_L|^2 (periodic: mean over realizations; per realization c in [0, 4])
C_SMALL_G = {"dissipation": 1.0, "random": 2.0, "periodic": 2.0}


# ------------------------------------------------------------------ validation
def check_detunings(dw, name: str = "dw") -> np.ndarray:
    """dw as a 1-D float array of at least 2 finite detunings (units of J), or a ParameterError."""
    try:
        arr = np.asarray(dw, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(name, dw, "a 1-D array of finite detunings (units of J)") from None
    require(arr.ndim == 1 and arr.size >= 2, name, dw, "a 1-D array of at least 2 detunings (units of J)")
    require(bool(np.all(np.isfinite(arr))), name, dw, "finite detunings (units of J)")
    return arr


def check_hopping(J, bonds: int | None = None):
    """J as a finite float > 0, or (per bond, with ``bonds``) a float array of that many J_l > 0; else a ParameterError."""
    if bonds is not None and np.ndim(J) == 1:
        try:
            arr = np.asarray(J, dtype=float)
        except (TypeError, ValueError):
            raise ParameterError("J", J, "finite hoppings J_l > 0, one per bond") from None
        require(arr.size == bonds and bool(np.all(np.isfinite(arr) & (arr > 0))), "J", J,
                f"{bonds} finite hoppings J_l > 0, one per bond (units of J)")
        return arr
    try:
        Jf = float(J)
    except (TypeError, ValueError):
        raise ParameterError("J", J, "a finite hopping J > 0") from None
    require(math.isfinite(Jf) and Jf > 0, "J", J, "a finite hopping J > 0 (units of J: 1)")
    return Jf


def spectrum(dw: np.ndarray, J):
    """Eigenvalues, eigenvectors and the index of the qubit mode of H1 (site-1 sign positive); J scalar or per bond."""
    E, V = eigh_tridiagonal(dw, np.broadcast_to(np.asarray(J, dtype=float), (dw.size - 1,)))
    q = int(np.argmax(V[0] ** 2))
    if V[0, q] < 0:
        V[:, q] = -V[:, q]
    return E, V, q


# ---------------------------------------------------------------- the qubit mode
def qubit_mode(dw, J=1.0) -> tuple[float, np.ndarray]:
    """The coding qubit's single-excitation mode of H1: (E_q, psi).

    H1 = diag(dw) + J (nearest-neighbour hopping), open chain, site 1 first;
    ``dw`` and ``J`` (one value, or J_l per bond) in the same unit (the project: units of J).  Returns the
    eigenvalue E_q (same unit) and the normalized real eigenvector psi (shape
    (L,), psi[0] > 0) with the largest weight |psi_1|^2 on site 1, from
    scipy's ``eigh_tridiagonal``.  Its weight |psi_L|^2 on the reset site is
    resolvable only down to ~1e-30 relative to 1 (absolute round-off ~eps per
    component); use :func:`log_edge_weight` beyond.
    """
    arr = check_detunings(dw)
    Jf = check_hopping(J, arr.size - 1)
    E, V, q = spectrum(arr, Jf)
    return float(E[q]), V[:, q].copy()


def log_edge_weight(dw, E, J=1.0) -> float:
    """ln |psi_L|^2 of the normalized eigenvector of H1 at energy E, in log space.

    Backward recursion from the reset site: psi_L = 1, psi_{L+1} = 0,
    psi_{n-1} = ((E - dw_n) psi_n - J_n psi_{n+1}) / J_{n-1} for n = L..2 (J_n of bond
    (n, n+1); J_L unused), with the
    pair (psi_n, psi_{n+1}) renormalised at every step and the logs of the
    scale factors accumulated; then ln|psi_L|^2 = -ln sum_n |psi_n|^2 (a
    log-sum-exp).  The solution that satisfies the boundary condition at
    site L grows toward the qubit at site 1, so the recursion is stable in
    this direction and the result stays accurate far below 1e-300 (relative
    error ~ eps ||H1|| / (level spacing) from the error of E, not from the
    size of the weight).  ``E`` should be an eigenvalue of H1 (e.g. E_q from
    :func:`qubit_mode`); the site-1 boundary condition is not imposed.
    Units: dw, E and J (one value or J_l per bond) in the same unit.
    """
    arr = check_detunings(dw)
    Jb = np.broadcast_to(check_hopping(J, arr.size - 1), (arr.size - 1,))
    try:
        Ef = float(E)
    except (TypeError, ValueError):
        raise ParameterError("energy", E, "a finite energy E (units of J)") from None
    require(math.isfinite(Ef), "energy", E, "a finite energy E (units of J)")
    L = arr.size
    logs = np.empty(L)
    logs[L - 1] = 0.0
    a, b = 1.0, 0.0  # psi_n, psi_{n+1} (scaled)
    log_scale = 0.0
    for n in range(L - 1, 0, -1):
        c = ((Ef - arr[n]) * a - (Jb[n] * b if n < L - 1 else 0.0 * b)) / Jb[n - 1]
        a, b = c, a
        m = max(abs(a), abs(b))
        a /= m
        b /= m
        log_scale += math.log(m)
        logs[n - 1] = (math.log(abs(a)) if a != 0.0 else -math.inf) + log_scale
    two = 2.0 * logs
    top = float(np.max(two))
    log_norm = top + math.log(float(np.sum(np.exp(two - top))))
    return -log_norm


# -------------------------------------------------------------- the reset factor
def factor_and_error(E, V, q, kind: str, G: float, J) -> tuple[float, float]:
    """c and the perturbative error factor X from the modes k != q (lru_mps.analysis.rates, docs/physics.md §10.6).

    ``J``: the hopping (per bond: their largest enters X)."""
    J = float(np.max(J))
    mask = np.arange(E.size) != q
    d = E[mask] - E[q]
    w = V[-1, mask] ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "periodic":
            s = np.sin(d / (2.0 * G))
            K = float(np.sum(w * np.cos(d / (2.0 * G)) / s))
            c = 4.0 / (1.0 + K * K) if math.isfinite(K) else 0.0
            X = 1.0 + float(np.sum(w / s**2))
        else:
            S = float(np.sum(w / d))
            x = G * S if kind == "random" else 0.5 * G * S
            c = (2.0 if kind == "random" else 1.0) / (1.0 + x * x) if math.isfinite(x) else 0.0
            X = 1.0 + float(np.sum(w * (J + G) ** 2 / d**2))
    if not math.isfinite(X):
        X = math.inf
    return c, X


def reset_factor(dw, kind: str, G: float, J=1.0) -> float:
    """The per-realization c in Gamma_1 = c G |psi_L|^2 (module docstring), dimensionless.

    ``kind`` is dissipation, random or periodic, ``G`` the reset rate (same
    unit as dw and J).  dissipation: 1/(1 + (G S/2)^2); random:
    2/(1 + (G S)^2); periodic: 4/(1 + K^2), with S = sum_k w_k/(E_k - E_q) and
    K = sum_k w_k cot((E_k - E_q)/2G) over the modes k != q of H1 (w_k their
    weight on the reset site).  ``J``: one hopping or J_l per bond.
    """
    arr = check_detunings(dw)
    Jf = check_hopping(J, arr.size - 1)
    require(kind in C_SMALL_G, "reset", kind, "dissipation, random or periodic")
    require(isinstance(G, (int, float, np.floating, np.integer)) and math.isfinite(G) and G > 0, "rate", G, "a finite rate G > 0")
    E, V, q = spectrum(arr, Jf)
    return factor_and_error(E, V, q, kind, float(G), Jf)[0]
