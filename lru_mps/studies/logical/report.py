"""The logical study's dataset, table and figures (from its summary).

Figures (``logical.png``): (a) eps per cycle against the distance for each
kind (log scale) at the study's leakage rate, (b) eps against the leakage
rate at the sweep distance with the break-even rate, (c) the survival S(k)
that went into each kind (the array's measured S(k) with its errors and the
model's prod (1 - r_j)).
"""

from __future__ import annotations

import math

import numpy as np
import xarray as xr

from ..base import save_figure
from ..common import PLOT_STYLE, pyplot

COLORS = {"none": "C3", "array": "C0", "reset": "C2"}


def _value(x) -> float:
    return math.nan if x is None or x.get("value") is None else float(x["value"])


def _error(x) -> float:
    return math.nan if x is None or x.get("error") is None else float(x["error"])


def dataset(summary: dict, attrs: dict) -> xr.Dataset:
    """eps, its error, P_L and the leaked share on (lru, distance) at the study's leakage rate and on (lru, leakage)
    at the sweep distance; the array's S(k) on cycle (where computed)."""
    pars = summary["parameters"]
    lrus, ds, sweep = pars["lrus"], pars["distances"], summary["sweep"]["leakages"]
    sd, leak = summary["sweep"]["distance"], pars["leakage"]
    at = {(p["lru"], p["distance"], p["leakage"]): p for p in summary["points"]}

    def grid(rows, cols, key, inner):
        out = np.full((len(rows), len(cols)), np.nan)
        for i, r in enumerate(rows):
            for j, c in enumerate(cols):
                pt = at.get(key(r, c))
                if pt is not None:
                    out[i, j] = inner(pt)
        return out

    data = {}
    for name, inner in (("eps", lambda p: _value(p["logical_error_per_cycle"])),
                        ("eps_error", lambda p: _error(p["logical_error_per_cycle"])),
                        ("P_L", lambda p: p["logical_error"]["value"]),
                        ("leaked_fraction", lambda p: p["leaked_fraction"]["value"])):
        data[name] = (("lru", "distance"), grid(lrus, ds, lambda r, c: (r, c, leak), inner),
                      {"units": "1 per cycle" if name.startswith("eps") else "1"})
        data[f"sweep_{name}"] = (("lru", "leakage"), grid(lrus, sweep, lambda r, c: (r, sd, c), inner),
                                 {"units": "1 per cycle" if name.startswith("eps") else "1"})
    coords = {"lru": ("lru", lrus), "distance": ("distance", ds),
              "leakage": ("leakage", sweep, {"units": "1 per data qubit per round"})}
    arr = summary["lrus"].get("array")
    if arr is not None:
        S = np.asarray(arr["survival"], dtype=float)
        data["array_S"] = (("cycle",), S, {"units": "1", "long_name": "S(k) of the qec study"})
        data["array_S_sem"] = (("cycle",), np.array([np.nan if x is None else x for x in arr["survival_sem"]]),
                               {"units": "1"})
        coords["cycle"] = ("cycle", np.arange(len(S)))
    return xr.Dataset(data, coords=coords, attrs={**attrs, "sweep_distance": sd, "leakage_rate": leak})


def _log(ax, values) -> None:
    """A log y axis where some value is > 0 (none: no failure in any shot; the axis stays linear)."""
    v = np.asarray(values, dtype=float)
    if np.any(np.isfinite(v) & (v > 0)):
        ax.set_yscale("log")


def _pm(x, fmt=".3g") -> str:
    if x is None or x.get("value") is None:
        return "-"
    e = x.get("error")
    return f"{x['value']:{fmt}} ± {e:.2g}" if e is not None else f"{x['value']:{fmt}}"


def table(summary: dict) -> str:
    """The printed summary: hardware, what went into each kind, eps per distance, Lambda, the sweep."""
    pars, hw = summary["parameters"], summary["hardware"]
    bare = hw["bare_error_per_cycle"]["p_total"]["value"]
    lines = [f"logical error per cycle, rotated surface-code Z memory, p = {pars['physical_error']:g}, leakage "
             f"{pars['leakage']:g} per data qubit per round, rounds = {pars['rounds']}, {pars['shots']} shots per "
             f"point, start: {pars['initial_leakage']}",
             f"hardware: T1q = {hw['T1q_us']} us, Tphi = {hw['Tphi_us']} us, t_c = {hw['cycle_time_us']:.4g} us: bare "
             f"transmon's Pauli error per cycle {bare:.3g} (circuit's p = {pars['physical_error']:g}; threshold "
             f"{hw['threshold']:g})"]
    if hw["warning"]:
        lines.append(f"WARNING: {hw['warning']}")
    lines.append("")
    for kind, k in summary["lrus"].items():
        r = k["return_probability"]
        rtext = f"{r:.4g}" if isinstance(r, float) else "r_k = " + ", ".join(f"{x:.3g}" for x in r[:6]) + \
            (f", ... (tail {k['return_probability_tail']:.3g})" if len(r) > 6 else "")
        D = k["mean_leakage_cycles"]
        lines.append(f"{kind:6s} return {rtext}; D = {_pm(D)} cycles; added p = {k['added_error']['p_total']:.3g} per "
                     f"round ({k['added_error']['source']})")
        if kind == "array":
            cb = k["added_error"].get("curve_based")
            lines.append(f"       S(k) rises at {k['rises'] or 'no k'}; leakage-cycles left out {k['left_out']:.3g} "
                         f"({100 * k['left_out_share']:.2g} % of D); curve-based added error (not in the circuit): "
                         f"{_pm(cb['p_total']) if cb else '-'}")
    lines += ["", f"{'d':>3s}  " + "  ".join(f"{k:>22s}" for k in summary["lrus"])]
    at = {(p["lru"], p["distance"], p["leakage"]): p for p in summary["points"]}
    for d in pars["distances"]:
        cells = [_pm(at[(k, d, pars["leakage"])]["logical_error_per_cycle"]) for k in summary["lrus"]]
        lines.append(f"{d:>3d}  " + "  ".join(f"{c:>22s}" for c in cells))
    for lam in summary["lambda"]:
        lines.append(f"Lambda {lam['lru']} d = {lam['distances'][0]} -> {lam['distances'][1]}: {_pm(lam)}")
    sw = summary["sweep"]
    lines += ["", f"sweep at d = {sw['distance']}: eps per cycle against the leakage rate"]
    for l in sw["leakages"]:
        cells = [_pm(at[(k, sw["distance"], l)]["logical_error_per_cycle"]) for k in summary["lrus"]]
        lines.append(f"{l:>8.2g}  " + "  ".join(f"{c:>22s}" for c in cells))
    be = sw["break_even"]
    lines.append(f"break-even leakage rate (array against none): {_pm(be)}; {be['verdict']}")
    for g in sw["gap_to_reset"]:
        lines.append(f"  gap to reset at {g['leakage']:.2g}: eps(array)/eps(reset) = {_pm(g['array_over_reset'])}")
    return "\n".join(lines)


