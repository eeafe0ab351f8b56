"""The qec study's table, figure and ``leakage_model.json`` (from its summary and dataset).

``leakage_model.json`` is what a leakage-aware circuit simulator reads: one
JSON object, format ``lru-mps-leakage-model`` version 1,

``cycle_time_s``, ``cycle_time_us``   the cycle t_c;
``leakage_survival``    {"cycles": [1..K], "mean", "sem"}: S(k), the
                        probability that the coding qubit is still leaked at
                        boundary k after a leakage event at the start of
                        cycle 0 (S(0) = 1); ``tail``: S(K + j) ~ S_end
                        ratio^j beyond K ("method": "fit" | "bound" | "lower
                        bound");
``mean_leakage_cycles`` {"value", "error"}: D = sum_{k>=1} S(k) (tail
                        included), the mean leaked boundaries per event;
``seepage_per_cycle``   {"cycles", "value", "error"}: 1 - S(k)/S(k-1);
``steady_state_leakage`` {"injection", "value", "error", ...}: p D/(1 + p D);
                        ``direct_simulation``: null, or {"points": [{"p",
                        "value", "error", "linear_response", ...}], ...}: the
                        steady state with the injection maps simulated
                        (lru_mps.studies.qec.direct);
``qubit_error_per_cycle`` {"lru", "bare", "added"}: each {"eps_1", "p_x",
                        "p_y", "p_z", "p_total"} as {"value", "error"}, the
                        Pauli-twirled error of one cycle (``error_model``):
                        lru from the qubit's channel over one cycle (its
                        population and coherence at t_c);
``parameters``          the model it was computed for, and ``source``.

Probabilities are per cycle; times in seconds or microseconds as the key
says; null where a number is not resolved.
"""

from __future__ import annotations

import json

import numpy as np

from ...analysis.numbers import pm, resolution_reason, sig
from ..base import save_figure
from ..common import PLOT_STYLE, UNRESOLVED_LABEL, mark_unresolved, pyplot, unresolved_handle
from ..lifetimes import reason_lines
from .unresolved import seepage_line

ERROR_MODEL = ("Pauli twirl of the qubit's channel over one cycle t_c (Ghosh, Fowler, Geller, PRA 86, 062318 (2012)): "
               "p_x = p_y = eps_1/4, p_z = (1 - c)/2 - eps_1/4, p_total = p_x + p_y + p_z, with eps_1 the relaxation "
               "and c the coherence factor over t_c; lru: eps_1 = 1 - <n_1>(t_c) and c = 2C(t_c) read off the study's "
               "curves (the early one-time loss included: hybridization, fast-decaying realizations), jackknife "
               "errors; bare: eps_1 = 1 - exp(-t_c/T1q), c = exp(-t_c/T2), 1/T2 = 1/(2 T1q) + 1/Tphi; added = lru - "
               "bare; lru_T1_T2_fit: the same from fitted T1, T2 (fits A e^{-t/tau}, docs/physics.md §8), the "
               "late-time rates without the early loss 1 - A")

FORMAT = "lru-mps-leakage-model"
VERSION = 1


def leakage_model(summary: dict) -> dict:
    """The ``leakage_model.json`` object of a qec summary (module docstring)."""
    e = summary["error_per_cycle"]
    keys = ("eps_1", "p_x", "p_y", "p_z", "p_total")

    def probs(block):
        return None if block is None else {k: block[k] for k in keys}

    ct = summary["cycle_time"]
    return {
        "format": FORMAT,
        "version": VERSION,
        "description": "leakage of a coding transmon with a passive leakage removal unit, per QEC cycle: after a "
                       "leakage event at the start of cycle 0, S(k) = P(still leaked at cycle boundary k); "
                       "D = sum_{k>=1} S(k); seepage 1 - S(k)/S(k-1); the qubit's Pauli error per cycle",
        "cycle_time_s": float(f"{ct['value_us'] * 1e-6:.12g}"),
        "cycle_time_us": ct["value_us"],
        "leakage_survival": {k: summary["leakage_survival"][k] for k in ("cycles", "mean", "sem", "tail", "K_reached")},
        "mean_leakage_cycles": {k: summary["mean_leakage_cycles"][k]
                                for k in ("value", "error", "tail_method", "reason", "error_reason")
                                if k in summary["mean_leakage_cycles"]},
        "seepage_per_cycle": summary["seepage_per_cycle"],
        "steady_state_leakage": {k: summary["steady_state_leakage"][k]
                                 for k in ("injection", "value", "error", "method", "direct_simulation", "reason",
                                           "error_reason") if k in summary["steady_state_leakage"]},
        "qubit_error_per_cycle": {"lru": probs(e["lru"]), "bare": probs(e["bare"]), "added": probs(e["added"]),
                                  "method": e.get("method"),
                                  **{k: e[k] for k in ("lru_reason", "added_reason") if k in e}},
        "error_model": ERROR_MODEL,
        "parameters": {**summary["parameters"], "conditions": summary["conditions"]},
        "source": "lru-mps study qec",
    }


