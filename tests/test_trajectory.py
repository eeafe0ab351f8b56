"""The trajectory algorithm: estimators, waiting times, seeds (exact backend).

Whole runs are reproducible bit for bit across processes (tests/test_pinned.py)
and across workers, blocks and resumes (tests/test_runner.py).
"""

import numpy as np
import pytest

from helpers import one
from lru_mps.run.settings import RunSettings, time_grid

from lru_mps.run.simulate import simulate
from lru_mps.errors import ParameterError
from lru_mps.physics.conditions import Conditions, Reset
from lru_mps.physics.model import ArraySpec
from lru_mps.physics.initial_states import product_state
from lru_mps.engines.exact import ExactPropagator
from lru_mps.physics.rules import resolve_estimator as check_estimator
from lru_mps.mcwf.loop import run_trajectory

OBS = ("leakage_array", "leakage_site1", "qubit_population", "qubit_coherence")


def _within(a, b, sem, nsig=4.0):
    """|a - b| <= nsig * sem wherever the sem is meaningful."""
    a, b, sem = map(np.asarray, (a, b, sem))
    return np.all(np.abs(a - b) <= nsig * sem + 1e-12)


@pytest.mark.parametrize("reset", ["dissipation", "periodic", "random"])
def test_branch_equals_sampled_in_ideal_conditions(reset):
    """In ideal conditions the removal-free branch is the ensemble average.

    Fixed disorder realization: for dissipation one branch is exact (no noise
    at all); for feedback the branch still samples the measurement times.
    The sampled ensemble must agree within 4 standard errors of the
    difference at every time point.
    """
    # W = 4 J hybridizes the qubit with the array so that removal events are
    # common for every observable: with rare events (p * n_trajectories ~ 1)
    # the sample's own standard error is not a valid error estimate.
    spec = ArraySpec(L=3, W=4.0, reset=Reset(reset, 0.3 if reset != "dissipation" else 0.2))
    real = spec.draw_realization(np.random.default_rng(3))
    kw = dict(t_final=300.0, time_points=16, realization=real, seed=1)
    n_branch = 1 if reset == "dissipation" else 300
    branch = simulate(spec, trajectories=n_branch, estimator="branch", **kw)
    sampled = simulate(spec, trajectories=600, estimator="sampled", **kw)
    for name in OBS:
        b, s = branch.observable(name), sampled.observable(name)
        sem = np.hypot(b.sem, s.sem)
        assert _within(b.mean, s.mean, sem), name
    if reset == "dissipation":
        assert np.all(branch.observable("leakage_array").sem == 0.0)
    # the decay must actually be visible, else the comparison is empty
    assert branch.observable("leakage_array").mean[-1] < 0.8


def test_branch_exact_unless_a_channel_raises_n(monkeypatch):
    """The branch is exact wherever no channel raises N (docs/physics.md 6.5): noise and heat included."""
    noisy = ArraySpec(conditions=Conditions(T1q=500.0, Tphi=300.0))
    warm = ArraySpec(conditions=Conditions(temperature_K=0.05))
    for spec in (noisy, warm):
        assert check_estimator(spec, "branch") == "branch"
        assert check_estimator(spec, "auto") == "branch"
    assert check_estimator(ArraySpec(), "auto") == "branch"
    # a raising channel (a thermal bath's sqrt(gamma nbar) a^dag) makes the branch inexact: refused, auto samples
    from lru_mps.physics import operators as ops
    from lru_mps.physics.model import Channel

    bath = Channel("heating", 1, ops.adag, 1e-3, False)
    monkeypatch.setattr(ArraySpec, "channels", lambda self: [bath])
    with pytest.raises(ParameterError, match="estimator"):
        check_estimator(noisy, "branch")
    assert check_estimator(noisy, "auto") == "sampled"


def test_branch_clock_rule():
    """Which rows ride the branch, and their dephasing clocks (the initial state's dephasing hazard)."""
    from lru_mps.mcwf.kernels import branch_clock

    spec = ArraySpec(L=4, conditions=Conditions(T1q=500.0, Tphi=300.0, temperature_K=0.1))
    empty, hot = np.zeros(4, dtype=int), np.array([0, 0, 1, 0])
    assert branch_clock(spec, "qubit", empty) == pytest.approx(2.0 / 300.0)  # <n_1^2> = 1
    assert branch_clock(spec, "leakage", empty) == pytest.approx(4 * 2.0 / 300.0)  # <n_1^2> = 4
    assert branch_clock(spec, "coherence", empty) == 0.0  # a dephasing jump ends the coherence too
    for init in ("qubit", "leakage", "coherence"):
        assert branch_clock(spec, init, hot) is None  # a thermal excitation: sampled
    # without dephasing the rows with an empty array are on the branch without a clock (ideal, or decay only)
    for s in (ArraySpec(L=4), ArraySpec(L=4, conditions=Conditions(T1q=500.0, temperature_K=0.1))):
        assert branch_clock(s, "leakage", empty) == 0.0
        assert branch_clock(s, "qubit", hot) is None


