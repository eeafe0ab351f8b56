"""The design study's dataset, table and figure (the front: D vs added error per cycle)."""

from __future__ import annotations

import math

import numpy as np
import xarray as xr

from ...physics.hopping_profile import describe, is_uniform
from ..base import save_figure
from ..common import PLOT_STYLE, UNRESOLVED_LABEL, dataset_attrs, mark_unresolved, pyplot
from ..lifetimes import reason_lines
from ...analysis.numbers import pm, resolution_reason, sig

SCREEN_METHOD = ("D: the qec study's D = sum_k S(k) (tail and jackknife error) from a short branch-estimator run from "
                 "the leakage start (hardware and thermal start sampled); added: exact per-realization qubit rates "
                 "of the N = 1 sector with 1/T1q and 1/(2 T1q) + 1/Tphi composed in, the realization averages of "
                 "w^2 e^{-Gamma_1 t} and w e^{-Gamma_2 t} fitted on the confirmation's grid and window, Pauli twirl "
                 "against the bare transmon; jackknife over realization blocks; common random numbers (one seed)")
CONFIRM_METHOD = ("the qec study's path: realistic trajectories of the three initial states over the confirmation's "
                  "duration, D from S(k), T1 and T2 fitted to <n_1> and 2C, the added Pauli error per cycle")
NOTE = {
    "added": "p_total per cycle with the LRU minus a bare transmon's with the same T1q and Tphi (docs/physics.md §8)",
    "front": "the confirmed points no other confirmed point beats in both D and added p_total",
    "best": "the smallest confirmed D among the confirmed points with added p_total <= the budget (by value)",
    "verdict": "better: D_paper - D_best > 2 paired jackknife errors (the same trajectories in both); else reproduces",
    "profiles": "with more than one hopping profile searched: moves_front, whether a non-uniform point of the "
                "confirmed front is matched by no uniform confirmed point within `sigmas` combined errors in both D "
                "and added p_total (moves_front_by_value: on the front by value); front_by_profile: each profile's "
                "confirmed front and best under the budget; best_difference: uniform's best D minus the profile's; "
                "skipped: the lengths where a profile's couplings are an earlier one's (not screened twice)",
    "disagreement": "|screen - confirmed| / sqrt(error_screen^2 + error_confirmed^2); the confirmation's first "
                    "trajectories are the screen's, so this is conservative for D",
    "unresolved": "a null number has its reason beside it and what would give it: 'reason' in a {value, error} "
                  "with a null value ('error_reason': a null error), T1_reason and T2_reason beside a null T1_us, "
                  "T2_us; disagreement: D_reason, added_reason (agree is then null, not compared, unless the other "
                  "distance is over the flag); budget.reason; each point of the screen's front: "
                  "confirmed, and not_confirmed_reason where it is not",
}


def misleads(x: dict, flag: float) -> str:
    """One line: where the screen of confirmed point ``x`` misleads (beyond ``flag`` combined errors)."""
    parts = []
    for key, name in (("D", "D"), ("added", "added p_total")):
        z = x["disagreement"][key]
        if z is None or not z > flag:
            continue
        s = x["screen"]["D"] if key == "D" else x["screen"]["added"]["p_total"]
        c = x["confirm"]["D"] if key == "D" else x["confirm"]["added"]["p_total"]
        more = "overestimates" if s["value"] > c["value"] else "underestimates"
        parts.append(f"the screen {more} {name}: {pm(s['value'], s['error'])} vs confirmed "
                     f"{pm(c['value'], c['error'])} ({z:.1f} sigma)")
    return f"{x['label']}: " + "; ".join(parts)


def _n(x) -> float:
    return math.nan if x is None else float(x)


