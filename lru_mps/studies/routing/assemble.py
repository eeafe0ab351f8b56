"""The routing study's results from its points: the dataset (``results.nc``) and the summary (``summary.json``).

The points (:class:`~lru_mps.studies.routing.points.RoutingPoint`, one per coding site of each grid and
condition, and the baseline's :class:`~lru_mps.studies.routing.points.BaselinePoint`) are laid on the dataset's
axes (grid, site, condition); times in 1/J, and in us beside them in the summary; the verdict of
:func:`lru_mps.analysis.routing.routing_verdict` (routing pays at a site whose ideal tau_L is under T1q/2) and, at
each temperature of the realistic conditions, :func:`lru_mps.analysis.routing.removal_verdict` (the LRUs end more
than half of a site's leakage before the hardware) with each layout's thermal mass left out (``by_temperature``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import xarray as xr

from ...analysis.numbers import t2_flags
from ...analysis.routing import ETA_PAYS, removal_verdict, routing_verdict
from ...physics.units import to_kelvin
from ..base import finite_or_none, parameters_json, time_json
from ..common import FITTED, dataset_attrs, spec_of
from ..lifetimes import LifetimeGrid, limit_json
from .plan import VERDICT, RoutingPlan

#: the typical exact-rate times of each coding site (ideal conditions), in the dataset and summary
TYPICAL = ("T1_typical", "T2_typical")


@dataclass(frozen=True)
class GridArrays:
    """The points on the dataset's axes (grid, site, condition): ``fits`` {name: (..., 2) value, error in 1/J},
    ``lives`` (a :class:`~lru_mps.studies.lifetimes.LifetimeGrid`), ``typical`` {name: (grid, site, 2)},
    ``floored`` (grid, site), ``run``, ``dropped`` (the thermal mass left out), ``coords`` (grid, site, 2: row,
    col; -1 past a grid's sites), ``ensemble_of`` (grid, site) and ``reasons`` {(name, grid, site, condition):
    why}."""

    fits: dict
    lives: LifetimeGrid
    typical: dict
    floored: np.ndarray
    run: np.ndarray
    dropped: np.ndarray
    coords: np.ndarray
    ensemble_of: np.ndarray
    reasons: dict

    @classmethod
    def of(cls, plan: RoutingPlan, points) -> GridArrays:
        shape = (len(plan.grids), plan.n_sites, len(plan.conds))
        out = cls(fits={k: np.full(shape + (2,), np.nan) for k in FITTED}, lives=LifetimeGrid(shape),
                  typical={k: np.full(shape[:2] + (2,), np.nan) for k in TYPICAL},
                  floored=np.zeros(shape[:2], dtype=int), run=np.zeros(shape, dtype=bool),
                  dropped=np.full(shape, np.nan),  # Gibbs mass of the thermal starts the sector engine cannot hold
                  coords=np.full(shape[:2] + (2,), -1, dtype=int), ensemble_of=np.full(shape[:2], -1, dtype=int),
                  reasons={})
        for p in points:
            index, site = (p.grid, p.site, p.condition), (p.grid, p.site)
            for name, value in p.fits.items():
                out.fits[name][index] = value
            out.lives.put(index, p.lives)
            out.reasons.update({(name,) + index: why for name, why in p.reasons.items()})
            out.run[index] = p.run
            out.dropped[index] = p.thermal_mass_dropped
            out.coords[site] = p.coords
            out.ensemble_of[site] = p.ensemble_site
            if p.typical is not None:
                for name, value in p.typical.items():
                    out.typical[name][site] = value
            if p.rates_under_floor is not None:
                out.floored[site] = p.rates_under_floor
        return out


@dataclass(frozen=True)
class BaselineArrays:
    """The baseline's points on the condition axis: ``fits``, ``lives`` and ``reasons`` {(name, condition): why}."""

    fits: dict
    lives: LifetimeGrid
    reasons: dict

    @classmethod
    def of(cls, plan: RoutingPlan, points) -> BaselineArrays:
        out = cls({k: np.full((len(plan.conds), 2), np.nan) for k in FITTED}, LifetimeGrid((len(plan.conds),)), {})
        for p in points:
            for name, value in p.fits.items():
                out.fits[name][p.condition] = value
            out.lives.put((p.condition,), p.lives)
            out.reasons.update({(name, p.condition): why for name, why in p.reasons.items()})
        return out


