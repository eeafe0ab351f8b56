"""The `lru-mps` command line: a thin layer over the lru_mps library."""

from __future__ import annotations

import json
import signal
import sys
import time

import click

from lru_mps.errors import ParameterError


class _Progress:
    """Trajectories done, rate and time left, on stderr; silent when not wanted."""

    def __init__(self, enabled: bool, label: str = "trajectories"):
        self.enabled = enabled
        self.label = label
        self.start = time.monotonic()
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if done < total and now - self.last < 0.2:
            return
        self.last = now
        elapsed = now - self.start
        rate = done / elapsed if elapsed > 0 else 0.0
        left = (total - done) / rate if rate > 0 else float("nan")
        click.echo(
            f"\r{self.label}: {done}/{total}  {rate:.1f}/s  about {left:.0f} s left   ",
            err=True,
            nl=done == total,
        )


#: MPS defaults, from the convergence study recorded in BENCHMARKS.md
DEFAULT_MPS = {"dt": "0.01/J", "order": 4, "max_bond": 64, "cutoff": 1e-12}


def mps_options(spec, dt, order, max_bond, cutoff) -> dict:
    """MPS engine options from the CLI values (units parsed; None -> default)."""
    from lru_mps.units import to_time

    return {
        "dt": to_time(dt if dt is not None else DEFAULT_MPS["dt"], "dt", spec.J_hz),
        "order": int(order) if order is not None else DEFAULT_MPS["order"],
        "max_bond": max_bond if max_bond is not None else DEFAULT_MPS["max_bond"],
        "cutoff": cutoff if cutoff is not None else DEFAULT_MPS["cutoff"],
    }


def _fail(err: ParameterError):
    raise click.UsageError(str(err))


