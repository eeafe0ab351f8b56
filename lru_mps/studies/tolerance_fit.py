"""The doubling fit of the tolerance study (docs/physics.md §8, "Tolerance"): T(S) = T0 (1 + (S/S_2)^2), the
points it takes, and the model-free crossing of 2 T(0).  Spreads in any one unit (the results are in it)."""

from __future__ import annotations

import math

import numpy as np


def doubling_fit(spreads, values, errors, s_max: float | None = None) -> dict:
    """Fit values(S) = T0 (1 + a S^2) (weighted, absolute sigma); S_2 = a^(-1/2), the spread at which it doubles.

    ``spreads`` in any unit (the result is in the same unit); nan values are
    left out.  Returns {"T0", "T0_error", "a", "a_error", "value", "error",
    "chi2_red", "dof", "bound", "points"}: ``value`` = S_2 with its error when
    a > 0 and S_2 <= ``s_max`` (default: the largest spread fitted), else
    ``value`` = the largest spread, ``error`` = None and ``bound`` = "lower"
    (the values do not double within the range).  None entries where the fit
    is impossible (fewer than 2 points).
    """
    from scipy.optimize import curve_fit

    s = np.asarray(spreads, dtype=float)
    y = np.asarray(values, dtype=float)
    e = np.asarray(errors, dtype=float)
    ok = np.isfinite(s) & np.isfinite(y) & np.isfinite(e) & (e > 0)
    s, y, e = s[ok], y[ok], e[ok]
    top = float(np.max(s)) if s.size else math.nan
    s_max = top if s_max is None else float(s_max)
    out = {"T0": None, "T0_error": None, "a": None, "a_error": None, "value": None, "error": None, "chi2_red": None,
           "dof": int(max(s.size - 2, 0)), "bound": None, "points": int(s.size)}
    if s.size < 2 or not np.any(s > 0):
        return out

    def model(x, T0, a):
        return T0 * (1.0 + a * x * x)

    i0 = int(np.argmin(s))
    T0_guess = float(y[i0])
    a_guess = max(float(np.max((y / T0_guess - 1.0) / np.where(s > 0, s * s, np.inf))), 1e-6 / top**2)
    try:
        p, cov = curve_fit(model, s, y, p0=(T0_guess, a_guess), sigma=e, absolute_sigma=True, maxfev=20000)
    except (RuntimeError, ValueError):
        return out
    perr = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    T0, a = float(p[0]), float(p[1])
    chi2 = float(np.sum(((y - model(s, *p)) / e) ** 2))
    out.update(T0=T0, T0_error=float(perr[0]), a=a, a_error=float(perr[1]),
               chi2_red=chi2 / out["dof"] if out["dof"] > 0 else None)
    if a > 0 and math.isfinite(perr[1]):
        S2 = a ** -0.5
        if S2 <= s_max:
            out.update(value=S2, error=0.5 * S2 * float(perr[1]) / a)  # dS2 = S2 da / (2a)
            return out
    out.update(value=s_max, error=None, bound="lower")
    return out


def fit_points(values, ratio: float) -> int:
    """How many spreads (from the smallest) the doubling fit takes: up to and including the first whose value
    reaches ``ratio`` x the first resolved value (all of them if none does).

    Past a few times T_star(0) the growth bends over (under hardware decay
    T_star cannot exceed T1q/2), and the quadratic form describes the onset,
    not the saturation.
    """
    y = np.asarray(values, dtype=float)
    ok = np.flatnonzero(np.isfinite(y))
    if ok.size == 0 or not math.isfinite(ratio):
        return len(y)
    y0 = y[ok[0]]
    for i in ok[1:]:
        if y[i] >= ratio * y0:
            return int(i) + 1
    return len(y)


def doubling_crossing(spreads, values, errors) -> dict:
    """Model-free: where values(S) first reaches 2 values(0), by linear interpolation between the two spreads
    that bracket it; the error propagates the errors of values(0) and of the two bracketing points (as
    independent).  {"value", "error", "bound"}: ``bound`` = "lower" and ``value`` = the largest spread where
    no point reaches the double; None entries without a resolved value at S = 0.
    """
    s = np.asarray(spreads, dtype=float)
    y = np.asarray(values, dtype=float)
    e = np.asarray(errors, dtype=float)
    out = {"value": None, "error": None, "bound": None}
    if s.size < 2 or s[0] != 0 or not np.isfinite(y[0]):
        return out
    target = 2.0 * y[0]
    prev = 0
    for k in range(1, s.size):
        if not np.isfinite(y[k]):
            continue
        if y[k] >= target:
            a, D, ds = prev, y[k] - y[prev], s[k] - s[prev]
            u = (target - y[a]) / D
            grad = np.zeros(s.size)  # du/dy_i
            grad[0] += 2.0 / D
            grad[a] += (u - 1.0) / D
            grad[k] += -u / D
            err = float(ds * np.sqrt(np.nansum((grad * np.nan_to_num(e)) ** 2)))
            out.update(value=float(s[a] + u * ds), error=err)
            return out
        prev = k
    out.update(value=float(s[-1]), bound="lower")
    return out
