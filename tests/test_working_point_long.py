"""The realistic working point against the exact master equation at the 0.5 % level (issue 20, deliverable 6).

L = 3 with every default of `lru-mps simulate` (realistic: T1q = 16.7 us,
Tphi = 10 us, 100 mK; W/2pi = 100 MHz; periodic feedback at 0.03 J), one
fixed disorder realization (the reference is per realization), sampled
trajectories (the default estimator: branch is not exact with noise), to
t = 1000/J on the default grid (201 points), against
references.lindblad.lindblad_observables (t0 average with 800 nodes: its
O(1/M) quadrature error is below 1e-4 of the values).

What is compared, for P_star^(L)(t), <n_1>(t) and C(t):
- every resolved point (n mu / x_c >= 100 as in test_vs_reference.py)
  within 4 standard errors;
- the curve summed over each quarter of the run (0-250, 250-500, 500-750,
  750-1000 /J), with a jackknife error over the trajectory blocks: a
  relative bias common to a window's points is seen at sqrt(points) fewer
  trajectories than at one point.  |sum - reference| <= 3 sigma, and the
  relative bias each window detects, 3 sigma / reference, is returned.

Smallest bias detected (3 sigma / value, in %; measured in the reduced
form, 3000 trajectories, and projected by sqrt(3000 / 400,000) to the full
form), per window 0-250, 250-500, 500-750, 750-1000 /J:

    P_star^(L)  reduced  4.7   61    252   1084     full ~0.41  5.3  22   94
    <n_1>       reduced  2.7   5.5   6.4   11.1     full ~0.24  0.48 0.56 0.96
    C           reduced  3.2   5.9   5.7   5.9      full ~0.28  0.51 0.50 0.51

So 400,000 trajectories detect a 0.5 % bias in all three in the first
window, in <n_1> to 500/J, and in C to 1000/J only at the margin (0.5 %);
not in <n_1> past 500/J (0.56 %, 0.96 %: 0.5 % in 750-1000/J needs ~1.5
million trajectories) nor in P_star^(L) past 250/J (it falls to ~1e-3 of
its start by 500/J; 0.5 % there needs ~5e7).  The test asserts the table
(DETECTS: the full-form column plus 25 % for the jackknife error's own
uncertainty with 16 blocks), on the projection in the reduced form and on
the measured value in the full form, and that every window agrees within 3
sigma.

Measured beyond the reduced form (same realization, independent seeds;
deviation of the window sum in %, +- 1 sigma; 3000 + 30,000 all states,
60,000 + 120,000 leakage-only and coherence-only runs, 2026-11-27):
- C: combined over 213,000 trajectories -0.10 +- 0.12 (0-250/J),
  -0.02 +- 0.18 (250-500), -0.04 +- 0.19 (500-750), -0.09 +- 0.20 (750-1000):
  no bias at the 0.5 % level for this realization (single runs of 30,000
  and 60,000 sat 0.7-1.0 % below at 1.4-1.5 sigma, the 120,000 one 0.2 %
  above).
- <n_1>: 30,000 trajectories, |deviation| <= 0.3 % +- 0.3-1.2 %: none.
- P_star^(L): 0-250/J +0.15 +- 0.16: none; but 250-500/J +6.8 +- 2.0
  (3.4 sigma; +25 +- 20, +9.7 +- 3.5, +1.3 +- 4.5, +6.7 +- 2.9 in the four
  runs) and 500-750/J positive in all four (+16 +- 9 combined): the
  trajectories carry MORE late leakage than the master equation.  Not the
  reference's t0 quadrature (800 and 3200 nodes agree to 1e-8).  In that
  window 37 % of the exact P_star^(L) is thermal |2> of sites 2-3 (window
  sum 0.381 at 100 mK, 0.241 at T = 0; p_2 = 8.2e-4 per site), the first
  suspect; but 80,000 leakage trajectories at T = 0 (same realization and
  noise) are inconclusive: +1.9 +- 3.9 at 250-500/J, +65 +- 38 at
  500-750/J.  Not established beyond 3.4 sigma; reported in issue 20.  The
  full form of this test would settle it (its 3 sigma there is ~5 %, so a
  +6.8 % excess fails it).

Trajectory count: 400,000 at LRU_MPS_LONG_SCALE=1 (n = 400,000 s^4 for
scale s, at least 3000: the reduced form at the default s = 0.25 runs 3000).
Cost (one core): reduced 32 s (measured, 3000 x 3 initial states and the
three references); full: 2.6 ms per trajectory and initial state (measured
at 30,000), 400,000 x 3 ~ 52 CPU-minutes, ~26 minutes on 2 cores: beyond the
"long" budget of ~15 minutes, so it was not run here (run it on request).
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import long_scale
from lru_mps.analysis.decay import reference_curves
from lru_mps.references.lindblad import lindblad_observables
from lru_mps.physics.model import ArraySpec
from lru_mps.run.simulate import simulate

FULL = 400_000
REDUCED = 3000
WINDOWS = ((0.0, 250.0), (250.0, 500.0), (500.0, 750.0), (750.0, 1000.0))
OBSERVABLES = {"leakage_array": "leakage", "qubit_population": "qubit", "qubit_coherence": "coherence"}
CARRIER_VALUE = {"leakage_array": 1.0, "qubit_population": 1.0, "qubit_coherence": 0.5}
#: full form (400,000 trajectories): the largest 3 sigma / value per window (docstring table + 25 %)
DETECTS = {"leakage_array": (0.0051, 0.066, 0.27, 1.17), "qubit_population": (0.0030, 0.0060, 0.0070, 0.012),
           "qubit_coherence": (0.0035, 0.0064, 0.0063, 0.0064)}
#: where the full form detects a 0.5 % bias (with the 25 % margin: 3 sigma < 0.625 %); C past 250/J is at 0.51 %
HALF_PERCENT = {"leakage_array": (0,), "qubit_population": (0, 1), "qubit_coherence": (0,)}


def _trajectories() -> int:
    return max(REDUCED, int(FULL * long_scale() ** 4))


def window_biases(res, curves) -> dict:
    """{(observable, window): (relative deviation, 3 sigma / value)}; asserts |deviation| <= 3 sigma."""
    t = res.times
    parts = res.leave_one_out()
    B = len(parts)
    assert B == 16
    out = {}
    for name in OBSERVABLES:
        mean = res.observable(name).mean
        loo = np.array([p.observable(name).mean for p in parts])
        for k, (a, b) in enumerate(WINDOWS):
            w = (t > a + 1e-9) & (t <= b + 1e-9)
            ref = float(np.sum(curves[name][w]))
            total = float(np.sum(mean[w]))
            sums = loo[:, w].sum(axis=1)
            sigma = float(np.sqrt((B - 1) / B * np.sum((sums - sums.mean()) ** 2)))
            out[(name, k)] = ((total - ref) / ref, 3.0 * sigma / ref)
            assert abs(total - ref) <= 3.0 * sigma, (name, (a, b), total, ref, sigma)
    return out


@pytest.mark.long
def test_working_point_against_master_equation():
    n = _trajectories()
    spec = ArraySpec.from_user(length=3)
    assert spec.conditions.temperature_K == 0.1 and spec.reset.kind == "periodic" and spec.W == 20.0
    real = spec.draw_realization(np.random.default_rng(2026))
    res = simulate(spec, realization=real, t_final=1000.0, trajectories=n, seed=17, estimator="sampled")
    assert res.times[-1] == 1000.0 and res.times.size == 201
    refs = {init: lindblad_observables(spec, real, init, res.times, t0_nodes=800) for init in OBSERVABLES.values()}
    curves = reference_curves(refs)
    for name in OBSERVABLES:
        ms = res.observable(name)
        use = n * np.abs(curves[name]) / CARRIER_VALUE[name] >= 100
        dev = np.abs(ms.mean - curves[name])[use]
        assert np.all(dev <= 4.0 * ms.sem[use] + 1e-12), (name, np.max(dev / (4.0 * ms.sem[use] + 1e-12)))
    biases = window_biases(res, curves)
    for (name, k), (dev, detects) in sorted(biases.items()):
        print(f"{name:18s} {WINDOWS[k]}: deviation {100 * dev:+.3f} %, 3 sigma {100 * detects:.3f} % "
              f"(full form ~{100 * detects * (n / FULL) ** 0.5:.3f} %)")  # shown with -s
    scale = (FULL / n) ** 0.5  # the detected bias shrinks like 1/sqrt(n): projected to the full form
    for (name, k), (dev, detects) in biases.items():
        assert detects / scale < DETECTS[name][k], (name, WINDOWS[k], detects / scale)
    assert all(DETECTS[name][k] <= 0.00625 for name, ks in HALF_PERCENT.items() for k in ks)
