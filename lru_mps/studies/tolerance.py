"""Study ``tolerance``: how precisely must a chip be tuned.

T_star, T_prop, T1, T2 (:func:`lru_mps.analysis.decay.decay_times`) and the
leakage lifetimes tau_1, tau_L and the removal efficiency
(:func:`lru_mps.analysis.lifetimes.leakage_lifetimes`) against each
fabrication/tuning error of docs/physics.md §3.1:

``e2_spread``        the leakage levels' residual detuning, E2_l = E2 + delta_l,
                     delta_l ~ N(0, S) (default 0..10 J_prop);
``frequency_noise``  a quasi-static frequency offset s_l ~ N(0, S) of each
                     site per trajectory (slow flux noise; E2_l moves by 2 s_l;
                     default 0..5 J_prop, see below).

``hopping_spread``   per-bond couplings J_l = J (1 + eps_l), eps_l ~ N(0, X):
                     X is a fraction (spreads_fraction, spreads_percent
                     instead of J, MHz, J_prop); not in the default kinds
                     (``--kinds e2_spread,frequency_noise,hopping_spread``).

For every error kind, length L and spread S one ensemble of the branch
estimator (three initial states, realistic conditions by default) runs to
(L-1) T_prop + ``t_after``.  Common random numbers: every point uses the same
seed, so trajectory i has the same box draws (the spread's normals come
after them in the disorder stream) and the same event streams at every S;
the differences between points are sharper than the errors of each point.
S = 0 is the same ensemble for both kinds (run once; bit for bit the run
without the option).

The doubling spread (docs/physics.md §8, "Tolerance"): a stack hop across a
detuning Delta is a two-level problem with coupling J_prop, whose largest
transfer is 1/(1 + (Delta/2J_prop)^2), so the hop (and T_star) slows by a
factor that grows quadratically at small detuning.  Per kind and L,
T_star(S) = T0 (1 + (S/S_2)^2) is fitted (weighted least squares,
absolute sigma), and S_2, the spread at which T_star doubles, is reported
with its error and the fit's reduced chi^2; where the fitted S_2 lies beyond
the largest spread (or T_star does not grow), the largest spread is a lower
bound (``bound`` = "lower").  The fit takes the spreads up to the first where
T_star reaches ``fit_ratio`` x T_star(0) (the onset: realistic T_star bends
over towards T1q/2).  Next to it ``crossing``, model-free: where T_star first
reaches 2 T_star(0), interpolated linearly between the bracketing spreads
(the answer where the fit's chi^2 says the form does not hold).  A fit
through exactly two spreads has no degree of freedom: its S_2 has no error
(null, ``error_reason`` says why).  ``holds`` names which of the two to read
(:func:`~lru_mps.analysis.tolerance.which_holds`).  The same for tau_L.
"""

from __future__ import annotations

import math

import numpy as np
import xarray as xr

from ..analysis.decay import decay_times, unresolved_reason
from ..analysis.lifetimes import leakage_lifetimes
from ..errors import require
from ..physics.units import time_to_us, to_energy, to_fraction, to_time
from ..run.trajectories import engine_mix, format_mix
from .config import Config
from ..analysis.numbers import pm, sig, t2_flags
from .base import (TIME_UNITS, Study, StudyContext, StudyOption, finite_or_none, parameters_json, parse_lengths, save_figure, time_axis,
                   time_json)
from .common import (DECAYS, PLOT_STYLE, UNRESOLVED_LABEL, as_list, dataset_attrs, mark_unresolved, positive_int, pyplot,
                     run_ensemble, spec_of, unresolved_handle)
from .lifetimes import reason_lines, HEAD, LEGEND, LifetimeGrid, cells, limit_json, time_cell
from ..analysis.tolerance import doubling_crossing, doubling_fit, fit_points, which_holds

