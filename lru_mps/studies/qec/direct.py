"""The qec study's direct simulation of the steady-state leakage (docs/physics.md §8 "The QEC view").

Leakage events of probability p per cycle as Kraus maps at every cycle
boundary, in the Lindblad reference (:mod:`lru_mps.references.injection`,
L <= 4): the coding qubit's P_star^(1) at a boundary just before the map, in
the periodic steady state, from an empty-leakage start, for every p of
``direct_injections`` (and the study's ``injection``), averaged over the
realizations 0..R-1 of the study's disorder stream (those of its first R
trajectories; R = ``direct_realizations``), with the standard error over
them.  Next to it, per p:

``linear_response``            p D/(1 + p D) with the study's D (trajectories,
                               the event in the thermal array): the single-
                               event estimate the study reports;
``linear_response_reference``  the mean over the same realizations of
                               p D0/(1 + p D0), D0 the same reference's
                               single-event duration with the array at 0 K,
                               which the steady state holds (no bath: decay
                               and dephasing only), the direct value's exact
                               p -> 0 limit;
``ratio``                      value / linear_response_reference (jackknife
                               over the realizations): 1 + O(p) where linear
                               response holds.

Returns None (and a note) above L = 4 or with ``direct_realizations`` = 0: no
number stands in for one not computed.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import ParameterError, require
from ...references import injection as inj
from ...references.lindblad import MAX_LENGTH
from ...run.executors import map_in_processes
from ...run.seeding import disorder_rng
from ...analysis.fitting import ratio_of_sums
from ..base import finite_or_none

METHOD = ("Lindblad reference (one realization's master equation, L <= 4) with the Kraus maps K0 = sqrt(1-p)(|0><0| + "
          "|1><1|) + |2><2|, K1 = sqrt(p)|2><0|, K2 = sqrt(p)|2><1| on site 1 at every cycle boundary k t_c, after "
          "recording; value: P_star^(1) at a boundary just before the map in the periodic steady state (the mean over "
          "the last quarter of the run's boundaries, from site 1 in |0> and the array thermal), averaged over the "
          "realizations 0..R-1 of the study's disorder stream, error: the standard error over them")


def direct_injections(cfg: dict, p: float) -> list[float]:
    """The p of the direct simulation: ``direct_injections`` (a list or 'a,b,c') and the study's injection p."""
    value = cfg.get("direct_injections", [])
    items = [v for v in value.split(",") if v.strip()] if isinstance(value, str) else list(value)
    try:
        ps = [float(v) for v in items]
    except (TypeError, ValueError):
        raise ParameterError("direct_injections", value, "probabilities per cycle in (0, 1), e.g. 1e-3,1e-2,0.1") from None
    require(all(0.0 < x < 1.0 for x in ps), "direct_injections", value,
            "probabilities per cycle in (0, 1), e.g. 1e-3,1e-2,0.1")
    return sorted(set(ps) | {p})


def direct_realizations(cfg: dict) -> int:
    value = cfg.get("direct_realizations", 0)
    require(not isinstance(value, bool) and isinstance(value, (int, float)) and int(value) == value and value >= 0,
            "direct_realizations", value, "an integer >= 0 (0: no direct simulation)")
    return int(value)


def _one(spec, seed: int, index: int, ps, t_c: float, t0_nodes: int):
    return inj.steady_state(spec, spec.draw_realization(disorder_rng(seed, index)), ps, t_c, t0_nodes)


def _run(spec, seed: int, R: int, ps, t_c: float, t0_nodes: int, workers: int) -> list:
    """The steady states of realizations 0..R-1, in that order, over up to ``workers`` processes."""
    return map_in_processes(_one, [(spec, seed, i, ps, t_c, t0_nodes) for i in range(R)], workers)


def _mean_sem(x: np.ndarray) -> tuple[float, float]:
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else math.nan


def direct_simulation(spec, cfg: dict, t_c: float, p: float, D: float, D_error: float,
                      workers: int = 1) -> tuple[dict | None, str]:
    """(the ``direct_simulation`` block of the summary, or None; a note on it)."""
    ps = direct_injections(cfg, p)
    R = direct_realizations(cfg)
    t0_nodes = inj.T0_NODES
    if spec.L > MAX_LENGTH:
        return None, (f"direct simulation not computed at L = {spec.L}: the density-matrix reference holds L <= "
                      f"{MAX_LENGTH} (a trajectory version with the injection maps does not exist yet); 'value' is "
                      "the single-event estimate p D/(1 + p D), valid for isolated events")
    if R == 0:
        return None, "direct simulation not computed (direct_realizations = 0); 'value' is p D/(1 + p D)"
    runs = _run(spec, int(cfg["seed"]), R, ps, t_c, t0_nodes, workers)
    D0 = np.array([r.D_cold for r in runs])
    Dth = np.array([r.D_thermal for r in runs])
    points = []
    for j, q in enumerate(ps):
        x = np.array([r.steady[j].value for r in runs])
        lr0 = q * D0 / (1.0 + q * D0)
        value, error = _mean_sem(x)
        ratio, ratio_err = ratio_of_sums(x, lr0)
        lr = q * D / (1.0 + q * D)
        points.append({
            "p": q, "value": finite_or_none(value), "error": finite_or_none(error),
            "linear_response": finite_or_none(lr), "linear_response_error": finite_or_none(q * D_error / (1 + q * D) ** 2),
            "linear_response_reference": finite_or_none(lr0.mean()),
            "ratio": finite_or_none(ratio), "ratio_error": finite_or_none(ratio_err),
            "cycles": int(max(r.steady[j].cycles for r in runs)),
            "converged": bool(all(r.steady[j].converged for r in runs)),
            "residual": finite_or_none(max(r.steady[j].residual / r.steady[j].value for r in runs)),
        })
    d0, d0e = _mean_sem(D0)
    dth, dthe = _mean_sem(Dth)
    block = {
        "method": METHOD,
        "observable": "P_star^(1) at a cycle boundary just before the injection map, periodic steady state",
        "realizations": R, "t0_nodes": t0_nodes,
        "points": points,
        "D_reference": {"cold": {"value": finite_or_none(d0), "error": finite_or_none(d0e)},
                        "thermal": {"value": finite_or_none(dth), "error": finite_or_none(dthe)},
                        "complete": bool(all(r.D_complete for r in runs))},
        "note": {
            "linear_response": "p D/(1 + p D) with the study's D (trajectories, the event in the thermal array)",
            "linear_response_reference": "mean over the same realizations of p D0/(1 + p D0), D0 = sum_{k>=1} S(k) of "
                                         "the same reference with the array at 0 K: without a bath the array relaxes "
                                         "to its ground state over the cycles, so this is the direct value's p -> 0 "
                                         "limit (D_reference.thermal: the event in the thermal array, as the study's D)",
            "ratio": "value / linear_response_reference, jackknife over the realizations: its distance from 1 is where "
                     "linear response fails (overlapping events)",
            "residual": "the largest relative difference of the last two quarters' means (convergence)",
        },
    }
    return block, ("direct simulation: the Lindblad reference with the injection maps (direct_simulation); 'value' is "
                   "the single-event estimate p D/(1 + p D), valid for isolated events")