def assemble(cfg: dict, plan: RoutingPlan, points, baseline) -> tuple[xr.Dataset, dict]:
    """(dataset, summary) of the study's points (``points``: every coding site of every grid under every
    condition; ``baseline``: the L = 3 array's point under each condition)."""
    grid, base = GridArrays.of(plan, points), BaselineArrays.of(plan, baseline)
    spec0 = spec_of(cfg, length=3, conditions="realistic")  # (the hardware's T1q: the limit T1q/2)
    limit = 0.5 * spec0.conditions.T1q if math.isfinite(spec0.conditions.T1q) else math.nan
    ds = _dataset(cfg, plan, grid, base, spec0, limit)
    ideal = [i for i, c in enumerate(plan.conds) if c[1] == "ideal"]
    verdict = grid.lives.array(VERDICT)
    taus = [verdict[gi, :R * C, ideal[0], 0] if ideal else [] for gi, (R, C) in enumerate(plan.grids)]
    J_hz = spec0.J_hz
    summary = {
        "study": "routing",
        "grids": [g.name for g in plan.layouts],
        "grid_sizes": [f"{R}x{C}" for R, C in plan.grids],
        "conditions": [c[0] for c in plan.conds],
        "lrus": cfg["lrus"],
        "lru_arm": int(cfg["lru_arm"]),
        "n_sites": [g.L for g in plan.layouts],
        "n_lrus": [g.resets for g in plan.layouts],
        "symmetry": {"used": bool(plan.symmetric), "reason": plan.symmetric.reason,
                     "classes": [int(len(set(grid.ensemble_of[gi, :R * C]))) for gi, (R, C) in enumerate(plan.grids)]},
        "sites": _sites_json(plan, grid, spec0, bool(ideal)),
        "baseline": {label: {**{k: time_json(base.fits[k][ci, 0], base.fits[k][ci, 1], J_hz,
                                             base.reasons.get((k, ci))) for k in FITTED},
                             **base.lives.as_json((ci,), J_hz)} for ci, (label, _, _) in enumerate(plan.conds)},
        "T_leak_own": limit_json(limit, J_hz),
        "routing": {**routing_verdict(taus, limit, [f"{R}x{C}" for R, C in plan.grids]),
                    "criterion": "the median coding site's ideal leakage lifetime tau_L under T1q/2"}
        if ideal else None,
        "parameters": parameters_json(spec0, {"L": "one per grid: see n_sites"},
                                      realizations=int(cfg["realizations"]), trajectories=int(cfg["trajectories"]),
                                      seed=int(cfg["seed"]), thermal_max_sites=int(cfg["thermal_max_sites"])),
    }
    _routing_reasons(summary, bool(ideal))
    summary["by_temperature"] = _by_temperature(plan, grid, base)
    return ds, summary


def _dataset(cfg: dict, plan: RoutingPlan, grid: GridArrays, base: BaselineArrays, spec0, limit: float) -> xr.Dataset:
    """results.nc: every point's times (1/J) on (grid, site, condition), the typical exact-rate times per site,
    the baseline's on (condition), the sites' coordinates and ensembles."""
    dims = ("grid", "site", "condition")
    data = {f"{k}_J": (dims, grid.fits[k][..., 0], {"units": "1/J"}) for k in FITTED}
    data.update({f"{k}_error_J": (dims, grid.fits[k][..., 1], {"units": "1/J"}) for k in FITTED})
    data.update(grid.lives.data_vars(dims))
    for k, a in grid.typical.items():
        data[f"{k}_J"] = (("grid", "site"), a[..., 0], {"units": "1/J"})
        data[f"{k}_error_J"] = (("grid", "site"), a[..., 1], {"units": "1/J"})
    data["rates_under_floor"] = (("grid", "site"), grid.floored, {"units": "realizations"})
    data["run"] = (dims, grid.run.astype(int))
    data["thermal_mass_dropped"] = (dims, grid.dropped, {"description": "Gibbs mass of the thermal starts the "
                                                         "sector engine cannot hold, left out (NaN: every start "
                                                         "fits); every population within it of the full ensemble"})
    for k in FITTED:
        data[f"baseline_{k}_J"] = (("condition",), base.fits[k][:, 0], {"units": "1/J"})
        data[f"baseline_{k}_error_J"] = (("condition",), base.fits[k][:, 1], {"units": "1/J"})
    for k, v in base.lives.data_vars(("condition",)).items():
        data[f"baseline_{k}"] = v
    coords = grid.coords
    return xr.Dataset(data, coords={
        "grid": [g.name for g in plan.layouts], "site": np.arange(coords.shape[1]),
        "condition": [c[0] for c in plan.conds],
        "row": (("grid", "site"), coords[..., 0]), "col": (("grid", "site"), coords[..., 1]),
        "ensemble_site": (("grid", "site"), grid.ensemble_of),
        "grid_rows": ("grid", [R for R, _ in plan.grids]), "grid_cols": ("grid", [C for _, C in plan.grids]),
        "n_sites": ("grid", [g.L for g in plan.layouts]), "n_lrus": ("grid", [g.resets for g in plan.layouts])},
        attrs=dataset_attrs(spec0, cfg, T_leak_own_J=finite_or_none(limit) or "inf", lrus=cfg["lrus"],
                            lru_arm=int(cfg["lru_arm"])))


