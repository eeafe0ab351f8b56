"""A coupling graph from the user's side: `lru-mps simulate --geometry/--start-site/--reset-site` and
ArraySpec.from_user(geometry=..., start_site=..., reset_site=...) (docs/physics.md §3.4).

The CLI runs on a 2 x 2 grid and a 3-rung ladder and prints the geometry; start and reset given by number and by
coordinate give the same relabelled spec; every refusal is one line naming the option; the studies (chains) refuse
a graph by name; the transit (spec.transit_hops) is L - 1 on the chain and the graph distance on a grid, and the
fit windows follow it; a 2 x 2 grid built from the user's options follows the Lindblad reference.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from lru_mps.analysis.decay import fit_window_start
from lru_mps.errors import ParameterError
from lru_mps.physics import geometry as geo
from lru_mps.physics.model import ArraySpec
from lru_mps_cli.main import main


def _cli(*args):
    return CliRunner().invoke(main, list(args))


def _one_line_error(res, option):
    assert res.exit_code != 0
    lines = [x for x in res.output.strip().splitlines() if x.startswith("Error:")]
    assert len(lines) == 1, res.output
    assert option in lines[0], res.output
    return lines[0]


@pytest.mark.parametrize("shape, L", [("grid:2x2", 4), ("ladder:3", 6)])
def test_cli_runs_on_a_graph_and_prints_it(shape, L):
    res = _cli("simulate", "--geometry", shape, "--trajectories", "20", "--conditions", "realistic",
               "--time-points", "41", "--t-final", "400/J")
    assert res.exit_code == 0, res.output
    assert f"L={L} " in res.output
    assert f"geometry: {shape}" in res.output
    assert "start (qubit, site 1) at 1,1" in res.output
    hops = 2 if shape == "grid:2x2" else 3
    assert f"{hops} hops from the start to the reset site" in res.output
    assert f"T_star t > {hops} T_prop" in res.output


def test_cli_json_carries_the_sites():
    res = _cli("simulate", "--geometry", "grid:2x2", "--start-site", "1,2", "--reset-site", "3", "--trajectories", "4",
               "--time-points", "5", "--t-final", "100/J", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    p = out["parameters"]
    assert (p["geometry"], p["start_site"], p["reset_site"], p["transit_hops"]) == ("grid:2x2", "1,2", "2,1", 2)
    assert (p["start_layout_site"], p["reset_layout_site"]) == (2, 3)
    # per site of the run (start first, reset last): 1-based coordinates and the layout's own site numbers
    assert out["sites"] == {"site_row": [1, 1, 2, 2], "site_col": [2, 1, 2, 1], "site_layout": [2, 1, 4, 3]}


def test_cli_chain_json_has_no_geometry_keys():
    res = _cli("simulate", "--geometry", "chain", "--trajectories", "2", "--time-points", "5", "--t-final", "10/J",
               "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert "sites" not in out and "geometry" not in out["parameters"] and "start_site" not in out["parameters"]


def test_start_and_reset_by_number_and_by_coordinate_are_the_same_spec():
    by_number = ArraySpec.from_user(geometry="grid:2x3", start_site=2, reset_site="6")
    by_coord = ArraySpec.from_user(geometry="grid:2x3", start_site="1,2", reset_site=(2, 3))
    assert by_number == by_coord
    assert by_number.geometry == geo.grid(2, 3).relabel(1, 5)
    assert by_number.L == 6 and by_number.geometry.labels[0] == 1 and by_number.geometry.labels[-1] == 5
    # the CLI's spec is the library's
    from lru_mps_cli.main import build_spec

    kw = dict(length=None, hopping="5MHz", anharmonicity="250MHz", frequency="7.5GHz", disorder="100MHz",
              reset="periodic", rate="0.03J", conditions="realistic", t1=None, tphi=None, temperature=None,
              e2_spread="0", frequency_noise="0", disorder_pattern="box", hopping_spread="0")
    assert build_spec(**kw, geometry="grid:2x3", start_site="1,2", reset_site="2,3") == \
        ArraySpec.from_user(geometry="grid:2x3", start_site=2, reset_site=6)


def test_chain_stays_none_and_defaults():
    assert ArraySpec.from_user(geometry="chain").geometry is None
    assert ArraySpec.from_user(geometry="chain", length=5, start_site=1, reset_site="1,5").geometry is None
    assert ArraySpec.from_user(geometry="chain") == ArraySpec.from_user()
    g = ArraySpec.from_user(geometry="grid:2x2").geometry
    assert g == geo.grid(2, 2) and ArraySpec.from_user(geometry="grid:2x2", length=4).geometry == g
    # another start on a chain: a (renumbered) chain graph
    s = ArraySpec.from_user(geometry="chain", length=4, start_site=2)
    assert s.geometry is not None and s.transit_hops == 2


def test_transit_hops():
    assert ArraySpec.from_user(length=5).transit_hops == 4
    assert ArraySpec.from_user(geometry="grid:2x2").transit_hops == 2
    assert ArraySpec.from_user(geometry="grid:3x3").transit_hops == 4
    assert ArraySpec.from_user(geometry="grid:3x3", reset_site="2,2").transit_hops == 2
    assert ArraySpec.from_user(geometry="grid:2x2", reset_site=2).transit_hops == 1
    assert ArraySpec.from_user(geometry="ladder:4").transit_hops == 4


def test_fit_window_follows_the_transit():
    from types import SimpleNamespace

    for spec, hops in ((ArraySpec.from_user(length=4), 3), (ArraySpec.from_user(geometry="grid:2x2"), 2)):
        res = SimpleNamespace(spec=spec)
        assert fit_window_start(res) == hops * spec.T_prop
    chain = ArraySpec.from_user(length=7)
    assert fit_window_start(SimpleNamespace(spec=chain)) == (7 - 1) * chain.T_prop  # bit for bit


@pytest.mark.parametrize("args, option", [
    (("--geometry", "grid:2"), "--geometry"),
    (("--geometry", "hexagon"), "--geometry"),
    (("--geometry", "grid:2x2", "--start-site", "a,b"), "--start-site"),
    (("--geometry", "grid:2x2", "--start-site", "1,2,3"), "--start-site"),
    (("--geometry", "grid:2x2", "--start-site", "2", "--reset-site", "1,2"), "--reset-site"),
    (("--geometry", "grid:2x2", "--reset-site", "1"), "--reset-site"),
    (("--geometry", "grid:2x2", "--reset-site", "3,1"), "--reset-site"),
    (("--geometry", "grid:2x2", "--start-site", "5"), "--start-site"),
    (("--geometry", "grid:2x2", "--length", "5"), "--length"),
    (("--geometry", "ladder:3", "-L", "4"), "--length"),
    (("--geometry", "grid:2x2", "--engine", "mps"), "--engine"),
    (("--geometry", "grid:2x2", "--hopping-profile", "transfer"), "--hopping-profile"),
])
def test_cli_refusals_are_one_line_naming_the_option(args, option):
    line = _one_line_error(_cli("simulate", "--trajectories", "2", *args), option)
    if option == "--length":
        assert "L = " in line and "geometry" in line


def test_cli_length_equal_to_the_graph_is_accepted():
    res = _cli("simulate", "--geometry", "grid:2x2", "--length", "4", "--trajectories", "2", "--time-points", "5",
               "--t-final", "10/J")
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("kw, name", [
    (dict(geometry="grid:2x2", length=5), "length"),
    (dict(geometry="grid:2x2", start_site="2,2", reset_site=4), "reset_site"),
    (dict(geometry="grid:2x2", start_site="0,1"), "start_site"),
    (dict(geometry="grid:2x2", reset_site=9), "reset_site"),
    (dict(geometry="ring:4"), "geometry"),
])
def test_from_user_refusals_name_the_key(kw, name):
    with pytest.raises(ParameterError) as err:
        ArraySpec.from_user(**kw)
    assert err.value.name == name


def test_device_file_refuses_a_graph():
    from test_device_file import EXAMPLE

    with pytest.raises(ParameterError) as err:
        ArraySpec.from_user(device=EXAMPLE, geometry="grid:2x2")
    assert err.value.name == "geometry"


@pytest.mark.parametrize("study", ["rate-sweep", "dynamics", "length-scaling", "tolerance"])
def test_a_study_refuses_a_graph_by_name(study, tmp_path):
    line = _one_line_error(_cli("study", study, "--quick", "--geometry", "grid:2x2", "--out", str(tmp_path / "x")),
                           "--geometry")
    assert f"study {study} runs chains; use lru-mps simulate for a graph" in line
    _one_line_error(_cli("study", study, "--quick", "--reset-site", "2", "--out", str(tmp_path / "y")), "--reset-site")


def test_a_study_config_with_a_graph_is_refused(tmp_path):
    from lru_mps.studies import run_study
    from lru_mps.studies.base import StudyContext

    cfg = tmp_path / "rs.toml"
    cfg.write_text('study = "rate-sweep"\n[model]\ngeometry = "ladder:2"\n')
    with pytest.raises(ParameterError) as err:
        run_study("rate-sweep", StudyContext(out=tmp_path / "o", quiet=True), config_file=cfg, quick=True)
    assert err.value.name == "geometry" and "study rate-sweep runs chains" in str(err.value)
    # a chain given as such runs as before (the refusal only)
    from lru_mps.studies import get_study

    get_study("rate-sweep").refuse_geometry({"model": {"geometry": "chain"}})


def test_simulate_on_a_grid_from_the_users_options_follows_lindblad():
    """2 x 2 grid, start (1,2) and reset (2,1) (opposite corners, a relabelled layout) given as the user types them, realistic (the
    reference test's noisy conditions), periodic feedback: every resolved point within tests/test_vs_reference.py's
    bounds and the late window as tests/test_geometry.py's ring."""
    from test_vs_reference import _check_against_reference

    spec = ArraySpec.from_user(geometry="grid:2x2", start_site="1,2", reset_site="2,1", conditions="realistic",
                               reset="periodic", rate="0.01J", t1="400/J", tphi="500/J", temperature="300mK")
    assert spec.transit_hops == 2 and spec.geometry == geo.grid(2, 2).relabel(1, 2)
    n = 1000
    real = spec.draw_realization(np.random.default_rng(21))
    res, curves, pooled = _check_against_reference(spec, real, trajectories=n, cover=300.0, seed=13)
    assert all(v < 0.20 * (1500 / n) ** 0.5 for v in pooled.values()), pooled
