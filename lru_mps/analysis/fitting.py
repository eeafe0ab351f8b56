"""Exponential decay fits y = A exp(-t/tau) with A free (docs/physics.md §8), or y = A exp(-t/tau) + c with the
equilibrium c free too (``offset=True``: a thermal bath's curves decay to their equilibrium, §5.1).

Times are in whatever unit the caller uses (1/J in this project); tau and its
error come out in the same unit.  The fit is done internally in terms of the
*rate* k = 1/tau, on a rescaled time axis s = (t - t_ref)/span and with y
scaled to O(1), so that a curve that barely decays inside the window (tau much
longer than the window) gives a small, well-determined rate and hence a large
tau with a sensible error, and a rate consistent with zero is reported as
``ok=False`` ('no decay resolved') instead of a meaningless tau.

Data problems never raise: the result has ``ok=False``, ``tau=nan`` and a
``message`` saying what was wrong.  When the fit ran but resolved no decay,
``rate``/``rate_err`` and the lower bound ``tau_lower`` are still filled.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.optimize import OptimizeWarning, curve_fit

__all__ = ["FitResult", "fit_exponential"]

#: a rate is "resolved" when it exceeds this many standard errors
RESOLVE_SIGMAS = 2.0


@dataclass
class FitResult:
    """Result of :func:`fit_exponential`.

    ``tau``/``tau_err``: decay time and its one-sigma error; ``amplitude``/
    ``amplitude_err``: A at t = 0 (the model is A exp(-t/tau)); ``t_start``/
    ``t_end``: first and last time of the points actually used; ``n_points``:
    their number; ``ok``: True when the fit converged and resolved a decay
    (rate > 2 standard errors); ``message``: what happened.  Extra fields:
    ``rate``/``rate_err`` = 1/tau and its error (always filled when the fit
    ran, also when the decay is not resolved), ``tau_lower`` (a 2-sigma lower
    bound 1/(rate + 2 rate_err)), ``chi2_red`` (reduced chi^2; 1 by construction
    for unweighted fits) and ``weighted`` (whether sem weights were used).
    """

    tau: float
    tau_err: float
    amplitude: float
    amplitude_err: float
    t_start: float
    t_end: float
    n_points: int
    ok: bool
    message: str
    rate: float = math.nan
    rate_err: float = math.nan
    tau_lower: float = math.nan
    chi2_red: float = math.nan
    weighted: bool = False
    #: the fitted equilibrium c of y = A exp(-t/tau) + c and its error (0, 0 for the fit to zero)
    offset: float = 0.0
    offset_err: float = 0.0


def _fail(message: str, t_start=math.nan, t_end=math.nan, n=0, **extra) -> FitResult:
    return FitResult(
        tau=math.nan,
        tau_err=math.nan,
        amplitude=extra.pop("amplitude", math.nan),
        amplitude_err=extra.pop("amplitude_err", math.nan),
        t_start=float(t_start),
        t_end=float(t_end),
        n_points=int(n),
        ok=False,
        message=message,
        **extra,
    )


def fit_exponential(t, y, sem=None, t_start: float = 0.0, t_end: float | None = None,
                    offset: bool = False) -> FitResult:
    """Least-squares fit of y = A exp(-t/tau), A free, over t_start <= t <= t_end.

    ``offset``: fit y = A exp(-t/tau) + c instead, the equilibrium c free as well (at least 4 points; its
    start value is the last point's y, A and tau start from the log-linear fit of y - c).

    ``sem``: standard errors of y (array or scalar).  Where given and
    positive the fit is weighted by them with ``absolute_sigma=True`` (the
    errors then follow from the sem alone); points with sem == 0 get the
    smallest positive sem in the window; if every sem is zero (or sem is None)
    the fit is unweighted and the errors come from the residual scatter
    (``absolute_sigma=False``).  Non-finite points are dropped.  Start values
    come from a log-linear fit of the positive points.  ``t_end=None`` means
    up to the last point.

    Never raises for data problems: fewer than 3 points, no positive values,
    a failed fit or a rate consistent with zero give ``ok=False`` and a message.
    """
    window = _window(t, y, sem, t_start, t_end)
    if isinstance(window, FitResult):
        return window
    tw, yw, sw, weighted = window
    n, w_start, w_end = len(tw), float(tw[0]), float(tw[-1])
    span = w_end - w_start

    # ---- scaled problem: s = (t - t_ref)/span, z = y/scale, model z = B exp(-kappa s)
    t_ref = w_start
    s = (tw - t_ref) / span
    scale = float(np.max(np.abs(yw)))
    z = yw / scale
    sz = sw / scale if sw is not None else None
    if offset and n < 4:
        return _fail(f"fewer than 4 points in the window ({n}) for a fit with an equilibrium", w_start, w_end, n)
    c0 = float(z[-1]) if offset else 0.0
    B0, kappa0 = _start_values(s, z - c0, sz)
    model, jac, p0 = (_model_offset, _jacobian_offset, [B0, kappa0, c0]) if offset else (_model, _jacobian,
                                                                                        [B0, kappa0])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OptimizeWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            popt, pcov = curve_fit(model, s, z, p0=p0, sigma=sz, absolute_sigma=weighted, jac=jac, maxfev=10000)
    except (RuntimeError, ValueError, np.linalg.LinAlgError) as exc:
        return _fail(f"fit failed: {exc}", w_start, w_end, n, weighted=weighted)

    B, kappa = (float(v) for v in popt[:2])
    if not (np.all(np.isfinite(popt)) and np.all(np.isfinite(pcov))):
        return _fail("fit did not determine the parameters (infinite covariance)", w_start, w_end, n, weighted=weighted)

    resid = (z - model(s, *popt)) / (sz if sz is not None else 1.0)
    dof = n - len(popt)
    chi2_red = float(np.sum(resid**2) / dof) if weighted else 1.0
    fit = _physical(B, kappa, pcov[:2, :2], span, t_ref, scale, w_start, w_end, n, chi2_red, weighted)
    if offset:
        fit.offset, fit.offset_err = scale * float(popt[2]), scale * math.sqrt(max(float(pcov[2, 2]), 0.0))
    return fit


def _window(t, y, sem, t_start, t_end):
    """The fit's points: (t, y, sem or None, weighted) in the window, sorted by t; a failed FitResult if unusable."""
    try:
        t = np.asarray(t, dtype=float).ravel()
        y = np.asarray(y, dtype=float).ravel()
    except (TypeError, ValueError) as exc:
        return _fail(f"t and y must be numeric arrays ({exc})")
    if t.shape != y.shape:
        return _fail(f"t and y have different lengths ({t.size} and {y.size})")
    if sem is not None:
        try:
            sem = np.asarray(sem, dtype=float)
            sem = np.broadcast_to(sem, y.shape).astype(float) if sem.ndim == 0 else sem.ravel()
        except (TypeError, ValueError) as exc:
            return _fail(f"sem must be numeric ({exc})")
        if sem.shape != y.shape:
            return _fail(f"sem has length {sem.size}, y has {y.size}")

    try:
        lo = float(t_start) if t_start is not None else -math.inf
        hi = float(t_end) if t_end is not None else math.inf
    except (TypeError, ValueError):
        return _fail(f"bad window t_start={t_start!r}, t_end={t_end!r}")
    if math.isnan(lo) or math.isnan(hi):
        return _fail(f"bad window t_start={t_start!r}, t_end={t_end!r}")
    good = np.isfinite(t) & np.isfinite(y)
    if sem is not None:
        good &= np.isfinite(sem)
    mask = good & (t >= lo) & (t <= hi)
    n = int(mask.sum())
    if n == 0:
        return _fail(f"no finite points in the window [{lo:g}, {hi:g}]", lo, hi, 0)
    tw, yw = t[mask], y[mask]
    order = np.argsort(tw, kind="stable")
    tw, yw = tw[order], yw[order]
    w_start, w_end = float(tw[0]), float(tw[-1])
    if n < 3:
        return _fail(f"fewer than 3 points in the window ({n})", w_start, w_end, n)

    weighted = False
    sw = None
    if sem is not None:
        sw = sem[mask][order]
        if np.any(sw < 0):
            return _fail("negative standard errors (sem) in the window", w_start, w_end, n)
        positive = sw > 0
        if np.any(positive):
            weighted = True
            sw = np.where(positive, sw, sw[positive].min())
        else:
            sw = None
    if not np.any(yw > 0):
        return _fail("no positive values in the window", w_start, w_end, n, weighted=weighted)
    span = w_end - w_start
    if not span > 0:
        return _fail("all points in the window are at the same time", w_start, w_end, n, weighted=weighted)
    return tw, yw, sw, weighted


def _start_values(s, z, sz) -> tuple[float, float]:
    """(B0, kappa0): a weighted log-linear fit of the positive points of the scaled problem."""
    pos = z > 0
    if pos.sum() >= 2 and np.ptp(s[pos]) > 0:
        lw = z[pos] / sz[pos] if sz is not None else np.ones(int(pos.sum()))  # 1/sigma of ln z
        lw = np.where(np.isfinite(lw) & (lw > 0), lw, 1.0)
        slope, icpt = np.polyfit(s[pos], np.log(z[pos]), 1, w=lw)
        kappa0, B0 = -float(slope), float(np.exp(icpt))
    else:
        kappa0, B0 = 0.0, float(z[pos][0])
    if not (np.isfinite(kappa0) and np.isfinite(B0)):
        kappa0, B0 = 0.0, float(np.max(z))
    return B0, float(np.clip(kappa0, -50.0, 50.0))


def _model(x, B, kappa):
    return B * np.exp(-kappa * x)


def _jacobian(x, B, kappa):
    e = np.exp(-kappa * x)
    return np.stack([e, -B * x * e], axis=1)


def _model_offset(x, B, kappa, c):
    return B * np.exp(-kappa * x) + c


def _jacobian_offset(x, B, kappa, c):
    e = np.exp(-kappa * x)
    return np.stack([e, -B * x * e, np.ones_like(x)], axis=1)


def _physical(B, kappa, pcov, span, t_ref, scale, w_start, w_end, n, chi2_red, weighted) -> FitResult:
    """The FitResult in physical units (k = kappa/span, A(t=0) = scale B exp(k t_ref)), or no resolved decay."""
    k = kappa / span
    var_k = pcov[1, 1] / span**2
    k_err = math.sqrt(max(var_k, 0.0))
    growth = k * t_ref
    if growth < 700:
        A = scale * B * math.exp(growth)
        # dA/dB = scale e^{k t_ref}, dA/dkappa = A t_ref/span
        jA = np.array([scale * math.exp(growth), A * t_ref / span])
        var_A = float(jA @ pcov @ jA)
        A_err = math.sqrt(max(var_A, 0.0))
    else:  # extrapolation to t = 0 overflows; tau is still meaningful
        A, A_err = math.copysign(math.inf, B), math.inf

    common = dict(
        amplitude=A,
        amplitude_err=A_err,
        t_start=w_start,
        t_end=w_end,
        n_points=n,
        rate=k,
        rate_err=k_err,
        chi2_red=chi2_red,
        weighted=weighted,
    )
    tau_lower = 1.0 / (k + RESOLVE_SIGMAS * k_err) if k + RESOLVE_SIGMAS * k_err > 0 else math.inf
    # a rate not above RESOLVE_SIGMAS standard errors (or numerically zero over the window) is no decay
    if not (kappa > RESOLVE_SIGMAS * math.sqrt(max(pcov[1, 1], 0.0)) and kappa > 1e-10):
        return FitResult(
            tau=math.nan,
            tau_err=math.nan,
            ok=False,
            message=(
                f"no decay resolved: rate = {k:.3g} +- {k_err:.2g} is consistent with 0; "
                f"tau > {tau_lower:.3g} at {RESOLVE_SIGMAS:g} sigma"
            ),
            tau_lower=tau_lower,
            **common,
        )
    tau = 1.0 / k
    tau_err = k_err / k**2
    msg = "ok" + ("" if weighted else " (unweighted: errors from the residual scatter)")
    return FitResult(tau=tau, tau_err=tau_err, ok=True, message=msg, tau_lower=tau_lower, **common)


def jackknife_error(replicas, axis=0):
    """Jackknife standard error from leave-one-block-out replicas: sqrt((B-1)/B sum (x_b - mean)^2) along ``axis``."""
    r = np.asarray(replicas, dtype=float)
    B = r.shape[axis]
    return np.sqrt((B - 1) / B * np.sum((r - r.mean(axis=axis, keepdims=True)) ** 2, axis=axis))


def ratio_of_sums(a, b) -> tuple[float, float]:
    """sum a / sum b over samples (e.g. realizations) with its jackknife error (leaving out one sample at a time)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    r = a.sum() / b.sum()
    if len(a) < 2:
        return float(r), math.nan
    return float(r), float(jackknife_error((a.sum() - a) / (b.sum() - b)))


def leave_one_block_out(n: int, blocks: int) -> list[np.ndarray]:
    """Indices 0..n-1 without each of min(blocks, n) contiguous blocks in turn (the jackknife's subsets)."""
    parts = np.array_split(np.arange(n), min(int(blocks), n))
    return [np.concatenate(parts[:j] + parts[j + 1:]) for j in range(len(parts))]


def fit_line(x, y, errors=None) -> dict:
    """Weighted least-squares straight line y = a + b x.

    With ``errors`` (one sigma per point) the weights are 1/errors^2 and the
    parameter errors come from them, inflated by sqrt(chi2/dof) when that
    exceeds 1 (never shrunk below the statistics); without errors the fit is
    unweighted and its errors come from the scatter (needs >= 3 points).
    Returns {'intercept', 'intercept_error', 'slope', 'slope_error', 'chi2',
    'dof', 'chi2_red', 'n_points', 'weighted', 'inflated'}.
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    weighted = errors is not None
    s = np.asarray(errors, dtype=float).ravel() if weighted else np.ones_like(x)
    w = 1.0 / s**2
    A = np.stack([np.ones_like(x), x], axis=1)
    cov = np.linalg.inv(A.T @ (A * w[:, None]))
    a, b = cov @ (A.T @ (w * y))
    chi2 = float(np.sum(w * (y - (a + b * x)) ** 2))
    dof = x.size - 2
    chi2_red = chi2 / dof if dof > 0 else math.nan
    inflated = False
    if not weighted:
        cov = cov * (chi2_red if dof > 0 else math.nan)
    elif dof > 0 and chi2_red > 1.0:
        cov = cov * chi2_red
        inflated = True
    a_err, b_err = (float(math.sqrt(v)) for v in np.diag(cov))
    return {"intercept": float(a), "intercept_error": a_err, "slope": float(b), "slope_error": b_err, "chi2": chi2,
            "dof": dof, "chi2_red": chi2_red, "n_points": int(x.size), "weighted": weighted, "inflated": inflated}
