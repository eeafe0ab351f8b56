"""Leakage lifetimes and the removal efficiency: numbers that exist wherever a leakage start was simulated.

A fitted T_star needs an exponential tail after the transit (L-1) T_prop;
under realistic conditions at long L the leakage has mostly decayed by
itself before that window opens, and T_star is not resolved exactly where a
user asks how long leakage lives.  The integrals below are always defined
(docs/physics.md §8):

``leakage_lifetime_qubit``  tau_1 = int_0^inf P_star^(1)(t) dt: how long the
                            coding qubit stays leaked after a leakage event.
``leakage_lifetime_array``  tau_L = int_0^inf P_star^(L)(t) dt: how long the
                            leakage lives anywhere in the array.
``removal_efficiency``      eta: the fraction of the leakage that ended
                            within the run by the reset site's channels
                            rather than by hardware decay.

The integral runs over the simulated curve (Simpson's rule on the time
grid) plus the tail after t_final: the fitted A exp(-t/tau) integrated from
t_final, with tau fitted on the same window as T_star
(:func:`lru_mps.analysis.decay.fit_window`, applied to the curve itself);
where no fit resolves the tail, the tail is only bounded (``tail`` =
"bound"): under hardware decay every |2> decays at 2/T1q, so the leakage
left at t_final lives at most T1q/2 more; the value then takes half the
bound and its error the other half.  In ideal conditions without a fit
the integral up to t_final is a lower bound (``tail`` = "lower bound").

The removal efficiency counts hardware decay from its flux: a decay jump
sqrt(gamma_l) a_l takes |2>_l to |1>_l at rate 2 gamma_l, so the expected
number of leakage-ending decays up to t is D(t) = int_0^t sum_l 2 gamma_l
<|2><2|_l> dt' (the expectation of the trajectories' decay events, without
their sampling noise; tested against counted events), and
eta = 1 - D(t_final) / (P_star^(L)(0) - P_star^(L)(t_final)).  Errors:
jackknife over the result's trajectory blocks (the fits of the replicas on
the full result's window), as for the decay times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.integrate import simpson

from ..run.result import SimulationResult
from ..physics.rules import number_can_grow
from .decay import DecayTime, fit_window
from .fitting import fit_exponential, jackknife_error

#: lifetime name -> the observable integrated
LIFETIME_OBSERVABLE = {
    "leakage_lifetime_qubit": "leakage_site1",
    "leakage_lifetime_array": "leakage_array",
}
#: every quantity of this module, in report order
LIFETIMES = tuple(LIFETIME_OBSERVABLE) + ("removal_efficiency",)


@dataclass
class Lifetime:
    """A leakage lifetime (1/J) with its jackknife error and how its tail after t_final was taken."""

    value: float
    error: float
    #: the part after t_final (1/J), and how it was taken: 'fit', 'bound' (realistic, value + error hold it) or
    #: 'lower bound' (ideal without a fit: the value is the integral up to t_final)
    tail: float
    tail_method: str

    def as_json(self, J_hz: float) -> dict:
        """The decay times' keys (value and error in 1/J and us), and the tail after t_final and how it was taken."""
        return {**DecayTime(self.value, self.error).as_json(J_hz), "tail_J": _finite(self.tail),
                "tail": self.tail_method}


@dataclass
class Fraction:
    """A dimensionless fraction with its jackknife error."""

    value: float
    error: float

    def as_json(self, J_hz: float | None = None) -> dict:
        return {"value": _finite(self.value), "error": _finite(self.error)}


def leakage_lifetimes(result: SimulationResult) -> dict[str, Lifetime | Fraction | None]:
    """tau_1, tau_L (1/J) and eta of a result with a leakage start; every entry None without one.

    Also None with a readout error at the reset site (a false report makes a ``|2>`` there) and with a thermal bath
    at T > 0 (heating makes ``|2>`` from ``|1>`` on every site): the leakage has a floor, the integrals diverge and
    the T1q/2 bound of the tail does not hold (docs/physics.md §4.4, §5.1, §8).
    """
    if "leakage" not in result.blocks or number_can_grow(result.spec):
        return {k: None for k in LIFETIMES}
    out: dict = {name: jackknifed_total(result, obs, _integral) for name, obs in LIFETIME_OBSERVABLE.items()}
    eta = removal_efficiency(result)
    reps = [removal_efficiency(r) for r in result.leave_one_out()]
    out["removal_efficiency"] = Fraction(eta, float(jackknife_error(np.array(reps))) if len(reps) >= 2 else math.nan)
    return out


