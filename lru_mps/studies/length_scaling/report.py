"""The length-scaling study's report: its text table and its figures (decay times vs L, the localization length).

Reads only the study's summary (JSON) and dataset (NetCDF), so ``lru-mps plot DIR`` redraws the figures from the
stored results; the computation is in :mod:`lru_mps.studies.length_scaling`.
"""

from __future__ import annotations

import numpy as np

from ...physics.units import time_to_us
from ...run.trajectories import format_mix
from ..base import save_figure, time_axis
from ..common import UNRESOLVED_LABEL, mark_unresolved, unresolved_handle
from ..lifetimes import HEAD, LEGEND, MORE, cells, reason_lines, time_cell
from ...analysis.numbers import not_resolved, pm, shown, sig


def table(summary: dict, J_hz: float) -> str:
    lines = []
    for cond, e in summary["by_conditions"].items():
        lines.append(f"{cond} conditions (times in us; 1/J = {time_to_us(1.0, J_hz) * 1e3:.2f} ns)")
        head = f"{'L':>4} {'engine':>7} {'T_prop':>9} {'T_star':>17} {HEAD} {'T1 (fit)':>17} {'T2 (fit)':>17}"
        unresolved = {}
        if "T1_typical" in e:
            head += f" {'ln T1_typ':>16}"
        lines.append(head)
        for k, L in enumerate(e["lengths"]):
            lives = cells(e["leakage_lifetime_qubit"][k], e["leakage_lifetime_array"][k], e["removal_efficiency"][k],
                          unit="us")
            row = (f"{L:4d} {e['engines'][k]:>7} {e['T_prop'][k]['value_us']:9.4g} {time_cell(e['T_star'][k], 'us')} "
                   f"{lives} {time_cell(e['T1'][k], 'us')} {time_cell(e['T2'][k], 'us')}")
            unresolved.update({f"{q} at L = {L}": e[q][k] for q in ("T_star", "T1", "T2")})
            if "T1_typical" in e:
                t = e["T1_typical"][k]
                mark = "*" if t["method"] == "log-space" else " "
                row += (f" {pm(t['log_value'], t['log_error'], sep='+-'):>15}{mark}" if t["log_value"] is not None
                        else f" {'not resolved*':>16}")
            lines.append(row)
        lines += reason_lines(unresolved)
        if "xi" in e:
            xi = e["xi"]
            transfer = e["xi_theory_transfer"]
            theory = (f"strong disorder 1/(2 ln(W/J) - 3) = {sig(e['xi_theory_strong'])}; transfer matrix = "
                      + (sig(transfer) if transfer is not None else "none")
                      if "xi_theory_reason" not in e else f"theory: {e['xi_theory_reason']}")
            lines.append(f"xi = {shown(xi['value'], xi['error'], xi.get('reason'), MORE)} sites (fit of ln T1_typ vs L); "
                         f"{theory}" if xi["value"] is not None else f"xi: {not_resolved(xi.get('reason'))}")
            xf = e.get("xi_fit") or {}
            if "fit_lengths" in xf:
                lines.append(f"xi fitted on L = {xf['fit_lengths'][0]}..{xf['fit_lengths'][-1]} "
                             + ("(asymptotic regime L >= 1 + 3 xi)" if xf["asymptotic"] else
                                "(NOT in the asymptotic regime: too few lengths reach L >= 1 + 3 xi; add longer ones)")
                             + f", error: {xf['error_method']}")
                if not xf["asymptotic"]:
                    lines.append("local xi: " + ", ".join(
                        f"L={d['L']}: {d['value']:.3g}" if d["value"] is not None else f"L={d['L']}: -"
                        for d in xf["local_xi"]))
                if "difference_from_transfer" in xf and xf["difference_from_transfer"]["value"] is not None:
                    d = xf["difference_from_transfer"]
                    lines.append(f"xi - transfer matrix = {pm(d['value'], d['error'])} (paired over realizations)")
            if e["floating_point_floor"]["lengths_past_floor"]:
                lines.append(f"* past the floating-point floor (log-space continuation): L = {e['floating_point_floor']['lengths_past_floor']}")
        if "hardware_limits" in e:
            hw = e["hardware_limits"]
            lines.append("hardware limits: " + ", ".join(
                f"{k} = {sig(hw[k]['value_us'], 3)} us" for k in ("T1q", "T2q", "T_leak_own") if hw[k]["value_us"] is not None))
            rp = e["removal_stops_paying"]
            where = (f"at L = {rp['measured_L']}" if rp["measured_L"] is not None else
                     f"not within the lengths run (T_star stays below T1q/2 up to L = {max(e['lengths'])})")
            lines.append(f"leakage removal stops paying (T_star >= T1q/2): {where}; transit estimate L = "
                         f"{sig(rp['transit_estimate_L'], 3)}")
            lines.append("engines: " + "; ".join(
                f"L={L}: " + format_mix(m) for L, m in zip(e["lengths"], e["engine_mix"])))
        if "trajectories" in e:
            lines.append("trajectories, leakage / qubit / coherence start (odds of excited interiors; S: thermal start "
                         "by strata; D: hardware decay integrated out): " + "; ".join(
                             f"L={L}: {nl}/{n}/{nc} (x{r:g}{', S' if s else ''}{', D' if d else ''})"
                             for L, nl, n, nc, r, s, d in zip(
                                 e["lengths"], e.get("leakage_trajectories", e["trajectories"]), e["trajectories"],
                                 e.get("coherence_trajectories", e["trajectories"]), e["leakage_thermal_odds"],
                                 e.get("thermal_strata", [False] * len(e["lengths"])),
                                 e.get("leakage_integrate_decay", [False] * len(e["lengths"])))))
            unresolved = [f"{name} at L={L} from {sig(t * time_to_us(1.0, J_hz), 3)} us ({t:.0f}/J)"
                          for name, c in e.get("curves_resolved", {}).items()
                          if name != "note" for L, t in zip(e["lengths"], c["first_unresolved_J"]) if t is not None]
            if unresolved:
                lines.append("curve points not resolved (NaN in results.nc): " + "; ".join(unresolved))
        lines.append(LEGEND)
        s = e["T_star_slope"]
        us = time_to_us(1.0, J_hz)
        if s["value"] is not None:
            slope = shown(s["value"] * us, None if s["error"] is None else s["error"] * us, remedy=MORE, unit="us")
            lines.append(f"T_star grows by {slope} per site ({pm(s['value'], s['error'])} /J per site)"
                         if not slope.startswith("not resolved") else f"T_star's growth per site: {slope}")
        else:
            lines.append(f"T_star's growth per site: {not_resolved(s.get('reason'))}")
        lines.append("")
    return "\n".join(lines)


