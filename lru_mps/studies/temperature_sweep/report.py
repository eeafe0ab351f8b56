"""The temperature sweep's table and figure: T_star, T1, T2 and the leakage lifetimes (us) against the array's
temperature (mK) per length, the hardware limits beside them, the engines each point ran on."""

from __future__ import annotations

import numpy as np

from ...analysis.lifetimes import LIFETIMES
from ...analysis.numbers import sig
from ...run.trajectories import format_mix
from ..base import save_figure, time_axis
from ..common import FITTED, UNRESOLVED_LABEL, PLOT_STYLE, mark_unresolved, pyplot, unresolved_handle
from ..lifetimes import reason_lines, HEAD, LEGEND, cells, time_cell


def table(summary: dict) -> str:
    lines = [f"{summary['study']}: decay times (us, +- jackknife error) vs the array's temperature"]
    hw = summary["hardware_limits"]
    lines.append("hardware limits: " + ", ".join(f"{k} = {sig(hw[k]['value_us'], 3)} us" for k in hw
                                                 if hw[k]["value_us"] is not None))
    unresolved = {}
    for li, L in enumerate(summary["lengths"]):
        lines += ["", f"L = {L}", f"{'T (mK)':>8} {'T_star':>17} {'T1':>17} {'T2':>17} {HEAD}  engines"]
        for ti, t in enumerate(summary["temperatures_mK"]):
            if summary["T1"][li][ti] is None:
                lines.append(f"{t:8.4g} {'not run*':>17}")
                not_run = (summary.get("T1_reason") or [[None]])[li][ti] or "not run"
                unresolved[f"L = {L}, {t:g} mK"] = {"value_us": None, "reason": not_run}
                continue
            times = " ".join(time_cell(summary[k][li][ti], "us") for k in FITTED)
            lives = cells(*(summary[k][li][ti] for k in LIFETIMES), unit="us")
            mix = format_mix(summary["engine_mix"][li][ti])
            lines.append(f"{t:8.4g} {times} {lives}  {mix}")
            unresolved.update({f"{k} at L = {L}, {t:g} mK": summary[k][li][ti] for k in FITTED})
    return "\n".join(lines + [""] + reason_lines(unresolved) + [LEGEND]) + "\n"


def plot(ds, summary: dict, figdir) -> list:
    plt = pyplot()
    us, time_label = time_axis(ds.attrs["time_us_per_J"])  # 1/J -> the figure's time unit (us by default)
    x = ds["temperature"].values
    with plt.rc_context(PLOT_STYLE):
        fig, axes = plt.subplots(1, len(ds.L), figsize=(4.4 * len(ds.L), 3.6), squeeze=False, sharey=True)
        for ax, L in zip(axes[0], ds.L.values):
            ran = ds["run"].sel(L=L).values.astype(bool)
            for name, marker, label in (("T_star", "o", "T_star"), ("T1", "s", "T1"), ("T2", "^", "T2"),
                                        ("leakage_lifetime_qubit", "v", r"$\tau_1$ (leakage lifetime)"),
                                        ("leakage_lifetime_array", "D", r"$\tau_L$")):
                if f"{name}_J" not in ds:
                    continue
                v = ds[f"{name}_J"].sel(L=L).values * us
                e = ds[f"{name}_error_J"].sel(L=L).values * us
                ok = np.isfinite(v)
                if ok.any():
                    line = ax.errorbar(x[ok], v[ok], yerr=np.nan_to_num(e[ok]), fmt=marker + "-", capsize=2,
                                       label=label)
                    color = line[0].get_color()
                else:
                    color = "0.4"
                mark_unresolved(ax, x[ran & ~ok], color, marker)
            for key, color, lab in (("T1q_J", "C1", "T1q"), ("T2q_J", "C2", "T2q"), ("T_leak_own_J", "C0", "T1q/2")):
                v = ds.attrs.get(key)
                if isinstance(v, (int, float, np.floating)) and np.isfinite(v):
                    ax.axhline(float(v) * us, color=color, ls=":", lw=1.2, label=f"{lab} (limit)")
            ax.set_yscale("log")
            ax.set_xlabel("temperature (mK)")
            ax.set_title(f"L = {int(L)}")
        axes[0, 0].set_ylabel(time_label)
        handles, labels = axes[0, 0].get_legend_handles_labels()
        fig.legend(handles + [unresolved_handle()], labels + [UNRESOLVED_LABEL], fontsize=7, loc="center left",
                   bbox_to_anchor=(1.0, 0.5))
        fig.tight_layout()
        return save_figure(fig, figdir, "decay_times_vs_temperature")
