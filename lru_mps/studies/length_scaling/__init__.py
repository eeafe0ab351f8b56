"""Study `length-scaling`: T_prop, T_star, T1, T2 and the localization length vs L.

Physics (docs/physics.md §8, §10, §11).  For each array length L and each
condition (ideal, realistic) one ensemble is run from the three initial
states with the branch estimator (docs/physics.md §6.5): in ideal
conditions one exact evolution per disorder realization, in realistic
conditions ``trajectories`` per L, the empty-array ones on the branch
(removals integrated out, dephasing on a clock), the thermal ones of the
qubit state guided, the others sampled, the thermal hot tail thinned
(``hot_tail``); on the short arrays the thermal start is drawn by strata
(``short_thermal_strata``: every configuration of sites 2..L above a stated
weight gets its rows, docs/physics.md §6.5), and a curve's points that a
stratum carries through too few rows are NaN with a mask.  Per L it reports

* T_prop = pi / (2 J_prop) (formula) and the transit (L-1) T_prop;
* T_star, T1, T2 from fits A exp(-t/tau) of the ensemble curves P_star^(L),
  <n_1> and 2C (T_star over t > (L-1) T_prop, T1 and T2 over t > T_prop;
  jackknife errors);
* in ideal conditions, per realization, the qubit's decay rates from the
  removal-free branch (:mod:`lru_mps.analysis.localization`): exact in the N = 1
  sector where double precision resolves them, and continued in log space
  past the floating-point floor (the study says where), so T1 far beyond any
  simulated time is still measured; their typical value exp<ln T1>;
* the localization length xi from ln T1_typ = a + L/xi, next to the
  strong-disorder value 1/xi = 2 ln(W/J) - 3 and the transfer-matrix value
  at the qubit's energies (the Lyapunov exponent averaged over the qubit
  modes' energies of the realizations); and the linear growth of T_star with L.

Ensembles (the curves and their fits) run up to ``ensemble_max_length``;
the per-realization rates, which cost an L x L eigenproblem or a log-space
recursion, are computed at every length.  The simulated time grows with L (t_final = t_base + t_per_hop (L-1) T_prop)
so that the late-time window covers the slow leakage tail; under realistic
conditions every decay is bounded by the hardware (T1 -> T1q, T2 -> T2q,
a leakage stack decays by itself in T1q/2), so there it runs to
(L-1) T_prop + ``realistic_t_after``.  Realistic conditions run on
``realistic_lengths`` (default L = 2..6, 8, 10, 12, 16, 20; ``lengths`` are the ideal ones, also
when ``conditions`` is one of them alone): exact engine to L = 6, then the per-trajectory policy of
``--engine auto`` (the exact fixed-N sector engine for every trajectory whose
thermal sample keeps its largest sector small, which at 100 mK is nearly
all of them, MPS for the rest; the summary gives the mix per L).  The
realistic summary adds the hardware limits T1q, T2q = 1/(1/(2 T1q) +
1/Tphi) and T1q/2 (the lifetime of |2>) and where leakage removal stops
paying: the first L whose T_star is not below T1q/2, next to the estimate
1 + T1q/(2 T_prop) from the transit time alone.
"""

from __future__ import annotations

import math

import numpy as np
import xarray as xr

from ...analysis.decay import decay_times, unresolved_reason
from ...analysis.fitting import fit_line
from ...analysis.lifetimes import leakage_lifetimes
from ...analysis.localization import asymptotic_localization_length, typical, xi_theory
from ...analysis.rates import qubit_rates
from ...errors import require
from ...physics.units import time_to_us
from ...run.result import OBSERVABLE_INIT
from ...run.seeding import disorder_rng
from ...run.settings import mps_options, resolve_inits
from ...run.thermal_sample import strata_for
from ...run.trajectories import engine_mix
from ...run.simulate import simulate
from ...analysis.numbers import t2_flags
from ..base import TIME_UNITS, Study, StudyContext, StudyOption, finite_or_none, parameters_json, parse_lengths, time_json
from ..common import FITTED, ensemble_settings, spec_of
from .plan import _t_final, _qubit_trajectories, _leakage_trajectories, _coherence_trajectories, _leakage_thermal_odds, _thermal_strata, _integrate_decay, _ensembles
from ..lifetimes import LifetimeGrid, limit_json
from .report import plot as report_plot, table as report_table