def test_waiting_time_matches_no_jump_norm():
    """P(no event by t) = || exp(-i H_eff t) psi ||^2 (the waiting-time method has no dt bias)."""
    spec = ArraySpec(L=2, W=4.0, reset=Reset("dissipation", 0.5))
    real = spec.draw_realization(np.random.default_rng(0))
    prop = ExactPropagator(spec, real)
    times = np.linspace(0, 40, 9)
    n = 3000
    first = np.full(n, np.inf)
    for i in range(n):
        st = prop.state(product_state("qubit", np.zeros(2, int)))
        rec = run_trajectory(st, spec, real, times, np.random.default_rng(i))
        if rec.events:
            first[i] = rec.events[0].time
    for t in times[1:]:
        st = prop.state(product_state("qubit", np.zeros(2, int)))
        st.evolve(t)
        p_none = st.norm2()
        frac = np.mean(first > t)
        sem = np.sqrt(p_none * (1 - p_none) / n)
        assert abs(frac - p_none) <= 4 * sem, (t, frac, p_none)
    # the norm must decay substantially for this to be a test
    assert p_none < 0.6


def test_seed_determines_trajectory_whatever_the_order():
    spec = ArraySpec.from_user(length=3, conditions="realistic", reset="random", rate="0.3J", t1="100/J")
    settings = RunSettings(times=time_grid(200.0, 11), seed=7, inits=("leakage", "coherence"))
    order = [5, 0, 3, 1, 4, 2]
    forward = {i: one(spec, settings, i) for i in sorted(order)}
    shuffled = {i: one(spec, settings, i) for i in order}
    n_events = 0
    for i in order:
        for init in settings.inits:
            a, b = forward[i][init], shuffled[i][init]
            assert np.array_equal(a.populations, b.populations)
            assert np.array_equal(a.coherence, b.coherence)
            assert [(e.time, e.channel, e.outcome) for e in a.events] == [(e.time, e.channel, e.outcome) for e in b.events]
            n_events += len(a.events)
    assert n_events > 0
    # different seeds give different trajectories
    other = one(spec, RunSettings(times=settings.times, seed=8, inits=("leakage",)), 0)
    assert not np.array_equal(other["leakage"].populations, forward[0]["leakage"].populations)


def test_conservation_between_events():
    """H_eff conserves N: without channels a trajectory keeps sum_l <n_l> exactly."""
    spec = ArraySpec(L=4, reset=Reset("none", 0.0))
    res = simulate(spec, trajectories=3, t_final=500.0, time_points=11, init="leakage", estimator="sampled")
    total = res.site_resolved("leakage").mean.sum(axis=1)
    np.testing.assert_allclose(total, 2.0, atol=1e-10)


def test_regular_steps_are_the_single_steps_before_the_last():
    """regular_steps counts the steps of exactly dt that step_lengths makes before a stretch's last one, and
    leaves `covered` bit for bit where adding them one at a time does (so a store may take them in one call)."""
    from lru_mps.mcwf.kernels import regular_steps, step_lengths

    dt = 0.01
    durations = np.array([1.0, 0.95, 0.3 + 1e-13, 0.01, 0.0100000001, 0.025, 1e-3, 7.77])
    for start in (0.0, 0.0031):
        covered = np.full(len(durations), start)
        count, after = regular_steps(durations, covered, dt)
        for j, d in enumerate(durations):
            c, n = start, 0
            while True:
                step = float(step_lengths(np.array([d - c]), dt)[0])
                if step != dt or c + step >= d or d - c - step < 1e-12 * dt:
                    break
                c += step
                n += 1
            assert (count[j], after[j]) == (n, c)
        limited, after2 = regular_steps(durations, covered, dt, np.minimum(count, 3))
        assert np.array_equal(limited, np.minimum(count, 3))
        assert np.all(after2 <= after)
