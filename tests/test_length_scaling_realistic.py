"""Realistic conditions on long arrays in the studies: length-scaling past L = 6, the disorder sweep at L = 8.

Small runs (a few trajectories, short times; ~20 s on one core): the
contract of the realistic summary (hardware limits, where leakage removal
stops paying, the engine mix per L) and that L > 6 runs on the
per-trajectory engines.  The physics of the engines is tested in
test_sector_realistic.py.
"""

import json
import math

import numpy as np
import pytest

from lru_mps.physics.model import ArraySpec
from lru_mps.run.simulate import simulate

from lru_mps.studies import get_study, run_study
from lru_mps.studies.base import StudyContext


def test_realistic_length_scaling_past_L6(tmp_path):
    # L = 2 a short array (3x the trajectories, excited interiors at 8x their odds: the defaults), L = 8 a long one
    # here: its leakage start runs long_leakage_factor x the trajectories of the qubit starts, at its own odds
    over = dict(conditions="realistic", realistic_lengths="2,8", trajectories=4, time_points=21, realistic_t_after="0.5us",
                short_lengths="2", long_leakage_factor=2, long_leakage_thermal_odds=3, long_coherence_factor=0.5)
    res = run_study("length-scaling", StudyContext(out=tmp_path, workers=1), overrides=over)
    s = json.loads((tmp_path / "summary.json").read_text())
    e = s["by_conditions"]["realistic"]
    assert e["lengths"] == [2, 8] and e["engines"] == ["exact", "auto"]
    assert e["leakage_thermal_odds"] == [8.0, 3.0]
    assert e["trajectories"] == [12, 4] and e["leakage_trajectories"] == [12, 8] and e["coherence_trajectories"] == [12, 2]
    assert e["leakage_integrate_decay"] == [False, True]  # the long array's leakage start (the TOML's default)
    assert e["engine_mix"] == [{"exact": 36}, {"sector": 14, "mps": 0}]  # 100 mK at L = 8: small sectors
    # the split run at L = 8 is the same trajectories as runs of each initial state alone (a trajectory's numbers
    # depend only on the seed, its index and its initial state)
    spec = ArraySpec.from_user(length=8, conditions="realistic")
    t_final = float(res.dataset["time_J"].values[1, -1])
    alone = {"leakage": simulate(spec, init="leakage", t_final=t_final, time_points=21, trajectories=8,
                                 leakage_thermal_odds=3, hot_tail=4, integrate_decay=True),
             "qubit": simulate(spec, init="qubit", t_final=t_final, time_points=21, trajectories=4, hot_tail=4),
             "coherence": simulate(spec, init="coherence", t_final=t_final, time_points=21, trajectories=2, hot_tail=4)}
    for name, init in (("leakage_array", "leakage"), ("qubit_population", "qubit"), ("qubit_coherence", "coherence")):
        got = res.dataset[f"{name}_mean"].sel(conditions="realistic", L=8).values
        np.testing.assert_allclose(got, alone[init].observable(name).mean, rtol=1e-12, atol=1e-15)
    # the leakage lifetimes and the removal efficiency are reported at every L (issue 23's keys)
    for k in range(2):
        for name in ("leakage_lifetime_qubit", "leakage_lifetime_array"):
            t = e[name][k]
            assert t["value_J"] > 0 and t["error_J"] >= 0 and t["tail"] in ("fit", "bound")
        eta = e["removal_efficiency"][k]
        assert 0.0 < eta["value"] <= 1.0
    assert res.dataset["leakage_lifetime_array_J"].dims == ("conditions", "L")
    hw = e["hardware_limits"]
    assert hw["T1q"]["value_us"] == pytest.approx(16.7)
    assert hw["T2q"]["value_us"] == pytest.approx(1 / (1 / 33.4 + 1 / 10.0))
    rp = e["removal_stops_paying"]
    assert rp["transit_estimate_L"] == pytest.approx(1 + hw["T_leak_own"]["value_J"] / (math.pi / (2 * 2 / 50.0)))
    # measured_L is the first L whose T_star minus its error reaches T1q/2 (the criterion the summary states),
    # recomputed here from the summary's own T_star values and errors
    own = hw["T_leak_own"]["value_J"]
    expected = next((L for L, t in zip(e["lengths"], e["T_star"])
                     if t["value_J"] is not None and t["value_J"] - (t["error_J"] or 0.0) >= own), None)
    assert rp["measured_L"] == expected
    # physics: the stack also decays by itself at 2/T1q, so a resolved T_star cannot exceed T1q/2 by more than
    # its errors (at most 3 of them)
    for t in e["T_star"]:
        if t["value_J"] is not None:
            assert t["value_J"] <= own + 3.0 * (t["error_J"] or 0.0), (t, own)
    t_final = res.dataset["time_J"].values[:, -1]
    assert t_final[1] == pytest.approx(7 * math.pi / 0.08 + 0.5e-6 * 2 * math.pi * 5e6)  # transit + realistic_t_after
    assert res.dataset.attrs["T1q_J"] == pytest.approx(hw["T1q"]["value_J"])
    assert "leakage removal stops paying" in res.table and "sector 14 / mps 0" in res.table
    assert "L=2: 12/12/12 (x8); L=8: 8/4/2 (x3, D)" in res.table
    assert (tmp_path / "figures" / "decay_times_vs_L.png").stat().st_size > 1000


