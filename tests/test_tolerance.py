"""`lru-mps study tolerance` (issue 22, item 6): outputs, JSON contract, the doubling fit, common random numbers,
and spread 0 = the run without the option, bit for bit.

Cost on one core: the quick study once (the session's, conftest.quick_study; a few seconds), the
quick hopping-spread kind (two ensembles), one quick-sized ensemble without a
store, and arithmetic.
"""

import json

import numpy as np
import pytest

from conftest import copy_study
from helpers import LIFETIME_KEYS, check_lifetimes, load_study, stored_lifetimes

from lru_mps.analysis.decay import decay_times
from lru_mps.analysis.lifetimes import leakage_lifetimes
from lru_mps.errors import ParameterError
from lru_mps.io.datasets import load_dataset
from lru_mps.physics.units import to_time
from lru_mps.run.seeding import disorder_rng
from lru_mps.run.simulate import simulate
from lru_mps.studies import replot, run_study, study_names
from lru_mps.studies.base import StudyContext
from lru_mps.studies.common import spec_of
from lru_mps.studies.tolerance import STUDIES
from lru_mps.analysis.tolerance import doubling_crossing, doubling_fit, fit_points

TIME_KEYS = {"value_J", "error_J", "value_us", "error_us"}
DOUBLING_KEYS = {"value_J", "error_J", "value_MHz", "error_MHz", "value_Jprop", "error_Jprop", "chi2_red", "bound"}


@pytest.fixture(scope="module")
def quick(quick_study):
    res, _ = quick_study("tolerance")  # the session's run (conftest), shared with tests/test_gaps.py
    return res.out, res


def test_quick_tolerance_outputs_and_contract(quick, tmp_path):
    out, res = quick
    s = json.loads((out / "summary.json").read_text())
    assert s == json.loads(json.dumps(res.summary, default=float))
    assert "tolerance" in study_names()
    assert s["kinds"] == ["e2_spread", "frequency_noise"] and s["lengths"] == [3]
    assert s["conditions"] == "realistic"
    assert s["J_prop"]["value_J"] == pytest.approx(0.04) and s["J_prop"]["value_MHz"] == pytest.approx(0.2)
    assert "hopping_spread" in s["note"]
    e2, fn = s["e2_spread"], s["frequency_noise"]
    assert e2["spreads_Jprop"] == pytest.approx([0.0, 4.0, 10.0]) and e2["spreads_MHz"] == pytest.approx([0, 0.8, 2])
    assert fn["spreads_Jprop"] == pytest.approx([0.0, 5.0])
    for entry, n in ((e2, 3), (fn, 2)):
        (row,) = entry["by_length"]
        assert row["L"] == 3
        for q in ("T_star", "T_prop", "T1", "T2"):
            assert len(row[q]) == n and all(set(t) - {"reason", "flags"} == TIME_KEYS for t in row[q])
            # a reason where the time is not a result: not there, or an error of half of it or more
            assert all(("reason" in t) == (t["value_J"] is None or t["error_J"] >= 0.5 * t["value_J"])
                       for t in row[q] if q != "T_prop"), q
        for q, keys in LIFETIME_KEYS.items():
            assert len(row[q]) == n and all(set(t) == keys for t in row[q])
        for q in ("leakage_lifetime_qubit", "leakage_lifetime_array"):
            assert all(t["value_J"] is not None and t["value_J"] > 0 for t in row[q])  # always defined
        for key in ("T_star_doubling", "tau_L_doubling"):
            assert DOUBLING_KEYS <= set(row[key]) and row[key]["bound"] in (None, "lower")
            assert {"value_Jprop", "error_Jprop", "bound"} <= set(row[key]["crossing"])
        assert row["T_prop"][0]["value_J"] == pytest.approx(np.pi / (2 * 0.04))
    # spread 0 is one ensemble shared by both kinds
    assert e2["by_length"][0]["T_star"][0] == fn["by_length"][0]["T_star"][0]
    assert e2["by_length"][0]["T1"][0] == fn["by_length"][0]["T1"][0]
    ds = load_dataset(out / "results.nc")
    assert ds["T_star_J"].dims == ("kind", "L", "spread") and ds["spread_Jprop"].dims == ("kind", "spread")
    assert np.isnan(float(ds["spread_J"].sel(kind="frequency_noise").isel(spread=2)))  # padded
    fig = out / "figures" / "decay_times_vs_spread.png"
    assert fig.stat().st_size > 1000 and fig.with_suffix(".pdf").exists()
    copy = copy_study(out, tmp_path / "copy")  # (the session's folder is shared)
    fig = copy / "figures" / "decay_times_vs_spread.png"
    fig.unlink()
    assert any(p.name == "decay_times_vs_spread.png" for p in replot(copy)) and fig.exists()  # lru-mps plot DIR
    assert "doubles at S =" in res.table and "hopping_spread" in res.table
    assert "tau_leak(1)" in res.table and "tau_leak(L)" in res.table


