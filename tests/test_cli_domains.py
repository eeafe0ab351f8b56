"""Every hardware quantity typed on the command line has a physical domain (lru_mps/physics/domains.py).

A bare frequency, anharmonicity, T1, Tphi or temperature is refused in one line naming the option, with what it
would have meant and the unit to use; a value outside a transmon's domain is refused naming the domain; a value at
its edge gives one ``Warning:`` line, which the summary repeats; values with their units run as before.  The same
rules hold for the Python API (``ArraySpec.from_user``), the studies and the device file, from one place.
"""

from __future__ import annotations

import json
import warnings

import pytest
from click.testing import CliRunner

from lru_mps.errors import ParameterError, ParameterWarning
from lru_mps.physics import domains
from lru_mps.physics.model import ArraySpec
from lru_mps_cli.main import main


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _one_error_line(res) -> str:
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    (line,) = [x for x in res.output.splitlines() if x.startswith("Error:")]
    return line


def _no_parameter_warnings(build):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = build()
    assert [str(w.message) for w in got if issubclass(w.category, ParameterWarning)] == []
    return out


# ------------------------------------------------------------------ bare numbers: refused with their reading
@pytest.mark.parametrize("option, value, reading, unit", [
    ("--frequency", "7.5", "7.5 J = 37.5 MHz", "'7.5GHz'"),        # was: a 37.5 MHz transmon
    ("--t1", "16.7", "16.7/J = 0.532 us", "'16.7us'"),             # was: T1 = 0.53 us
    ("--tphi", "10", "10/J = 0.318 us", "'10us'"),
    ("--anharmonicity", "250", "250 J = 1.25 GHz", "'250MHz'"),
    ("--frequency", "7500", "7500 J = 37.5 GHz", "'7500MHz'"),
])
def test_a_bare_hardware_number_is_refused_with_its_reading(option, value, reading, unit):
    line = _one_error_line(cli("simulate", "--trajectories", "1", option, value))
    assert line.startswith(f"Error: {option}={value} is not allowed: a "), line
    assert f"read as {reading}" in line and unit in line, line


def test_a_bare_temperature_other_than_zero_is_refused_naming_its_units():
    line = _one_error_line(cli("simulate", "--trajectories", "1", "--temperature", "100"))
    assert line.startswith("Error: --temperature=100 is not allowed") and "'100mK'" in line, line


# ------------------------------------------------------------------ outside the model's domain: refused naming it
@pytest.mark.parametrize("args, shown, domain", [
    (["--temperature", "5K"], "--temperature=5K", "under 1 K"),      # aluminium is normal there
    (["--temperature", "1K"], "--temperature=1K", "under 1 K"),      # 1 K or more
    (["--hopping", "5GHz"], "--hopping=5GHz", "Ubar >= 10 J (here Ubar/2pi = 250 MHz = 0.05 J"),
    (["--anharmonicity", "60MHz", "--hopping", "10MHz"], "--anharmonicity=60MHz", "Ubar >= 10 J"),
    (["--anharmonicity", "30MHz"], "--anharmonicity=30MHz (= 6 J)", "in 50-500 MHz"),
    (["--anharmonicity", "5J"], "--anharmonicity=5J", "in 50-500 MHz, positive (5J = 25 MHz)"),
    (["--frequency", "7.5J"], "--frequency=7.5J", "in 1-20 GHz (7.5J = 37.5 MHz)"),
    (["--frequency", "40GHz"], "--frequency=40GHz (= 8000 J)", "in 1-20 GHz"),
    (["--t1", "50ns"], "--t1=50ns (= 1.571/J)", "at least 100 ns"),
    (["--tphi", "3/J"], "--tphi=3/J", "at least 100 ns (here 95.5 ns)"),
])
def test_values_outside_the_domain_are_refused_naming_the_option_and_the_domain(args, shown, domain):
    line = _one_error_line(cli("simulate", "--trajectories", "1", *args))
    assert line.startswith(f"Error: {shown} is not allowed: ") and domain in line, line


