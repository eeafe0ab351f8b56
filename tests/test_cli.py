"""`lru-mps simulate`: JSON contract, NetCDF output, clear errors."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import copy_study
from lru_mps.io.datasets import load_dataset
from lru_mps_cli.main import main

DECAY_KEYS = {"value_J", "error_J", "value_us", "error_us"}


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_simulate_json_contract(tmp_path):
    out = tmp_path / "run.nc"
    res = run("simulate", "-L", "2", "--trajectories", "16", "--t-final", "300/J", "--time-points", "31", "--json", "--out", str(out))
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert set(data) == {"parameters", "time_J", "observables", "decay_times", "leakage_lifetime_qubit",
                         "leakage_lifetime_array", "removal_efficiency"}  # the lifetimes: issue 23
    for name in ("leakage_lifetime_qubit", "leakage_lifetime_array"):
        assert set(data[name]) == DECAY_KEYS | {"tail_J", "tail"} and data[name]["value_J"] > 0
    assert set(data["removal_efficiency"]) == {"value", "error"} and 0 < data["removal_efficiency"]["value"] <= 1
    assert len(data["time_J"]) == 31 and data["time_J"][-1] == pytest.approx(300.0)
    for name in ("leakage_array", "leakage_site1", "qubit_population", "qubit_coherence"):
        obs = data["observables"][name]
        assert set(obs) == {"mean", "sem"} and len(obs["mean"]) == 31 and len(obs["sem"]) == 31
    assert data["observables"]["leakage_array"]["mean"][0] == pytest.approx(1.0)
    assert data["observables"]["qubit_coherence"]["mean"][0] == pytest.approx(0.5)
    assert set(data["decay_times"]) == {"T_prop", "T_star", "T1", "T2"}
    tp = data["decay_times"]["T_prop"]
    assert set(tp) == DECAY_KEYS
    assert tp["value_J"] == pytest.approx(np.pi / (2 * 2 / 50.0))
    # 1/J = 31.83 ns at J/2pi = 5 MHz
    assert tp["value_us"] == pytest.approx(tp["value_J"] * 0.0318309886, rel=1e-8)
    p = data["parameters"]
    assert p["L"] == 2 and p["reset"] == "periodic" and p["rate_J"] == pytest.approx(0.03)
    assert p["estimator"] == "branch"  # realistic conditions by default: auto = branch (exact under noise too)
    ds = load_dataset(out)
    np.testing.assert_allclose(ds["leakage_array_mean"].values, data["observables"]["leakage_array"]["mean"])
    assert ds.attrs["L"] == 2 and ds.attrs["reset"] == "periodic"
    assert ds.attrs["leakage_lifetime_array_value_J"] == pytest.approx(data["leakage_lifetime_array"]["value_J"])
    assert ds["site_population_qubit_mean"].shape == (31, 2)
    # times also in us (a coordinate next to time_J), a units attribute on every variable and coordinate
    np.testing.assert_allclose(ds["time_us"].values, ds["time_J"].values * 0.0318309886, rtol=1e-8)
    assert ds["time_us"].attrs["units"] == "us" and "time_us" in ds.coords
    assert all("units" in ds[k].attrs for k in ds.variables), [k for k in ds.variables if "units" not in ds[k].attrs]
    assert ds["leakage_array_mean"].attrs["units"] == "1" and ds["site"].attrs["units"] == "sites"


def test_simulate_summary_and_units():
    res = run(
        "simulate", "-L", "2", "--trajectories", "4", "--t-final", "2us", "--time-points", "11",
        "--conditions", "ideal", "--reset", "dissipation", "--rate", "0.2MHz", "--disorder", "20J",
    )
    assert res.exit_code == 0, res.output
    assert "estimator=branch" in res.output and "T_prop" in res.output
    assert "G=0.04 J" in res.output  # 0.2 MHz / 5 MHz


@pytest.mark.parametrize(
    "args, shown",
    [
        (["-L", "1"], "--length=1 is not allowed"),
        (["--rate", "-0.1J"], "--rate=-0.1J is not allowed"),
        (["--rate", "0"], "--rate=0 is not allowed"),
        (["--rate", "-3MHz"], "--rate=-3MHz (= -0.6 J) is not allowed"),
        (["--disorder", "-5MHz"], "--disorder=-5MHz (= -1 J) is not allowed"),
        (["--temperature", "-10mK"], "--temperature=-10mK (= -0.01 K) is not allowed"),
        (["--hopping", "5parsec"], "--hopping=5parsec is not allowed"),
        (["--t-final", "10 fortnights"], "--t-final=10 fortnights is not allowed"),
        (["--t-final", "-1us"], "--t-final=-1us (= -31.42/J) is not allowed"),
        (["--time-points", "1"], "--time-points=1 is not allowed"),
        (["-L", "9", "--engine", "exact"], "--length=9 is not allowed"),
        (["--engine", "mps", "--dt", "0.5/J"], "--dt=0.5/J is not allowed"),
        (["--engine", "mps", "--max-bond", "0"], "--max-bond=0 is not allowed"),
    ],
)
def test_bad_input_is_a_clear_error(args, shown):
    """One line that names the option and the value as typed, and their conversion to units of J."""
    res = CliRunner().invoke(main, ["simulate", "--trajectories", "1", *args])
    assert res.exit_code == 2
    assert "Traceback" not in res.output
    (line,) = [x for x in res.output.splitlines() if x.startswith("Error:")]
    assert line.startswith(f"Error: {shown}"), line


def test_study_errors_name_the_option(tmp_path):
    res = CliRunner().invoke(main, ["study", "length-scaling", "--lengths", "1:3", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "Error: --lengths=1:3 is not allowed" in res.output


def test_a_study_folder_of_other_options_is_refused_by_name(tmp_path):
    """A folder's results hold one configuration: a rerun into it with other options is refused before anything runs,
    with one line naming the keys that differ (its config.toml and results stay as they were); the same options are
    taken (they resume: tests/test_length_scaling.py's interrupted study), and so is a folder without results (a
    run stopped by bad input, then corrected)."""
    from lru_mps.errors import ParameterError
    from lru_mps.studies import get_study, run_study
    from lru_mps.studies.base import StudyContext, claim_folder, load_config, to_toml

    out = tmp_path / "dyn"
    study = get_study("dynamics")
    cfg = load_config(study.NAME, study.DEFAULTS, None, {})
    out.mkdir()
    (out / "config.toml").write_text(to_toml(cfg))
    claim_folder(StudyContext(out=out), load_config(study.NAME, study.DEFAULTS, None, {"seed": 3}))  # no results yet
    (out / "results.nc").write_bytes(b"stored results")  # what a finished run leaves
    before = (out / "config.toml").read_bytes()
    claim_folder(StudyContext(out=out), load_config(study.NAME, study.DEFAULTS, None, {}))  # the same: taken
    res = CliRunner().invoke(main, ["study", "dynamics", "--seed", "3", "--t1", "20us", "--out", str(out)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    (line,) = [x for x in res.output.splitlines() if x.startswith("Error:")]
    assert "--out=" in line and "whose model.t1, seed differ" in line, line
    assert "seed = 0 there, 3 now" in line and "pass another --out" in line, line
    assert (out / "config.toml").read_bytes() == before and (out / "results.nc").read_bytes() == b"stored results"
    with pytest.raises(ParameterError, match="holds a dynamics study's results, not tolerance's"):
        run_study("tolerance", StudyContext(out=out), quick=True)


@pytest.mark.parametrize("args, shown", [
    (["temperature-sweep", "--temperature", "50mK", "--temperatures", "0,50mK"],
     "--temperature=50mK is not allowed: one of --temperature and --temperatures"),
    (["length-scaling", "-L", "3", "--lengths", "3"], "--length=3 is not allowed: one of --length and --lengths"),
    (["tolerance", "-L", "6", "--lengths", "3,6"], "--length=6 is not allowed: one of --length and --lengths"),
    (["design", "--disorder", "150MHz", "--disorders", "100MHz"],
     "--disorder=150MHz is not allowed: one of --disorder and --disorders"),
    (["rate-sweep", "--rate", "1J"], "--rate=1J is not allowed: not an option of the rate-sweep study"),
    (["design", "--rate", "1J"], "--rate=1J is not allowed: not an option of the design study"),
    (["routing", "-L", "5"], "--length=5 is not allowed: not an option of the routing study"),
])
def test_a_single_value_and_its_list_are_one_rule(tmp_path, args, shown):
    """Every pair of a swept option and its list follows one rule: both together are refused with one line (as is
    a single value the study has no list form of); the single value alone runs alone (below)."""
    res = CliRunner().invoke(main, ["study", *args, "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "Traceback" not in res.output
    (line,) = [x for x in res.output.splitlines() if x.startswith("Error:")]
    assert line.startswith(f"Error: {shown}"), line


@pytest.mark.parametrize("name, option, value, lists", [
    ("length-scaling", "length", "5", {"lengths": "5", "realistic_lengths": "5"}),
    ("temperature-sweep", "temperature", "50mK", {"temperatures": ["50mK"]}),
    ("design", "reset", "dissipation", {"resets": ["dissipation"]}),
    ("design", "hopping_profile", "transfer", {"hopping_profiles": ["transfer"]}),
    ("disorder-sweep", "disorder", "150MHz", {"disorders": ["150MHz"]}),
    ("dynamics", "rate", "1J", {"rates": ["1J"]}),
    ("routing", "temperature", "100mK", {"temperatures": "100mK"}),
])
def test_a_single_value_runs_alone(name, option, value, lists):
    from lru_mps.studies import get_study, single_values
    from lru_mps.studies.base import load_config

    study = get_study(name)
    cfg = load_config(name, study.DEFAULTS, None, {option: value})
    single_values(name, cfg, {option})
    assert {k: cfg[k] for k in lists} == lists and cfg["model"][option] is None
    assert study.SWEPT[option] == tuple(lists)  # the study's own declaration


def test_study_help_leads_with_the_study():
    """Each study's --help: its own options under their heading first, then running and output, then the model and
    engine options it shares with simulate (every option listed once)."""
    from lru_mps.studies import study_names

    for name in study_names():
        res = CliRunner().invoke(main, ["study", name, "--help"])
        assert res.exit_code == 0, name
        text = res.output
        heads = ["Running and output:", "Model and engine"]
        if name not in ("rate-sweep", "disorder-sweep", "hopping-sweep", "dynamics"):  # studies with options of their own
            heads.insert(0, "Options of this study:")
        at = [text.index(h) for h in heads]
        assert at == sorted(at), name
        assert at[-2] < text.index("\n  --quick ") < text.index("\n  -h, --help") < at[-1], name
        assert text.index("\n  --tphi ") > at[-1] and text.count("\n  --tphi ") == 1, name
        if name == "temperature-sweep":
            assert at[0] < text.index("\n  --temperatures ") < at[1]


def test_plot_redraws_in_the_formats_asked(quick_study, tmp_path):
    """`lru-mps plot DIR --format svg` redraws a stored study's figures as SVG (marked as a first look where the
    study was --quick); a format matplotlib is not asked for here is refused by the option's name."""
    out = copy_study(quick_study("dynamics")[0].out, tmp_path / "dyn")  # the session's quick run (conftest), a copy
    res = run("plot", str(out), "--format", "svg")
    assert res.exit_code == 0, res.output
    svgs = sorted((out / "figures").glob("*.svg"))
    assert svgs and [str(p) for p in svgs] == sorted(res.output.split())
    assert "quick: a first look" in svgs[0].read_text()
    bad = run("plot", str(out), "--format", "jpg")
    assert bad.exit_code == 2 and "Error: --format=jpg is not allowed: a comma-separated list of png, pdf, svg, eps" \
        in bad.output


