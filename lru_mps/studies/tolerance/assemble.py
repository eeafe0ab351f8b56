"""The tolerance study's results from its points: the dataset (``results.nc``) and the summary (``summary.json``).

The points (:class:`~lru_mps.studies.tolerance.points.TolerancePoint`, one per error kind, length L and spread S)
are laid on the dataset's axes (kind, L, spread); times in 1/J (and us in the summary); per kind and L the
doubling spread S_2 of T_star and of tau_L: the fit T(S) = T0 (1 + (S/S_2)^2) of the onset
(:func:`lru_mps.analysis.tolerance.doubling_fit`) and the model-free crossing of 2 T0
(:func:`lru_mps.analysis.tolerance.doubling_crossing`), in the kind's units (J, MHz, J_prop; the hopping spread
a fraction).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import xarray as xr

from ...analysis.numbers import t2_flags
from ...analysis.tolerance import doubling_crossing, doubling_fit, fit_points, which_holds
from ...errors import require
from ...physics.units import time_to_us
from ..base import finite_or_none, parameters_json, time_json
from ..common import DECAYS, dataset_attrs
from ..lifetimes import LifetimeGrid, limit_json
from .plan import FRACTIONS, NOTES, TolerancePlan, units_of
from .points import nan_or


@dataclass(frozen=True)
class PointArrays:
    """The points on the dataset's axes (kind, L, spread): ``tau`` {decay time: (K, NL, P, 2) value, error in
    1/J}, ``lives`` (a :class:`~lru_mps.studies.lifetimes.LifetimeGrid`), ``mixes`` [kind][L][spread] {engine:
    rows} and ``reasons`` {(decay time, kind, L, spread) indices: why it is not resolved}."""

    tau: dict
    lives: LifetimeGrid
    mixes: list
    reasons: dict

    @classmethod
    def of(cls, plan: TolerancePlan, points) -> PointArrays:
        K, NL, P = len(plan.kinds), len(plan.lengths), plan.n_spreads
        out = cls({q: np.full((K, NL, P, 2), np.nan) for q in DECAYS}, LifetimeGrid((K, NL, P)),
                  [[[{} for _ in range(P)] for _ in plan.lengths] for _ in plan.kinds], {})
        for p in points:
            ki, li, pi = plan.kinds.index(p.kind), plan.lengths.index(p.L), p.spread
            out.mixes[ki][li][pi] = p.engine_mix
            out.reasons.update({(q, ki, li, pi): r for q, r in p.reasons.items()})
            for q, value in p.times.items():
                out.tau[q][ki, li, pi] = value
            out.lives.put((ki, li, pi), p.lives)
        return out


def _spread_values(plan: TolerancePlan) -> np.ndarray:
    """S_J (K, P): the spreads of each kind in its own unit (J, or a fraction: FRACTIONS; nan past its spreads)."""
    S_J = np.full((len(plan.kinds), plan.n_spreads), np.nan)
    for ki, k in enumerate(plan.kinds):
        S_J[ki, : len(plan.spreads[k])] = [x for _, x in plan.spreads[k]]
    return S_J


def assemble(cfg: dict, plan: TolerancePlan, points) -> tuple[xr.Dataset, dict]:
    """(dataset, summary) of the study's points (every kind, length and spread)."""
    grid = PointArrays.of(plan, points)
    S_J = _spread_values(plan)
    ratio = float(cfg.get("fit_ratio", math.inf))
    require(ratio > 1, "fit_ratio", ratio, "a number > 1 (inf: every spread)")
    fits = _doubling_fits(plan, grid, S_J, ratio)
    return _dataset(cfg, plan, grid, fits, S_J), _summary(cfg, plan, grid, fits, ratio)


def _doubling_fits(plan: TolerancePlan, grid: PointArrays, S_J: np.ndarray, ratio: float) -> dict:
    """{"T_star" or "leakage_lifetime_array": [kind][L] the doubling fit, with its ``fit_spreads`` and
    ``crossing``}: the fit over the spreads up to the first where the time reaches ``ratio`` x its value at S = 0."""
    K, NL = len(plan.kinds), len(plan.lengths)
    tau = {**grid.tau, "leakage_lifetime_array": grid.lives.array("leakage_lifetime_array")}  # its doubling too
    fits = {q: [[None] * NL for _ in plan.kinds] for q in ("T_star", "leakage_lifetime_array")}
    for q in fits:
        for ki in range(K):
            n = len(plan.spreads[plan.kinds[ki]])
            for li in range(NL):
                m = fit_points(tau[q][ki, li, :n, 0], ratio)
                fits[q][ki][li] = doubling_fit(S_J[ki, :m], tau[q][ki, li, :m, 0], tau[q][ki, li, :m, 1],
                                               s_max=S_J[ki, n - 1])
                fits[q][ki][li]["fit_spreads"] = m
                fits[q][ki][li]["crossing"] = doubling_crossing(S_J[ki, :n], tau[q][ki, li, :n, 0],
                                                                tau[q][ki, li, :n, 1])
    return fits