def _sites_json(plan: RoutingPlan, grid: GridArrays, spec0, ideal: bool) -> list:
    """The summary's ``sites``: per grid, per coding site, its coordinates (from 1), the site whose ensemble it
    carries, each condition's times and lifetimes (or why it did not run) and, with ideal conditions, its
    typical exact-rate T1 and T2."""
    J_hz = spec0.J_hz
    us = 1e6 / (2 * np.pi * J_hz)  # us per 1/J
    real = next((c for c in plan.conds if c[1] != "ideal"), None)
    T2q_us = spec0.conditions.T2q * us if real else None  # (spec0: the realistic hardware)
    fits, coords = grid.fits, grid.coords
    site_json = []
    for gi, (R, C) in enumerate(plan.grids):
        rows = []
        for si in range(R * C):
            rep = int(grid.ensemble_of[gi, si])
            point = {"row": int(coords[gi, si, 0]) + 1, "col": int(coords[gi, si, 1]) + 1,
                     "ensemble_of": {"row": int(coords[gi, rep, 0]) + 1, "col": int(coords[gi, rep, 1]) + 1},
                     "conditions": {}}
            for ci, (label, kind, _) in enumerate(plan.conds):
                rec = {k: time_json(fits[k][gi, si, ci, 0], fits[k][gi, si, ci, 1], J_hz,
                                    grid.reasons.get((k, gi, si, ci))) for k in FITTED}
                flags = t2_flags(*(fits["T2"][gi, si, ci] * us), *(fits["T1"][gi, si, ci] * us),
                                 None if kind == "ideal" else T2q_us, "the single transmon's T2 limit T2q")
                if flags:
                    rec["T2"]["flags"] = flags
                rec.update(grid.lives.as_json((gi, si, ci), J_hz))
                if np.isfinite(grid.dropped[gi, si, ci]):
                    rec["thermal_mass_dropped"] = float(grid.dropped[gi, si, ci])
                point["conditions"][label] = rec if grid.run[gi, si, ci] else {"not_run": grid.reasons.get(
                    (FITTED[0], gi, si, ci))}
            if ideal:
                for k, a in grid.typical.items():
                    point[k] = {**time_json(a[gi, si, 0], a[gi, si, 1], J_hz),
                                "lower_bound": bool(grid.floored[gi, si] > 0)}
            rows.append(point)
        site_json.append(rows)
    return site_json


def _routing_reasons(summary: dict, ideal: bool) -> None:
    """A reason beside each null of the routing summary (lru_mps.analysis.numbers' convention)."""
    if summary["routing"] is None:
        summary["routing_reason"] = "the verdict reads the ideal leakage lifetimes: this run has no ideal conditions"
        return
    v = summary["routing"]
    why = "not resolved: no coding site of this grid has a resolved ideal tau_L (more realizations resolve it)"
    for key in ("paying_share", "median_tau_J", "pays"):
        if key in v and any(x is None for x in v[key]):
            v[f"{key}_reason"] = [why if x is None else None for x in v[key]]
    if v.get("stops_paying_at") is None:
        v["stops_paying_at_reason"] = "routing pays on every grid studied (a larger grid finds where it stops)"
    for key, value in list(v.items()):
        if value is None and f"{key}_reason" not in v:
            v[f"{key}_reason"] = "not resolved by these data"


