"""One source of defaults: the same MPS case through the Python API, the CLI and a study gives the same numbers."""

import json

import numpy as np
from click.testing import CliRunner

from lru_mps.defaults import MPS, MODEL
from lru_mps.run.settings import make_settings
from lru_mps.run.simulate import simulate
from lru_mps.physics.model import ArraySpec
from lru_mps.studies import run_study
from lru_mps.studies.base import StudyContext
from lru_mps_cli.main import main

CASE = dict(length=3, reset="dissipation", rate="1J", conditions="ideal")


def test_mps_case_is_the_same_from_every_entry_point(tmp_path):
    spec = ArraySpec.from_user(**CASE)
    api = simulate(spec, init="leakage", t_final="4/J", time_points=5, trajectories=2, seed=3, engine="mps")
    assert api.settings.engine_options == MPS  # the engine ran with the one set of defaults

    args = ["simulate", "--init", "leakage", "--t-final", "4/J", "--time-points", "5", "--trajectories", "2",
            "--seed", "3", "--engine", "mps", "--workers", "1", "--json"]
    for key, value in CASE.items():
        args += [f"--{key}", str(value)]
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    cli = json.loads(res.output)
    assert cli["parameters"]["engine_order"] == MPS["order"] and cli["parameters"]["engine_dt"] == MPS["dt"]

    study = run_study("dynamics", StudyContext(out=tmp_path, workers=1), overrides={
        "rate": CASE["rate"], "reset": CASE["reset"], "conditions": CASE["conditions"], "engine": "mps",
        "t_final": "4/J", "time_points": 5, "realizations": 2, "seed": 3,
    })
    curve = study.summary["curves"][CASE["rate"]]["leakage_array"]["mean"]

    expected = api.observable("leakage_array").mean
    assert abs(expected[-1] - expected[0]) > 1e-3  # the case does evolve
    np.testing.assert_array_equal(cli["observables"]["leakage_array"]["mean"], expected)
    np.testing.assert_array_equal(np.array(curve, dtype=float), expected)


def test_python_api_defaults_are_the_cli_defaults():
    spec = ArraySpec.from_user()
    assert spec.L == MODEL["length"] and not spec.conditions.ideal  # realistic, as lru-mps simulate
    settings = make_settings(spec, engine="mps")
    assert settings.engine_options == MPS
    assert make_settings(spec).engine == "exact"  # auto at L = 3