def test_removal_stops_paying_criterion():
    """The criterion of ``measured_L`` on constructed T_star values: it can fail.

    T1q/2 = 262.4/J at the paper's T1q.  The first L whose T_star is not significantly below it (T_star + 2
    errors >= T1q/2) counts: L = 3 at 1.5 errors below counts, at 3 errors below it does not; an unresolved T_star
    (None) never counts; none reaching it gives None.
    """
    from lru_mps.physics.model import ArraySpec
    from lru_mps.studies.length_scaling import _realistic_summary

    class _Attrs:
        attrs: dict = {}

    spec = ArraySpec.from_user(length=2, conditions="realistic")
    own = spec.conditions.T1q / 2.0

    def measured(values):
        unmeasured = [{"value_us": None, "error_us": None}] * 5  # (the qubit's times: not what this test reads)
        entry = {"lengths": [2, 3, 4, 5, 6], "T1": unmeasured, "T2": unmeasured,
                 "T_star": [{"value_J": v, "error_J": e} for v, e in values]}
        _realistic_summary(entry, spec, [{}] * 5, _Attrs())
        return entry["removal_stops_paying"]["measured_L"]

    assert measured([(0.2 * own, 1.0), (own - 3.0, 2.0), (own + 3.0, 2.0), (None, None), (2 * own, 1.0)]) == 3
    assert measured([(0.2 * own, 1.0), (own - 6.0, 2.0), (own - 1.0, 2.0), (None, None), (2 * own, 1.0)]) == 4
    assert measured([(0.2 * own, 1.0), (None, None), (own - 9.0, 2.0), (own + 3.0, 2.0), (2 * own, 1.0)]) == 5
    assert measured([(0.2 * own, 1.0), (0.5 * own, 1.0), (own - 5.0, 2.0), (None, None), (own - 3.0, 1.0)]) is None


def test_default_realistic_lengths_reach_L20():
    cfg = get_study("length-scaling").DEFAULTS
    from lru_mps.studies.base import parse_lengths

    assert parse_lengths(cfg["realistic_lengths"]) == [2, 3, 4, 5, 6, 8, 10, 12, 16, 20]
    assert cfg["engine"] == "auto" and cfg["realistic_t_after"] == "40us"


def test_disorder_sweep_accepts_realistic_L8(tmp_path):
    over = dict(disorder="100MHz", length=8, conditions="realistic", trajectories=3, time_points=11,
                t_final="0.3us", leakage_tail_tprop=1.0)
    s = run_study("disorder-sweep", StudyContext(out=tmp_path, workers=1), overrides=over).summary
    assert s["parameters"]["L"] == 8 and s["conditions"] == ["realistic"]
    assert s["ensembles"]["realistic"]["estimator"] == "branch"


