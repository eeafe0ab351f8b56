"""The routing study's report: its text table, maps of every coding site's numbers per condition, and tau_L
against the grid size.

Reads only the study's summary (JSON) and dataset (``results.nc``, the one :mod:`lru_mps.studies.routing` writes),
so ``lru-mps plot`` redraws from the stored results; times in us (or 1/J, ``--time-unit``).
"""

from __future__ import annotations

import math
import textwrap

import numpy as np

from ...analysis.lifetimes import LIFETIMES
from ...analysis.numbers import UNRESOLVED_FRACTION, sig
from ...analysis.routing import ETA_PAYS
from ...physics import geometry as geometries
from ..base import save_figure, time_axis
from ..common import FITTED, PLOT_STYLE, pyplot
from ..lifetimes import HEAD, LEGEND, cells, reason_lines, time_cell
from .plan import VERDICT

#: the quantities of the maps figure, in its rows: (dataset variable, label); in ideal conditions T1 and T2 are the
#: typical values of the exact rates (a fit of the ensemble resolves them only where they are short)
MAP_ROWS = (("leakage_lifetime_array", r"$\tau_L$ (leakage lifetime)"), ("T_star", r"$T_\star$"),
            ("T1", "$T_1$"), ("T2", "$T_2$"))


#: the least ratio of a colour scale's ends (a row of one value, or nearly: a scale around it)
MIN_RANGE = 3.0
#: the short name of each map row (its axis), beside the full one of MAP_ROWS (its colour bar)
SHORT = {"leakage_lifetime_array": r"$\tau_L$", "T_star": r"$T_\star$", "T1": "$T_1$", "T2": "$T_2$",
         "removal_efficiency": r"$\eta$"}
#: the removal efficiency's map (the temperature page's last row: the verdict's quantity, on a scale of 0 to 1)
ETA, ETA_TITLE = "removal_efficiency", r"$\eta$ (removal efficiency)"
#: why a row without a value at any site is not drawn, where the study's design says (else the summary has the reasons)
NO_ROW = {("ideal", "T_star"): "no $T_\\star$ in ideal conditions on a grid (its leakage decays slower than any "
                               "exponential)"}


def table(summary: dict) -> str:
    """The table: times in us, each to its error's digits or 'not resolved*' (lifetimes.time_cell)."""
    lines = [f"{summary['study']}: leakage routed to LRUs ({summary['lrus']}, arms of {summary['lru_arm']}) "
             "across grids of coding transmons; times in us (+- jackknife error)"]
    if summary["symmetry"]["used"]:
        lines.append("sites that a symmetry of the layout maps onto each other share one ensemble (a site 'x4': "
                     "it and 3 images)")
    limit = summary["T_leak_own"]["value_us"]
    if limit is not None:
        lines.append(f"leakage on its own (T1q/2): {sig(limit, 3)} us")
    unresolved = {}
    for label in summary["conditions"]:
        b = summary["baseline"][label]
        lines += ["", f"{label}", f"  baseline, one L = 3 array per qubit: T_star {time_cell(b['T_star'], 'us')} "
                  f"T1 {time_cell(b['T1'], 'us')} T2 {time_cell(b['T2'], 'us')}  "
                  + cells(*(b[k] for k in LIFETIMES), unit="us")]
        lines.append(f"  {'grid':>6} {'site':>8} {'T_star':>17} {'T1':>17} {'T2':>17} {HEAD}")
        dropped_max = 0.0
        for gi, size in enumerate(summary["grid_sizes"]):
            for p in summary["sites"][gi]:
                rep = p["ensemble_of"]
                if (rep["row"], rep["col"]) != (p["row"], p["col"]):
                    continue  # (its class's first site stands for it)
                n = sum(q["ensemble_of"] == rep for q in summary["sites"][gi])
                rec = p["conditions"][label]
                where = f"{p['row']},{p['col']}" + (f" x{n}" if n > 1 else "")
                if "not_run" in rec:
                    lines.append(f"  {size:>6} {where:>8} (not run: thermal_max_sites)")
                    continue
                if rec.get("thermal_mass_dropped"):
                    dropped_max = max(dropped_max, rec["thermal_mass_dropped"])
                times = " ".join(time_cell(rec[k], "us") for k in FITTED)
                lines.append(f"  {size:>6} {where:>8} {times} " + cells(*(rec[k] for k in LIFETIMES), unit="us"))
                unresolved.update({f"{k} at {size} {where} {label}": rec[k] for k in FITTED})
        if dropped_max > 0:
            lines.append(f"  thermal starts over the sector engine's limit left out: at most {dropped_max:.2g} of "
                         "the Gibbs mass at a point (its populations within that of the full ensemble)")
    verdict = summary.get("routing")
    if verdict:
        lines += ["", "does routing pay? (" + verdict["criterion"] + ")"]
        us = 1e6 / (2 * np.pi * summary["parameters"]["J_over_2pi_Hz"])  # us per 1/J
        for gi, size in enumerate(summary["grid_sizes"]):
            share, med = verdict["paying_share"][gi], verdict["median_tau_J"][gi]
            med_s = "not resolved" if med is None else f"{sig(med * us, 4)} us ({sig(med, 4)}/J)"
            lines.append(f"  {size:>6}: median tau_L {med_s}, "
                         f"sites that pay {'not resolved' if share is None else f'{100 * share:.0f} %'}")
        stop = verdict["stops_paying_at"]
        lines.append(f"  routing stops paying at: {stop or 'no grid studied'}")
    lines += _temperature_lines(summary)
    return "\n".join(lines + [""] + reason_lines(unresolved) + [LEGEND]) + "\n"