#: error kind -> the config key of its spread values (the kind is the model key of `lru-mps simulate`)
SWEEPS = {"e2_spread": "e2_spreads", "frequency_noise": "frequency_noises", "hopping_spread": "hopping_spreads"}
#: kinds whose spreads are dimensionless fractions (the others are energies)
FRACTIONS = ("hopping_spread",)
NOTES = {"hopping_spread": "per-bond couplings J_l = J (1 + eps_l), eps_l ~ N(0, X): spreads X are fractions "
                           "(spreads_fraction, spreads_percent; doubling value_fraction, value_percent); not in the "
                           "default kinds (--kinds e2_spread,frequency_noise,hopping_spread)"}
LABELS = {"e2_spread": "leakage-level detuning spread", "frequency_noise": "quasi-static frequency noise",
          "hopping_spread": "per-bond coupling spread"}

HELP = """T_star, T_prop, T1, T2 and the leakage lifetimes vs fabrication/tuning errors.

How precisely must a chip be tuned: the decay times against --e2-spread (the
leakage levels' residual detuning, 0..10 J_prop, J_prop = 2 J^2/Ubar = 0.2 MHz
at the paper's point) and --frequency-noise (quasi-static flux noise,
0..5 J_prop: it detunes neighbouring leakage levels by 2(s_l - s_l+1), twice
the e2 spread's reach), at L = 3 and 6, realistic conditions, the same seed
at every spread.  Per error and L the summary gives the spread at which
T_star doubles (fit T0 (1 + (S/S_2)^2)), or a lower bound.  The per-bond
coupling spread (--hopping-spreads, fractions 0,5%,0.1) runs with --kinds
...,hopping_spread.  Options: --e2-spreads, --frequency-noises (e.g.
0,2Jprop,400kHz), --hopping-spreads, --lengths, --kinds.
Default: 9.5 minutes on one core (720 trajectories per point; --quick: seconds).
"""


def units_of(kind: str, J_hz: float, J_prop: float) -> tuple[tuple[str, float], ...]:
    """(unit, factor) of a kind's spreads: energies in J, MHz and J_prop; the hopping spread as a fraction and in %."""
    if kind in FRACTIONS:
        return (("fraction", 1.0), ("percent", 100.0))
    return (("J", 1.0), ("MHz", J_hz / 1e6), ("Jprop", 1.0 / J_prop))


def _doubling_json(fit: dict, units) -> dict:
    """The fit's S_2 (in the kind's units) as {"value_J", "error_J", "value_MHz", ..., "chi2_red", "bound"}."""
    v, e = finite_or_none(fit["value"]), finite_or_none(fit["error"])
    out = {}
    for unit, f in units:
        out[f"value_{unit}"] = None if v is None else v * f
        out[f"error_{unit}"] = None if e is None else e * f
    out["error_reason"] = fit.get("error_reason") if e is None else None  # why a null error is null
    out["chi2_red"] = finite_or_none(fit["chi2_red"])
    out["dof"] = fit["dof"]
    out["bound"] = fit["bound"]
    out["fit_spreads"] = fit.get("fit_spreads")
    cross = fit.get("crossing")
    if cross is not None:  # the model-free crossing of 2 T0, in the same units
        cv, ce = finite_or_none(cross["value"]), finite_or_none(cross["error"])
        out["crossing"] = {**{f"value_{u}": None if cv is None else cv * f for u, f in units},
                           **{f"error_{u}": None if ce is None else ce * f for u, f in units},
                           "bound": cross["bound"]}
    out["holds"] = which_holds(fit, cross)  # which of the fit and the crossing to read, and why
    out["T0_J"] = finite_or_none(fit["T0"])
    out["T0_error_J"] = finite_or_none(fit["T0_error"])
    _explain_nulls(out, fit)
    if out.get("crossing") is not None:
        _explain_nulls(out["crossing"], {"error_reason": "the crossing is not resolved (no spread's value reaches "
                                                         "twice the first, or the bracketing values have no error)"})
    return out