def test_long_leakage_keys_are_checked(tmp_path):
    """The long arrays' leakage keys: counts and odds per L, and one clear error naming a bad key."""
    from lru_mps.errors import ParameterError
    from lru_mps.studies.base import load_config
    from lru_mps.studies.length_scaling.plan import _ensembles

    # a study file's per-length table replaces the default's whole (the lengths it does not name take the factor)
    study = get_study("length-scaling")
    (tmp_path / "a.toml").write_text('study = "length-scaling"\nlong_leakage_factor_at = { 12 = 4 }\n')
    assert load_config(study.NAME, study.DEFAULTS, tmp_path / "a.toml", {})["long_leakage_factor_at"] == {"12": 4}
    assert study.DEFAULTS["long_leakage_factor_at"] == {"10": 2, "16": 2, "20": 3.5}
    (tmp_path / "b.toml").write_text('study = "length-scaling"\nlong_leakage_factor_at = 4\n')
    with pytest.raises(ParameterError, match="long_leakage_factor_at"):
        load_config(study.NAME, study.DEFAULTS, tmp_path / "b.toml", {})

    cfg = dict(trajectories=240, short_lengths="2:8", short_factor=3, short_leakage_thermal_odds=8,
               long_leakage_factor=3, long_leakage_hot_tail=1, long_leakage_thermal_odds=1, hot_tail=4,
               long_leakage_integrate_decay=True)
    assert _ensembles(cfg, 4, False, 64) == [("all", 720, 8.0, 4.0, False)]
    assert _ensembles(cfg, 12, False, 64) == [("leakage", 720, 1.0, 1.0, True),
                                              (["qubit", "coherence"], 240, 1.0, 4.0, False)]
    assert _ensembles(cfg, 12, True, 64) == [("all", 64, 1.0, 4.0, False)]
    assert _ensembles({**cfg, "long_leakage_integrate_decay": False}, 12, False, 64)[0][4] is False
    # per length (long arrays only; the lengths not named take long_leakage_factor) and fewer coherence rows
    per_l = {**cfg, "long_leakage_factor_at": {"20": 5, "4": 2}, "long_coherence_factor": 0.5}
    assert _ensembles(per_l, 20, False, 64) == [("leakage", 1200, 1.0, 1.0, True), ("qubit", 240, 1.0, 4.0, False),
                                                ("coherence", 120, 1.0, 4.0, False)]
    assert _ensembles(per_l, 12, False, 64)[0] == ("leakage", 720, 1.0, 1.0, True)
    assert _ensembles(per_l, 4, False, 64) == [("all", 720, 8.0, 4.0, False)]
    # the qubit and coherence starts' own factor at named lengths (short or long; the leakage start keeps its rows)
    q = {**cfg, "qubit_factor_at": {"3": 4, "20": 2}, "long_coherence_factor": 0.5}
    assert _ensembles(q, 3, False, 64) == [("leakage", 720, 8.0, 4.0, False),
                                           (["qubit", "coherence"], 2880, 1.0, 4.0, False)]
    assert _ensembles(q, 20, False, 64) == [("leakage", 720, 1.0, 1.0, True), ("qubit", 480, 1.0, 4.0, False),
                                            ("coherence", 240, 1.0, 4.0, False)]
    assert _ensembles(q, 4, False, 64) == [("all", 720, 8.0, 4.0, False)]
    assert _ensembles(q, 3, True, 64) == [("all", 64, 1.0, 4.0, False)]  # ideal: one branch per realization
    for key, bad in (("long_leakage_factor", 0.5), ("long_leakage_hot_tail", 0), ("long_leakage_thermal_odds", -1),
                     ("long_leakage_integrate_decay", "yes"), ("long_coherence_factor", 1.5),
                     ("long_coherence_factor", 0), ("long_leakage_factor_at", 5),
                     ("long_leakage_factor_at.20", {"20": 0.5}), ("long_leakage_factor_at.x", {"x": 2}),
                     ("qubit_factor_at", 4), ("qubit_factor_at.20", {"20": 0}), ("qubit_factor_at.1", {"1": 2})):
        with pytest.raises(ParameterError, match=key.replace(".", r"\.")):
            _ensembles({**cfg, key.split(".")[0]: bad}, 20, False, 64)
