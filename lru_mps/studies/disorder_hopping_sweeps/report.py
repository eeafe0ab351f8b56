"""The decay sweeps' table and figures: T_star, T_prop, T1, T2 against the disorder width W or the hopping J per
condition (us, or 1/J for the disorder sweep), the leakage lifetimes beside them, and the fitted curves (paper
Fig. 3 and Fig. 7)."""

from __future__ import annotations

import numpy as np

from ..base import TIME_UNIT_LABELS, save_figure, time_unit
from ..common import (evolution_kind, CURVES, DECAYS, FITTED, PLOT_STYLE, pyplot, UNRESOLVED_LABEL, mark_unresolved,
                      unresolved_handle)
from ..lifetimes import HEAD, LEGEND, cells, reason_lines, time_cell


def table(summary: dict, name: str, dim: str, label: str) -> str:
    """The printed table of a decay sweep's summary (study ``name``, sweeping ``dim``, "disorder" or "hopping",
    named ``label``): per condition and point the decay times in us and the leakage lifetimes."""
    if dim == "disorder":
        xs, head = summary["disorders_MHz"], "W/2pi (MHz)"
        xj = summary["disorders_J"]
    else:
        xs, head = summary["hoppings_MHz"], "J/2pi (MHz)"
        xj = summary["rates_J"]
    xs_name = "W/2pi" if dim == "disorder" else "J/2pi"
    lines = [f"{name}: decay times vs {label}, L = {summary['parameters']['L']}, "
             f"{summary['parameters']['reset']} reset; times in us (value +- jackknife error)"]

    cell = lambda t: time_cell(t, "us")  # noqa: E731
    notes = {}
    for c in summary["conditions"]:
        e = summary["ensembles"][c]
        kind = evolution_kind(c == "ideal" and e.get("estimator", "branch") == "branch")
        lines += ["", f"{c} conditions ({e['evolutions']} {kind} per point)"]
        second = "W (J)" if dim == "disorder" else "G (J)"
        third = "" if dim == "disorder" else f" {'G/2pi (MHz)':>12}"  # a rate: in MHz beside J
        lines.append(f"{head:>12} {second:>8}{third} {'T_prop':>9} {'T_star':>17} {'T1':>17} {'T2':>17} {HEAD}")
        for i, x in enumerate(xs):
            d = summary[c]
            for q in FITTED:
                notes[f"{c} {q} at {xs_name} = {x:g} MHz"] = d[q][i]
            lives = cells(d["leakage_lifetime_qubit"][i], d["leakage_lifetime_array"][i],
                          d["removal_efficiency"][i], unit="us")
            lines.append(
                f"{x:12.4g} {xj[i]:8.4g}"
                + ("" if dim == "disorder" else f" {summary['rates_MHz'][i]:12.4g}")
                + f" {d['T_prop'][i]['value_us']:9.4g} "
                f"{cell(d['T_star'][i])} {cell(d['T1'][i])} {cell(d['T2'][i])} {lives}"
            )
    return "\n".join(lines + [""] + reason_lines(notes) + [LEGEND]) + "\n"