HELP = """T_prop, T_star, T1, T2 and the localization length xi vs the array length L.

Decay times of leakage and of the qubit for arrays of L = 2..40 transmons
in ideal conditions (per-realization qubit rates from the removal-free
branch, past the floating-point floor by a log-space continuation; xi from
ln T1_typical = a + L/xi against the transfer-matrix and strong-disorder
values) and L = 2..6, 8, 10, 12, 16, 20 under realistic conditions (T1q,
Tphi, 100 mK; trajectories of the branch estimator on the exact engine,
then on the sector or MPS engine per trajectory), with the hardware limits T1q, T2q and where
leakage removal stops paying.  Extends paper Fig. 3c,f to long arrays.
--lengths are the ideal conditions' lengths and --realistic-lengths the
realistic ones, also when --conditions runs only one of them.
--quick: seconds.
"""

#: the ensemble curves kept per condition and L (results.nc: mean, sem and the resolved mask)
CURVES = ("leakage_array", "leakage_site1", "qubit_population", "qubit_coherence")


LENGTH_KEYS = {"ideal": "lengths", "realistic": "realistic_lengths"}


def lengths_of(cfg: dict) -> tuple[list[str], dict[str, list[int]]]:
    """The conditions the study runs and the lengths of each: ``lengths`` for ideal conditions,
    ``realistic_lengths`` for realistic ones, whether a condition runs alone or both run."""
    require(cfg["conditions"] in ("ideal", "realistic", "both"), "conditions", cfg["conditions"],
            "ideal, realistic or both")
    conds = ["ideal", "realistic"] if cfg["conditions"] == "both" else [cfg["conditions"]]
    return conds, {c: parse_lengths(cfg[LENGTH_KEYS[c]]) for c in conds}


def check_given(cfg: dict, given: set) -> None:
    """Refuse a lengths list the user set for conditions the study does not run, where the list of the conditions
    it runs was left at its default (``given``: the keys the user set, in a file or as options)."""
    if cfg["conditions"] == "both":
        return
    runs = LENGTH_KEYS[cfg["conditions"]]
    other = next(k for k in LENGTH_KEYS.values() if k != runs)
    require(other not in given or runs in given, other, cfg[other],
            f"the lengths of the {'realistic' if other == 'realistic_lengths' else 'ideal'} conditions only; "
            f"with conditions = {cfg['conditions']} the lengths are {runs} (--{runs.replace('_', '-')})")


