"""Study ``design``: the LRU to build for given hardware.

For the hardware of the ``[model]`` table (T1q ``t1``, Tphi ``tphi``,
``temperature``) and a QEC cycle t_c (``cycle_time``), search the array
length L (``lengths``), disorder width W (``disorders``), hopping J
(``hoppings``), mean anharmonicity Ubar (``anharmonicities``), disorder
pattern (``disorder_patterns``, the patterns of "Your chip"), hopping profile
(``hopping_profiles``: uniform, transfer, linear:A:B; :mod:`.profiles`), reset kind
(``resets``) and rate (``rate_factors`` x the kind's analytic low optimum,
:func:`lru_mps.analysis.design.seed_rate`).  Each candidate is scored by the
QEC view's two numbers (docs/physics.md §8 "Designing an LRU"): the mean
leakage duration D in cycles and the qubit's Pauli error per cycle added by
the LRU (``p_total`` against a bare transmon).

1. Screen every candidate (:mod:`lru_mps.studies.design.screen`): D from a
   short branch-estimator run, the added error from the exact per-realization
   qubit rates with the hardware composed in; common random numbers (one seed
   for all).
2. The screen's Pareto front of (D, added) and the best D under the budget
   (``budget``: "paper", the paper working point's added error, or a number).
3. Confirm up to ``confirm_max`` front points, the paper's point (L = 3,
   W = 100 MHz, J = 5 MHz, Ubar = 250 MHz, periodic feedback at 0.03 J) and
   the screen's best under the budget with the QEC study's realistic
   trajectories (``trajectories``, ``duration``); report screen against
   confirmation per point (``disagreement`` in combined standard errors;
   beyond ``flag_sigmas`` the study says where the screen misleads).
4. On the confirmed points: the front, the best under the budget, and the
   verdict against the paper's point: "reproduces" or "better by X +- Y" in
   D (paired jackknife: the same trajectories in both); with more than one
   hopping profile, whether a non-uniform one moves the confirmed front
   (``profiles``; the uniform-only screen's front and each profile's best
   under the budget are confirmed too, so that both fronts rest on
   confirmations).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...analysis.design import best_under, disagreement, paired_difference, pareto_front
from ...analysis.numbers import pm, shown, sig
from ...physics.units import time_to_us
from ..base import TIME_UNITS, Study, StudyContext, StudyOption, finite_or_none, time_json
from ..common import conditions_of, refuse_bath, refuse_readout
from ..qec import cycle_grid, cycle_time
from . import profiles as design_profiles, report as design_report, screen as design_screen, unresolved
from .plan import (PAPER_POINT, SEARCHED, candidate_spec, candidates, label, profile_picks, range_edges, run_settings,
                   search_space, to_confirm)

__all__ = ["PAPER_POINT", "SEARCHED", "STUDIES", "Design", "bare_us", "candidate_spec", "candidates", "label",
           "profile_picks", "range_edges", "search_space", "to_confirm"]

HELP = """Design search: the Pareto front of leakage duration D vs added qubit error per cycle.

For the hardware (--t1, --tphi, --temperature, --cycle-time) search the
array length (--lengths), disorder width (--disorders), hopping
(--hoppings), anharmonicity (--anharmonicities), disorder pattern
(disorder_patterns in the TOML), hopping profile (--hopping-profiles: named
profiles separated by commas, e.g. uniform,transfer,linear:0.6:1.4; an explicit
list of couplings fits one length and is refused), reset kind (--resets) and
rate (--rate-factors x the analytic low optimum): screen
every candidate fast (short branch runs for D, exact per-realization qubit
rates with the hardware composed in for the added error, common random
numbers), then confirm the front, the paper's working point (L = 3,
W = 100 MHz, J = 5 MHz, periodic feedback at 0.03 J) and the best design
under the budget (--budget: 'paper' or an added p_total per cycle in (0, 1]) with the
qec study's realistic trajectories.  Says whether the paper's point is
reproduced or by how much a design beats it, where the screen misleads, and
(with more than one profile) whether a non-uniform profile moves the confirmed
front, with each profile's best D under the budget.
Default: uniform only, 324 candidates, about 23 minutes on one core of a busy 2-core machine; with
--hopping-profiles uniform,transfer (studies/design-profiles.toml) 486 and about 35 minutes (--quick: uniform
and transfer, 16 candidates, 30 s).
"""

@dataclass
class _Candidates:
    """The search: its space (:func:`.plan.search_space`), the candidates with their specs, the paper's index."""

    space: dict
    cands: list
    specs: list
    paper: int


