"""The fast feedback paths agree with the one-measurement-at-a-time reference, trajectory by trajectory.

The feedback trains of :mod:`lru_mps.engines.exact.feedback` (branch
estimator: matrix powers of the periodic map P0 exp(-i H/G), random feedback
in the eigenbasis; sampled estimator with periodic feedback: the periods up
to the next event from the powers of the map) against the reference path of
the same batched store
(``feedback="reference"``: one loop stop per measurement) and against the
unbatched exact engine: populations and coherence to 1e-10, and the same
events (every measurement, with its time and outcome).  A spy on the store's
trains checks that the fast path did take over most measurements (otherwise
the comparison would test nothing).  The clocks and the uniforms drawn ahead
must give exactly the numbers of one draw at a time.  Cost: about 25 s.
"""

import numpy as np
import pytest

from helpers import one, records_differ
from lru_mps.engines.common import eigen
from lru_mps.engines.exact.feedback import ExactFeedbackTrains, PoissonSteps
from lru_mps.errors import ParameterError
from lru_mps.mcwf.kernels import AHEAD_CHUNK, Clocks, MeasurementClock, UniformDraws
from lru_mps.physics.conditions import Conditions, Reset
from lru_mps.physics.model import ArraySpec
from lru_mps.run.settings import RunSettings, time_grid
from lru_mps.run.trajectories import run_trajectories


class _Spy:
    """Counts the measurements the store's trains took over."""

    def __init__(self, monkeypatch):
        self.periodic = self.poisson = 0
        orig_p, orig_q = ExactFeedbackTrains.periodic, ExactFeedbackTrains.poisson
        orig_s = ExactFeedbackTrains.sampled_periodic
        orig_a = PoissonSteps.accept
        spy = self

        def accept(self, positions):
            spy.poisson += len(positions)
            return orig_a(self, positions)

        def sampled(self, rows, counts, period, uniforms, thresholds):
            done, survival = orig_s(self, rows, counts, period, uniforms, thresholds)
            spy.periodic += int(np.sum(done))
            return done, survival

        def periodic(self, rows, counts, period):
            spy.periodic += int(np.sum(counts))
            return orig_p(self, rows, counts, period)

        def poisson(self, rows, waits):
            spy.poisson += sum(len(w) for w in waits)
            return orig_q(self, rows, waits)

        monkeypatch.setattr(ExactFeedbackTrains, "periodic", periodic)
        monkeypatch.setattr(ExactFeedbackTrains, "poisson", poisson)
        monkeypatch.setattr(ExactFeedbackTrains, "sampled_periodic", sampled)
        monkeypatch.setattr(PoissonSteps, "accept", accept)


def _settings(times, n, feedback, seed=4, estimator="branch"):
    return RunSettings(times=times, trajectories=n, seed=seed, engine="exact", estimator=estimator, feedback=feedback)


def _compare(spec, times, n, monkeypatch, seed=4, batch_size=None, tol=1e-10, estimator="branch"):
    """Fast vs reference (batched) and vs the unbatched engine; returns (measurements, taken over by trains)."""
    spy = _Spy(monkeypatch)
    fast = run_trajectories(spec, _settings(times, n, "fast", seed, estimator), range(n), batched=True,
                            batch_size=batch_size)
    trained = spy.periodic + spy.poisson
    ref = run_trajectories(spec, _settings(times, n, "reference", seed, estimator), range(n), batched=True)
    assert spy.periodic + spy.poisson == trained  # the reference path never calls the trains
    measurements = 0
    for i in range(n):
        problems = records_differ(fast[i], ref[i], tol=tol)
        assert not problems, (i, problems[:3])
        measurements += sum(r.event_count() for r in ref[i].values())
    for i in range(min(n, 2)):  # the unbatched engine (ordinary states) as well
        problems = records_differ(fast[i], one(spec, _settings(times, n, "fast", seed, estimator), i), tol=tol)
        assert not problems, (i, problems[:3])
    return measurements, trained


@pytest.mark.parametrize("L", [2, 3, 4])
@pytest.mark.parametrize("kind", ["periodic", "random"])
def test_branch_trains_match_reference(L, kind, monkeypatch):
    """High rate (G = 20 J, ~40 measurements per grid interval), every initial state, W = 4 J (hybridized)."""
    spec = ArraySpec(L=L, W=4.0, reset=Reset(kind, 20.0), conditions=Conditions())
    measurements, trained = _compare(spec, time_grid(30.0, 16), 6, monkeypatch)
    assert measurements > 6 * 3 * 20 * 30 * 0.9  # G t per trajectory and initial state
    assert trained > 0.9 * measurements