@pytest.mark.parametrize("study, args, shown", [
    ("dynamics", ["--t1", "16.7"], "--t1=16.7 is not allowed: a time with a unit"),
    ("rate-sweep", ["--frequency", "7.5"], "--frequency=7.5 is not allowed: a frequency with a unit"),
    ("hopping-sweep", ["--hopping", "5GHz"], "--hopping=5GHz is not allowed: a mean anharmonicity large against J"),
    ("temperature-sweep", ["--temperatures", "0,5K"], "--temperatures=0,5K is not allowed: item '5K': a chip's "
                                                      "temperature under 1 K"),
    ("temperature-sweep", ["--temperatures", "0,100"], "--temperatures=0,100 is not allowed: item '100': a "
                                                       "temperature with a unit"),
    ("routing", ["--temperatures", "0,1K"], "--temperatures=0,1K is not allowed: item '1K'"),
    ("design", ["--anharmonicities", "250,300MHz"], "--anharmonicities=250,300MHz is not allowed: item '250': a "
                                                    "frequency with a unit"),
    ("design", ["--anharmonicities", "250MHz,30MHz"], "--anharmonicities=250MHz,30MHz is not allowed: item "
                                                      "'30MHz': a transmon anharmonicity U/2pi in 50-500 MHz"),
    ("design", ["--hoppings", "5MHz,50MHz"], "--hoppings=5MHz,50MHz is not allowed: a mean anharmonicity large "
                                             "against J, Ubar >= 10 J (here Ubar/2pi = 250 MHz = 5 J at J/2pi = 50 MHz)"),
    ("qec", ["--tphi", "20ns"], "--tphi=20ns (= 0.6283/J) is not allowed: a transmon Tphi of at least 100 ns"),
])
def test_every_study_refuses_the_same_values_in_one_line(tmp_path, study, args, shown):
    line = _one_error_line(cli("study", study, "--quick", "--workers", "1", "--out", tmp_path / "run", *args))
    assert line.startswith(f"Error: {shown}"), line
    assert not (tmp_path / "run" / "results.nc").exists()


def test_the_python_api_refuses_what_the_command_line_refuses():
    for kwargs, name in (({"frequency": 7.5}, "frequency"), ({"t1": "16.7"}, "t1"), ({"temperature": "5K"},
                         "temperature"), ({"hopping": "5GHz"}, "hopping"), ({"anharmonicity": "250"}, "anharmonicity"),
                         ({"tphi": "50ns"}, "tphi")):
        with pytest.raises(ParameterError) as err:
            ArraySpec.from_user(**kwargs)
        assert err.value.name == name, (kwargs, str(err.value))


# ------------------------------------------------------------------ one set of rules: the device file reads them too
def test_the_device_file_and_the_command_line_read_one_rule(monkeypatch, tmp_path):
    """Move the temperature's bound in lru_mps.physics.domains: the device file, the Python API and the command
    line all refuse 100 mK then (a second copy of the rule anywhere would not move)."""
    chip = {"frequencies": ["7512MHz", "7468MHz", "7530MHz"], "anharmonicities": ["274MHz", "185.95MHz", "310.1MHz"],
            "couplings": ["5.1MHz", "4.9MHz"], "temperature": "100mK"}
    ArraySpec.from_device(chip)
    ArraySpec.from_user(temperature="100mK")
    monkeypatch.setattr(domains, "TEMPERATURE_K", (0.01, 0.05))
    with pytest.raises(ParameterError, match="under 0.05 K") as err:
        ArraySpec.from_device(chip)
    assert err.value.name == "device.temperature"
    with pytest.raises(ParameterError, match="under 0.05 K"):
        ArraySpec.from_user(temperature="100mK")
    line = _one_error_line(cli("simulate", "--trajectories", "1", "--temperature", "100mK"))
    assert line.startswith("Error: --temperature=100mK (= 0.1 K) is not allowed: a chip's temperature under 0.05 K"), line


def test_a_device_whose_anharmonicity_is_not_large_against_its_couplings_is_refused():
    chip = {"frequencies": ["7512MHz", "7468MHz"], "anharmonicities": ["60MHz", "60MHz"], "couplings": ["10MHz"]}
    with pytest.raises(ParameterError, match=r"Ubar >= 10 J \(here Ubar/2pi = 60 MHz = 6 J") as err:
        ArraySpec.from_device(chip)
    assert err.value.name == "device.anharmonicities"


# ------------------------------------------------------------------ the edge: one warning line, in the summary too
@pytest.mark.parametrize("kwargs, text", [
    ({"tphi": "500ns"}, "tphi: Tphi = 0.5 us on every site, under 1 us"),
    ({"t1": "20/J"}, "t1: T1 = 0.637 us on every site, under 1 us"),
    ({"temperature": "400mK"}, "temperature: 400 mK, above 300 mK"),
    ({"hopping": "15MHz"}, "hopping and anharmonicity: Ubar = 16.7 J"),
])
def test_values_at_the_edge_warn_once_naming_the_option(kwargs, text):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        ArraySpec.from_user(**kwargs)
    texts = [str(w.message) for w in got if issubclass(w.category, ParameterWarning)]
    assert len(texts) == 1 and texts[0].startswith(text), texts


@pytest.mark.parametrize("kwargs", [
    {}, {"conditions": "realistic"}, {"temperature": "300mK"}, {"t1": "1us", "tphi": "1us"},
    {"hopping": "12.5MHz"},  # Ubar = 20 J exactly
    {"frequency": "1500J", "anharmonicity": "50J", "t1": "inf", "tphi": "500/J", "temperature": 0},
])
def test_values_inside_the_domain_do_not_warn(kwargs):
    _no_parameter_warnings(lambda: ArraySpec.from_user(**kwargs))