def test_lifetimes_are_those_of_each_points_ensemble(quick):
    """Issue 23: per error kind and spread, the leakage lifetimes of that point's ensemble (check_lifetimes)."""
    out, res = quick
    cfg, s, ds = load_study(out)
    for kind in s["kinds"]:
        (row,) = s[kind]["by_length"]
        for p, text in enumerate(s[kind]["spreads"]):
            spec = spec_of(cfg, length=row["L"], **{kind: text})
            t_final = (row["L"] - 1) * spec.T_prop + to_time(cfg["t_after"], "t_after", spec.J_hz)
            want = stored_lifetimes(out, spec, cfg, init="all", t_final=t_final, time_points=cfg["time_points"],
                                    trajectories=cfg["trajectories"], leakage_thermal_odds=cfg["leakage_thermal_odds"])
            check_lifetimes({k: row[k][p] for k in LIFETIME_KEYS}, ds.sel(kind=kind, L=row["L"]).isel(spread=p), want,
                            s["conditions"] == "ideal")


def test_spread_zero_is_the_run_without_the_option(quick):
    """Spread 0 of the study gives exactly the numbers of the same ensemble without the option (no store)."""
    out, res = quick
    cfg = {**STUDIES["tolerance"].DEFAULTS, **STUDIES["tolerance"].QUICK}
    spec = spec_of(cfg, length=3)
    assert spec_of(cfg, length=3, e2_spread="0") == spec and spec_of(cfg, length=3, frequency_noise="0") == spec
    t_final = 2 * spec.T_prop + to_time(cfg["t_after"], "t_after", spec.J_hz)
    ref = simulate(spec, init="all", t_final=t_final, time_points=cfg["time_points"], trajectories=cfg["trajectories"],
                   seed=cfg["seed"], engine=cfg["engine"], estimator="branch",
                   leakage_thermal_odds=cfg["leakage_thermal_odds"])
    alt = simulate(spec_of(cfg, length=3, e2_spread="0"), init="all", t_final=t_final, time_points=cfg["time_points"],
                   trajectories=cfg["trajectories"], seed=cfg["seed"], engine=cfg["engine"], estimator="branch",
                   leakage_thermal_odds=cfg["leakage_thermal_odds"])
    for obs in ("leakage_array", "qubit_population", "qubit_coherence"):
        assert np.array_equal(ref.observable(obs).mean, alt.observable(obs).mean)
    row = res.summary["e2_spread"]["by_length"][0]
    d = decay_times(ref)
    for q in ("T_star", "T1", "T2"):
        if d[q] is None:
            assert row[q][0]["value_J"] is None
        else:
            assert row[q][0]["value_J"] == d[q].value and row[q][0]["error_J"] == d[q].error  # bit for bit
    lives = leakage_lifetimes(ref)
    assert row["leakage_lifetime_array"][0]["value_J"] == lives["leakage_lifetime_array"].value
    assert row["removal_efficiency"][0]["value"] == lives["removal_efficiency"].value
    # a nonzero spread changes the numbers (the option is live)
    assert row["leakage_lifetime_array"][2]["value_J"] != row["leakage_lifetime_array"][0]["value_J"]


def test_common_random_numbers():
    """The box part of every realization is the same at every spread: the spread's draws come after it."""
    cfg = {**STUDIES["tolerance"].DEFAULTS, "model": {"conditions": "realistic"}}
    base = spec_of(cfg, length=6)
    e2 = spec_of(cfg, length=6, e2_spread="5Jprop")
    fn = spec_of(cfg, length=6, frequency_noise="3Jprop")
    for i in range(50):
        r0 = base.draw_realization(disorder_rng(0, i))
        r_e = e2.draw_realization(disorder_rng(0, i))
        r_f = fn.draw_realization(disorder_rng(0, i))
        assert np.array_equal(r_e.dw, r0.dw)  # the e2 spread leaves the box frequencies as they are
        assert np.array_equal(r_f.U, r0.U)  # U_l = Ubar + 2 dw0_l: the box draws, bit for bit
        np.testing.assert_allclose(r_f.calibrated_dw, r0.dw, rtol=0, atol=1e-13)  # (dw0 + s) - s, rounded
        delta = (2 * r_e.dw - r_e.U) - (2 * r0.dw - r0.U)  # the E2 detunings: the spread's own normals
        assert np.all(delta != 0) and np.all(np.abs(delta) < 6 * 5 * 0.04)
        assert np.all(r_f.frequency_offset != 0)


