"""Decay times from ensemble curves (docs/physics.md §8).

T_prop = pi / (2 J_prop) with J_prop = 2 J^2 / Ubar.  T_star, T1 and T2 are
fits of A exp(-t/tau), A free, to P_star^(L)(t), <n_1>(t) and 2 C(t) over
the late-time window t > (L-1) T_prop up to the end of the run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..run.result import OBSERVABLE_INIT, SimulationResult
from .fitting import FitResult, fit_exponential
from ..physics.units import time_to_us

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

    def as_json(self, J_hz: float) -> dict:
        return {
            "value_J": _finite(self.value),
            "error_J": _finite(self.error),
            "value_us": _finite(time_to_us(self.value, J_hz)),
            "error_us": _finite(time_to_us(self.error, J_hz)),
        }


def fit_window_start(result: SimulationResult) -> float:
    """Start of the late-time window, (L-1) T_prop (units of 1/J)."""
    return (result.spec.L - 1) * result.spec.T_prop


def _fit(result: SimulationResult, obs: str, factor: float) -> FitResult:
    ms = result.observable(obs)
    return fit_exponential(result.times, factor * ms.mean, factor * ms.sem, t_start=fit_window_start(result))


def decay_times(result: SimulationResult) -> dict[str, DecayTime | None]:
    """T_prop (formula) and the fitted T_star, T1, T2 (None where not measured or not resolved).

    The error of a fitted time is the jackknife error over the result's
    trajectory blocks when it has at least 8 of them (the points of one
    curve come from the same trajectories and are correlated, so the fit's
    own error, which treats them as independent, is too small); with fewer
    blocks it is the larger of the fit error and the jackknife error.  A
    decay that some leave-one-block-out fit cannot resolve is reported as
    not resolved (None) rather than with an infinite error.
    """
    out: dict[str, DecayTime | None] = {"T_prop": DecayTime(result.spec.T_prop, 0.0)}
    partial = result.leave_one_out()
    for name, (obs, factor) in DECAY_OBSERVABLE.items():
        if OBSERVABLE_INIT[obs] not in result.blocks:
            out[name] = None
            continue
        fit = _fit(result, obs, factor)
        if not fit.ok:
            out[name] = None
            continue
        error = fit.tau_err
        if partial:
            taus = np.array([_fit(r, obs, factor).tau for r in partial])
            taus = taus[np.isfinite(taus)]
            B = len(partial)
            if len(taus) < B:
                # leaving out one block already loses the decay: not resolved by these data
                out[name] = None
                continue
            jack = math.sqrt((B - 1) / B * np.sum((taus - taus.mean()) ** 2))
            error = jack if B >= 8 else max(jack, fit.tau_err)
        out[name] = DecayTime(fit.tau, error, fit)
    return out


def _finite(x):
    return float(x) if x is not None and math.isfinite(x) else None
