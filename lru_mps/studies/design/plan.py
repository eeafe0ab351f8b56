"""The design study's plan: the search space of the config (checked, one line naming the key for a bad value),
every candidate of it with its spec and rate seed, the run settings (cycle, grids, budget, counts), and which
candidates the trajectories confirm."""

from __future__ import annotations

import itertools
import math

import numpy as np

from ...analysis.design import KINDS, best_under, pareto_front, seed_rate
from ...errors import ParameterError, require
from ...physics import disorder as disorder_patterns
from ...physics import domains
from ...physics.units import parse_frequency_hz
from ..base import parse_lengths
from ..common import as_list, positive_int, spec_of
from ..config import Config
from ..qec import cycle_grid, cycle_time
from .profiles import distinct, searched, tag


#: the paper's working point (paper Sec. IV: L = 3, W/2pi = 100 MHz, J/2pi = 5 MHz, Ubar/2pi = 250 MHz, periodic
#: feedback at 0.03 J)
PAPER_POINT = {"L": 3, "W_MHz": 100.0, "J_MHz": 5.0, "Ubar_MHz": 250.0, "pattern": "box", "reset": "periodic",
               "rate_J": 0.03, "hopping_profile": "uniform"}
#: the model options the search sets (refused in the [model] table)
SEARCHED = ("length", "disorder", "hopping", "anharmonicity", "disorder_pattern", "reset", "rate", "device",
            "hopping_profile")


def _mhz_list(cfg: dict, key: str) -> list[float]:
    """A list of frequencies with units (e.g. ['60MHz', '100MHz']) -> MHz, each > 0."""
    out = []
    for v in as_list(cfg, key):
        try:
            hz = parse_frequency_hz(v, key)
        except ParameterError:
            raise ParameterError(key, cfg[key], "frequencies with a unit, e.g. ['60MHz', '100MHz']") from None
        require(math.isfinite(hz) and hz > 0, key, cfg[key], "frequencies > 0 with a unit, e.g. ['60MHz', '100MHz']")
        out.append(hz / 1e6)
    return sorted(set(out))


def search_space(cfg: dict) -> dict:
    """The checked search ranges of the config (one clear line naming the key for a bad value)."""
    for key in SEARCHED:
        require(cfg["model"].get(key) is None, key, cfg["model"].get(key),
                "not set in the design study's [model] table (the search sets it: use lengths, disorders, hoppings, "
                "anharmonicities, disorder_patterns, hopping_profiles, resets, rate_factors)")
    lengths = parse_lengths(cfg["lengths"])
    require(max(lengths) <= 8, "lengths", cfg["lengths"], "lengths 2..8 (the screen's trajectories at L > 8 are slow)")
    resets = as_list(cfg, "resets")
    for kind in resets:
        require(kind in KINDS, "resets", cfg["resets"], f"reset kinds among {', '.join(KINDS)}")
    patterns = as_list(cfg, "disorder_patterns")
    for p in patterns:
        require(p in disorder_patterns.PATTERNS, "disorder_patterns", cfg["disorder_patterns"],
                f"patterns among {', '.join(disorder_patterns.PATTERNS)}")
    factors = []
    for f in as_list(cfg, "rate_factors"):
        try:
            f = float(f)
        except (TypeError, ValueError):
            raise ParameterError("rate_factors", cfg["rate_factors"], "numbers > 0, e.g. [0.375, 0.75, 1.5]") from None
        require(math.isfinite(f) and f > 0, "rate_factors", cfg["rate_factors"], "numbers > 0, e.g. [0.375, 0.75, 1.5]")
        factors.append(f)
    J_MHz, Ubar_MHz = _mhz_list(cfg, "hoppings"), _mhz_list(cfg, "anharmonicities")
    # every pair is a candidate: the smallest Ubar large against the largest J (the model's domain, physics.domains)
    if J_MHz and Ubar_MHz:
        domains.require_ubar(min(Ubar_MHz) / max(J_MHz), "hoppings", cfg["hoppings"], max(J_MHz) * 1e6)
    return {"lengths": lengths, "W_MHz": _mhz_list(cfg, "disorders"), "J_MHz": J_MHz,
            "Ubar_MHz": Ubar_MHz, "patterns": list(dict.fromkeys(patterns)),
            "resets": list(dict.fromkeys(resets)), "rate_factors": sorted(set(factors)),
            "profiles": searched(cfg)}


def candidate_spec(cfg: dict, c: dict):
    """The ArraySpec of candidate ``c`` (the [model] table's hardware and conditions)."""
    return spec_of(cfg, length=c["L"], disorder=f"{c['W_MHz']!r}MHz", hopping=f"{c['J_MHz']!r}MHz",
                   anharmonicity=f"{c['Ubar_MHz']!r}MHz", disorder_pattern=c["pattern"], reset=c["reset"],
                   rate=f"{c['rate_J']!r}J", hopping_profile=c.get("hopping_profile", "uniform"))