def leakage_model_json(summary: dict) -> str:
    return json.dumps(leakage_model(summary), indent=2) + "\n"


def _pm(x: dict | None, fmt: str | None = None) -> str:
    """A number of the summary to its error's digits (lru_mps.analysis.numbers.pm; '?': no error, the reason under
    the table); ``fmt``: unused (the error decides the digits)."""
    if x is not None and x.get("value") is None and x.get("reason"):
        return "not resolved*"
    if x is None or x.get("value") is None:
        return "-"
    if x.get("error") is None:
        return f"{sig(x['value'])} +- ?"
    return pm(x["value"], x["error"])


def table(summary: dict) -> str:
    p = summary["parameters"]
    ct = summary["cycle_time"]
    ls = summary["leakage_survival"]
    lines = [f"qec: L = {p['L']}, {p['reset']} reset, {summary['conditions']} conditions, {summary['evolutions']} "
             f"trajectories x 3 initial states; cycle t_c = {ct['value_us']:.4g} us = {ct['value_J']:.4g}/J, "
             f"K = {summary['cycles']} cycles ({summary['points_per_cycle']} points per cycle)", "",
             f"{'k':>4} {'S(k) = P_star^(1)(k t_c)':>26} {'seepage 1-S(k)/S(k-1)':>24}"]
    K = len(ls["cycles"])
    seep = summary["seepage_per_cycle"]
    negative = {i for i, v in enumerate(seep["value"]) if v is not None and v < 0}  # shown, with their errors
    shown = sorted(set(range(min(K, 10))) | set(range(9, K, 5)) | {K - 1} | negative)
    S0 = ls["S0"]
    lines.append(f"{0:4d} {_pm({'value': S0['mean'], 'error': S0['sem']}) if S0['sem'] else sig(S0['mean']):>25}  "
                 f"{'':>24}")
    loose = []  # the S(k) whose error is half of it or more: not resolved
    for i in shown:
        if seep["value"][i] is None:
            s_ = "not resolved*" if (seep.get("reasons") or [None] * K)[i] else "-"
        else:
            s_ = _pm({"value": seep["value"][i], "error": seep["error"][i]})
        star = "*" if ls.get("resolved") is not None and not ls["resolved"][i] else " "
        m, e = ls["mean"][i], ls["sem"][i]
        if e is not None and resolution_reason(m, e):
            loose.append(ls["cycles"][i])
            cell, star = "not resolved", "*"
        else:
            cell = _pm({"value": m, "error": e})
        lines.append(f"{ls['cycles'][i]:4d} {cell:>25}{star} {s_:>24}")
    if loose:
        lines.append(f"* S(k) at k = {', '.join(map(str, loose))}: not resolved: its error is half its value or more "
                     "(values in summary.json); more trajectories (--trajectories) resolve it")
    gap = seepage_line(summary, shown)
    if gap:
        lines.append(gap)
    rise = ls.get("rises")
    if rise is not None:
        if rise["largest_rise"] is None:
            lines.append("S(k) falls at every boundary")
        else:
            z = "inf" if rise["sigmas"] is None else f"{rise['sigmas']:.2g}"
            lines.append(f"S(k) rises at most {z} sigma: S({rise['cycle']}) - S({rise['cycle'] - 1}) = "
                         f"{rise['largest_rise']:.2g} +- {rise['error']:.2g} (the same rows' difference; a rise "
                         "needs leakage back from the array)")
    reach = (f"S(K) < {ls['threshold']:g} (first at k = {ls['first_cycle_below']})" if ls["K_reached"] else
             f"S(K) = {ls['mean'][-1]:.3g} >= {ls['threshold']:g}: K too short, the tail is extrapolated")
    D = summary["mean_leakage_cycles"]
    ss = summary["steady_state_leakage"]
    tail = ls["tail"]
    start = {"fit": "from the measured S(K), at the rate of the tail fit", "bound": "an upper bound: the leakage "
             "left anywhere at K, at 2/T1q", "lower bound": "none: no tail fitted (a lower bound)"}.get(tail["method"],
                                                                                            tail["method"])
    lines += ["", reach + f"; beyond K: S(K+j) ~ {sig(tail['S_end'], 3)} x {sig(tail['ratio'], 4)}^j ({start})",
              f"mean leakage duration D = sum_k S(k) = {_pm(D)} cycles (tail {sig(D['tail'], 2)}, {D['tail_method']})"]
    t1 = summary.get("leakage_lifetime_qubit")
    if t1 is not None and t1.get("value_us") is not None:
        lines.append(f"  (leakage lifetime of the qubit tau_1 = {pm(t1['value_us'], t1['error_us'])} us = "
                     f"{sig(t1['value_cycles'])} cycles)")
    lines.append(f"steady-state leakage at p = {ss['injection']:g} per cycle: p D/(1 + p D) = {_pm(ss)} "
                 "(isolated events)")
    lines += _direct_table(ss)
    e = summary["error_per_cycle"]
    lines += ["", "error per cycle (Pauli twirl of the qubit's channel over one cycle: 1 - <n_1>(t_c) and 2C(t_c) "
              "read off the curves, the early loss included):",
              f"{'':>8} {'<n_1>(t_c)':>22} {'2C(t_c)':>22} {'eps_1':>22} {'p_x = p_y':>22} {'p_z':>22} {'p_total':>22}"]
    flagged = []  # the probabilities outside [0, 1] by more than their errors
    for name in ("lru", "bare", "added"):
        row = e[name]
        if row is None:
            lines.append(f"{name:>8} (not resolved{'*' if e.get(name + '_reason') else ''})")
            continue
        if name == "lru":
            cells = [_pm(row["population_at_cycle"], ".4f"), _pm(row["coherence_at_cycle"], ".4f")]
        elif name == "bare":
            cells = [f"{1 - row['eps_1']['value']:.4f}", f"{1 - 2 * (row['p_z']['value'] + row['p_x']['value']):.4f}"]
        else:
            cells = ["", ""]
        lines.append(f"{name:>8} " + " ".join(f"{c:>22}" for c in cells) + " "
                     + " ".join(f"{_pm(row[q], '.3e') + ('!' if row[q].get('flags') else ''):>22}"
                                for q in ("eps_1", "p_x", "p_z", "p_total")))
        flagged += [f"! {name} {q}: {_pm(row[q])}: {'; '.join(row[q]['flags'])}" for q in ("eps_1", "p_x", "p_z",
                                                                                          "p_total")
                    if row[q].get("flags")]
    lines += flagged
    fit, fit_added = e.get("lru_T1_T2_fit"), e.get("added_T1_T2_fit")
    if fit is not None:
        def tcell(x):
            if x is None or x.get("value_us") is None:
                return "-"
            return f"{pm(x['value_us'], x['error_us'])} us"

        amp = "" if fit["T1"].get("amplitude") is None or fit["T2"].get("amplitude") is None else (
            f", amplitudes A {fit['T1']['amplitude']:.3f} and {fit['T2']['amplitude']:.3f}")
        lines += [f"  not the answer: from the fitted T1 = {tcell(fit['T1'])}, T2 = {tcell(fit['T2'])}{amp} (late-time "
                  f"rates; the early loss 1 - A is not in them): eps_1 = {_pm(fit['eps_1'], '.3e')}, p_total = "
                  f"{_pm(fit['p_total'], '.3e')} (added {_pm(fit_added['p_total'], '.3e')})"]
    elif e.get("lru_T1_T2_fit_reason"):
        lines.append("  not the answer, from the fitted T1 and T2: not resolved*")
    gaps = reason_lines(reasons_of(summary))
    if gaps:
        lines += [""] + gaps
    return "\n".join(lines) + "\n"


