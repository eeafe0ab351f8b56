"""`lru-mps study temperature-sweep`: outputs, contract, bad input, and the ensembles it fits at T > 0.

Cost: the quick study (~10 s, once: the session's, conftest.quick_study) and an L = 4, 250 mK sector ensemble against
the Lindblad reference (300 trajectories, ~1 minute) on one core.
"""

import json

import numpy as np
import pytest

from helpers import LIFETIME_KEYS, check_lifetimes, load_study, stored_lifetimes
from lru_mps.errors import ParameterError
from lru_mps.io.datasets import load_dataset
from lru_mps.studies import run_study, study_names
from lru_mps.physics.units import to_time
from lru_mps.studies.base import StudyContext
from lru_mps.studies.common import spec_of
from lru_mps.studies.temperature_sweep import _temperatures

TIME_KEYS = {"value_J", "error_J", "value_us", "error_us"}


@pytest.fixture(scope="module")
def quick(quick_study):
    res, _ = quick_study("temperature-sweep")  # the session's run (conftest), shared with tests/test_gaps.py
    return res.out, res


def test_quick_temperature_sweep(quick):
    tmp_path, res = quick
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s == json.loads(json.dumps(res.summary, default=float))
    assert "temperature-sweep" in study_names()
    assert s["lengths"] == [3, 6] and s["temperatures_mK"] == [0.0, 150.0, 300.0]
    for key in ("T_star", "T1", "T2"):
        assert len(s[key]) == 2 and all(len(row) == 3 for row in s[key])
        assert all(set(t) - {"reason", "flags"} == TIME_KEYS for row in s[key] for t in row)
    hw = s["hardware_limits"]
    # a T2 beyond the single transmon's T2 (or 2 T1) by more than its error is flagged with the bound, in the JSON
    # and in the table ('!' on the cell, the bound under the table): at L = 3, 300 mK, 9.5 +- 1.0 us > 7.70 us
    for li, L in enumerate(s["lengths"]):
        for ti, t in enumerate(s["T2"][li]):
            beyond = t["value_us"] is not None and t["value_us"] - t["error_us"] > hw["T2q"]["value_us"]
            assert ("flags" in t) == beyond or t["value_us"] - t["error_us"] > 2 * s["T1"][li][ti]["value_us"]
    assert s["T2"][0][2]["flags"] == ["above the single transmon's T2 limit T2q = 7.70 us"]
    assert "9.5+-1.0!" in res.table and "! T2 at L = 3, 300 mK = 9.5 +- 1.0 us: above the single transmon's T2 " \
        "limit T2q = 7.70 us" in res.table
    assert hw["T1q"]["value_us"] == pytest.approx(16.7) and hw["T_leak_own"]["value_J"] == pytest.approx(
        hw["T1q"]["value_J"] / 2)
    assert hw["T2q"]["value_us"] == pytest.approx(1 / (1 / 33.4 + 1 / 10.0))
    assert s["engine_mix"][0][0] == {"exact": 192}  # 64 trajectories x 3 initial states
    # the thermal start by strata: the quick form's thermal rows are drawn, so the temperature shows (tau_1 grows)
    tau1 = [t["value_us"] for t in s["leakage_lifetime_qubit"][1]]
    assert tau1[2] > tau1[0] and s["T2"][0][1]["value_us"] != s["T2"][0][0]["value_us"]
    ds = load_dataset(tmp_path / "results.nc")
    assert ds["T1_J"].dims == ("L", "temperature") and ds["temperature"].attrs["units"] == "mK"
    assert (tmp_path / "figures" / "decay_times_vs_temperature.png").stat().st_size > 1000
    assert "hardware limits" in res.table


def test_temperature_sweep_reports_leakage_lifetimes(quick):
    """Issue 23: per length and temperature, the leakage lifetimes of that point's ensemble (check_lifetimes)."""
    out, res = quick
    cfg, s, ds = load_study(out)
    for li, L in enumerate(s["lengths"]):
        for ti, (label, _) in enumerate(_temperatures(cfg)):  # the study's order (ascending)
            spec = spec_of(cfg, length=L, temperature=label)
            t_final = (L - 1) * spec.T_prop + to_time(cfg["t_after"], "t_after", spec.J_hz)
            want = stored_lifetimes(out, spec, cfg, init="all", t_final=t_final, time_points=cfg["time_points"],
                                    trajectories=cfg["trajectories"], thermal_strata=cfg["thermal_strata"])
            check_lifetimes({k: s[k][li][ti] for k in LIFETIME_KEYS}, ds.isel(L=li, temperature=ti), want, False)
    assert ds["leakage_lifetime_array_J"].dims == ds["removal_efficiency"].dims == ("L", "temperature")
    assert "tau_leak(1)" in res.table and "tau_leak(L)" in res.table


def test_long_arrays_stop_at_max_temperature_long(tmp_path):
    over = dict(lengths="2,8", temperatures="0,200mK", trajectories=2, time_points=5, t_after="0.1us",
                max_temperature_long="100mK")
    s = run_study("temperature-sweep", StudyContext(out=tmp_path, workers=1), overrides=over).summary
    assert s["T1"][1][1] is None and s["T1"][0][1] is not None  # L = 8 at 200 mK not run
    assert s["leakage_lifetime_array"][1][1] is None and s["removal_efficiency"][1][1] is None
    assert s["leakage_lifetime_array"][1][0]["value_J"] > 0
    assert s["engine_mix"][1][0] == {"sector": 6}  # L = 8 at T = 0: the sector engine (N <= 2)


def test_a_single_temperature_runs_alone_and_with_the_list_is_refused(tmp_path):
    """--temperature (or model.temperature) is a list of one temperature; with --temperatures it is refused."""
    from lru_mps.studies import get_study, single_values
    from lru_mps.studies.base import load_config

    study = get_study("temperature-sweep")
    cfg = load_config(study.NAME, study.DEFAULTS, None, {"temperature": "100mK"})
    single_values(study.NAME, cfg, {"temperature"})
    assert cfg["temperatures"] == ["100mK"] and _temperatures(cfg) == [("100mK", 0.1)]
    with pytest.raises(ParameterError, match="one of --temperature and --temperatures"):
        run_study("temperature-sweep", StudyContext(out=tmp_path, workers=1), quick=True,
                  overrides={"temperature": "100mK", "temperatures": "0,100mK"})


COVER = 150.0  # 1/J: past the fit window (L - 1) T_prop = 118/J


def test_sector_ensemble_agrees_with_lindblad_L4_hot():
    """L = 4 at 300 mK (T1q = 400/J, Tphi = 500/J), periodic feedback: the sector engine's ensemble within
    4 standard errors of the density-matrix reference at every resolved point, the headline quantities at every
    time up to COVER (same check as test_vs_reference)."""
    from test_vs_reference import _check_against_reference, _noisy

    spec = _noisy(4, "periodic")
    assert spec.conditions.temperature_K == 0.3
    real = spec.draw_realization(np.random.default_rng(31))
    res, _, _ = _check_against_reference(spec, real, trajectories=600, cover=COVER, engine="sector", seed=5)
    # the hot array adds excitations to the prepared one (3 sites x ~0.2 each at 300 mK)
    assert res.site_resolved("qubit", "site_population").mean[0].sum() > 1.2