def dataset(cfg, paper_spec, cands, screen, front, conf, summary) -> xr.Dataset:
    """One row per candidate: its parameters, the screen's numbers, the confirmation's where it ran."""
    n = len(cands)
    nan = np.full(n, np.nan)

    def col(f):
        return np.array([f(i) for i in range(n)], dtype=float)

    data = {
        "D_screen": (("candidate",), col(lambda i: screen[i]["D"]["value"]), {"units": "cycles"}),
        "D_screen_error": (("candidate",), col(lambda i: screen[i]["D"]["error"]), {"units": "cycles"}),
        "added_screen": (("candidate",), col(lambda i: screen[i]["qubit"]["added"]["p_total"]["value"]),
                         {"units": "1 per cycle", "long_name": "added p_total, screen"}),
        "added_screen_error": (("candidate",), col(lambda i: screen[i]["qubit"]["added"]["p_total"]["error"]),
                               {"units": "1 per cycle"}),
        "added_eps1_screen": (("candidate",), col(lambda i: screen[i]["qubit"]["added"]["eps_1"]["value"]),
                              {"units": "1 per cycle"}),
        "on_screen_front": (("candidate",), np.isin(np.arange(n), front).astype(np.int8), {"units": "1"}),
        "confirmed": (("candidate",), np.isin(np.arange(n), list(conf)).astype(np.int8), {"units": "1"}),
    }
    for name, get in (("D_confirm", lambda c: c["D"]["value"]), ("D_confirm_error", lambda c: c["D"]["error"]),
                      ("added_confirm", lambda c: c["added"]["p_total"]["value"]),
                      ("added_confirm_error", lambda c: c["added"]["p_total"]["error"]),
                      ("added_eps1_confirm", lambda c: c["added"]["eps_1"]["value"])):
        v = nan.copy()
        for i, c in conf.items():
            v[i] = get(c)
        data[name] = (("candidate",), v, {"units": "cycles" if name.startswith("D") else "1 per cycle"})
    coords = {
        "candidate": ("candidate", np.arange(n)),
        "L": ("candidate", np.array([c["L"] for c in cands])),
        "W_MHz": ("candidate", np.array([c["W_MHz"] for c in cands]), {"units": "MHz"}),
        "J_MHz": ("candidate", np.array([c["J_MHz"] for c in cands]), {"units": "MHz"}),
        "Ubar_MHz": ("candidate", np.array([c["Ubar_MHz"] for c in cands]), {"units": "MHz"}),
        "pattern": ("candidate", np.array([c["pattern"] for c in cands], dtype=str)),
        "reset": ("candidate", np.array([c["reset"] for c in cands], dtype=str)),
        "rate_factor": ("candidate", np.array([c["rate_factor"] for c in cands])),
        "rate_J": ("candidate", np.array([c["rate_J"] for c in cands]), {"units": "J of the candidate"}),
        "rate_MHz": ("candidate", np.array([c["rate_MHz"] for c in cands]), {"units": "MHz"}),
        "paper": ("candidate", np.array([c["paper"] for c in cands], dtype=np.int8)),
        "hopping_profile": ("candidate", np.array([describe(c["hopping_profile"]) for c in cands], dtype=str)),
    }
    best = summary["best"]
    attrs = dataset_attrs(paper_spec, cfg, conditions=summary["conditions"], cycle_time_us=summary["cycle_time"]["value_us"],
                          candidates=n, budget=summary["budget"]["added_p_total"] if summary["budget"]["added_p_total"]
                          is not None else math.nan, best=-1 if best is None else best["index"],
                          verdict=summary["verdict"]["text"])
    return xr.Dataset(data, coords=coords, attrs=attrs)