def jackknifed_total(result: SimulationResult, obs: str, total) -> Lifetime:
    """A total of a leakage curve with its tail after t_final, and its jackknife error over the trajectory blocks.

    ``total(result, obs, window) -> (value, tail, method)`` (e.g. :func:`_integral`; the QEC view's sum over
    cycle boundaries, :mod:`lru_mps.analysis.qec`).  The window of the tail's fit is T_star's
    (:func:`~lru_mps.analysis.decay.fit_window`, ended where ``obs`` is no longer resolved); the replicas fit
    their tails on the full result's window, or, where the full result has no fit, take the tail the same way
    as it does.  A bounded tail ('bound': its value holds half the bound) adds the other half to the error.
    """
    window = fit_window("T_star", result, obs)
    value, tail, method = total(result, obs, window)
    if method != "fit":
        window = None  # the replicas take the tail the same way as the full result
    reps = [total(r, obs, window)[0] for r in result.leave_one_out()]
    error = float(jackknife_error(np.array(reps))) if len(reps) >= 2 else math.nan
    if method == "bound":
        error = math.hypot(error, tail)
    return Lifetime(value, error, tail, method)


def removal_efficiency(result: SimulationResult) -> float:
    """eta = 1 - D(t_final) / (P_star^(L)(0) - P_star^(L)(t_final)): the leakage ended by the reset site's channels.

    D: the expected number of hardware decays of a |2> up to t_final, from
    the flux sum_l rate_l |<1|a|2>|^2 <|2><2|_l> of every hardware decay
    channel.  1 in ideal conditions; nan when no leakage ended.
    """
    leak = result.site_resolved("leakage", "site_leakage").mean  # (T, L)
    t = result.times
    ended = float(result.observable("leakage_array").mean[0] - result.observable("leakage_array").mean[-1])
    rate = np.zeros(result.spec.L)
    for ch in result.spec.channels():
        if ch.name == "decay":
            rate[ch.site] += ch.rate * float(np.sum(np.abs(ch.op[:2, 2]) ** 2))  # |2> -> not |2>: 2 gamma
    decays = float(simpson(leak @ rate, x=t)) if np.any(rate) else 0.0
    return 1.0 - decays / ended if ended > 0 else math.nan


def tail_after(t, y, sem, window, T1q: float, y_bound: float | None = None) -> tuple[str, float, float]:
    """How a leakage curve goes on after its last time t[-1]: (method, y_end, tau), y(t[-1] + s) ~ y_end e^{-s/tau}.

    'fit': A exp(-t/tau) fitted on ``window`` (weights ``sem``), y_end = the fit at t[-1] (the last point where the
    amplitude is not finite); 'bound' (no resolved fit, finite T1q): every |2> decays at 2/T1q at least, so
    y_end = ``y_bound`` (default the curve's last value) and tau = T1q/2 give an upper bound of the tail (with a
    T1 per site the caller passes the longest, ``Conditions.longest_T1``: every site's |2> decays at least that
    fast); 'lower bound' (ideal, no fit): no tail (y_end = 0).
    """
    if window is not None and window[1] > window[0]:
        fit = fit_exponential(t, y, sem, t_start=window[0], t_end=window[1])
        if fit.ok and fit.tau > 0:
            at_end = fit.amplitude * math.exp(-t[-1] / fit.tau) if math.isfinite(fit.amplitude) else y[-1]
            return "fit", max(float(at_end), 0.0), fit.tau
    if math.isfinite(T1q):
        return "bound", max(float(y[-1] if y_bound is None else y_bound), 0.0), 0.5 * T1q
    return "lower bound", 0.0, math.nan


def _integral(result: SimulationResult, obs: str, window) -> tuple[float, float, str]:
    """(integral to infinity, its tail after t_final, how the tail was taken) of the observable's mean curve.

    The tail (:func:`tail_after`): A exp(-t/tau) fitted on ``window`` and integrated from t_final; without a
    window or a resolved fit, half the bound (realistic: P_star^(L)(t_final) T1q/2, the leakage left anywhere,
    for tau_1 too) or nothing (ideal: the value is then a lower bound).
    """
    t = result.times
    ms = result.observable(obs)
    y = ms.mean
    body = float(simpson(y, x=t))
    # the bound takes the leakage left anywhere at t_final: leakage elsewhere in the array can come back to site 1
    y_bound = float(result.observable("leakage_array").mean[-1])
    method, y_end, tau = tail_after(t, y, ms.sem, window, result.spec.conditions.longest_T1, y_bound)
    tail = {"fit": y_end * tau, "bound": 0.5 * y_end * tau, "lower bound": 0.0}[method]
    return body + tail, tail, method


def _finite(x):
    return float(x) if x is not None and math.isfinite(x) else None
