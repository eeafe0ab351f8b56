"""Study ``qec``: the leakage removal unit seen from an error-correction cycle.

One ensemble (the three initial states, the model options of ``lru-mps
simulate``, realistic conditions by default) runs for K whole cycles of
length t_c (``--cycle-time``, default 1 us) on a grid with a point at every
cycle boundary (t_final = K t_c, K m + 1 points).  From it
(:mod:`lru_mps.analysis.qec`, docs/physics.md §8 "The QEC view"):

``leakage_survival``      S(k) = P_star^(1)(k t_c), k = 1..K, after a leakage
                          event at the start of cycle 0 (site 1 in |2>, the
                          array in its sampled thermal state); K is the whole
                          cycles in ``duration`` (default 40 us, where S(K) <
                          1e-3 at the defaults) or ``--cycles``; whether S(K)
                          fell below ``threshold`` is stated (``K_reached``);
``mean_leakage_cycles``   D = sum_{k>=1} S(k), with the tail after K (the
                          leakage lifetimes' fit, or their bound) and a
                          jackknife error over the trajectory blocks;
``seepage_per_cycle``     1 - S(k)/S(k-1) for cycle k;
``steady_state_leakage``  p D / (1 + p D) for isolated events of probability
                          p per cycle (``--injection``, default 1e-3), and
                          (``direct_simulation``) the direct simulation with
                          the leakage-injection Kraus maps at every boundary
                          in the Lindblad reference (L <= 4) for the p of
                          ``--direct-injections`` and that p, averaged over
                          ``--direct-realizations`` realizations, next to
                          the linear response
                          (:mod:`lru_mps.studies.qec.direct`); null above
                          L = 4;
``error_per_cycle``       the Pauli-twirled error of one cycle from the
                          qubit's channel over t_c (1 - <n_1>(t_c) and 2C(t_c)
                          read off the curves, the early loss included;
                          :func:`lru_mps.analysis.qec.qubit_channel`), against
                          a bare transmon with the same T1q and Tphi, and the
                          difference: what the LRU adds; beside it, labelled
                          ``lru_T1_T2_fit``, the same from the fitted T1 and T2
                          (the late-time rates, without the early loss).

S(k) is the ratio estimator sum_i w_i s_i(k t_c) / sum_i w_i over the rows
(their weights from the thermal odds and the branch do not average to 1 in a
sample): S(0) = 1 exactly and every S(k) is a probability; ``rises`` says by
how many of its errors the estimate rises anywhere.

Besides the study's usual outputs it writes ``leakage_model.json``
(:func:`lru_mps.studies.qec.report.leakage_model`): these numbers in a small
documented format for a leakage-aware circuit simulator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import xarray as xr

from ...analysis.decay import decay_times, unresolved_reason
from ...analysis.lifetimes import leakage_lifetimes
from ...physics.conditions import bare_T2
from ...analysis.qec import (mean_leakage_cycles, survival_resolved, pauli_errors, qubit_channel, seepage_per_cycle,
                            steady_state_leakage, survival, survival_rises, survival_tail)
from ...atomic import atomic_write_bytes
from ...errors import ParameterError, require
from ...physics.units import time_to_us, to_time
from ...run.trajectories import engine_mix
from ..config import Config
from ..base import TIME_UNITS, Study, StudyContext, StudyOption, StudyResult, finite_or_none, time_json
from ...run.thermal_sample import strata_for
from ..common import conditions_of, refuse_bath, refuse_readout, dataset_attrs, ensemble_settings, json_list, positive_int, run_ensemble, spec_of
from . import report as qec_report, unresolved
from .direct import direct_injections, direct_realizations, direct_simulation

HELP = """Leakage per error-correction cycle: survival S(k), duration D, seepage, added errors.

