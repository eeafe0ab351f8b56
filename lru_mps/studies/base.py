"""What every study shares: configuration, running context, outputs.

A study is a named recipe (length-scaling, rate-sweep, ...) whose defaults
are the TOML file ``studies/<name>.toml`` (installed as the package
``lru_mps_studies``; the code reads it, there is no second copy).  A user
copies one, edits it and passes it with ``--config``, or overrides fields on
the command line; ``--quick`` applies the file's ``[quick]`` table.  Every
study follows one template (:class:`Study`): resolve the config, compute its
ensembles into a dataset and a summary, then write, tabulate and plot.
Running a study writes into one output folder:

``config.toml``     the resolved configuration (defaults + file + overrides)
``results.nc``      an xarray Dataset with everything the figures need
``summary.json``    the JSON object that ``--json`` prints
``figures/``        PNG and PDF figures (redrawn by ``lru-mps plot DIR``)
``work/``           finished blocks of trajectories; rerunning the same
                    command after an interruption continues from them and
                    ends with exactly the numbers of an uninterrupted run.

A folder's results belong to one configuration: rerunning into it with other
options is refused with the keys that differ (:func:`claim_folder`).
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
import json
import math
import os
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from ..errors import ParameterError, require
from ..atomic import atomic_write_bytes
from ..physics import domains

#: model fields of a study config, with the names of `lru-mps simulate`'s options
MODEL_KEYS = ("length", "hopping", "anharmonicity", "frequency", "disorder", "reset", "rate", "conditions", "t1",
              "tphi", "temperature", "e2_spread", "frequency_noise", "disorder_pattern", "hopping_spread",
              "readout_error", "readout_confusion", "device", "thermal_bath", "hopping_profile",
              "geometry", "start_site", "reset_site")


@dataclass
class StudyContext:
    """Where and how a study runs (not physics)."""

    out: Path
    workers: int = 1
    #: a :class:`lru_mps.run.progress.Progress` (stage k of n, trajectories, rate, time left), or None
    progress: object = None
    quiet: bool = False
    #: a dask.distributed Client or scheduler address: run the blocks on a cluster
    client: object = None
    #: array library of the batched engines (numpy, torch, torch:cuda, cupy; lru_mps.engines.common.arraylib)
    backend: str = "numpy"

    def __post_init__(self):
        self.out = Path(self.out)

    def plan(self, stages: int) -> None:
        """Announce the number of ensembles ("stages") the study will run, for the progress display."""
        if self.progress is not None:
            self.progress.plan(stages)

    def run_options(self, label: str) -> dict:
        """The keyword arguments of :func:`lru_mps.run.simulate.simulate` that say where and how to run."""
        from ..run.executors import client_for

        self.client = client_for(self.client)
        return {"workers": self.workers, "cache": self.cache, "progress": self.report(label), "client": self.client,
                "backend": self.backend}

    @property
    def cache(self) -> Path:
        """The folder of the study's finished blocks of trajectories (``work/`` in its output folder)."""
        return self.out / "work"

    def report(self, label: str):
        """Start a stage: a progress callback (done, total) for its trajectories."""
        if self.progress is None:
            return None
        return self.progress.stage(label)


def parse_lengths(text) -> list[int]:
    """'2:40' (every L), '2:40:2' (step), '2,4,8,16' or a list -> sorted unique lengths >= 2."""
    if isinstance(text, (list, tuple)):
        values = [int(x) for x in text]
    else:
        text = str(text).strip()
        try:
            if ":" in text:
                parts = [int(p) for p in text.split(":")]
                require(len(parts) in (2, 3), "lengths", text, "'start:stop' or 'start:stop:step' or a list '2,4,8'")
                step = parts[2] if len(parts) == 3 else 1
                require(step >= 1, "lengths", text, "a positive step")
                values = list(range(parts[0], parts[1] + 1, step))
            else:
                values = [int(p) for p in text.split(",") if p.strip()]
        except ValueError:
            raise ParameterError("lengths", text, "'start:stop', 'start:stop:step' or a list like '2,4,8,16'") from None
    require(len(values) >= 1 and min(values) >= 2, "lengths", text, "lengths L >= 2")
    return sorted(set(values))


