"""`lru-mps study length-scaling`: contract, localization length, interrupt-and-resume."""

import json
import math
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import copy_study
from helpers import LIFETIME_KEYS, check_lifetimes, stored_lifetimes
from lru_mps.io.datasets import load_dataset
from lru_mps.studies import run_study
from lru_mps.studies.base import StudyContext, read_config
from lru_mps.studies.common import spec_of

TIME_KEYS = {"value_J", "error_J", "value_us", "error_us"}


def test_quick_study_outputs(quick_study, monkeypatch, tmp_path):
    res, _ = quick_study("length-scaling")  # the session's run (conftest), shared with tests/test_gaps.py
    folder = res.out
    s = json.loads((folder / "summary.json").read_text())
    assert s == json.loads(json.dumps(res.summary, default=float))
    L = s["lengths"]
    assert L == [2, 3, 4, 6, 8, 12] and s["conditions"] == "ideal"
    for key in ("T1", "T2", "T_star", "T_prop"):
        assert len(s[key]) == len(L) and all(set(t) - {"reason", "flags"} == TIME_KEYS for t in s[key])
        # an unresolved time (null) says why and what would resolve it
        assert all(("reason" in t) == (t["value_J"] is None or t["error_J"] >= 0.5 * t["value_J"])
                   for t in s[key] if key != "T_prop"), key
    assert "not resolved*" in res.table and "* T1 at L = 3; T2 at L = 3: not resolved: " in res.table
    assert s["T_prop"][0]["value_J"] == pytest.approx(math.pi / (2 * 2 / 50.0))
    assert s["T_prop"][0]["value_us"] == pytest.approx(1.25, rel=1e-3)  # the paper's 1.25 us
    assert len(s["T1_typical"]) == len(L) and all({"value", "error"} <= set(t) for t in s["T1_typical"])
    assert set(s["xi"]) >= {"value", "error"} and s["xi"]["value"] > 0
    # xi and its error are the asymptotic fit with the jackknife over realizations of the stored per-realization rates
    from lru_mps.analysis.localization import asymptotic_localization_length

    ds0 = load_dataset(folder / "results.nc")
    again = asymptotic_localization_length(ds0.L.values, ds0["log_T1_realization"].values)
    assert s["xi"]["value"] == pytest.approx(again["value"], rel=1e-12)
    assert s["xi"]["error"] == pytest.approx(again["error_jackknife"], rel=1e-12)
    xf = s["xi_fit"]
    assert xf["fit_lengths"] == again["fit_lengths"] and xf["min_length"] == min(xf["fit_lengths"])
    assert [d["L"] for d in xf["local_xi"]] == L[1:]
    assert xf["error_weighted_fit"] < s["xi"]["error"]  # nested realizations: the fit's own error is too small
    assert np.isfinite(ds0["xi_local"].values[1:]).any() and np.isnan(ds0["xi_local"].values[0])
    assert s["xi_theory_strong"] == pytest.approx(1 / (2 * math.log(20.0) - 3))
    assert s["xi_theory_transfer"] > 0
    # T1 grows with L (localization) and T_star grows with L (transport)
    logs = [t["log_value"] for t in s["T1_typical"]]
    assert np.all(np.diff(logs) > 0)
    stars = [t["value_J"] for t in s["T_star"]]
    assert stars[-1] > stars[0]
    assert set(s["by_conditions"]) == {"ideal", "realistic"}
    assert s["by_conditions"]["realistic"]["lengths"] == [2, 3]
    ds = load_dataset(folder / "results.nc")
    assert ds["log_T1_realization"].shape == (len(L), 8)
    _check_lifetimes(folder, s, ds)
    assert ds["T1_J"].dims == ("conditions", "L") and ds["time_J"].attrs["units"] == "1/J"
    for name in ("decay_times_vs_L", "localization_length"):
        for ext in ("png", "pdf"):
            assert (folder / "figures" / f"{name}.{ext}").stat().st_size > 1000
    # `lru-mps plot DIR` redraws them from the stored results
    import shutil

    from click.testing import CliRunner

    from lru_mps_cli.main import main

    copy = copy_study(folder, tmp_path / "length-scaling")  # (the session's folder is shared)
    shutil.rmtree(copy / "figures")
    out = CliRunner().invoke(main, ["plot", str(copy)])
    assert out.exit_code == 0, out.output
    assert (copy / "figures" / "localization_length.pdf").exists()
    bad = CliRunner().invoke(main, ["plot", str(copy / "figures")])
    assert bad.exit_code == 2 and "study output folder" in bad.output
    # numbers as they are: the theory value to its digits, T_star's growth in us (1/J beside it), where removal stops
    # paying in words, integer ticks on the L axes
    assert "strong disorder 1/(2 ln(W/J) - 3) = 0.3343;" in res.table
    assert not re.search(r"\d\.\d{8,}", res.table)
    grows = [line for line in res.table.splitlines() if line.startswith("T_star grows by")]
    assert len(grows) == 2 and all(re.fullmatch(r"T_star grows by \S+ \+- \S+ us per site \(\S+ \+- \S+ /J per site\)",
                                                 line) for line in grows), grows
    assert "= > " not in res.table and "leakage removal stops paying (T_star >= T1q/2): not within the lengths run " \
        "(T_star stays below T1q/2 up to L = 3)" in res.table
    paying = s["by_conditions"]["realistic"]["removal_stops_paying"]
    assert paying["measured_L"] is None and "not reached" in paying["measured_L_reason"]
    from lru_mps.studies.length_scaling import report

    figs = []
    monkeypatch.setattr(report, "save_figure", lambda fig, figdir, name: figs.append(fig) or [])
    report.plot(load_dataset(res.out / "results.nc"), s, res.out / "redrawn")
    for fig in figs:
        fig.canvas.draw()
        for ax in fig.axes:
            if ax.get_xlabel() == "array length L":
                ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
                assert ticks and all(float(t).is_integer() for t in ticks), ticks
    # the unresolved T1 and T2 of the ideal panel are marked at the axis, not dropped
    ideal = figs[0].axes[0]
    marks = [x for ln in ideal.lines if ln.get_marker() == "x" for x in ln.get_xdata()]
    unresolved = [L for L, t in zip(s["lengths"], s["T1"]) if t["value_J"] is None]
    assert unresolved and set(unresolved) <= set(marks)