def _temperature_lines(summary: dict) -> list[str]:
    """The table's verdict at each temperature of the realistic conditions: a row per layout and temperature with
    the Gibbs mass of the thermal starts left out, the median site's eta and tau_L against the baseline's (one
    L = 3 array per qubit at that temperature), and where routing stops paying there."""
    temps = summary.get("by_temperature") or {}
    if not temps:
        return []
    us = 1e6 / (2 * np.pi * summary["parameters"]["J_over_2pi_Hz"])  # us per 1/J
    criterion = next(iter(temps.values()))["routing"]["criterion"]
    lines = ["", f"at each temperature, under the hardware: does routing pay? ({criterion})",
             "  (the ideal verdict above reads the mean lifetime, which the rare, nearly trapped stacks set; under the "
             "hardware these end by its decay, and eta is the share of the leakage the LRUs end)",
             f"  {'T':>7} {'grid':>6} {'thermal mass left out':>22} {'median eta':>10} {'sites that pay':>14} "
             f"{'median tau_L':>22} {'/ baseline':>10}"]
    for entry in temps.values():
        v, T = entry["routing"], f"{1e3 * entry['temperature_K']:g} mK"
        for gi, size in enumerate(summary["grid_sizes"]):
            if not entry["run"][gi]:
                lines.append(f"  {T:>7} {size:>6} not run: {int(summary['n_sites'][gi])} transmons, over "
                             f"thermal_max_sites = {summary['parameters']['thermal_max_sites']}")
                continue
            mass, eta, share = entry["thermal_mass_dropped"][gi], v["median_eta"][gi], v["paying_share"][gi]
            med, ratio = v["median_tau_J"][gi], v["median_tau_over_baseline"][gi]
            zero = "0 (no thermal start)" if not entry["temperature_K"] else "0 (every start fits)"
            lines.append(f"  {T:>7} {size:>6} {zero if not mass else f'{mass:.2g}':>22} "
                         f"{'not resolved' if eta is None else f'{eta:.2f}':>10} "
                         f"{'not resolved' if share is None else f'{100 * share:.0f} %':>14} "
                         f"{'not resolved' if med is None else f'{sig(med * us, 3)} us ({sig(med, 3)}/J)':>22} "
                         f"{'-' if ratio is None else f'{ratio:.2g}x':>10}")
        b_eta, b_tau = v["baseline_eta"], v["baseline_tau_J"]
        lines += [f"  {T:>7} baseline (one L = 3 array per qubit): eta "
                  f"{'not resolved' if b_eta is None else f'{b_eta:.2f}'}, tau_L "
                  f"{'not resolved' if b_tau is None else f'{sig(b_tau * us, 3)} us'}",
                  f"  {T:>7} routing stops paying at: {_stop_text(v, summary['grid_sizes'])}"]
    return lines


def _stop_text(v: dict, sizes: list) -> str:
    """Where routing stops paying at one temperature, in words (its verdict of ``by_temperature``; ``sizes``: the
    grids' names), with the grids not run or not resolved there that could change it."""
    stop, pays = v["stops_paying_at"], v["pays"]
    if stop:
        return stop + (" (or at a smaller grid not run or not resolved there)" if v.get("stops_paying_at_note")
                       else "")
    if all(p is None for p in pays):
        return "not resolved (no grid run or resolved there)"
    missing = [size for size, p in zip(sizes, pays) if p is None]
    return "no grid " + ("studied (it pays on every grid)" if not missing else
                         f"run there (it pays on every one; not run or not resolved there: {', '.join(missing)})")


