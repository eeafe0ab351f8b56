"""The tolerance study's points: one record per error kind, length L and spread S.

A point holds what its ensemble (the three initial states, one seed at every spread) gave, times in 1/J: T_star,
T_prop, T1, T2 as (value, jackknife error) (:func:`lru_mps.analysis.decay.decay_times`; nan where not finite), the
leakage lifetimes (:func:`lru_mps.analysis.lifetimes.leakage_lifetimes`), the engines its rows ran on, and a
reason beside each decay time it lacks.  S = 0 is one ensemble for every kind: its points share the numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...analysis.decay import decay_times, unresolved_reason
from ...analysis.lifetimes import leakage_lifetimes
from ...run.trajectories import engine_mix
from ..base import finite_or_none
from ..common import DECAYS


@dataclass(frozen=True)
class TolerancePoint:
    """One error ``kind`` at length ``L`` and the kind's ``spread``-th spread (an index into the plan's spreads):
    ``times`` {name: (value, error)} in 1/J of the decay times resolved, ``lives`` the leakage lifetimes,
    ``engine_mix`` {engine: rows} and ``reasons`` {name: why it is not resolved}."""

    kind: str
    L: int
    spread: int
    times: dict
    lives: dict
    engine_mix: dict
    reasons: dict


def nan_or(x) -> float:
    v = finite_or_none(x)
    return math.nan if v is None else v


def ensemble_numbers(res) -> tuple[dict, dict, dict, dict]:
    """(times, lives, engine mix, reasons) of one ensemble, as a :class:`TolerancePoint` holds them."""
    mix = engine_mix(res.diagnostics) or {res.settings.engine: res.completed * len(res.settings.inits)}
    times = decay_times(res)
    found = {q: (d.value, d.error) for q, d in times.items() if d is not None}
    lives = leakage_lifetimes(res)
    why = {q: unresolved_reason(q, res, times) for q in DECAYS if q != "T_prop" and q not in found}
    return {q: (nan_or(v), nan_or(e)) for q, (v, e) in found.items() if q in DECAYS}, lives, mix, why
