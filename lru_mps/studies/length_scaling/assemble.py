"""The length-scaling study's results from its points: the dataset (``results.nc``) and the summary (``summary.json``).

The points (:class:`~lru_mps.studies.length_scaling.points.ScalingPoint`, one per condition and length L) are
laid on the dataset's axes (conditions, L; the per-realization rates on L, realization; the curves on t); times
in 1/J (and us in the summary).  In ideal conditions the typical T1 of the exact rates gives the localization
length xi from ln T1_typ = a + L/xi (:func:`lru_mps.analysis.localization.asymptotic_localization_length`),
next to the strong-disorder and transfer-matrix values (:func:`lru_mps.analysis.localization.xi_theory`); under
realistic conditions the hardware limits and where leakage removal stops paying.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import xarray as xr

from ...analysis.fitting import fit_line
from ...analysis.localization import asymptotic_localization_length, typical, xi_theory
from ...analysis.numbers import t2_flags
from ...physics.units import time_to_us
from ..base import finite_or_none, parameters_json, time_json
from ..common import FITTED, spec_of
from ..lifetimes import LifetimeGrid, limit_json
from .plan import (_coherence_trajectories, _integrate_decay, _leakage_thermal_odds, _leakage_trajectories,
                   _qubit_trajectories, _thermal_strata)
from .points import CURVES

#: the study's name, in its summary and dataset
NAME = "length-scaling"


@dataclass(frozen=True)
class ScalingArrays:
    """The points on the dataset's axes: ``all_L`` (every length run, sorted), on (conditions, L) ``fits``
    {name: (..., 2) value, error in 1/J}, ``lives`` (a :class:`~lru_mps.studies.lifetimes.LifetimeGrid`),
    ``curves`` {name: (..., t, 2) mean, sem} and ``resolved`` {name: (..., t)}; on L ``time_J`` (L, t) and the
    per-realization ``log_T1``, ``log_T2``, ``energy``, ``method`` (L, realization); ``engines``, ``mixes`` and
    ``stated`` {(condition, L): ...}; ``reasons`` {(name, condition index, L index): why}."""

    all_L: list
    fits: dict
    lives: LifetimeGrid
    curves: dict
    resolved: dict
    time_J: np.ndarray
    log_T1: np.ndarray
    log_T2: np.ndarray
    energy: np.ndarray
    method: np.ndarray
    engines: dict
    mixes: dict
    stated: dict
    reasons: dict

    @classmethod
    def of(cls, cfg: dict, conds: list, points) -> ScalingArrays:
        """From the points in the order they ran (a length run under both conditions keeps the stored times of
        the later one)."""
        all_L = sorted({p.L for p in points})
        T, n_real = int(cfg["time_points"]), int(cfg["realizations"])
        shape = (len(conds), len(all_L))
        out = cls(all_L, {k: np.full(shape + (2,), np.nan) for k in FITTED}, LifetimeGrid(shape),
                  {k: np.full(shape + (T, 2), np.nan) for k in CURVES},
                  {k: np.zeros(shape + (T,), dtype=bool) for k in CURVES}, np.full((len(all_L), T), np.nan),
                  np.full((len(all_L), n_real), np.nan), np.full((len(all_L), n_real), np.nan),
                  np.full((len(all_L), n_real), np.nan), np.full((len(all_L), n_real), "", dtype=object), {}, {}, {},
                  {})
        for p in points:
            ci, li = conds.index(p.condition), all_L.index(p.L)
            if p.rates is not None:
                out.log_T1[li], out.log_T2[li], out.energy[li] = p.rates.log_T1, p.rates.log_T2, p.rates.energy
                for i, m in enumerate(p.rates.method):
                    out.method[li, i] = m
            out.engines[(p.condition, p.L)] = p.engine
            if p.engine_mix:
                out.mixes[(p.condition, p.L)] = p.engine_mix
            if p.stated_weight is not None:
                out.stated[(p.condition, p.L)] = p.stated_weight
            if p.times is not None:
                out.time_J[li] = p.times
            for name, (mean, sem, ok) in p.curves.items():
                out.resolved[name][ci, li] = ok
                out.curves[name][ci, li, :, 0] = mean
                out.curves[name][ci, li, :, 1] = sem
            for name, value in p.fits.items():
                out.fits[name][ci, li] = value
            out.reasons.update({(name, ci, li): why for name, why in p.reasons.items()})
            out.lives.put((ci, li), p.lives)
        return out


@dataclass(frozen=True)
class Localization:
    """The ideal conditions' localization numbers: ``typ``, ``typ2`` (L, 2) the mean of ln T1 (ln T2) over the
    realizations and its error; the ``theory`` values (strong disorder, transfer matrix); the ``fit`` of xi
    (None: not resolved) with its intercept ``a``, ``xi`` and ``xi_err`` (nan where not resolved); the lengths
    past the floating-point floor (``log_space``); the ``local`` xi (L, 2) between a length and the previous."""

    typ: np.ndarray
    typ2: np.ndarray
    theory: dict
    fit: dict | None
    a: float
    xi: float
    xi_err: float
    log_space: list
    local: np.ndarray

    @classmethod
    def of(cls, cfg: dict, spec0, ideal_L: list, grid: ScalingArrays) -> Localization:
        all_L, log_T1, method = grid.all_L, grid.log_T1, grid.method
        typ = np.array([_typical(log_T1[li]) for li in range(len(all_L))])  # (L, 2): mean ln T1, error
        typ2 = np.array([_typical(grid.log_T2[li]) for li in range(len(all_L))])
        idx = [all_L.index(L) for L in ideal_L]
        theory = xi_theory(spec0, grid.energy[all_L.index(max(ideal_L))] if idx else None, seed=int(cfg["seed"]))
        fit = _xi_fit(np.array(ideal_L, float), log_T1[idx], theory["inverse_at_energies"]) if idx else None
        a = fit["intercept"] if fit else math.nan
        xi = fit["value"] if fit and fit["ok"] else math.nan
        xi_err = fit["error"] if fit and fit["ok"] else math.nan
        log_space = [L for L in ideal_L if np.any(method[all_L.index(L)] == "log-space")]
        local = np.full((len(all_L), 2), np.nan)  # local xi between a length and the previous one, its error
        for d in (fit or {}).get("local_xi", []):
            if d["value"] is not None:
                local[all_L.index(d["L"])] = (d["value"], d["slope_error"] / d["slope"] ** 2)
        return cls(typ, typ2, theory, fit, a, xi, xi_err, log_space, local)


def assemble(cfg: dict, spec0, conds: list, lengths: dict, points) -> tuple[xr.Dataset, dict]:
    """(dataset, summary) of the study's points (``conds`` and each one's ``lengths``, as
    :func:`~lru_mps.studies.length_scaling.lengths_of` gives them; ``spec0``: the first length's array)."""
    grid = ScalingArrays.of(cfg, conds, points)
    ideal_L = lengths.get("ideal", []) if "ideal" in conds else []
    loc = Localization.of(cfg, spec0, ideal_L, grid)
    by_cond = {cond: _entry(spec0, (ci, cond), lengths[cond], grid, loc) for ci, cond in enumerate(conds)}
    primary = "ideal" if "ideal" in by_cond else conds[0]
    summary = {"study": NAME, "conditions": primary, **by_cond[primary], "by_conditions": by_cond,
               "parameters": parameters_json(spec0, {"L": "swept: see lengths"}, realizations=int(cfg["realizations"]),
                                             trajectories=int(cfg["trajectories"]), seed=int(cfg["seed"]))}
    for key in ("T1_typical", "xi", "xi_fit", "xi_theory_strong", "xi_theory_transfer"):
        if key not in summary:
            summary[key] = None
            summary[f"{key}_reason"] = "measured in ideal conditions only, which this run did not include"
    ds = _dataset(spec0, conds, grid, loc)
    if "realistic" in conds:
        _realistic_entry(cfg, summary["by_conditions"]["realistic"], lengths["realistic"], grid, ds)
    return ds, summary


