"""Thermal starts the sector engine cannot hold (lru_mps.run.thermal_sample.thermal_cap): the Gibbs sample conditioned
on the starts that fit, exactly, with the mass left out computed and reported; no run fails halfway on such a row.

The sector engine's limit is lowered here (MAX_SECTOR_DIM) so that it binds on small layouts at a high temperature,
where every number can be checked against enumeration (250 mK on the 2x3 grid: 17 % of the leakage starts over
the lowered limit)."""

import itertools
import json

import numpy as np
import pytest
from scipy import stats

import lru_mps.engines.sector.state as sector_engine
from lru_mps.engines.sector.engine import sector_dimension
from lru_mps.errors import ParameterError
from lru_mps.io.datasets import to_json
from lru_mps.io.summary import format_summary
from lru_mps.physics.model import ArraySpec
from lru_mps.run.seeding import disorder_rng
from lru_mps.run.settings import make_settings
from lru_mps.run.simulate import simulate
from lru_mps.run.thermal_sample import MAX_EXCESS, excess_mass, thermal_cap
from lru_mps.run.trajectories import draw


def _grid_spec(temperature="250mK"):
    return ArraySpec.from_user(geometry="grid:2x3", temperature=temperature, reset="periodic", rate="0.03J")


@pytest.fixture
def low_limit(monkeypatch):
    """The sector engine's limit at the N = 4 sector of the 2x3 grid: a leakage start holds at most 2 thermal
    excitations, a qubit or coherence start 3."""
    limit = sector_dimension(6, 4)
    monkeypatch.setattr(sector_engine, "MAX_SECTOR_DIM", limit)
    return limit


@pytest.mark.parametrize("n", [1, 3, 6])
def test_excess_mass_equals_enumeration(n):
    """P(sum of levels > cap) of independent qutrits against the sum over all 3^n configurations, every cap."""
    rng = np.random.default_rng(n)
    p = rng.dirichlet([3.0, 1.0, 0.5], size=n)
    for cap in range(0, 2 * n + 1):
        exact = sum(np.prod(p[np.arange(n), list(c)]) for c in itertools.product(range(3), repeat=n) if sum(c) > cap)
        assert excess_mass(p, cap) == pytest.approx(exact, abs=1e-14)


def test_cap_is_the_sector_engines_limit(low_limit):
    """The cap is the largest number of thermal excitations whose start sector has at most MAX_SECTOR_DIM states
    (|2> on site 1 brings 2, |1> and the coherence state 1); none for the other engines, at 0 K, or where every
    sector fits."""
    spec = _grid_spec()
    st = make_settings(spec, trajectories=4, engine="sector")
    for init, n1 in (("leakage", 2), ("qubit", 1), ("coherence", 1)):
        cap = thermal_cap(spec, st, init)
        assert sector_dimension(6, cap + n1) <= low_limit < sector_dimension(6, cap + n1 + 1)
    assert thermal_cap(spec, make_settings(spec, trajectories=4, engine="exact"), "leakage") is None
    cold = _grid_spec("0K")
    assert thermal_cap(cold, make_settings(cold, trajectories=4, engine="sector"), "leakage") is None


def test_cap_never_binds_below_the_real_limit():
    """At the real limit (2,000,000 states) the 2x3 grid and the 3x3 grid with its four LRU arms never need the
    cap; on the 5x5 layout with its arms (33 transmons) a leakage start holds at most 3 thermal excitations."""
    from lru_mps.physics import geometry as G

    st_of = lambda s: make_settings(s, trajectories=4, engine="sector")  # noqa: E731
    spec = _grid_spec()
    assert thermal_cap(spec, st_of(spec), "leakage") is None
    g = G.lru_grid(5, 5, "corners", 2)
    big = ArraySpec.from_user(geometry=g.relabel(G.coding_sites(g)[0], list(g.reset_sites)), temperature="100mK")
    assert big.L == 33
    assert thermal_cap(big, st_of(big), "leakage") == 3 and thermal_cap(big, st_of(big), "qubit") == 4


