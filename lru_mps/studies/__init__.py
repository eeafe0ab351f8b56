"""Studies: named recipes over many ensembles, with stored results and figures.

Each study module defines ``NAME``, ``DEFAULTS`` (the config, mirrored by
``studies/<NAME>.toml``), ``QUICK`` (overrides for ``--quick``),
``run(cfg, ctx) -> StudyResult`` and ``plot(dataset, summary, figdir)``.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from ..errors import ParameterError
from .base import StudyContext, StudyResult, load_config

_MODULES = {
    "length-scaling": "length_scaling",
    "rate-sweep": "sweeps",
    "disorder-sweep": "sweeps",
    "hopping-sweep": "sweeps",
    "dynamics": "sweeps",
}


def study_names() -> list[str]:
    """Names of the studies that can be run (their module imports)."""
    names = []
    for name, mod in _MODULES.items():
        try:
            module = importlib.import_module(f".{mod}", __name__)
        except ImportError:
            continue
        if name in getattr(module, "STUDIES", {name: None}) or getattr(module, "NAME", None) == name:
            names.append(name)
    return names


def get_study(name: str):
    """The study object of ``name``: has NAME, DEFAULTS, QUICK, run, plot."""
    if name not in _MODULES:
        raise ParameterError("study", name, f"one of {', '.join(_MODULES)}")
    module = importlib.import_module(f".{_MODULES[name]}", __name__)
    studies = getattr(module, "STUDIES", None)
    return studies[name] if studies is not None else module


DEFAULTS = {}


def defaults(name: str) -> dict:
    """The built-in default config of a study."""
    return get_study(name).DEFAULTS


def run_study(name: str, ctx: StudyContext, config_file=None, overrides: dict | None = None,
              quick: bool = False) -> StudyResult:
    """Resolve the config (defaults, --quick, file, overrides) and run the study."""
    study = get_study(name)
    base = dict(study.DEFAULTS)
    if quick:
        base = json.loads(json.dumps(base))
        for k, v in study.QUICK.items():
            if isinstance(v, dict):
                base[k] = {**base.get(k, {}), **v}
            else:
                base[k] = v
        base["quick"] = True
    cfg = load_config(name, base, config_file, overrides or {})
    return study.run(cfg, ctx)


def replot(folder) -> list[Path]:
    """Redraw the figures of a stored study from its results.nc and summary.json."""
    from ..io.datasets import load_dataset
    from .base import read_config

    folder = Path(folder)
    cfg = read_config(folder)
    study = get_study(cfg["study"])
    summary = json.loads((folder / "summary.json").read_text())
    return study.plot(load_dataset(folder / "results.nc"), summary, folder / "figures")
