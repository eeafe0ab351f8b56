"""Where and how a study runs, and what it leaves: the :class:`StudyContext` (output folder, workers, progress,
cluster, array library), the claim on the output folder (:func:`claim_folder`: a folder of other options is
refused), its ``config.toml``, ``results.nc`` and ``summary.json`` (:func:`write_outputs`, :func:`read_config`) and
the :class:`StudyResult` a study returns."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..atomic import atomic_write_bytes
from ..errors import ParameterError
from .config_files import to_toml


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