def model_options(f):
    """The model options shared by every command (names are a contract)."""
    opts = [
        click.option("--length", "-L", default="3", show_default=True, help="Number of transmons L (>= 2)."),
        click.option("--hopping", default="5MHz", show_default=True, help="Hopping J/2pi, with a unit (e.g. 5MHz)."),
        click.option(
            "--anharmonicity", default="250MHz", show_default=True, help="Mean anharmonicity Ubar/2pi (MHz, GHz or multiples of J)."
        ),
        click.option("--frequency", default="7.5GHz", show_default=True, help="Mean frequency wbar/2pi."),
        click.option("--disorder", default="100MHz", show_default=True, help="Disorder width W/2pi (full width of the box)."),
        click.option(
            "--reset",
            type=click.Choice(["periodic", "random", "dissipation", "none"]),
            default="periodic",
            show_default=True,
            help="Last-site reset mechanism.",
        ),
        click.option("--rate", default="0.03J", show_default=True, help="Reset rate G: multiple of J (0.03J), G/2pi (0.15MHz) or per time (1/us)."),
        click.option(
            "--conditions",
            type=click.Choice(["ideal", "realistic"]),
            default="realistic",
            show_default=True,
            help="ideal: no noise, 0 K; realistic: T1q = 16.7 us, Tphi = 10 us, 100 mK.",
        ),
        click.option("--t1", default=None, help="Override the transmons' T1q (e.g. 16.7us, 500/J, inf)."),
        click.option("--tphi", default=None, help="Override the pure dephasing time Tphi (e.g. 10us, inf)."),
        click.option("--temperature", default=None, help="Override the temperature (e.g. 100mK, 0)."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def build_spec(length, hopping, anharmonicity, frequency, disorder, reset, rate, conditions, t1, tphi, temperature):
    from lru_mps.model import ArraySpec

    return ArraySpec.from_user(
        length=length,
        hopping=hopping,
        anharmonicity=anharmonicity,
        frequency=frequency,
        disorder=disorder,
        reset=reset,
        rate=rate,
        conditions=conditions,
        t1=t1,
        tphi=tphi,
        temperature=temperature,
    )


def _terminated(signum, frame):
    """SIGTERM (a scheduler's or a user's kill): unwind like Ctrl-C, so worker pools are stopped at once."""
    raise SystemExit(128 + signum)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="lru-mps")
def main():
    """lru-mps: passive leakage removal in disordered transmon arrays.

    Units: frequencies f = w/2pi in Hz..GHz, times in s..ns, temperatures in
    K/mK, or multiples of J ('0.03J', '200/J'); a bare number means units of
    J (energies, rates) or 1/J (times).
    """
    signal.signal(signal.SIGTERM, _terminated)


@main.command()
@model_options
@click.option(
    "--init",
    type=click.Choice(["leakage", "qubit", "coherence", "all"]),
    default="all",
    show_default=True,
    help="Initial state of the coding qubit (each is its own ensemble).",
)
@click.option("--t-final", default="1000/J", show_default=True, help="Final time (e.g. 1000/J, 30us).")
@click.option("--time-points", default=201, show_default=True, type=int, help="Points of the time grid.")
@click.option("--trajectories", default=500, show_default=True, type=int, help="Trajectories, each with its own disorder realization.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the run (trajectory i uses SeedSequence(seed, (i, ...))).")
@click.option(
    "--engine",
    type=click.Choice(["auto", "exact", "sector", "mps"]),
    default="auto",
    show_default=True,
    help="State backend: exact (3^L, L <= 7), sector (fixed-N, exact), mps (TEBD); auto picks the cheapest exact or converged one.",
)
@click.option("--dt", default=None, help=f"MPS time step (default {DEFAULT_MPS['dt']}/J).")
@click.option("--order", default=None, type=click.Choice(["2", "4"]), help=f"MPS Trotter order (default {DEFAULT_MPS['order']}).")
@click.option("--max-bond", default=None, type=int, help=f"MPS maximum bond dimension (default {DEFAULT_MPS['max_bond']}).")
@click.option("--cutoff", default=None, type=float, help=f"MPS absolute singular-value cutoff (default {DEFAULT_MPS['cutoff']:g}).")
@click.option(
    "--estimator",
    type=click.Choice(["auto", "sampled", "branch"]),
    default="auto",
    show_default=True,
    help="branch: removal-free branch weighted by its probability (exact in ideal conditions); auto: branch where exact.",
)
@click.option("--workers", default=None, type=int, help="Worker processes (default: all cores).")
@click.option("--scheduler", default=None, help="Run on a Dask cluster: the scheduler address (tcp://host:8786).")
@click.option(
    "--backend",
    type=click.Choice(["numpy", "torch", "torch:cpu", "torch:cuda", "cupy"]),
    default="numpy",
    show_default=True,
    help="Array library of the batched exact and MPS engines (torch/cupy: on a GPU when there is one).",
)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write the result as NetCDF (xarray Dataset).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the summary.")
def simulate(init, t_final, time_points, trajectories, seed, engine, dt, order, max_bond, cutoff, estimator, workers,
             scheduler, backend, out, as_json, **model):
    """Run one ensemble of trajectories and print a summary."""
    from lru_mps.ensemble import simulate as run
    from lru_mps.storage import save_netcdf, to_json
    from lru_mps.summary import format_summary
    from lru_mps.backends import choose_engine
    from lru_mps.runner import default_workers
    from lru_mps.units import to_time

    try:
        spec = build_spec(**model)
        t_final_J = to_time(t_final, "t_final", spec.J_hz)
        engine_options = mps_options(spec, dt, order, max_bond, cutoff)
        if engine == "auto":
            engine, reason = choose_engine(spec)
            if not as_json:
                click.echo(f"engine auto -> {engine}: {reason}", err=True)
        progress = _Progress(enabled=not as_json and sys.stderr.isatty())
        result = run(
            spec,
            init=init,
            t_final=t_final_J,
            time_points=time_points,
            trajectories=trajectories,
            seed=seed,
            engine=engine,
            estimator=estimator,
            engine_options=engine_options,
            progress=progress,
            workers=workers if workers is not None else default_workers(),
            client=scheduler,
            backend=backend,
        )
    except ParameterError as err:
        _fail(err)
    if out:
        save_netcdf(result, out)
    if as_json:
        click.echo(json.dumps(to_json(result)))
    else:
        click.echo(format_summary(result))
        if out:
            click.echo(f"written: {out}")




def _register_studies():
    from .study import plot_command, study_group

    main.add_command(study_group)
    main.add_command(plot_command)


_register_studies()


if __name__ == "__main__":  # pragma: no cover
    main()
