"""The disorder sweep's physics (issue 20, deliverable 5): T1 grows with W; the paper's Fig. 3 values at L = 3.

1. T1 and T2 grow with W (paper Fig. 3a).  The study itself, ideal
   conditions (branch estimator), W/2pi = 50 and 200 MHz, 64 realizations,
   run to 400 us (the ideal T1 at 200 MHz is ~2.5 ms: the branch curves
   resolve its first % of decay).  T1(200) - T1(50) > 3 combined jackknife
   errors (measured 358 +- 64 us and 2490 +- 430 us at 64 realizations).
   T_prop = pi Ubar/(4 J^2) is checked at every point of both sweeps in
   test_sweeps.py.
2. The paper's Fig. 3d values (L = 3, W/2pi = 100 MHz, J/2pi = 5 MHz,
   periodic feedback at 0.03 J, T1q = 16.7 us, Tphi = 10 us, 100 mK; Sec.
   III): T_prop = 1.25 us, T_star ~ 2.2 us, T1 ~ 12.67 us, T2 ~ 7.29 us, from
   100,000 trajectories (App. "Numerical simulation").  The paper gives no
   errors; its statistical error is taken as ours scaled by
   sqrt(n / 100,000), and 2.2 carries a rounding of +-0.05.  Measured with
   the study's defaults (2000 trajectories, seed 0): T_star = 2.12 +- 0.08 us
   (agrees), T1 = 14.13 +- 0.33 us (+12 %, 4.4 sigma), T2 = 7.514 +- 0.021 us
   (+3.0 %, 10 sigma).
   - T1: the fit window.  The realization-averaged <n_1>(t) is not one
     exponential (physics.md §8), and the paper does not state its window
     beyond "after the initial dynamics beyond T_prop".  Refitting the
     study's own curve over windows from T_prop or 2 T_prop to 10..40 us
     gives 12.72..14.13 us; from t = 0 to 20 us, 12.47 us.  The test asserts
     that the paper's value lies within 3 sigma of that range (windows
     starting at T_prop or 2 T_prop, ending at 10, 20, 30 or 40 us).
   - T2: NOT the window (the same refits give 7.42..7.51 us).  The
     project's coherence is taken in the frame of each realization's
     dressed qubit frequency (physics.md §6), the paper's as the envelope
     of <sigma_x>; a spread of hopping shifts left in the paper's frame
     would dephase it further, i.e. the paper's T2 below ours, as measured.
     This is a real 3 % difference, reported (issue 20), not hidden: the
     test asserts only the bounds paper - 3 sigma <= T2 <= T2q + 3 sigma
     (T2q = 1/(1/(2 T1q) + 1/Tphi) = 7.70 us) and records the ratio.

CI cost (one core, measured): (1) 6 s, (2) 400 trajectories (reduced form) 17 s.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import long_scale
from lru_mps.analysis.fitting import fit_exponential
from lru_mps.studies import run_study
from lru_mps.studies.base import StudyContext

PAPER_US = {"T_prop": 1.25, "T_star": 2.2, "T1": 12.67, "T2": 7.29}
PAPER_ROUNDING_US = {"T_prop": 0.0, "T_star": 0.05, "T1": 0.005, "T2": 0.005}
PAPER_TRAJECTORIES = 100_000
T1Q_US, TPHI_US = 16.7, 10.0


def test_T1_T2_grow_with_disorder(tmp_path):
    over = dict(conditions="ideal", disorders="50MHz,200MHz", realizations=64, t_final="400us", time_points=61)
    s = run_study("disorder-sweep", StudyContext(out=tmp_path, workers=1), overrides=over).summary
    assert s["disorders_MHz"] == [50.0, 200.0] and s["ensembles"]["ideal"]["estimator"] == "branch"
    for q in ("T1", "T2"):
        lo, hi = s["ideal"][q]
        assert lo["value_us"] is not None and hi["value_us"] is not None, (q, lo, hi)
        assert hi["value_us"] - lo["value_us"] > 3.0 * math.hypot(lo["error_us"], hi["error_us"]), (q, lo, hi)


def _refits(ds, obs, factor):
    """tau (us) of the study's own curve over the windows the paper's description allows (see docstring)."""
    t = ds["time_J"].values[0]
    us = ds["time_us"].values[0]
    y = factor * ds[f"{obs}_mean"].values[0]
    e = factor * ds[f"{obs}_sem"].values[0]
    T_prop = float(ds["T_prop_J"].values[0])
    out = []
    for start in (T_prop, 2 * T_prop):
        for end_us in (10.0, 20.0, 30.0, 40.0):
            end = t[np.searchsorted(us, end_us - 1e-9)]
            fit = fit_exponential(t, y, e, t_start=start, t_end=end)
            assert fit.ok
            out.append(fit.tau * us[-1] / t[-1])
    return np.array(out)


@pytest.mark.long
def test_paper_fig3_working_point(tmp_path):
    """Fig. 3d at W/2pi = 100 MHz (docstring of the module): 1600 trajectories (400 in the reduced form, at least 200)."""
    n = max(200, int(1600 * long_scale()))
    over = dict(disorder="100MHz", conditions="realistic", trajectories=n)
    res = run_study("disorder-sweep", StudyContext(out=tmp_path, workers=1), overrides=over)
    s = res.summary["realistic"]
    got = {q: s[q][0] for q in PAPER_US}
    assert got["T_prop"]["value_us"] == pytest.approx(PAPER_US["T_prop"], rel=1e-12)

    def sigma(q):  # ours and the paper's statistical errors combined
        return got[q]["error_us"] * math.sqrt(1.0 + n / PAPER_TRAJECTORIES)

    # T_star: agreement within 3 sigma (+ the paper's rounding)
    assert abs(got["T_star"]["value_us"] - PAPER_US["T_star"]) <= 3 * sigma("T_star") + PAPER_ROUNDING_US["T_star"], \
        got["T_star"]
    # T1: within 3 sigma of the range of windows the paper's description allows
    taus = _refits(res.dataset.sel(conditions="realistic"), "qubit_population", 1.0)
    assert np.min(np.abs(taus - got["T1"]["value_us"])) <= 1e-9 * got["T1"]["value_us"]  # the study's is one of them
    assert taus.min() - 3 * sigma("T1") <= PAPER_US["T1"] <= taus.max() + 3 * sigma("T1"), (taus, got["T1"])
    # T2: a real difference of +3 % (docstring); bounds only: not below the paper's, not above T2q
    T2q = 1.0 / (1.0 / (2 * T1Q_US) + 1.0 / TPHI_US)
    assert PAPER_US["T2"] - 3 * sigma("T2") <= got["T2"]["value_us"] <= T2q + 3 * sigma("T2"), got["T2"]
