"""Events that raise a row's N past the sector engine's limit (lru_mps.run.sector_reach): the expected number of such
rows against sampled runs, and the refusal before any work where it is not small.

The limit is a level N_max here (the hook counts the events that take a row from N <= N_max above it), so that small
arrays, where every sector fits and nothing is refused, show how often a run would meet it.  The reference for the
thermal bath's heating is exact for the N process: every site heats at gamma nbar (n + 1) and decays at
gamma (1 + nbar) n (one nominal frequency and one T1 everywhere), which hopping does not change, so the number of
heating events from N = N_max is that of independent three-level sites at J = 0 (up to the virtual doublon
fluctuations of the stack, ~2 (J/U)^2 ~ 1e-3), computed from each site's master equation."""

import numpy as np
import pytest
import scipy.linalg as sla

import lru_mps.engines.sector.state as sector_engine
import lru_mps.run.sector_reach as reach
from lru_mps.engines.sector.engine import sector_dimension
from lru_mps.errors import ParameterError
from lru_mps.physics import bath as baths
from lru_mps.physics.model import ArraySpec
from lru_mps.run.settings import make_settings
from lru_mps.run.simulate import simulate
from lru_mps.run.thermal_sample import number_distribution

#: two-sided bound on a sampled mean's z-score (the sampled counts are independent rows; ~5e-4 false alarms)
Z = 3.5


def _count_raised(monkeypatch, n_max: int) -> list:
    """Record every event (a jump or a readout's write) that takes a sector row from N <= n_max above it."""
    events = []
    apply = sector_engine.SectorState.apply_local

    def counted(self, op, site):
        before = max(self.vecs)
        apply(self, op, site)
        if before <= n_max < max(self.vecs):
            events.append(1)
    monkeypatch.setattr(sector_engine.SectorState, "apply_local", counted)
    return events


def _events_per_row(spec, events: list, batches: int, rows: int, **run) -> tuple[float, float, float]:
    """Mean events per row and its standard error from the scatter of ``batches`` independent runs (seeds 0..) of
    ``rows`` rows each, and the runs' t_final (1/J)."""
    means = []
    for seed in range(batches):
        events.clear()
        # (one row at a time: the events are counted on the ordinary sector states)
        res = simulate(spec, trajectories=rows, seed=seed, time_points=3, engine="sector", estimator="sampled",
                       batched=False, **run)
        means.append(len(events) / rows)
    return float(np.mean(means)), float(np.std(means, ddof=1) / np.sqrt(batches)), float(res.times[-1])


def _heating_reference(spec: ArraySpec, t_final: float, n_max: int) -> float:
    """Expected heating events per leakage row from N = n_max to n_max + 1 within t_final: independent sites at
    J = 0 under the bath (site 1 from |2>, the others from the thermal start averaged over 4000 realizations; the
    expectation is multilinear in the independent sites' start weights)."""
    rng = np.random.default_rng(7)
    p0 = np.mean([spec.thermal_probabilities(spec.draw_realization(rng)) for _ in range(4000)], axis=0)
    p0[0] = [0.0, 0.0, 1.0]
    gens = []
    for _, down, up in baths.rates(spec):
        G = np.zeros((3, 3))  # dp/dt = G p; |1> <- |0> at up, |2> <- |1> at 2 up, down alike
        G[1, 0], G[0, 0] = up, -up
        G[2, 1], G[1, 1] = 2 * up, -2 * up - down
        G[0, 1] = down
        G[1, 2], G[2, 2] = 2 * down, -2 * down
        gens.append(G)
    ts = np.linspace(0.0, t_final, 401)
    rate = []
    for s in ts:
        P = np.array([sla.expm(G * s) @ p for G, p in zip(gens, p0)])
        total = 0.0
        for site, (_, _, up) in enumerate(baths.rates(spec)):
            rest = number_distribution(np.delete(P, site, axis=0), n_max)
            total += sum(P[site, n] * up * (n + 1) * rest[n_max - n] for n in (0, 1))
        rate.append(total)
    return float(np.trapezoid(rate, ts))


def test_heating_past_a_level_matches_independent_sites(monkeypatch):
    """Sampled rows under a thermal bath (150 mK, six sites, no reset, 10 us, 2000 rows in 40 independent runs): the
    number of heating events that take a row past N_max = 3 agrees with the exact count of the N process within the
    sampling error, and the run's estimate (raised_per_row, decays left out) lies above it, as its docstring says."""
    spec = ArraySpec.from_user(length=6, conditions="realistic", temperature="150mK", thermal_bath=True, reset="none")
    events = _count_raised(monkeypatch, 3)
    mean, se, t_final = _events_per_row(spec, events, 40, 50, init="leakage", t_final="10us")
    exact = _heating_reference(spec, t_final, 3)
    assert exact > 0.03  # the level is met (the test would say nothing otherwise)
    assert abs(mean - exact) < Z * se, (mean, se, exact)
    estimate = reach.raised_per_row(spec, t_final, "leakage", 3)
    assert exact < estimate < 3.0 * exact  # from above, by the decays it leaves out (t_final ~ T1q / 2)


