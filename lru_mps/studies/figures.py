"""How a study's figures are drawn and saved: the figure settings (file formats, the unit of the time axes, the
mark of a quick run, the lists a test keeps the saved figures in) and :func:`save_figure`.

The settings are one value, :class:`FigureSettings` (frozen), held in a :class:`contextvars.ContextVar`: the
context managers :class:`figure_formats`, :class:`figure_time_unit`, :class:`figure_mark` and
:class:`kept_figures` set a changed copy for the figures drawn inside them and put the previous one back on exit.
A context variable rather than an argument: the settings are read deep inside every study's ``plot`` (each time
axis, each saved file), and the ``plot(dataset, summary, figdir)`` hook every study implements stays as it is; a
context variable is also each thread's own, where the module-level stacks it replaces were shared.
"""

from __future__ import annotations

import contextvars
import dataclasses
from dataclasses import dataclass
from pathlib import Path

from ..errors import require

#: the file formats save_figure writes by default, and those matplotlib can write for it
FIGURE_FORMATS = ("png", "pdf")
ALLOWED_FORMATS = ("png", "pdf", "svg", "eps")
#: the units a figure's time axes can be drawn in (``lru-mps plot --time-unit``); the first is the default
TIME_UNITS = ("us", "1/J")
#: how each unit reads on an axis
TIME_UNIT_LABELS = {"us": "µs", "1/J": "1/J"}


@dataclass(frozen=True)
class FigureSettings:
    """What the figures being drawn follow: ``formats`` (the files :func:`save_figure` writes), ``time_unit`` (one
    of :data:`TIME_UNITS`: the unit of their time axes, :func:`time_axis`), ``mark`` (the text in each figure's
    lower right corner; None: none) and ``kept`` (the lists each saved figure is appended to, as saved)."""

    formats: tuple[str, ...] = FIGURE_FORMATS
    time_unit: str = TIME_UNITS[0]
    mark: str | None = None
    kept: tuple[list, ...] = ()


_SETTINGS: contextvars.ContextVar[FigureSettings] = contextvars.ContextVar("figure_settings",
                                                                         default=FigureSettings())


def figure_settings() -> FigureSettings:
    """The settings of the figures being drawn (the defaults outside every context manager of this module)."""
    return _SETTINGS.get()


class _FigureSetting:
    """While active, the figure settings with ``changes`` (the fields of :class:`FigureSettings`); the settings
    before are back on exit."""

    changes: dict

    def __enter__(self):
        self._token = _SETTINGS.set(dataclasses.replace(_SETTINGS.get(), **self.changes))
        return _SETTINGS.get()

    def __exit__(self, *exc):
        _SETTINGS.reset(self._token)


class figure_formats(_FigureSetting):
    """While active, :func:`save_figure` writes the figures in ``formats`` (e.g. ("svg",)) instead of PNG and PDF."""

    def __init__(self, formats):
        formats = tuple(formats)
        require(len(formats) >= 1 and all(f in ALLOWED_FORMATS for f in formats), "formats", ",".join(formats),
                f"a comma-separated list of {', '.join(ALLOWED_FORMATS)}")
        self.formats = formats
        self.changes = {"formats": formats}


class figure_time_unit(_FigureSetting):
    """While active, the figures drawn put their time axes in ``unit`` (one of :data:`TIME_UNITS`): see
    :func:`time_axis`."""

    def __init__(self, unit: str):
        require(unit in TIME_UNITS, "time_unit", unit, f"one of {', '.join(TIME_UNITS)}")
        self.unit = unit
        self.changes = {"time_unit": unit}


class figure_mark(_FigureSetting):
    """While active, every figure :func:`save_figure` writes carries ``text`` in its lower right corner (None: none)."""

    def __init__(self, text: str | None):
        self.text = text
        self.changes = {"mark": text}


class kept_figures(_FigureSetting):
    """While active, :func:`save_figure` also appends each figure it saves, as saved, to the list this returns
    (a test reads the rendered figures: their tick labels, legends and colour bars)."""

    def __enter__(self) -> list:
        self.kept = []
        self.changes = {"kept": (*_SETTINGS.get().kept, self.kept)}
        super().__enter__()
        return self.kept


def time_unit() -> str:
    """The unit of the time axes being drawn (:func:`figure_time_unit`; µs by default)."""
    return _SETTINGS.get().time_unit


def time_axis(us_per_J: float, what: str = "time") -> tuple[float, str]:
    """(factor, label) of a time axis: times in 1/J times ``factor`` are in the unit of :func:`time_unit`
    (``us_per_J``: the dataset's ``time_us_per_J``), and the label reads e.g. 'time (µs)' or 'time (1/J)'."""
    unit = time_unit()
    return (float(us_per_J) if unit == "us" else 1.0), f"{what} ({TIME_UNIT_LABELS[unit]})"


def save_figure(fig, figdir: Path, name: str) -> list[Path]:
    """Save a matplotlib figure as PNG and PDF, or the formats of :func:`figure_formats` (with the mark of
    :func:`figure_mark`, if any), its tick labels and legends laid out apart from each other and the data
    (:func:`lru_mps.studies.figure_layout.tidy`); returns the paths."""
    from .figure_layout import mark_below, tidy

    settings = _SETTINGS.get()
    figdir.mkdir(parents=True, exist_ok=True)
    tidy(fig)
    if settings.mark:
        mark_below(fig, settings.mark)
    fig.set_label(name)
    for kept in settings.kept:
        kept.append(fig)
    paths = []
    for ext in settings.formats:
        path = figdir / f"{name}.{ext}"
        fig.savefig(path, dpi=150, bbox_inches="tight")
        paths.append(path)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return paths