def _compute(cfg: dict, ctx: StudyContext):
    """The ensembles and per-realization rates of every length: (dataset, summary)."""

    conds, lengths = lengths_of(cfg)
    all_L = sorted(set().union(*(lengths[c] for c in conds)))
    T = int(cfg["time_points"])
    n_real = int(cfg["realizations"])
    seed = int(cfg["seed"])
    spec0 = spec_of(cfg, length=all_L[0], conditions=conds[0])

    shape = (len(conds), len(all_L))
    fits = {k: np.full(shape + (2,), np.nan) for k in FITTED}
    lives = LifetimeGrid(shape)
    curves = {k: np.full(shape + (T, 2), np.nan) for k in CURVES}
    resolved = {k: np.zeros(shape + (T,), dtype=bool) for k in CURVES}
    time_J = np.full((len(all_L), T), np.nan)
    log_T1 = np.full((len(all_L), n_real), np.nan)
    log_T2 = np.full((len(all_L), n_real), np.nan)
    energy = np.full((len(all_L), n_real), np.nan)
    method = np.full((len(all_L), n_real), "", dtype=object)
    engines = {}
    mixes = {}
    reasons: dict = {}  # (decay time, condition, L): why it is not resolved
    stated: dict = {}  # the stated weight of the thermal strata per (condition, L): classes above it all drawn
    ctx.plan(sum(1 for c in conds for L in lengths[c] if L <= int(cfg["ensemble_max_length"])))
    for ci, cond in enumerate(conds):
        for L in lengths[cond]:
            li = all_L.index(L)
            spec = spec_of(cfg, length=L, conditions=cond)
            ideal = spec.conditions.ideal
            if ideal:
                for i in range(n_real):
                    real = spec.draw_realization(disorder_rng(seed, i))
                    r = qubit_rates(spec, real)
                    log_T1[li, i] = -r.log_gamma1
                    log_T2[li, i] = -r.log_gamma2
                    energy[li, i] = r.energy
                    method[li, i] = r.method
            if L > int(cfg["ensemble_max_length"]):
                engines[(cond, L)] = "-"
                continue
            for init, n_traj, odds, hot, integrate in _ensembles(cfg, L, ideal, n_real):
                res = simulate(
                    spec,
                    init=init,
                    t_final=_t_final(spec, cfg),
                    time_points=T,
                    trajectories=n_traj,
                    seed=seed,
                    engine=cfg["engine"],
                    estimator=ensemble_settings(spec, {"realizations": n_real, "trajectories": cfg["trajectories"]})[0],
                    engine_options=mps_options(cfg, spec.J_hz),
                    hot_tail=hot,
                    leakage_thermal_odds=odds,
                    integrate_decay=integrate,
                    thermal_strata=_thermal_strata(cfg, L) and not ideal,
                    **ctx.run_options(f"{cond} L={L}" + ("" if init == "all" else f" {'+'.join(resolve_inits(init))}")),
                )
                engines[(cond, L)] = res.settings.engine
                strata = [strata_for(spec, res.settings, i) for i in res.settings.inits]
                if any(s is not None for s in strata):
                    stated[(cond, L)] = max(stated.get((cond, L), 0.0),
                                            max(s.stated_weight for s in strata if s is not None))
                mix = engine_mix(res.diagnostics) or {res.settings.engine: res.completed * len(res.settings.inits)}
                tally = mixes.setdefault((cond, L), {})
                for k, v in mix.items():
                    tally[k] = tally.get(k, 0) + v
                time_J[li] = res.times
                for name in curves:
                    if OBSERVABLE_INIT[name] in res.blocks:
                        ms = res.observable(name)
                        ok = np.ones(T, dtype=bool) if ms.resolved is None else ms.resolved
                        resolved[name][ci, li] = ok
                        curves[name][ci, li, :, 0] = np.where(ok, ms.mean, np.nan)
                        curves[name][ci, li, :, 1] = np.where(ok, ms.sem, np.nan)
                times = decay_times(res)
                for name, d in times.items():
                    if name in fits and d is not None:
                        fits[name][ci, li] = (d.value, d.error)
                    elif name in fits:
                        reasons[(name, ci, li)] = unresolved_reason(name, res, times)
                if "leakage" not in res.blocks:
                    continue
                lives.put((ci, li), leakage_lifetimes(res))

    ds, summary = _assemble(cfg, conds, lengths, all_L, fits, curves, time_J, log_T1, method, engines, spec0, energy,
                            log_T2, lives, resolved, reasons)
    if "realistic" in conds:
        _realistic_summary(summary["by_conditions"]["realistic"], spec_of(cfg, length=2, conditions="realistic"),
                           [mixes.get(("realistic", L), {}) for L in lengths["realistic"]], ds)
        entry = summary["by_conditions"]["realistic"]
        entry["trajectories"] = [_qubit_trajectories(cfg, L) for L in lengths["realistic"]]
        entry["leakage_trajectories"] = [_leakage_trajectories(cfg, L) for L in lengths["realistic"]]
        entry["coherence_trajectories"] = [_coherence_trajectories(cfg, L) for L in lengths["realistic"]]
        entry["leakage_thermal_odds"] = [_leakage_thermal_odds(cfg, L) for L in lengths["realistic"]]
        entry["leakage_integrate_decay"] = [_integrate_decay(cfg, L) for L in lengths["realistic"]]
        entry["thermal_strata"] = [_thermal_strata(cfg, L) for L in lengths["realistic"]]
        entry["thermal_strata_stated_weight"] = [stated.get(("realistic", L)) for L in lengths["realistic"]]
        entry["thermal_strata_stated_weight_reason"] = [
            None if w is not None else "no thermal start by strata at this L (thermal_strata off for it)"
            for w in entry["thermal_strata_stated_weight"]]
    return ds, summary


#: removal stops paying at the first L whose T_star is not significantly below T1q/2: within this many errors
STOPS_PAYING_SIGMAS = 2.0


