"""The routing study's plan: its grids, conditions and times, the classes of start sites, and how one ensemble runs.

Everything here is read from the study's config (``studies/routing.toml`` and the user's options): the grids
and their LRU layouts (:func:`lru_mps.physics.geometry.lru_grid`), the conditions (ideal, and realistic at each
of ``temperatures``), the simulated time of a point (1/J), the classes of coding sites that share one ensemble
(:func:`lru_mps.physics.rules.symmetric_sites_verdict`) and which points a temperature above 0 K leaves out
(``thermal_max_sites``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...errors import require
from ...physics import geometry as geometries
from ...physics.rules import symmetric_sites_verdict
from ...physics.units import to_kelvin, to_time
from ...run.simulate import simulate
from ..base import StudyContext
from ..common import as_list, conditions_of, positive_int, run_ensemble, spec_of
from ..config import Config

#: the leakage lifetime whose map decides whether routing pays (tau_L of each coding site, ideal conditions)
VERDICT = "leakage_lifetime_array"

#: how the realistic ensembles run: sampled rows with their hardware decay integrated out (exact; docs/physics.md
#: §6.5).  The removal-free branch spreads less, but on these layouts its jackknife errors come out 1.3-2x under
#: the scatter over seeds at 32-64 trajectories (a few heavily weighted rows), where these hold (tests/test_routing.py)
REALISTIC_RUN = {"estimator": "sampled", "integrate_decay": True}
#: ``thermal_sample`` -> the run's ``thermal_strata``: the natural Gibbs sample, or each row's number of thermal
#: excitations at cost-aware odds (lru_mps.run.thermal_number: the hot rows of the large layouts cost most)
THERMAL_SAMPLES = {"natural": False, "cost": "cost"}


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


def _ensemble(spec, cfg: dict, ctx: StudyContext, label: str, time_points: int):
    """One point's ensemble from the three initial states on site 1 (index 0), resumable through the study's store:
    ideal, the exact branch per realization (:func:`~lru_mps.studies.common.run_ensemble`); realistic,
    ``trajectories`` rows run as :data:`REALISTIC_RUN` says, their thermal start as ``thermal_sample`` says
    (:data:`THERMAL_SAMPLES`)."""
    t_final = _t_final(spec, cfg)
    if spec.conditions.ideal:
        return run_ensemble(spec, cfg, ctx, label, init="all", t_final=t_final, time_points=time_points)
    return simulate(spec, init="all", t_final=t_final, time_points=time_points,
                    trajectories=positive_int(cfg, "trajectories"), seed=positive_int(cfg, "seed", 0),
                    engine=cfg["engine"], thermal_strata=THERMAL_SAMPLES[cfg["thermal_sample"]], **REALISTIC_RUN,
                    **ctx.run_options(label))


@dataclass(frozen=True)
class RoutingPlan:
    """What the study runs: its grids (R, C) and their layouts, the conditions (label, conditions, temperature),
    whether a symmetry of the layouts lets a class of sites share one ensemble (the verdict), the classes of each
    layout (lists of coding-site indices of the layout, the first one run), ``todo``: the (grid, first site of
    a class, condition) points that run (a temperature > 0 runs on layouts of at most ``max_sites`` transmons),
    the stored time points of an ensemble, the disorder realizations of the exact rates and the seed."""

    grids: list
    layouts: list
    conds: list
    symmetric: object
    classes: list
    todo: list
    max_sites: int
    time_points: int
    realizations: int
    seed: int

    @property
    def n_sites(self) -> int:
        """The dataset's site axis: the most coding sites of a grid."""
        return max(R * C for R, C in self.grids)


def plan_of(cfg: dict) -> RoutingPlan:
    """The study's :class:`RoutingPlan` from its config."""
    c = Config(cfg)
    grids = parse_grids(cfg["grids"])
    layouts = [geometries.lru_grid(R, C, cfg["lrus"], c.integer("lru_arm", min=1)) for R, C in grids]
    conds = _conditions(cfg)
    max_sites = c.integer("thermal_max_sites", min=2)
    require(cfg["thermal_sample"] in THERMAL_SAMPLES, "thermal_sample", cfg["thermal_sample"],
            f"one of {', '.join(THERMAL_SAMPLES)}")
    T = positive_int(cfg, "time_points", 3)
    n_real, seed = positive_int(cfg, "realizations"), positive_int(cfg, "seed", 0)
    symmetric = symmetric_sites_verdict(spec_of(cfg, geometry=layouts[0].relabel(
        geometries.coding_sites(layouts[0])[0], list(layouts[0].reset_sites)), conditions="realistic"))
    classes = [g.site_classes(geometries.coding_sites(g)) if symmetric else
               [[k] for k in geometries.coding_sites(g)] for g in layouts]
    hot = [temp is not None and to_kelvin(temp, "temperatures") > 0 for _, _, temp in conds]
    todo = [(gi, cls[0], ci) for gi, g in enumerate(layouts) for cls in classes[gi] for ci in range(len(conds))
            if not hot[ci] or g.L <= max_sites]
    return RoutingPlan(grids, layouts, conds, symmetric, classes, todo, max_sites, T, n_real, seed)
