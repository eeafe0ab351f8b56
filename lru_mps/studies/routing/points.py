"""The routing study's points: one record per start site and condition, and one per condition of the baseline.

A point holds what its ensemble gave, times in 1/J: the fitted T_star, T1, T2 as (value, jackknife error)
(:func:`lru_mps.analysis.decay.decay_times`), the leakage lifetimes
(:func:`lru_mps.analysis.lifetimes.leakage_lifetimes`; in ideal conditions on a grid the integrals up to
t_final, :func:`lru_mps.analysis.routing.window_lifetimes`) and a reason beside each time it lacks; in ideal
conditions T1 and T2 are the typical values of the exact N = 1 rates of the same realizations
(:func:`lru_mps.analysis.routing.typical_time`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ...analysis.decay import decay_times, unresolved_reason
from ...analysis.lifetimes import leakage_lifetimes
from ...analysis.routing import window_lifetimes
from ..common import FITTED

#: why an ideal grid point has no T_star (:func:`lru_mps.analysis.routing.window_lifetimes`)
NO_T_STAR = ("ideal conditions on a grid: the ensemble's leakage decays slower than any exponential (rare, nearly "
             "trapped stacks), so a fitted T_star would be a number of the window; the leakage lifetimes are the "
             "integrals up to t_final (lower bounds)")


@dataclass(frozen=True)
class RoutingPoint:
    """One coding site of one grid under one condition (indices into the plan's grids, the dataset's site order and
    the conditions).  ``coords``: its (row, col) on the grid; ``ensemble_site``: the site whose ensemble it carries
    (its class's first site, itself where it is one); ``run``: False where a temperature > 0 left its layout out
    (``reasons`` then says why for every time); ``fits``: {name: (value, error)} in 1/J of the times resolved;
    ``lives``: the leakage lifetimes (None: not run); ``thermal_mass_dropped``: the Gibbs mass of the thermal
    starts the sector engine cannot hold (nan: every start fits); ``typical`` (ideal conditions only): the typical
    T1 and T2 of the exact rates, {"T1_typical": (value, error), "T2_typical": ...} in 1/J, and
    ``rates_under_floor``: how many realizations had a rate under the round-off floor (those values are lower
    bounds then)."""

    grid: int
    site: int
    condition: int
    coords: tuple[int, int]
    ensemble_site: int
    run: bool = False
    fits: dict = field(default_factory=dict)
    lives: dict | None = None
    reasons: dict = field(default_factory=dict)
    thermal_mass_dropped: float = math.nan
    typical: dict | None = None
    rates_under_floor: int | None = None


@dataclass(frozen=True)
class BaselinePoint:
    """One L = 3 array per qubit under one condition (an index into the conditions): ``fits``, ``lives`` and
    ``reasons`` as a :class:`RoutingPoint`'s (ideal T1, T2: the typical exact rates, as on the grids)."""

    condition: int
    fits: dict
    lives: dict | None
    reasons: dict


def ensemble_numbers(res) -> tuple[dict, dict, dict]:
    """(fits, lives, reasons) of one ensemble.  In ideal conditions on a grid the leakage lifetimes are the
    integrals up to t_final (lower bounds: the ensemble's leakage decays slower than exponential, no T_star;
    :func:`~lru_mps.analysis.routing.window_lifetimes`) and T1, T2 are left to the exact rates (the caller's)."""
    spec = res.spec
    grid_ideal = spec.conditions.ideal and spec.geometry is not None
    times = decay_times(res)
    fits, reasons = {}, {}
    for name, d in times.items():
        if name not in FITTED or (grid_ideal and name in ("T1", "T2")):
            continue
        if grid_ideal and name == "T_star":
            reasons[name] = NO_T_STAR
        elif d is not None:
            fits[name] = (d.value, d.error)
        else:
            reasons[name] = unresolved_reason(name, res, times)
    return fits, window_lifetimes(res) if grid_ideal else leakage_lifetimes(res), reasons