After a leakage event at the start of cycle 0 (coding qubit in |2>, the
array thermal), the probability S(k) = P_star^(1)(k t_c) that the coding
qubit is still leaked at the k-th cycle boundary, the mean leakage duration
D = sum_k S(k) in cycles (with its tail and a jackknife error), the seepage
per cycle 1 - S(k+1)/S(k), the steady-state leakage p D/(1 + p D) under
leakage events of probability --injection per cycle and, at L <= 4, its direct
simulation with the injection maps at every boundary (Lindblad reference) for
--direct-injections, against that linear response, and the qubit's error
per cycle (Pauli twirl of its channel over one cycle) with the LRU against a bare transmon
with the same T1q and Tphi.  Writes leakage_model.json for a leakage-aware
circuit simulator.  Options: --cycle-time (default 1us), --injection
(default 1e-3), --cycles (default: the whole cycles in 40 us),
--direct-injections (default 1e-3,1e-2,3e-2,0.1), --direct-realizations
(default 32; 0: none).  Default: L = 3, periodic feedback at 0.03 J,
realistic; about a minute and a half on 2 cores (--quick: seconds).
"""

def cycle_time(cfg: dict, J_hz: float) -> float:
    """The cycle time t_c in 1/J (a time a user types: '1us', '500ns', '30/J')."""
    t_c = to_time(cfg["cycle_time"], "cycle_time", J_hz)
    require(math.isfinite(t_c) and t_c > 0, "cycle_time", t_c, "a finite time > 0 (e.g. 1us, 500ns)")
    return t_c


def injection(cfg: dict) -> float:
    """The leakage-event probability p per cycle, in (0, 1)."""
    value = cfg["injection"]
    try:
        p = float(value)
    except (TypeError, ValueError):
        raise ParameterError("injection", value, "a probability per cycle in (0, 1), e.g. 1e-3") from None
    require(0.0 < p < 1.0, "injection", value, "a probability per cycle in (0, 1), e.g. 1e-3")
    return p


#: at most this many cycles in one run (time points grow with them)
MAX_CYCLES = 5000


def cycle_grid(cfg: dict, t_c: float, J_hz: float) -> tuple[int, int]:
    """(K, m): K cycles ('cycles', or 'auto': the whole cycles in 'duration', rounded up) and m points per cycle
    (the fewest with K m + 1 >= min_time_points)."""
    cycles = cfg.get("cycles", "auto")
    if isinstance(cycles, str) and cycles.strip() != "auto":
        try:
            cycles = float(cycles)
        except ValueError:
            raise ParameterError("cycles", cycles, "an integer >= 1 or 'auto'") from None
    if cycles in ("auto", None):
        duration = to_time(cfg["duration"], "duration", J_hz)
        require(math.isfinite(duration) and duration > 0, "duration", duration, "a finite time > 0 (e.g. 40us)")
        K = max(1, int(math.ceil(duration / t_c * (1.0 - 1e-12))))
        require(K <= MAX_CYCLES, "cycle_time", t_c,
                f"at least duration / {MAX_CYCLES} (at most {MAX_CYCLES} cycles in the duration {cfg['duration']})")
    else:
        require(not isinstance(cycles, bool) and isinstance(cycles, (int, float)) and int(cycles) == cycles
                and 1 <= cycles <= MAX_CYCLES, "cycles", cycles, f"an integer in 1..{MAX_CYCLES} or 'auto'")
        K = int(cycles)
    n = positive_int(cfg, "min_time_points", 2)
    return K, max(1, math.ceil((n - 1) / K))


@dataclass(frozen=True)
class SurvivalCurve:
    """S(k) at the cycle boundaries k = 0..K (``cycles``) with its jackknife error, and the seepage per cycle
    1 - S(k)/S(k-1) for k = 1..K with its error (all dimensionless)."""

    cycles: np.ndarray
    S: np.ndarray
    S_sem: np.ndarray
    seepage: np.ndarray
    seepage_error: np.ndarray


class Qec(Study):
    """The QEC study (module docstring)."""

    NAME = "qec"
    OPTIONS = (
        StudyOption("cycle_time", "The QEC cycle t_c, e.g. 1us, 500ns, 30/J."),
        StudyOption("injection", "Leakage-event probability per cycle p, in (0, 1)."),
        StudyOption("cycles", "Cycles K to simulate (auto: the whole cycles in 40 us)."),
        StudyOption("direct_injections", "p of the direct simulation with the injection maps (L <= 4), e.g. 1e-3,1e-2,0.1 (the --injection p is always among them)."),
        StudyOption("direct_realizations", "Disorder realizations of the direct simulation (0: none).", kind="int"),
    )
    HELP = HELP
    TIME_UNITS = TIME_UNITS  # no time axis: its figures count cycles

    def run(self, cfg: dict, ctx: StudyContext) -> StudyResult:
        """The study's outputs (config.toml, results.nc, summary.json, figures) and leakage_model.json."""
        result = super().run(cfg, ctx)
        text = qec_report.leakage_model_json(result.summary)
        atomic_write_bytes(ctx.out / "leakage_model.json", text.encode())
        return result

    def compute(self, cfg: dict, ctx: StudyContext):
        refuse_readout(cfg, "qec study", "a readout error injects leakage at the reset site, so the coding qubit's "
                       "leakage has a floor, S(k) does not decay and D = sum S(k) diverges",
                       "see the readout's leakage with `lru-mps study dynamics --readout-error` or `simulate`")
        refuse_bath(cfg, "qec study", "heating makes |2> from |1>, so the coding qubit's leakage has a thermal "
                    "floor, S(k) does not decay and D = sum S(k) diverges")
        cond = conditions_of(cfg, allow_both=False)[0]
        spec = spec_of(cfg, conditions=cond)
        J_hz = spec.J_hz
        t_c = cycle_time(cfg, J_hz)
        p = injection(cfg)
        direct_injections(cfg, p), direct_realizations(cfg)  # bad values stop the study before it runs
        K, m = cycle_grid(cfg, t_c, J_hz)
        threshold = float(cfg["threshold"])
        require(0 < threshold < 1, "threshold", cfg["threshold"], "a probability in (0, 1)")
        odds = Config(cfg).number("leakage_thermal_odds", min=1, default=1.0)
        strata = Config(cfg).boolean("thermal_strata", default=False)
        integrate = Config(cfg).boolean("integrate_decay", default=False)
        ctx.plan(1)
        res = run_ensemble(spec, cfg, ctx, f"L={spec.L} t_c={cfg['cycle_time']} K={K}", init="all", t_final=K * t_c,
                           time_points=K * m + 1, leakage_thermal_odds=odds, thermal_strata=strata,
                           integrate_decay=integrate)
        stated = [s.stated_weight for s in (strata_for(spec, res.settings, i) for i in res.settings.inits)
                  if s is not None]
        estimator, n_evol = ensemble_settings(spec, cfg)
        k, S, S_sem = survival(res, t_c)
        D = mean_leakage_cycles(res, t_c)
        _, seep, seep_err = seepage_per_cycle(res, t_c)
        ss, ss_err = steady_state_leakage(p, D.value, D.error)
        direct, direct_note = direct_simulation(spec, cfg, t_c, p, D.value, D.error, ctx.workers)
        decays = decay_times(res)
        tau1 = leakage_lifetimes(res)["leakage_lifetime_qubit"]
        errors = _error_per_cycle(spec, t_c, decays, qubit_channel(res, t_c))
        rises = survival_rises(res, t_c)
        below = np.flatnonzero(S[1:] < threshold)
        mix = engine_mix(res.diagnostics) or {res.settings.engine: res.completed * len(res.settings.inits)}
        us = time_to_us(1.0, J_hz)
        summary = {
            "study": self.NAME,
            "parameters": {**spec.as_dict(), "seed": int(cfg["seed"])},
            "conditions": cond,
            "estimator": estimator,
            "evolutions": n_evol,
            "leakage_thermal_odds": odds,
            "thermal_strata": strata,
            "thermal_strata_stated_weight": max(stated) if stated else None,
            "integrate_decay": integrate,
            "engine_mix": mix,
            "cycle_time": {**time_json(t_c, 0.0, J_hz), "value_us": _round(t_c * us), "value_ns": _round(t_c * us * 1e3)},
            "injection": p,
            "cycles": K,
            "points_per_cycle": m,
            "t_final": time_json(K * t_c, 0.0, J_hz),
            "leakage_survival": {
                "cycles": [int(x) for x in k[1:]], "mean": json_list(S[1:]), "sem": json_list(S_sem[1:]),
                "S0": {"mean": finite_or_none(S[0]), "sem": finite_or_none(S_sem[0])},
                "threshold": threshold, "K_reached": bool(S[-1] < threshold),
                "first_cycle_below": int(below[0]) + 1 if below.size else None,
                "tail": survival_tail(res, t_c),
                "estimator": SURVIVAL_ESTIMATOR,
                "rises": rises,
                "resolved": survival_resolved(res, t_c),
            },
            "mean_leakage_cycles": {"value": finite_or_none(D.value), "error": finite_or_none(D.error),
                                    "tail": finite_or_none(D.tail), "tail_method": D.tail_method},
            "seepage_per_cycle": {"cycles": [int(x) for x in k[1:]], "value": json_list(seep),
                                  "error": json_list(seep_err)},
            "steady_state_leakage": {"injection": p, "value": finite_or_none(ss), "error": finite_or_none(ss_err),
                                     "method": "single-event response, isolated events: p D / (1 + p D)",
                                     "direct_simulation": direct, "note": direct_note},
            "leakage_lifetime_qubit": None if tau1 is None else {
                **tau1.as_json(J_hz), "value_cycles": finite_or_none(tau1.value / t_c),
                "error_cycles": finite_or_none(tau1.error / t_c)},
            "T1": None if decays["T1"] is None else decays["T1"].as_json(J_hz),
            "T2": None if decays["T2"] is None else decays["T2"].as_json(J_hz),
            "error_per_cycle": errors,
            "note": {
                "survival": "S(k) = P_star^(1)(k t_c): the coding qubit still leaked at cycle boundary k after a leakage "
                            "event at the start of cycle 0; K_reached: S(K) < threshold; beyond K, tail: S(K + j) ~ "
                            "S_end ratio^j",
                "mean_leakage_cycles": "D = sum_{k>=1} S(k), the tail after K summed from the leakage lifetimes' "
                                       "exponential fit (tail_method 'fit') or half the bound S(K+j) <= P_star^(L)(K "
                                       "t_c) exp(-2 j t_c/T1q) ('bound', the error holds the other half); jackknife "
                                       "error over the trajectory blocks",
                "seepage": "1 - S(k)/S(k-1) for cycle k (boundary k-1 to k), never clipped, with its jackknife error "
                           "(a value below 0 is a rise of S within that error); null where S(k-1) is not resolved",
                "rises": "S(k) is the probability that the qubit is leaked at boundary k; it can rise only by leakage "
                         "coming back from the array (a stack hop back within a cycle), which at 1-us cycles of the "
                         "working point the master equation does not show at any boundary: rises: the largest "
                         "S(k) - S(k-1) > 0 of the estimate in units of its jackknife error (sigmas), or null",
                "error_per_cycle": qec_report.ERROR_MODEL,
            },
            "leakage_model": "leakage_model.json",
        }
        # why each null number is null, and what would give it (keys of their own beside the nulls)
        unresolved.add(summary, {q: unresolved_reason(q, res, decays) for q in ("T1", "T2") if decays[q] is None})
        summary["note"]["unresolved"] = UNRESOLVED_NOTE
        ds = self._dataset(res, spec, cfg, t_c, SurvivalCurve(k, S, S_sem, seep, seep_err), summary)
        return ds, summary

    def _dataset(self, res, spec, cfg, t_c, curve: SurvivalCurve, summary):
        k, S, S_sem, seep, seep_err = curve.cycles, curve.S, curve.S_sem, curve.seepage, curve.seepage_error
        t = res.times
        us = time_to_us(1.0, spec.J_hz)
        data = {
            "S_mean": (("cycle",), S, {"units": "1", "long_name": "S(k) = P_star^(1)(k t_c)"}),
            "S_sem": (("cycle",), S_sem, {"units": "1"}),
            "seepage": (("cycle",), np.concatenate(([np.nan], seep)), {"units": "1", "long_name": "1 - S(k)/S(k-1)"}),
            "seepage_error": (("cycle",), np.concatenate(([np.nan], seep_err)), {"units": "1"}),
        }
        for obs, factor, name in (("leakage_site1", 1.0, "P_star^(1)(t)"), ("leakage_array", 1.0, "P_star^(L)(t)"),
                                  ("qubit_population", 1.0, "<n_1>(t)"), ("qubit_coherence", 2.0, "2 C(t)")):
            ms = res.observable(obs)
            data[f"{obs}_mean"] = (("time_J",), factor * ms.mean, {"units": "1", "long_name": name})
            data[f"{obs}_sem"] = (("time_J",), factor * ms.sem, {"units": "1"})
        direct = summary["steady_state_leakage"]["direct_simulation"]
        if direct is not None:  # the direct steady state against p (docs/physics.md §8)
            for key, name in (("value", "direct: P_star^(1) before the map, steady state"), ("error", None),
                              ("linear_response", "p D/(1 + p D), the study's D"),
                              ("linear_response_reference", "p D0/(1 + p D0), the same realizations at 0 K"),
                              ("ratio", "direct / linear_response_reference"), ("ratio_error", None)):
                values = np.array([np.nan if x[key] is None else x[key] for x in direct["points"]], dtype=float)
                data[f"direct_{key}"] = (("direct_p",), values, {"units": "1", **({"long_name": name} if name else {})})
        D = summary["mean_leakage_cycles"]
        attrs = dataset_attrs(spec, cfg, conditions=summary["conditions"], cycle_time_J=t_c, injection=summary["injection"],
                              cycles=summary["cycles"], D=D["value"] if D["value"] is not None else math.nan,
                              D_error=D["error"] if D["error"] is not None else math.nan,
                              threshold=summary["leakage_survival"]["threshold"], T_prop_J=spec.T_prop)
        coords = {"cycle": ("cycle", k), "time_J": ("time_J", t, {"units": "1/J"}),
                  "time_us": ("time_J", t * us, {"units": "us"})}
        if direct is not None:
            coords["direct_p"] = ("direct_p", [x["p"] for x in direct["points"]], {"units": "1 per cycle"})
        return xr.Dataset(data, coords=coords, attrs=attrs)

    def table(self, summary: dict) -> str:
        return qec_report.table(summary)

    def plot(self, ds, summary: dict, figdir) -> list:
        return qec_report.plot(ds, summary, figdir)


