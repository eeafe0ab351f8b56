"""The doubling fit of the tolerance study (docs/physics.md §8, "Tolerance"): T(S) = T0 (1 + (S/S_2)^2), the
points it takes, and the model-free crossing of 2 T(0).  Spreads in any one unit (the results are in it)."""

from __future__ import annotations

import math

import numpy as np


def doubling_fit(spreads, values, errors, s_max: float | None = None) -> dict:
    """Fit values(S) = T0 (1 + a S^2) (weighted, absolute sigma); S_2 = a^(-1/2), the spread at which it doubles.

    ``spreads`` in any unit (the result is in the same unit); nan values are
    left out.  Returns {"T0", "T0_error", "a", "a_error", "value", "error",
    "chi2_red", "dof", "bound", "points", "error_reason"}: ``value`` = S_2 with
    its error when a > 0 and S_2 <= ``s_max`` (default: the largest spread
    fitted; through exactly 2 points, no degree of freedom: ``error`` = None
    and ``error_reason`` says so), else
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
           "dof": int(max(s.size - 2, 0)), "bound": None, "points": int(s.size), "error_reason": None}
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
            if out["dof"] == 0:  # the form through exactly two points: nothing tests it, no error stands for it
                out.update(value=S2, error=None, error_reason=NO_DOF.format(n=out["points"]))
            else:
                out.update(value=S2, error=0.5 * S2 * float(perr[1]) / a)  # dS2 = S2 da / (2a)
            return out
    out.update(value=s_max, error=None, bound="lower", error_reason="a lower bound: not doubled within the range")
    return out


#: the reason a doubling fit through as many points as parameters has no error
NO_DOF = "no error: {n} points, no degree of freedom"

#: chi2 of the fit above this p-value's quantile: the form does not hold over the fitted spreads
FORM_P_VALUE = 0.01


def which_holds(fit: dict, crossing: dict) -> dict:
    """Which of the two doubling estimates to read: {"estimate": "fit" | "crossing" | "bound" | None, "reason"}.

    The fit T0 (1 + (S/S_2)^2) is a model of the onset; it holds where it has a degree of freedom and its chi2 is
    not beyond the FORM_P_VALUE quantile.  The crossing (where the values first reach twice the first one, by
    linear interpolation) assumes no form and holds otherwise: with no degree of freedom nothing tests the form,
    and with chi2 too large the form fails.  'bound': neither doubles within the range.
    """
    from scipy.stats import chi2 as chi2_dist

    c_ok = crossing is not None and crossing.get("value") is not None and crossing.get("bound") is None
    if fit.get("value") is None and not c_ok:
        return {"estimate": None, "reason": "no fit and no crossing"}
    if fit.get("bound") == "lower" and (crossing is None or crossing.get("bound") == "lower"):
        return {"estimate": "bound", "reason": "the values do not double within the range: only a lower bound"}
    dof, chi2_red = fit.get("dof", 0), fit.get("chi2_red")
    if fit.get("value") is not None and fit.get("bound") is None and dof > 0 and chi2_red is not None:
        p = float(chi2_dist.sf(chi2_red * dof, dof))
        if p >= FORM_P_VALUE:
            return {"estimate": "fit", "reason": f"the quadratic onset holds over the fitted spreads (chi2_red = "
                                                 f"{chi2_red:.2g}, {dof} degrees of freedom, p = {p:.2g})"}
        reason = f"the quadratic onset does not hold (chi2_red = {chi2_red:.2g}, p = {p:.2g} < {FORM_P_VALUE:g})"
    elif fit.get("value") is not None and fit.get("bound") is None and dof == 0:
        reason = (f"the fit goes through {fit['points']} points with no degree of freedom: the form is not tested "
                  "and the fit's value has no error")
    else:
        reason = "the fit does not resolve the doubling"
    if c_ok:
        return {"estimate": "crossing", "reason": reason + "; the model-free crossing holds"}
    return {"estimate": "bound" if crossing is not None and crossing.get("bound") == "lower" else None,
            "reason": reason + "; the crossing is not resolved either"}


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
