"""The localization length xi: typical values, the fit of ln T1_typical = a + L/xi, reference values.

Convention (docs/physics.md §10): xi is the length in T1 ~ exp(L/xi)
(probability, not amplitude; the amplitude localization length is 2 xi).
The per-realization T1 come from :func:`lru_mps.analysis.rates.qubit_rates`;
their typical value exp<ln T1> (:func:`typical`) grows like exp(L/xi), and
:func:`fit_localization_length` fits the straight line.  References
(:func:`xi_theory`): the strong-disorder value 1/xi = 2 ln(W/J) - 3 and the
Lyapunov exponent of the disordered chain's transfer matrix at the qubit
modes' energies, both generalized to per-bond couplings J_l = J (1 + eps_l),
eps_l ~ N(0, X) (``spec.hopping_spread``; docs/physics.md §3.1).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ParameterError, require
from ..physics import anderson
from .fitting import fit_line, jackknife_error, leave_one_block_out


# ---------------------------------------------------------------- typical values
def typical(values=None, *, logs=None) -> dict:
    """Typical value exp<ln x> of positive ``values`` (or of given natural ``logs``).

    Returns {'value': exp(mean ln x) (inf on overflow), 'log_mean': mean ln x,
    'log_error': standard error of the log-mean (std/sqrt(n), nan for n = 1),
    'log_std': sample std of ln x, 'n': count}.  For T1 past 1e300 pass
    ``logs`` = ln T1 (e.g. QubitRates.log_T1) and use 'log_mean'.
    """
    require((values is None) != (logs is None), "values", values, "exactly one of values or logs")
    if logs is None:
        arr = np.asarray(values, dtype=float).ravel()
        require(arr.size >= 1, "values", values, "at least one value")
        require(bool(np.all(np.isfinite(arr) & (arr > 0))), "values", values, "finite values > 0")
        lg = np.log(arr)
    else:
        lg = np.asarray(logs, dtype=float).ravel()
        require(lg.size >= 1, "logs", logs, "at least one value")
        require(bool(np.all(np.isfinite(lg))), "logs", logs, "finite logs")
    n = lg.size
    m = float(lg.mean())
    std = float(lg.std(ddof=1)) if n > 1 else math.nan
    return {
        "value": math.exp(m) if m < 709.0 else math.inf,
        "log_mean": m,
        "log_error": std / math.sqrt(n) if n > 1 else math.nan,
        "log_std": std,
        "n": n,
    }


# ------------------------------------------------------------ localization length
def fit_localization_length(lengths, log_T1_typical, errors=None) -> dict:
    """Fit ln T1_typ = a + L/xi: the probability localization length xi (sites).

    ``lengths``: array lengths L; ``log_T1_typical``: ln(T1_typ J) at each
    (e.g. typical(logs=...)['log_mean']); ``errors``: their one-sigma errors
    (e.g. 'log_error').  Weighted least squares (weights 1/errors^2) with the
    parameter errors from the given errors, inflated by sqrt(chi2/dof) when
    that exceeds 1; without errors an unweighted fit whose errors come from
    the scatter (needs >= 3 points).  Returns {'value': xi, 'error': its
    one-sigma error (propagated from the slope 1/xi), 'intercept': a,
    'intercept_error', 'slope': 1/xi, 'slope_error', 'chi2', 'dof',
    'chi2_red', 'n_points', 'weighted', 'inflated', 'ok', 'message'}.  A slope
    <= 0 (no growth) gives value = inf and ok = False.
    """
    try:
        x = np.asarray(lengths, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ParameterError("lengths", lengths, "an array of array lengths L") from None
    try:
        y = np.asarray(log_T1_typical, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ParameterError("log_T1_typical", log_T1_typical, "an array of ln(T1 J) values") from None
    require(x.size >= 2, "lengths", lengths, "at least 2 array lengths")
    require(bool(np.all(np.isfinite(x))), "lengths", lengths, "finite lengths")
    require(np.unique(x).size >= 2, "lengths", lengths, "at least 2 different lengths")
    require(y.size == x.size, "log_T1_typical", log_T1_typical, f"one value per length ({x.size})")
    require(bool(np.all(np.isfinite(y))), "log_T1_typical", log_T1_typical, "finite ln T1 values")
    weighted = errors is not None
    if weighted:
        s = np.asarray(errors, dtype=float).ravel()
        require(s.size == x.size, "errors", errors, f"one error per length ({x.size})")
        require(bool(np.all(np.isfinite(s) & (s > 0))), "errors", errors, "finite errors > 0")
    else:
        require(x.size >= 3, "lengths", lengths, "at least 3 lengths for an unweighted fit (errors from the scatter)")
        s = None
    line = fit_line(x, y, s)
    a, b, a_err, b_err = line["intercept"], line["slope"], line["intercept_error"], line["slope_error"]
    chi2, dof, chi2_red, inflated = line["chi2"], line["dof"], line["chi2_red"], line["inflated"]
    ok = b > 0
    xi = 1.0 / b if ok else math.inf
    xi_err = b_err / b**2 if ok else math.inf
    message = (
        f"xi = {xi:.4g} +- {xi_err:.2g} sites from {x.size} lengths {x.min():g}..{x.max():g}"
        if ok
        else f"no growth of T1 with L resolved (slope {b:.3g} <= 0)"
    )
    if inflated:
        message += f" (errors inflated by sqrt(chi2/dof) = {math.sqrt(chi2_red):.3g})"
    return {
        "value": float(xi),
        "error": float(xi_err),
        "intercept": float(a),
        "intercept_error": a_err,
        "slope": float(b),
        "slope_error": b_err,
        "chi2": chi2,
        "dof": dof,
        "chi2_red": chi2_red,
        "n_points": int(x.size),
        "weighted": weighted,
        "inflated": inflated,
        "ok": bool(ok),
        "message": message,
    }


def localization_length(lengths, log_T1, blocks: int = 16, reference_inverse=None) -> dict:
    """xi from per-realization ln(T1 J): typical values, the fit of ln T1_typ = a + L/xi, jackknife error.

    ``log_T1[i, r]``: ln(T1 J) of realization r at length ``lengths[i]``
    (non-finite entries are left out).  Per length :func:`typical`, then
    :func:`fit_localization_length` weighted by the standard errors of the
    log-means.  Those weights treat the lengths as independent; when the same
    realizations are extended from one length to the next (the study draws
    realization r of every length from one stream, so shorter arrays are
    prefixes of longer ones) the log-means are correlated across L and the
    fit's own error is too small (chi^2/dof << 1).  The error is therefore a
    jackknife over ``blocks`` contiguous blocks of realizations (valid either
    way): 'error' is the jackknife error for >= 8 blocks, else the larger of
    the two.  Returns fit_localization_length's dict plus 'error_fit',
    'error_jackknife', 'blocks', 'log_mean', 'log_error' (per length).

    ``reference_inverse[r]``: a reference 1/xi for realization r (e.g.
    xi_theory(...)['inverse_at_energies'], 2 gamma at its qubit energy).  The
    reference is then 1/mean(reference_inverse) and the result also has
    'reference', 'difference' = xi - reference and 'difference_error', the
    jackknife error of the difference over the same blocks (paired: the
    sampling of the realizations, common to both, cancels).
    """
    x = np.asarray(lengths, dtype=float).ravel()
    logs = np.asarray(log_T1, dtype=float)
    require(logs.ndim == 2 and logs.shape[0] == x.size, "log_T1", logs.shape,
            f"an array (lengths, realizations) with {x.size} rows")
    require(logs.shape[1] >= 2, "log_T1", logs.shape, "at least 2 realizations per length")

    def fit(cols):
        typ = [typical(logs=row[np.isfinite(row)]) for row in logs[:, cols]]
        return fit_localization_length(x, [t["log_mean"] for t in typ], [t["log_error"] for t in typ]), typ

    n = logs.shape[1]
    if reference_inverse is not None:
        inv = np.asarray(reference_inverse, dtype=float).ravel()
        require(inv.size == n and bool(np.all(np.isfinite(inv) & (inv > 0))), "reference_inverse",
                reference_inverse, f"{n} finite values > 0 (one 1/xi per realization)")
    full, typ = fit(np.arange(n))
    subsets = leave_one_block_out(n, blocks)
    B = len(subsets)
    slopes = np.array([fit(cols)[0]["slope"] for cols in subsets])
    slope_jk = float(jackknife_error(slopes))
    xi_jk = slope_jk / full["slope"] ** 2 if full["ok"] else math.inf
    out = dict(full)
    out.update(error_fit=full["error"], error_jackknife=float(xi_jk), blocks=B,
               log_mean=[t["log_mean"] for t in typ], log_error=[t["log_error"] for t in typ])
    out["error"] = float(xi_jk if B >= 8 else max(xi_jk, full["error"]))
    if reference_inverse is not None:
        out["reference"] = float(1.0 / inv.mean())
        out["difference"] = float(full["value"] - out["reference"])
        if full["ok"] and np.all(slopes > 0):
            diffs = np.array([1.0 / b - 1.0 / inv[cols].mean() for b, cols in zip(slopes, subsets)])
            out["difference_error"] = float(jackknife_error(diffs))
        else:
            out["difference_error"] = math.inf
    if full["ok"]:
        out["message"] = f"xi = {full['value']:.4g} +- {out['error']:.2g} sites (jackknife over {B} blocks of realizations)"
    return out


#: the asymptotic regime of ln T1_typ(L): L >= 1 + ONSET * xi (docs/physics.md §10)
ONSET = 3.0
#: fewest lengths a fit in the asymptotic regime uses
MIN_FIT_LENGTHS = 3


def local_xi(lengths, log_T1, blocks: int = 16) -> list[dict]:
    """Local localization lengths between consecutive lengths, with jackknife errors.

    1/xi_loc(L_k) = (<ln T1>(L_k) - <ln T1>(L_{k-1})) / (L_k - L_{k-1}) from
    per-realization ``log_T1[i, r]`` (as :func:`localization_length`); the
    error is the jackknife over ``blocks`` blocks of realizations (the
    realizations of consecutive lengths are nested, so the two log-means are
    correlated).  One dict per length from the second on: {'L', 'value'
    (xi_loc in sites, None where the slope is <= 0), 'slope' (1/xi_loc),
    'slope_error'}.  They approach xi from below at short lengths (the
    boundary's correction); where they have converged is the asymptotic regime.
    """
    x = np.asarray(lengths, dtype=float).ravel()
    logs = np.asarray(log_T1, dtype=float)
    n = logs.shape[1]

    def slopes(cols):
        means = np.array([np.mean(row[np.isfinite(row)]) for row in logs[:, cols]])
        return np.diff(means) / np.diff(x)

    full = slopes(np.arange(n))
    err = jackknife_error([slopes(cols) for cols in leave_one_block_out(n, blocks)])
    return [{"L": int(L), "value": float(1.0 / s) if s > 0 else None, "slope": float(s), "slope_error": float(e)}
            for L, s, e in zip(x[1:], full, err)]


def asymptotic_localization_length(lengths, log_T1, blocks: int = 16, reference_inverse=None,
                                   onset: float = ONSET) -> dict:
    """xi from the lengths in the asymptotic regime L >= 1 + ``onset`` xi, with a jackknife error.

    At short lengths ln T1_typ(L) bends towards its asymptotic slope 1/xi
    over a few xi (the boundary sites and the qubit mode's own extent): a fit
    from L = 2 underestimates xi by ~10 % at W = 4 J and ~2 % at W = 6 J.  The
    fit therefore uses the lengths L >= L_min = 1 + onset * xi, iterated from
    the fit over all lengths until the selection is stable (onset = 3: by then
    the local slopes of :func:`local_xi` have converged within their errors at
    W = 4..40 J).  Where fewer than MIN_FIT_LENGTHS given lengths reach L_min
    the fit falls back to all lengths and says so ('asymptotic' False).
    Returns :func:`localization_length`'s dict (its 'error' the jackknife
    over blocks of realizations) plus 'fit_lengths', 'min_length',
    'asymptotic', 'local_xi' (:func:`local_xi`).
    """
    x = np.asarray(lengths, dtype=float).ravel()
    logs = np.asarray(log_T1, dtype=float)
    require(onset >= 0 and math.isfinite(onset), "onset", onset, "a finite number >= 0 (units of xi)")
    fit = everything = localization_length(x, logs, blocks, reference_inverse)
    chosen = np.ones(x.size, bool)
    asymptotic = True
    for _ in range(8):
        if not fit["ok"]:
            break
        want = x >= 1.0 + onset * fit["value"]
        if np.count_nonzero(want) < MIN_FIT_LENGTHS:
            asymptotic = False
            break
        if np.array_equal(want, chosen):
            break
        chosen = want
        fit = localization_length(x[chosen], logs[chosen], blocks, reference_inverse)
    if not asymptotic:
        chosen, fit = np.ones(x.size, bool), everything
    out = dict(fit)
    out.update(fit_lengths=[int(L) for L in x[chosen]], min_length=int(x[chosen].min()), asymptotic=asymptotic,
               local_xi=local_xi(x, logs, blocks))
    if fit["ok"]:
        where = (f"from L = {int(x[chosen].min())}..{int(x[chosen].max())} (L >= 1 + {onset:g} xi)" if asymptotic
                 else f"from all lengths: fewer than {MIN_FIT_LENGTHS} reach L >= 1 + {onset:g} xi = "
                      f"{1 + onset * fit['value']:.3g}, the fit is not in the asymptotic regime (see the local slopes)")
        out["message"] = f"{fit['message']} {where}"
    return out


def xi_theory(spec, qubit_energies=None, n_grid: int = 41, seed: int = 0, n_sites: int = 4000,
              chains: int = 64) -> dict:
    """Reference localization lengths (probability convention, T1 ~ exp(L/xi)).

    strong: 1/xi = 2 ln(W/J) - 3 (typical, box disorder; needs W > e^1.5 J);
    with a hopping spread X each bond adds -2 <ln|1 + eps|> (the amplitude
    prod_b J_b / prod_n (E - dw_n) of the qubit mode on site L).
    transfer: 1/xi = <2 gamma(E_q)>, gamma the Lyapunov exponent of the
    disordered chain at energy E, averaged over the energies E_q of the
    qubit modes of the realizations (at weak disorder these are not uniform
    in [-W/2, W/2]: the mode most localized on site 1 is preferred, which
    shortens xi by ~20% at W = 4 J); without energies, uniform in
    [-W/2, W/2].  gamma is computed on ``n_grid`` energies spanning the
    qubit energies (``chains`` chains of ``n_sites`` sites each, vectorized
    over the chains) and interpolated.  transfer_error: the standard error of
    'transfer' from the Monte-Carlo errors of gamma (taken as fully
    correlated, an upper bound; it does not include the sampling of the
    energies themselves); 'inverse_at_energies': 2 gamma(E_q) = 1/xi at each
    given qubit energy (for paired comparisons with a fit on the same
    realizations).  With a hopping spread the transfer matrix has the
    per-bond couplings (:func:`lyapunov_exponent_bonds`).  With an engineered
    hopping profile (``spec.profile()`` not None) the couplings of bond l
    depend on L, so there is no infinite-chain reference: every value is NaN
    (None for the energies).  Likewise on a coupling graph that is not a chain (``spec.is_chain`` False): the
    references are the disordered chain's.
    """
    W = spec.W
    if getattr(spec, "profile", lambda: None)() is not None or not getattr(spec, "is_chain", True):
        # the couplings change with L, or a graph: no infinite chain
        return {"strong": math.nan, "transfer": math.nan, "transfer_error": math.nan, "inverse_at_energies": None}
    X = float(getattr(spec, "hopping_spread", 0.0))
    strong = anderson.xi_strong(W) if W > math.e**1.5 else math.nan
    if X > 0 and math.isfinite(strong):
        inv = 1.0 / strong - 2.0 * mean_log_coupling(X)
        strong = 1.0 / inv if inv > 0 else math.nan
    if W == 0:
        return {"strong": strong, "transfer": math.inf, "transfer_error": 0.0, "inverse_at_energies": None}
    rng = np.random.default_rng(seed)
    if qubit_energies is None or not np.any(np.isfinite(qubit_energies)):
        qubit_energies = (np.arange(n_grid) + 0.5) / n_grid * W - W / 2
    qubit_energies = np.asarray(qubit_energies)[np.isfinite(qubit_energies)]
    lo, hi = float(qubit_energies.min()), float(qubit_energies.max())
    grid = np.linspace(lo, hi, n_grid) if hi > lo else np.array([lo])
    if X > 0:
        gam = np.array([lyapunov_exponent_bonds(W, E, X, n_sites=n_sites, realizations=chains, rng=rng) for E in grid])
    else:
        gam = np.array([anderson.lyapunov_exponent(W, E, n_sites=n_sites, realizations=chains, rng=rng) for E in grid])

    def at_qubits(values):
        return np.interp(qubit_energies, grid, values) if len(grid) > 1 else np.full(len(qubit_energies), values[0])

    gq = at_qubits(gam[:, 0])
    mean_gamma = float(np.mean(gq))
    mean_error = float(np.mean(at_qubits(gam[:, 1])))
    return {"strong": strong, "transfer": 1.0 / (2.0 * mean_gamma),
            "transfer_error": mean_error / (2.0 * mean_gamma**2), "inverse_at_energies": 2.0 * gq}


def mean_log_coupling(X: float) -> float:
    """<ln|1 + eps|> for eps ~ N(0, X) (quadrature; ~ -X^2/2 - 3X^4/4 for small X)."""
    from scipy.integrate import quad

    if X == 0:
        return 0.0
    pdf = lambda e: math.exp(-0.5 * (e / X) ** 2) / (X * math.sqrt(2.0 * math.pi))  # noqa: E731
    lo, hi = min(-12.0 * X, -2.0), 12.0 * X
    return float(quad(lambda e: math.log(abs(1.0 + e)) * pdf(e) if e != -1.0 else 0.0, lo, hi, points=[-1.0],
                      limit=200)[0])


def lyapunov_exponent_bonds(W, energy, X: float, J: float = 1.0, n_sites: int = 20000, realizations: int = 64,
                            rng=None, n_discard: int = 200) -> tuple[float, float]:
    """:func:`lru_mps.physics.anderson.lyapunov_exponent` with per-bond couplings J_n = J (1 + eps_n), eps_n ~ N(0, X).

    J_n psi_{n+1} = (E - dw_n) psi_n - J_{n-1} psi_{n-1} (dw_n uniform in [-W/2, W/2]): the ratio R_n = psi_{n+1}/psi_n obeys
    R_n = ((E - dw_n) - J_{n-1}/R_{n-1}) / J_n, and gamma = <ln|R_n|> (amplitude exponent) with its
    standard error over the ``realizations`` chains.
    """
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    W, E, tiny = float(W), float(energy), 1e-300
    R = np.full(realizations, 1.0)
    J_prev = J * (1.0 + rng.normal(0.0, X, size=realizations))
    total = np.zeros(realizations)
    for n in range(int(n_discard) + int(n_sites)):
        eps = rng.uniform(-W / 2.0, W / 2.0, size=realizations)
        J_n = J * (1.0 + rng.normal(0.0, X, size=realizations))
        R = np.where(R == 0.0, tiny, R)
        R = ((E - eps) - J_prev / R) / J_n
        J_prev = J_n
        if n >= n_discard:
            total += np.log(np.abs(R) + tiny)
    per_chain = total / n_sites
    err = float(per_chain.std(ddof=1) / math.sqrt(realizations)) if realizations > 1 else math.nan
    return float(per_chain.mean()), err