def table(s: dict) -> str:
    """The printed report: the confirmed points (screen vs confirmation), the best, the verdict."""
    p = s["parameters"]
    w = max([50] + [len(x["label"]) for x in s["confirmation"]["points"] + s["screen"]["front"]])

    def us(v):  # a time in us: one number (4 digits), per-site values, or none (ideal)
        return f"{v:.4g}" if isinstance(v, (int, float)) else str(v)

    lines = [f"design: {s['candidates']} candidates screened for T1q = {us(p['T1q_us'])} us, "
             f"Tphi = {us(p['Tphi_us'])} us, "
             f"{p['temperature_K'] * 1e3:g} mK, t_c = {s['cycle_time']['value_us']:g} us; "
             f"{len(s['screen']['front'])} on the screen's front, {s['validation']['confirmed']} confirmed "
             f"({s['confirmation']['trajectories']} trajectories each)", "",
             f"{'candidate':<{w + 2}} {'D screen':>15} {'D confirmed':>15} {'added screen':>19} {'added confirmed':>19}  ok"]
    front = {x["index"] for x in s["front"]}
    gaps = {}  # label: {"reason"}, listed under the table
    for x in sorted(s["confirmation"]["points"], key=lambda x: x["confirm"]["D"]["value"] or math.inf):
        sc, cf = x["screen"], x["confirm"]
        mark = ("*" if x["index"] in front else " ") + ("P" if x["paper"] else " ")
        z = x["disagreement"]
        unknown = [z.get(f"{k}_reason") for k in ("D", "added") if z.get(f"{k}_reason")]
        ok = "?*" if unknown else "yes" if x["agree"] else "NO"
        lines.append(f"{mark} {x['label']:<{w}} {_pm(sc['D'], 3):>15} {_pm(cf['D'], 3):>15} "
                     f"{_pm(sc['added']['p_total'], 5):>19} {_pm(cf['added']['p_total'], 5):>19}  {ok}")
        for who, side in (("screen", sc), ("confirmed", cf)):
            gaps[f"{x['label']}: {who} D"] = side["D"]
            gaps[f"{x['label']}: {who} added"] = side["added"]["p_total"]
            for q in ("T1", "T2"):
                gaps[f"{x['label']}: {who} {q}"] = {"reason": side.get(f"{q}_reason")}
        for r in unknown:
            gaps[f"{x['label']}: ok"] = {"reason": r}
    for f in s["screen"]["front"]:  # the screen's front points without a confirmation: said, with the reason
        if f.get("confirmed", True):
            continue
        lines.append(f"{'':2} {f['label']:<{w}} {_pm(f['D'], 3):>15} {'not confirmed*':>15} "
                     f"{_pm(f['added']['p_total'], 5):>19} {'not confirmed*':>19}")
        gaps[f"{f['label']}"] = {"reason": f["not_confirmed_reason"]}
    b = s["budget"]
    budget = (sig(b["added_p_total"]) if b["added_p_total"] is not None else
              "not resolved*" if b.get("reason") else "-")
    if b.get("reason"):
        gaps["budget"] = b
    lines += ["", "* on the confirmed front, P the paper's working point; D in cycles, added = p_total per cycle "
              "added by the LRU", f"budget: added p_total <= {budget} ({b['source']})",
              f"best under the budget: {s['best']['label'] if s['best'] else 'none'}",
              f"verdict: {'not resolved* (the budget is not)' if s['verdict'].get('reason') else s['verdict']['text']}"]
    if s["verdict"].get("at_range_edge"):
        lines.append(f"  the best lies on the edge of the searched range ({', '.join(s['verdict']['at_range_edge'])}): "
                     "a wider range may find more")
    known = [x for x in s["confirmation"]["points"]
             if not any(x["disagreement"].get(f"{k}_reason") for k in ("D", "added"))]
    unknown = len(s["confirmation"]["points"]) - len(known)
    if unknown:
        lines.append(f"screen vs confirmation: {sum(x['agree'] for x in known)} of {len(known)} compared agree within "
                     f"{s['validation']['flag_sigmas']:g} errors; {unknown} could not be compared (?* above)")
    else:
        lines.append(f"screen vs confirmation: {s['validation']['agree']} of {s['validation']['confirmed']} agree "
                     f"within {s['validation']['flag_sigmas']:g} errors")
    lines += [f"  screen misleads: {m}" for m in s["validation"]["screen_misleads"]]
    if "profiles" in s and len(s["profiles"]["searched"]) > 1:
        lines.append(s["profiles"]["text"])
    gaps = reason_lines(gaps)
    if gaps:
        lines += ["", "not resolved / not confirmed (* above), and what would give it:"] + gaps
    return "\n".join(lines) + "\n"


def _pm(v: dict, digits: int | None = None) -> str:
    """A cell: the value to its error's digits (lru_mps.analysis.numbers.pm), 'not resolved*' where it is not there or
    its error is half of it or more (the reason listed under the table); ``digits``: unused (the error decides)."""
    if v["value"] is None and v.get("reason"):
        return "not resolved*"
    if v["value"] is None:
        return "-"
    if resolution_reason(v["value"], v.get("error")):
        return "not resolved*"
    return pm(v["value"], v.get("error"), sep="+-")