#: the folders the studies' TOML files are read from (the installed ``lru_mps_studies``; a study of one's own adds
#: its folder here)
STUDY_FOLDERS: list = [resources.files("lru_mps_studies")]


@lru_cache(maxsize=None)
def _study_file(name: str) -> dict:
    for folder in STUDY_FOLDERS:
        path = folder.joinpath(f"{name}.toml")
        if path.is_file():
            with path.open("rb") as fh:
                return tomllib.load(fh)
    raise ParameterError("study", name, f"a study with its TOML file {name}.toml in "
                         + ", ".join(str(f) for f in STUDY_FOLDERS))


def study_defaults(name: str) -> tuple[dict, dict]:
    """(defaults, quick overrides) of a study, from its TOML file (copies)."""
    data = copy.deepcopy(_study_file(name))
    quick = data.pop("quick", {})
    return data, quick


def load_config(name: str, defaults: dict, config_file: str | os.PathLike | None, overrides: dict) -> dict:
    """Defaults, then a TOML file, then command-line overrides (None = not given)."""
    cfg = json.loads(json.dumps(defaults))  # deep copy
    if config_file is not None:
        path = Path(config_file)
        if not path.exists():
            raise ParameterError("config", str(config_file), "an existing TOML file")
        with open(path, "rb") as fh:
            try:
                data = tomllib.load(fh)
            except tomllib.TOMLDecodeError as err:
                raise ParameterError("config", str(config_file), f"valid TOML ({err})") from None
        if data.get("study", name) != name:
            raise ParameterError("config", str(config_file), f"a '{name}' study file (it says study = {data['study']!r})")
        _merge(cfg, data, str(config_file))
    for key, value in overrides.items():
        if value is None:
            continue
        if key in cfg and not isinstance(cfg[key], dict):
            cfg[key] = value  # a study-level key (e.g. conditions: ideal|realistic|both)
        elif key in MODEL_KEYS:
            cfg.setdefault("model", {})[key] = value
        else:
            cfg[key] = value
    return cfg


def _merge(cfg: dict, data: dict, where: str) -> None:
    from ..run.settings import MPS_USER_OPTIONS  # the MPS options a study accepts (command line or TOML)

    for key, value in data.items():
        if key in MPS_USER_OPTIONS:
            cfg[key] = value
            continue
        if key == "quick":  # a copied study file keeps its [quick] table: only --quick reads it
            continue
        if key not in cfg:
            raise ParameterError(key, value, f"one of the keys of this study ({', '.join(sorted(cfg))})", f"in {where}")
        if isinstance(cfg[key], dict) and key != "model":  # a per-length table (e.g. { 20 = 5 }): replaced whole
            require(isinstance(value, dict), key, value, "a table, e.g. { 20 = 5 }", f"in {where}")
            cfg[key] = value
        elif isinstance(cfg[key], dict):
            require(isinstance(value, dict), key, value, "a table", f"in {where}")
            for k, v in value.items():
                require(k in MODEL_KEYS or k in cfg[key], f"{key}.{k}", v, f"one of {', '.join(cfg[key])}", f"in {where}")
                cfg[key][k] = v
        else:
            cfg[key] = value


