"""The studies' figures as they are saved, read from the rendered figure: no two tick labels of an axis overlap, no
legend or note covers plotted data, every map (imshow, pcolormesh) has a colour bar, no two point labels overlap,
and every panel shows at least one resolved value.

The checks measure the drawn figure (``fig.canvas.draw()``, then each artist's
``get_window_extent`` in display pixels; data points and lines through the
display transform of what is plotted) and are written here apart from the
layout code they check (lru_mps.studies.figure_layout).  They are shown to
fail on figures built with each fault; then they run over every figure the
quick design and routing studies save and the quick dynamics study's (each
study the session's run, conftest.quick_study; its figures drawn again from
the results it returned, kept as saved by ``kept_figures``).

Cost: the three quick studies (~20 s, ~70 s and ~5 s of CPU, shared with test_gaps.py and the studies' own tests)
and their figures (a few seconds).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import LineCollection, PathCollection, PolyCollection, QuadMesh  # noqa: E402
from matplotlib.image import AxesImage  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from lru_mps.studies import get_study  # noqa: E402
from lru_mps.studies.base import QUICK_MARK, figure_mark, kept_figures  # noqa: E402

#: the quick studies whose every figure is checked
STUDIES = ("design", "routing", "dynamics")


# ----------------------------------------------------------------------------------------- what a figure shows
def _render(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not hasattr(fig.canvas, "get_renderer"):  # (a figure closed after saving keeps a bare canvas)
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def _inside(box, xy: np.ndarray) -> np.ndarray:
    return (xy[:, 0] > box.x0) & (xy[:, 0] < box.x1) & (xy[:, 1] > box.y0) & (xy[:, 1] < box.y1)


def _is_colorbar(ax) -> bool:
    return getattr(ax, "_colorbar", None) is not None


def _polyline(xy: np.ndarray, n: int = 40) -> np.ndarray:
    """The vertices of a polyline and n points along each of its segments."""
    if len(xy) < 2:
        return xy
    s = np.linspace(0, 1, n)[:, None, None]
    return np.concatenate([xy, (xy[:-1][None] * (1 - s) + xy[1:][None] * s).reshape(-1, 2)])


def plotted(ax) -> np.ndarray:
    """Display coordinates, inside the axes, of the data ``ax`` plots in data coordinates: line vertices and points
    along drawn lines, scatter points, error-bar segments, the outlines of bands."""
    pts = []
    for line in ax.lines:
        if line.get_visible() and line.get_transform().contains_branch(ax.transData) and len(line.get_xydata()):
            xy = line.get_transform().transform(np.asarray(line.get_xydata(), float))
            pts.append(_polyline(xy) if line.get_linestyle() not in ("None", "none", "", " ") else xy)
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        if isinstance(coll, PathCollection) and len(coll.get_offsets()):
            pts.append(coll.get_offset_transform().transform(np.asarray(coll.get_offsets(), float)))
        elif isinstance(coll, LineCollection):
            pts += [_polyline(coll.get_transform().transform(np.asarray(s, float))) for s in coll.get_segments()
                    if len(s)]
        elif isinstance(coll, PolyCollection):
            pts += [_polyline(coll.get_transform().transform(p.vertices)) for p in coll.get_paths() if len(p.vertices)]
    if not pts:
        return np.zeros((0, 2))
    xy = np.concatenate(pts)
    xy = xy[np.isfinite(xy).all(axis=1)]
    return xy[_inside(ax.get_window_extent(), xy)]


def _drawn_tick_labels(axis, frame, vertical: bool) -> list:
    """The boxes of the tick labels an axis draws: visible, non-empty, at a tick inside the axes' span."""
    out = []
    for t in axis.get_ticklabels(which="both"):
        if not (t.get_visible() and t.get_text().strip()):
            continue
        b = t.get_window_extent()
        mid = (b.y0 + b.y1) / 2 if vertical else (b.x0 + b.x1) / 2
        lo, hi = (frame.y0, frame.y1) if vertical else (frame.x0, frame.x1)
        if lo - 2 <= mid <= hi + 2:
            out.append(b)
    return out


# ----------------------------------------------------------------------------------------- the checks
def tick_label_faults(fig) -> list[str]:
    _render(fig)
    faults = []
    for ai, ax in enumerate(fig.axes):
        frame = ax.get_window_extent()
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            boxes = _drawn_tick_labels(axis, frame, vertical=name == "y")
            for i, a in enumerate(boxes):
                if any(_overlap(a, b) for b in boxes[i + 1:]):
                    faults.append(f"axes {ai} ({ax.get_title() or ax.get_ylabel()!r}): {name} tick labels overlap")
                    break
    return faults