def test_doubling_fit_recovers_a_known_spread():
    """T_star = T0 (1 + (S/S_2)^2) with 3 % noise: S_2 recovered within 3 errors, chi2_red ~ 1, over many draws."""
    S = np.array([0.0, 1, 2, 3, 5, 7, 10])
    S2, T0 = 3.0, 80.0
    y = T0 * (1 + (S / S2) ** 2)
    e = 0.03 * y
    rng = np.random.default_rng(7)
    pulls, chis = [], []
    for _ in range(200):
        fit = doubling_fit(S, y + rng.normal(0, e), e)
        assert fit["bound"] is None and fit["error"] > 0
        pulls.append((fit["value"] - S2) / fit["error"])
        chis.append(fit["chi2_red"])
    pulls = np.array(pulls)
    assert np.all(np.abs(pulls) < 4) and abs(pulls.mean()) < 0.3 and 0.8 < pulls.std() < 1.25  # honest errors
    assert 0.8 < np.mean(chis) < 1.2
    fit = doubling_fit(S, y, e)
    assert fit["value"] == pytest.approx(S2, rel=1e-6) and fit["T0"] == pytest.approx(T0, rel=1e-6)


def test_doubling_fit_gives_a_bound_when_T_star_does_not_double():
    S = np.array([0.0, 1, 2, 4])
    rng = np.random.default_rng(3)
    flat = doubling_fit(S, 80 + rng.normal(0, 2, 4), np.full(4, 2.0))
    assert flat["bound"] == "lower" and flat["value"] == 4.0 and flat["error"] is None
    # growing, but doubling only past the range: still a bound at the largest spread
    slow = doubling_fit(S, 80 * (1 + (S / 8.0) ** 2), np.full(4, 1.0))
    assert slow["bound"] == "lower" and slow["value"] == 4.0
    # nan points (unresolved T_star) are left out
    part = doubling_fit(S, [80, np.nan, 80 * (1 + (2 / 1.5) ** 2), 80 * (1 + (4 / 1.5) ** 2)], [1, 1, 1, 1])
    assert part["value"] == pytest.approx(1.5, rel=1e-4) and part["points"] == 3
    assert fit_points([80, 100, 250, 400], 3.0) == 3 and fit_points([80, 100, 120], 3.0) == 3
    assert fit_points([np.nan, 80, 300], 3.0) == 3


def test_swept_error_in_the_model_table_is_refused(tmp_path):
    with pytest.raises(ParameterError, match="e2_spread"):
        run_study("tolerance", StudyContext(out=tmp_path, workers=1), quick=True, overrides={"e2_spread": "1Jprop"})
    with pytest.raises(ParameterError, match="kinds"):
        run_study("tolerance", StudyContext(out=tmp_path, workers=1), quick=True, overrides={"kinds": "coupler_drift"})
    with pytest.raises(ParameterError, match="hopping_spread"):
        run_study("tolerance", StudyContext(out=tmp_path, workers=1), quick=True,
                  overrides={"kinds": "hopping_spread", "hopping_spread": "5%"})


def test_quick_hopping_spread_kind(quick, tmp_path):
    """The per-bond coupling spread as a kind: fractions as its units, X = 0 is the ensemble without the option
    (the other kinds' S = 0, bit for bit), X = 20 % changes the numbers."""
    res = run_study("tolerance", StudyContext(out=tmp_path, workers=1), quick=True,
                    overrides={"kinds": "hopping_spread"})
    s = json.loads((tmp_path / "summary.json").read_text())
    hop = s["hopping_spread"]
    assert s["kinds"] == ["hopping_spread"] and hop["spreads"] == ["0", "20%"]
    assert hop["spreads_fraction"] == [0.0, 0.2] and hop["spreads_percent"] == [0.0, 20.0]
    assert "spreads_J" not in hop and "spreads_Jprop" not in hop
    (row,) = hop["by_length"]
    for key in ("T_star_doubling", "tau_L_doubling"):
        assert {"value_fraction", "error_fraction", "value_percent", "bound"} <= set(row[key])
        assert "value_Jprop" not in row[key] and "value_fraction" in row[key]["crossing"]
    zero = quick[1].summary["e2_spread"]["by_length"][0]
    assert row["T_star"][0] == zero["T_star"][0] and row["T1"][0] == zero["T1"][0]  # X = 0: the same ensemble
    assert row["leakage_lifetime_array"][1]["value_J"] != row["leakage_lifetime_array"][0]["value_J"]
    ds = load_dataset(tmp_path / "results.nc")
    assert list(ds["spread_fraction"].sel(kind="hopping_spread").values) == [0.0, 0.2]
    assert np.all(np.isnan(ds["spread_J"].sel(kind="hopping_spread").values))
    assert "per-bond coupling spread" in res.table and "X" in res.table
    assert (tmp_path / "figures" / "decay_times_vs_spread.png").stat().st_size > 1000