def _entry(spec0, condition: tuple, Ls: list, grid: ScalingArrays, loc: Localization) -> dict:
    """The summary's entry of one condition (``condition`` = (index, name)) over its lengths ``Ls``."""
    ci, cond = condition
    J_hz, T_prop, fits = spec0.J_hz, spec0.T_prop, grid.fits
    sel = [grid.all_L.index(L) for L in Ls]
    entry = {"lengths": Ls, "T_prop": [time_json(T_prop, 0.0, J_hz) for _ in Ls]}
    for name in FITTED:
        entry[name] = [time_json(fits[name][ci, li, 0], fits[name][ci, li, 1], J_hz, grid.reasons.get((name, ci, li)))
                       for li in sel]
    entry.update(grid.lives.lists([(ci, li) for li in sel], J_hz))
    entry["engines"] = [grid.engines[(cond, L)] for L in Ls]
    entry["curves_resolved"] = _resolved_json(grid.resolved, ci, sel, grid.time_J)
    entry["T_star_slope"] = _slope(np.array(Ls, float), fits["T_star"][ci, sel, 0], fits["T_star"][ci, sel, 1])
    if cond == "ideal":
        _ideal_entry(entry, spec0, Ls, sel, loc)
    return entry


def _ideal_entry(entry: dict, spec0, Ls: list, sel: list, loc: Localization) -> None:
    """The ideal conditions' part of an entry: the typical T1 and T2 of the exact rates and the localization
    length with its theory values."""
    J_hz, typ, typ2, log_space, fit, theory = spec0.J_hz, loc.typ, loc.typ2, loc.log_space, loc.fit, loc.theory
    xi, xi_err = loc.xi, loc.xi_err
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


