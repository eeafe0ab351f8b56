"""The removal-free branch estimator against the master equation (docs/physics.md §6.5, §12).

What is exact, and how it is tested here.  In ideal conditions every removal
(a jump of sqrt(G) a_L, a feedback outcome n >= 1) destroys the observed
quantity for good, so the branch, evolved with every outcome n = 0 and
weighted by its squared norm, is the ensemble average *given* the disorder
realization and the measurement clock:

* dissipation: no clock; one deterministic evolution per realization, equal
  to the Lindblad reference to round-off;
* periodic feedback: exact per realization and per phase t0; t0 is sampled;
* random feedback: exact per realization and per Poisson clock; the clock is
  sampled.  The clock average of the branch is then an unbiased estimate of
  the removal-free density matrix of the random-feedback Liouvillian, with
  sampling noise from the clocks only.

The test compares the clock-averaged branch (batched exact engine, fixed
realization) with the density-matrix reference, which contains every removal
channel explicitly (and averages t0 by quadrature), at every time point up to
~5 T1, for the headline observables P_star^(L), P_star^(1) (leakage state),
<n_1> (qubit state) and C (coherence state), within 4 standard errors of the
clock sampling plus the reference's own error (t0 quadrature: at most
max|O| / (2M) per output time for M nodes, where an observable jumps as a
measurement time crosses it).  No systematic allowance: a bias of the branch
of 4 standard errors fails (at the latest point at most 13 % of the value,
random feedback's <n_1>; below 1 % for periodic feedback).  Every compared point is resolved
(4 standard errors below 1/4 of the value).

CI: L = 3, 64 clocks (about 10 s on one core); long: L = 4 random feedback,
4x the clocks at full scale.  The 3^4 reference's sectors of up to 1107
states are not diagonalizable to the reference's condition limit, so it
propagates them by matrix exponentials (cached per step length); the reduced
form (default: 256 clocks, 11 time points) takes under a minute.
"""

import numpy as np
import pytest

from conftest import long_scale
from lru_mps.references.lindblad import lindblad_observables
from lru_mps.physics.conditions import Reset
from lru_mps.physics.model import ArraySpec, Realization
from lru_mps.run.result import OBSERVABLE_INIT
from lru_mps.run.simulate import simulate
from lru_mps.run.statistics import ObservableAccumulator

NSIG = 4.0
T0_NODES = 2000
#: fixed realization (W = 8 J box) away from resonances; rates so that <n_1> and P_star both decay on ~100-1000/J
DW = [3.0, -2.5, 0.5, -1.5]
RATES = {"dissipation": 1.0, "periodic": 0.37, "random": 0.5}


def _reference_observables(spec, real, times):
    """{observable: curve} of the density-matrix reference, through the ensemble's own accumulator."""
    out = {}
    for init in ("leakage", "qubit", "coherence"):
        ref = lindblad_observables(spec, real, init, times, t0_nodes=T0_NODES)
        acc = ObservableAccumulator(len(times), spec.L)
        acc.add(ref.populations, ref.coherence)
        out.update({name: acc.get(name).mean for name, i in OBSERVABLE_INIT.items() if i == init})
    return out


def _check(L, kind, clocks, t_final=1000.0, points=11):
    dw = np.array(DW[:L])
    spec = ArraySpec(L=L, W=8.0, Ubar=50.0, reset=Reset(kind, RATES[kind]))
    real = Realization(dw=dw, U=spec.Ubar + 2.0 * dw)
    res = simulate(spec, realization=real, t_final=t_final, time_points=points, seed=0, engine="exact",
                   estimator="branch", trajectories=1 if kind == "dissipation" else clocks)
    ref = _reference_observables(spec, real, res.times)
    for name, expected in ref.items():
        ms = res.observable(name)
        if kind == "dissipation":  # no sampling at all: equal to round-off
            np.testing.assert_allclose(ms.mean, expected, rtol=0, atol=1e-9, err_msg=name)
            assert np.all(ms.sem == 0.0)
            continue
        quadrature = np.max(np.abs(expected)) / (2 * T0_NODES) if kind == "periodic" else 0.0
        band = NSIG * ms.sem + quadrature + 1e-12  # (t = 0: exact, to rounding)
        assert np.all(np.abs(ms.mean - expected) <= band), (name, (ms.mean - expected) / np.maximum(ms.sem, 1e-300))
        assert np.all(band <= 0.25 * expected), (name, band / expected)  # every point resolved
    # not an empty comparison: the curves decay by far more than the bands
    for name in ("leakage_array", "qubit_population"):
        assert ref[name][-1] < 0.85 * ref[name][0], name
    return res, ref


@pytest.mark.parametrize("kind", ["dissipation", "periodic", "random"])
def test_branch_equals_master_equation_L3(kind):
    _check(3, kind, clocks=64)


@pytest.mark.long
def test_random_feedback_branch_equals_master_equation_L4_long():
    _check(4, "random", clocks=max(64, int(1024 * long_scale())), points=11)