def _explain_nulls(out: dict, fit: dict) -> None:
    """A reason beside each null of a doubling's JSON (``<key>_reason``; the values' keys unchanged)."""
    why = {"error": fit.get("error_reason") or "no error: the fit did not resolve it",
           "value": fit.get("message") or "no doubling resolved: the values do not fit the onset (too few spreads)",
           "chi2_red": f"no degree of freedom: the fit goes through {fit.get('points', 'its')} points",
           "bound": "not a bound: the values double within the range",
           "T0": "no T0: the fit did not run (too few resolved spreads)"}
    for key, value in list(out.items()):
        if value is None and f"{key}_reason" not in out and not key.endswith("_reason"):
            out[f"{key}_reason"] = why.get(key.split("_")[0] if not key.startswith("T0") else "T0",
                                           "not there for this fit")


# ------------------------------------------------------------------ study
def _kinds(cfg: dict) -> list[str]:
    kinds = as_list(cfg, "kinds")
    for k in kinds:
        require(k in SWEEPS, "kinds", kinds, f"error kinds among {', '.join(SWEEPS)}")
        require(cfg["model"].get(k) in (None, 0, "0"), k, cfg["model"].get(k),
                f"not set in the model table: the tolerance study sweeps it (use {SWEEPS[k]})")
    return list(dict.fromkeys(kinds))


def _spreads(cfg: dict, kind: str, spec) -> list[tuple[str, float]]:
    """(text, S in units of J, or a fraction for hopping_spread) of the kind's spreads, sorted; S = 0 first if given."""
    values = [(str(v), to_fraction(str(v), SWEEPS[kind]) if kind in FRACTIONS else
               to_energy(str(v), SWEEPS[kind], spec.J_hz, Ubar=spec.Ubar)) for v in as_list(cfg, SWEEPS[kind])]
    for text, x in values:
        require(math.isfinite(x) and x >= 0, SWEEPS[kind], text, "spreads >= 0")
    out, seen = [], set()
    for text, x in sorted(values, key=lambda tv: tv[1]):
        if x not in seen:
            seen.add(x)
            out.append((text, x))
    return out


