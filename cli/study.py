"""`lru-mps study NAME` and `lru-mps plot DIR`: thin wrappers over lru_mps.studies."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from lru_mps.errors import ParameterError


class _StageProgress:
    """One progress line per stage (trajectories done, rate, time left) on stderr."""

    def __init__(self, enabled: bool):
        from .main import _Progress

        self.enabled = enabled
        self.bars: dict[str, _Progress] = {}
        self._cls = _Progress

    def __call__(self, label: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        bar = self.bars.get(label)
        if bar is None:
            bar = self.bars[label] = self._cls(True, label)
        bar(done, total)


def _study_options(name: str):
    """Model options of `simulate` (same names, defaults from the study) plus the common study options."""

    def deco(f):
        opts = [
            click.option("--length", "-L", default=None, help="Array length L (studies that use one length)."),
            click.option("--hopping", default=None, help="Hopping J/2pi (e.g. 5MHz)."),
            click.option("--anharmonicity", default=None, help="Mean anharmonicity Ubar/2pi."),
            click.option("--frequency", default=None, help="Mean frequency wbar/2pi."),
            click.option("--disorder", default=None, help="Disorder width W/2pi."),
            click.option("--reset", default=None, type=click.Choice(["periodic", "random", "dissipation", "none"]),
                         help="Last-site reset."),
            click.option("--rate", default=None, help="Reset rate (0.03J, 0.15MHz, 1/us)."),
            click.option("--conditions", default=None, type=click.Choice(["ideal", "realistic", "both"]),
                         help="ideal, realistic or both."),
            click.option("--t1", default=None, help="Override T1q."),
            click.option("--tphi", default=None, help="Override Tphi."),
            click.option("--temperature", default=None, help="Override the temperature."),
            click.option("--realizations", default=None, type=int,
                         help="Disorder realizations (in branch mode one evolution each)."),
            click.option("--trajectories", default=None, type=int, help="Trajectories per point where sampling is needed."),
            click.option("--engine", default=None, type=click.Choice(["auto", "exact", "sector", "mps"]), help="State backend."),
            click.option("--workers", default=None, type=int, help="Worker processes (default: all cores)."),
            click.option("--scheduler", default=None, help="Run on a Dask cluster: the scheduler address."),
            click.option("--backend", default="numpy", show_default=True,
                         type=click.Choice(["numpy", "torch", "torch:cpu", "torch:cuda", "cupy"]),
                         help="Array library of the batched engines (torch/cupy: a GPU)."),
            click.option("--seed", default=None, type=int, help="Seed."),
            click.option("--out", default=None, type=click.Path(file_okay=False), help=f"Output folder (default runs/{name})."),
            click.option("--config", "config_file", default=None, type=click.Path(dir_okay=False),
                         help="A study TOML file (copy one from studies/ and edit it)."),
            click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object."),
            click.option("--quick", is_flag=True, help="A small version for a first look (under a minute)."),
        ]
        for opt in reversed(opts):
            f = opt(f)
        return f

    return deco


def _run(name, out, workers, scheduler, backend, as_json, quick, config_file, **overrides):
    from lru_mps.runner import default_workers
    from lru_mps.studies import run_study
    from lru_mps.studies.base import StudyContext

    out = Path(out or f"runs/{name}{'-quick' if quick else ''}")
    ctx = StudyContext(
        out=out,
        workers=workers or default_workers(),
        progress=_StageProgress(enabled=not as_json and sys.stderr.isatty()),
        quiet=as_json,
        client=scheduler,
        backend=backend,
    )
    try:
        result = run_study(name, ctx, config_file=config_file, overrides=overrides, quick=quick)
    except ParameterError as err:
        raise click.UsageError(str(err)) from None
    if as_json:
        click.echo(json.dumps(result.summary, default=float))
    else:
        click.echo(result.table)
        click.echo(f"results: {out}/results.nc, {out}/summary.json, figures in {out}/figures/")


@click.group(name="study")
def study_group():
    """Run a study (results, summary JSON and figures go to an output folder; reruns resume)."""


def _make(name: str, extra: list):
    @_study_options(name)
    def command(**kwargs):
        _run(name, **kwargs)

    for opt in reversed(extra):
        command = opt(command)
    command.__doc__ = f"The {name} study (see README)."
    return study_group.command(name=name)(command)


_make(
    "length-scaling",
    [
        click.option("--lengths", default=None, help="Lengths, e.g. 2:40, 2:40:2 or 2,4,8,16,32."),
        click.option("--realistic-lengths", default=None, help="Lengths for the realistic conditions (default 2:6)."),
    ],
)
for _name in ("rate-sweep", "disorder-sweep", "hopping-sweep", "dynamics"):
    _make(_name, [])


@click.command(name="plot")
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
def plot_command(folder):
    """Redraw the figures of a stored study from FOLDER."""
    from lru_mps.studies import replot

    try:
        paths = replot(folder)
    except ParameterError as err:
        raise click.UsageError(str(err)) from None
    for p in paths:
        click.echo(str(p))
