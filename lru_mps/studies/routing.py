"""Study ``routing``: leakage routed across a grid of coding transmons to LRUs on its boundary, site by site.

Physics (docs/physics.md §3.4, §8).  Every site of an R x C grid of coding
transmons is a qubit; the disorder recipe keeps every leakage level resonant,
so a leakage stack placed on any site travels across the grid (J_prop =
2 J^2/Ubar per edge) to the LRUs, arms of ``lru_arm`` transmons on the
boundary (:func:`lru_mps.physics.geometry.lru_grid`: at the ``corners``, the
middle of the ``sides`` or every ``boundary`` site) whose last transmon is a
reset site; the reset acts on every one of them.  For each grid and each
coding site s (renumbered so that s is index 0 and the reset sites last):

* one ensemble per condition from the three initial states on s (sector
  engine): under the hardware's T1q and Tphi (the model's) at each of
  ``temperatures``, ``trajectories`` sampled rows with their hardware decay
  integrated out (:data:`REALISTIC_RUN`): T_star, T1, T2 fitted with
  jackknife errors (:func:`lru_mps.analysis.decay.decay_times`), the leakage
  lifetimes tau_1, tau_L and the removal efficiency
  (:func:`lru_mps.analysis.lifetimes.leakage_lifetimes`);
* in ideal conditions, exact per disorder realization (``realizations``,
  :func:`lru_mps.studies.common.run_ensemble`): the leakage lifetimes as the
  integrals up to t_final, lower bounds, and no T_star (the grid's averaged
  leakage decays slower than any exponential:
  :func:`lru_mps.analysis.routing.window_lifetimes`); the site's T1 and T2
  are the typical values of the exact N = 1 rates of the same realizations
  (:func:`lru_mps.analysis.routing.typical_time`; a realization whose rate
  is under the round-off floor counts at the floor, and the value is then a
  lower bound).

Sites that a symmetry of the layout (with its LRUs) maps onto each other
have one ensemble where every site draws the same distribution
(:func:`lru_mps.physics.rules.symmetric_sites_verdict`): the study runs one
per class of sites (:meth:`~lru_mps.physics.geometry.Geometry.site_classes`,
on its first site) and gives it to every site of the class.

A thermal start puts ~0.03 excitations per transmon into the array at 100 mK
(0.5-0.9 in grids of 17-33 transmons); a stack with k thermal excitations
beside it lives in the N = 2 + k sector: 2,600, 17,000 and 91,000 states
for k = 1, 2, 3 on the 4 x 4 layout, 6,500 and 58,000 for k = 1, 2 on the
5 x 5 one.  The rare hot rows carry the cost: one class of sites of the
4 x 4 layout at 100 mK took 10 min on 2 cores at 64 trajectories, and the
5 x 5 layout's six classes would take hours (docs/benchmarks.md).
Temperatures above 0 K therefore run on the layouts of at most
``thermal_max_sites`` transmons (the others are reported as not run, with
that reason).  Where a thermal start cannot fit the sector engine (2.5
million states for four thermal excitations beside the stack on the 5 x 5
layout) the sample is conditioned on the starts that fit and each point
reports the mass left out, ``thermal_mass_dropped``
(:func:`lru_mps.run.thermal_sample.thermal_cap`).  The baseline is one L = 3 array per
qubit at the paper's working point under the same conditions.  Routing pays
at a site whose ideal leakage lifetime tau_L is under T1q/2
(:func:`lru_mps.analysis.routing.routing_verdict`).
"""

from __future__ import annotations

import math
import re

import numpy as np
import xarray as xr

