"""The rate sweep's table and figure: P_star^(L)(t_eval) on the grid of reset rates G (units of J, and MHz), the
optima found against the analytic L = 2 positions and the paper's L = 3 numerics."""

from __future__ import annotations

import numpy as np

from ...analysis.numbers import pm, resolution_reason, sig
from ..base import MORE_SAMPLES, save_figure, time_unit
from ..common import PLOT_STYLE, evolution_kind, mark_unresolved, pyplot, unresolved_handle


def table(summary: dict) -> str:
    """The printed table of a rate sweep's summary: the leakage on the grid, the optima against the analytic and
    the paper's, each unresolved value marked and its reason under the table."""
    kinds = summary["resets"]
    t = summary["t_eval_J"]
    lines = [
        f"rate-sweep: array leakage P_star^(L)(t = {t:g}/J = {summary['t_eval_us']:.3g} us) vs reset rate G, "
        f"L = {summary['parameters']['L']}, {summary['conditions']} conditions, "
        f"{summary['evolutions_per_rate']} {evolution_kind(summary['conditions'] == 'ideal' and summary.get('estimator') != 'sampled')} per rate",
        "",
        f"{'G (J)':>10} {'G/2pi (MHz)':>12} " + " ".join(f"{k:>17}" for k in kinds),
    ]
    notes: dict[str, list[str]] = {}  # reason -> what it explains (the footnotes under the table)
    for i, G in enumerate(summary["rates_J"]):
        cells = []
        for k in kinds:
            d = summary["leakage"][k]
            m, s = d["mean"][i], d["sem"][i]
            if m is None:
                why = (d.get("mean_reason") or [None] * len(d["mean"]))[i] or "not there"
                notes.setdefault(why, []).append(f"{k} at G = {G:.4g} J")
                cells.append(f"{'not run*' if why.startswith('not run') else 'not resolved*':>17}")
            elif resolution_reason(m, s):  # an error of half the value or more: not a result
                notes.setdefault(f"not resolved: {resolution_reason(m, s, MORE_SAMPLES)}", []).append(
                    f"{k} at G = {G:.4g} J")
                cells.append(f"{'not resolved*':>17}")
            else:
                cells.append(f"{pm(m, s, sep='+-'):>17}")
        lines.append(f"{G:10.4g} {summary['rates_MHz'][i]:12.4g} " + " ".join(cells))
    lines += [f"* {', '.join(what)}: {why}" for why, what in notes.items()]
    lines += ["", "optimal rates (units of J): refined minimum of P_star^(L)(t_eval), L = 2 analytic position"
              + (", paper's L = 3 numerics" if "paper_optima_J" in summary else "")]
    head = (f"{'reset':>12} {'optimum':>8} {'found':>20} {'found/2pi (MHz)':>16} {'P_star':>17} {'analytic':>10} "
            f"{'found/an.':>10}")
    if "paper_optima_J" in summary:
        head += f" {'paper':>8}"
    lines.append(head)

    def f(x, fmt="10.4g"):
        return f"{'-':>{fmt.split('.')[0]}}" if x is None else format(x, fmt)

    notes = {}
    for k in kinds:
        for b in ("low", "high"):
            found = summary["optima_J"][k][b]
            err = (summary.get("optima_error_J") or {}).get(k, {}).get(b)
            why = (summary.get("optima_error_J_reason") or {}).get(k, {}).get(b)
            an = summary["analytic_optima_J"][k][b]
            p = summary["optima_leakage"][k][b]
            pcell = f"{'-':>17}" if p["mean"] is None else f"{'not resolved*':>17}" if resolution_reason(
                p["mean"], p["sem"]) else f"{pm(p['mean'], p['sem'], sep='+-'):>17}"
            if p["mean"] is not None and resolution_reason(p["mean"], p["sem"]):
                notes.setdefault(f"P_star not resolved: {resolution_reason(p['mean'], p['sem'], MORE_SAMPLES)}",
                                 []).append(f"{k} {b}")
            ratio = None if found is None else found / an
            if found is None:
                fcell = "not resolved*"
            elif err is None:
                fcell = f"{sig(found)} (no error*)"
            else:
                fcell = pm(found, err, sep="+-")
            if why:
                notes.setdefault(why, []).append(f"{k} {b}")
            mhz = (summary.get("optima_MHz") or {}).get(k, {}).get(b)
            row = f"{k:>12} {b:>8} {fcell:>20} {sig(mhz):>16} {pcell} {f(an)} {f(ratio)}"
            if "paper_optima_J" in summary:
                row += f" {f(summary['paper_optima_J'][k][b], '8.3g')}"
            lines.append(row)
    lines += [f"* {', '.join(what)}: {why}" for why, what in notes.items()]
    lines.append(f"optimum: {summary['optimum_note']}" if "optimum_note" in summary else "")
    for k, path in (summary.get("feedback_path") or {}).items():
        lines.append(f"{k}: {path}")
    lines.append(f"J_prop = {summary['J_prop_J']:.4g} J; {summary['analytic_note']}")
    return "\n".join(lines) + "\n"