def _error_per_cycle(spec, t_c: float, decays: dict, channel: dict | None = None) -> dict:
    """The Pauli-twirled error of one cycle: the LRU qubit's channel over one cycle (``lru``, read off <n_1> and 2C
    at t_c, the early loss included), a bare transmon (site 1's T1q, Tphi), added = lru - bare; and, labelled, the
    same from the fitted T1 and T2 (``lru_T1_T2_fit``: the late-time rates, without the early loss)."""
    c = spec.conditions
    J_hz = spec.J_hz
    T1b = float(c.t1_sites(spec.L)[0])  # the coding qubit's (site 1; a device file may give one per site)
    T2b = bare_T2(T1b, float(c.tphi_sites(spec.L)[0]))
    bare = {"T1": time_json(T1b, 0.0, J_hz), "T2": time_json(T2b, 0.0, J_hz), **pauli_errors(t_c, T1b, T2b)}
    T1, T2 = decays.get("T1"), decays.get("T2")
    fits = None if T1 is None or T2 is None else {
        # the fits' free amplitudes: 1 - A is the early loss before the exponential (hybridization, fast
        # realizations), which these numbers do not hold
        "T1": {**T1.as_json(J_hz), "amplitude": _amplitude(T1)},
        "T2": {**T2.as_json(J_hz), "amplitude": _amplitude(T2)},
        **pauli_errors(t_c, T1.value, T2.value, T1.error, T2.error)}
    resolved = channel is not None and all(math.isfinite(channel[q]["value"]) for q in PROBS)
    lru = None
    if resolved:
        lru = {q: {"value": channel[q]["value"], "error": finite_or_none(channel[q]["error"])} for q in PROBS}
        lru.update(population_at_cycle=channel["population"], coherence_at_cycle=channel["coherence"],
                   T1=fits["T1"] if fits else None, T2=fits["T2"] if fits else None)

    def minus_bare(block):
        return None if block is None else {
            q: {"value": block[q]["value"] - bare[q]["value"], "error": block[q]["error"]} for q in PROBS}

    return {"model": qec_report.ERROR_MODEL, "method": CHANNEL_METHOD, "lru": lru, "bare": bare,
            "added": minus_bare(lru), "resolved": lru is not None,
            "lru_T1_T2_fit": fits, "added_T1_T2_fit": minus_bare(fits), "T1_T2_fit_note": FIT_NOTE}