def _dataset(spec0, conds: list, grid: ScalingArrays, loc: Localization) -> xr.Dataset:
    """results.nc: the fitted times and lifetimes on (conditions, L), the per-realization rates on (L,
    realization), the typical ln T1 and local xi on L, the curves on (conditions, L, t)."""
    J_hz, T_prop, all_L, fits, curves, resolved = (spec0.J_hz, spec0.T_prop, grid.all_L, grid.fits, grid.curves,
                                                   grid.resolved)
    log_T1, log_T2, method, energy, time_J = grid.log_T1, grid.log_T2, grid.method, grid.energy, grid.time_J
    typ, local, xi, xi_err, a, fit, theory = loc.typ, loc.local, loc.xi, loc.xi_err, loc.a, loc.fit, loc.theory
    lives = grid.lives
    return xr.Dataset(
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
            **{f"{k}_resolved": (("conditions", "L", "t"), v, {
                "long_name": "point resolved (else mean and sem are NaN): docs/physics.md §6.5"})
                for k, v in resolved.items()},
        },
        coords={"conditions": list(conds), "L": all_L, "realization": np.arange(log_T1.shape[1])},
        attrs={
            "study": NAME,
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


def _realistic_entry(cfg: dict, entry: dict, Ls: list, grid: ScalingArrays, ds) -> None:
    """The realistic conditions' part of their entry (:func:`_realistic_summary`) and each length's rows: the
    trajectories of each start, the odds of the excited interiors, the thermal strata and their stated weight."""
    _realistic_summary(entry, spec_of(cfg, length=2, conditions="realistic"),
                       [grid.mixes.get(("realistic", L), {}) for L in Ls], ds)
    entry["trajectories"] = [_qubit_trajectories(cfg, L) for L in Ls]
    entry["leakage_trajectories"] = [_leakage_trajectories(cfg, L) for L in Ls]
    entry["coherence_trajectories"] = [_coherence_trajectories(cfg, L) for L in Ls]
    entry["leakage_thermal_odds"] = [_leakage_thermal_odds(cfg, L) for L in Ls]
    entry["leakage_integrate_decay"] = [_integrate_decay(cfg, L) for L in Ls]
    entry["thermal_strata"] = [_thermal_strata(cfg, L) for L in Ls]
    entry["thermal_strata_stated_weight"] = [grid.stated.get(("realistic", L)) for L in Ls]
    entry["thermal_strata_stated_weight_reason"] = [
        None if w is not None else "no thermal start by strata at this L (thermal_strata off for it)"
        for w in entry["thermal_strata_stated_weight"]]


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