def reasons_of(summary: dict) -> dict:
    """{label: {"reason": ...}} of the summary's null numbers other than the seepage (its own line), for
    :func:`lru_mps.studies.lifetimes.reason_lines`."""
    e = summary["error_per_cycle"]
    ls = summary["leakage_survival"]
    ss = summary["steady_state_leakage"]
    D = summary["mean_leakage_cycles"]
    out = {"fitted T1": summary.get("T1_reason"), "fitted T2": summary.get("T2_reason"),
           "the error of S(k) (?)": ls.get("sem_reason"),
           "S(k) marked *": ls.get("resolved_reason"),
           "mean leakage duration D": D.get("reason"), "the error of D (?)": D.get("error_reason"),
           "steady-state leakage": ss.get("reason"), "the error of the steady-state leakage (?)": ss.get("error_reason"),
           "error per cycle with the LRU": e.get("lru_reason"), "added error per cycle": e.get("added_reason"),
           "error per cycle from the fitted T1 and T2": e.get("lru_T1_T2_fit_reason")}
    for name in ("lru", "added"):
        for q, x in (e.get(name) or {}).items():
            if isinstance(x, dict) and x.get("error_reason"):
                out[f"the error of {name} {q} (?)"] = x["error_reason"]
    d = ss.get("direct_simulation")
    if d is not None:
        why = [x.get("error_reason") or x.get("ratio_error_reason") for x in d["points"]]
        why += [x.get("error_reason") for x in d.get("D_reference", {}).values() if isinstance(x, dict)]
        why = [w for w in why if w]
        if why:
            out["the errors of the direct simulation (?)"] = why[0]
    return {k: {"reason": v} for k, v in out.items() if v}