def to_toml(cfg: dict) -> str:
    """A small TOML writer for flat tables of strings, numbers and booleans."""

    def val(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(val(x) for x in v) + "]"
        return json.dumps(str(v))

    lines = [f"{k} = {val(v)}" for k, v in cfg.items() if not isinstance(v, dict) and v is not None]
    for k, v in cfg.items():
        if isinstance(v, dict):
            lines += ["", f"[{k}]"] + [f"{kk} = {val(vv)}" for kk, vv in v.items() if vv is not None]
    return "\n".join(lines) + "\n"


def claim_folder(ctx: StudyContext, cfg: dict) -> None:
    """Take ``ctx.out`` for the study of ``cfg``: refuse a folder that holds the results of a run with other options
    (a rerun with the same options resumes; a folder without results, e.g. of an interrupted run, is taken).

    A folder's config.toml is the resolved configuration its results were
    computed with; rerunning with different options would replace them, so
    the keys that differ are named instead and nothing runs.  (The blocks in
    ``work/`` are keyed by what determines their numbers: other options
    never reuse them.)
    """
    path = ctx.out / "config.toml"
    new = tomllib.loads(to_toml(cfg))
    if path.exists() and (ctx.out / "results.nc").exists():
        try:
            with open(path, "rb") as fh:
                old = tomllib.load(fh)
        except tomllib.TOMLDecodeError:
            raise ParameterError("out", str(ctx.out), "a new folder, or a study folder with its config.toml",
                                 "its config.toml cannot be read: pass another --out, or delete the folder") from None
        if old.get("study") != new.get("study"):
            raise ParameterError("out", str(ctx.out), "a new folder, or one of the same study",
                                 f"it holds a {old.get('study')} study's results, not {new.get('study')}'s: "
                                 "pass another --out")
        differ = _differing(old, new)
        if differ:
            shown = "; ".join(f"{k} = {o!r} there, {n!r} now" for k, o, n in differ[:4]) + \
                (f"; and {len(differ) - 4} more" if len(differ) > 4 else "")
            raise ParameterError(
                "out", str(ctx.out), "a new folder, or this one with the options it was run with",
                f"it holds a {old.get('study', 'study')} run whose {', '.join(k for k, _, _ in differ)} "
                f"{'differs' if len(differ) == 1 else 'differ'} ({shown}); "
                "pass another --out to keep both, or delete the folder to replace it")


def _differing(old: dict, new: dict) -> list[tuple[str, object, object]]:
    """(key, old value, new value) where two configs differ; tables by their keys (``model.t1``)."""
    def flat(d, prefix=""):
        out = {}
        for k, v in d.items():
            if isinstance(v, dict):
                out.update(flat(v, f"{prefix}{k}."))
            else:
                out[f"{prefix}{k}"] = v
        return out

    a, b = flat(old), flat(new)
    return [(k, a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def write_outputs(ctx: StudyContext, cfg: dict, dataset, summary: dict) -> None:
    """config.toml, results.nc and summary.json, each written atomically."""
    ctx.out.mkdir(parents=True, exist_ok=True)
    from ..io.datasets import write_dataset

    atomic_write_bytes(ctx.out / "config.toml", to_toml(cfg).encode())
    write_dataset(dataset, ctx.out / "results.nc")
    atomic_write_bytes(ctx.out / "summary.json", (json.dumps(summary, indent=2, default=_json_default) + "\n").encode())


def _json_default(x):
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(type(x))


def finite_or_none(x):
    """JSON-friendly float: None for nan/inf/None."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


#: what resolves a time whose error is half of it or more (the remedy of :func:`time_json`'s reason)
MORE_SAMPLES = "more trajectories (or disorder realizations) resolve it"


def time_json(value_J, error_J, J_hz: float, reason: str | None = None, remedy: str = MORE_SAMPLES,
              flags: list[str] | None = None) -> dict:
    """{"value_J", "error_J", "value_us", "error_us"} with None where not available; "reason" where the value is not a
    result: why it is None (``reason``: why it is not there and what would give it), or why a value whose error is
    half of it or more is not resolved (:func:`lru_mps.analysis.numbers.resolution_reason`, with ``remedy``); "flags" where
    it passes a physical bound by more than its error (:mod:`lru_mps.analysis.numbers`: bound_flag, t2_flags)."""
    from ..analysis.numbers import resolution_reason
    from ..physics.units import time_to_us

    v, e = finite_or_none(value_J), finite_or_none(error_J)
    out = {
        "value_J": v,
        "error_J": e,
        "value_us": None if v is None else time_to_us(v, J_hz),
        "error_us": None if e is None else time_to_us(e, J_hz),
    }
    if v is None and reason:
        out["reason"] = reason
    elif v is not None:
        why = resolution_reason(out["value_us"], out["error_us"], remedy, "us")
        if why:
            out["reason"] = f"not resolved: {why}"
    if flags:
        out["flags"] = list(flags)
    return out


def parameters_json(spec, swept: dict[str, str] | None = None, **extra) -> dict:
    """The JSON ``parameters`` of a study: ``spec.as_dict()`` with the ``swept`` keys None (each with its
    ``<key>_reason``: where the swept values are), ``extra`` keys added, and a reason beside every other null (an
    infinite T1q or Tphi: no such decay)."""
    from ..analysis.numbers import with_parameter_reasons

    out = {**spec.as_dict(), **extra}
    for key, why in (swept or {}).items():
        out[key] = None
        out[f"{key}_reason"] = why
    return with_parameter_reasons(out)


@dataclass
class StudyResult:
    """What a study returns: its output folder, summary (the JSON) and a printable table."""

    name: str
    out: Path
    summary: dict
    table: str
    dataset: object = field(default=None, repr=False)


def read_config(folder) -> dict:
    """The resolved config.toml of a stored study (with a clear error if the folder is not one)."""
    path = Path(folder) / "config.toml"
    if not path.exists() or not (Path(folder) / "results.nc").exists():
        raise ParameterError("folder", str(folder), "a study output folder (with config.toml and results.nc)")
    with open(path, "rb") as fh:
        return tomllib.load(fh)


#: the line a --quick run's table starts with, and the mark on its figures
QUICK_MARK = "quick: a first look (a small sample; run without --quick for the study's numbers)"
#: the mark save_figure puts on the figures being drawn (set by :func:`figure_mark`)
_FIGURE_MARK: list[str] = []
#: the file formats save_figure writes (set by :func:`figure_formats`), and those matplotlib can write for it
FIGURE_FORMATS = ("png", "pdf")
ALLOWED_FORMATS = ("png", "pdf", "svg", "eps")
_FORMATS: list[tuple[str, ...]] = []


class figure_formats:
    """While active, :func:`save_figure` writes the figures in ``formats`` (e.g. ("svg",)) instead of PNG and PDF."""

    def __init__(self, formats):
        formats = tuple(formats)
        require(len(formats) >= 1 and all(f in ALLOWED_FORMATS for f in formats), "formats", ",".join(formats),
                f"a comma-separated list of {', '.join(ALLOWED_FORMATS)}")
        self.formats = formats

    def __enter__(self):
        _FORMATS.append(self.formats)

    def __exit__(self, *exc):
        _FORMATS.pop()


#: the units a figure's time axes can be drawn in (``lru-mps plot --time-unit``); the first is the default
TIME_UNITS = ("us", "1/J")
#: the unit the time axes being drawn use (set by :func:`figure_time_unit`)
_TIME_UNIT: list[str] = []
#: how each unit reads on an axis
TIME_UNIT_LABELS = {"us": "µs", "1/J": "1/J"}


class figure_time_unit:
    """While active, the figures drawn put their time axes in ``unit`` (one of :data:`TIME_UNITS`): see
    :func:`time_axis`."""

    def __init__(self, unit: str):
        require(unit in TIME_UNITS, "time_unit", unit, f"one of {', '.join(TIME_UNITS)}")
        self.unit = unit

    def __enter__(self):
        _TIME_UNIT.append(self.unit)

    def __exit__(self, *exc):
        _TIME_UNIT.pop()


def time_unit() -> str:
    """The unit of the time axes being drawn (:func:`figure_time_unit`; µs by default)."""
    return _TIME_UNIT[-1] if _TIME_UNIT else TIME_UNITS[0]


def time_axis(us_per_J: float, what: str = "time") -> tuple[float, str]:
    """(factor, label) of a time axis: times in 1/J times ``factor`` are in the unit of :func:`time_unit`
    (``us_per_J``: the dataset's ``time_us_per_J``), and the label reads e.g. 'time (µs)' or 'time (1/J)'."""
    unit = time_unit()
    return (float(us_per_J) if unit == "us" else 1.0), f"{what} ({TIME_UNIT_LABELS[unit]})"


class figure_mark:
    """While active, every figure :func:`save_figure` writes carries ``text`` in its lower right corner (None: none)."""

    def __init__(self, text: str | None):
        self.text = text

    def __enter__(self):
        _FIGURE_MARK.append(self.text)

    def __exit__(self, *exc):
        _FIGURE_MARK.pop()


#: the lists that :func:`save_figure` appends each figure it saves to (set by :func:`kept_figures`)
_KEPT: list[list] = []


class kept_figures:
    """While active, :func:`save_figure` also appends each figure it saves, as saved, to the list this returns
    (a test reads the rendered figures: their tick labels, legends and colour bars)."""

    def __enter__(self) -> list:
        _KEPT.append([])
        return _KEPT[-1]

    def __exit__(self, *exc):
        _KEPT.pop()


def save_figure(fig, figdir: Path, name: str) -> list[Path]:
    """Save a matplotlib figure as PNG and PDF, or the formats of :func:`figure_formats` (with the mark of
    :func:`figure_mark`, if any), its tick labels and legends laid out apart from each other and the data
    (:func:`lru_mps.studies.figure_layout.tidy`); returns the paths."""
    from .figure_layout import mark_below, tidy

    figdir.mkdir(parents=True, exist_ok=True)
    tidy(fig)
    if _FIGURE_MARK and _FIGURE_MARK[-1]:
        mark_below(fig, _FIGURE_MARK[-1])
    fig.set_label(name)
    for kept in _KEPT:
        kept.append(fig)
    paths = []
    for ext in (_FORMATS[-1] if _FORMATS else FIGURE_FORMATS):
        path = figdir / f"{name}.{ext}"
        fig.savefig(path, dpi=150, bbox_inches="tight")
        paths.append(path)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return paths


@dataclass(frozen=True)
class StudyOption:
    """An option of a study's own (``--lengths``, ``--grids``, ...), declared by the study and made a command-line
    option by the CLI: ``key`` is the study's TOML key (the option is ``--<key with dashes>``), ``help`` what it
    means, with an example; the help's default is read from the study's TOML file (no copy).  ``kind``: "text"
    (parsed by the study), "int", or a tuple of the values allowed; ``each``: a physical quantity every item of
    the list is held to (:mod:`lru_mps.physics.domains`: "temperature", "anharmonicity"), refused by the option's
    name before the study starts."""

    key: str
    help: str
    kind: object = "text"
    each: str | None = None


class Study(ABC):
    """The template every study follows: ``compute`` its ensembles, then write, tabulate and plot.

    A subclass is the whole declaration of a study: ``NAME`` (its TOML file
    is ``studies/<NAME>.toml``), ``HELP`` (the text of ``lru-mps study NAME
    --help``: what it computes, which figure of the paper it extends, how
    long the default takes), its own options (``OPTIONS``), the model
    options it sweeps and how (``SWEPT``, ``SWEPT_HOW``), what it refuses
    (``REFUSES_DEVICE``, :meth:`refuse_geometry`), and it implements
    ``compute(cfg, ctx) -> (dataset, summary)``, ``table(summary)`` and
    ``plot(dataset, summary, figdir)``.  The registry
    (:mod:`lru_mps.studies`) finds it by name in its module's ``STUDIES``.
    """

    NAME = ""
    HELP = ""
    #: the study's own command-line options (:class:`StudyOption`), in the order of its --help
    OPTIONS: tuple = ()
    #: the model options the study sweeps, each with the study keys of its list form: one rule for every pair
    #: (``-L``/``--lengths``, ``--temperature``/``--temperatures``): the single value runs alone (a list of one),
    #: both together are refused with one line; None: the option has no list form here and is refused, saying how
    #: the study sweeps it (``SWEPT_HOW``)
    SWEPT: dict = {}
    #: how the study sweeps each option of ``SWEPT`` it takes no single value of
    SWEPT_HOW: dict = {}
    #: why the study refuses a device file ("" where it takes one): it sweeps what a device file fixes
    REFUSES_DEVICE = ""
    #: the units ``plot`` can draw its time axes in (:func:`time_axis`); a study whose figures have no time axis
    #: lists both (they draw the same)
    TIME_UNITS: tuple[str, ...] = ("us",)
    #: why the other units are refused (the hint of ``lru-mps plot --time-unit``'s error); "" where none is said
    TIME_UNITS_WHY = ""

    @property
    def DEFAULTS(self) -> dict:
        """The study's default configuration (its TOML file without the [quick] table)."""
        return study_defaults(self.NAME)[0]

    @property
    def QUICK(self) -> dict:
        """What --quick replaces (the TOML file's [quick] table)."""
        return study_defaults(self.NAME)[1]

    def run(self, cfg: dict, ctx: StudyContext) -> StudyResult:
        """Claim ``ctx.out`` (:func:`claim_folder`: a folder of other options is refused), compute, then write
        config.toml, results.nc, summary.json and the figures into it."""
        claim_folder(ctx, cfg)
        with domains.recorded() as notes:  # values at the edge of their domain (shown as raised, and kept)
            dataset, summary = self.compute(cfg, ctx)
        if cfg.get("quick"):
            summary["quick"] = True
        if notes:
            summary["warnings"] = notes  # (absent inside the domain: earlier summaries unchanged)
        table = self.table(summary)
        if summary.get("quick"):
            table = f"{QUICK_MARK}\n\n{table}"
        table += "".join(f"\nWarning: {w}" for w in notes)
        write_outputs(ctx, cfg, dataset, summary)
        with figure_mark(QUICK_MARK.split(" (")[0] if summary.get("quick") else None):
            self.plot(dataset, summary, ctx.out / "figures")
        return StudyResult(self.NAME, ctx.out, summary, table, dataset)

    def refuse_geometry(self, cfg: dict) -> None:
        """Refuse a graph, or another start or reset site, in the config's model table: a study runs chains (the
        qubit at site 1, the reset at site L) unless it says otherwise."""
        model = cfg.get("model", {})
        geometry = model.get("geometry")
        require(geometry is None or str(geometry).strip().lower() == "chain", "geometry", geometry,
                f"chain: study {self.NAME} runs chains; use lru-mps simulate for a graph")
        for key in ("start_site", "reset_site"):
            require(model.get(key) is None, key, model.get(key),
                    f"the chain's own site: study {self.NAME} runs chains with the qubit at site 1 and the reset at "
                    "site L; use lru-mps simulate for other sites")

    def refuse_device(self, cfg: dict) -> None:
        """Refuse a device file (``device`` in the model table) where the study sweeps what it fixes
        (``REFUSES_DEVICE`` says what), with one line naming the key, the study and why."""
        device = cfg.get("model", {}).get("device")
        if device is None or not self.REFUSES_DEVICE:
            return
        require(False, "device", device, f"none on the {self.NAME} study ({self.REFUSES_DEVICE})",
                "run lru-mps simulate --device, or a study that keeps the array: dynamics, qec, rate-sweep")

    def check_given(self, cfg: dict, given: set) -> None:
        """Refuse what the user set (``given``: the keys set in a config file or as overrides) where the resolved
        ``cfg`` would ignore it; the default accepts everything."""

    # The three hooks every study module implements (the template's abstract steps; every study's --quick run is a test).
    @abstractmethod
    def compute(self, cfg: dict, ctx: StudyContext):
        """Run the study's ensembles: (xarray Dataset, summary dict)."""

    @abstractmethod
    def table(self, summary: dict) -> str:
        """The printed table of a summary."""

    @abstractmethod
    def plot(self, dataset, summary: dict, figdir) -> list:
        """Write the figures into ``figdir``; the paths written."""
