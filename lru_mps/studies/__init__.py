"""Studies: named recipes over many ensembles, with stored results, a table and figures.

Each study is a :class:`~lru_mps.studies.base.Study` in a module of its own
(``dynamics``, ``temperature_sweep``) or a package where it has parts (its computation, its points, its
table and figures: ``length_scaling``, ``routing``, ``tolerance``, ``rate_sweep``, ``disorder_hopping_sweeps``:
disorder-sweep and hopping-sweep, ``qec``, ``design``, ``logical``), named in its module's ``STUDIES``; its defaults are the
TOML file ``studies/<name>.toml`` (the only copy).  The class declares everything about the study (its options,
what it sweeps and refuses); this registry only finds studies by name.

    from lru_mps.studies import StudyContext, run_study
    res = run_study("length-scaling", StudyContext(out="runs/ls"), overrides={"lengths": "2:20"})
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path

from ..errors import ParameterError, require
from .base import Study, StudyContext, StudyResult, load_config

__all__ = ["Study", "StudyContext", "StudyResult", "get_study", "replot", "run_study", "study_names"]


def _registry() -> dict[str, Study]:
    """Every study, by name: the ``STUDIES`` of each module and package of this folder (and of any folder added
    to its ``__path__``), found once and then kept; a new study is a module of its own and its TOML file."""
    global _FOUND
    if _FOUND is None:
        found: dict[str, Study] = {}
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            module = importlib.import_module(f".{info.name}", __name__)
            for name, study in getattr(module, "STUDIES", {}).items():
                assert name not in found, f"study {name} declared twice"
                found[name] = study
        _FOUND = found
    return _FOUND


_FOUND: dict | None = None


def forget_studies() -> None:
    """Find the studies again on the next look-up (after a folder of one's own was added to ``__path__``)."""
    global _FOUND
    _FOUND = None


def study_names() -> list[str]:
    """Names of the studies that can be run, in alphabetical order."""
    return sorted(_registry())


def get_study(name: str) -> Study:
    """The study object of ``name``: NAME, HELP, DEFAULTS, QUICK, run, table, plot."""
    studies = _registry()
    if name not in studies:
        raise ParameterError("study", name, f"one of {', '.join(sorted(studies))}")
    return studies[name]


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
    study.refuse_device(cfg)
    study.refuse_geometry(cfg)
    return study.run(cfg, ctx)


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
    """Apply the study's ``SWEPT``: a single value of an option the study sweeps (set by the user, ``given``) runs
    alone: its list becomes that one value; given with its list, or where it has no list form, it is refused."""
    from .base import MODEL_KEYS

    study = get_study(name)
    assert all(o in MODEL_KEYS for o in study.SWEPT), f"{name}: SWEPT names a model option that is not one"
    for option, lists in study.SWEPT.items():
        if option not in given or cfg["model"].get(option) is None:
            continue
        value = cfg["model"][option]
        flag = "--" + option.replace("_", "-")
        if lists is None:
            raise ParameterError(option, value, f"not an option of the {name} study, which sweeps "
                                 + study.SWEPT_HOW[option])
        both = [k for k in lists if k in given]
        if both:
            raise ParameterError(option, value, f"one of {flag} and --{both[0].replace('_', '-')}",
                                 f"{flag} runs one value alone; give the list only, e.g. "
                                 f"--{both[0].replace('_', '-')} {value}")
        for key in lists:
            cfg[key] = [value] if isinstance(cfg.get(key), list) else str(value)
        cfg["model"][option] = None  # the resolved config holds the list (config.toml, the study's own checks)


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