def plot(ds, summary: dict, figdir) -> list:
    """The routing study's figures: one page of maps per condition (:func:`plot_maps`), the realistic maps at
    every temperature side by side (:func:`plot_temperature_maps`) and tau_L against the grid size."""
    plt = pyplot()
    us, time_label = time_axis(ds.attrs["time_us_per_J"])
    out = []
    with plt.rc_context(PLOT_STYLE):
        for label in ds["condition"].values:
            out += plot_maps(plt, ds, summary, str(label), figdir, us)
        out += plot_temperature_maps(plt, ds, summary, figdir, us)
        out += _plot_verdict(plt, ds, summary, figdir, us, time_label)
    return out


def _values(ds, name: str, label: str, us: float) -> np.ndarray:
    """(grid, site) values of map quantity ``name`` under condition ``label`` (times in the figure's unit), NaN
    where a value's error is half of it or more (not resolved: an x, as in the table)."""
    scale = 1.0 if name == ETA else us
    v = ds[name if name == ETA else f"{name}_J"].sel(condition=label).values * scale
    err = f"{name}_error" if name == ETA else f"{name}_error_J"
    if err in ds:
        e = ds[err].sel(condition=label).values * scale
        v = np.where(np.isfinite(e) & (np.abs(e) >= UNRESOLVED_FRACTION * np.abs(v)), np.nan, v)
    return v


def _not_run_note(ds, summary: dict, gi: int, where: str = "grid") -> str:
    return (f"{summary['grid_sizes'][gi]} {where} not run: {int(ds['n_sites'].values[gi])} transmons, over "
            f"thermal_max_sites = {summary['parameters']['thermal_max_sites']} for a temperature > 0")


def plot_maps(plt, ds, summary: dict, label: str, figdir, us: float) -> list:
    """One condition's maps: a row per quantity of :data:`MAP_ROWS`, a column per grid run under it, a colour bar
    per row (its scale shared by the row's maps), an x on every site not resolved.  A grid not run under the
    condition (thermal_max_sites) and a quantity resolved at no site are left out, the title saying which and why."""
    grids = [gi for gi in range(ds.sizes["grid"]) if ds["run"].sel(condition=label).values[gi].any()]
    notes = [_not_run_note(ds, summary, gi) for gi in range(ds.sizes["grid"]) if gi not in grids]
    rows = []
    for name, title in MAP_ROWS:
        v = _values(ds, name, label, us)
        if np.isfinite(v[grids]).any():
            rows.append((name, title, {(gi, label): v[gi] for gi in grids}))
        else:
            notes.append(f"{SHORT[name]} not drawn: " + NO_ROW.get((label, name), "resolved at no site (the "
                                                                      "reasons in summary.json)"))
    columns = [(gi, label, f"{ds['grid_rows'].values[gi]} x {ds['grid_cols'].values[gi]}, "
                           f"{_layout(ds, gi).resets} LRUs") for gi in grids]
    return _maps_page(plt, ds, columns, rows, [f"routing maps, {label}"], notes, figdir,
                      f"maps_{label.replace(' ', '_')}")


def plot_temperature_maps(plt, ds, summary: dict, figdir, us: float) -> list:
    """The realistic maps at every temperature side by side: a row per quantity of :data:`MAP_ROWS` and the removal
    efficiency eta (the verdict's: routing pays where the LRUs end most of the leakage, eta > 1/2), a column per
    grid and temperature it ran at (each grid's temperatures next to each other), one colour scale per row, so
    that the 100 mK map reads against the 0 K one.  Drawn where the realistic conditions have two temperatures
    or more; a grid not run at a temperature, and a quantity resolved at no site there, are said in the title."""
    temps = summary.get("by_temperature") or {}
    if len(temps) < 2:
        return []
    ran = {label: entry["run"] for label, entry in temps.items()}
    columns, notes = [], []
    for gi in range(ds.sizes["grid"]):
        for label, entry in temps.items():
            T = f"{1e3 * entry['temperature_K']:g} mK"
            if ran[label][gi]:
                columns.append((gi, label, f"{ds['grid_rows'].values[gi]} x {ds['grid_cols'].values[gi]}, {T}"))
            else:
                notes.append(_not_run_note(ds, summary, gi, f"grid at {T}"))
    rows = []
    for name, title in MAP_ROWS + ((ETA, ETA_TITLE),):
        values = {(gi, label): _values(ds, name, label, us)[gi] for gi, label, _ in columns}
        if any(np.isfinite(v).any() for v in values.values()):
            rows.append((name, title, values))
        else:
            notes.append(f"{SHORT[name]} not drawn: resolved at no site (the reasons in summary.json)")
    head = ["routing maps at each temperature, realistic conditions (the hardware's T1q, Tphi): each grid's "
            "temperatures side by side on one colour scale per row",
            "routing pays where the LRUs end most of the leakage (the median site's eta > 1/2, the line on its "
            "colour bar); it stops paying at: "
            + "; ".join(f"{1e3 * e['temperature_K']:g} mK: {_stop_text(e['routing'], summary['grid_sizes'])}"
                       for e in temps.values())]
    return _maps_page(plt, ds, columns, rows, head, notes, figdir, "maps_by_temperature")