def _realistic_summary(entry: dict, spec, mixes: list, ds) -> None:
    """Hardware limits, where leakage removal stops paying, and the engine mix per L (realistic conditions)."""
    c, J_hz = spec.conditions, spec.J_hz
    T2q = c.T2q
    limits = {"T1q": c.T1q, "T2q": T2q, "T_leak_own": 0.5 * c.T1q}
    entry["hardware_limits"] = {k: limit_json(v, J_hz) for k, v in limits.items()}
    entry["hardware_limits"]["note"] = ("T1 and T2 of the qubit cannot exceed T1q and T2q = 1/(1/(2 T1q) + 1/Tphi); "
                                        "T_leak_own = T1q/2 is the lifetime of |2> by its own decay")
    stars = [t["value_J"] for t in entry["T_star"]]
    errs = [t["error_J"] or 0.0 for t in entry["T_star"]]
    own = limits["T_leak_own"]
    stops = next((L for L, v, e in zip(entry["lengths"], stars, errs)
                  if v is not None and v + STOPS_PAYING_SIGMAS * e >= own), None)
    entry["removal_stops_paying"] = {
        "measured_L": stops,
        **({} if stops is not None else {"measured_L_reason": (
            f"not reached: T_star stays significantly below T1q/2 at every L run (up to L = {max(entry['lengths'])}); "
            "longer lengths find it")}),
        "transit_estimate_L": finite_or_none(1.0 + own / spec.T_prop),
        "criterion": f"first L whose T_star is not significantly below T1q/2, the decay of the leakage stack by "
                     f"itself (T_star + {STOPS_PAYING_SIGMAS:g} errors >= T1q/2); the estimate is the L whose transit "
                     f"(L-1) T_prop equals T1q/2",
    }
    entry["engine_mix"] = mixes
    for t2, t1 in zip(entry["T2"], entry["T1"]):  # T2 past 2 T1 or the single transmon's T2 by more than its error
        flags = t2_flags(t2["value_us"], t2["error_us"], t1["value_us"], t1["error_us"],
                         entry["hardware_limits"]["T2q"]["value_us"], "the single transmon's T2 limit T2q")
        if flags:
            t2["flags"] = flags
    for k, v in limits.items():
        ds.attrs[f"{k}_J"] = finite_or_none(v) or "inf"


def _resolved_json(resolved: dict, ci: int, sel: list, time_J: np.ndarray) -> dict:
    """Per curve and L: how many stored points are resolved and the first time that is not (None: all are)."""
    out = {}
    for name, mask in resolved.items():
        counts, first = [], []
        for li in sel:
            m = mask[ci, li]
            measured = np.isfinite(time_J[li]).all()
            counts.append(int(np.count_nonzero(m)) if measured else None)
            bad = np.flatnonzero(~m) if measured else np.array([], dtype=int)
            first.append(finite_or_none(float(time_J[li, bad[0]])) if bad.size else None)
        out[name] = {"resolved_points": counts, "first_unresolved_J": first,
                     "first_unresolved_J_reason": [None if t is not None else "every stored point is resolved"
                                                   if n is not None else "the curve was not measured at this L"
                                                   for t, n in zip(first, counts)]}
        if any(n is None for n in counts):
            out[name]["resolved_points_reason"] = ["the curve was not measured at this L" if n is None else None
                                                   for n in counts]
    out["note"] = ("points whose error cannot be trusted (a stratum carries them through too few rows: docs/physics.md "
                   "§6.5) are NaN in results.nc, with the mask <curve>_resolved")
    return out


def _typical(log_values: np.ndarray) -> tuple[float, float]:
    """Mean of ln T1 over the realizations where it is known, and its standard error (nan where none)."""
    v = log_values[np.isfinite(log_values)]
    if len(v) == 0:
        return math.nan, math.nan
    t = typical(logs=v)
    return t["log_mean"], t["log_error"]