def _by_temperature(plan: RoutingPlan, grid: GridArrays, base: BaselineArrays) -> dict:
    """The summary's ``by_temperature``: per realistic condition (its label), the array's temperature (K) and, per
    grid, whether it ran there, the Gibbs mass of the thermal starts left out (the largest over the grid's points;
    0 where every start fits, as at 0 K) and the verdict of :func:`~lru_mps.analysis.routing.removal_verdict`
    beside the median site's tau_L against the baseline's (one L = 3 array per qubit, same conditions); a reason
    beside each null."""
    sizes = [f"{R}x{C}" for R, C in plan.grids]
    eta, tau = grid.lives.array("removal_efficiency"), grid.lives.array(VERDICT)
    base_eta, base_tau = base.lives.array("removal_efficiency"), base.lives.array(VERDICT)
    out = {}
    for ci, (label, kind, temp) in enumerate(plan.conds):
        if kind == "ideal":
            continue
        n = [R * C for R, C in plan.grids]
        ran = [bool(grid.run[gi, :n[gi], ci].any()) for gi in range(len(sizes))]
        not_run = [None if ran[gi] else grid.reasons.get((FITTED[0], gi, 0, ci)) for gi in range(len(sizes))]
        dropped = []
        for gi in range(len(sizes)):
            d = grid.dropped[gi, :n[gi], ci]
            dropped.append(None if not ran[gi] else float(np.nanmax(d)) if np.isfinite(d).any() else 0.0)
        v = removal_verdict([eta[gi, :n[gi], ci, 0] if ran[gi] else [] for gi in range(len(sizes))], sizes)
        b_tau = finite_or_none(base_tau[ci, 0])
        medians = []
        for gi in range(len(sizes)):
            t = tau[gi, :n[gi], ci, 0]
            t = t[np.isfinite(t)] if ran[gi] else t[:0]
            medians.append(float(np.median(t)) if t.size else None)
        v.update({"median_tau_J": medians, "baseline_eta": finite_or_none(base_eta[ci, 0]), "baseline_tau_J": b_tau,
                  "median_tau_over_baseline": [None if m is None or not b_tau else m / b_tau for m in medians],
                  "criterion": f"the median coding site's removal efficiency eta over {ETA_PAYS:g}: the LRUs end "
                               "most of its leakage before the hardware does (for a removal competing with the "
                               "decay of |2> at 2/T1q, the ideal criterion tau_L < T1q/2)"})
        _temperature_reasons(v, not_run, b_tau)
        entry = {"temperature_K": float(to_kelvin(temp, "temperatures")), "run": ran, "thermal_mass_dropped": dropped,
                 "routing": v}
        if not all(ran):
            entry["not_run_reason"] = not_run
            entry["thermal_mass_dropped_reason"] = not_run
        out[label] = entry
    return out


def _temperature_reasons(v: dict, not_run: list, baseline_tau) -> None:
    """A reason beside each null of one temperature's verdict (lru_mps.analysis.numbers' convention): the grid's
    reason where it did not run, else not resolved."""
    for key, why in (("paying_share", "eta"), ("median_eta", "eta"), ("pays", "eta"), ("median_tau_J", "tau_L"),
                     ("median_tau_over_baseline", "tau_L")):
        if any(x is None for x in v[key]):
            v[f"{key}_reason"] = [None if x is not None else r or (
                f"not resolved: no coding site of this grid has a resolved {why}" + (
                    "" if baseline_tau or key != "median_tau_over_baseline" else " (or the baseline's tau_L)"))
                for x, r in zip(v[key], not_run)]
    skipped = [i for i, p in enumerate(v["pays"]) if p is None]
    stop = v["stops_paying_at"]
    if stop is None:
        v["stops_paying_at_reason"] = (
            "no grid ran or was resolved at this temperature" if len(skipped) == len(v["pays"]) else
            "routing pays on every grid at this temperature (a larger grid finds where it stops)" if not skipped else
            "routing pays on every grid run and resolved at this temperature; it may stop at one not run or not "
            "resolved there (its reason beside pays)")
    elif any(i < v["pays"].index(False) for i in skipped):
        v["stops_paying_at_note"] = ("a smaller grid did not run or was not resolved at this temperature: routing may "
                                     "stop paying there already")
    for key in ("baseline_eta", "baseline_tau_J"):
        if v[key] is None:
            v[f"{key}_reason"] = "not resolved: the baseline's leakage curve at this temperature"