def test_false_reports_past_a_level_stay_under_the_estimate(monkeypatch):
    """A readout's false reports write |1> or |2> into the empty reset site (ideal otherwise, periodic feedback at
    0.5 J, EPS = 0.3):
    sampled leakage rows over 40/J, where the stack is still on its way, meet N_max = 3 (a |2> written beside it)
    no more often than the estimate says, and within a factor 2 of it (it leaves out the measurements that find
    the reset site still holding an earlier false report: measured 2.3 against 3.0 per row)."""
    spec = ArraySpec.from_user(length=6, conditions="ideal", reset="periodic", rate="0.5J", readout_error=0.3)
    events = _count_raised(monkeypatch, 3)
    mean, se, t_final = _events_per_row(spec, events, 20, 20, init="leakage", t_final=40.0)
    estimate = reach.raised_per_row(spec, t_final, "leakage", 3)
    assert estimate == pytest.approx(40.0 * 0.5 * 0.15)  # t G p(2|0): every measurement of an empty site
    assert mean < estimate + Z * se, (mean, se, estimate)
    assert mean > 0.5 * estimate, (mean, se, estimate)


@pytest.fixture
def low_limit(monkeypatch):
    """The sector engine's limit at the N = 4 sector of the 2x3 grid."""
    limit = sector_dimension(6, 4)
    monkeypatch.setattr(sector_engine, "MAX_SECTOR_DIM", limit)
    return limit


def test_a_run_that_would_meet_the_limit_is_refused_before_any_work(low_limit, tmp_path):
    """Heating at 250 mK on the 2x3 grid with the limit at N = 4: refused before a block runs (no block in the store,
    no progress), naming the thermal bath, the expected rows and what raises N; a false-report run names the
    readout; a chain on the sector engine is pointed to the hand-over to MPS."""
    spec = ArraySpec.from_user(geometry="grid:2x3", temperature="250mK", thermal_bath=True, t1="20/J")
    calls = []
    with pytest.raises(ParameterError, match=r"thermal_bath=True is not allowed: .*N <= 4 on L = 6 sites.*"
                                             r"the run's 48 rows would be raised past it about [0-9.e+]+ times"
                                             r".*heating.*"
                                             r"\(fewer sites, a lower temperature, a shorter t_final or fewer"):
        simulate(spec, init="all", t_final=200.0, time_points=5, trajectories=16, seed=1, engine="sector",
                 estimator="sampled", cache=tmp_path / "work", progress=lambda done, total: calls.append(done))
    assert calls == [] and not list((tmp_path / "work").rglob("block_*"))
    spec = ArraySpec.from_user(geometry="grid:2x3", reset="periodic", rate="0.5J", readout_error=0.3)
    with pytest.raises(ParameterError, match=r"readout_error='p\(1\|0\) = 0.15, p\(2\|0\) = 0.15' is not allowed"):
        simulate(spec, init="leakage", t_final=200.0, trajectories=16, engine="sector")
    chain = ArraySpec.from_user(length=6, temperature="250mK", thermal_bath=True, t1="20/J")
    with pytest.raises(ParameterError, match=r"thermal_bath=True is not allowed: .*\(--engine auto"):
        simulate(chain, init="leakage", t_final=200.0, trajectories=16, engine="sector")


def test_runs_within_reach_are_not_refused(low_limit):
    """No refusal where nothing raises N (no bath, ideal readout), on the exact engine, where every sector fits,
    or where the expected rows are few (a short run)."""
    hot = ArraySpec.from_user(geometry="grid:2x3", temperature="250mK", thermal_bath=True, t1="20/J")
    cold = ArraySpec.from_user(geometry="grid:2x3", temperature="250mK", t1="20/J")
    assert reach.expected_rows_raised(cold, make_settings(cold, trajectories=16, engine="sector")) == 0.0
    assert reach.expected_rows_raised(hot, make_settings(hot, trajectories=16, engine="exact")) == 0.0
    short = make_settings(hot, trajectories=2, engine="sector", init="leakage", t_final=0.5)
    assert 0.0 < reach.expected_rows_raised(hot, short) <= reach.RAISED_ROWS_MAX
    reach.check_rows_stay_in_reach(hot, short)
    sector_engine.MAX_SECTOR_DIM = sector_dimension(6, 12)  # (restored by the fixture) every sector fits
    assert reach.expected_rows_raised(hot, make_settings(hot, trajectories=16, engine="sector")) == 0.0