class Tolerance(Study):
    """The tolerance study (module docstring)."""

    NAME = "tolerance"
    OPTIONS = (
        StudyOption("e2_spreads", "Leakage-level detuning spreads S, e.g. 0,1Jprop,2Jprop,400kHz (J_prop = 2 J^2/Ubar)."),
        StudyOption("frequency_noises", "Quasi-static frequency-noise spreads, e.g. 0,1Jprop,100kHz."),
        StudyOption("hopping_spreads", "Per-bond coupling spreads X (fractions), e.g. 0,5%,0.1 (with --kinds ...,hopping_spread)."),
        StudyOption("kinds", "Error kinds to sweep: e2_spread,frequency_noise,hopping_spread."),
        StudyOption("lengths", "Lengths, e.g. 3,6."),
    )
    SWEPT = {"length": ("lengths",)}
    REFUSES_DEVICE = "it runs at several array lengths L (lengths), which the device file fixes"
    TIME_UNITS = TIME_UNITS
    HELP = HELP

    def compute(self, cfg: dict, ctx: StudyContext):
        kinds = _kinds(cfg)
        lengths = parse_lengths(cfg["lengths"])
        T = positive_int(cfg, "time_points", 3)
        odds = Config(cfg).number("leakage_thermal_odds", min=1, default=1.0)
        spec0 = spec_of(cfg, length=lengths[0])
        spreads = {k: _spreads(cfg, k, spec0) for k in kinds}
        P = max(len(v) for v in spreads.values())
        K, NL = len(kinds), len(lengths)
        tau = {q: np.full((K, NL, P, 2), np.nan) for q in DECAYS}
        lives = LifetimeGrid((K, NL, P))
        mixes = [[[{} for _ in range(P)] for _ in lengths] for _ in kinds]
        reasons: dict = {}  # (decay time, kind, L, spread): why it is not resolved
        # one ensemble per distinct spec: S = 0 is shared by every kind
        points = {}
        for li, L in enumerate(lengths):  # the shortest array first: the paper's working point
            for ki, kind in enumerate(kinds):
                for pi, (text, x) in enumerate(spreads[kind]):
                    key = (L, None if x == 0 else kind, x)
                    points.setdefault(key, []).append((ki, li, pi, text))
        ctx.plan(len(points))
        for (L, kind, x), where in points.items():
            text = where[0][3]
            spec = spec_of(cfg, length=L, **({kind: text} if kind is not None else {}))
            t_final = spec.transit_hops * spec.T_prop + to_time(cfg["t_after"], "t_after", spec.J_hz)
            label = f"L={L} " + (f"{kind}={text}" if kind is not None else "no spread")
            res = run_ensemble(spec, cfg, ctx, label, init="all", t_final=t_final, time_points=T,
                               leakage_thermal_odds=odds)
            mix = engine_mix(res.diagnostics) or {res.settings.engine: res.completed * len(res.settings.inits)}
            times = decay_times(res)
            found = {q: (d.value, d.error) for q, d in times.items() if d is not None}
            found_lives = leakage_lifetimes(res)
            why = {q: unresolved_reason(q, res, times) for q in DECAYS if q != "T_prop" and q not in found}
            for ki, li, pi, _ in where:
                mixes[ki][li][pi] = mix
                reasons.update({(q, ki, li, pi): r for q, r in why.items()})
                for q, (v, e) in found.items():
                    if q in tau:
                        tau[q][ki, li, pi] = (nan_or(v), nan_or(e))
                lives.put((ki, li, pi), found_lives)
        return self._assemble(cfg, spec0, kinds, lengths, spreads, tau, lives, mixes, odds, reasons)

    def _assemble(self, cfg, spec0, kinds, lengths, spreads, tau, lives, mixes, odds, reasons=None):
        reasons = reasons or {}
        J_hz, J_prop = spec0.J_hz, spec0.J_prop
        K, NL, P = len(kinds), len(lengths), max(len(v) for v in spreads.values())
        S_J = np.full((K, P), np.nan)  # each kind in its own unit: J, or a fraction (FRACTIONS)
        for ki, k in enumerate(kinds):
            S_J[ki, : len(spreads[k])] = [x for _, x in spreads[k]]
        frac = np.array([k in FRACTIONS for k in kinds])
        S_E = np.where(frac[:, None], np.nan, S_J)  # the energies only
        ratio = float(cfg.get("fit_ratio", math.inf))
        require(ratio > 1, "fit_ratio", ratio, "a number > 1 (inf: every spread)")
        tau = {**tau, "leakage_lifetime_array": lives.array("leakage_lifetime_array")}  # its doubling is fitted too
        fits = {q: [[None] * NL for _ in kinds] for q in ("T_star", "leakage_lifetime_array")}
        for q in fits:
            for ki in range(K):
                n = len(spreads[kinds[ki]])
                for li in range(NL):
                    m = fit_points(tau[q][ki, li, :n, 0], ratio)
                    fits[q][ki][li] = doubling_fit(S_J[ki, :m], tau[q][ki, li, :m, 0], tau[q][ki, li, :m, 1],
                                                   s_max=S_J[ki, n - 1])
                    fits[q][ki][li]["fit_spreads"] = m
                    fits[q][ki][li]["crossing"] = doubling_crossing(S_J[ki, :n], tau[q][ki, li, :n, 0],
                                                                    tau[q][ki, li, :n, 1])
        c = spec0.conditions
        leak_own = 0.5 * c.T1q  # the lifetime of |2> by its own decay: T_star cannot exceed it
        # ---- dataset
        dims = ("kind", "L", "spread")
        data = {}
        for q in DECAYS:
            data[f"{q}_J"] = (dims, tau[q][..., 0], {"units": "1/J"})
            data[f"{q}_error_J"] = (dims, tau[q][..., 1], {"units": "1/J"})
        data.update(lives.data_vars(dims))
        for q, short in (("T_star", "T_star"), ("leakage_lifetime_array", "tau_L")):
            for name, key in (("T0_J", "T0"), ("a_per_J2", "a"), ("doubling_J", "value"), ("doubling_error_J", "error"),
                              ("chi2_red", "chi2_red")):
                arr = np.array([[nan_or(fits[q][ki][li][key]) for li in range(NL)] for ki in range(K)])
                data[f"{short}_fit_{name}"] = (("kind", "L"), arr)
            data[f"{short}_fit_spreads"] = (("kind", "L"), np.array(
                [[int(fits[q][ki][li]["fit_spreads"]) for li in range(NL)] for ki in range(K)]))
            data[f"{short}_doubling_is_bound"] = (("kind", "L"), np.array(
                [[int(fits[q][ki][li]["bound"] == "lower") for li in range(NL)] for ki in range(K)]))
            for name, key in (("crossing_J", "value"), ("crossing_error_J", "error")):  # the model-free estimate
                data[f"{short}_{name}"] = (("kind", "L"), np.array(
                    [[nan_or(fits[q][ki][li]["crossing"][key]) for li in range(NL)] for ki in range(K)]))
            data[f"{short}_doubling_holds"] = (("kind", "L"), np.array(
                [[str(which_holds(fits[q][ki][li], fits[q][ki][li]["crossing"])["estimate"]) for li in range(NL)]
                 for ki in range(K)]), {"long_name": "which doubling estimate holds: fit, crossing, bound or None"})
        coords = {
            "kind": ("kind", np.array(kinds, dtype=str)),
            "L": ("L", np.array(lengths)),
            "spread": ("spread", np.arange(P), {"long_name": "index of the spread value (per kind: spread_J)"}),
            "spread_J": (("kind", "spread"), S_E, {"units": "J", "long_name": "standard deviation S of the error"}),
            "spread_MHz": (("kind", "spread"), S_E * J_hz / 1e6, {"units": "MHz", "long_name": "S/2pi"}),
            "spread_Jprop": (("kind", "spread"), S_E / J_prop, {"units": "J_prop", "long_name": "S / J_prop"}),
        }
        if frac.any():  # the fraction kinds (hopping_spread), nan for the energies
            coords["spread_fraction"] = (("kind", "spread"), np.where(frac[:, None], S_J, np.nan),
                                         {"units": "1", "long_name": "relative standard deviation X"})
        attrs = dataset_attrs(spec0, cfg, J_prop_J=J_prop, leakage_thermal_odds=odds,
                              T_leak_own_J=finite_or_none(leak_own) or "inf",
                              doubling_units="J (hopping_spread: a fraction)")
        attrs.pop("L", None)
        ds = xr.Dataset(data, coords=coords, attrs=attrs)
        # ---- summary
        summary = {
            "study": self.NAME,
            "kinds": kinds,
            "lengths": lengths,
            "conditions": "ideal" if c.ideal else "realistic",
            "J_prop": {"value_J": J_prop, "value_MHz": J_prop * J_hz / 1e6},
            "T_leak_own": limit_json(leak_own, J_hz),
            "note": {**NOTES,
                     "doubling": "T_star(S) = T0 (1 + (S/S_2)^2) fitted per kind and L (weights: the T_star errors, "
                                 "absolute sigma) over the spreads up to the first where T_star reaches fit_ratio x "
                                 "T_star(0) (fit_spreads of them); S_2 is where T_star doubles; bound = 'lower': no "
                                 "doubling within the range, value = the largest spread; crossing: model-free, where "
                                 "T_star first reaches 2 T_star(0) (linear interpolation between the bracketing "
                                 "spreads); where chi2_red >> 1 the form does not hold and the crossing is the answer; "
                                 "through 2 spreads (dof 0) the fit has no error (error_reason); holds: which of the "
                                 "fit and the crossing to read, and why",
                     "common_random_numbers": "the same seed at every spread: the same box draws and event streams",
                     "ceiling": "under hardware decay T_star cannot exceed T_leak_own = T1q/2: where 2 T_star(0) "
                                "comes near it, T_star cannot double and the doubling spread is only bounded"},
            "trajectories": int(cfg["trajectories"]),
            "leakage_thermal_odds": odds,
            "fit_ratio": ratio,
            "parameters": parameters_json(spec0, {"L": "swept: see lengths"}, seed=int(cfg["seed"])),
        }
        us = time_to_us(1.0, J_hz)  # the bounds of a T2 in us: 2 T1 and the single transmon's T2 (realistic)
        T2q_us = c.T2q * us if not c.ideal and math.isfinite(c.T2q) else None
        for ki, kind in enumerate(kinds):
            n = len(spreads[kind])
            units = units_of(kind, J_hz, J_prop)
            entry = {"spreads": [t for t, _ in spreads[kind]],
                     **{f"spreads_{u}": [x * f for _, x in spreads[kind]] for u, f in units}, "by_length": []}
            for li, L in enumerate(lengths):
                row = {"L": L}
                for q in DECAYS:
                    row[q] = [time_json(tau[q][ki, li, p, 0], tau[q][ki, li, p, 1], J_hz, reasons.get((q, ki, li, p)),
                                        flags=t2_flags(*(tau["T2"][ki, li, p] * us), *(tau["T1"][ki, li, p] * us),
                                                       T2q_us, "the single transmon's T2 limit T2q") if q == "T2"
                                        else None)
                              for p in range(n)]
                row.update(lives.lists([(ki, li, p) for p in range(n)], J_hz))
                row["T_star_doubling"] = _doubling_json(fits["T_star"][ki][li], units)
                row["tau_L_doubling"] = _doubling_json(fits["leakage_lifetime_array"][ki][li], units)
                row["engine_mix"] = mixes[ki][li][:n]
                entry["by_length"].append(row)
            summary[kind] = entry
        return ds, summary

    # ------------------------------------------------------------------ table
    def table(self, summary: dict) -> str:
        jp = summary["J_prop"]
        lines = [f"{self.NAME}: decay times (us, +- jackknife error) vs fabrication/tuning errors, "
                 f"{summary['conditions']} conditions; J_prop = {jp['value_J']:.4g} J = {jp['value_MHz'] * 1e3:.4g} kHz"
                 "; each doubling: the estimate that holds first, the other beneath it"]

        unresolved = {}

        def cell(t):
            return time_cell(t, "us")

        for kind in summary["kinds"]:
            e = summary[kind]
            frac = kind in FRACTIONS
            xs, second = ((e["spreads_fraction"], e["spreads_percent"]) if frac else
                          (e["spreads_Jprop"], [m * 1e3 for m in e["spreads_MHz"]]))
            for row in e["by_length"]:
                lines += ["", f"{kind} ({LABELS[kind]}), L = {row['L']}",
                          (f"{'X':>8} {'X %':>10}" if frac else f"{'S/Jprop':>8} {'S/2pi kHz':>10}")
                          + f" {'T_star':>17} {'T1':>17} {'T2':>17} {HEAD}  engines"]
                for p, sj in enumerate(xs):
                    lives = cells(row["leakage_lifetime_qubit"][p], row["leakage_lifetime_array"][p],
                                  row["removal_efficiency"][p], unit="us")
                    lines.append(f"{sj:8.3g} {second[p]:10.4g} {cell(row['T_star'][p])} "
                                 f"{cell(row['T1'][p])} {cell(row['T2'][p])} {lives}  "
                                 f"{format_mix(row['engine_mix'][p])}")
                    unresolved.update({f"{q} at {kind} {e['spreads'][p]}, L = {row['L']}": row[q][p]
                                       for q in ("T_star", "T1", "T2")})
                for name, key in (("T_star", "T_star_doubling"), ("tau_L", "tau_L_doubling")):
                    lines.append(f"  {name} doubles at S = {_fmt_doubling(row[key])}")
        lines += [""] + reason_lines(unresolved) + [LEGEND]
        if "hopping_spread" not in summary["kinds"]:
            lines += ["hopping_spread: " + NOTES["hopping_spread"]]
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------------- plot
    def plot(self, ds, summary: dict, figdir) -> list:
        plt = pyplot()
        us, time_label = time_axis(ds.attrs["time_us_per_J"])  # 1/J -> the figure's time unit (us by default)
        kinds = [str(k) for k in ds["kind"].values]
        lengths = [int(L) for L in ds["L"].values]
        styles = {"T_star": ("C0", "o", r"$T_\star$"), "T1": ("C3", "s", r"$T_1$"), "T2": ("C2", "^", r"$T_2$"),
                  "leakage_lifetime_array": ("C4", "D", r"$\tau_L$")}
        with plt.rc_context(PLOT_STYLE):
            fig, axes = plt.subplots(len(kinds), len(lengths), figsize=(4.4 * len(lengths), 3.4 * len(kinds)),
                                     squeeze=False, sharey=True)
            unresolved = False
            for ki, kind in enumerate(kinds):
                frac = kind in FRACTIONS
                x = ds["spread_fraction" if frac else "spread_Jprop"].sel(kind=kind).values
                ok_x = np.isfinite(x)
                for li, L in enumerate(lengths):
                    ax = axes[ki, li]
                    for q, (c, mk, lab) in styles.items():
                        v = ds[f"{q}_J"].sel(kind=kind, L=L).values * us
                        e = ds[f"{q}_error_J"].sel(kind=kind, L=L).values * us
                        ok = ok_x & np.isfinite(v)
                        if ok.any():
                            ax.errorbar(x[ok], v[ok], yerr=np.nan_to_num(e[ok]), fmt=mk, color=c, ms=4, capsize=2,
                                        lw=1.0, label=lab, alpha=0.6 if q == "leakage_lifetime_array" else 1.0)
                        mark_unresolved(ax, x[ok_x & ~np.isfinite(v)], c)  # ran, not resolved: an x at the axis
                        unresolved = unresolved or bool((ok_x & ~np.isfinite(v)).any())
                    tp = ds["T_prop_J"].sel(kind=kind, L=L).values * us
                    if np.isfinite(tp).any():
                        ax.axhline(float(np.nanmax(tp)), color="k", ls="--", lw=0.9, label=r"$T_{\rm prop}$")
                    own = ds.attrs.get("T_leak_own_J", "inf")
                    if not isinstance(own, str) and np.isfinite(own):
                        ax.axhline(float(own) * us, color="C0", ls=":", lw=1.0, label=r"$T_1^{\rm q}/2$")
                    T0 = float(ds["T_star_fit_T0_J"].sel(kind=kind, L=L))
                    a = float(ds["T_star_fit_a_per_J2"].sel(kind=kind, L=L))
                    jp = 1.0 if frac else float(ds.attrs["J_prop_J"])  # the unit of the x axis
                    bound = bool(int(ds["T_star_doubling_is_bound"].sel(kind=kind, L=L)))
                    m = int(ds["T_star_fit_spreads"].sel(kind=kind, L=L)) if "T_star_fit_spreads" in ds else len(x)
                    holds = str(ds["T_star_doubling_holds"].sel(kind=kind, L=L).values) \
                        if "T_star_doubling_holds" in ds else "fit"
                    if np.isfinite(T0) and np.isfinite(a) and ok_x.any() and not bound:
                        xx = np.linspace(0.0, float(np.nanmax(x[:m])), 100)  # over the fitted spreads only
                        ax.plot(xx, T0 * (1 + a * (xx * jp) ** 2) * us, color="C0", lw=1.0,
                                label=r"$T_0(1+(S/S_2)^2)$")
                        S2 = float(ds["T_star_fit_doubling_J"].sel(kind=kind, L=L)) / jp
                        if np.isfinite(S2) and holds == "fit":
                            ax.plot([S2], [2 * T0 * us], "*", color="k", ms=10, label=r"$T_\star$ doubles (fit, holds)")
                        elif np.isfinite(S2):  # the fit's S_2 where it does not hold: shown, not as the result
                            ax.plot([S2], [2 * T0 * us], "*", mfc="none", mec="0.5", ms=10,
                                    label="fit's $S_2$ (does not hold)")
                    if holds == "crossing" and np.isfinite(T0):  # the result that holds: the model-free crossing
                        Sc = float(ds["T_star_crossing_J"].sel(kind=kind, L=L)) / jp
                        Se = float(ds["T_star_crossing_error_J"].sel(kind=kind, L=L)) / jp
                        if np.isfinite(Sc):
                            ax.errorbar([Sc], [2 * T0 * us], xerr=[Se] if np.isfinite(Se) else None, fmt="*",
                                        color="k", ms=11, capsize=3, label=r"$T_\star$ doubles (crossing, holds)")
                    S2 = float(ds["T_star_fit_doubling_J"].sel(kind=kind, L=L)) / jp
                    if bound and np.isfinite(S2):
                        unit = "" if frac else r" $J_{\rm prop}$"
                        ax.annotate(r"$T_\star$ does not double: $S_2 >$" + f" {S2:.3g}" + unit,
                                    xy=(0.03, 0.04), xycoords="axes fraction", fontsize=8)
                    ax.set_yscale("log")
                    ax.set_xlabel(f"{kind} X" if frac else f"{kind} S / " + r"$J_{\rm prop}$")
                    ax.set_title(f"{LABELS.get(kind, kind)}, L = {L}")
                axes[ki, 0].set_ylabel(time_label)
            handles, labels = axes[0, 0].get_legend_handles_labels()
            if unresolved:
                handles, labels = handles + [unresolved_handle()], labels + [UNRESOLVED_LABEL]
            axes[0, 0].legend(handles, labels, fontsize=7, ncol=2)
            fig.tight_layout()
            return save_figure(fig, figdir, "decay_times_vs_spread")