def _amplitude(d) -> float | None:
    return None if d.fit is None else finite_or_none(d.fit.amplitude)


def _round(x: float) -> float:
    """A time converted to us and back to 12 digits (1us -> 1.0, not 0.9999999999999998)."""
    return float(f"{x:.12g}")


PROBS = ("eps_1", "p_x", "p_y", "p_z", "p_total")

UNRESOLVED_NOTE = ("a null number has its reason beside it and what would give it: T1_reason, T2_reason; "
                   "leakage_survival.sem_reason, first_cycle_below_reason; mean_leakage_cycles and "
                   "steady_state_leakage: reason (value) or error_reason; seepage_per_cycle.reasons (per cycle) and "
                   "trajectories_to_resolve; error_per_cycle: lru_reason, added_reason, lru_T1_T2_fit_reason, "
                   "added_T1_T2_fit_reason, error_reason in a probability; direct_simulation: error_reason, "
                   "ratio_error_reason")

SURVIVAL_ESTIMATOR = ("ratio: S(k) = sum_i w_i s_i(k t_c) / sum_i w_i over the rows (weights of the thermal odds and "
                      "the branch), so S(0) = 1 exactly and every S(k) is in [0, 1]; sem: its jackknife error over the "
                      "trajectory blocks")
CHANNEL_METHOD = ("the qubit's channel over one cycle, read off the curves at t = t_c: eps_1 = 1 - <n_1>(t_c) "
                  "from |1>, the coherence factor 2C(t_c) from (|0> + |1>)/sqrt2 (both as ratios to their t = 0 values), "
                  "p_x = p_y = eps_1/4, p_z = (1 - 2C(t_c))/2 - eps_1/4; errors: jackknife over the trajectory "
                  "blocks; the early loss (hybridization with the array, fast realizations) is in it")
FIT_NOTE = ("lru_T1_T2_fit, added_T1_T2_fit: the same twirl from the fitted T1 and T2 (late-time rates A e^{-t/tau}); "
            "the early loss 1 - A is not in them, so they understate the first cycle's error; not the study's answer")

STUDIES = {Qec.NAME: Qec()}