def test_capped_sample_is_the_conditioned_gibbs_sample(low_limit):
    """On one realization at 250 mK (1.4 thermal excitations on average over the five sites 2..6), 4,000 leakage
    starts: none over the cap, and the count of every configuration of sites 2..6 against the Gibbs product
    conditioned on at most 2 excitations (a chi-square test over the configurations expected >= 5 times, p > 1e-4);
    a row whose natural draw fits is bit for bit the row of the uncapped run (its stream is untouched)."""
    spec = _grid_spec()
    real = spec.draw_realization(disorder_rng(0, 0))
    p = spec.thermal_probabilities(real)[1:]
    capped = make_settings(spec, trajectories=4000, seed=5, engine="sector", init="leakage")
    free = make_settings(spec, trajectories=4000, seed=5, engine="exact", init="leakage")
    cap = thermal_cap(spec, capped, "leakage")
    assert cap == 2
    counts, same, over = {}, 0, 0
    for i in range(4000):
        d, f = draw(spec, capped, i, real), draw(spec, free, i, real)
        levels = tuple(int(np.argmax(np.abs(v))) for v in d.products[0][1:])
        assert sum(levels) <= cap
        counts[levels] = counts.get(levels, 0) + 1
        natural = tuple(int(np.argmax(np.abs(v))) for v in f.products[0][1:])
        if sum(natural) <= cap:
            assert levels == natural
            same += 1
        else:
            over += 1
    kept = {c: float(np.prod(p[np.arange(5), list(c)])) for c in itertools.product(range(3), repeat=5) if sum(c) <= cap}
    total = sum(kept.values())
    assert total == pytest.approx(1.0 - excess_mass(p, cap), abs=1e-14)
    assert over > 100  # the cap binds (the test would say nothing otherwise)
    expected = {c: 4000 * w / total for c, w in kept.items()}
    big = [c for c in expected if expected[c] >= 5]
    obs = np.array([counts.get(c, 0) for c in big] + [4000 - sum(counts.get(c, 0) for c in big)])
    exp = np.array([expected[c] for c in big] + [4000 - sum(expected[c] for c in big)])
    assert stats.chisquare(obs, exp).pvalue > 1e-4
    assert same + over == 4000


def test_run_reports_the_mass_left_out(low_limit):
    """A run whose thermal starts exceed the engine's limit completes (before: refused at the first such row), every
    row carries its realization's excess mass, and the result, its summary text and its JSON report the mean."""
    spec = _grid_spec()
    res = simulate(spec, init="all", t_final=40.0, time_points=5, trajectories=12, seed=2, engine="sector",
                   estimator="sampled")
    seeds = range(12)
    for init, n1 in (("leakage", 2), ("qubit", 1), ("coherence", 1)):
        cap = sector_engine.MAX_SECTOR_DIM and thermal_cap(spec, res.settings, init)
        want = [excess_mass(spec.thermal_probabilities(spec.draw_realization(disorder_rng(2, i)))[1:], cap)
                for i in seeds]
        np.testing.assert_allclose(res.diagnostics[init]["thermal_mass_dropped"], want, rtol=1e-12)
    dropped = res.thermal_mass_dropped()
    assert 0.01 < dropped < MAX_EXCESS
    assert dropped == max(float(np.mean(d["thermal_mass_dropped"])) for d in res.diagnostics.values())
    assert json.loads(json.dumps(to_json(res)))["thermal_mass_dropped"] == dropped
    assert "Gibbs mass left out" in format_summary(res)
    plain = simulate(_grid_spec(), init="leakage", t_final=40.0, time_points=5, trajectories=4, seed=2, engine="exact",
                     estimator="sampled")
    assert plain.thermal_mass_dropped() is None and "thermal_mass_dropped" not in to_json(plain)


def test_refusals_name_what_cannot_be_conditioned(low_limit, monkeypatch):
    """A weighted thermal sample (leakage_thermal_odds) is not conditioned on the cap: a row over it is refused
    naming the option; a cap that would leave out more than MAX_EXCESS of a realization's starts is refused naming
    the temperature."""
    spec = _grid_spec()
    st = make_settings(spec, trajectories=200, seed=1, engine="sector", init="leakage", leakage_thermal_odds=8.0)
    with pytest.raises(ParameterError, match="leakage_thermal_odds=8.0 is not allowed: the natural sample"):
        for i in range(200):
            draw(spec, st, i)
    hot = _grid_spec("900mK")  # (hot enough that the cap leaves out too much; under the 1 K domain)
    st = make_settings(hot, trajectories=200, seed=1, engine="sector", init="leakage")
    with pytest.raises(ParameterError, match="temperature"):
        for i in range(200):
            draw(hot, st, i)


def test_an_event_raising_a_row_past_the_limit_names_what_raised_it(low_limit, monkeypatch):
    """A thermal bath's heating can raise a row's N during the run; a run where that is expected is refused before
    it starts (tests/test_sector_reach.py), and where it happens anyway the run stops naming the thermal bath, the
    sector's size and what raises N, before the sector is built (the up-front check lifted here)."""
    import lru_mps.run.sector_reach as reach

    monkeypatch.setattr(reach, "RAISED_ROWS_MAX", float("inf"))
    spec = ArraySpec.from_user(geometry="grid:2x3", temperature="250mK", thermal_bath=True, t1="20/J")
    with pytest.raises(ParameterError, match=r"thermal_bath=True is not allowed: .*N = 5 on L = 6 sites, 126 states"
                                             r".*heating.*\(fewer sites, a lower temperature or a shorter t_final\)"):
        simulate(spec, init="all", t_final=200.0, time_points=5, trajectories=16, seed=1, engine="sector",
                 estimator="sampled")