@dataclass
class _Screened:
    """What the screen found: per candidate D and the qubit's added error, the front (indices), the best under the
    budget (None: none) and that budget (added p_total per cycle)."""

    screen: list
    front: list
    best: int | None
    budget: float


class Design(Study):
    """The design study (module docstring)."""

    NAME = "design"
    OPTIONS = (
        StudyOption("cycle_time", "The QEC cycle t_c, e.g. 1us, 500ns, 30/J."),
        StudyOption("lengths", "Array lengths to search, e.g. 2:5 or 2,3,4."),
        StudyOption("disorders", "Disorder widths W/2pi to search, e.g. 60MHz,100MHz,150MHz."),
        StudyOption("hoppings", "Hoppings J/2pi to search, e.g. 3MHz,5MHz,7MHz."),
        StudyOption("anharmonicities", "Mean anharmonicities Ubar/2pi to search, each with a unit in 50-500 MHz, e.g. 250MHz.", each="anharmonicity"),
        StudyOption("hopping_profiles", "Hopping profiles to search, named forms separated by commas: uniform, transfer, linear:A:B, e.g. uniform,transfer (an explicit list of couplings fits one length: refused)."),
        StudyOption("resets", "Reset kinds to search, e.g. periodic,random,dissipation."),
        StudyOption("rate_factors", "Rates to search, as multiples of the analytic low optimum, e.g. 0.375,0.75,1.5."),
        StudyOption("budget", "Added p_total per cycle allowed: 'paper' (the paper's working point's) or a number in (0, 1], e.g. 0.005."),
    )
    SWEPT = {"length": ("lengths",), "disorder": ("disorders",), "hopping": ("hoppings",),
             "anharmonicity": ("anharmonicities",), "disorder_pattern": ("disorder_patterns",), "reset": ("resets",),
             "rate": None, "hopping_profile": ("hopping_profiles",)}
    SWEPT_HOW = {"rate": "the rates as rate_factors x each candidate's analytic optimum (--rate-factors)"}
    HELP = HELP
    TIME_UNITS = TIME_UNITS  # no time axis: D in cycles against a probability per cycle

    def compute(self, cfg: dict, ctx: StudyContext):
        refuse_readout(cfg, "design study", "a readout error injects leakage at the reset site, so D diverges",
                       "see the readout's leakage with `lru-mps study dynamics --readout-error`")
        refuse_bath(cfg, "design study", "heating makes |2> from |1>, so the leakage has a thermal floor and D "
                    "diverges")
        cond = conditions_of(cfg, allow_both=False)[0]
        space = search_space(cfg)
        cands = candidates(space)
        specs = [candidate_spec(cfg, c) for c in cands]  # bad values stop the study before anything runs
        paper = next(i for i, c in enumerate(cands) if c["paper"])
        st = run_settings(cfg, specs[paper].J_hz)
        many = len(space["profiles"]) > 1  # the uniform-only front and each profile's best confirmed too
        ctx.plan(len(cands) + st["confirm_max"] + 2 + (st["confirm_max"] + len(space["profiles"]) if many else 0))
        screen = []
        for c, spec in zip(cands, specs):
            t_c = cycle_time(cfg, spec.J_hz)  # the same t_c in each candidate's unit 1/J
            K, m = cycle_grid(cfg, t_c, spec.J_hz)
            D = design_screen.screen_leakage(spec, cfg, ctx, t_c, st["Ks"], st["ms"], st["odds"], label(c))
            q = design_screen.screen_qubit(spec, cfg, t_c, np.linspace(0.0, K * t_c, K * m + 1))
            screen.append({"D": D, "qubit": q})
        sD = np.array([s["D"]["value"] for s in screen])
        sA = np.array([s["qubit"]["added"]["p_total"]["value"] for s in screen])
        front = [int(i) for i in pareto_front(sD, sA)]
        budget_s = sA[paper] if st["budget"] == "paper" else st["budget"]
        best_s = best_under(sD, sA, budget_s)
        picks = to_confirm(front, best_s, paper, st["confirm_max"],
                           profile_picks(cands, sD, sA, budget_s, paper, st["confirm_max"], space["profiles"]))
        conf = {}
        for i in picks:
            spec = specs[i]
            t_c = cycle_time(cfg, spec.J_hz)
            K, m = cycle_grid(cfg, t_c, spec.J_hz)
            conf[i] = design_screen.confirm(spec, cfg, ctx, t_c, K, m, st["odds"], label(cands[i]))
        summary = self._summary(cfg, cond, _Candidates(space, cands, specs, paper),
                                _Screened(screen, front, best_s, budget_s), conf, st)
        return design_report.dataset(cfg, specs[paper], cands, screen, front, conf, summary), summary

    def _summary(self, cfg, cond, search: "_Candidates", screened: "_Screened", conf: dict, st: dict) -> dict:
        """The study's JSON object: the search, the screen's front and best, the confirmed points, the verdict."""
        space, cands, specs, paper = search.space, search.cands, search.specs, search.paper
        screen, front, best_s, budget_s = screened.screen, screened.front, screened.best, screened.budget
        J_hz = specs[paper].J_hz
        fl = finite_or_none
        us_per_J = time_to_us(1.0, J_hz)

        def cand(i):
            return {**{k: v for k, v in cands[i].items()}, "index": i, "label": label(cands[i])}

        def scr(i):
            s = screen[i]
            return {"D": {"value": fl(s["D"]["value"]), "error": fl(s["D"]["error"])},
                    "added": {q: {k: fl(v) for k, v in x.items()} for q, x in s["qubit"]["added"].items()},
                    "T1_us": fl(time_to_us(s["qubit"]["T1"], specs[i].J_hz)),
                    "T2_us": fl(time_to_us(s["qubit"]["T2"], specs[i].J_hz))}

        confirmed = []
        for i, c in conf.items():
            s = screen[i]
            zD = disagreement(s["D"]["value"], s["D"]["error"], c["D"]["value"], c["D"]["error"])
            za = disagreement(s["qubit"]["added"]["p_total"]["value"], s["qubit"]["added"]["p_total"]["error"],
                              c["added"]["p_total"]["value"], c["added"]["p_total"]["error"])
            us_i = time_to_us(1.0, specs[i].J_hz)
            confirmed.append({
                **cand(i), "on_screen_front": i in front, "screen": scr(i),
                "confirm": {"D": {"value": fl(c["D"]["value"]), "error": fl(c["D"]["error"])},
                            "added": {q: {k: fl(v) for k, v in x.items()} for q, x in c["added"].items()},
                            "T1_us": fl(c["T1"][0] * us_i), "T1_error_us": fl(c["T1"][1] * us_i),
                            "T2_us": fl(c["T2"][0] * us_i), "T2_error_us": fl(c["T2"][1] * us_i)},
                "disagreement": {"D": fl(zD), "added": fl(za)},
                "agree": _agree((zD, za), st["flag"]),
            })
        idx = list(conf)
        cD = np.array([conf[i]["D"]["value"] for i in idx])
        cA = np.array([conf[i]["added"]["p_total"]["value"] for i in idx])
        c_front = [idx[j] for j in pareto_front(cD, cA)]
        pc = conf[paper]
        budget_c = pc["added"]["p_total"]["value"] if st["budget"] == "paper" else st["budget"]
        jb = best_under(cD, cA, budget_c)
        best = None if jb is None else idx[jb]
        verdict = _verdict(best, paper, conf, st["flag"])
        verdict["at_range_edge"] = [] if best is None else range_edges(cands[best], space)
        misleads = [design_report.misleads(x, st["flag"]) for x in confirmed if x["agree"] is False]
        summary = {
            "study": self.NAME,
            "parameters": {"T1q_us": fl(bare_us(specs[paper])[0]), "Tphi_us": fl(bare_us(specs[paper])[1]),
                           "temperature_K": specs[paper].conditions.temperature_K, "seed": int(cfg["seed"]),
                           "confirm_seed": int(cfg["seed"]) + design_screen.CONFIRM_SEED_OFFSET},
            "conditions": cond,
            "cycle_time": {**time_json(st["t_c"], 0.0, J_hz), "value_us": float(f"{st['t_c'] * us_per_J:.12g}")},
            "search": {"lengths": space["lengths"], "disorders_MHz": space["W_MHz"], "hoppings_MHz": space["J_MHz"],
                       "anharmonicities_MHz": space["Ubar_MHz"], "disorder_patterns": space["patterns"],
                       "resets": space["resets"], "rate_factors": space["rate_factors"],
                       "hopping_profiles": space["profiles"],
                       "rate_seed": "the L = 2 stack model's low optimum: 2 J_prop (feedback), sqrt2 J_prop "
                                    "(dissipation), J_prop = 2 J^2/Ubar"},
            "candidates": len(cands),
            "screen": {"trajectories": int(cfg["screen_trajectories"]), "realizations": int(cfg["realizations"]),
                       "cycles": st["Ks"], "points_per_cycle": st["ms"],
                       "method": design_report.SCREEN_METHOD,
                       "front": [{**cand(i), **scr(i)} for i in front],
                       "budget": fl(budget_s), "best": None if best_s is None else {**cand(best_s), **scr(best_s)}},
            "confirmation": {"trajectories": int(cfg["trajectories"]), "cycles": st["K"], "points_per_cycle": st["m"],
                             "confirm_max": st["confirm_max"], "method": design_report.CONFIRM_METHOD,
                             "points": confirmed},
            "front": [next(x for x in confirmed if x["index"] == i) for i in c_front],
            "paper_point": next(x for x in confirmed if x["index"] == paper),
            "budget": {"source": "paper" if st["budget"] == "paper" else "config", "added_p_total": fl(budget_c),
                       "error": fl(pc["added"]["p_total"]["error"]) if st["budget"] == "paper" else 0.0},
            "best": None if best is None else next(x for x in confirmed if x["index"] == best),
            "verdict": verdict,
            "validation": {"flag_sigmas": st["flag"], "agree": sum(x["agree"] is True for x in confirmed),
                           "confirmed": len(confirmed), "screen_misleads": misleads},
            "profiles": {**design_profiles.compare(
                [{"index": x["index"], "label": x["label"], "hopping_profile": x["hopping_profile"],
                  "D": x["confirm"]["D"], "added": x["confirm"]["added"]["p_total"]} for x in confirmed],
                space["profiles"], fl(budget_c)), "skipped": design_profiles.skipped(space["profiles"], space["lengths"])},
            "note": design_report.NOTE,
        }
        # why each null number is null, and what would give it (keys of their own beside the nulls)
        return unresolved.add(summary, {i: c.get("reasons", {}) for i, c in conf.items()}, st["confirm_max"])

    def table(self, summary: dict) -> str:
        return design_report.table(summary)

    def plot(self, ds, summary: dict, figdir) -> list:
        return design_report.plot(ds, summary, figdir)