def _layout(ds, gi: int):
    return geometries.lru_grid(int(ds["grid_rows"].values[gi]), int(ds["grid_cols"].values[gi]),
                               str(ds.attrs["lrus"]), int(ds.attrs["lru_arm"]))


def _maps_page(plt, ds, columns: list, rows: list, head: list, notes: list, figdir, name: str) -> list:
    """A page of maps: ``columns`` [(grid, condition, title)], ``rows`` [(quantity, title, {(grid, condition):
    values per site})], a colour bar per row (its scale shared by the row's maps: log for times, 0-1 for eta), an
    x on every site not resolved; a panel resolved at no site is left blank and said in the title with the
    ``notes``."""
    from matplotlib.colors import LogNorm, Normalize
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    if not columns or not rows:
        return []
    notes, blank = list(notes), {}
    layouts = {gi: _layout(ds, gi) for gi in {c[0] for c in columns}}
    span = {gi: _span(g) for gi, g in layouts.items()}  # (row0, row1, col0, col1) of each layout, arms included
    shape = [(span[gi][3] - span[gi][2] + 1.2) / (span[gi][1] - span[gi][0] + 1.2) for gi, _, _ in columns]
    row = 0.3 * max(span[gi][1] - span[gi][0] + 1.2 for gi in layouts)  # inches per row: 0.3 per site
    fig, axes = plt.subplots(len(rows), len(columns), squeeze=False, layout="constrained",
                             gridspec_kw={"width_ratios": shape},
                             figsize=(max(row * sum(shape) + 0.15 * len(columns) + 1.3, 3.4),
                                      row * len(rows) + 0.25 * (len(notes) + len(head)) + 0.75))
    for ri, (quantity, title, values) in enumerate(rows):
        ideal = {c for _, c, _ in columns} == {"ideal"}
        if ideal and quantity in ("T1", "T2"):
            title = f"{title} (exact rates, typical)"
        elif ideal and quantity == VERDICT:
            title = f"{title}, to t_final"
        v = np.concatenate([values[gi, c] for gi, c, _ in columns])
        finite = v[np.isfinite(v) & (v > 0)]
        if quantity == ETA:
            norm = Normalize(0.0, 1.0)
        else:
            lo, hi = finite.min(), finite.max()
            widen = math.sqrt(max(MIN_RANGE * lo / hi, 1.0))  # (a scale over MIN_RANGE at least: labelled ticks)
            norm = LogNorm(lo / widen, hi * widen)
        im = None
        for ci, (gi, cond, col_title) in enumerate(columns):
            ax = axes[ri, ci]
            if not np.isfinite(values[gi, cond]).any():  # (a blank panel, said in the title)
                ax.set_visible(False)
                blank.setdefault(quantity, []).append(col_title)
                continue
            im = _map(ax, layouts[gi], span[gi], ds, gi, values[gi, cond], norm)
        next(ax for ax in axes[ri] if ax.get_visible()).set_ylabel(SHORT[quantity])
        label = ETA_TITLE if quantity == ETA else time_axis(1.0, title)[1]
        bar = fig.colorbar(im, ax=axes[ri, :].tolist(), shrink=0.9, label=label)
        if quantity == ETA:  # (the verdict's line: routing pays where eta > 1/2)
            bar.ax.axhline(ETA_PAYS, color="k", lw=1.0)
            continue
        ratio = norm.vmax / norm.vmin  # (ticks at plain numbers, at least two on the scale)
        subs = (1.0,) if ratio > 30 else (1.0, 2.0, 5.0) if ratio > 6 else (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)
        bar.ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
        bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda t, _: f"{t:.0f}" if t >= 10 else f"{t:.2g}"))
        bar.ax.yaxis.set_minor_formatter(NullFormatter())
    notes += [f"{SHORT[q]} resolved at no site of: {'; '.join(where)}" for q, where in blank.items()]
    for ci, (_, _, col_title) in enumerate(columns):  # (each column's title on its top panel drawn)
        top = next((ax for ax in axes[:, ci] if ax.get_visible()), None)
        if top is not None:
            top.set_title(col_title)
    head = head + ["x: not resolved (why: summary.json); red squares: reset sites; grey dots: LRU arms"] + notes
    chars = int(13 * fig.get_figwidth())  # (the notes wrapped to the figure's width, at 9 points)
    fig.suptitle("\n".join(textwrap.fill(line, chars) for line in head), fontsize=9)
    return save_figure(fig, figdir, name)