@pytest.mark.parametrize("kind", ["periodic", "random"])
def test_irregular_grid_and_paper_parameters(kind, monkeypatch):
    """Paper parameters (W = 20 J, U = 50 J) at the high optimum, a grid not starting at 0 with unequal steps."""
    spec = ArraySpec.from_user(length=3, reset=kind, rate="30J", conditions="ideal")
    times = np.array([0.7, 0.9, 3.3, 3.31, 10.0, 25.5])
    measurements, trained = _compare(spec, times, 8, monkeypatch, batch_size=3)
    assert trained > 0.9 * measurements


def test_long_train_one_interval(monkeypatch):
    """Two grid points (as the rate sweep): t = 100/J at G = 30 J, 3,000 measurements in one train per row."""
    spec = ArraySpec.from_user(length=3, reset="periodic", rate="30J", conditions="ideal")
    measurements, trained = _compare(spec, time_grid(100.0, 2), 3, monkeypatch)
    assert measurements > 3 * 3 * 2950 and trained > 0.99 * measurements


@pytest.mark.parametrize("kind", ["periodic", "random"])
@pytest.mark.parametrize("L", [2, 3, 4])
def test_sampled_trains_match_reference(L, kind, monkeypatch):
    """Sampled estimator, strong noise and a hot array (jumps, thermal excitations, outcomes n = 1, 2): the trains
    stop before every event, which the loop makes with the same draws (random feedback: a uniform drawn for an
    outcome n != 0 is put back).  Short runs: a jump time that moves by the
    rounding shifts the state by ~U dt, so long runs with many jumps drift apart (see test_batched)."""
    spec = ArraySpec(L=L, W=4.0, reset=Reset(kind, 5.0), conditions=Conditions(T1q=50.0, Tphi=30.0, temperature_K=0.3))
    measurements, trained = _compare(spec, time_grid(40.0, 21), 12, monkeypatch, seed=3, estimator="sampled")
    assert trained > 0.6 * measurements
    ref = run_trajectories(spec, _settings(time_grid(40.0, 21), 12, "reference", 3, "sampled"), range(12))
    events = [e for rec in ref for r in rec.values() for e in r.events]
    assert sum(e.channel != "measurement" for e in events) > 20  # jumps
    assert sum(e.channel == "measurement" and e.outcome > 0 for e in events) > 20  # outcomes n = 1, 2


@pytest.mark.parametrize("kind", ["periodic", "random"])
def test_sampled_paper_parameters(kind, monkeypatch):
    """Paper parameters in realistic conditions at G = 30 J on a two-point grid (as the rate sweep; t = 60/J)."""
    spec = ArraySpec.from_user(length=3, reset=kind, rate="30J", conditions="realistic")
    measurements, trained = _compare(spec, time_grid(60.0, 2), 3, monkeypatch, estimator="sampled")
    assert measurements > 3 * 3 * 1700 and trained > 0.98 * measurements


def test_trains_with_expm_fallback(monkeypatch):
    """Every block with more than one state counts as ill-conditioned: the trains use expm."""
    monkeypatch.setattr(eigen, "COND_LIMIT", 1.0)
    for kind in ("periodic", "random"):
        spec = ArraySpec(L=2, W=4.0, reset=Reset(kind, 5.0), conditions=Conditions())
        measurements, trained = _compare(spec, time_grid(8.0, 5), 3, monkeypatch)
        assert trained > 0.5 * measurements
        noisy = ArraySpec(L=2, W=4.0, reset=Reset(kind, 5.0), conditions=Conditions(T1q=50.0, temperature_K=0.3))
        measurements, trained = _compare(noisy, time_grid(8.0, 5), 4, monkeypatch, estimator="sampled")
        assert trained > 0.5 * measurements


def test_measurement_on_a_grid_time_records_first(monkeypatch):
    """A train that ends exactly on a grid time leaves that measurement for after the record."""
    import lru_mps.mcwf.trajectory_rows as rows

    class OnGrid(rows.MeasurementClock):
        def __init__(self, spec, rng):
            super().__init__(spec, rng)
            self.next = 0.5  # period 0.25, grid step 2: every grid time is a measurement time

    monkeypatch.setattr(rows, "MeasurementClock", OnGrid)
    spec = ArraySpec(L=3, W=4.0, reset=Reset("periodic", 4.0), conditions=Conditions())
    measurements, trained = _compare(spec, time_grid(20.0, 11), 4, monkeypatch)
    assert trained > 0.5 * measurements


