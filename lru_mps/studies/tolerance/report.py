"""The tolerance study's report: its text table and its figure (the decay times against each error's spread).

Reads only the study's summary (JSON) and dataset (NetCDF), so ``lru-mps plot DIR`` redraws the figure from the
stored results; the computation is in :mod:`lru_mps.studies.tolerance`.  Spreads in J_prop and kHz (the hopping
spread as a fraction X), times in us.
"""

from __future__ import annotations

import numpy as np

from ...analysis.numbers import pm, sig
from ...run.trajectories import format_mix
from ..base import save_figure, time_axis
from ..common import PLOT_STYLE, UNRESOLVED_LABEL, mark_unresolved, pyplot, unresolved_handle
from ..lifetimes import HEAD, LEGEND, cells, reason_lines, time_cell
from .plan import FRACTIONS, LABELS, NOTES


def table(summary: dict) -> str:
    """The table: per kind and L the times in us (+- jackknife error) at every spread, and the doubling spreads."""
    jp = summary["J_prop"]
    lines = [f"{summary['study']}: decay times (us, +- jackknife error) vs fabrication/tuning errors, "
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


def plot(ds, summary: dict, figdir) -> list:
    """T_star, T1, T2 and tau_L against the spread, a panel per kind and L, with the fit of the onset and the
    doubling spread that holds."""
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