def _span(g) -> tuple[int, int, int, int]:
    rows, cols = [r for r, _ in g.coords], [c for _, c in g.coords]
    return min(rows), max(rows), min(cols), max(cols)


def _map(ax, g, span, ds, gi: int, v, norm):
    """One grid's map of the values ``v`` (per coding site, in the dataset's site order) on ``ax``."""
    R, C = int(ds["grid_rows"].values[gi]), int(ds["grid_cols"].values[gi])
    img = np.full((R, C), np.nan)
    for si in range(R * C):
        img[ds["row"].values[gi, si], ds["col"].values[gi, si]] = v[si]
    im = ax.imshow(np.ma.masked_invalid(img), norm=norm, cmap="viridis", origin="upper",
                   extent=(-0.5, C - 0.5, R - 0.5, -0.5))
    for i, j in g.edges:
        (r1, c1), (r2, c2) = g.coords[i], g.coords[j]
        ax.plot([c1, c2], [r1, r2], color="0.6", lw=0.6, zorder=1)
    arm = [g.coords[k] for k in range(g.L) if not (0 <= g.coords[k][0] < R and 0 <= g.coords[k][1] < C)]
    resets = [g.coords[k] for k in g.reset_sites]
    ax.scatter([c for _, c in arm], [r for r, _ in arm], s=14, color="0.5", zorder=2)
    ax.scatter([c for _, c in resets], [r for r, _ in resets], s=36, marker="s", color="C3", zorder=3)
    for r, c in np.argwhere(~np.isfinite(img)):
        ax.text(c, r, "x", ha="center", va="center", color="0.3", fontsize=9)
    r0, r1, c0, c1 = span
    ax.set_xlim(c0 - 0.6, c1 + 0.6)
    ax.set_ylim(r1 + 0.6, r0 - 0.6)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_aspect("equal")
    ax.grid(False)
    return im


def _plot_verdict(plt, ds, summary, figdir, us, time_label) -> list:
    """tau_L of every coding site against the grid size, each condition, with T1q/2 and the baseline."""
    from matplotlib.ticker import FuncFormatter

    fig, ax = plt.subplots(figsize=(8.4, 3.8))
    sizes = summary["grid_sizes"]
    x = np.arange(len(sizes))
    for ci, label in enumerate(ds["condition"].values):
        v = ds[f"{VERDICT}_J"].sel(condition=label).values * us
        for gi in range(len(sizes)):
            n = int(ds["grid_rows"].values[gi] * ds["grid_cols"].values[gi])
            y = v[gi, :n]
            y = y[np.isfinite(y)]
            jitter = (np.arange(y.size) - y.size / 2) / max(y.size, 1) * 0.25
            name = f"{label} (to t_final: lower bounds)" if label == "ideal" else label
            ax.scatter(x[gi] + 0.08 * (ci - 1) + jitter, y, s=10, color=f"C{ci}", alpha=0.7,
                       label=name if gi == 0 else None)
        b = ds[f"baseline_{VERDICT}_J"].sel(condition=label).values * us
        if np.isfinite(b):
            ax.axhline(float(b), color=f"C{ci}", ls="--", lw=1, label=f"one L = 3 array per qubit, {label}")
    own = ds.attrs.get("T_leak_own_J")
    if isinstance(own, (int, float, np.floating)) and np.isfinite(own):
        ax.axhline(float(own) * us, color="k", ls=":", lw=1.2, label="T1q/2 (leakage on its own)")
    ax.set_xticks(x, sizes)
    ax.set_yscale("log")
    plain = FuncFormatter(lambda v, _: f"{v:.3g}" if f"{v:.0e}"[0] in "125" else "")  # (1, 2, 5 of each decade)
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)
    ax.set_xlabel("grid of coding transmons")
    ax.set_ylabel(time_axis(1.0, r"$\tau_L$ of each start site")[1])
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.tight_layout()
    return save_figure(fig, figdir, "leakage_lifetime_vs_grid")

