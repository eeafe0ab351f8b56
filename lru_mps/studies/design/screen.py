"""The design study's two passes over candidates: the fast screen and the realistic confirmation.

Screen (every candidate; docs/physics.md §8 "Designing an LRU"):

``D``       the QEC study's estimator on a short run: the branch estimator
            (removals integrated out, the hardware and the thermal start
            sampled) from the leakage start, ``screen_trajectories``
            trajectories over ``screen_duration``, ``screen_points_per_cycle``
            points per cycle; D = sum_k S(k) with its tail and jackknife error
            (:func:`lru_mps.analysis.qec.mean_leakage_cycles`);
``added``   the exact per-realization qubit rates of the N = 1 sector
            (:func:`lru_mps.analysis.rates.qubit_rates`) with T1q and Tphi
            composed in, fitted on the confirmation's grid and window
            (:func:`lru_mps.analysis.design.screened_qubit_error`) over
            ``realizations`` realizations.

Common random numbers: every candidate runs with the same seed, so
trajectory i draws its disorder uniforms, thermal sample, measurement clock
and dephasing stream from the same streams (:mod:`lru_mps.run.seeding`) in
every candidate (the uniforms scaled by that candidate's W), and the screen's
realizations are the trajectories' own.  Differences between candidates then
carry much less sampling noise than either candidate alone (measured in
tests/test_design.py).

Confirmation (the front, the paper's point and the best under the budget):
the QEC study's path (:func:`lru_mps.studies.common.run_ensemble` with the
three initial states, ``trajectories``, ``duration``, ``min_time_points``),
D and the added error per cycle from the fitted T1, T2 exactly as ``lru-mps
study qec`` computes them.  The confirmation runs on its own streams (seed +
:data:`CONFIRM_SEED_OFFSET`), so that it is independent of the screen it
checks (the same seed would re-use the screen's first trajectories: nested
samples, whose disagreement in combined errors would be understated); the
confirmations share that seed, so their paired differences keep the common
random numbers.

Every ensemble goes through the study's work folder, so a rerun (or an
interrupted run) reuses every finished block.

Hopping profiles (``hopping_profile`` of the candidate's spec): the
trajectories and the exact rates take each realization's couplings
(``Realization.hoppings``: the profile's P_l, times the spread when on), so
both passes see the profile.  Two numbers stay nominal, J_l = J: the rate seed
(J_prop = 2 J^2/Ubar of the mean coupling, :func:`lru_mps.studies.design.candidates`)
and the fit window's start T_prop = pi/(2 J_prop) of the added error (the same
as the confirmation's, :func:`lru_mps.analysis.decay.fit_window_start`, so the
two compare like with like); a profile changes the transit time by a factor
of order one, inside a window that runs for tens of T_prop.
"""

from __future__ import annotations

import math

import numpy as np

from ...analysis.decay import decay_times, fit_window, fit_window_start, unresolved_reason
from ...analysis.design import composed_rates, dephased_gamma1, ideal_gamma2, screened_qubit_error
from ...analysis.fitting import jackknife_error
from ...analysis.qec import cycle_total, pauli_errors
from ...physics.conditions import bare_T2
from ...run.seeding import disorder_rng
from ..common import run_ensemble

PROBS = ("eps_1", "p_x", "p_y", "p_z", "p_total")


def bare_times(spec) -> tuple[float, float]:
    """(T1, T2) of a bare transmon with site 1's T1q and Tphi (1/J)."""
    c = spec.conditions
    T1 = float(c.t1_sites(spec.L)[0])
    return T1, bare_T2(T1, float(c.tphi_sites(spec.L)[0]))


def leakage_cycles(res, t_c: float) -> tuple[float, float, np.ndarray]:
    """(D, its jackknife error, the leave-one-block-out replicas of D) of a result with the leakage start.

    The QEC study's D (:func:`lru_mps.analysis.qec.mean_leakage_cycles`: the sum over boundaries, the tail from
    T_star's window or half the bound) with the replicas kept, for differences between candidates on the same
    blocks (:func:`lru_mps.analysis.design.paired_difference`).
    """
    obs = "leakage_site1"

    def total(r, window):  # the ratio estimator of S(k), as mean_leakage_cycles: each replica over its own S(0)
        ms = r.observable(obs)
        y0 = float(ms.mean[0])
        value, tail, method = cycle_total(r.times, ms.mean, ms.sem, t_c, window, r.spec.conditions.longest_T1,
                                          y_bound=float(r.observable("leakage_array").mean[-1]))
        return (value / y0, tail / y0, method) if y0 > 0 else (math.nan, math.nan, method)

    window = fit_window("T_star", res, obs)
    value, tail, method = total(res, window)
    reps = np.array([total(r, window if method == "fit" else None)[0] for r in res.leave_one_out()])
    error = float(jackknife_error(reps)) if len(reps) >= 2 else math.nan
    if method == "bound":
        error = math.hypot(error, tail)
    return float(value), error, reps