def integer_ticks(ax) -> None:
    """Integer ticks only on an axis of lengths L (an array has no fractional sites)."""
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def plot(ds, summary: dict, figdir) -> list:
    """T1, T2, T_star, T_prop vs L (log scale) and ln T1 vs L with the xi fit and theory lines."""
    import matplotlib.pyplot as plt

    us, time_label = time_axis(ds.attrs["time_us_per_J"])  # 1/J -> the figure's time unit (us by default)
    paths = []
    fig, axes = plt.subplots(1, len(ds.conditions), figsize=(5.2 * len(ds.conditions), 4.0), squeeze=False)
    for ax, cond in zip(axes[0], ds.conditions.values):
        run = np.isfinite(ds["leakage_array_mean"].sel(conditions=cond).isel(t=0).values)
        L = ds.L.values
        unresolved = False
        for i, (name, marker) in enumerate((("T_star", "o"), ("T1", "s"), ("T2", "^"))):
            v = ds[f"{name}_J"].sel(conditions=cond).values * us
            e = ds[f"{name}_error_J"].sel(conditions=cond).values * us
            ok = np.isfinite(v)
            color = f"C{i}"
            if ok.any():
                ax.errorbar(L[ok], v[ok], yerr=e[ok], fmt=marker + "-", capsize=2, color=color, label=f"{name} (fit)")
            mark_unresolved(ax, L[run & ~ok], color, level=i)  # ran, not resolved: an x at the axis (reason in summary.json)
            unresolved = unresolved or bool((run & ~ok).any())
        if "leakage_lifetime_array_J" in ds:  # always defined, also where T_star is not resolved
            v = ds["leakage_lifetime_array_J"].sel(conditions=cond).values * us
            e = ds["leakage_lifetime_array_error_J"].sel(conditions=cond).values * us
            ok = np.isfinite(v)
            if ok.any():
                ax.errorbar(L[ok], v[ok], yerr=e[ok], fmt="o--", mfc="none", color="C0", capsize=2,
                            label="tau_leak = int P_star^(L) dt")
        ax.plot(L[run], ds["T_prop_J"].values[run] * us, "k--", label="T_prop")
        if cond == "realistic":  # the hardware limits, as in the paper's Fig. 3d-f
            for key, color, lab in (("T1q_J", "C1", "T1q"), ("T2q_J", "C2", "T2q"), ("T_leak_own_J", "C0", "T1q/2 (|2>)")):
                v = ds.attrs.get(key)
                if isinstance(v, (int, float, np.floating)) and np.isfinite(v):
                    ax.axhline(float(v) * us, color=color, ls=":", lw=1.2, label=f"{lab} (limit)")
        if cond == "ideal":
            lt = ds["log_T1_typical"].values
            ok = np.isfinite(lt) & (lt < 700)
            ax.plot(L[ok], np.exp(lt[ok]) * us, "D:", color="C3", label="T1 typical (branch rates)")
        ax.set_yscale("log")
        ax.set_xlabel("array length L")
        integer_ticks(ax)
        ax.set_ylabel(time_label)
        ax.set_title(f"{cond} conditions")
        handles, labels = ax.get_legend_handles_labels()
        if unresolved:
            handles, labels = handles + [unresolved_handle()], labels + [UNRESOLVED_LABEL]
        ax.legend(handles, labels, fontsize=8)
    fig.tight_layout()
    paths += save_figure(fig, figdir, "decay_times_vs_L")

    if "ideal" in ds.conditions.values:
        paths += _plot_xi(ds, figdir)
    return paths