def cover_faults(fig) -> list[str]:
    """Legends (of the axes and the figure), notes in axes or figure coordinates and point labels that cover
    plotted data, and point labels that overlap each other."""
    _render(fig)
    faults = []
    panels = [ax for ax in fig.axes if not _is_colorbar(ax)]
    data = {id(ax): plotted(ax) for ax in panels}
    legends = [(ax.get_legend(), f"legend of axes {i}") for i, ax in enumerate(panels) if ax.get_legend()]
    legends += [(leg, "figure legend") for leg in fig.legends]
    notes = [(t, f"note {t.get_text()[:30]!r}") for t in fig.texts]
    for ax in panels:
        notes += [(t, f"note {t.get_text()[:30]!r}") for t in ax.texts
                  if not t.get_transform().contains_branch(ax.transData) and t.get_text().strip()]  # (axes coords)
    for artist, what in legends + notes:
        if not artist.get_visible():
            continue
        box = Text.get_window_extent(artist) if isinstance(artist, Text) else artist.get_window_extent()  # (a
        # point label's text, without its leader line: that starts at its point)
        for ai, ax in enumerate(panels):
            n = int(_inside(box, data[id(ax)]).sum())
            if n:
                faults.append(f"{what} covers {n} plotted points of axes {ai}")
    for ai, ax in enumerate(panels):
        labels = [a for a in ax.texts if type(a).__name__ == "Annotation" and a.get_visible()]
        boxes = [a.get_window_extent() for a in labels]
        for i, a in enumerate(boxes):
            for j in range(i + 1, len(boxes)):
                if _overlap(a, boxes[j]):
                    faults.append(f"axes {ai}: point labels {labels[i].get_text()!r} and {labels[j].get_text()!r} "
                                  "overlap")
    return faults


def colorbar_faults(fig) -> list[str]:
    """A map (an image or a mesh) whose colours no colour bar reads: neither it nor a map with its norm and colour
    map has one."""
    maps = [m for ax in fig.axes if not _is_colorbar(ax) for m in ax.get_children()
            if isinstance(m, (AxesImage, QuadMesh))]
    barred = [m for m in maps if m.colorbar is not None]
    return [f"a map in {m.axes.get_title() or m.axes.get_ylabel()!r} has no colour bar" for m in maps
            if m.colorbar is None and not any(b.norm is m.norm and b.get_cmap().name == m.get_cmap().name
                                              for b in barred)]


def empty_panel_faults(fig) -> list[str]:
    """A panel that shows no resolved value: a map without an unmasked value (the layout drawn over it does not
    count), a plot without a finite point in data coordinates."""
    _render(fig)
    faults = []
    for ai, ax in enumerate(fig.axes):
        if _is_colorbar(ax) or not ax.get_visible():
            continue
        values = [np.ma.masked_invalid(np.ma.asarray(im.get_array(), dtype=float)).count()
                  for im in ax.get_children() if isinstance(im, (AxesImage, QuadMesh))]
        if not (sum(values) if values else len(plotted(ax))):
            faults.append(f"axes {ai} ({ax.get_title() or ax.get_ylabel()!r}) shows no resolved value")
    return faults


def all_faults(fig) -> list[str]:
    return tick_label_faults(fig) + cover_faults(fig) + colorbar_faults(fig) + empty_panel_faults(fig)