def _agree(distances, flag: float) -> bool | None:
    """Whether screen and confirmation agree: False where a computed distance exceeds ``flag``, else None where a
    distance could not be computed (nan: not compared, so no agreement; its reason is ``disagreement.*_reason``),
    else True."""
    if any(z > flag for z in distances):
        return False
    return None if any(not math.isfinite(z) for z in distances) else True


def bare_us(spec) -> tuple[float, float]:
    """(T1q, Tphi) of site 1 in us (inf: none)."""
    c = spec.conditions
    return (time_to_us(float(c.t1_sites(spec.L)[0]), spec.J_hz), time_to_us(float(c.tphi_sites(spec.L)[0]), spec.J_hz))


def _verdict(best: int | None, paper: int, conf: dict, flag: float) -> dict:
    """'reproduces' (the best under the budget is the paper's point, or not better beyond ``flag`` errors... 2
    sigma) or 'better' with D_paper - D_best and its paired jackknife error (the same trajectories in both)."""
    pD = conf[paper]["D"]
    if best is None:
        return {"result": "none under budget", "text": "no confirmed design meets the budget"}
    if best == paper:
        return {"result": "reproduces", "text": "the paper's working point is the best confirmed design under the budget",
                "better_by": {"value": 0.0, "error": 0.0, "relative": 0.0}}
    bD = conf[best]["D"]
    pa, ba = conf[paper]["added"]["p_total"], conf[best]["added"]["p_total"]
    added = (f"added p_total {shown(ba['value'], ba['error'])} against the paper's "
             f"{shown(pa['value'], pa['error'])}")
    diff, err = paired_difference(pD["value"], bD["value"], pD["replicas"], bD["replicas"])
    if not math.isfinite(err):
        err = math.hypot(pD["error"], bD["error"])
    rel = diff / pD["value"] if pD["value"] > 0 else math.nan
    significant = diff > 2.0 * err
    text = (f"better by {pm(diff, err)} cycles in D ({100 * rel:.0f} % of the paper's "
            f"{sig(pD['value'], 3)}) within the budget ({added})" if significant else
            f"reproduces: the best confirmed design is {pm(diff, err)} cycles lower in D, within 2 errors "
            f"({added})")
    return {"result": "better" if significant else "reproduces", "text": text,
            "better_by": {"value": finite_or_none(diff), "error": finite_or_none(err), "relative": finite_or_none(rel)}}


STUDIES = {Design.NAME: Design()}