def _plot_xi(ds, figdir) -> list:
    """ln T1_typ vs L with the fit over its lengths and the theory slopes; the local xi vs L next to it."""
    import matplotlib.pyplot as plt

    has_local = "xi_local" in ds
    fig, axes = plt.subplots(1, 2 if has_local else 1, figsize=(10.4 if has_local else 5.2, 4.0), squeeze=False)
    ax = axes[0, 0]
    L = ds.L.values
    lt, le = ds["log_T1_typical"].values, ds["log_T1_typical_error"].values
    ok = np.isfinite(lt)
    ax.errorbar(L[ok], lt[ok], yerr=le[ok], fmt="o", capsize=2, label="ln T1_typ (per-realization rates)")
    xi = ds.attrs.get("xi")
    theories = [(key, style, ds.attrs.get(key)) for key, style in (("xi_theory_strong", ":"), ("xi_theory_transfer", "--"))]
    theories = [(k, st, float(th)) for k, st, th in theories if isinstance(th, (int, float, np.floating)) and np.isfinite(th)]
    if isinstance(xi, (int, float, np.floating)) and np.isfinite(xi):
        a = float(ds.attrs["xi_intercept"])
        lo = ds.attrs.get("xi_min_length", L.min())
        lo = float(lo) if isinstance(lo, (int, float, np.integer, np.floating)) else float(L.min())
        xx = np.linspace(lo, L[ok].max(), 50)
        err = ds.attrs.get("xi_error")
        err_txt = f" +- {float(err):.2g}" if isinstance(err, (int, float, np.floating)) else ""
        ax.plot(xx, a + xx / xi, "-", label=f"fit L >= {lo:g}: xi = {xi:.3g}{err_txt}")
        for key, style, th in theories:
            ax.plot(xx, a + xx / th, style, label=f"{key.replace('xi_theory_', '')}: xi = {th:.3g}")
    ax.set_xlabel("array length L")
    integer_ticks(ax)
    ax.set_ylabel("ln(T1 J)")
    ax.legend(fontsize=8)
    if has_local:
        ax = axes[0, 1]
        v, e = ds["xi_local"].values, ds["xi_local_error"].values
        ok = np.isfinite(v)
        ax.errorbar(L[ok], v[ok], yerr=e[ok], fmt="s", capsize=2, label="local xi (consecutive lengths)")
        if isinstance(xi, (int, float, np.floating)) and np.isfinite(xi):
            ax.axhline(float(xi), color="C1", label=f"fit: xi = {xi:.3g}")
        for key, style, th in theories:
            ax.axhline(th, color="k", ls=style, lw=1, label=f"{key.replace('xi_theory_', '')}: {th:.3g}")
        ax.set_xlabel("array length L")
        integer_ticks(ax)
        ax.set_ylabel("xi (sites)")
        ax.set_title("local slopes: the asymptotic regime")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, figdir, "localization_length")