def _direct_table(ss: dict) -> list[str]:
    d = ss.get("direct_simulation")
    if d is None:
        return [f"  {ss['note']}"]
    D0, Dt = d["D_reference"]["cold"], d["D_reference"]["thermal"]
    lines = [f"direct simulation (Lindblad reference, injection maps at every boundary; P_star^(1) just before the "
             f"map, steady state; {d['realizations']} realizations; the same reference's D0 = {_pm(D0)} with the "
             f"array at 0 K, {_pm(Dt)} thermal):",
             f"{'p':>8} {'direct':>22} {'p D/(1+pD), study D':>26} {'p D0/(1+pD0), same real.':>26} "
             f"{'direct / p D0/(1+pD0)':>24} {'cycles':>7}"]
    for x in d["points"]:
        lr = {"value": x["linear_response"], "error": x["linear_response_error"]}
        ratio = {"value": x["ratio"], "error": x["ratio_error"]}
        lines.append(f"{x['p']:8.3g} {_pm(x, '.4e'):>22} {_pm(lr, '.4e'):>26} {sig(x['linear_response_reference']):>26} "
                     f"{_pm(ratio, '.4f'):>24} {x['cycles']:7d}{'' if x['converged'] else ' (not converged)'}")
    return lines


def plot_direct(ax, summary: dict) -> None:
    """(d) the direct steady-state leakage against p with the linear responses, log-log."""
    ss = summary["steady_state_leakage"]
    d = ss.get("direct_simulation")
    ax.set_title("(d) steady-state leakage", loc="left")
    ax.set_xlabel(r"leakage events per cycle $p$")
    ax.set_ylabel(r"$P_\star^{(1)}$ at a boundary")
    if d is None:
        ax.text(0.5, 0.5, "direct simulation\nnot computed", ha="center", va="center", transform=ax.transAxes)
        return
    pts = d["points"]
    p = np.array([x["p"] for x in pts])
    val = np.array([x["value"] for x in pts], dtype=float)
    err = np.array([x["error"] or 0.0 for x in pts], dtype=float)
    lr = np.array([x["linear_response"] or np.nan for x in pts], dtype=float)
    lr0 = np.array([x["linear_response_reference"] for x in pts], dtype=float)
    ax.errorbar(p, val, yerr=err, fmt="o", ms=4, color="k", capsize=2, lw=0.8,
                label=f"direct (maps, {d['realizations']} realizations)")
    ax.plot(p, lr, "C0-", lw=1.0, label=r"$pD/(1+pD)$, study's $D$")
    ax.plot(p, lr0, "C3--", lw=1.0, label=r"$pD_0/(1+pD_0)$, same realizations")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    inset = ax.inset_axes([0.58, 0.1, 0.38, 0.3])
    ratio = np.array([x["ratio"] for x in pts], dtype=float)
    inset.errorbar(p, ratio, yerr=[x["ratio_error"] or 0.0 for x in pts], fmt="o-", ms=2, color="C3", lw=0.8)
    inset.axhline(1.0, color="0.5", lw=0.6)
    inset.set_xscale("log")
    inset.tick_params(labelsize=6)
    inset.set_title(r"direct / $pD_0/(1+pD_0)$", fontsize=6)