def _xi_fit(lengths, log_T1, reference_inverse=None) -> dict | None:
    """xi in the asymptotic regime with its jackknife error over realizations (None if it cannot be estimated).

    ``log_T1[i, r]``: ln(T1 J) of realization r at ``lengths[i]``
    (analysis.localization.asymptotic_localization_length).  Needs two
    lengths and two realizations (the error is the scatter over blocks of
    realizations; the weighted fit's own error is too small for the nested
    realizations of the study).
    """
    rows = np.array([np.count_nonzero(np.isfinite(r)) >= 2 for r in log_T1])
    if np.count_nonzero(rows) < 2 or np.unique(lengths[rows]).size < 2:
        return None
    inv = reference_inverse
    if inv is not None and not (len(inv) == log_T1.shape[1] and np.all(np.isfinite(inv) & (inv > 0))):
        inv = None
    return asymptotic_localization_length(lengths[rows], log_T1[rows], reference_inverse=inv)


def _xi_json(fit: dict | None, transfer_error: float = math.nan) -> dict:
    """The summary's 'xi_fit': where the fit of xi comes from, the local slopes, the paired difference from the transfer matrix."""
    if fit is None:
        return {"message": "xi: not resolved (needs two lengths and two realizations)",
                "reason": "not resolved: the fit of ln T1_typ vs L needs two lengths and two realizations"}
    out = {"fit_lengths": fit["fit_lengths"], "min_length": fit["min_length"], "asymptotic": fit["asymptotic"],
           "error_method": f"jackknife over {fit['blocks']} blocks of realizations",
           "error_weighted_fit": finite_or_none(fit["error_fit"]),
           "local_xi": [{"L": d["L"], "value": finite_or_none(d["value"]) if d["value"] is not None else None,
                         "slope": finite_or_none(d["slope"]), "slope_error": finite_or_none(d["slope_error"]),
                         **({} if finite_or_none(d["value"]) is not None and finite_or_none(d["slope_error"]) is not None
                            else {"reason": "not resolved: the local slope between this length and the previous one "
                                            "is not positive or has no error (more realizations)"})}
                        for d in fit["local_xi"]],
           "message": fit["message"]}
    if "difference" in fit:
        out["difference_from_transfer"] = {"value": finite_or_none(fit["difference"]),
                                           "error": finite_or_none(fit["difference_error"]),
                                           "transfer_error": finite_or_none(transfer_error)}
        if None in out["difference_from_transfer"].values():
            out["difference_from_transfer"]["reason"] = ("not resolved: the paired difference needs the transfer "
                                                         "matrix's value at every realization's energy")
    if out["error_weighted_fit"] is None:
        out["error_weighted_fit_reason"] = "the weighted fit gave no finite error (too few lengths)"
    return out


def _typical_reason(typ) -> dict:
    """A typical T1 (or T2) that has no value says why: {"reason": ...}, or {} where it has one."""
    if not np.isfinite(typ[0]):
        return {"reason": "not resolved: no realization gave a finite rate at this L"}
    if typ[0] >= 700:
        return {"reason": "exp(ln T J) overflows a double (ln T J >= 700): log_value holds it"}
    if not np.isfinite(typ[1]):
        return {"reason": "no error: fewer than two realizations gave a finite rate (more realizations give one)"}
    return {}


def _slope(lengths, values, errors) -> dict:
    """Growth of T_star with L: the weighted straight-line fit of analysis.fitting (1/J per site)."""
    ok = np.isfinite(values)
    line = fit_line(lengths[ok], values[ok], errors[ok]) if np.count_nonzero(ok) >= 2 else None
    if line is None:
        return {"value": None, "error": None, "units": "1/J per site",
                "reason": "fewer than two lengths with a resolved T_star: no line to fit (more lengths or trajectories)"}
    return {"value": finite_or_none(line["slope"]), "error": finite_or_none(line["slope_error"]), "units": "1/J per site"}


