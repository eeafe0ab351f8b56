"""The last step before a study's figure is saved: tick labels that do not run together, legends off the data.

:func:`tidy` is called by :func:`lru_mps.studies.base.save_figure` on every
figure.  It renders the figure once and measures what it drew:

* on an axis whose tick labels overlap (a log axis labelled at 1, 2 and 5 of
  every decade over many decades, say), the minor labels go first, then
  major ticks are thinned until the labels stand apart;
* a legend inside its axes that covers plotted data (markers, lines, error
  bars, bands) moves to the standard place that covers none, else to one
  that covers only reference lines (axhline, axvline), else out of the axes:
  to the right where no other panel is, else below.

:func:`mark_below` writes the quick run's mark under everything a figure
draws, and :func:`label_points` (called by a figure's code after its layout)
puts each point's label where it overlaps no other label and covers no
plotted point.  The figure code still decides what a figure shows and
where; this only moves a label or a legend where the rendered figure shows
it would hide something.  tests/test_figures.py checks the saved figures
with measurements of its own.
"""

from __future__ import annotations

import math

import numpy as np

#: the legend places tried inside an axes, in order (matplotlib's names)
INSIDE = ("upper right", "upper left", "lower left", "lower right", "center right", "center left", "upper center",
          "lower center", "right", "center")
#: points sampled per line segment between data vertices (a line crossing a legend counts, not only its markers)
SEGMENT_SAMPLES = 24


