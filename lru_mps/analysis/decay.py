"""Decay times from ensemble curves (docs/physics.md §8).

T_prop = pi / (2 J_prop) with J_prop = 2 J^2 / Ubar.  T_star, T1 and T2 are
fits of A exp(-t/tau), A free, to P_star^(L)(t), <n_1>(t) and 2 C(t) over
the late-time window t > (L-1) T_prop up to the end of the run (sampled
trajectories: up to the last point before the curve is no longer resolved,
mean < 3 standard errors, where only a few trajectories still carry it).
With a thermal bath (docs/physics.md §5.1) P_star^(L) and <n_1> decay to a
thermal equilibrium c > 0, not to zero: T_star and T1 are then fits of
A exp(-t/tau) + c with c free (:func:`equilibrium_fit`); C(t) still decays
to zero (the bath's equilibrium is diagonal).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..run.result import OBSERVABLE_INIT, SimulationResult
from ..run.statistics import ObservableAccumulator
from .fitting import FitResult, fit_exponential, jackknife_error
from ..physics.units import time_to_us
from ..physics.rules import number_can_grow

#: decay time -> (observable, factor applied to the curve)
DECAY_OBSERVABLE = {
    "T_star": ("leakage_array", 1.0),
    "T1": ("qubit_population", 1.0),
    "T2": ("qubit_coherence", 2.0),
}


@dataclass
class DecayTime:
    """A decay time in 1/J with its uncertainty and, for fits, the fit itself."""

    value: float
    error: float
    fit: FitResult | None = None

    @property
    def flags(self) -> list[str]:
        """What the number should be read with: a poor fit (:func:`lru_mps.analysis.numbers.fit_flag`)."""
        from .numbers import fit_flag

        flag = None if self.fit is None else fit_flag(self.fit.chi2_red, self.fit.weighted)
        return [flag] if flag else []

    def __str__(self) -> str:
        """'value +- error /J' to the error's digits, 'not resolved (...)' where the error is half the value or more,
        and the flags."""
        from .numbers import shown

        return " ".join([shown(self.value, self.error, remedy="more trajectories resolve it", unit="/J"),
                         *(f"[{f}]" for f in self.flags)])

    def __repr__(self) -> str:
        flags = f", flags={self.flags!r}" if self.flags else ""
        return f"DecayTime(value={self.value!r}, error={self.error!r}, fit={self.fit!r}{flags})"

    def as_json(self, J_hz: float) -> dict:
        return {
            "value_J": _finite(self.value),
            "error_J": _finite(self.error),
            "value_us": _finite(time_to_us(self.value, J_hz)),
            "error_us": _finite(time_to_us(self.error, J_hz)),
        }


#: a point of a sampled ensemble curve is resolved when its mean exceeds this many standard errors
RESOLVED_SIGMAS = 3.0


#: realistic branch runs: the fit window ends where the curve has fallen this factor below its first value
DYNAMIC_RANGE = 100.0


def fit_window_start(result: SimulationResult, name: str = "T_star") -> float:
    """Start of decay time ``name``'s window (1/J): T_star after the transit (L-1) T_prop (``spec.transit_hops``
    T_prop: on a graph the distance from the start to the reset site); T1 and T2 after one hop
    T_prop under hardware noise, after the transit in ideal conditions (docs/physics.md §8).

    The leakage starts its exponential decay only once it has crossed the
    array.  The qubit's decay has no transit: its own dynamics (hybridization
    with the array, ~1/W) is over long before T_prop, and the paper fits
    "after the initial dynamics beyond T_prop".  Starting T1 and T2 at the
    transit instead throws away the early curve: at L = 20 the window would
    open at 24 us, after 1.4 T1q, where only the tail of <n_1> is left.  In
    ideal conditions the qubit decays only by tunnelling through the array
    to the reset site, and the transit window stays.
    """
    if name == "T_star" or result.spec.conditions.ideal:
        return result.spec.transit_hops * result.spec.T_prop
    return result.spec.T_prop


def fit_window(name: str, result: SimulationResult, observable: str | None = None) -> tuple[float, float]:
    """The window of decay time ``name``: from :func:`fit_window_start` to the end of the run or of the resolved curve.

    Sampled trajectories (estimator 'sampled'): a removal sets a
    trajectory's leakage (or qubit population) to exactly 0, so late in the
    decay only a few trajectories still carry it; there the mean is 0 with
    sem 0 where none does, and where k do the sample sem ~ mean / sqrt(k)
    shrinks with downward fluctuations.  Weighted by these errors the late
    points pull tau down (at L = 3, realistic, 400 trajectories: T_star 33/J
    against 65/J for the same fit of the exact curve).  The window therefore
    ends before the first point whose mean is not above RESOLVED_SIGMAS (3)
    standard errors (~10 trajectories carrying it; the same rule cuts the
    coherence where |mean| no longer stands above its noise).  The branch
    estimator has no such zeros (every trajectory carries a continuous
    weight): in ideal conditions its window runs to the end of the run.
    Under realistic conditions its thermal rows are sampled or guided and
    carry the slow tail (a leakage stack blocked by a thermal excitation
    decays by itself), few of them: the window also ends where the curve has
    fallen DYNAMIC_RANGE (100) below its first value in the window (at
    L = 3, 150 mK, 200 trajectories the fit through the tail gave T_star =
    58/J against 140/J for the same fit of the exact curve, with a
    jackknife error of 2.4/J that did not see the rows not drawn).  With a
    thermal bath (:func:`equilibrium_fit`) the curve settles on a floor c > 0
    that the fit measures: the points on it are data, not unresolved zeros,
    so the window runs to the end of the run (a window ending at the first
    point not 3 sem above zero fell on the floor at random where c x
    trajectories < ~20, and the fits that lost the floor put c ~ 0 and tau
    ~40 % high; docs/physics.md §5.1).  Returns (t_start,
    t_end) in 1/J; t_end < t_start when the first point is already unresolved.
    ``observable``: the curve whose resolution ends the window (default: the
    one ``name`` is fitted to; the leakage lifetimes use P_star^(1) with
    T_star's window, :mod:`lru_mps.analysis.lifetimes`).
    """
    t = result.times
    start = fit_window_start(result, name)
    ideal = result.spec.conditions.ideal
    if (result.settings.estimator != "sampled" and ideal) or equilibrium_fit(name, result.spec):
        return start, float(t[-1])
    ms = result.observable(observable or DECAY_OBSERVABLE[name][0])
    inside = np.flatnonzero(t >= start)
    ok = ms.mean[inside] > RESOLVED_SIGMAS * ms.sem[inside]
    if ms.resolved is not None:  # a stratified thermal start: points a stratum carries through too few rows
        ok &= ms.resolved[inside]
    if result.settings.estimator != "sampled" and inside.size:
        # realistic branch runs: the thermal rows, sampled, carry the slow tail (a stack blocked by a thermal
        # excitation) and are few; past DYNAMIC_RANGE below the window's first value the tail is what is fitted,
        # and there the error of the mean misses the rare rows not drawn
        ok &= ms.mean[inside] >= ms.mean[inside[0]] / DYNAMIC_RANGE
    bad = inside[~ok]
    if bad.size == 0:
        return start, float(t[-1])
    return start, float(t[bad[0] - 1]) if bad[0] > 0 else -math.inf


def equilibrium_fit(name: str, spec) -> bool:
    """Whether decay time ``name`` is fitted to an equilibrium c (free) instead of zero: T_star and T1 with a
    thermal bath that heats (T > 0, finite T1), whose P_star^(L) and <n_1> settle at a thermal floor."""
    return name != "T2" and bool(getattr(spec, "thermal_bath", False)) and number_can_grow(spec)


def fit_decay(name: str, result: SimulationResult, curve=None, window=None) -> FitResult:
    """The fit of decay time ``name`` (T_star, T1 or T2) on ``result``'s time grid and window.

    A exp(-t/tau) over :func:`fit_window` ((L-1) T_prop to the end of the
    resolved part of the curve), weighted by the result's standard errors of
    the observable.  ``curve``: the values of the observable to fit instead
    of the result's mean (e.g. an exact reference curve on result.times,
    :func:`reference_curves`): the same estimator, window and weights
    applied to it, so that the two fitted times compare like with like.
    With a thermal bath, A exp(-t/tau) + c (:func:`equilibrium_fit`; the fit's ``offset`` is c).
    """
    obs, factor = DECAY_OBSERVABLE[name]
    ms = result.observable(obs)
    y = ms.mean if curve is None else np.asarray(curve, dtype=float)
    start, end = fit_window(name, result) if window is None else window
    return fit_exponential(result.times, factor * y, factor * ms.sem, t_start=start, t_end=end,
                           offset=equilibrium_fit(name, result.spec))


def reference_curves(references: dict) -> dict[str, np.ndarray]:
    """{observable: curve} from exact per-initial-state records, e.g. {init: references.lindblad.ReferenceResult}.

    Each record needs ``populations`` (T, L, 3) and ``coherence`` (T,), as a
    trajectory record; the observables are computed by the ensemble's own
    accumulator (one definition of P_star^(L), <n_1>, C, ...).
    """
    out = {}
    for init, rec in references.items():
        pops = np.asarray(rec.populations, dtype=float)
        acc = ObservableAccumulator(pops.shape[0], pops.shape[1])
        acc.add(pops, np.asarray(rec.coherence))
        out.update({obs: acc.get(obs).mean for obs, i in OBSERVABLE_INIT.items() if i == init})
    return out


def decay_times(result: SimulationResult) -> dict[str, DecayTime | None]:
    """T_prop (formula) and the fitted T_star, T1, T2 (None where not measured or not resolved).

    The error of a fitted time is the jackknife error over the result's
    trajectory blocks when it has at least 8 of them (the points of one
    curve come from the same trajectories and are correlated, so the fit's
    own error, which treats them as independent, is too small); with fewer
    blocks it is the larger of the fit error and the jackknife error (with a
    thermal bath the fitted floor's ``fit.offset_err`` likewise).  A
    decay that some leave-one-block-out fit cannot resolve is reported as
    not resolved (None) rather than with an infinite error.
    """
    out: dict[str, DecayTime | None] = {"T_prop": DecayTime(result.spec.T_prop, 0.0)}
    partial = result.leave_one_out()
    for name, (obs, _) in DECAY_OBSERVABLE.items():
        if OBSERVABLE_INIT[obs] not in result.blocks:
            out[name] = None
            continue
        fit = fit_decay(name, result)
        if not fit.ok:
            out[name] = None
            continue
        error = fit.tau_err
        if partial:
            # realistic branch runs: the leave-one-out fits over the full result's window (a data-dependent end
            # moving with each left-out block would add its own scatter to the error)
            same = None if result.settings.estimator == "sampled" or result.spec.conditions.ideal else \
                fit_window(name, result)
            fits = [fit_decay(name, r, window=same) for r in partial]
            taus = np.array([f.tau for f in fits])
            taus = taus[np.isfinite(taus)]
            B = len(partial)
            if len(taus) < B:
                # leaving out one block already loses the decay: not resolved by these data
                out[name] = None
                continue
            jack = float(jackknife_error(taus))
            error = jack if B >= 8 else max(jack, fit.tau_err)
            if equilibrium_fit(name, result.spec):  # the floor c's error too, by the same rule
                jack_c = float(jackknife_error(np.array([f.offset for f in fits])))
                fit.offset_err = jack_c if B >= 8 else max(jack_c, fit.offset_err)
        out[name] = DecayTime(fit.tau, error, fit)
    return out


def _finite(x):
    return float(x) if x is not None and math.isfinite(x) else None


def unresolved_reason(name: str, result: SimulationResult, times: dict | None = None) -> str | None:
    """Why decay time ``name`` of ``result`` is not resolved, and how many trajectories would resolve it (None where
    :func:`decay_times` resolves it or the observable was not run; ``times``: its :func:`decay_times` where the
    caller has them, so that the fits are not made twice).

    The fit needs its window's points to stand RESOLVED_SIGMAS standard
    errors above zero until the curve has decayed (:func:`fit_window`); the
    estimate is :func:`_trajectories_to_resolve`.
    """
    obs = DECAY_OBSERVABLE[name][0]
    if OBSERVABLE_INIT[obs] not in result.blocks or (times or decay_times(result)).get(name) is not None:
        return None
    t = result.times
    start, end = fit_window(name, result)
    ms = result.observable(obs)
    n = result.completed
    inside = np.flatnonzero(t >= start)[:3]
    m = np.abs(ms.mean[inside])
    if len(inside) < 3:
        return f"not resolved: the run ends before the fit window's third point (window from {start:.4g}/J)"
    if m[0] <= 0:
        return (f"not resolved: no trajectory carries the curve at the window's start "
                f"({time_to_us(start, result.spec.J_hz):.3g} us); "
                "run more trajectories or a longer array")
    need = _trajectories_to_resolve(ms.mean, ms.sem, np.flatnonzero(t >= start), n)
    at = f"{time_to_us(start, result.spec.J_hz):.3g} us"
    # what one evolution is: a disorder realization (the exact branch, ideal conditions) or a trajectory
    runs = "disorder realizations" if result.spec.conditions.ideal and result.settings.estimator != "sampled" \
        else "trajectories"
    fit = fit_decay(name, result)
    if end < start or np.count_nonzero((t >= start) & (t <= end)) < 3:
        why = f"the curve falls under {RESOLVED_SIGMAS:g} standard errors before the fit window (from {at}) has 3 points"
    elif not fit.ok:
        return (f"not resolved: the curve decays too little in the fit window ({at} to "
                f"{time_to_us(end, result.spec.J_hz):.3g} us) to tell its rate from zero; a longer run (or more "
                f"{runs}: ran {n:,}) resolves it")
    elif need > n:
        why = f"the fit window's first points (from {at}) stand less than {RESOLVED_SIGMAS:g} standard errors above zero"
    else:
        return (f"not resolved: a leave-one-block-out fit of its error loses the decay (few {runs} carry it); "
                f"more {runs} resolve it (ran {n:,}; try {2 * n:,})")
    return f"not resolved: {why}; at least about {max(need, n + 1):,} {runs} would resolve it (ran {n:,})"


def _trajectories_to_resolve(mean, sem, inside, n: int) -> int:
    """About how many trajectories put every window point (``inside``) until the curve has fallen to 1/e of its first
    value RESOLVED_SIGMAS standard errors above zero: a point of mean m and error s needs n (3 s / m)^2 (the error
    falls as 1/sqrt(n)); where the measured curve is already at or under 1/e, its value there is taken as m0/e and
    its error as the larger of the measured one and that of the last point that stood out; 20 % to spare."""
    m0 = float(mean[inside[0]])
    target = m0 / math.e
    below = inside[mean[inside] <= target]
    upto = inside[inside <= (below[0] if below.size else inside[-1])]
    worst = 0.0
    last_s = float(sem[inside[0]])
    for k in upto:
        m, s = float(mean[k]), float(sem[k])
        if m > target and s > 0:
            last_s = s
        m_eff = max(m, target)
        s_eff = max(s, last_s * math.sqrt(m_eff / max(m0, m_eff))) if m <= target else s
        worst = max(worst, (RESOLVED_SIGMAS * s_eff / m_eff) ** 2)
    return int(math.ceil(1.2 * n * worst))