def _assemble(cfg, conds, lengths, all_L, fits, curves, time_J, log_T1, method, engines, spec0, energy, log_T2,
              lives, resolved=None, reasons=None):
    J_hz = spec0.J_hz
    reasons = reasons or {}
    T_prop = spec0.T_prop
    typ = np.array([_typical(log_T1[li]) for li in range(len(all_L))])  # (L, 2): mean ln T1, error
    typ2 = np.array([_typical(log_T2[li]) for li in range(len(all_L))])
    ideal_L = lengths.get("ideal", []) if "ideal" in conds else []
    idx = [all_L.index(L) for L in ideal_L]
    theory = xi_theory(spec0, energy[all_L.index(max(ideal_L))] if idx else None, seed=int(cfg["seed"]))
    fit = _xi_fit(np.array(ideal_L, float), log_T1[idx], theory["inverse_at_energies"]) if idx else None
    a = fit["intercept"] if fit else math.nan
    xi = fit["value"] if fit and fit["ok"] else math.nan
    xi_err = fit["error"] if fit and fit["ok"] else math.nan
    log_space = [L for L in ideal_L if np.any(method[all_L.index(L)] == "log-space")]
    local = np.full((len(all_L), 2), np.nan)  # local xi between a length and the previous one, its error
    for d in (fit or {}).get("local_xi", []):
        if d["value"] is not None:
            local[all_L.index(d["L"])] = (d["value"], d["slope_error"] / d["slope"] ** 2)

    by_cond = {}
    for ci, cond in enumerate(conds):
        Ls = lengths[cond]
        sel = [all_L.index(L) for L in Ls]
        entry = {"lengths": Ls, "T_prop": [time_json(T_prop, 0.0, J_hz) for _ in Ls]}
        for name in FITTED:
            entry[name] = [time_json(fits[name][ci, li, 0], fits[name][ci, li, 1], J_hz, reasons.get((name, ci, li)))
                           for li in sel]
        entry.update(lives.lists([(ci, li) for li in sel], J_hz))
        entry["engines"] = [engines[(cond, L)] for L in Ls]
        if resolved is not None:
            entry["curves_resolved"] = _resolved_json(resolved, ci, sel, time_J)
        entry["T_star_slope"] = _slope(np.array(Ls, float), fits["T_star"][ci, sel, 0], fits["T_star"][ci, sel, 1])
        if cond == "ideal":
            entry["T1_typical"] = [
                {
                    "value": finite_or_none(math.exp(typ[li, 0])) if typ[li, 0] < 700 else None,
                    "error": finite_or_none(math.exp(typ[li, 0]) * typ[li, 1]) if typ[li, 0] < 700 else None,
                    "log_value": finite_or_none(typ[li, 0]),
                    "log_error": finite_or_none(typ[li, 1]),
                    "value_us": finite_or_none(time_to_us(math.exp(typ[li, 0]), J_hz)) if typ[li, 0] < 700 else None,
                    "method": "log-space" if L in log_space else "exact",
                    **_typical_reason(typ[li]),
                }
                for L, li in zip(Ls, sel)
            ]
            entry["T2_typical"] = [
                {"log_value": finite_or_none(typ2[li, 0]), "log_error": finite_or_none(typ2[li, 1]),
                 "value": finite_or_none(math.exp(typ2[li, 0])) if typ2[li, 0] < 700 else None,
                 **_typical_reason(typ2[li])}
                for li in sel
            ]
            entry["xi"] = {"value": finite_or_none(xi), "error": finite_or_none(xi_err)}
            if entry["xi"]["value"] is None or entry["xi"]["error"] is None:
                entry["xi"]["reason"] = ("not resolved: " + (fit or {}).get(
                    "message", "the fit of ln T1_typ vs L needs two lengths and two realizations"))
            entry["xi_fit"] = _xi_json(fit, theory["transfer_error"])
            entry["xi_theory_strong"] = finite_or_none(theory["strong"])
            entry["xi_theory_transfer"] = finite_or_none(theory["transfer"])
            if spec0.profile() is not None:
                entry["xi_theory_reason"] = ("no reference: with an engineered hopping profile a bond's coupling "
                                             "changes with L, so there is no infinite-chain localization length")
            for key in ("xi_theory_strong", "xi_theory_transfer"):
                if entry[key] is None:
                    entry[f"{key}_reason"] = entry.get("xi_theory_reason") or (
                        "no finite value: the formula does not apply at this disorder (W/J too small)")
            entry["floating_point_floor"] = {
                "lengths_past_floor": log_space,
                "note": "per-realization rates at these L are below double precision relative to the energies; "
                "they come from the log-space continuation of the localized eigenvector, not from an eigenvalue",
            }
        by_cond[cond] = entry
    primary = "ideal" if "ideal" in by_cond else conds[0]
    summary = {"study": LengthScaling.NAME, "conditions": primary, **by_cond[primary], "by_conditions": by_cond,
               "parameters": parameters_json(spec0, {"L": "swept: see lengths"}, realizations=int(cfg["realizations"]),
                                             trajectories=int(cfg["trajectories"]), seed=int(cfg["seed"]))}
    for key in ("T1_typical", "xi", "xi_fit", "xi_theory_strong", "xi_theory_transfer"):
        if key not in summary:
            summary[key] = None
            summary[f"{key}_reason"] = "measured in ideal conditions only, which this run did not include"

    ds = xr.Dataset(
        {
            **{f"{k}_J": (("conditions", "L"), fits[k][..., 0], {"units": "1/J"}) for k in FITTED},
            **{f"{k}_error_J": (("conditions", "L"), fits[k][..., 1], {"units": "1/J"}) for k in FITTED},
            **lives.data_vars(("conditions", "L")),
            "T_prop_J": ("L", np.full(len(all_L), T_prop), {"units": "1/J"}),
            "log_T1_realization": (("L", "realization"), log_T1, {"units": "ln(T1 J)", "convention": "T1 ~ exp(L/xi)"}),
            "log_T2_realization": (("L", "realization"), log_T2, {"units": "ln(T2 J)"}),
            "log_T1_typical": ("L", typ[:, 0], {"units": "ln(T1 J)"}),
            "log_T1_typical_error": ("L", typ[:, 1]),
            "xi_local": ("L", local[:, 0], {"units": "sites", "long_name": "local xi from this length and the previous"}),
            "xi_local_error": ("L", local[:, 1], {"units": "sites"}),
            "rate_method": (("L", "realization"), method.astype(str)),
            "qubit_energy_J": (("L", "realization"), energy, {"units": "J", "frame": "rotating at wbar"}),
            "time_J": (("L", "t"), time_J, {"units": "1/J"}),
            **{f"{k}_mean": (("conditions", "L", "t"), v[..., 0]) for k, v in curves.items()},
            **{f"{k}_sem": (("conditions", "L", "t"), v[..., 1]) for k, v in curves.items()},
            **({f"{k}_resolved": (("conditions", "L", "t"), v, {
                "long_name": "point resolved (else mean and sem are NaN): docs/physics.md §6.5"})
                for k, v in resolved.items()} if resolved is not None else {}),
        },
        coords={"conditions": list(conds), "L": all_L, "realization": np.arange(log_T1.shape[1])},
        attrs={
            "study": LengthScaling.NAME,
            "J_over_2pi_Hz": J_hz,
            "time_us_per_J": time_to_us(1.0, J_hz),
            "xi": finite_or_none(xi) or "none",
            "xi_error": finite_or_none(xi_err) or "none",
            "xi_intercept": finite_or_none(a) or "none",
            "xi_min_length": fit["min_length"] if fit else "none",
            "xi_asymptotic": int(bool(fit and fit["asymptotic"])),
            "xi_theory_strong": finite_or_none(theory["strong"]) or "none",
            "xi_theory_transfer": finite_or_none(theory["transfer"]) or "none",
        },
    )
    return ds, summary


class LengthScaling(Study):
    """The length-scaling study (module docstring)."""

    NAME = "length-scaling"
    OPTIONS = (
        StudyOption("lengths", "Lengths of the ideal conditions, e.g. 2:40, 2:40:2 or 2,4,8,16,32."),
        StudyOption("realistic_lengths", "Lengths of the realistic conditions (with --conditions realistic or both), e.g. 2:8."),
    )
    SWEPT = {"length": ("lengths", "realistic_lengths")}
    REFUSES_DEVICE = "it sweeps the array length L, which the device file fixes"
    HELP = HELP
    TIME_UNITS = TIME_UNITS

    def check_given(self, cfg: dict, given: set) -> None:
        check_given(cfg, given)

    def compute(self, cfg: dict, ctx: StudyContext):
        return _compute(cfg, ctx)

    def table(self, summary: dict) -> str:
        return report_table(summary, summary["parameters"]["J_over_2pi_Hz"])

    def plot(self, dataset, summary: dict, figdir) -> list:
        return report_plot(dataset, summary, figdir)


STUDIES = {LengthScaling.NAME: LengthScaling()}
