"""The `lru-mps` command line: a thin layer over the lru_mps library.

Every default comes from :mod:`lru_mps.defaults` (the same ones the studies
and the Python API use); every error is one line naming the option as typed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import warnings
from pathlib import Path


def _stopped_while_starting(signum, frame):
    """Ctrl-C or SIGTERM while the command's modules load (seconds: every study registers): one line, and out at
    once (nothing has run yet)."""
    sys.stderr.write(f"Error: interrupted by {signal.Signals(signum).name} while starting: nothing ran\n")
    sys.stderr.flush()
    os._exit(128 + signum)


_BEFORE = {}
if __name__ == "__main__" or os.path.basename(sys.argv[0]) == "lru-mps":  # the command starting (not an importer)
    try:  # (until the modules are loaded, at the end of this one; then main() installs the run's handlers)
        _BEFORE = {sig: signal.signal(sig, _stopped_while_starting) for sig in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # off the main thread: no signals here
        pass

import click
from click.core import ParameterSource

from lru_mps.defaults import RUN
from lru_mps.errors import ParameterError, ParameterWarning, stop_on_signal

from .common import BACKENDS, engine_options, fail, model_options, progress
from .stops import is_stop, stopped


def build_spec(length, hopping, anharmonicity, frequency, disorder, reset, rate, conditions, t1, tphi, temperature,
               e2_spread, frequency_noise, disorder_pattern, hopping_spread, readout_error=0.0,
               readout_confusion=None, device=None, thermal_bath=False, hopping_profile="uniform", geometry="chain",
               start_site=None, reset_site=None):
    """An ArraySpec from the model options as typed.

    With ``device`` the options it fixes count only where the user typed them (in a click command: their
    defaults are the paper's, not the user's), so that ArraySpec.from_user refuses exactly those.  Likewise with a
    ``geometry`` other than the chain the length counts only where typed (a graph fixes L).
    """
    from lru_mps.physics.device import FIXED_OPTIONS
    from lru_mps.physics.model import ArraySpec

    fixed = {"length": length, "hopping": hopping, "anharmonicity": anharmonicity, "frequency": frequency,
             "disorder": disorder}
    ctx = click.get_current_context(silent=True)
    if device is not None and ctx is not None:
        fixed = {k: (None if k in FIXED_OPTIONS and ctx.get_parameter_source(k) is ParameterSource.DEFAULT else v)
                 for k, v in fixed.items()}
    graph = not (geometry is None or str(geometry).strip().lower() == "chain")
    if graph and ctx is not None and ctx.get_parameter_source("length") is ParameterSource.DEFAULT:
        fixed["length"] = None
    return ArraySpec.from_user(**fixed, reset=reset, rate=rate, conditions=conditions, t1=t1, tphi=tphi,
                               temperature=temperature, e2_spread=e2_spread, frequency_noise=frequency_noise,
                               disorder_pattern=disorder_pattern, hopping_spread=hopping_spread,
                               readout_error=readout_error, readout_confusion=readout_confusion, device=device,
                               thermal_bath=bool(thermal_bath), hopping_profile=hopping_profile, geometry=geometry,
                               start_site=start_site, reset_site=reset_site)


_format_warning = warnings.formatwarning


def _one_line_warning(message, category, filename, lineno, line=None):
    """A ParameterWarning as one line naming the parameter (no source line); other warnings as Python prints them."""
    if issubclass(category, ParameterWarning):
        return f"Warning: {message}\n"
    return _format_warning(message, category, filename, lineno, line)


warnings.formatwarning = _one_line_warning


class _Main(click.Group):
    """The command group: a run that a signal or a dead worker ends early ends with one line (cli/stops.py)
    wherever it stopped (a command that knows where it keeps its blocks says so itself)."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BaseException as err:
            if isinstance(err, (click.ClickException, click.exceptions.Exit)) or not is_stop(err):
                raise
            raise stopped(err) from None


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="lru-mps")
def main():
    """lru-mps: passive leakage removal in disordered transmon arrays.

    Units: frequencies f = w/2pi in Hz..GHz, times in s..ns, temperatures in
    K/mK, or multiples of J ('0.03J', '200/J').  The hardware quantities
    (--frequency, --anharmonicity, --t1, --tphi, --temperature; --hopping)
    need their unit and a transmon's value (a bare number is refused, saying
    what it would have meant); the model's own multiples of J (--rate,
    --disorder, the spreads, --t-final) may be bare numbers in units of J or
    1/J.  The physics and its conventions: docs/physics.md.
    """
    # Ctrl-C and SIGTERM (a scheduler's or a user's kill) stop the run within a fraction of a second, its pools
    # with it, even where the exception is lost on the way (lru_mps.errors.stop_on_signal records the request)
    signal.signal(signal.SIGINT, stop_on_signal)
    signal.signal(signal.SIGTERM, stop_on_signal)


@main.command()
@model_options()
@click.option("--init", type=click.Choice(["leakage", "qubit", "coherence", "all"]), default=RUN["init"],
              show_default=True, help="Initial state of the coding qubit (each is its own ensemble).")
@click.option("--t-final", default=RUN["t_final"], show_default=True, help="Final time (e.g. 1000/J, 30us).")
@click.option("--time-points", default=RUN["time_points"], show_default=True, type=int, help="Points of the time grid.")
@click.option("--trajectories", default=RUN["trajectories"], show_default=True, type=int,
              help="Trajectories per initial state, each with its own disorder realization.")
@click.option("--seed", default=RUN["seed"], show_default=True, type=int,
              help="Seed of the run (trajectory i uses SeedSequence(seed, (i, ...))).")