def test_units_written_out_give_the_same_spec_as_the_defaults():
    assert ArraySpec.from_user(frequency="1500J", anharmonicity="50J", t1="16.7us") == ArraySpec.from_user()


def test_simulate_runs_with_typed_values_and_its_summary_repeats_the_warning():
    args = ("simulate", "-L", "2", "--trajectories", "2", "--time-points", "3", "--t-final", "10/J", "--workers", "1",
            "--frequency", "7.5GHz", "--anharmonicity", "50J", "--hopping", "5MHz", "--t1", "16.7us")
    ok = cli(*args, "--tphi", "10us", "--temperature", "0")
    assert ok.exit_code == 0 and "Warning" not in ok.output, ok.output
    res = cli(*args, "--tphi", "500ns", "--temperature", "100mK")
    assert res.exit_code == 0, res.output
    summary = res.output.rstrip().splitlines()
    assert summary[-1] == "Warning: tphi: Tphi = 0.5 us on every site, under 1 us: short for a transmon (is the " \
                          "unit right?)", summary[-3:]
    assert sum(line.startswith("Warning: tphi") for line in summary[-3:]) == 1
    as_json = json.loads(cli(*args, "--tphi", "500ns", "--json").output.strip().splitlines()[-1])
    assert as_json["warnings"] == [summary[-1].removeprefix("Warning: ")]
    assert "warnings" not in json.loads(cli(*args, "--json").output.strip().splitlines()[-1])


def test_a_study_keeps_each_warning_once_in_its_summary_and_table(tmp_path):
    """The warnings raised while a study computes (one per spec it builds) reach its summary.json and its table,
    each once."""
    import xarray as xr

    from lru_mps.studies.base import Study, StudyContext
    from lru_mps.studies.common import spec_of

    class Probe(Study):
        NAME = "dynamics"

        def compute(self, cfg, ctx):
            for L in (2, 3):
                spec_of(cfg, length=L, tphi="500ns")
            return xr.Dataset({"x": ("t", [1.0])}), {"value": 1.0}

        def table(self, summary):
            return "the table"

        def plot(self, dataset, summary, figdir):
            return []

    result = Probe().run({"study": "dynamics", "model": {}}, StudyContext(out=tmp_path / "probe"))
    text = "tphi: Tphi = 0.5 us on every site, under 1 us: short for a transmon (is the unit right?)"
    assert result.summary["warnings"] == [text]
    assert result.table == f"the table\nWarning: {text}"
    assert json.loads((tmp_path / "probe" / "summary.json").read_text())["warnings"] == [text]


def test_the_help_gives_the_rule():
    text = cli("simulate", "--help").output
    for option in ("--t1", "--tphi", "--temperature", "--frequency", "--anharmonicity"):
        block = text[text.index(f"\n  {option} "):][:400]
        assert "with a unit" in block, (option, block)


def test_a_study_file_is_held_to_the_same_domain(tmp_path):
    """A bare T1 in a study's [model] table is refused as on the command line, before anything runs."""
    from lru_mps.studies import run_study
    from lru_mps.studies.base import StudyContext

    config = tmp_path / "dynamics.toml"
    config.write_text('study = "dynamics"\n[model]\nt1 = 20\n')
    with pytest.raises(ParameterError, match=r"a time with a unit, e\.g\. '20us'") as err:
        run_study("dynamics", StudyContext(out=tmp_path / "run", workers=1), config_file=config, quick=True)
    assert err.value.name == "t1" and "20/J = 0.637 us" in str(err.value)
    assert not (tmp_path / "run" / "results.nc").exists()


def test_a_device_files_edges_reach_the_summary_and_its_1_kelvin_is_refused(tmp_path):
    chip = ('frequencies = ["7512MHz", "7468MHz", "7530MHz"]\n'
            'anharmonicities = ["274MHz", "185.95MHz", "310.1MHz"]\ncouplings = ["5.1MHz", "4.9MHz"]\n')
    hot = tmp_path / "hot.toml"
    hot.write_text(chip + 'temperature = "1K"\n')
    line = _one_error_line(cli("simulate", "--device", hot, "--trajectories", "1"))
    assert line.startswith("Error: device.temperature='1K' is not allowed: a chip's temperature under 1 K"), line
    short = tmp_path / "short.toml"
    short.write_text(chip + 't1 = ["16.7us", "500ns", "15us"]\n')
    res = cli("simulate", "--device", short, "--trajectories", "2", "--time-points", "3", "--t-final", "10/J",
              "--workers", "1")
    assert res.exit_code == 0, res.output
    assert res.output.rstrip().splitlines()[-1] == "Warning: device.t1: T1 = 0.5 us on site 2, under 1 us: short " \
                                                   "for a transmon (is the unit right?)"
    overridden = cli("simulate", "--device", short, "--t1", "20us", "--trajectories", "2", "--time-points", "3",
                     "--t-final", "10/J", "--workers", "1")
    assert overridden.exit_code == 0 and "Warning" not in overridden.output, overridden.output