def test_plot_draws_the_time_axes_in_the_unit_asked(quick_study, tmp_path, monkeypatch):
    """`lru-mps plot DIR --time-unit us|1/J` redraws the time axes in that unit, read from the redrawn figure: the
    axis label (in the SVG) and the axis range (us = 1/J x time_us_per_J); us by default; another unit is refused
    by the option's name, and 1/J where a study draws its time axes in us only."""
    import lru_mps.studies.dynamics as dynamics
    from lru_mps.studies import replot

    out = copy_study(quick_study("dynamics")[0].out, tmp_path / "dyn")  # the session's quick run (conftest), a copy
    svg = out / "figures" / "leakage_dynamics.svg"
    for args, shown, top in ((["--time-unit", "us"], "µs", "1/J"), (["--time-unit", "1/J"], "1/J", "µs"), ([], "µs", "1/J")):
        res = run("plot", str(out), "--format", "svg", *args)
        assert res.exit_code == 0, res.output
        text = svg.read_text()
        assert f"<!-- time $t$ ({shown}) -->" in text and f"<!-- $t$ ({top}) -->" in text, args
    figs = []
    monkeypatch.setattr(dynamics.report, "save_figure", lambda fig, figdir, name: figs.append(fig) or [])
    replot(out, time_unit="us")
    replot(out, time_unit="1/J")
    us_axis, J_axis = (f.axes[0] for f in figs)
    assert us_axis.get_xlabel() == "time $t$ (µs)" and J_axis.get_xlabel() == "time $t$ (1/J)"
    us_per_J = float(load_dataset(out / "results.nc").attrs["time_us_per_J"])
    assert us_axis.get_xlim()[1] == pytest.approx(J_axis.get_xlim()[1] * us_per_J)
    bad = run("plot", str(out), "--time-unit", "ms")
    assert bad.exit_code == 2 and "Invalid value for '--time-unit': 'ms' is not one of 'us', '1/J'" in bad.output
    monkeypatch.setattr(dynamics.Dynamics, "TIME_UNITS", ("us",))  # as a study whose time axes are in us only
    bad = run("plot", str(out), "--time-unit", "1/J")
    assert bad.exit_code == 2 and "Error: --time-unit=1/J is not allowed: us: the dynamics study draws its time " \
        "axes in us only" in bad.output