def _dataset(cfg: dict, plan: TolerancePlan, grid: PointArrays, fits: dict, S_J: np.ndarray) -> xr.Dataset:
    """results.nc: every point's times (1/J) on (kind, L, spread), the doubling fits on (kind, L), the spreads of
    each kind in its units."""
    spec0, kinds, lengths, tau, odds = plan.spec0, plan.kinds, plan.lengths, grid.tau, plan.odds
    J_hz, J_prop = spec0.J_hz, spec0.J_prop
    K, NL, P = len(kinds), len(lengths), plan.n_spreads
    frac = np.array([k in FRACTIONS for k in kinds])
    S_E = np.where(frac[:, None], np.nan, S_J)  # the energies only
    leak_own = 0.5 * spec0.conditions.T1q  # the lifetime of |2> by its own decay: T_star cannot exceed it
    dims = ("kind", "L", "spread")
    data = {}
    for q in DECAYS:
        data[f"{q}_J"] = (dims, tau[q][..., 0], {"units": "1/J"})
        data[f"{q}_error_J"] = (dims, tau[q][..., 1], {"units": "1/J"})
    data.update(grid.lives.data_vars(dims))
    for q, short in (("T_star", "T_star"), ("leakage_lifetime_array", "tau_L")):
        for name, key in (("T0_J", "T0"), ("a_per_J2", "a"), ("doubling_J", "value"), ("doubling_error_J", "error"),
                          ("chi2_red", "chi2_red")):
            arr = np.array([[nan_or(fits[q][ki][li][key]) for li in range(NL)] for ki in range(K)])
            data[f"{short}_fit_{name}"] = (("kind", "L"), arr)
        data[f"{short}_fit_spreads"] = (("kind", "L"), np.array(
            [[int(fits[q][ki][li]["fit_spreads"]) for li in range(NL)] for ki in range(K)]))
        data[f"{short}_doubling_is_bound"] = (("kind", "L"), np.array(
            [[int(fits[q][ki][li]["bound"] == "lower") for li in range(NL)] for ki in range(K)]))
        for name, key in (("crossing_J", "value"), ("crossing_error_J", "error")):  # the model-free estimate
            data[f"{short}_{name}"] = (("kind", "L"), np.array(
                [[nan_or(fits[q][ki][li]["crossing"][key]) for li in range(NL)] for ki in range(K)]))
        data[f"{short}_doubling_holds"] = (("kind", "L"), np.array(
            [[str(which_holds(fits[q][ki][li], fits[q][ki][li]["crossing"])["estimate"]) for li in range(NL)]
             for ki in range(K)]), {"long_name": "which doubling estimate holds: fit, crossing, bound or None"})
    coords = {
        "kind": ("kind", np.array(kinds, dtype=str)),
        "L": ("L", np.array(lengths)),
        "spread": ("spread", np.arange(P), {"long_name": "index of the spread value (per kind: spread_J)"}),
        "spread_J": (("kind", "spread"), S_E, {"units": "J", "long_name": "standard deviation S of the error"}),
        "spread_MHz": (("kind", "spread"), S_E * J_hz / 1e6, {"units": "MHz", "long_name": "S/2pi"}),
        "spread_Jprop": (("kind", "spread"), S_E / J_prop, {"units": "J_prop", "long_name": "S / J_prop"}),
    }
    if frac.any():  # the fraction kinds (hopping_spread), nan for the energies
        coords["spread_fraction"] = (("kind", "spread"), np.where(frac[:, None], S_J, np.nan),
                                     {"units": "1", "long_name": "relative standard deviation X"})
    attrs = dataset_attrs(spec0, cfg, J_prop_J=J_prop, leakage_thermal_odds=odds,
                          T_leak_own_J=finite_or_none(leak_own) or "inf",
                          doubling_units="J (hopping_spread: a fraction)")
    attrs.pop("L", None)
    return xr.Dataset(data, coords=coords, attrs=attrs)