from ..analysis.decay import decay_times, unresolved_reason
from ..analysis.lifetimes import LIFETIMES, leakage_lifetimes
from ..analysis.rates import graph_rates_floored, qubit_rates
from ..analysis.routing import routing_verdict, typical_time, window_lifetimes
from ..errors import require
from ..physics import geometry as geometries
from ..physics.rules import symmetric_sites_verdict
from ..physics.units import to_kelvin, to_time
from ..run.simulate import simulate
from ..run.trajectories import disorder_rng
from ..analysis.numbers import sig, t2_flags
from .base import TIME_UNITS, Study, StudyContext, StudyOption, finite_or_none, parameters_json, time_json
from .common import FITTED, as_list, conditions_of, dataset_attrs, positive_int, run_ensemble, spec_of
from .config import Config
from .lifetimes import HEAD, LEGEND, LifetimeGrid, cells, limit_json, reason_lines, time_cell
from . import routing_figures
from .routing_figures import VERDICT

HELP = """Leakage routed across grids of coding transmons to LRUs on the boundary (3x3, 4x4, 5x5), site by site.

For every coding site of each grid (LRUs: arms of two transmons at the
corners by default): the leakage lifetimes, T_star and the removal
efficiency of leakage placed on it, and its own T1 and T2 as a qubit, in
ideal conditions (exact per disorder realization: the lifetimes up to
t_final, lower bounds; T1, T2 from the exact N = 1 rates) and under the
hardware's T1q and Tphi at 0 K and, on the 3x3 grid, at 100 mK; drawn as
maps, next to one L = 3 array per qubit, with the grid size at which
routing stops paying (the median site's leakage lifetime above T1q/2).
Sites that a symmetry of the layout maps onto each other (the four
corners, ...) share one ensemble: the counts are per class of sites.
Sector engine.  Default: ~19 min on 2 cores; --quick: about 2 minutes on 2
shared cores (70 s of CPU).
"""

#: why an ideal grid point has no T_star (:func:`lru_mps.analysis.routing.window_lifetimes`)
NO_T_STAR = ("ideal conditions on a grid: the ensemble's leakage decays slower than any exponential (rare, nearly "
             "trapped stacks), so a fitted T_star would be a number of the window; the leakage lifetimes are the "
             "integrals up to t_final (lower bounds)")


def parse_grids(value) -> list[tuple[int, int]]:
    """The study's grids: 'RxC' items (R, C >= 2), a list or a comma-separated text."""
    out = []
    for item in as_list({"grids": value}, "grids"):
        m = re.fullmatch(r"\s*(\d+)\s*x\s*(\d+)\s*", str(item).lower())
        require(m is not None and int(m.group(1)) >= 2 and int(m.group(2)) >= 2, "grids", value,
                "grid sizes RxC with R, C >= 2, e.g. 3x3,4x4,5x5")
        out.append((int(m.group(1)), int(m.group(2))))
    require(len(set(out)) == len(out), "grids", value, "each grid once")
    return out


def _temperatures(cfg: dict) -> list[tuple[str, float]]:
    values = [(str(v).strip(), to_kelvin(v, "temperatures")) for v in as_list(cfg, "temperatures")]
    require(all(k >= 0 for _, k in values) and len({k for _, k in values}) == len(values), "temperatures",
            cfg["temperatures"], "temperatures >= 0 with a unit (K or mK), each once, e.g. 0,100mK")
    return sorted(values, key=lambda tv: tv[1])


def _t_final(spec, cfg: dict) -> float:
    """Ideal: t_base + t_per_hop hops T_prop (the baseline chain: baseline_t_final); realistic: hops T_prop +
    realistic_t_after (1/J)."""
    transit = spec.transit_hops * spec.T_prop
    if spec.conditions.ideal and spec.geometry is None:
        return to_time(cfg["baseline_t_final"], "baseline_t_final", spec.J_hz)
    if spec.conditions.ideal:
        return to_time(cfg["t_base"], "t_base", spec.J_hz) + Config(cfg).number("t_per_hop", min=0) * transit
    return transit + to_time(cfg["realistic_t_after"], "realistic_t_after", spec.J_hz)


def _conditions(cfg: dict) -> list[tuple[str, str, str | None]]:
    """(label, conditions, temperature) of every condition the study runs."""
    conds = conditions_of(cfg, allow_both=True)
    out = [("ideal", "ideal", None)] if "ideal" in conds else []
    if "realistic" in conds:
        out += [(f"realistic {1e3 * kelvin:g} mK", "realistic", label) for label, kelvin in _temperatures(cfg)]
    return out


