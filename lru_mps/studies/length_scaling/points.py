"""The length-scaling study's points: one record per condition (ideal, realistic) and array length L.

A point holds what its ensembles gave (times in 1/J): the fitted T_star, T1, T2 as (value, jackknife error)
(:func:`lru_mps.analysis.decay.decay_times`) with a reason beside each one not resolved, the leakage lifetimes
(:func:`lru_mps.analysis.lifetimes.leakage_lifetimes`), the ensemble curves (mean and error of the mean, NaN
where a point is not resolved, and the mask), the engines and the thermal strata; in ideal conditions also the
qubit's exact rates of each disorder realization (:func:`lru_mps.analysis.rates.qubit_rates`), at every length.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...analysis.decay import decay_times, unresolved_reason
from ...analysis.lifetimes import leakage_lifetimes
from ...run.result import OBSERVABLE_INIT
from ...run.thermal_sample import strata_for
from ...run.trajectories import engine_mix
from ..common import FITTED

#: the ensemble curves kept per condition and L (results.nc: mean, sem and the resolved mask)
CURVES = ("leakage_array", "leakage_site1", "qubit_population", "qubit_coherence")


@dataclass(frozen=True)
class Realizations:
    """The qubit's exact rates at one L, one entry per disorder realization: ``log_T1``, ``log_T2`` (ln(T J)),
    ``energy`` (the qubit mode's energy, J, rotating at wbar) and ``method`` ("exact" or "log-space": past the
    floating-point floor)."""

    log_T1: np.ndarray
    log_T2: np.ndarray
    energy: np.ndarray
    method: tuple

    @classmethod
    def of(cls, rates) -> Realizations:
        """From :func:`~lru_mps.analysis.rates.qubit_rates` of each realization."""
        return cls(np.array([-r.log_gamma1 for r in rates]), np.array([-r.log_gamma2 for r in rates]),
                   np.array([r.energy for r in rates]), tuple(r.method for r in rates))


@dataclass(frozen=True)
class ScalingPoint:
    """One condition at one length ``L``.  ``engine``: the engine of its (last) ensemble, "-" where it ran none
    (L over ``ensemble_max_length``); ``fits`` {name: (value, error)} in 1/J and ``reasons`` {name: why it is not
    resolved}; ``lives``: the leakage lifetimes (None: no leakage start); ``curves`` {name: (mean, sem,
    resolved)} over the stored times ``times`` (1/J); ``engine_mix`` {engine: rows} summed over its ensembles;
    ``stated_weight``: the stated weight of its thermal strata (None: no start by strata); ``rates``: the
    per-realization rates (ideal conditions)."""

    condition: str
    L: int
    engine: str = "-"
    fits: dict = field(default_factory=dict)
    reasons: dict = field(default_factory=dict)
    lives: dict | None = None
    curves: dict = field(default_factory=dict)
    times: np.ndarray | None = None
    engine_mix: dict = field(default_factory=dict)
    stated_weight: float | None = None
    rates: Realizations | None = None


class PointBuilder:
    """A point's numbers gathered from its ensembles in turn (a later ensemble's number replaces an earlier
    one's, as each covers its own initial states); :meth:`point` gives the record."""

    def __init__(self, condition: str, L: int, rates: Realizations | None):
        self.condition, self.L, self.rates = condition, L, rates
        self.engine, self.fits, self.reasons, self.lives, self.curves = "-", {}, {}, None, {}
        self.times, self.mix, self.stated = None, {}, None

    def add(self, spec, res, time_points: int) -> None:
        """One ensemble ``res`` of the point (``spec``: its array; ``time_points``: the stored times)."""
        self.engine = res.settings.engine
        strata = [strata_for(spec, res.settings, i) for i in res.settings.inits]
        if any(s is not None for s in strata):
            self.stated = max(self.stated or 0.0, max(s.stated_weight for s in strata if s is not None))
        mix = engine_mix(res.diagnostics) or {res.settings.engine: res.completed * len(res.settings.inits)}
        for k, v in mix.items():
            self.mix[k] = self.mix.get(k, 0) + v
        self.times = res.times
        for name in CURVES:
            if OBSERVABLE_INIT[name] in res.blocks:
                ms = res.observable(name)
                ok = np.ones(time_points, dtype=bool) if ms.resolved is None else ms.resolved
                self.curves[name] = (np.where(ok, ms.mean, np.nan), np.where(ok, ms.sem, np.nan), ok)
        times = decay_times(res)
        for name, d in times.items():
            if name in FITTED and d is not None:
                self.fits[name] = (d.value, d.error)
            elif name in FITTED:
                self.reasons[name] = unresolved_reason(name, res, times)
        if "leakage" in res.blocks:
            self.lives = leakage_lifetimes(res)

    def point(self) -> ScalingPoint:
        return ScalingPoint(self.condition, self.L, self.engine, self.fits, self.reasons, self.lives, self.curves,
                            self.times, self.mix, self.stated, self.rates)
