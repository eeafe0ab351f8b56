"""Studies: named recipes over many ensembles, with stored results, a table and figures.

Each study is a :class:`~lru_mps.studies.base.Study` in a module of its own
(``rate_sweep``, ``disorder_hopping_sweeps``: disorder-sweep and hopping-sweep, ``dynamics``,
``temperature_sweep``, ``tolerance``) or a package where it has parts
(``length_scaling``, ``qec``, ``design``, ``logical``), registered in its ``STUDIES``; its defaults are the TOML file ``studies/<name>.toml`` (the only copy).

    from lru_mps.studies import StudyContext, run_study
    res = run_study("length-scaling", StudyContext(out="runs/ls"), overrides={"lengths": "2:20"})
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from ..errors import ParameterError, require
from .base import Study, StudyContext, StudyResult, load_config

#: study name -> module that defines it
_MODULES = {
    "length-scaling": "length_scaling",
    "rate-sweep": "rate_sweep",
    "disorder-sweep": "disorder_hopping_sweeps",
    "hopping-sweep": "disorder_hopping_sweeps",
    "dynamics": "dynamics",
    "temperature-sweep": "temperature_sweep",
    "tolerance": "tolerance",
    "qec": "qec",
    "design": "design",
    "routing": "routing",
    "logical": "logical",
}

#: the model options each study sweeps, and the study key of their list: one rule for every pair (``-L``/``--lengths``,
#: ``--temperature``/``--temperatures``, ...): the single value runs alone (a list of one), both together are
#: refused with one line; None: the option has no list form here (the study sweeps it its own way) and is refused
SWEPT_OPTIONS = {
    "length-scaling": {"length": ("lengths", "realistic_lengths")},
    "rate-sweep": {"reset": ("resets",), "rate": None},
    "disorder-sweep": {"disorder": ("disorders",)},
    "hopping-sweep": {"hopping": ("hoppings",)},
    "dynamics": {"rate": ("rates",)},
    "temperature-sweep": {"length": ("lengths",), "temperature": ("temperatures",)},
    "tolerance": {"length": ("lengths",)},
    "qec": {},
    "design": {"length": ("lengths",), "disorder": ("disorders",), "hopping": ("hoppings",),
               "anharmonicity": ("anharmonicities",), "disorder_pattern": ("disorder_patterns",), "reset": ("resets",),
               "rate": None, "hopping_profile": ("hopping_profiles",)},
    "routing": {"length": None, "temperature": ("temperatures",)},
    "logical": {},
}
#: how a study sweeps the options it takes no single value of
_SWEPT_HOW = {("rate-sweep", "rate"): "the rate from rate_min to rate_max (--rate has no effect here)",
              ("design", "rate"): "the rates as rate_factors x each candidate's analytic optimum (--rate-factors)",
              ("routing", "length"): "its layouts' sizes from the grids and LRUs (--grids, --lrus, --lru-arm)"}

__all__ = ["Study", "StudyContext", "StudyResult", "get_study", "replot", "run_study", "study_names"]


def study_names() -> list[str]:
    """Names of the studies that can be run."""
    return list(_MODULES)


def get_study(name: str) -> Study:
    """The study object of ``name``: NAME, HELP, DEFAULTS, QUICK, run, table, plot."""
    if name not in _MODULES:
        raise ParameterError("study", name, f"one of {', '.join(_MODULES)}")
    return importlib.import_module(f".{_MODULES[name]}", __name__).STUDIES[name]


def run_study(name: str, ctx: StudyContext, config_file=None, overrides: dict | None = None,
              quick: bool = False) -> StudyResult:
    """Resolve the config (the study's TOML, its [quick] table with ``quick``, a file, overrides) and run it."""
    study = get_study(name)
    base = study.DEFAULTS
    if quick:
        for k, v in study.QUICK.items():
            base[k] = {**base.get(k, {}), **v} if isinstance(v, dict) else v
        base["quick"] = True
    cfg = load_config(name, base, config_file, overrides or {})
    given = given_keys(config_file, overrides or {})
    single_values(name, cfg, given)
    study.check_given(cfg, given)
    from .common import refuse_device  # (the studies that sweep what a device file fixes refuse it)

    refuse_device(cfg, name)
    refuse_geometry(cfg, name)
    return study.run(cfg, ctx)


def refuse_geometry(cfg: dict, name: str) -> None:
    """Every study runs chains (the qubit at site 1, the reset at site L): a graph, or another start or reset
    site, in its model table or options is refused with one line naming the key."""
    model = cfg.get("model", {})
    geometry = model.get("geometry")
    if name == "routing":  # (it builds its own graphs)
        for key in ("geometry", "start_site", "reset_site"):
            require(model.get(key) is None, key, model.get(key), "not set: study routing builds its layouts from "
                    "grids, lrus and lru_arm, and starts on every coding site in turn")
        return
    require(geometry is None or str(geometry).strip().lower() == "chain", "geometry", geometry,
            f"chain: study {name} runs chains; use lru-mps simulate for a graph")
    for key in ("start_site", "reset_site"):
        require(model.get(key) is None, key, model.get(key),
                f"the chain's own site: study {name} runs chains with the qubit at site 1 and the reset at site L; "
                "use lru-mps simulate for other sites")


def given_keys(config_file, overrides: dict) -> set:
    """The keys the user set: those of the config file (already read by load_config, its [model] table's too) and
    the overrides given."""
    keys = {k for k, v in overrides.items() if v is not None}
    if config_file is not None:
        import tomllib

        with open(config_file, "rb") as fh:
            data = tomllib.load(fh)
        keys |= set(data) | set(data.get("model", {}) if isinstance(data.get("model"), dict) else {})
    return keys


def single_values(name: str, cfg: dict, given: set) -> None:
    """Apply :data:`SWEPT_OPTIONS`: a single value of an option the study sweeps (set by the user, ``given``) runs
    alone: its list becomes that one value; given with its list, or where it has no list form, it is refused."""
    from .base import MODEL_KEYS

    for option, lists in SWEPT_OPTIONS.get(name, {}).items():
        if option not in given or cfg["model"].get(option) is None:
            continue
        value = cfg["model"][option]
        flag = "--" + option.replace("_", "-")
        if lists is None:
            raise ParameterError(option, value, f"not an option of the {name} study, which sweeps "
                                 + _SWEPT_HOW[(name, option)])
        both = [k for k in lists if k in given]
        if both:
            raise ParameterError(option, value, f"one of {flag} and --{both[0].replace('_', '-')}",
                                 f"{flag} runs one value alone; give the list only, e.g. "
                                 f"--{both[0].replace('_', '-')} {value}")
        for key in lists:
            cfg[key] = [value] if isinstance(cfg.get(key), list) else str(value)
        cfg["model"][option] = None  # the resolved config holds the list (config.toml, the study's own checks)
    assert all(o in MODEL_KEYS for opts in SWEPT_OPTIONS.values() for o in opts)


def replot(folder, formats=None, time_unit: str | None = None) -> list[Path]:
    """Redraw the figures of a stored study from its results.nc and summary.json (``formats``: e.g. ("svg", "png");
    default PNG and PDF; ``time_unit``: the unit of the time axes, "us" (the default) or "1/J")."""
    from ..errors import require
    from ..io.datasets import load_dataset
    from .base import FIGURE_FORMATS, QUICK_MARK, TIME_UNITS, figure_formats, figure_mark, figure_time_unit, read_config

    folder = Path(folder)
    cfg = read_config(folder)
    study = get_study(cfg["study"])
    summary = json.loads((folder / "summary.json").read_text())
    unit = time_unit or TIME_UNITS[0]
    require(unit in TIME_UNITS, "time_unit", unit, f"one of {', '.join(TIME_UNITS)}")
    require(unit in study.TIME_UNITS, "time_unit", unit,
            f"{' or '.join(study.TIME_UNITS)}: the {study.NAME} study draws its time axes in "
            f"{' or '.join(study.TIME_UNITS)} only", study.TIME_UNITS_WHY or None)
    with figure_mark(QUICK_MARK.split(" (")[0] if summary.get("quick") else None), \
            figure_formats(formats or FIGURE_FORMATS), figure_time_unit(unit):
        return study.plot(load_dataset(folder / "results.nc"), summary, folder / "figures")