def tidy(fig) -> None:
    """Render ``fig`` and fix what would not read: overlapping tick labels, legends over the data (module doc)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    changed = False
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            changed |= _separate_tick_labels(fig, axis, renderer)
    for ax in fig.axes:
        changed |= _legend_off_data(fig, ax, renderer)
    if changed:
        fig.canvas.draw()


def mark_below(fig, text: str) -> None:
    """Write ``text`` (the quick run's mark) under everything ``fig`` draws, at its right edge (clear of any
    label or data; the saved figure's tight box takes it in)."""
    fig.canvas.draw()
    box = fig.get_tightbbox(fig.canvas.get_renderer())  # (inches)
    fig.text(box.x1 / fig.get_figwidth(), (box.y0 - 0.04) / fig.get_figheight(), text, ha="right", va="top",
             fontsize=7, color="C3")


# ------------------------------------------------------------------------------------------------ tick labels
def tick_label_boxes(axis, renderer) -> list:
    """The display boxes of the tick labels ``axis`` draws (non-empty, visible, at ticks inside its view)."""
    boxes = []
    for tick in axis._update_ticks():  # (the ticks drawn: inside the view interval)
        for label in (tick.label1, tick.label2):
            if label.get_visible() and label.get_text().strip():
                boxes.append(label.get_window_extent(renderer))
    return boxes


def overlapping(boxes, pad: float = 1.0) -> bool:
    """Whether any two of the display ``boxes`` overlap (closer than ``pad`` pixels)."""
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if a.x0 < b.x1 + pad and b.x0 < a.x1 + pad and a.y0 < b.y1 + pad and b.y0 < a.y1 + pad:
                return True
    return False


def _separate_tick_labels(fig, axis, renderer) -> bool:
    from matplotlib.ticker import LogLocator, MaxNLocator, NullFormatter

    if not axis.get_visible() or not overlapping(tick_label_boxes(axis, renderer)):
        return False
    axis.set_minor_formatter(NullFormatter())
    log = axis.get_scale() == "log"
    for n in range(len(axis.get_majorticklocs()) - 1, 1, -1):
        fig.canvas.draw()
        if not overlapping(tick_label_boxes(axis, renderer)):
            break
        axis.set_major_locator(LogLocator(base=10, numticks=n) if log else MaxNLocator(nbins=n, steps=[1, 2, 2.5, 5,
                                                                                                        10]))
    return True


# ------------------------------------------------------------------------------------------------ legends
def data_points(ax, reference: bool = False) -> np.ndarray:
    """Display coordinates of what ``ax`` plots inside it: the vertices of its lines and markers, points along the
    lines' segments, error bars and the edges of bands (``reference``: instead, the lines drawn across the axes in
    axes coordinates, axhline and axvline)."""
    from matplotlib.collections import LineCollection, PathCollection, PolyCollection

    pts = []
    for line in ax.lines:
        if not line.get_visible():
            continue
        if (not line.get_transform().contains_branch(ax.transData)) != reference:
            continue
        xy = np.asarray(line.get_xydata(), dtype=float)
        if not xy.size:
            continue
        xy = line.get_transform().transform(xy)
        pts.append(xy)
        if line.get_linestyle() not in ("None", "none", "", " "):
            pts.append(_along(xy))
    if not reference:
        for coll in ax.collections:
            if not coll.get_visible():
                continue
            if isinstance(coll, PathCollection) and len(coll.get_offsets()):
                pts.append(coll.get_offset_transform().transform(np.asarray(coll.get_offsets(), dtype=float)))
            elif isinstance(coll, LineCollection):
                for seg in coll.get_segments():
                    if len(seg):
                        pts.append(_along(coll.get_transform().transform(np.asarray(seg, dtype=float))))
            elif isinstance(coll, PolyCollection):
                for path in coll.get_paths():
                    if len(path.vertices):
                        pts.append(_along(coll.get_transform().transform(path.vertices)))
    if not pts:
        return np.zeros((0, 2))
    xy = np.concatenate(pts)
    xy = xy[np.isfinite(xy).all(axis=1)]
    box = ax.get_window_extent()
    inside = (xy[:, 0] >= box.x0) & (xy[:, 0] <= box.x1) & (xy[:, 1] >= box.y0) & (xy[:, 1] <= box.y1)
    return xy[inside]


def _along(xy: np.ndarray) -> np.ndarray:
    """Points along the segments of the polyline ``xy`` (display coordinates; a NaN breaks it)."""
    if len(xy) < 2:
        return xy
    s = np.linspace(0.0, 1.0, SEGMENT_SAMPLES)[:, None, None]
    return (xy[:-1][None] * (1 - s) + xy[1:][None] * s).reshape(-1, 2)


def covered(box, xy: np.ndarray, pad: float = 2.0) -> int:
    """How many of the display points ``xy`` lie inside ``box`` (grown by ``pad`` pixels)."""
    if not len(xy):
        return 0
    return int(np.count_nonzero((xy[:, 0] > box.x0 - pad) & (xy[:, 0] < box.x1 + pad) & (xy[:, 1] > box.y0 - pad)
                                & (xy[:, 1] < box.y1 + pad)))


def _legend_off_data(fig, ax, renderer) -> bool:
    leg = ax.get_legend()
    if leg is None or not leg.get_visible():
        return False
    box, frame = leg.get_window_extent(renderer), ax.get_window_extent(renderer)
    if not box.overlaps(frame):
        return False  # (already outside its axes)
    data, ref = data_points(ax), data_points(ax, reference=True)
    if not covered(box, data) and not covered(box, ref):
        return False
    pad = 2.0 * fig.dpi / 72.0  # (a marker's half width)
    scores = []
    for loc in INSIDE:
        leg.set_bbox_to_anchor(None)
        leg.set_loc(loc)
        b = leg.get_window_extent(renderer)
        scores.append((covered(b, data, pad), covered(b, ref, pad), loc))
    best = min(scores, key=lambda s: (s[0], s[1]))
    if best[0] == 0:
        leg.set_bbox_to_anchor(None)
        leg.set_loc(best[2])
        return True
    if not any(_beside(frame, other.get_window_extent(renderer)) for other in fig.axes if other is not ax):
        if getattr(leg, "_ncols", 1) > 1:  # beside the axes in one column (not as wide as the figure)
            texts = leg.get_texts()
            own = dict(zip(*ax.get_legend_handles_labels()[::-1]))  # (the plotted artists: errorbars keep markers)
            labels = [t.get_text() for t in texts]
            leg = ax.legend([own.get(t, h) for t, h in zip(labels, leg.legend_handles)], labels, ncols=1,
                            fontsize=texts[0].get_fontsize() if texts else None, title=leg.get_title().get_text()
                            or None)
        leg.set_loc("upper left")
        leg.set_bbox_to_anchor((1.02, 1.0), transform=ax.transAxes)
    else:  # below the axes' tick labels and x label
        leg.set_bbox_to_anchor(None)
        leg.set_visible(False)
        below = (ax.get_tightbbox(renderer).y0 - frame.y0) / frame.height
        leg.set_visible(True)
        leg.set_loc("upper center")
        leg.set_bbox_to_anchor((0.5, below - 0.02), transform=ax.transAxes)
    return True


def _beside(frame, other) -> bool:
    """Whether the display box ``other`` lies to the right of ``frame``, overlapping it in height."""
    return other.x0 >= frame.x1 - 1 and other.y0 < frame.y1 and frame.y0 < other.y1


# ------------------------------------------------------------------------------------------------ point labels
def _places() -> tuple:
    """Where a point's label may sit, in points from it: (dx, dy, ha, va), nearest first, twelve directions at each
    distance; the text's near corner or edge at the place."""
    out = []
    for r in (5.0, 12.0, 22.0, 34.0):
        for k in (1, 11, 5, 7, 2, 10, 4, 8, 3, 9, 0, 6):  # (the diagonals first, then the sides, then up and down)
            a = np.pi / 6 * k
            dx, dy = r * np.cos(a), r * np.sin(a)
            ha = "center" if abs(dx) < 0.3 * r else "left" if dx > 0 else "right"
            va = "center" if abs(dy) < 0.3 * r else "bottom" if dy > 0 else "top"
            out.append((round(dx, 1), round(dy, 1), ha, va))
    return tuple(out)


#: where a point's label may sit (:func:`_places`); the farther ones get a leader line
LABEL_PLACES = _places()


def label_points(ax, xy, texts, fontsize: float = 6, color: str = "0.2") -> list:
    """Label the data points ``xy`` with ``texts``, each at the place of :data:`LABEL_PLACES` (in that order of
    preference) where it overlaps no label placed before it, covers the fewest plotted points and stays inside the
    axes; call it after the axes' layout is final (tight_layout).  Returns the annotations."""
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    data = data_points(ax)
    frame = ax.get_window_extent(renderer)
    pad = 5.0 * fig.dpi / 72.0  # (a big marker's half width: a label clear of the points' markers)
    placed, out = [], []
    for (x, y), text in zip(xy, texts):
        if not (np.isfinite(x) and np.isfinite(y)):
            continue
        best = None
        for rank, (dx, dy, ha, va) in enumerate(LABEL_PLACES):
            a = ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va,
                            fontsize=fontsize, color=color)
            b = a.get_window_extent(renderer)
            a.remove()
            clash = sum(overlapping([b, p], pad=1.0) for p in placed)
            outside = not (b.x0 >= frame.x0 and b.x1 <= frame.x1 and b.y0 >= frame.y0 and b.y1 <= frame.y1)
            score = (clash, outside, covered(b, data, 1.0), covered(b, data, pad), rank)
            if best is None or score < best[0]:
                best = (score, (dx, dy, ha, va), b)
        (dx, dy, ha, va), box = best[1], best[2]
        far = math.hypot(dx, dy) > 6
        a = ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va, fontsize=fontsize,
                        color=color, arrowprops={"arrowstyle": "-", "color": "0.6", "lw": 0.5,
                                                 "shrinkA": 0, "shrinkB": 3} if far else None)
        placed.append(box)
        out.append(a)
    return out
