"""The routing study's figures: maps of every coding site's numbers, per condition, and tau_L against the grid size.

The dataset is the one :mod:`lru_mps.studies.routing` writes (``results.nc``); ``lru-mps plot`` redraws from it.
"""

from __future__ import annotations

import numpy as np

from ..physics import geometry as geometries
from .base import save_figure, time_axis
from .common import PLOT_STYLE, pyplot

#: the leakage lifetime whose map decides whether routing pays
VERDICT = "leakage_lifetime_array"
#: the quantities of the maps figure, in its rows: (dataset variable, label); in ideal conditions T1 and T2 are the
#: typical values of the exact rates (a fit of the ensemble resolves them only where they are short)
MAP_ROWS = (("leakage_lifetime_array", r"$\tau_L$ (leakage lifetime)"), ("T_star", r"$T_\star$"),
            ("T1", "$T_1$"), ("T2", "$T_2$"))


def plot(ds, summary: dict, figdir) -> list:
    """The routing study's figures: one page of maps per condition and tau_L against the grid size."""
    plt = pyplot()
    from matplotlib.colors import LogNorm

    us, time_label = time_axis(ds.attrs["time_us_per_J"])
    out = []
    layouts = [geometries.lru_grid(int(R), int(C), str(ds.attrs["lrus"]), int(ds.attrs["lru_arm"]))
               for R, C in zip(ds["grid_rows"].values, ds["grid_cols"].values)]
    with plt.rc_context(PLOT_STYLE):
        for label in ds["condition"].values:
            fig, axes = plt.subplots(len(MAP_ROWS), len(layouts), figsize=(3.2 * len(layouts) + 1.0,
                                                                          2.9 * len(MAP_ROWS)), squeeze=False)
            for ri, (name, title) in enumerate(MAP_ROWS):
                if label == "ideal" and name in ("T1", "T2"):
                    title = f"{title} (exact rates, typical)"
                elif label == "ideal" and name == VERDICT:
                    title = f"{title}, to t_final"
                v = ds[f"{name}_J"].sel(condition=label).values * us
                finite = v[np.isfinite(v) & (v > 0)]
                norm = LogNorm(finite.min(), finite.max()) if finite.size and finite.min() < finite.max() else None
                for gi, g in enumerate(layouts):
                    ax = axes[ri, gi]
                    R, C = int(ds["grid_rows"].values[gi]), int(ds["grid_cols"].values[gi])
                    img = np.full((R, C), np.nan)
                    for si in range(R * C):
                        img[ds["row"].values[gi, si], ds["col"].values[gi, si]] = v[gi, si]
                    lo = min(r for r, _ in g.coords)
                    left = min(c for _, c in g.coords)
                    hi = max(r for r, _ in g.coords)
                    right = max(c for _, c in g.coords)
                    im = ax.imshow(np.ma.masked_invalid(img), norm=norm, cmap="viridis", origin="upper",
                                   extent=(-0.5, C - 0.5, R - 0.5, -0.5))
                    for i, j in g.edges:
                        (r1, c1), (r2, c2) = g.coords[i], g.coords[j]
                        ax.plot([c1, c2], [r1, r2], color="0.6", lw=0.6, zorder=0)
                    arm = [g.coords[k] for k in range(g.L) if not (0 <= g.coords[k][0] < R and
                                                                   0 <= g.coords[k][1] < C)]
                    resets = [g.coords[k] for k in g.reset_sites]
                    ax.scatter([c for _, c in arm], [r for r, _ in arm], s=14, color="0.5", zorder=2)
                    ax.scatter([c for _, c in resets], [r for r, _ in resets], s=36, marker="s", color="C3",
                               zorder=3, label="reset site (LRU)")
                    bad = np.argwhere(~np.isfinite(img))
                    for r, cc in bad:
                        ax.text(cc, r, "x", ha="center", va="center", color="0.3", fontsize=8)
                    ax.set_xlim(left - 0.6, right + 0.6)
                    ax.set_ylim(hi + 0.6, lo - 0.6)
                    ax.set_xticks([])
                    ax.set_yticks([])
                    ax.set_aspect("equal")
                    if ri == 0:
                        ax.set_title(f"{R} x {C} grid, {g.resets} LRUs")
                    if gi == len(layouts) - 1 and norm is not None:
                        fig.colorbar(im, ax=axes[ri, :].tolist(), shrink=0.8, label=time_axis(1.0, title)[1])
                axes[ri, 0].set_ylabel(title)
            fig.suptitle(f"routing maps, {label} (x: not resolved or not run; red squares: reset sites)",
                         fontsize=10)
            out += save_figure(fig, figdir, f"maps_{label.replace(' ', '_')}")
        out += _plot_verdict(plt, ds, summary, figdir, us, time_label)
    return out

def _plot_verdict(plt, ds, summary, figdir, us, time_label) -> list:
    """tau_L of every coding site against the grid size, each condition, with T1q/2 and the baseline."""
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
    ax.set_xlabel("grid of coding transmons")
    ax.set_ylabel(time_axis(1.0, r"$\tau_L$ of each start site")[1])
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.tight_layout()
    return save_figure(fig, figdir, "leakage_lifetime_vs_grid")

