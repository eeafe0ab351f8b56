"""The dynamics study's table and figure: P_star^(1)(t) and P_star^(L)(t) per reset rate (times in 1/J and us),
and each rate's leakage lifetimes."""

from __future__ import annotations

import numpy as np

from ...analysis.lifetimes import LIFETIMES
from ...analysis.numbers import pm, resolution_reason, sig
from ..base import save_figure, time_axis, time_unit
from ..common import PLOT_STYLE, evolution_kind, pyplot
from ..lifetimes import HEAD, LEGEND, cells


def table(summary: dict) -> str:
    t = np.array(summary["time_J"], dtype=float)
    marks = [x for x in (0.0, summary["T_prop_J"], 2 * summary["T_prop_J"], 50.0, 100.0, 150.0, t[-1]) if x <= t[-1]]
    idx = sorted(set(int(np.argmin(np.abs(t - m))) for m in marks))
    lines = [
        f"dynamics: leakage from |2> on site 1, L = {summary['parameters']['L']}, {summary['parameters']['reset']} reset, "
        f"{summary['conditions']} conditions, {summary['evolutions']} "
        f"{evolution_kind(summary['conditions'] == 'ideal' and summary.get('estimator') != 'sampled')} per rate; "
        f"T_prop = {summary['T_prop_J']:.4g}/J = {summary['T_prop_us']:.3g} us",
        "",
        f"{'G':>8} {'G/2pi (MHz)':>12} {'t (us)':>8} {'tJ':>8} {'P_star^(1)':>17} {'P_star^(L)':>17}",
    ]
    mhz = summary.get("rates_MHz") or [None] * len(summary["rates"])
    for (lab, c), g in zip(summary["curves"].items(), mhz):
        for i in idx:
            a, b = c["leakage_site1"], c["leakage_array"]
            lines.append(
                f"{lab:>8} {_g(g):>12} {summary['time_us'][i]:8.3g} {t[i]:8.4g} "
                f"{_p(a['mean'][i], a['sem'][i]):>17} {_p(b['mean'][i], b['sem'][i]):>17}"
            )
    if "not resolved*" in "\n".join(lines):
        lines.append("* not resolved: its error is half its value or more; more trajectories (or disorder "
                     "realizations) resolve it")
    lines += ["", "leakage lifetimes (us), per rate:", f"{'G':>8} {'G/2pi (MHz)':>12} {HEAD}"]
    for i, lab in enumerate(summary["rates"]):
        lines.append(f"{lab:>8} {_g(mhz[i]):>12} " + cells(*(summary[k][i] for k in LIFETIMES), unit="us"))
    lines.append(LEGEND)
    return "\n".join(lines) + "\n"


def plot(ds, summary: dict, figdir) -> list:
    """(a) P_star^(1)(t), (b) P_star^(L)(t) for each rate."""
    plt = pyplot()
    us = float(ds.attrs["time_us_per_J"])
    f, time_label = time_axis(us, "time $t$")  # the bottom axis in the figure's unit, the other one on top
    t = ds["time_J"].values * f
    with plt.rc_context(PLOT_STYLE):
        fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.6), sharey=True)
        colors = plt.get_cmap("Blues")(np.linspace(0.45, 0.95, max(2, ds.sizes["rate"])))
        for ax, obs, lab in zip(axes, ("leakage_site1", "leakage_array"), (r"$P_\star^{(1)}(t)$", r"$P_\star^{(L)}(t)$")):
            for i in range(ds.sizes["rate"]):
                m = ds[f"{obs}_mean"].isel(rate=i).values
                s = ds[f"{obs}_sem"].isel(rate=i).values
                g = float(ds["rate_J"].isel(rate=i))
                g_mhz = g * float(ds.attrs["J_over_2pi_Hz"]) / 1e6
                ax.plot(t, m, color=colors[i], lw=1.4, label=rf"$\Gamma = {g:g}\,J$ ({g_mhz:.3g} MHz)")
                ax.fill_between(t, m - s, m + s, color=colors[i], alpha=0.25, lw=0)
            tp = float(ds.attrs["T_prop_J"]) * f
            L = int(ds.attrs["L"])
            ax.axvline(tp, color="0.4", ls=":", lw=1, label=r"$T_{\rm prop}$")
            if L > 2:
                ax.axvline((L - 1) * tp, color="0.4", ls="--", lw=1, label=r"$(L-1)T_{\rm prop}$")
            ax.set_xlabel(time_label)
            ax.set_ylabel(lab)
            ax.set_ylim(0, 1.02)
            ax.set_xlim(t[0], t[-1])
            if time_unit() == "us":  # top: t in 1/J
                sec = ax.secondary_xaxis("top", functions=(lambda x: x / us, lambda x: x * us))
                sec.set_xlabel("$t$ (1/J)")
            else:
                sec = ax.secondary_xaxis("top", functions=(lambda x: x * us, lambda x: x / us))
                sec.set_xlabel("$t$ (µs)")
            ax.legend(loc="upper right")
        axes[0].set_title(f"(a) qubit site, L = {int(ds.attrs['L'])}, {ds.attrs['reset_kind']}", loc="left")
        axes[1].set_title("(b) whole array", loc="left")
        fig.tight_layout()
        return save_figure(fig, figdir, "leakage_dynamics")

def _g(x) -> str:
    """A configured rate as given (4 digits, no trailing zeros)."""
    return "-" if x is None else f"{x:.4g}"

def _p(mean, sem) -> str:
    """A probability to its error's digits; an exact one (no error: the start) as it is; 'not resolved*' where its
    error is half of it or more (the reason under the table)."""
    if sem and resolution_reason(mean, sem):
        return "not resolved*"
    return pm(mean, sem, sep="+-") if sem else sig(mean, 4)