# ----------------------------------------------------------------------------------------- the checks can fail
def test_the_checks_find_each_fault():
    """Figures built with each fault fail their check, and the same figures without it pass."""
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.set_xscale("log")
    ax.plot([2e-4, 2e-2], [1, 2], "o-")
    ax.xaxis.set_minor_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:.3g}"))
    assert tick_label_faults(fig)  # (0.00020.00030.0004...)
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    assert not tick_label_faults(fig)

    fig, ax = plt.subplots(figsize=(4, 3))
    x = np.linspace(0, 1, 30)
    ax.plot(x, 1 - x, label="falling")
    ax.plot(x, x, ".", label="rising")
    ax.legend(loc="center")
    assert any("legend" in f for f in cover_faults(fig))
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1))
    ax.text(0.5, 0.5, "a note over the data", transform=ax.transAxes)
    assert [f for f in cover_faults(fig) if "note" in f] and not [f for f in cover_faults(fig) if "legend" in f]
    ax.texts[0].remove()
    ax.annotate("point A", (0.45, 0.9), xytext=(3, 3), textcoords="offset points")
    ax.annotate("point B", (0.46, 0.9), xytext=(3, 3), textcoords="offset points")
    assert [f for f in cover_faults(fig) if "point labels" in f]
    ax.texts[-1].remove()
    assert not cover_faults(fig)

    fig, axes = plt.subplots(1, 2)
    norm = matplotlib.colors.Normalize(0, 1)
    ims = [a.imshow(np.eye(2), norm=norm) for a in axes]
    assert len(colorbar_faults(fig)) == 2
    fig.colorbar(ims[1], ax=list(axes))
    assert not colorbar_faults(fig)  # (one bar for the maps of one norm)
    axes[0].imshow(np.eye(2))  # (a map of its own norm)
    assert len(colorbar_faults(fig)) == 1

    fig, axes = plt.subplots(1, 2)
    axes[0].imshow(np.ma.masked_all((2, 2)))
    axes[0].plot([0, 1], [0, 1], "o-")  # (a layout over the map is not a value)
    axes[1].plot([0, 1], [np.nan, np.nan])
    axes[1].axhline(1.0)
    assert len(empty_panel_faults(fig)) == 2
    axes[1].plot([0.5], [1.0], "o")
    assert len(empty_panel_faults(fig)) == 1
    plt.close("all")


# ----------------------------------------------------------------------------------------- the quick studies
@pytest.fixture(scope="module")
def figures(quick_study, tmp_path_factory):
    """{study: [figure as saved, ...]} of the quick studies of STUDIES: the session's runs (conftest.quick_study,
    shared with the other modules), their figures drawn again as the run draws them (the study's ``plot`` of the
    dataset and summary it returned, under the quick mark) into a folder of this module's."""
    out = {}
    for name in STUDIES:
        res, _ = quick_study(name)
        with kept_figures() as kept, figure_mark(QUICK_MARK.split(" (")[0]):
            get_study(name).plot(res.dataset, res.summary, tmp_path_factory.mktemp(name) / "figures")
        out[name] = list(kept)
    return out


@pytest.mark.parametrize("name", STUDIES)
def test_quick_figures_read(figures, name):
    """Every figure the quick study saves: tick labels apart, legends and notes off the data, a colour bar on every
    map, a resolved value on every panel."""
    figs = figures[name]
    assert figs, f"{name} saved no figure"
    faults = [f"{fig.get_label()}: {f}" for fig in figs for f in all_faults(fig)]
    assert not faults, "\n".join(faults)


def test_the_routing_maps(figures):
    """The routing maps: a page per condition, a colour bar per row of maps, no panel of only crosses; the grids
    left out at 100 mK and the T_star row in ideal conditions are said in the title."""
    figs = {f.get_label(): f for f in figures["routing"]}
    assert set(figs) == {"maps_ideal", "maps_realistic_0_mK", "maps_realistic_100_mK", "maps_by_temperature",
                         "leakage_lifetime_vs_grid"}
    for name in ("maps_ideal", "maps_realistic_0_mK", "maps_realistic_100_mK"):
        fig = figs[name]
        bars = [ax for ax in fig.axes if _is_colorbar(ax)]
        maps = [ax for ax in fig.axes if not _is_colorbar(ax)]
        rows = {round(ax.get_position().y0, 3) for ax in maps}
        assert len(bars) == len(rows) >= 1
    assert "not drawn" in figs["maps_ideal"]._suptitle.get_text()
    hot = figs["maps_realistic_100_mK"]
    assert "3x3 grid not run" in hot._suptitle.get_text()
    assert len([ax for ax in hot.axes if not _is_colorbar(ax)]) == 4  # (the 2x2 grid: tau_L, T_star, T1, T2)


def test_the_design_front(figures):
    """The design front: its legend and its note beside the axes, every confirmed point labelled."""
    (fig,) = figures["design"]
    (ax,) = fig.axes
    frame = ax.get_window_extent()
    assert ax.get_legend().get_window_extent().x0 >= frame.x1
    assert len([t for t in ax.texts if type(t).__name__ == "Annotation"]) >= 3
    for t in ax.texts:
        if type(t).__name__ != "Annotation":
            assert t.get_window_extent().x0 >= frame.x1  # (the note on unconfirmed front points)