def screen_leakage(spec, cfg: dict, ctx, t_c: float, K: int, m: int, odds: float, label: str) -> dict:
    """The screen's D of one candidate: {"value", "error", "replicas"}."""
    res = run_ensemble(spec, {**cfg, "trajectories": int(cfg["screen_trajectories"])}, ctx, f"screen {label}",
                       init="leakage", t_final=K * t_c, time_points=K * m + 1, leakage_thermal_odds=odds)
    D, err, reps = leakage_cycles(res, t_c)
    return {"value": D, "error": err, "replicas": reps}


def realization_rates(spec, seed: int, R: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(|psi_1|^2, Gamma_1, Gamma_2) of the qubit mode for the realizations of trajectories 0..R-1 (the seed's
    disorder streams), units of J: Gamma_1 with the spec's dephasing (:func:`lru_mps.analysis.design.dephased_gamma1`),
    Gamma_2 of the ideal reset (:func:`lru_mps.analysis.design.ideal_gamma2`, the exact rates of
    :mod:`lru_mps.analysis.rates`; the hardware is composed in after)."""
    tphi = spec.conditions.tphi_sites(spec.L)
    kappa = np.where(np.isfinite(tphi), 1.0 / tphi, 0.0)
    kind, G = spec.reset.kind, float(spec.reset.rate)
    w1, g1, g2 = np.empty(R), np.empty(R), np.empty(R)
    for i in range(R):
        real = spec.draw_realization(disorder_rng(seed, i))
        w1[i], g2[i] = ideal_gamma2(real.dw, real.hoppings, kind, G)
        g1[i] = dephased_gamma1(real.dw, real.hoppings, kind, G, kappa)
    return w1, g1, g2


def screen_qubit(spec, cfg: dict, t_c: float, times: np.ndarray) -> dict:
    """The screen's added error per cycle of one candidate (analysis.design.screened_qubit_error), on the
    confirmation's time grid ``times`` and the QEC study's T1/T2 window start (T_prop under hardware noise)."""
    T1b, T2b = bare_times(spec)
    w1, g1, g2 = realization_rates(spec, int(cfg["seed"]), int(cfg["realizations"]))
    G1, G2 = composed_rates(g1, g2, T1b, float(spec.conditions.tphi_sites(spec.L)[0]))
    # (nominal T_prop whatever the profile: the confirmation's window starts there too)
    start = spec.T_prop if not spec.conditions.ideal else spec.transit_hops * spec.T_prop
    return screened_qubit_error(times, start, t_c, w1, G1, G2, T1b, T2b)


#: the confirmation's seed is the study's plus this: streams independent of the screen's (and of a qec run's)
CONFIRM_SEED_OFFSET = 1_000_003


def confirm(spec, cfg: dict, ctx, t_c: float, K: int, m: int, odds: float, label: str) -> dict:
    """The realistic confirmation of one candidate, the QEC study's numbers: D (with replicas), the fitted T1, T2
    and the added error per cycle {q: {"value", "error"}} against the bare transmon, on the streams of seed +
    :data:`CONFIRM_SEED_OFFSET` (independent of the screen); ``reasons``: why a null T1 or T2 is not resolved."""
    cfg = {**cfg, "seed": int(cfg["seed"]) + CONFIRM_SEED_OFFSET}
    res = run_ensemble(spec, cfg, ctx, f"confirm {label}", init="all", t_final=K * t_c, time_points=K * m + 1,
                       leakage_thermal_odds=odds)
    D, err, reps = leakage_cycles(res, t_c)
    decays = decay_times(res)
    T1b, T2b = bare_times(spec)
    bare = pauli_errors(t_c, T1b, T2b)
    T1, T2 = decays.get("T1"), decays.get("T2")
    if T1 is None or T2 is None:
        added = {q: {"value": math.nan, "error": math.nan} for q in PROBS}
        t1 = t2 = (math.nan, math.nan)
    else:
        lru = pauli_errors(t_c, T1.value, T2.value, T1.error, T2.error)
        added = {q: {"value": lru[q]["value"] - bare[q]["value"], "error": lru[q]["error"]} for q in PROBS}
        t1, t2 = (T1.value, T1.error), (T2.value, T2.error)
    reasons = {q: unresolved_reason(q, res, decays) for q in ("T1", "T2") if decays.get(q) is None}
    return {"D": {"value": D, "error": err, "replicas": reps}, "T1": t1, "T2": t2, "added": added,
            "times": res.times, "window_start": fit_window_start(res, "T1"), "reasons": reasons}