def plot(ds, summary: dict, figdir) -> list:
    """(a) eps against d, (b) eps against the leakage rate, (c) the S(k) that went in (module docstring)."""
    plt = pyplot()
    pars = summary["parameters"]
    with plt.rc_context(PLOT_STYLE):
        fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
        ax = axes[0]
        for i, kind in enumerate(ds["lru"].values):
            y, e = ds["eps"].values[i], ds["eps_error"].values[i]
            ok = np.isfinite(y) & (y > 0)
            ax.errorbar(ds["distance"].values[ok], y[ok], yerr=np.nan_to_num(e[ok]), fmt="o-", ms=4, capsize=2,
                        color=COLORS.get(str(kind)), label=str(kind))
        _log(ax, ds["eps"].values)
        ax.set_xticks([int(d) for d in ds["distance"].values])
        ax.set_xlabel("code distance $d$")
        ax.set_ylabel(r"logical error per cycle $\varepsilon$")
        ax.set_title(f"(a) leakage {pars['leakage']:g}, p = {pars['physical_error']:g}", loc="left")
        ax.legend(fontsize=7)
        ax = axes[1]
        x = ds["leakage"].values
        for i, kind in enumerate(ds["lru"].values):
            y, e = ds["sweep_eps"].values[i], ds["sweep_eps_error"].values[i]
            ok = np.isfinite(y) & (y > 0)
            ax.errorbar(np.where(x[ok] > 0, x[ok], np.nan), y[ok], yerr=np.nan_to_num(e[ok]), fmt="o-", ms=4,
                        capsize=2, color=COLORS.get(str(kind)), label=str(kind))
            if ok.size and ok[0] and x[0] == 0:  # the rate 0 has no place on a log axis: a line at its eps
                ax.axhline(y[0], color=COLORS.get(str(kind)), ls=":", lw=0.8)
        be = summary["sweep"]["break_even"]
        if be["value"] is not None:
            ax.axvline(be["value"], color="0.3", ls="--", lw=0.9, label=f"break-even {be['value']:.2g}")
        if np.any(x > 0):
            ax.set_xscale("log")
        _log(ax, ds["sweep_eps"].values)
        ax.set_xlabel("leakage per data qubit per round (dotted: 0)")
        ax.set_ylabel(r"$\varepsilon$ per cycle")
        ax.set_title(f"(b) d = {summary['sweep']['distance']}", loc="left")
        ax.legend(fontsize=7)
        ax = axes[2]
        for kind, k in summary["lrus"].items():
            r = k["return_probability"]
            n = len(r) if isinstance(r, list) else 20
            rs = np.array(r if isinstance(r, list) else [r] * n, dtype=float)
            S = np.concatenate(([1.0], np.cumprod(1.0 - rs)))
            gone = " (S = 0 from k = 1)" if S[1] == 0 else ""
            ax.plot(np.arange(n + 1), np.where(S > 0, S, np.nan), "-", color=COLORS.get(kind), lw=1.0,
                    label=f"{kind}: model" if kind == "array" else kind + gone)
        if "array_S" in ds:
            S, e = ds["array_S"].values, ds["array_S_sem"].values
            ok = S > 0
            ax.errorbar(ds["cycle"].values[ok], S[ok], yerr=np.nan_to_num(e[ok]), fmt="o", ms=3, color="k",
                        capsize=2, lw=0.8, label="array: S(k), qec study")
        ax.set_yscale("log")
        ax.set_xlabel("cycle $k$")
        ax.set_ylabel("still leaked $S(k)$")
        ax.set_title("(c) the survival that went in", loc="left")
        ax.legend(fontsize=7)
        fig.tight_layout()
        return save_figure(fig, figdir, "logical")