def plot(ds, summary: dict, figdir, dim: str) -> list:
    """Decay times vs the sweep variable (one panel per condition) and the fitted curves, their times in the
    unit of :func:`time_unit` (1/J: the disorder sweep only, its ``TIME_UNITS``); ``dim``: "disorder" or "hopping"."""
    plt = pyplot()
    unit = time_unit()
    suffix = "J" if unit == "1/J" else "us"  # of the stored times: T_star_J or T_star_us, time_J or time_us
    unit_label = TIME_UNIT_LABELS[unit]
    x = ds[dim].values
    xlabel = r"disorder $W/2\pi$ (MHz)" if dim == "disorder" else r"hopping $J/2\pi$ (MHz)"
    conds = [str(c) for c in ds["conditions"].values]
    paths = []
    styles = {"T_star": ("C0", "o", r"$T_\star$"), "T_prop": ("k", "", r"$T_{\rm prop}$"),
              "T1": ("C3", "s", r"$T_1$"), "T2": ("C2", "^", r"$T_2$")}
    with plt.rc_context(PLOT_STYLE):
        fig, axes = plt.subplots(len(conds), 1, figsize=(5.0, 3.3 * len(conds)), sharex=True, squeeze=False)
        for ax, cond in zip(axes[:, 0], conds):
            unresolved = False
            for q in DECAYS:
                c, mk, lab = styles[q]
                v = ds[f"{q}_{suffix}"].sel(conditions=cond).values
                e = ds[f"{q}_error_{suffix}"].sel(conditions=cond).values
                ok = np.isfinite(v)
                if q != "T_prop":  # a point that ran but is not resolved: marked at the axis, not dropped
                    mark_unresolved(ax, x[~ok], c, level=FITTED.index(q))
                    unresolved = unresolved or bool((~ok).any())
                if not ok.any():
                    continue
                if q == "T_prop":
                    ax.plot(x[ok], v[ok], "--", color=c, lw=1.2, label=lab)
                else:
                    ax.errorbar(x[ok], v[ok], yerr=np.nan_to_num(e[ok]), fmt=mk + "-", color=c, ms=4, capsize=2,
                                lw=1.0, label=lab)
            if cond == "realistic":
                for key, c, lab in (("T1q_us", "C3", r"$T_1^{\rm q}$"), ("T2q_us", "C2", r"$T_2^{\rm q}$")):
                    v = ds.attrs.get(key, "inf")
                    if not isinstance(v, str) and np.isfinite(v):
                        v = float(v) / (float(ds.attrs["time_us_per_J"]) if unit == "1/J" else 1.0)
                        ax.axhline(v, color=c, ls=":", lw=1, label=lab + " (one transmon)")
            ax.set_yscale("log")
            ax.set_ylabel(f"time ({unit_label})")
            ax.set_title(f"{cond} conditions, L = {int(ds.attrs['L'])}, {ds.attrs['reset_kind']} reset")
            handles, labels = ax.get_legend_handles_labels()
            if unresolved:
                handles, labels = handles + [unresolved_handle()], labels + [UNRESOLVED_LABEL]
            ax.legend(handles, labels, loc="best", ncol=2)
        axes[-1, 0].set_xlabel(xlabel)
        if dim == "hopping":
            axes[-1, 0].set_xscale("log")
            axes[-1, 0].set_xticks(x)
            axes[-1, 0].set_xticklabels([f"{v:g}" for v in x])
            axes[-1, 0].minorticks_off()
        fig.tight_layout()
        paths += save_figure(fig, figdir, f"decay_times_vs_{dim}")

        # the curves and their fits (paper Fig. 7)
        fig, axes = plt.subplots(len(conds), 3, figsize=(11.0, 3.1 * len(conds)), squeeze=False)
        cmap = plt.get_cmap("viridis")
        names = {"T_star": r"$P_\star^{(L)}(t)$", "T1": r"$\langle n_1\rangle(t)$", "T2": r"$2C(t)$"}
        for r, cond in enumerate(conds):
            for col, q in enumerate(FITTED):
                ax = axes[r, col]
                obs, factor = CURVES[q]
                for p in range(len(x)):
                    color = cmap(p / max(1, len(x) - 1))
                    prefix = "leakage_" if q == "T_star" else ""
                    t = ds[f"{prefix}time_{suffix}"].isel({dim: p}).values
                    t_J = ds[f"{prefix}time_J"].isel({dim: p}).values
                    y = factor * ds[f"{obs}_mean"].sel(conditions=cond).isel({dim: p}).values
                    ax.plot(t, y, color=color, lw=1.0, label=f"{x[p]:g} MHz")
                    tau = float(ds[f"{q}_J"].sel(conditions=cond).isel({dim: p}))
                    A = float(ds[f"{q}_amplitude"].sel(conditions=cond).isel({dim: p}))
                    t0 = float(ds[f"{q}_window_start_J"].sel(conditions=cond).isel({dim: p}))
                    t1 = float(ds[f"{q}_window_end_J"].sel(conditions=cond).isel({dim: p}))
                    if all(np.isfinite([tau, A, t0, t1])):
                        tt = np.linspace(t0, t1, 50)
                        ax.plot(tt * t[-1] / t_J[-1], A * np.exp(-tt / tau), ls="--", color=color, lw=0.9)
                ax.set_yscale("log")
                ax.set_xlabel(f"time $t$ ({unit_label})")
                ax.set_ylabel(names[q])
                ax.set_title(f"{cond}: {names[q]} (dashed: fit)")
                if col == 0:
                    ax.legend(title=("W/2π" if dim == "disorder" else "J/2π"), fontsize=7)
        fig.tight_layout()
        paths += save_figure(fig, figdir, f"fits_vs_{dim}")
    return paths