#: how the realistic ensembles run: sampled rows with their hardware decay integrated out (exact; docs/physics.md
#: §6.5).  The removal-free branch spreads less, but on these layouts its jackknife errors come out 1.3-2x under
#: the scatter over seeds at 32-64 trajectories (a few heavily weighted rows), where these hold (tests/test_routing.py)
REALISTIC_RUN = {"estimator": "sampled", "integrate_decay": True}


def _ensemble(spec, cfg: dict, ctx: StudyContext, label: str, time_points: int):
    """One point's ensemble from the three initial states on site 1 (index 0), resumable through the study's store:
    ideal, the exact branch per realization (:func:`~lru_mps.studies.common.run_ensemble`); realistic,
    ``trajectories`` rows run as :data:`REALISTIC_RUN` says."""
    t_final = _t_final(spec, cfg)
    if spec.conditions.ideal:
        return run_ensemble(spec, cfg, ctx, label, init="all", t_final=t_final, time_points=time_points)
    return simulate(spec, init="all", t_final=t_final, time_points=time_points,
                    trajectories=positive_int(cfg, "trajectories"), seed=positive_int(cfg, "seed", 0),
                    engine=cfg["engine"], **REALISTIC_RUN, **ctx.run_options(label))


class Routing(Study):
    """The routing study (module docstring)."""

    NAME = "routing"
    OPTIONS = (
        StudyOption("grids", "Grids of coding transmons RxC, e.g. 3x3,4x4,5x5."),
        StudyOption("lrus", "Where the LRUs sit on each grid's boundary.", kind=("corners", "sides", "boundary")),
        StudyOption("lru_arm", "Transmons per LRU, the last one the reset site.", kind="int"),
        StudyOption("temperatures", "Temperatures of the array under realistic conditions, with a unit, each under 1 K, e.g. 0,100mK.", each="temperature"),
        StudyOption("thermal_max_sites", "A temperature > 0 runs on layouts of at most this many transmons.",
                    kind="int"),
    )
    SWEPT = {"length": None, "temperature": ("temperatures",)}
    SWEPT_HOW = {"length": "its layouts' sizes from the grids and LRUs (--grids, --lrus, --lru-arm)"}

    def refuse_geometry(self, cfg: dict) -> None:
        """The study builds its own graphs: a geometry, start or reset site in the model table is refused."""
        model = cfg.get("model", {})
        for key in ("geometry", "start_site", "reset_site"):
            require(model.get(key) is None, key, model.get(key), "not set: study routing builds its layouts from "
                    "grids, lrus and lru_arm, and starts on every coding site in turn")
    HELP = HELP
    TIME_UNITS = TIME_UNITS

    def check_given(self, cfg: dict, given: set) -> None:
        require(cfg["lrus"] in geometries.LRU_PLACES, "lrus", cfg["lrus"], f"one of {', '.join(geometries.LRU_PLACES)}")

    def compute(self, cfg: dict, ctx: StudyContext):
        c = Config(cfg)
        grids = parse_grids(cfg["grids"])
        layouts = [geometries.lru_grid(R, C, cfg["lrus"], c.integer("lru_arm", min=1)) for R, C in grids]
        conds = _conditions(cfg)
        max_sites = c.integer("thermal_max_sites", min=2)
        T = positive_int(cfg, "time_points", 3)
        n_real, seed = positive_int(cfg, "realizations"), positive_int(cfg, "seed", 0)
        nsite = max(R * C for R, C in grids)
        shape = (len(grids), nsite, len(conds))
        fits = {k: np.full(shape + (2,), np.nan) for k in FITTED}
        lives = LifetimeGrid(shape)
        typical = {k: np.full(shape[:2] + (2,), np.nan) for k in ("T1_typical", "T2_typical")}
        floored = np.zeros(shape[:2], dtype=int)
        run = np.zeros(shape, dtype=bool)
        dropped = np.full(shape, np.nan)  # Gibbs mass of the thermal starts the sector engine cannot hold
        coords = np.full(shape[:2] + (2,), -1, dtype=int)
        ensemble_of = np.full(shape[:2], -1, dtype=int)
        reasons: dict = {}
        symmetric = symmetric_sites_verdict(spec_of(cfg, geometry=layouts[0].relabel(
            geometries.coding_sites(layouts[0])[0], list(layouts[0].reset_sites)), conditions="realistic"))
        classes = [g.site_classes(geometries.coding_sites(g)) if symmetric else
                   [[k] for k in geometries.coding_sites(g)] for g in layouts]
        hot = [temp is not None and to_kelvin(temp, "temperatures") > 0 for _, _, temp in conds]
        todo = [(gi, cls[0], ci) for gi, g in enumerate(layouts) for cls in classes[gi] for ci in range(len(conds))
                if not hot[ci] or g.L <= max_sites]
        ctx.plan(len(todo) + len(conds))
        for gi, g in enumerate(layouts):
            position = {k: si for si, k in enumerate(geometries.coding_sites(g))}
            for k, si in position.items():
                coords[gi, si] = g.coords[k]
            for cls in classes[gi]:  # one ensemble per class of start sites (its first site), for all of them
                k, si = cls[0], position[cls[0]]
                geo = g.relabel(k, list(g.reset_sites))
                for ci, (label, cond, temp) in enumerate(conds):
                    if (gi, k, ci) not in todo:
                        for name in FITTED:
                            reasons[(name, gi, si, ci)] = (f"not run: the {g.name} layout has {g.L} transmons, over "
                                                           f"thermal_max_sites = {max_sites} for a temperature > 0")
                        continue
                    spec = spec_of(cfg, geometry=geo, conditions=cond, **({} if temp is None else
                                                                          {"temperature": temp}))
                    site = f"{g.name} site {g.coords[k][0] + 1},{g.coords[k][1] + 1}"
                    res = _ensemble(spec, cfg, ctx, f"{site} {label}", T)
                    self._point(res, fits, lives, reasons, (gi, si, ci))
                    run[gi, si, ci] = True
                    mass = res.thermal_mass_dropped()
                    dropped[gi, si, ci] = np.nan if mass is None else mass
                    if cond == "ideal":
                        rates = [graph_rates_floored(spec, spec.draw_realization(disorder_rng(seed, i)))
                                 for i in range(n_real)]
                        typical["T1_typical"][gi, si] = fits["T1"][gi, si, ci] = typical_time([r[0] for r in rates])
                        typical["T2_typical"][gi, si] = fits["T2"][gi, si, ci] = typical_time([r[1] for r in rates])
                        floored[gi, si] = sum(r[2] for r in rates)
                for m in cls:
                    ensemble_of[gi, position[m]] = si
            # every site carries its class's ensemble (the first site's numbers, reasons included)
            n = len(position)
            for a in (*fits.values(), run, lives.points, *typical.values(), floored, dropped):
                a[gi, :n] = a[gi, ensemble_of[gi, :n]]
            for (name, g_, s_, ci), why in list(reasons.items()):
                if g_ == gi:
                    for sj in np.nonzero(ensemble_of[gi, :n] == s_)[0]:
                        reasons[(name, gi, int(sj), ci)] = why
        base = self._baseline(cfg, ctx, conds, T)
        return self._assemble(cfg, grids, layouts, conds, fits, lives, typical, floored, run, coords, reasons, base,
                              ensemble_of, symmetric, dropped)

    @staticmethod
    def _point(res, fits, lives, reasons, index) -> None:
        """One point's numbers.  In ideal conditions on a grid the leakage lifetimes are the integrals up to
        t_final (lower bounds: the ensemble's leakage decays slower than exponential, no T_star;
        :func:`~lru_mps.analysis.routing.window_lifetimes`) and T1, T2 come from the exact rates (:meth:`compute`)."""
        spec = res.spec
        grid_ideal = spec.conditions.ideal and spec.geometry is not None
        times = decay_times(res)
        for name, d in times.items():
            if name not in fits or (grid_ideal and name in ("T1", "T2")):
                continue
            if grid_ideal and name == "T_star":
                reasons[(name,) + index] = NO_T_STAR
            elif d is not None:
                fits[name][index] = (d.value, d.error)
            else:
                reasons[(name,) + index] = unresolved_reason(name, res, times)
        lives.put(index, window_lifetimes(res) if grid_ideal else leakage_lifetimes(res))

    def _baseline(self, cfg, ctx, conds, T) -> dict:
        """One L = 3 array per qubit under each condition: the same quantities (ideal T1, T2: the typical exact
        rates, as on the grids; its ideal leakage decays exponentially: T_star and the fitted tail as on the chain)."""
        fits = {k: np.full((len(conds), 2), np.nan) for k in FITTED}
        lives = LifetimeGrid((len(conds),))
        reasons: dict = {}
        for ci, (label, cond, temp) in enumerate(conds):
            spec = spec_of(cfg, length=3, conditions=cond, **({} if temp is None else {"temperature": temp}))
            res = _ensemble(spec, cfg, ctx, f"baseline L=3 {label}", T)
            self._point(res, fits, lives, reasons, (ci,))
            if cond == "ideal":  # T1, T2 as the grid sites': the typical exact rates of the same realizations
                seed = positive_int(cfg, "seed", 0)
                rates = [qubit_rates(spec, spec.draw_realization(disorder_rng(seed, i)))
                         for i in range(positive_int(cfg, "realizations"))]
                fits["T1"][ci] = typical_time([r.gamma1 for r in rates])
                fits["T2"][ci] = typical_time([r.gamma2 for r in rates])
                for name in ("T1", "T2"):
                    reasons.pop((name, ci), None)
        return {"fits": fits, "lives": lives, "reasons": reasons}

    def _assemble(self, cfg, grids, layouts, conds, fits, lives, typical, floored, run, coords, reasons, base,
                  ensemble_of, symmetric, dropped):
        spec0 = spec_of(cfg, length=3, conditions="realistic")  # (the hardware's T1q: the limit T1q/2)
        J_hz = spec0.J_hz
        limit = 0.5 * spec0.conditions.T1q if math.isfinite(spec0.conditions.T1q) else math.nan
        names = [g.name for g in layouts]
        dims = ("grid", "site", "condition")
        data = {f"{k}_J": (dims, fits[k][..., 0], {"units": "1/J"}) for k in FITTED}
        data.update({f"{k}_error_J": (dims, fits[k][..., 1], {"units": "1/J"}) for k in FITTED})
        data.update(lives.data_vars(dims))
        for k, a in typical.items():
            data[f"{k}_J"] = (("grid", "site"), a[..., 0], {"units": "1/J"})
            data[f"{k}_error_J"] = (("grid", "site"), a[..., 1], {"units": "1/J"})
        data["rates_under_floor"] = (("grid", "site"), floored, {"units": "realizations"})
        data["run"] = (dims, run.astype(int))
        data["thermal_mass_dropped"] = (dims, dropped, {"description": "Gibbs mass of the thermal starts the sector "
                                                        "engine cannot hold, left out (NaN: every start fits); every "
                                                        "population within it of the full ensemble"})
        for k in FITTED:
            data[f"baseline_{k}_J"] = (("condition",), base["fits"][k][:, 0], {"units": "1/J"})
            data[f"baseline_{k}_error_J"] = (("condition",), base["fits"][k][:, 1], {"units": "1/J"})
        for k, v in base["lives"].data_vars(("condition",)).items():
            data[f"baseline_{k}"] = v
        ds = xr.Dataset(data, coords={
            "grid": names, "site": np.arange(coords.shape[1]), "condition": [c[0] for c in conds],
            "row": (("grid", "site"), coords[..., 0]), "col": (("grid", "site"), coords[..., 1]),
            "ensemble_site": (("grid", "site"), ensemble_of),
            "grid_rows": ("grid", [R for R, _ in grids]), "grid_cols": ("grid", [C for _, C in grids]),
            "n_sites": ("grid", [g.L for g in layouts]), "n_lrus": ("grid", [g.resets for g in layouts])},
            attrs=dataset_attrs(spec0, cfg, T_leak_own_J=finite_or_none(limit) or "inf", lrus=cfg["lrus"],
                                lru_arm=int(cfg["lru_arm"])))
        ideal = [i for i, c in enumerate(conds) if c[1] == "ideal"]
        verdict = lives.array(VERDICT)
        taus = [verdict[gi, :R * C, ideal[0], 0] if ideal else [] for gi, (R, C) in enumerate(grids)]
        site_json = []
        us = 1e6 / (2 * np.pi * J_hz)  # us per 1/J
        real = next((c for c in conds if c[1] != "ideal"), None)
        T2q_us = spec0.conditions.T2q * us if real else None  # (spec0: the realistic hardware)
        for gi, (R, C) in enumerate(grids):
            rows = []
            for si in range(R * C):
                rep = int(ensemble_of[gi, si])
                point = {"row": int(coords[gi, si, 0]) + 1, "col": int(coords[gi, si, 1]) + 1,
                         "ensemble_of": {"row": int(coords[gi, rep, 0]) + 1, "col": int(coords[gi, rep, 1]) + 1},
                         "conditions": {}}
                for ci, (label, kind, _) in enumerate(conds):
                    rec = {k: time_json(fits[k][gi, si, ci, 0], fits[k][gi, si, ci, 1], J_hz,
                                        reasons.get((k, gi, si, ci))) for k in FITTED}
                    flags = t2_flags(*(fits["T2"][gi, si, ci] * us), *(fits["T1"][gi, si, ci] * us),
                                     None if kind == "ideal" else T2q_us, "the single transmon's T2 limit T2q")
                    if flags:
                        rec["T2"]["flags"] = flags
                    rec.update(lives.as_json((gi, si, ci), J_hz))
                    if np.isfinite(dropped[gi, si, ci]):
                        rec["thermal_mass_dropped"] = float(dropped[gi, si, ci])
                    point["conditions"][label] = rec if run[gi, si, ci] else {"not_run": reasons.get(
                        (FITTED[0], gi, si, ci))}
                if ideal:
                    for k, a in typical.items():
                        point[k] = {**time_json(a[gi, si, 0], a[gi, si, 1], J_hz),
                                    "lower_bound": bool(floored[gi, si] > 0)}
                rows.append(point)
            site_json.append(rows)
        summary = {
            "study": self.NAME,
            "grids": names,
            "grid_sizes": [f"{R}x{C}" for R, C in grids],
            "conditions": [c[0] for c in conds],
            "lrus": cfg["lrus"],
            "lru_arm": int(cfg["lru_arm"]),
            "n_sites": [g.L for g in layouts],
            "n_lrus": [g.resets for g in layouts],
            "symmetry": {"used": bool(symmetric), "reason": symmetric.reason,
                         "classes": [int(len(set(ensemble_of[gi, :R * C]))) for gi, (R, C) in enumerate(grids)]},
            "sites": site_json,
            "baseline": {label: {**{k: time_json(base["fits"][k][ci, 0], base["fits"][k][ci, 1], J_hz,
                                                 base["reasons"].get((k, ci))) for k in FITTED},
                                 **base["lives"].as_json((ci,), J_hz)} for ci, (label, _, _) in enumerate(conds)},
            "T_leak_own": limit_json(limit, J_hz),
            "routing": {**routing_verdict(taus, limit, [f"{R}x{C}" for R, C in grids]),
                        "criterion": "the median coding site's ideal leakage lifetime tau_L under T1q/2"}
            if ideal else None,
            "parameters": parameters_json(spec0, {"L": "one per grid: see n_sites"},
                                          realizations=int(cfg["realizations"]), trajectories=int(cfg["trajectories"]),
                                          seed=int(cfg["seed"]), thermal_max_sites=int(cfg["thermal_max_sites"])),
        }
        _routing_reasons(summary, bool(ideal))
        return ds, summary

    def table(self, summary: dict) -> str:
        """The table: times in us, each to its error's digits or 'not resolved*' (lifetimes.time_cell)."""
        lines = [f"{self.NAME}: leakage routed to LRUs ({summary['lrus']}, arms of {summary['lru_arm']}) across grids "
                 "of coding transmons; times in us (+- jackknife error)"]
        if summary["symmetry"]["used"]:
            lines.append("sites that a symmetry of the layout maps onto each other share one ensemble (a site 'x4': "
                         "it and 3 images)")
        limit = summary["T_leak_own"]["value_us"]
        if limit is not None:
            lines.append(f"leakage on its own (T1q/2): {sig(limit, 3)} us")
        unresolved = {}
        for label in summary["conditions"]:
            b = summary["baseline"][label]
            lines += ["", f"{label}", f"  baseline, one L = 3 array per qubit: T_star {time_cell(b['T_star'], 'us')} "
                      f"T1 {time_cell(b['T1'], 'us')} T2 {time_cell(b['T2'], 'us')}  "
                      + cells(*(b[k] for k in LIFETIMES), unit="us")]
            lines.append(f"  {'grid':>6} {'site':>8} {'T_star':>17} {'T1':>17} {'T2':>17} {HEAD}")
            dropped_max = 0.0
            for gi, size in enumerate(summary["grid_sizes"]):
                for p in summary["sites"][gi]:
                    rep = p["ensemble_of"]
                    if (rep["row"], rep["col"]) != (p["row"], p["col"]):
                        continue  # (its class's first site stands for it)
                    n = sum(q["ensemble_of"] == rep for q in summary["sites"][gi])
                    rec = p["conditions"][label]
                    where = f"{p['row']},{p['col']}" + (f" x{n}" if n > 1 else "")
                    if "not_run" in rec:
                        lines.append(f"  {size:>6} {where:>8} (not run: thermal_max_sites)")
                        continue
                    if rec.get("thermal_mass_dropped"):
                        dropped_max = max(dropped_max, rec["thermal_mass_dropped"])
                    times = " ".join(time_cell(rec[k], "us") for k in FITTED)
                    lines.append(f"  {size:>6} {where:>8} {times} " + cells(*(rec[k] for k in LIFETIMES), unit="us"))
                    unresolved.update({f"{k} at {size} {where} {label}": rec[k] for k in FITTED})
            if dropped_max > 0:
                lines.append(f"  thermal starts over the sector engine's limit left out: at most {dropped_max:.2g} of "
                             "the Gibbs mass at a point (its populations within that of the full ensemble)")
        verdict = summary.get("routing")
        if verdict:
            lines += ["", "does routing pay? (" + verdict["criterion"] + ")"]
            us = 1e6 / (2 * np.pi * summary["parameters"]["J_over_2pi_Hz"])  # us per 1/J
            for gi, size in enumerate(summary["grid_sizes"]):
                share, med = verdict["paying_share"][gi], verdict["median_tau_J"][gi]
                med_s = "not resolved" if med is None else f"{sig(med * us, 4)} us ({sig(med, 4)}/J)"
                lines.append(f"  {size:>6}: median tau_L {med_s}, "
                             f"sites that pay {'not resolved' if share is None else f'{100 * share:.0f} %'}")
            stop = verdict["stops_paying_at"]
            lines.append(f"  routing stops paying at: {stop or 'no grid studied'}")
        return "\n".join(lines + [""] + reason_lines(unresolved) + [LEGEND]) + "\n"

    def plot(self, ds, summary: dict, figdir) -> list:
        return routing_figures.plot(ds, summary, figdir)

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


STUDIES = {Routing.NAME: Routing()}
