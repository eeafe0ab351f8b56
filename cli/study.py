"""`lru-mps study NAME`: thin wrappers over lru_mps.studies (one subcommand per study)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from lru_mps.errors import ParameterError

from .common import BACKENDS, engine_options, fail, model_options, progress
from .stops import is_stop, stopped


def _each_in_domain(one):
    """A click callback: every item of a list option (e.g. --temperatures 0,100mK) held to the domain of its
    quantity (``one(item, name)``, from lru_mps.physics.domains: a unit, a transmon's range), refused in one line
    naming the option; the value goes on as typed."""

    def callback(ctx, param, value):
        if value is not None:
            from lru_mps.physics import domains

            try:
                domains.listed(value, param.name, lambda item: one(domains, item, param.name))
            except ParameterError as err:
                fail(err)
        return value

    return callback


def _temperature(domains, item, name):
    return domains.temperature(item, name)


def _anharmonicity(domains, item, name):
    from lru_mps.defaults import MODEL
    from lru_mps.physics.units import parse_frequency_hz

    return domains.anharmonicity(item, name, parse_frequency_hz(MODEL["hopping"]))  # (J: the reading of a bare one)


def _study_options(name: str):
    """Model options of `simulate` (same names; the study's own values by default) plus the common study options."""

    def deco(f):
        opts = [
            model_options(defaults=False),
            click.option("--realizations", default=None, type=int,
                         help="Disorder realizations (ideal conditions: one exact branch evolution each)."),
            click.option("--trajectories", default=None, type=int, help="Trajectories per point where sampling is needed."),
            engine_options(defaults=False),
            click.option("--workers", default=None, type=int, help="Worker processes [default: all cores]."),
            click.option("--scheduler", default=None, help="Run on a Dask cluster: the scheduler address."),
            click.option("--backend", default="numpy", show_default=True, type=click.Choice(BACKENDS),
                         help="Array library of the batched engines (torch/cupy: a GPU)."),
            click.option("--seed", default=None, type=int, help="Seed [default: the study's]."),
            click.option("--out", default=None, type=click.Path(file_okay=False),
                         help=f"Output folder [default: runs/{name}]; rerunning into it with the same options resumes."),
            click.option("--config", "config_file", default=None, type=click.Path(dir_okay=False),
                         help=f"A study TOML file (copy studies/{name}.toml and edit it)."),
            click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object."),
            click.option("--quick", is_flag=True, help="A small version for a first look (seconds)."),
        ]
        for opt in reversed(opts):
            f = opt(f)
        return f

    return deco


def _run(name, out, workers, scheduler, backend, as_json, quick, config_file, dt, order, max_bond, cutoff, **overrides):
    from lru_mps.run.executors import default_workers
    from lru_mps.studies import run_study
    from lru_mps.studies.base import StudyContext

    import matplotlib

    matplotlib.use("Agg")  # the command line writes figures to files and never shows them
    out = Path(out or f"runs/{name}{'-quick' if quick else ''}")
    mps = {"dt": dt, "order": order, "max_bond": max_bond, "cutoff": cutoff}  # parsed by the study (mps_options)
    overrides.update({k: v for k, v in mps.items() if v is not None})
    try:
        with progress(as_json) as bars:
            ctx = StudyContext(out=out, workers=workers or default_workers(), progress=bars, quiet=as_json,
                               client=scheduler, backend=backend)
            result = run_study(name, ctx, config_file=config_file, overrides=overrides, quick=quick)
    except ParameterError as err:
        fail(err)
    except BaseException as err:  # a stop: one line, with where the finished blocks are kept
        if not is_stop(err):
            raise
        raise stopped(err, kept=out / "work") from None
    if as_json:
        click.echo(json.dumps(result.summary, default=float))
    else:
        click.echo(result.table)
        click.echo(f"results: {out}/results.nc, {out}/summary.json, figures in {out}/figures/")


#: the options every study shares that say how it runs (not the model): the help's second section
_RUN_OPTIONS = ("realizations", "trajectories", "workers", "scheduler", "backend", "seed", "out", "config_file",
                "as_json", "quick")


class StudyCommand(click.Command):
    """A study's command: its help lists the study's own options first, then how it runs, then the model and
    engine options it shares with `lru-mps simulate`, each under its own heading."""

    own: tuple = ()

    def format_options(self, ctx, formatter):
        sections = {"own": [], "run": [], "model": []}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            running = param.name in _RUN_OPTIONS or param is self.get_help_option(ctx)
            key = "own" if param.name in self.own else "run" if running else "model"
            sections[key].append(record)
        titles = {"own": "Options of this study",
                  "run": "Running and output",
                  "model": "Model and engine (the options of `lru-mps simulate`; the study's own values by default)"}
        for key, title in titles.items():
            if sections[key]:
                with formatter.section(title):
                    formatter.write_dl(sections[key])


@click.group(name="study")
def study_group():
    """Run a study: results.nc, summary.json and figures go to an output folder; a rerun resumes."""


def _default_text(value) -> str:
    """A TOML default as the help shows it: a list by commas, a table as k=v pairs."""
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    return str(value)


#: the physical quantity a list option's items are held to (StudyOption.each) -> its check
_EACH = {"temperature": _temperature, "anharmonicity": _anharmonicity}


def _click_option(study, option):
    """The command-line option of a study's own :class:`~lru_mps.studies.base.StudyOption`: ``--<key>``, its help
    with the default read from the study's TOML file (and its --quick value where that differs)."""
    help_text = option.help
    if option.key in study.DEFAULTS:
        help_text += f" [default: {_default_text(study.DEFAULTS[option.key])}"
        if option.key in study.QUICK and study.QUICK[option.key] != study.DEFAULTS[option.key]:
            help_text += f"; --quick: {_default_text(study.QUICK[option.key])}"
        help_text += "]"
    kind = option.kind
    kwargs = {"type": int} if kind == "int" else {"type": click.Choice(list(kind))} if isinstance(kind, tuple) else {}
    if option.each is not None:
        kwargs["callback"] = _each_in_domain(_EACH[option.each])
    return click.option("--" + option.key.replace("_", "-"), default=None, help=help_text, **kwargs)


def make_command(name: str, group: click.Group):
    """The command ``lru-mps study NAME`` on ``group``: the study's own options (its OPTIONS), then the options
    every study shares; its help is the study's HELP."""
    from lru_mps.studies import get_study

    study = get_study(name)

    @_study_options(name)
    def command(**kwargs):
        _run(name, **kwargs)

    for option in reversed(study.OPTIONS):
        command = _click_option(study, option)(command)
    command.__doc__ = study.HELP
    cmd = group.command(name=name, cls=StudyCommand, short_help=study.HELP.split("\n")[0].rstrip("."))(command)
    cmd.own = tuple(p.name for p in cmd.params[:len(study.OPTIONS)])
    return cmd


def _register() -> None:
    from lru_mps.studies import study_names

    for name in study_names():
        make_command(name, study_group)


_register()