def test_feedback_setting_is_checked():
    with pytest.raises(ParameterError, match="feedback"):
        RunSettings(times=time_grid(10.0, 3), feedback="fastest")


# ----------------------------------------------------------- clocks and draws
@pytest.mark.parametrize("kind", ["periodic", "random"])
def test_clock_times_before_equal_one_at_a_time(kind):
    spec = ArraySpec(L=3, reset=Reset(kind, 37.0))
    for seed in range(5):
        a = MeasurementClock(spec, np.random.default_rng(seed))
        b = MeasurementClock(spec, np.random.default_rng(seed))
        a.draw_ahead = b.draw_ahead = True
        got, want = [], []
        for limit in (0.013, 1.0, 1.0, 57.3, 300.0):
            got += list(a.times_before(limit))
            while b.next < limit:
                want.append(b.next)
                b.advance()
            assert a.next == b.next
        assert got == want and len(want) > 10000
    # waiting times drawn ahead are the numbers of one call each
    c = MeasurementClock(spec, np.random.default_rng(9))
    d = MeasurementClock(spec, np.random.default_rng(9))
    c.draw_ahead = True
    for _ in range(3 * AHEAD_CHUNK):
        c.advance()
        d.advance()
        assert c.next == d.next


def test_periodic_clocks_advance_together_as_one_at_a_time():
    spec = ArraySpec(L=3, reset=Reset("periodic", 3.7))
    clocks = [MeasurementClock(spec, np.random.default_rng(s)) for s in range(7)]
    single = [MeasurementClock(spec, np.random.default_rng(s)) for s in range(7)]
    batch = Clocks(clocks)
    rows = np.array([0, 2, 3, 6])
    for _ in range(50):
        batch.advance(rows)
        for b in rows:
            single[b].advance()
    first, count, last = batch.periodic_before(rows, 4000.0)
    for j, b in enumerate(rows):
        assert first[j] == single[b].next
        times = single[b].times_before(4000.0)
        assert count[j] == len(times) and last[j] == times[-1] and batch.next[b] == single[b].next
    assert [batch.next[b] for b in (1, 4, 5)] == [single[b].next for b in (1, 4, 5)]


def test_uniforms_drawn_ahead_equal_single_draws():
    rngs = [np.random.default_rng(s) for s in range(5)]
    ref = [np.random.default_rng(s) for s in range(5)]
    draws = UniformDraws(rngs, ahead=True)
    order = np.random.default_rng(0)
    for _ in range(3 * AHEAD_CHUNK):
        rows = np.sort(order.choice(5, size=order.integers(1, 6), replace=False))
        got = draws.take(rows)
        assert list(got) == [ref[b].random() for b in rows]
        b = int(order.integers(5))
        assert draws.one(b) == ref[b].random()


def test_summary_states_the_feedback_path():
    from lru_mps.io.summary import format_summary
    from lru_mps.run.settings import feedback_path, make_settings
    from lru_mps.run.simulate import simulate

    ideal = ArraySpec.from_user(length=3, reset="periodic", rate="30J", conditions="ideal")
    res = simulate(ideal, init="leakage", t_final=10.0, time_points=3, trajectories=2, workers=1)
    assert "feedback measurements: fast (" in format_summary(res)
    assert feedback_path(ideal, make_settings(ideal, feedback="reference")) == "reference"
    assert feedback_path(ideal, make_settings(ideal, engine="sector")) == "fast"  # its batch of small sectors
    long = ArraySpec.from_user(length=24, reset="periodic", rate="30J", conditions="ideal")
    assert feedback_path(long, make_settings(long, engine="sector")) == "reference"  # N = 2: 300 states, unbatched
    assert feedback_path(ideal, make_settings(ideal, batched=False)) == "reference"
    realistic = ArraySpec.from_user(length=3, reset="periodic", rate="30J", conditions="realistic")
    assert feedback_path(realistic, make_settings(realistic)) == "fast"  # sampled periodic: trains between events
    rnd = ArraySpec.from_user(length=3, reset="random", rate="30J", conditions="realistic")
    assert feedback_path(rnd, make_settings(rnd)) == "fast"
    assert feedback_path(rnd, make_settings(rnd, engine="mps")) == "reference"
    diss = ArraySpec.from_user(length=3, reset="dissipation", rate="1J", conditions="ideal")
    assert feedback_path(diss, make_settings(diss)) == "none"
    assert "feedback measurements" not in format_summary(
        simulate(diss, init="leakage", t_final=10.0, time_points=3, trajectories=2, workers=1))
