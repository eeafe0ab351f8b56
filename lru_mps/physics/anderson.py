"""Anderson localization of the qubit's band (docs/physics.md §10): the localization length of the 1D chain with
box disorder in its strong- and weak-disorder limits, and the Lyapunov exponent from the transfer matrix.

Units: energies and the disorder width W in units of J (or any unit, with ``J`` in the same one).  Lengths in
sites; the convention is the probability length xi (T1 ~ exp(L/xi)), twice the amplitude length.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["xi_strong", "gamma_weak_disorder", "gamma_band_centre", "gamma_strong_disorder", "lyapunov_exponent",
           "xi_transfer_matrix"]


def xi_strong(W, J=1.0):
    """Strong-disorder probability localization length xi = 1/(2 ln(W/J) - 3) (docs/physics.md §10).

    Convention: T1 ~ exp(L/xi) (probability length; the amplitude length is
    2 xi).  From F: 1/xi = <ln((dw_1 - dw_n)^2/J^2)> for dw uniform in
    [-W/2, W/2], i.e. the typical (log-averaged) T1.  Valid for W >> J (only
    meaningful where 2 ln(W/J) > 3, i.e. W > e^{3/2} J ~ 4.5 J).
    """
    W = np.asarray(W, dtype=float)
    J = np.asarray(J, dtype=float)
    return 1.0 / (2.0 * np.log(W / J) - 3.0) + 0.0


def gamma_weak_disorder(W, energy=0.0, J=1.0):
    """Weak-disorder (Thouless) amplitude Lyapunov exponent per site of the 1D Anderson chain.

    gamma = <eps^2> / (2 (4 J^2 - E^2)) = W^2 / (96 J^2 (1 - E^2/(4 J^2)))
    for box disorder of full width W (<eps^2> = W^2/12).  Valid for W << J
    inside the band, away from the band edges |E| = 2J and from the
    band-centre anomaly at E = 0 (see :func:`gamma_band_centre`).
    """
    W = np.asarray(W, dtype=float)
    E = np.asarray(energy, dtype=float)
    J = np.asarray(J, dtype=float)
    return W**2 / (24.0 * (4.0 * J**2 - E**2)) + 0.0


def gamma_band_centre(W, J=1.0):
    """Weak-disorder Lyapunov exponent at the band centre E = 0 (Kappus-Wegner anomaly).

    gamma(0) = <eps^2> Gamma(3/4)^2 / (Gamma(1/4)^2 J^2) = W^2 / (105.045 J^2)
    (Kappus & Wegner 1981; Derrida & Gardner 1984), i.e. amplitude length
    ~105 J^2/W^2 instead of the perturbative 96 J^2/W^2.  Valid for W << J.
    """
    c = (math.gamma(0.75) / math.gamma(0.25)) ** 2 / 12.0
    W = np.asarray(W, dtype=float)
    J = np.asarray(J, dtype=float)
    return c * W**2 / J**2 + 0.0


def gamma_strong_disorder(W, energy=0.0, J=1.0):
    """Leading strong-disorder Lyapunov exponent gamma = <ln(|E - eps| / J)>, eps ~ U[-W/2, W/2].

    For |E| <= W/2: (1/W)[a ln a + b ln b] - 1 - ln J with a = W/2 - E,
    b = W/2 + E; at E = 0 this is ln(W/(2J)) - 1.  Averaged over E uniform in
    the box it gives ln(W/J) - 3/2, i.e. 2 gamma = 1/xi_strong.  Corrections are
    O((J/W)^2) up to logarithms.
    """
    W = np.asarray(W, dtype=float)
    E = np.abs(np.asarray(energy, dtype=float))
    J = np.asarray(J, dtype=float)
    a = W / 2.0 - E
    b = W / 2.0 + E

    def xlog_absx(x):  # x ln|x|, -> 0 at x = 0
        ax = np.abs(x)
        return np.where(ax > 0, x * np.log(np.where(ax > 0, ax, 1.0)), 0.0)

    # (1/W) int_{-W/2}^{W/2} ln|E - eps| d eps = (a ln|a| + b ln|b|)/W - 1, also for |E| > W/2 (a < 0)
    inside = (xlog_absx(a) + xlog_absx(b)) / W - 1.0
    return inside - np.log(J) + 0.0


def _ratio_recursion_kernel(x, R, buf, tiny):  # pragma: no cover - compiled
    """R <- x[i] - 1/R (R = 0 replaced by ``tiny``) for the rows i of x, each new R written to buf[i]: the
    renormalised transfer-matrix product of :func:`lyapunov_exponent`, chain by chain (IEEE arithmetic as numpy's)."""
    for i in range(x.shape[0]):
        for c in range(x.shape[1]):
            r = R[c]
            if r == 0.0:
                r = tiny
            r = x[i, c] - 1.0 / r
            R[c] = r
            buf[i, c] = r


_ratio_recursion = njit(cache=True, nogil=True)(_ratio_recursion_kernel)


def lyapunov_exponent(
    W,
    energy=0.0,
    J=1.0,
    n_sites: int = 20000,
    realizations: int = 64,
    rng=None,
    n_discard: int = 200,
) -> tuple[float, float]:
    """Amplitude Lyapunov exponent gamma of the 1D Anderson chain, with its standard error.

    Chain: E psi_n = eps_n psi_n + J (psi_{n+1} + psi_{n-1}), eps_n uniform in
    [-W/2, W/2], E = ``energy`` measured from the band centre.  The transfer
    matrix T_n = [[(E - eps_n)/J, -1], [1, 0]] maps (psi_n, psi_{n-1}) to
    (psi_{n+1}, psi_n); the product over the chain grows like exp(gamma n).
    The product is renormalised at every step: we iterate the ratio
    R_n = psi_{n+1}/psi_n = (E - eps_n)/J - 1/R_{n-1} (a projective, i.e.
    renormalised, form of the product applied to one vector) and average
    ln|R_n| over n_sites sites after ``n_discard`` sites of burn-in, for
    ``realizations`` independent chains at once (vectorised).  The error is
    the standard error over realizations.

    Convention: |psi_n| ~ exp(-gamma n) for the localized state, so the
    amplitude localization length is 1/gamma and the probability length
    (docs/physics.md §10, T1 ~ exp(L/xi)) is xi = 1/(2 gamma).
    """
    if rng is None:
        rng = np.random.default_rng()
    elif not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    W = float(W)
    E = float(energy)
    J = float(J)
    n_sites = int(n_sites)
    realizations = int(realizations)
    if n_sites < 1 or realizations < 1:
        raise ValueError("n_sites and realizations must be >= 1")
    tiny = 1e-300
    R = np.full(realizations, 1.0)
    # burn-in: forget the initial vector
    for _ in range(int(n_discard)):
        eps = rng.uniform(-W / 2.0, W / 2.0, size=realizations)
        R = np.where(R == 0.0, tiny, R)
        R = (E - eps) / J - 1.0 / R
    total = np.zeros(realizations)
    chunk = 512
    done = 0
    buf = np.empty((chunk, realizations))
    while done < n_sites:
        m = min(chunk, n_sites - done)
        eps = rng.uniform(-W / 2.0, W / 2.0, size=(m, realizations))
        x = (E - eps) / J
        _ratio_recursion(x, R, buf, tiny)  # R_{n} = x_n - 1/R_{n-1} row by row, in place
        total += np.sum(np.log(np.abs(buf[:m]) + tiny), axis=0)
        done += m
    per_chain = total / n_sites
    gamma = float(per_chain.mean())
    err = float(per_chain.std(ddof=1) / math.sqrt(realizations)) if realizations > 1 else math.nan
    return gamma, err


def xi_transfer_matrix(
    W,
    energy=0.0,
    J=1.0,
    n_sites: int = 20000,
    realizations: int = 64,
    rng=None,
    n_discard: int = 200,
    return_error: bool = False,
):
    """Probability localization length xi = 1/(2 gamma) from :func:`lyapunov_exponent`.

    Convention as in docs/physics.md §10: T1 ~ exp(L/xi); the amplitude length is
    2 xi = 1/gamma.  Weak disorder: 2 xi ~ 96 J^2 (1 - E^2/4J^2)/W^2, and
    ~105 J^2/W^2 at the band centre (anomaly); strong disorder at energies
    spread over the box: 1/xi -> 2 ln(W/J) - 3 (:func:`xi_strong`).  With
    ``return_error`` returns (xi, xi_err) from the standard error of gamma.
    """
    gamma, err = lyapunov_exponent(W, energy, J, n_sites, realizations, rng, n_discard)
    xi = 1.0 / (2.0 * gamma) if gamma > 0 else math.inf
    if return_error:
        xi_err = err / (2.0 * gamma**2) if gamma > 0 else math.inf
        return xi, xi_err
    return xi