def nan_or(x) -> float:
    v = finite_or_none(x)
    return math.nan if v is None else v


def _fmt_doubling(d: dict) -> str:
    """A doubling spread as read: the estimate that holds (``holds``) first, with its error to its digits, then why it
    holds, then the other estimate as what it is (not the result)."""
    frac = "value_fraction" in d  # a fraction kind (hopping_spread)
    fit, cross = _fmt_fit(d, frac), _fmt_crossing(d.get("crossing"), frac)
    h = d.get("holds") or {}
    if d.get(_value_key(frac)) is None and cross is None:
        return "(no fit)"
    if d["bound"] == "lower" or h.get("estimate") == "bound":
        return (f"> {_spread(d, frac)} (not doubled within the range)"
                + (f"\n    holds: bound ({h['reason']})" if h.get("reason") else ""))
    if h.get("estimate") == "crossing" and cross is not None:
        return (f"{cross} (model-free crossing of 2 T0)\n    holds: crossing ({h['reason']})"
                f"\n    fit of the onset T0 (1 + (S/S_2)^2): {fit}, not the result")
    out = f"{fit} (fit of the onset T0 (1 + (S/S_2)^2))"
    if h.get("estimate"):
        out += f"\n    holds: {h['estimate']} ({h['reason']})"
    if cross is not None:
        out += f"\n    model-free crossing of 2 T0: {cross}"
    return out


