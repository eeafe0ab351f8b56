"""The QEC view of a leakage start: what a leakage event costs an error-correction cycle (docs/physics.md §8).

A surface-code cycle of length t_c samples the coding qubit at the cycle
boundaries.  After a leakage event at the start of cycle 0 (site 1 in |2>,
the array in its thermal state):

``S(k) = P_star^(1)(k t_c)``      the survival: the probability that the coding
                                  qubit is still leaked at boundary k;
``D = sum_{k>=1} S(k)``           the mean leakage duration in cycles (the
                                  boundaries after the event at which the qubit
                                  is leaked);
``seepage(k) = 1 - S(k)/S(k-1)``  the share of the leakage left at boundary
                                  k - 1 that is gone at boundary k (cycle k),
                                  i.e. 1 - S(k+1)/S(k) for k = 0..K-1;
``p D / (1 + p D)``               the steady-state leakage of the coding qubit
                                  under isolated leakage events of probability
                                  p per cycle (a renewal argument: 1/p cycles
                                  unleaked on average, then D leaked).

D's tail after the last simulated boundary K: the rate of the leakage
lifetimes' tail fit (:func:`lru_mps.analysis.lifetimes.tail_after`, the same
fit on the same window) from the measured value at K (so that the tail joins
the data: :func:`survival_tail`): y_end exp(-s/tau) summed over the
boundaries after K, y_end r/(1 - r) with r = exp(-t_c/tau); where no fit resolves it, the bound
(every |2> decays at 2/T1q at least: S(K + j) <= P_star^(L)(K t_c)
exp(-2 j t_c/T1q)) of which the value takes half and the error the other
half.  Errors: jackknife over the result's trajectory blocks
(:func:`lru_mps.analysis.lifetimes.jackknifed_total`).

S(k) is estimated self-normalized: sum_i w_i s_i(k t_c) / sum_i w_i over the
rows, whose weights (thermal odds, hot tail, the branch's clock) do not
average to 1 in a sample, so S(0) = 1 exactly and each S(k) is in [0, 1];
errors are jackknifed over the trajectory blocks, ratio included.  D and the
seepage are taken from the same ratio.

The qubit's error per cycle (:func:`qubit_channel`): its channel over one
cycle read off the curves at t_c, 1 - <n_1>(t_c) and 2C(t_c), twirled as
below (:func:`channel_pauli_errors`).  The Pauli twirl of amplitude and phase damping
over a time t (Ghosh, Fowler, Geller, PRA 86, 062318 (2012); Tomita and
Svore, PRA 90, 062320 (2014)):

    p_x = p_y = (1 - e^{-t/T1}) / 4,    p_z = (1 - e^{-t/T2}) / 2 - (1 - e^{-t/T1}) / 4,

total p = p_x + p_y + p_z = (1 - e^{-t/T1})/4 + (1 - e^{-t/T2})/2, with the
relaxation probability eps_1 = 1 - e^{-t/T1}.  A bare transmon has T1 = T1q
and 1/T2 = 1/(2 T1q) + 1/Tphi.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import require
from ..run.result import SimulationResult
from .decay import RESOLVED_SIGMAS, fit_window
from .fitting import jackknife_error
from .lifetimes import Lifetime, jackknifed_total, tail_after

#: the observable whose values at the cycle boundaries are S(k)
SURVIVAL_OBSERVABLE = "leakage_site1"


# ------------------------------------------------------------------ closed forms (arrays and numbers)
def geometric_tail(y_end: float, tau: float, t_c: float) -> float:
    """sum_{j>=1} y_end exp(-j t_c/tau) = y_end / (exp(t_c/tau) - 1): an exponential tail over the boundaries after
    the last one (0 for y_end = 0 or tau = nan)."""
    if y_end == 0.0 or not math.isfinite(tau):
        return 0.0
    return float(y_end / math.expm1(t_c / tau))


def seepage(S) -> np.ndarray:
    """1 - S[k]/S[k-1] for k = 1..len(S)-1 (``S`` from boundary 0 on); nan where S[k-1] <= 0."""
    S = np.asarray(S, dtype=float)
    prev = S[:-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(prev > 0, 1.0 - S[1:] / np.where(prev > 0, prev, 1.0), np.nan)


def steady_state_leakage(p: float, D: float, D_error: float = 0.0) -> tuple[float, float]:
    """(p D / (1 + p D), its error from D's): the steady-state leakage under isolated events of probability p."""
    x = p * D
    return x / (1.0 + x), p * D_error / (1.0 + x) ** 2


def pauli_errors(t: float, T1: float, T2: float, T1_error: float = 0.0, T2_error: float = 0.0) -> dict:
    """The Pauli-twirled error over a time t of a qubit with T1 and T2 (module docstring), with errors propagated
    from those of T1 and T2 (taken as independent; T1, T2 = inf: no error of that kind).

    {"eps_1", "p_x", "p_y", "p_z", "p_total"}, each {"value", "error"}.
    """
    a = math.exp(-t / T1) if T1 > 0 else 0.0  # e^{-t/T1}
    b = math.exp(-t / T2) if T2 > 0 else 0.0
    da = a * t / T1**2 * T1_error if math.isfinite(T1) and T1 > 0 else 0.0  # |d e^{-t/T1}| from T1's error
    db = b * t / T2**2 * T2_error if math.isfinite(T2) and T2 > 0 else 0.0
    eps1 = 1.0 - a
    out = {
        "eps_1": (eps1, da),
        "p_x": (eps1 / 4, da / 4),
        "p_y": (eps1 / 4, da / 4),
        "p_z": ((1.0 - b) / 2 - eps1 / 4, math.hypot(db / 2, da / 4)),
        "p_total": (eps1 / 4 + (1.0 - b) / 2, math.hypot(db / 2, da / 4)),
    }
    return {k: {"value": v, "error": e} for k, (v, e) in out.items()}


def channel_pauli_errors(eps_1, coherence) -> dict:
    """The Pauli twirl of a qubit channel given by its relaxation eps_1 = 1 - <n_1>(t) (from |1>) and its coherence
    factor c = 2 C(t) (from (|0> + |1>)/sqrt2): p_x = p_y = eps_1/4, p_z = (1 - c)/2 - eps_1/4, p_total = eps_1/4 +
    (1 - c)/2; for amplitude and phase damping (eps_1 = 1 - e^{-t/T1}, c = e^{-t/T2}) the same numbers as
    :func:`pauli_errors`.  Values only (numbers or arrays)."""
    e = np.asarray(eps_1, dtype=float)
    c = np.asarray(coherence, dtype=float)
    return {"eps_1": e, "p_x": e / 4, "p_y": e / 4, "p_z": (1.0 - c) / 2 - e / 4, "p_total": e / 4 + (1.0 - c) / 2}


def qubit_channel(result: SimulationResult, t_c: float) -> dict:
    """The coding qubit's channel over one cycle, read off the curves at t = t_c (not fitted): eps_1 = 1 -
    <n_1>(t_c)/<n_1>(0) from |1>, the coherence factor 2C(t_c)/2C(0) from (|0> + |1>)/sqrt2 (ratio estimators:
    both 1 at t = 0 exactly), and their Pauli twirl (:func:`channel_pauli_errors`); every number with its
    jackknife error over the trajectory blocks (the two starts' rows share their blocks and realizations, so the
    correlation is kept).  The early loss (hybridization with the array, fast realizations) is in it.

    {"population", "coherence", "eps_1", "p_x", "p_y", "p_z", "p_total"}, each {"value", "error"}.
    """

    def estimate(r):
        n1 = boundary_ratio(r, t_c, "qubit_population")[1]
        c = boundary_ratio(r, t_c, "qubit_coherence")[1]
        probs = channel_pauli_errors(1.0 - n1, c)
        return np.array([n1, c] + [float(probs[q]) for q in ("eps_1", "p_x", "p_y", "p_z", "p_total")])

    value, error = jackknifed(result, estimate)
    names = ("population", "coherence", "eps_1", "p_x", "p_y", "p_z", "p_total")
    return {q: {"value": float(v), "error": float(e)} for q, v, e in zip(names, value, error)}


# ------------------------------------------------------------------ from a result
def cycle_indices(times, t_c: float) -> np.ndarray:
    """The grid indices of the boundaries k t_c, k = 0..K, K = the whole cycles in the run.

    The grid must contain every boundary (to 1e-9 relative): t_final = K t_c
    and K m + 1 points; a grid that misses one raises ParameterError.
    """
    t = np.asarray(times, dtype=float)
    require(math.isfinite(t_c) and t_c > 0, "cycle_time", t_c, "a finite time > 0 (units of 1/J)")
    K = int(math.floor(t[-1] / t_c * (1.0 + 1e-12)))
    require(K >= 1, "cycle_time", t_c, f"at most the simulated time {t[-1]:.4g}/J")
    targets = np.arange(K + 1) * t_c
    idx = np.clip(np.searchsorted(t, targets), 0, len(t) - 1)
    below = np.clip(idx - 1, 0, len(t) - 1)
    idx = np.where(np.abs(t[below] - targets) < np.abs(t[idx] - targets), below, idx)
    miss = np.abs(t[idx] - targets) > 1e-9 * max(t_c, 1.0)
    require(not miss.any(), "cycle_time", t_c, "a time grid with a point at every cycle boundary k t_c",
            f"first missing boundary: k = {int(np.flatnonzero(miss)[0]) if miss.any() else -1}")
    return idx


def boundary_ratio(result: SimulationResult, t_c: float, obs: str = SURVIVAL_OBSERVABLE) -> np.ndarray:
    """y(k t_c) / y(0) of an observable's mean curve at the boundaries k = 0..K (nan where y(0) is not > 0).

    The self-normalized (ratio) estimator: the ensemble mean is sum_i w_i s_i(t) / n with the rows' weights w_i
    (thermal odds, hot tail, the branch's clock) folded into the records, and a row's value at t = 0 is its
    weight alone where every row starts with the observable at 1 (site 1 in |2> for P_star^(1), in |1> for
    <n_1>), so the ratio is sum_i w_i s_i(t) / sum_i w_i: 1 at k = 0 exactly, and a probability wherever each
    row's value is one times its weight.
    """
    idx = cycle_indices(result.times, t_c)
    y = result.observable(obs).mean[idx]
    return y / y[0] if y[0] > 0 else np.full(y.shape, np.nan)


def jackknifed(result: SimulationResult, estimate) -> tuple[np.ndarray, np.ndarray]:
    """(estimate(result), its jackknife error over the trajectory blocks; nan with fewer than 2 blocks)."""
    value = np.asarray(estimate(result), dtype=float)
    reps = [estimate(r) for r in result.leave_one_out()]
    if len(reps) < 2:
        return value, np.full(value.shape, np.nan)
    return value, np.asarray(jackknife_error(np.array(reps, dtype=float)), dtype=float)


def survival(result: SimulationResult, t_c: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(k, S(k), its error) at the boundaries k = 0..K: S(k) = sum_i w_i s_i(k t_c) / sum_i w_i, the ratio estimator
    (:func:`boundary_ratio`: S(0) = 1 exactly, each S(k) in [0, 1]), with its jackknife error over the trajectory
    blocks (the error of S(0) is 0).  With a single block (no jackknife) the error is the standard error of the
    numerator over the mean weight (the weights' own spread left out).

    A run whose thermal start is stratified gives S(k) = R(k t_c) itself (its estimate is the ratio, normalized
    exactly: docs/physics.md §6.5) and its error is the strata's delta-method error of R, from every row of every
    stratum; the 16-block jackknife of the same ratio was measured up to 0.6x of it at single boundaries (L = 3,
    2000 rows), an error bar that is itself noisy."""
    ms = result.observable(SURVIVAL_OBSERVABLE)
    if ms.resolved is not None and ms.mean[0] > 0:
        idx = cycle_indices(result.times, t_c)
        S, err = ms.mean[idx] / ms.mean[idx[0]], ms.sem[idx] / ms.mean[idx[0]]
        err[0] = 0.0
        return np.arange(len(S)), S, err
    S, err = jackknifed(result, lambda r: boundary_ratio(r, t_c))
    if not np.all(np.isfinite(err)):
        idx = cycle_indices(result.times, t_c)
        ms = result.observable(SURVIVAL_OBSERVABLE)
        err = ms.sem[idx] / ms.mean[idx[0]] if ms.mean[idx[0]] > 0 else np.full(S.shape, np.nan)
    return np.arange(len(S)), S, err


def survival_resolved(result: SimulationResult, t_c: float) -> list[bool] | None:
    """Per cycle k = 1..K, whether S(k)'s error can be trusted: the stratified run's resolved mask of P_star^(1) at
    the boundaries (docs/physics.md §6.5, "Resolved points": every class of thermal starts that carries the point
    has rows enough); None where the thermal start is not stratified (no mask)."""
    mask = result.observable(SURVIVAL_OBSERVABLE).resolved
    if mask is None:
        return None
    return [bool(x) for x in np.asarray(mask)[cycle_indices(result.times, t_c)][1:]]


def survival_rises(result: SimulationResult, t_c: float) -> dict:
    """Where S(k + 1) > S(k), in units of the difference's jackknife error (the same rows' ratio: the two values
    are correlated, so this is sharper than their errors taken apart).

    S(k) is the probability that site 1 is leaked at boundary k, not that it stayed leaked since the event: the
    stack can hop back from site 2 and raise it within a cycle (the master equation shows it), but at the cycle
    boundaries of the working point it falls at every k, and a rise of the estimate is then noise.  Returns
    {"largest_rise", "error", "cycle", "sigmas"}: the rise S(k+1) - S(k) with the largest ratio to its error
    (cycle: k + 1), or all None where S never rises.
    """
    d, err = jackknifed(result, lambda r: np.diff(boundary_ratio(r, t_c)))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where((d > 0) & (err > 0), d / err, np.where(d > 0, np.inf, -np.inf))
    if not np.any(d > 0):
        return {"largest_rise": None, "error": None, "cycle": None, "sigmas": None}
    i = int(np.argmax(z))
    return {"largest_rise": float(d[i]), "error": float(err[i]), "cycle": i + 1,
            "sigmas": float(z[i]) if math.isfinite(z[i]) else None}


def cycle_total(t, y, sem, t_c: float, window, T1q: float, y_bound: float | None = None) -> tuple[float, float, str]:
    """(sum_{k>=1} y(k t_c) with the tail after the last boundary, the tail, how it was taken) of a curve on a grid
    that holds the boundaries: :func:`~lru_mps.analysis.lifetimes.tail_after`'s fit (``window``) or bound
    (``y_bound``: the leakage left anywhere at t[-1]) summed by :func:`geometric_tail`; a bound counts half."""
    idx = cycle_indices(t, t_c)
    require(idx[-1] == len(t) - 1, "cycle_time", t_c, "a run that ends at a cycle boundary (t_final = K t_c)")
    y = np.asarray(y, dtype=float)
    body = float(np.sum(y[idx[1:]]))
    method, y_end, tau = tail_after(t, y, sem, window, T1q, y_bound)
    if method == "fit":  # the tail joins the data it extends: from the last boundary's value, at the fitted rate
        y_end = max(float(y[-1]), 0.0)
    tail = geometric_tail(y_end, tau, t_c) * (0.5 if method == "bound" else 1.0)
    return body + tail, tail, method


def mean_leakage_cycles(result: SimulationResult, t_c: float) -> Lifetime:
    """D = sum_{k>=1} S(k) in cycles, with its tail after the last boundary and its jackknife error.

    ``Lifetime`` fields in cycles (not 1/J): value, error, tail, tail_method ('fit', 'bound' or 'lower bound').
    S(k) is the ratio estimator of :func:`survival` (each replica divided by its own weights' sum), so D is the
    sum of the reported S(k) and its tail.  The bound takes the leakage left anywhere in the array at t_final (it
    can come back to site 1).
    """

    def total(res, obs, window):
        ms = res.observable(obs)
        y0 = float(ms.mean[0])
        value, tail, method = cycle_total(res.times, ms.mean, ms.sem, t_c, window, res.spec.conditions.longest_T1,
                                          y_bound=float(res.observable("leakage_array").mean[-1]))
        return (value / y0, tail / y0, method) if y0 > 0 else (math.nan, math.nan, method)

    return jackknifed_total(result, SURVIVAL_OBSERVABLE, total)


def seepage_per_cycle(result: SimulationResult, t_c: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(k = 1..K, 1 - S(k)/S(k-1), jackknife error over the trajectory blocks) from the ratio estimator of
    :func:`survival` (the weights' sum cancels after the first cycle); nan where S(k-1) is not resolved (not above
    RESOLVED_SIGMAS standard errors: a ratio of noise).  Never clipped: a value below 0 is a rise of S within its
    error (:func:`survival_rises`)."""
    k, S, err = survival(result, t_c)
    value, error = jackknifed(result, lambda r: seepage(boundary_ratio(r, t_c)))
    bad = ~(S[:-1] > RESOLVED_SIGMAS * err[:-1])
    bad[0] = False  # S(0) = 1 exactly
    value[bad] = np.nan
    error = np.where(bad, np.nan, error)
    return k[1:], value, error


def survival_tail(result: SimulationResult, t_c: float) -> dict:
    """How S(k) goes on after the last boundary K, for a model that needs S beyond it: {"method", "S_end", "ratio"}
    with S(K + j) ~ S_end ratio^j; 'fit': S_end = the measured S(K) and ratio = exp(-t_c/tau) with the tau of the
    tail fit of :func:`mean_leakage_cycles`; 'bound': S_end the leakage left anywhere at K t_c and ratio
    exp(-2 t_c/T1q), an upper bound; 'lower bound': S_end = 0.

    The fit's window ends where the curve is no longer resolved (:func:`~lru_mps.analysis.decay.fit_window`: 100
    below its first value on a realistic run), so past it the exponential of the window extrapolates below the
    slower late curve (the rare rows of a stack blocked by a thermal excitation carry it): its value at K t_c
    was 20x under the measured S(K) at L = 3, 100 mK.  The tail therefore starts from the measured S(K), so that
    it joins the data, and takes the fit's rate.
    """
    ms = result.observable(SURVIVAL_OBSERVABLE)
    window = fit_window("T_star", result, SURVIVAL_OBSERVABLE)
    method, y_end, tau = tail_after(result.times, ms.mean, ms.sem, window, result.spec.conditions.longest_T1,
                                    y_bound=float(result.observable("leakage_array").mean[-1]))
    y0 = float(ms.mean[0])
    if method == "fit":
        y_end = max(float(ms.mean[-1]), 0.0)
    return {"method": method, "S_end": y_end / y0 if y0 > 0 else 0.0,
            "ratio": math.exp(-t_c / tau) if math.isfinite(tau) else 0.0}