def _summary(cfg: dict, plan: TolerancePlan, grid: PointArrays, fits: dict, ratio: float) -> dict:
    """summary.json: per kind its spreads (text and units) and per length every point's times, lifetimes and
    engines and the two doubling spreads."""
    spec0, kinds, lengths, spreads, tau = plan.spec0, plan.kinds, plan.lengths, plan.spreads, grid.tau
    J_hz, J_prop, odds = spec0.J_hz, spec0.J_prop, plan.odds
    c = spec0.conditions
    leak_own = 0.5 * c.T1q  # the lifetime of |2> by its own decay: T_star cannot exceed it
    summary = {
        "study": "tolerance",
        "kinds": kinds,
        "lengths": lengths,
        "conditions": "ideal" if c.ideal else "realistic",
        "J_prop": {"value_J": J_prop, "value_MHz": J_prop * J_hz / 1e6},
        "T_leak_own": limit_json(leak_own, J_hz),
        "note": {**NOTES,
                 "doubling": "T_star(S) = T0 (1 + (S/S_2)^2) fitted per kind and L (weights: the T_star errors, "
                             "absolute sigma) over the spreads up to the first where T_star reaches fit_ratio x "
                             "T_star(0) (fit_spreads of them); S_2 is where T_star doubles; bound = 'lower': no "
                             "doubling within the range, value = the largest spread; crossing: model-free, where "
                             "T_star first reaches 2 T_star(0) (linear interpolation between the bracketing "
                             "spreads); where chi2_red >> 1 the form does not hold and the crossing is the answer; "
                             "through 2 spreads (dof 0) the fit has no error (error_reason); holds: which of the "
                             "fit and the crossing to read, and why",
                 "common_random_numbers": "the same seed at every spread: the same box draws and event streams",
                 "ceiling": "under hardware decay T_star cannot exceed T_leak_own = T1q/2: where 2 T_star(0) "
                            "comes near it, T_star cannot double and the doubling spread is only bounded"},
        "trajectories": int(cfg["trajectories"]),
        "leakage_thermal_odds": odds,
        "fit_ratio": ratio,
        "parameters": parameters_json(spec0, {"L": "swept: see lengths"}, seed=int(cfg["seed"])),
    }
    us = time_to_us(1.0, J_hz)  # the bounds of a T2 in us: 2 T1 and the single transmon's T2 (realistic)
    T2q_us = c.T2q * us if not c.ideal and math.isfinite(c.T2q) else None
    for ki, kind in enumerate(kinds):
        n = len(spreads[kind])
        units = units_of(kind, J_hz, J_prop)
        entry = {"spreads": [t for t, _ in spreads[kind]],
                 **{f"spreads_{u}": [x * f for _, x in spreads[kind]] for u, f in units}, "by_length": []}
        for li, L in enumerate(lengths):
            row = {"L": L}
            for q in DECAYS:
                row[q] = [time_json(tau[q][ki, li, p, 0], tau[q][ki, li, p, 1], J_hz, grid.reasons.get((q, ki, li, p)),
                                    flags=t2_flags(*(tau["T2"][ki, li, p] * us), *(tau["T1"][ki, li, p] * us),
                                                   T2q_us, "the single transmon's T2 limit T2q") if q == "T2"
                                    else None)
                          for p in range(n)]
            row.update(grid.lives.lists([(ki, li, p) for p in range(n)], J_hz))
            row["T_star_doubling"] = _doubling_json(fits["T_star"][ki][li], units)
            row["tau_L_doubling"] = _doubling_json(fits["leakage_lifetime_array"][ki][li], units)
            row["engine_mix"] = grid.mixes[ki][li][:n]
            entry["by_length"].append(row)
        summary[kind] = entry
    return summary


def _doubling_json(fit: dict, units) -> dict:
    """The fit's S_2 (in the kind's units) as {"value_J", "error_J", "value_MHz", ..., "chi2_red", "bound"}."""
    v, e = finite_or_none(fit["value"]), finite_or_none(fit["error"])
    out = {}
    for unit, f in units:
        out[f"value_{unit}"] = None if v is None else v * f
        out[f"error_{unit}"] = None if e is None else e * f
    out["error_reason"] = fit.get("error_reason") if e is None else None  # why a null error is null
    out["chi2_red"] = finite_or_none(fit["chi2_red"])
    out["dof"] = fit["dof"]
    out["bound"] = fit["bound"]
    out["fit_spreads"] = fit.get("fit_spreads")
    cross = fit.get("crossing")
    if cross is not None:  # the model-free crossing of 2 T0, in the same units
        cv, ce = finite_or_none(cross["value"]), finite_or_none(cross["error"])
        out["crossing"] = {**{f"value_{u}": None if cv is None else cv * f for u, f in units},
                           **{f"error_{u}": None if ce is None else ce * f for u, f in units},
                           "bound": cross["bound"]}
    out["holds"] = which_holds(fit, cross)  # which of the fit and the crossing to read, and why
    out["T0_J"] = finite_or_none(fit["T0"])
    out["T0_error_J"] = finite_or_none(fit["T0_error"])
    _explain_nulls(out, fit)
    if out.get("crossing") is not None:
        _explain_nulls(out["crossing"], {"error_reason": "the crossing is not resolved (no spread's value reaches "
                                                         "twice the first, or the bracketing values have no error)"})
    return out


def _explain_nulls(out: dict, fit: dict) -> None:
    """A reason beside each null of a doubling's JSON (``<key>_reason``; the values' keys unchanged)."""
    why = {"error": fit.get("error_reason") or "no error: the fit did not resolve it",
           "value": fit.get("message") or "no doubling resolved: the values do not fit the onset (too few spreads)",
           "chi2_red": f"no degree of freedom: the fit goes through {fit.get('points', 'its')} points",
           "bound": "not a bound: the values double within the range",
           "T0": "no T0: the fit did not run (too few resolved spreads)"}
    for key, value in list(out.items()):
        if value is None and f"{key}_reason" not in out and not key.endswith("_reason"):
            out[f"{key}_reason"] = why.get(key.split("_")[0] if not key.startswith("T0") else "T0",
                                           "not there for this fit")