def _value_key(frac: bool) -> str:
    return "value_fraction" if frac else "value_Jprop"


def _spread(d: dict, frac: bool, error: bool = False) -> str:
    """A spread of a doubling's JSON: X (a fraction) or S in J_prop and kHz, to the error's digits."""
    if frac:
        e = d.get("error_fraction") if error else None
        return "X = " + (pm(d["value_fraction"], e) if e is not None else sig(d["value_fraction"], 3))
    jp = pm(d["value_Jprop"], d.get("error_Jprop") if error else None)
    khz = pm(d["value_MHz"] * 1e3, d["error_MHz"] * 1e3 if error and d.get("error_MHz") is not None else None)
    if not error or d.get("error_Jprop") is None:
        jp, khz = sig(d["value_Jprop"], 3), sig(d["value_MHz"] * 1e3, 3)
    return f"{jp} J_prop = {khz} kHz"


def _fmt_fit(d: dict, frac: bool) -> str:
    if d.get(_value_key(frac)) is None:
        return "not resolved"
    err = d.get("error_fraction" if frac else "error_Jprop")
    if err is None:
        return f"{_spread(d, frac)} ({d.get('error_reason') or 'no error'})"
    chi = "" if d["chi2_red"] is None else f", chi2_red = {sig(d['chi2_red'], 2)}"
    return f"{_spread(d, frac, error=True)}{chi}"


def _fmt_crossing(c: dict | None, frac: bool) -> str | None:
    if c is None or c.get(_value_key(frac)) is None:
        return None
    if c["bound"] == "lower":
        return f"> {_spread(c, frac)}"
    return _spread(c, frac, error=True)


STUDIES = {Tolerance.NAME: Tolerance()}