def test_doubling_crossing_interpolates_and_bounds():
    """The model-free crossing of 2 T0: linear interpolation between the bracketing spreads, its error
    propagated; a lower bound where no point doubles."""
    S = [0.0, 1.0, 2.0, 4.0]
    c = doubling_crossing(S, [2.0, 3.0, 5.0, 6.0], [0.0, 0.0, 0.0, 0.0])
    assert c["value"] == pytest.approx(1.5) and c["error"] == 0 and c["bound"] is None
    # error: u = (2 T0 - Ta)/(Tb - Ta), dS = ds sqrt(sum (du/dT_i sigma_i)^2), checked by finite differences
    y, e = np.array([2.0, 3.0, 5.0, 6.0]), np.array([0.1, 0.2, 0.3, 0.1])
    c = doubling_crossing(S, y, e)
    grad = [(doubling_crossing(S, y + h, e)["value"] - c["value"]) / 1e-7 for h in np.eye(4) * 1e-7]
    assert c["error"] == pytest.approx(float(np.sqrt(np.sum((np.array(grad) * e) ** 2))), rel=1e-4)
    flat = doubling_crossing(S, [2.0, 2.5, 3.0, 3.5], [0.1] * 4)
    assert flat["bound"] == "lower" and flat["value"] == 4.0 and flat["error"] is None
    assert doubling_crossing(S, [2.0, np.nan, 5.0, 6.0], [0.1] * 4)["value"] == pytest.approx(0.0 + 2.0 / 3.0 * 2.0)


def test_doubling_without_a_degree_of_freedom_has_no_error_and_the_estimate_that_holds_is_named(quick):
    """The quick study fits the doubling through 2 spreads (no degree of freedom): its error is null with the reason
    in the JSON and the table, never a number; each row says which of the fit and the model-free crossing holds (the
    crossing here), and a fit with degrees of freedom and an acceptable chi2 holds itself."""
    _, res = quick
    s = res.summary
    for kind in s["kinds"]:
        (row,) = s[kind]["by_length"]
        for key in ("T_star_doubling", "tau_L_doubling"):
            d = row[key]
            assert d["fit_spreads"] == 2 and d["dof"] == 0 and d["chi2_red"] is None and d["bound"] is None
            assert d["value_Jprop"] > 0 and d["error_J"] is None and d["error_MHz"] is None and d["error_Jprop"] is None
            assert d["error_reason"] == "no error: 2 points, no degree of freedom"
            assert d["holds"]["estimate"] == "crossing" and "no degree of freedom" in d["holds"]["reason"]
            assert d["crossing"]["error_Jprop"] > 0
    # the headline is the estimate that holds (the crossing, with its error); the fit is beneath it, as not the result
    lines = [x for x in res.table.splitlines() if "doubles at S =" in x]
    assert len(lines) == 4 and all("(model-free crossing of 2 T0)" in x and " +- " in x for x in lines), lines
    fits = [x for x in res.table.splitlines() if x.strip().startswith("fit of the onset")]
    assert len(fits) == 4 and all("no error: 2 points, no degree of freedom" in x and x.endswith("not the result")
                                  and " +- " not in x for x in fits), fits
    assert res.table.count("holds: crossing") == 4
    assert (res.out / "figures" / "decay_times_vs_spread.png").exists()
    from lru_mps.io.datasets import load_dataset
    ds = load_dataset(res.out / "results.nc")  # the figure's star marks the crossing: the dataset names what holds
    assert set(ds["T_star_doubling_holds"].values.ravel()) == {"crossing"}
    assert np.isfinite(ds["T_star_crossing_J"].values).all()
    # with degrees of freedom: the fit's error, and the fit holds where chi2 is acceptable
    from lru_mps.analysis.tolerance import which_holds
    S = np.array([0.0, 1.0, 2.0, 3.0])
    fit = doubling_fit(S, 80 * (1 + (S / 2.5) ** 2), np.full(4, 1.0))
    assert fit["dof"] == 2 and fit["error"] > 0 and fit["error_reason"] is None
    cross = doubling_crossing(S, 80 * (1 + (S / 2.5) ** 2), np.full(4, 1.0))
    assert which_holds(fit, cross)["estimate"] == "fit"
    bent = doubling_fit(S, [80, 100, 160, 170], np.full(4, 1.0))  # the form fails: the crossing holds
    assert which_holds(bent, doubling_crossing(S, [80, 100, 160, 170], np.full(4, 1.0)))["estimate"] == "crossing"
