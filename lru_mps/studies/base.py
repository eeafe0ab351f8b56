"""The template every study follows (:class:`Study`), and the one place every study imports what it shares from.

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

The pieces live beside this module, and every name is re-exported here: the
config's resolution and TOML (:mod:`~lru_mps.studies.config_files`), the
running context and the output folder (:mod:`~lru_mps.studies.context`), the
summary's JSON numbers (:mod:`~lru_mps.studies.summary_json`), the figure
settings and :func:`save_figure` (:mod:`~lru_mps.studies.figures`).  This
module holds the template itself: :class:`Study`, the :class:`StudyOption` it
declares and the TOML file its defaults are read from.
"""

from __future__ import annotations

import copy
import tomllib
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from ..errors import ParameterError, require
from ..physics import domains
from .config_files import MODEL_KEYS, load_config, parse_lengths, to_toml
from .context import StudyContext, StudyResult, claim_folder, read_config, write_outputs
from .figures import (ALLOWED_FORMATS, FIGURE_FORMATS, TIME_UNIT_LABELS, TIME_UNITS, FigureSettings, figure_formats,
                      figure_mark, figure_settings, figure_time_unit, kept_figures, save_figure, time_axis, time_unit)
from .summary_json import MORE_SAMPLES, finite_or_none, parameters_json, time_json

__all__ = ["ALLOWED_FORMATS", "FIGURE_FORMATS", "MODEL_KEYS", "MORE_SAMPLES", "QUICK_MARK", "STUDY_FOLDERS",
           "TIME_UNITS", "TIME_UNIT_LABELS", "FigureSettings", "Study", "StudyContext", "StudyOption", "StudyResult",
           "claim_folder", "figure_formats", "figure_mark", "figure_settings", "figure_time_unit", "finite_or_none",
           "kept_figures", "load_config", "parameters_json", "parse_lengths", "read_config", "save_figure",
           "study_defaults", "time_axis", "time_json", "time_unit", "to_toml", "write_outputs"]

#: the line a --quick run's table starts with, and the mark on its figures
QUICK_MARK = "quick: a first look (a small sample; run without --quick for the study's numbers)"

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