def plot(ds, summary: dict, figdir) -> list:
    """(a) S(k) and P_star^(1)(t), P_star^(L)(t) on a log scale, (b) the seepage per cycle, (c) the error per cycle,
    (d) the steady-state leakage, direct against linear response."""
    plt = pyplot()
    t_c = float(ds.attrs["cycle_time_J"])
    k = ds["cycle"].values
    with plt.rc_context(PLOT_STYLE):
        fig, axes = plt.subplots(1, 4, figsize=(18, 3.8))
        ax = axes[0]
        x = ds["time_J"].values / t_c
        w = float(ds["leakage_site1_mean"].values[0])  # the leakage rows' mean weight: the curves as ratios, as S(k)
        for obs, c, lab in (("leakage_site1", "C0", r"$P_\star^{(1)}(t)$"), ("leakage_array", "C1", r"$P_\star^{(L)}(t)$")):
            y = ds[f"{obs}_mean"].values / (w if w > 0 else 1.0)
            ax.plot(x, np.where(y > 0, y, np.nan), color=c, lw=1.0, alpha=0.7, label=lab)
        S, e = ds["S_mean"].values, ds["S_sem"].values
        ok = S > 0
        ax.errorbar(k[ok], S[ok], yerr=np.nan_to_num(e[ok]), fmt="o", ms=3, color="k", capsize=2, lw=0.8,
                    label=r"$S(k) = P_\star^{(1)}(k t_c)$")
        if (~ok).any():  # S(k) = 0 (no leaked row left) has no place on a log axis: an x at the axis
            mark_unresolved(ax, k[~ok], "k")
            ax.plot([], [], ls="none", marker="x", color="k", label=r"$S(k) = 0$: no leaked row left")
        tail = summary["leakage_survival"]["tail"]
        if tail["S_end"] > 0 and tail["ratio"] > 0:
            j = np.arange(0, max(6, len(k) // 4))
            ax.plot(k[-1] + j, tail["S_end"] * tail["ratio"] ** j, "k--", lw=0.9, label=f"tail ({tail['method']})")
        ax.axhline(summary["leakage_survival"]["threshold"], color="0.5", ls=":", lw=0.9)
        ax.set_yscale("log")
        ax.set_xlabel(r"cycle $k$ ($t / t_c$)")
        ax.set_ylabel("leakage")
        D = summary["mean_leakage_cycles"]
        ax.set_title(f"(a) survival, D = {D['value']:.3g} cycles" if D["value"] is not None else
                     "(a) survival, D not resolved (reason in summary.json)", loc="left")
        ax.legend(fontsize=7)
        ax = axes[1]
        sp, se = ds["seepage"].values, ds["seepage_error"].values
        ok = np.isfinite(sp)
        ax.errorbar(k[ok], sp[ok], yerr=np.nan_to_num(se[ok]), fmt="o", ms=3, color="C2", capsize=2, lw=0.8,
                    label="resolved")
        gap = ~ok & (k >= 1)  # S(k-1) not resolved: the ratio is noise (the reason in summary.json)
        mark_unresolved(ax, k[gap], "C2")
        ax.set_ylim(-0.1, 1.05)
        if gap.any():
            ax.legend(handles=[*ax.get_legend_handles_labels()[0], unresolved_handle()],
                      labels=["resolved", UNRESOLVED_LABEL], fontsize=7, loc="upper right")
        ax.set_xlabel(r"cycle $k$")
        ax.set_ylabel(r"seepage $1 - S(k)/S(k-1)$")
        ax.set_title("(b) seepage per cycle", loc="left")
        ax = axes[2]
        e = summary["error_per_cycle"]
        names = ("eps_1", "p_x", "p_z", "p_total")
        xs = np.arange(len(names))
        for off, (who, c) in zip((-0.2, 0.2), (("bare", "0.6"), ("lru", "C3"))):
            row = e[who]
            if row is None:  # said, not dropped
                ax.text(0.5, 0.6, f"{'bare transmon' if who == 'bare' else 'with LRU'}: not resolved\n"
                        "(reason in summary.json)", ha="center", va="center", transform=ax.transAxes, fontsize=8,
                        color=c)
                continue
            v = [row[q]["value"] or 0.0 for q in names]
            err = [row[q]["error"] or 0.0 for q in names]
            ax.bar(xs + off, v, width=0.4, yerr=err, color=c, capsize=2, label="bare transmon" if who == "bare" else "with LRU")
        ax.set_xticks(xs, [r"$\epsilon_1$", r"$p_x = p_y$", r"$p_z$", r"$p$"])
        ax.set_ylabel("probability per cycle")
        ax.set_title(f"(c) error per cycle (channel over t_c = {summary['cycle_time']['value_us']:.3g} us)", loc="left")
        ax.legend(fontsize=7)
        plot_direct(axes[3], summary)
        fig.tight_layout()
        return save_figure(fig, figdir, "qec_leakage")