@engine_options()
@click.option("--estimator", type=click.Choice(["auto", "sampled", "branch"]), default=RUN["estimator"], show_default=True,
              help="branch: removal-free branch weighted by its probability, refused where it is not exact (an event that raises N: readout error, thermal bath; Tphi per site); auto: branch where exact, else sampled.")
@click.option("--integrate-decay", is_flag=True, default=RUN["integrate_decay"],
              help="Sampled rows with a sharp excitation number (leakage, qubit starts) carry the survival of their "
                   "hardware decay clock instead of sampling when decays come: the same ensemble, less variance, 2-4x "
                   "their cost (exact with one T1 on every site and an ideal readout; else those rows are sampled).")
@click.option("--workers", default=None, type=int, help="Worker processes [default: all cores].")
@click.option("--scheduler", default=None, help="Run on a Dask cluster: the scheduler address (tcp://host:8786).")
@click.option("--backend", type=click.Choice(BACKENDS), default=RUN["backend"], show_default=True,
              help="Array library of the batched exact, sector and MPS engines and of the sector engine's "
                   "Chebyshev blocks (torch/cupy: on a GPU when there is one).")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Write the result as NetCDF (xarray Dataset); until it is written the finished blocks of "
                   "trajectories are kept beside it (run.nc: in run.nc.blocks/), so that a rerun after an interruption "
                   "resumes from them.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the summary.")
def simulate(init, t_final, time_points, trajectories, seed, engine, dt, order, max_bond, cutoff, estimator,
             integrate_decay, workers, scheduler, backend, out, as_json, **model):
    """Run one ensemble of trajectories and print a summary."""
    from lru_mps.run.settings import make_settings, mps_options
    from lru_mps.run.simulate import simulate as run
    from lru_mps.run.executors import default_workers
    from lru_mps.io.datasets import save_netcdf, to_json
    from lru_mps.io.summary import format_summary

    cache = blocks_folder(out)
    try:
        spec = build_spec(**model)
        settings = make_settings(spec, init=init, t_final=t_final, time_points=time_points, trajectories=trajectories,
                                 seed=seed, engine=engine, estimator=estimator, integrate_decay=integrate_decay,
                                 engine_options=mps_options({"dt": dt, "order": order, "max_bond": max_bond,
                                                             "cutoff": cutoff}, spec.J_hz),
                                 backend=backend)
        if settings.engine_reason and not as_json:  # ('auto', resolved by make_settings, the one place it is)
            chosen = "per trajectory" if settings.engine == "auto" else settings.engine
            click.echo(f"engine auto -> {chosen}: {settings.engine_reason}", err=True)
        _say_resumed(cache, spec, settings)
        with progress(as_json) as bars:
            result = run(spec, settings=settings, progress=bars.stage("trajectories"), cache=cache,
                         workers=workers if workers is not None else default_workers(), client=scheduler)
    except ParameterError as err:
        fail(err)
    except BaseException as err:
        if not is_stop(err):
            raise
        raise stopped(err, unkept_hint="nothing is kept without --out (with --out FILE.nc the finished blocks are "
                                       "kept and a rerun resumes from them)") from None
    if out:
        save_netcdf(result, out)
        shutil.rmtree(cache, ignore_errors=True)  # (the result is written: its blocks have served)
    if as_json:
        click.echo(json.dumps(to_json(result)))
    else:
        click.echo(format_summary(result))
        if out:
            click.echo(f"written: {out}")


def blocks_folder(out) -> Path | None:
    """Where `simulate --out FILE.nc` keeps its finished blocks until FILE.nc is written: FILE.nc.blocks/ (a run
    stopped early resumes from them; None without --out)."""
    return None if not out else Path(f"{out}.blocks")


def _say_resumed(cache: Path | None, spec, settings) -> None:
    """One line on stderr where a rerun resumes: how many of its blocks an earlier, stopped run left in ``cache``."""
    from lru_mps.run.blocks import n_blocks
    from lru_mps.run.cache import run_key

    if cache is None or not cache.is_dir():
        return
    kept = len(list((cache / run_key(spec, settings)[0]).glob("block_*.npz")))
    if kept:
        click.echo(f"resuming: {kept} of {n_blocks(settings.trajectories)} blocks of trajectories finished before, "
                   f"kept in {cache}", err=True)


@main.command(name="plot")
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.option("--format", "formats", default="png,pdf", show_default=True,
              help="Figure file formats, a comma-separated list of png, pdf, svg, eps.")
@click.option("--time-unit", "time_unit", type=click.Choice(["us", "1/J"]), default="us", show_default=True,
              help="Unit of the figures' time axes: us (microseconds) or 1/J (the inverse hopping, the code's unit). "
                   "Figures without a time axis (qec, design) are drawn as they are; the hopping-sweep's are in "
                   "us only (J varies along it).")
def plot_command(folder, formats, time_unit):
    """Redraw the figures of a stored study from FOLDER (into FOLDER/figures)."""
    import matplotlib

    from lru_mps.studies import replot

    matplotlib.use("Agg")  # figures go to files
    try:
        paths = replot(folder, [f.strip() for f in formats.split(",") if f.strip()], time_unit=time_unit)
    except ParameterError as err:
        fail(err)
    for p in paths:
        click.echo(str(p))


def _register_studies():
    from .study import study_group

    main.add_command(study_group)


_register_studies()
for _sig, _handler in _BEFORE.items():  # (Python's own back, until main() installs the run's)
    signal.signal(_sig, _handler)


if __name__ == "__main__":  # pragma: no cover
    main()
