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
from dataclasses import replace

from ...analysis.rates import graph_rates_floored, qubit_rates
from ...analysis.routing import typical_time
from ...errors import require
from ...physics import geometry as geometries
from ...run.trajectories import disorder_rng
from ..base import TIME_UNITS, Study, StudyContext, StudyOption
from ..common import FITTED, positive_int, spec_of
from . import report
from .assemble import assemble
from .plan import REALISTIC_RUN, _conditions, _t_final, parse_grids  # noqa: F401 (the study's plan, read by tests)
from .plan import THERMAL_SAMPLES, RoutingPlan, _ensemble, plan_of
from .points import BaselinePoint, RoutingPoint, ensemble_numbers

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
        StudyOption("thermal_sample", "How a realistic row's thermal start is drawn: natural (the Gibbs sample) or "
                    "cost (its number of thermal excitations at odds ~ weight / sqrt(sector cost), weighted back: "
                    "fewer of the costly hot rows; its tau_L errors failed their calibration over 16 seeds on the 2x3 layout "
                    "at 100 mK: for exploration, natural for numbers to quote).", kind=tuple(THERMAL_SAMPLES)),
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
        """Every point of every grid (one ensemble per class of start sites, given to each site of the class), then
        the baseline: (dataset, summary)."""
        plan = plan_of(cfg)
        ctx.plan(len(plan.todo) + len(plan.conds))
        points = [p for gi in range(len(plan.layouts)) for p in _grid_points(cfg, ctx, plan, gi)]
        return assemble(cfg, plan, points, _baseline(cfg, ctx, plan))

    def table(self, summary: dict) -> str:
        """The table: times in us, each to its error's digits or 'not resolved*' (lifetimes.time_cell)."""
        return report.table(summary)

    def plot(self, ds, summary: dict, figdir) -> list:
        return report.plot(ds, summary, figdir)


def _grid_points(cfg: dict, ctx: StudyContext, plan: RoutingPlan, gi: int) -> list[RoutingPoint]:
    """The points of grid ``gi``: one ensemble per class of start sites (its first site) under each condition, and
    every site of the class carrying its numbers (reasons included)."""
    g = plan.layouts[gi]
    position = {k: si for si, k in enumerate(geometries.coding_sites(g))}
    points = []
    for cls in plan.classes[gi]:
        k = cls[0]
        geo = g.relabel(k, list(g.reset_sites))
        first = [_site_point(cfg, ctx, plan, (gi, k, ci), geo, position[k]) for ci in range(len(plan.conds))]
        points += [replace(p, site=position[m], coords=tuple(g.coords[m])) for m in cls for p in first]
    return points


def _site_point(cfg: dict, ctx: StudyContext, plan: RoutingPlan, where: tuple, geo, si: int) -> RoutingPoint:
    """The point of start site ``k`` (``where`` = (grid, site of the layout, condition); ``geo``: the layout
    relabelled with the site as index 0; ``si``: its index in the dataset's site order).  In ideal conditions T1
    and T2 are the typical values of the exact N = 1 rates of the same realizations."""
    gi, k, ci = where
    g = plan.layouts[gi]
    label, cond, temp = plan.conds[ci]
    coords = tuple(g.coords[k])
    if where not in plan.todo:
        why = (f"not run: the {g.name} layout has {g.L} transmons, over thermal_max_sites = {plan.max_sites} for a "
               "temperature > 0")
        return RoutingPoint(gi, si, ci, coords, si, reasons={name: why for name in FITTED})
    spec = spec_of(cfg, geometry=geo, conditions=cond, **({} if temp is None else {"temperature": temp}))
    site = f"{g.name} site {g.coords[k][0] + 1},{g.coords[k][1] + 1}"
    res = _ensemble(spec, cfg, ctx, f"{site} {label}", plan.time_points)
    fits, lives, reasons = ensemble_numbers(res)
    mass = res.thermal_mass_dropped()
    typical = floored = None
    if cond == "ideal":
        rates = [graph_rates_floored(spec, spec.draw_realization(disorder_rng(plan.seed, i)))
                 for i in range(plan.realizations)]
        typical = {"T1_typical": typical_time([r[0] for r in rates]), "T2_typical": typical_time([r[1] for r in rates])}
        fits["T1"], fits["T2"] = typical["T1_typical"], typical["T2_typical"]
        floored = sum(r[2] for r in rates)
    return RoutingPoint(gi, si, ci, coords, si, True, fits, lives, reasons, math.nan if mass is None else mass,
                        typical, floored)


def _baseline(cfg: dict, ctx: StudyContext, plan: RoutingPlan) -> list[BaselinePoint]:
    """One L = 3 array per qubit under each condition: the same quantities (ideal T1, T2: the typical exact rates,
    as on the grids; its ideal leakage decays exponentially: T_star and the fitted tail as on the chain)."""
    out = []
    for ci, (label, cond, temp) in enumerate(plan.conds):
        spec = spec_of(cfg, length=3, conditions=cond, **({} if temp is None else {"temperature": temp}))
        res = _ensemble(spec, cfg, ctx, f"baseline L=3 {label}", plan.time_points)
        fits, lives, reasons = ensemble_numbers(res)
        if cond == "ideal":  # T1, T2 as the grid sites': the typical exact rates of the same realizations
            seed = positive_int(cfg, "seed", 0)
            rates = [qubit_rates(spec, spec.draw_realization(disorder_rng(seed, i)))
                     for i in range(positive_int(cfg, "realizations"))]
            fits["T1"] = typical_time([r.gamma1 for r in rates])
            fits["T2"] = typical_time([r.gamma2 for r in rates])
            for name in ("T1", "T2"):
                reasons.pop(name, None)
        out.append(BaselinePoint(ci, fits, lives, reasons))
    return out


STUDIES = {Routing.NAME: Routing()}