def plot(ds, summary: dict, figdir) -> list:
    """The front: D vs added p_total per cycle; all screened candidates grey, the screen's front outlined, the
    confirmed points with error bars, the confirmed front joined, the paper's point and the best marked.  The
    legend and the note on unconfirmed front points sit beside the axes; each confirmed point's label where it
    overlaps no other (:func:`lru_mps.studies.figure_layout.label_points`)."""
    from matplotlib.ticker import FuncFormatter

    from ..figure_layout import label_points

    plt = pyplot()
    with plt.rc_context(PLOT_STYLE):
        fig, ax = plt.subplots(figsize=(8.2, 4.6))
        xa, ya = ds["added_screen"].values, ds["D_screen"].values
        ax.plot(xa, ya, ".", color="0.65", ms=4, label=f"screened ({ds.sizes['candidate']})")
        f = ds["on_screen_front"].values.astype(bool)
        ax.plot(xa[f], ya[f], "o", mfc="none", mec="0.3", ms=6, label="screen's front")
        c = ds["confirmed"].values.astype(bool)
        missing = int(np.count_nonzero(f & ~c))
        if missing:  # the screen's front points without a confirmation: an x over each (the reason in the JSON)
            ax.plot(xa[f & ~c], ya[f & ~c], "x", color="C1", ms=7, mew=1.5, label="screen's front, not confirmed")
        ac, dc = ds["added_confirm"].values, ds["D_confirm"].values
        no_a, no_d = c & ~np.isfinite(ac), c & ~np.isfinite(dc)
        if (no_a | no_d).any():  # confirmed, a number not resolved: an x at the axis of the number it has
            mark_unresolved(ax, dc[no_a & ~no_d], "C0", axis="y")
            mark_unresolved(ax, ac[no_d & ~no_a], "C0")
            mark_unresolved(ax, xa[no_a & no_d], "C0")
            ax.plot([], [], ls="none", marker="x", color="C0", label="confirmation " + UNRESOLVED_LABEL)
        ax.errorbar(ac[c], dc[c], xerr=ds["added_confirm_error"].values[c], yerr=ds["D_confirm_error"].values[c],
                    fmt="s", color="C0", ms=4, capsize=2, label="confirmed (jackknife errors)")
        if "hopping_profile" in ds.coords:  # (results of runs before the profiles have no such coordinate)
            nu = c & (ds["hopping_profile"].values != "uniform")
            if nu.any():
                ax.plot(ac[nu], dc[nu], "^", mfc="none", mec="C4", ms=9, mew=1.2,
                        label="hopping profile not uniform")
        idx = [x["index"] for x in summary["front"]]
        if idx:
            order = sorted(idx, key=lambda i: ac[i])
            ax.plot(ac[order], dc[order], "-", color="C0", lw=1, label="confirmed front")
        pp = summary["paper_point"]["index"]
        ax.plot([ac[pp]], [dc[pp]], "*", color="C3", ms=13, mec="k", mew=0.5, label="paper's working point")
        if summary["best"] is not None and summary["best"]["index"] != pp:
            b = summary["best"]["index"]
            ax.plot([ac[b]], [dc[b]], "D", color="C2", ms=8, mec="k", mew=0.5, label="best under the budget")
        if summary["budget"]["added_p_total"] is not None:
            ax.axvline(summary["budget"]["added_p_total"], color="C3", ls=":", lw=1, label="budget")
        ax.set_yscale("log")
        ax.set_xscale("log")  # (a non-positive added error, screen noise, is not drawn)

        def plain(v, _):  # readable log axes: plain numbers, the minor ticks at 2 and 5 only
            lead = f"{v:.0e}"[0]
            return f"{v:.3g}" if lead in "125" else ""

        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(FuncFormatter(plain))
            axis.set_minor_formatter(FuncFormatter(plain))
        ax.set_xlabel("qubit error per cycle added by the LRU (Pauli $p$)")
        ax.set_ylabel("mean leakage duration $D$ (cycles)")
        ax.set_title(f"LRU design front, t_c = {summary['cycle_time']['value_us']:g} us, {summary['conditions']}")
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False, fontsize=7, borderaxespad=0.0)
        if missing:  # beside the axes, under the legend
            ax.text(1.02, 0.0, f"{missing} point{'s' if missing > 1 else ''} of the screen's front not confirmed:\n"
                    f"at most confirm_max = {summary['confirmation'].get('confirm_max', '?')} front points\nare "
                    "(raise confirm_max; the reason\nin summary.json)", transform=ax.transAxes, fontsize=7,
                    color="0.3", va="bottom", ha="left")
        fig.tight_layout()
        points = summary["confirmation"]["points"]  # which design each confirmed point is
        label_points(ax, [(ac[x["index"]], dc[x["index"]]) for x in points], [point_label(x) for x in points])
        return save_figure(fig, figdir, "design_front")


def point_label(x: dict) -> str:
    """A design point's short label on the figure: L, W, J, the reset and its rate (the table has the full one)."""
    reset = {"periodic": "per", "random": "rand", "dissipation": "diss"}.get(x["reset"], x["reset"])
    prof = x.get("hopping_profile", "uniform")
    prof = "" if is_uniform(prof) else f" {describe(prof)}"
    return f"L{x['L']} W{x['W_MHz']:g} J{x['J_MHz']:g}{prof} {reset} {x['rate_J']:.2g}J"