def plot(ds, summary: dict, figdir) -> list:
    """P_star^(L)(t_eval) vs G (log-log) with the found and analytic optima."""
    plt = pyplot()
    styles = {"periodic": ("C0", "o", "-"), "random": ("C2", "s", "-."), "dissipation": ("C3", "^", "--")}
    J_MHz = float(ds.attrs["J_over_2pi_Hz"]) / 1e6
    with plt.rc_context(PLOT_STYLE):
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        rates = ds["rate_J"].values
        not_run = []
        for kind in ds["reset"].values:
            c, mk, ls = styles.get(str(kind), ("k", "o", "-"))
            m = ds["leakage_mean"].sel(reset=kind).values
            s = ds["leakage_sem"].sel(reset=kind).values
            ok = np.isfinite(m)
            ax.plot(rates[ok], m[ok], ls, color=c, marker=mk, ms=3.5, label=f"{kind}")
            if not ok.all():  # rates not run (feedback above feedback_rate_max): marked at the axis, not dropped
                mark_unresolved(ax, rates[~ok], c)
                not_run.append(f"{kind} above {rates[ok].max():g} J")
            ax.fill_between(rates[ok], np.clip(m[ok] - s[ok], 1e-6, None), m[ok] + s[ok], color=c, alpha=0.2, lw=0)
            er = ds["evaluation_rate_J"].sel(reset=kind).values
            em = ds["evaluation_leakage_mean"].sel(reset=kind).values
            okk = np.isfinite(er)
            ax.plot(er[okk], em[okk], ".", color=c, ms=3, alpha=0.7)
            for b in ("low", "high"):
                g = float(ds["optimum_rate_J"].sel(reset=kind, optimum=b))
                if np.isfinite(g):
                    ax.axvline(g, color=c, ls=ls, lw=0.9, alpha=0.9)
                    ax.plot([g], [float(ds["optimum_leakage_mean"].sel(reset=kind, optimum=b))], marker="*",
                            color=c, ms=11, mec="k", mew=0.5, ls="none")
                a = float(ds["analytic_optimum_rate_J"].sel(reset=kind, optimum=b))
                ax.axvline(a, color=c, ls=":", lw=0.9, alpha=0.6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(r"reset rate $\Gamma$ (units of $J$)")
        t_eval = float(ds.attrs["t_eval_J"])  # the time the leakage is read at, in the figure's time unit
        if time_unit() == "us" and "time_us_per_J" in ds.attrs:
            ax.set_ylabel(r"$P_\star^{(L)}(t)$ at $t$ = %.4g µs" % (t_eval * float(ds.attrs["time_us_per_J"])))
        else:
            ax.set_ylabel(r"$P_\star^{(L)}(t)$ at $t$ = %g/J" % t_eval)
        ax.set_title(f"L = {int(ds.attrs['L'])}, {ds.attrs['conditions']} conditions, "
                     f"J/2π = {J_MHz:g} MHz, W = {float(ds.attrs['W_J']):g} J ({float(ds.attrs['W_J']) * J_MHz:g} MHz), "
                     f"Ū = {float(ds.attrs['Ubar_J']):g} J ({float(ds.attrs['Ubar_J']) * J_MHz:g} MHz)")
        sec = ax.secondary_xaxis("top", functions=(lambda x: x * J_MHz, lambda x: x / J_MHz))
        sec.set_xlabel(r"$\Gamma/2\pi$ (MHz)")
        from matplotlib.lines import Line2D

        handles, labels = ax.get_legend_handles_labels()
        handles += [Line2D([], [], color="0.3", marker="*", ls="none", ms=9, mec="k", mew=0.5),
                    Line2D([], [], color="0.3", ls=":", lw=0.9)]
        labels += ["found optimum (minimiser)", "analytic optimum (L = 2)"]
        if not_run:
            handles.append(unresolved_handle())
            labels.append("x: not run (" + ", ".join(not_run) + ": feedback_rate_max)")
        ax.legend(handles, labels, loc="lower center", frameon=True, framealpha=0.9)
        fig.tight_layout()
        return save_figure(fig, figdir, "leakage_vs_rate")
