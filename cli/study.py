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


def _make(name: str, extra: list):
    from lru_mps.studies import get_study

    @_study_options(name)
    def command(**kwargs):
        _run(name, **kwargs)

    for opt in reversed(extra):
        command = opt(command)
    command.__doc__ = get_study(name).HELP
    cmd = study_group.command(name=name, cls=StudyCommand,
                              short_help=get_study(name).HELP.split("\n")[0].rstrip("."))(command)
    cmd.own = tuple(p.name for p in cmd.params[:len(extra)])
    return cmd


_make(
    "length-scaling",
    [
        click.option("--lengths", default=None,
                     help="Lengths of the ideal conditions, e.g. 2:40, 2:40:2 or 2,4,8,16,32 "
                          "[default: 2..6, 8, 10, 12, 16, 20, 24, ..., 40]."),
        click.option("--realistic-lengths", default=None,
                     help="Lengths of the realistic conditions (with --conditions realistic or both), e.g. 2:8 "
                          "[default: 2..6, 8, 10, 12, 16, 20]."),
    ],
)
for _name in ("rate-sweep", "disorder-sweep", "hopping-sweep", "dynamics"):
    _make(_name, [])
_make("temperature-sweep", [click.option("--temperatures", default=None, callback=_each_in_domain(_temperature),
                                         help="Temperatures with a unit, each under 1 K (0 needs none), e.g. "
                                              "0,100mK,300mK."),
                            click.option("--lengths", default=None, help="Lengths, e.g. 3,6,12.")])
_make("tolerance", [
    click.option("--e2-spreads", default=None,
                 help="Leakage-level detuning spreads S, e.g. 0,1Jprop,2Jprop,400kHz (J_prop = 2 J^2/Ubar)."),
    click.option("--frequency-noises", default=None, help="Quasi-static frequency-noise spreads, e.g. 0,1Jprop,100kHz."),
    click.option("--hopping-spreads", default=None,
                 help="Per-bond coupling spreads X (fractions), e.g. 0,5%,0.1 (with --kinds ...,hopping_spread)."),
    click.option("--kinds", default=None,
                 help="Error kinds to sweep: e2_spread,frequency_noise,hopping_spread (default: the first two)."),
    click.option("--lengths", default=None, help="Lengths, e.g. 3,6."),
])
_make("qec", [
    click.option("--cycle-time", default=None, help="The QEC cycle t_c, e.g. 1us, 500ns, 30/J [default: 1us]."),
    click.option("--injection", default=None, help="Leakage-event probability per cycle p, in (0, 1) [default: 1e-3]."),
    click.option("--cycles", default=None, help="Cycles K to simulate [default: auto, the whole cycles in 40 us]."),
    click.option("--direct-injections", default=None,
                 help="p of the direct simulation with the injection maps (L <= 4), e.g. 1e-3,1e-2,0.1 "
                      "[default: 1e-3,1e-2,3e-2,0.1; the --injection p is always among them]."),
    click.option("--direct-realizations", default=None, type=int,
                 help="Disorder realizations of the direct simulation (0: none) [default: 32]."),
])
_make("design", [
    click.option("--cycle-time", default=None, help="The QEC cycle t_c, e.g. 1us, 500ns, 30/J [default: 1us]."),
    click.option("--lengths", default=None, help="Array lengths to search, e.g. 2:5 or 2,3,4."),
    click.option("--disorders", default=None, help="Disorder widths W/2pi to search, e.g. 60MHz,100MHz,150MHz."),
    click.option("--hoppings", default=None, help="Hoppings J/2pi to search, e.g. 3MHz,5MHz,7MHz."),
    click.option("--anharmonicities", default=None, callback=_each_in_domain(_anharmonicity),
                 help="Mean anharmonicities Ubar/2pi to search, each with a unit in 50-500 MHz, e.g. 250MHz."),
    click.option("--hopping-profiles", default=None,
                 help="Hopping profiles to search, named forms separated by commas: uniform, transfer, linear:A:B, "
                      "e.g. uniform,transfer (an explicit list of couplings fits one length: refused) "
                      "[default: uniform; --quick: uniform,transfer]."),
    click.option("--resets", default=None, help="Reset kinds to search, e.g. periodic,random,dissipation."),
    click.option("--rate-factors", default=None,
                 help="Rates to search, as multiples of the analytic low optimum, e.g. 0.375,0.75,1.5."),
    click.option("--budget", default=None,
                 help="Added p_total per cycle allowed: 'paper' (the paper's working point's) or a number in (0, 1], "
                      "e.g. 0.005 [default: paper]."),
])
_make("routing", [
    click.option("--grids", default=None, help="Grids of coding transmons RxC, e.g. 3x3,4x4,5x5."),
    click.option("--lrus", default=None, type=click.Choice(["corners", "sides", "boundary"]),
                 help="Where the LRUs sit on each grid's boundary [default: corners]."),
    click.option("--lru-arm", default=None, type=int,
                 help="Transmons per LRU, the last one the reset site [default: 2]."),
    click.option("--temperatures", default=None, callback=_each_in_domain(_temperature),
                 help="Temperatures of the array under realistic conditions, with a unit, each under 1 K, e.g. "
                      "0,100mK [default: 0,100mK]."),
    click.option("--thermal-max-sites", default=None, type=int,
                 help="A temperature > 0 runs on layouts of at most this many transmons [default: 17]."),
])
_make("logical", [
    click.option("--distances", default=None, help="Odd code distances >= 3, e.g. 3,5,7 [default: 3,5,7]."),
    click.option("--lrus", default=None,
                 help="LRU kinds, e.g. none,array,reset: none (the transmon's decay of |2>), array (the qec study's "
                      "S(k) on these model options), reset (ideal, every cycle) [default: all three]."),
    click.option("--physical-error", default=None,
                 help="p, each of stim's four noise parameters of the circuit [default: 1e-3]."),
    click.option("--leakage", default=None, help="Leakage probability per data qubit per round [default: 1e-3]."),
    click.option("--removal", default=None,
                 help="A constant return probability per round R in (0, 1] in place of a kind's own (one kind of "
                      "--lrus, not array)."),
    click.option("--added-error", default=None,
                 help="A depolarizing probability per data qubit per round in place of a kind's added error (one "
                      "kind of --lrus)."),
    click.option("--shots", default=None, type=int,
                 help="Shots per distance and case; more where eps is short of its target error (the study file's "
                      "target_error, at most max_shots) [default: 100000]."),
    click.option("--rounds", default=None, help="Rounds per memory: 3d (3 d) or a number [default: 3d]."),
    click.option("--leakage-sweep", default=None,
                 help="Leakage rates of the sweep, e.g. 0,1e-4,3e-4,1e-3,3e-3 [default: those]."),
    click.option("--sweep-distance", default=None, type=int, help="The sweep's code distance [default: 5]."),
])