def candidates(space: dict) -> list[dict]:
    """Every combination of the search space, rates seeded at the analytic low optimum times each factor; the
    paper's point added (``paper``: True) if the grid does not hold it.  A profile whose couplings at a length are
    an earlier profile's is not repeated there (:func:`.profiles.distinct`).  The seed uses the nominal J_prop =
    2 J^2/Ubar of the unit (mean) coupling J, whatever the profile (its bonds hop at 2 J_l^2/Ubar)."""
    out = []
    profiles = space.get("profiles", ["uniform"])
    for L, W, J, U, pat, kind, f in itertools.product(space["lengths"], space["W_MHz"], space["J_MHz"],
                                                      space["Ubar_MHz"], space["patterns"], space["resets"],
                                                      space["rate_factors"]):
        G = f * seed_rate(kind, 2.0 * J / U)  # J_prop = 2 J^2/Ubar in units of J = 2 (J/2pi)/(Ubar/2pi)
        for prof in distinct(profiles, L)[0]:
            out.append({"L": L, "W_MHz": W, "J_MHz": J, "Ubar_MHz": U, "pattern": pat, "reset": kind,
                        "rate_factor": f, "rate_J": float(f"{G:.12g}"), "rate_MHz": float(f"{G * J:.12g}"),
                        "paper": False, "hopping_profile": prof})
    for c in out:
        c["paper"] = all(c[k] == PAPER_POINT[k] if k != "rate_J" else abs(c[k] - PAPER_POINT[k]) < 1e-9
                         for k in PAPER_POINT)
    if not any(c["paper"] for c in out):
        G = PAPER_POINT["rate_J"]
        out.append({**PAPER_POINT, "rate_factor": G / seed_rate("periodic", 2.0 * 5.0 / 250.0),
                    "rate_MHz": G * PAPER_POINT["J_MHz"], "paper": True})
    return out


def label(c: dict) -> str:
    """A short name of a candidate for tables and progress."""
    pat = "" if c["pattern"] == "box" else f" {c['pattern']}"
    prof = tag(c.get("hopping_profile", "uniform"))
    return (f"L={c['L']} W={c['W_MHz']:g}MHz J={c['J_MHz']:g}MHz U={c['Ubar_MHz']:g}MHz{pat}{prof} {c['reset']} "
            f"G={c['rate_J']:.3g}J")


def run_settings(cfg: dict, J_hz: float) -> dict:
    """The checked run settings (cycle, grids, budget, counts)."""
    t_c = cycle_time(cfg, J_hz)
    K, m = cycle_grid(cfg, t_c, J_hz)
    Ks, ms = cycle_grid({"cycles": "auto", "duration": cfg["screen_duration"],
                         "min_time_points": 2}, t_c, J_hz)  # the screen's own grid
    ms = positive_int(cfg, "screen_points_per_cycle", 1)
    for key in ("screen_trajectories", "trajectories", "realizations"):
        positive_int(cfg, key, 2)
    confirm_max = positive_int(cfg, "confirm_max", 1)
    flag = float(cfg["flag_sigmas"])
    require(math.isfinite(flag) and flag > 0, "flag_sigmas", cfg["flag_sigmas"], "a number of standard errors > 0")
    budget = cfg["budget"]
    if budget != "paper":
        try:
            budget = float(budget)
        except (TypeError, ValueError):
            raise ParameterError("budget", cfg["budget"], "'paper' or an added error per cycle (p_total), e.g. 0.005") from None
        require(math.isfinite(budget) and 0.0 < budget <= 1.0, "budget", cfg["budget"],
                "'paper' or an added error per cycle (p_total) in (0, 1], e.g. 0.005")
    odds = Config(cfg).number("leakage_thermal_odds", min=1)
    return {"t_c": t_c, "K": K, "m": m, "Ks": Ks, "ms": ms, "confirm_max": confirm_max, "flag": flag,
            "budget": budget, "odds": odds}


def to_confirm(front: list[int], best: int | None, paper: int, n: int, more: tuple = ()) -> list[int]:
    """Candidates to confirm: up to ``n`` front points spread evenly along it (by D), always the paper's point and
    the screen's best under the budget, then ``more`` (those not picked yet)."""
    picks = list(front)
    if len(picks) > n:
        picks = [front[i] for i in sorted(set(np.linspace(0, len(front) - 1, n).round().astype(int).tolist()))]
    extra = [i for i in (best, paper) if i is not None and i not in picks]
    return list(dict.fromkeys(picks + extra + [i for i in more if i is not None]))


def profile_picks(cands: list[dict], sD, sA, budget: float, paper: int, n: int, profiles: list[str]) -> list[int]:
    """With more than one profile searched: what the uniform-only study would confirm (its screen's front, up to
    ``n``, its best under the budget, the paper's point) and each profile's best under the budget on the screen,
    so that the uniform-only front and every profile's best rest on confirmations.  None with one profile."""
    if len(profiles) < 2:
        return []
    out = []
    for p in profiles:
        sub = [i for i, c in enumerate(cands) if c["hopping_profile"] == p]
        if not sub:
            continue
        b = best_under(sD[sub], sA[sub], budget)
        if p == "uniform":
            out += to_confirm([sub[j] for j in pareto_front(sD[sub], sA[sub])], None, paper, n)
        out += [] if b is None else [sub[b]]
    return out


def range_edges(c: dict, space: dict) -> list[str]:
    """The searched parameters at which candidate ``c`` sits on the edge of a range of two or more values (e.g.
    'J_MHz max'): the optimum may lie beyond, a wider range would tell."""
    out = []
    for key, rng in (("L", space["lengths"]), ("W_MHz", space["W_MHz"]), ("J_MHz", space["J_MHz"]),
                     ("Ubar_MHz", space["Ubar_MHz"]), ("rate_factor", space["rate_factors"])):
        if len(rng) >= 2 and c[key] in (min(rng), max(rng)):
            out.append(f"{key} {'min' if c[key] == min(rng) else 'max'}")
    return out