def _check_lifetimes(folder, s, ds):
    """tau_1, tau_L and eta per condition and L (issue 23): leakage_lifetimes(simulate(...)) of that ensemble with
    the study's settings (loaded from its store), in summary.json and results.nc; eta = 1 in ideal conditions."""
    from lru_mps.studies.length_scaling.plan import _ensembles, _t_final, _thermal_strata

    cfg = read_config(folder)
    for cond, e in s["by_conditions"].items():
        for k, L in enumerate(e["lengths"]):
            spec = spec_of(cfg, length=L, conditions=cond)
            # the run with the leakage start: all three starts, or the leakage start alone (long_leakage_factor)
            ((init, n, odds, hot, integrate),) = [r for r in _ensembles(cfg, L, cond == "ideal", cfg["realizations"])
                                                  if r[0] in ("all", "leakage")]
            want = stored_lifetimes(folder, spec, cfg, init=init, t_final=_t_final(spec, cfg),
                                    time_points=cfg["time_points"], trajectories=n, leakage_thermal_odds=odds,
                                    hot_tail=hot, integrate_decay=integrate,
                                    thermal_strata=_thermal_strata(cfg, L) and cond != "ideal")
            check_lifetimes({name: e[name][k] for name in LIFETIME_KEYS}, ds.sel(conditions=cond, L=L), want,
                            cond == "ideal")


def _cli(*args, cwd):
    return [sys.executable, "-m", "lru_mps_cli.main", *args]


def test_interrupted_study_resumes_to_identical_numbers(quick_study, tmp_path):
    """kill -9 midway, rerun the same command: same summary as an uninterrupted run (the session's quick run,
    conftest.quick_study: its summary as `--json` prints it)."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    args = ["study", "length-scaling", "--quick", "--workers", "1", "--json"]
    clean = json.loads(json.dumps(quick_study("length-scaling")[0].summary, default=float))
    out = tmp_path / "killed"
    proc = subprocess.Popen(_cli(*args, "--out", str(out), cwd=tmp_path), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    deadline = time.time() + 300
    while time.time() < deadline:
        if len(list((out / "work").glob("*/block_*.npz"))) >= 40:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = len(list((out / "work").glob("*/block_*.npz")))
    assert done >= 40 and not (out / "summary.json").exists(), "the kill came too late to test anything"
    resumed = subprocess.run(_cli(*args, "--out", str(out), cwd=tmp_path), capture_output=True, text=True, env=env,
                             timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout) == clean
