"""The thermal start drawn by its number of excitations at cost-aware odds (``thermal_strata = "cost"``,
lru_mps.run.thermal_number; docs/physics.md §6.5).

What is checked:
- the conditioned draw: at a fixed number n its configurations come with their Gibbs weights given n (exact
  enumeration against 20,000 draws, every configuration within 4 binomial errors), and W_n is the number's Gibbs
  weight;
- the odds: the defensive mixture of W_n and W_n / sqrt(c_n) exactly, none above the sector engine's cap, the same plan every time;
- the weighted sample: sum P f / sum P against the Gibbs mean of a configuration's function (within 4 of its
  delta-method errors);
- against the master equation (a fixed realization, L = 4 at 300 mK, every start): every resolved point within 4
  standard errors, S(0) = 1, and the scatter of the estimate over seeds against its error (the pull's spread 1
  within 4 of its standard errors);
- the refusals: other words and the odds that would weight the sample twice, by name.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from conftest import long_scale
from lru_mps.analysis.decay import reference_curves
from lru_mps.errors import ParameterError
from lru_mps.physics.model import ArraySpec
from lru_mps.references.lindblad import lindblad_observables
from lru_mps.run.settings import make_settings
from lru_mps.run.simulate import simulate
from lru_mps.run.thermal_number import DEFENSIVE, build_odds, conditioned_levels, cost_model
from lru_mps.run.thermal_sample import nominal_probabilities, number_distribution, strata_for


def _gibbs(K: int, seed: int) -> np.ndarray:
    """Level weights (K, 3) of K sites, skewed as a warm array's (|0> most likely)."""
    rng = np.random.default_rng(seed)
    return rng.dirichlet([6.0, 2.0, 1.0], size=K)


def _exact_conditional(p: np.ndarray, n: int) -> dict:
    configs = [c for c in itertools.product(range(3), repeat=p.shape[0]) if sum(c) == n]
    w = np.array([np.prod(p[np.arange(p.shape[0]), list(c)]) for c in configs])
    return dict(zip(configs, w / w.sum())), float(w.sum())


@pytest.mark.parametrize("n", [0, 1, 2, 4])
def test_conditioned_draw_is_the_gibbs_distribution_given_n(n):
    p = _gibbs(5, 3)
    exact, Wn = _exact_conditional(p, n)
    rng = np.random.default_rng(10 + n)
    M = 20000
    seen: dict = {}
    for _ in range(M):
        levels, w = conditioned_levels(p, n, rng.random(p.shape[0]))
        assert levels[0] == 0 and int(levels.sum()) == n
        seen[tuple(levels[1:])] = seen.get(tuple(levels[1:]), 0) + 1
    assert abs(w - Wn) < 1e-14 and abs(w - number_distribution(p, n)[n]) < 1e-14
    assert set(seen) <= set(exact)
    for c, q in exact.items():
        f = seen.get(c, 0) / M
        assert abs(f - q) <= 4.0 * np.sqrt(q * (1 - q) / M) + 1e-12, (c, f, q)


def test_odds_follow_weight_over_root_cost_and_the_cap():
    spec = ArraySpec.from_user(length=8, conditions="realistic", temperature="150mK")
    W = number_distribution(nominal_probabilities(spec), 2 * (spec.L - 1))
    odds = build_odds(spec.L, W, 2, 64)
    q, c = np.array(odds.odds), np.array([cost_model(spec.L, 2 + n) for n in range(len(odds.odds))])
    cost_odds = W / np.sqrt(c) / np.sum(W / np.sqrt(c))
    a = DEFENSIVE
    assert abs(q.sum() - 1.0) < 1e-12 and np.allclose(q, a * W / W.sum() + (1 - a) * cost_odds, rtol=1e-12)
    assert np.all(q >= a * W / W.sum() * (1 - 1e-12))  # every number at least at a times its natural odds
    # three thermal excitations thinned: their sector costs 35x the stack's (the cost term thins them ~6x)
    assert q[3] / W[3] < 0.6 * q[0] / W[0]
    capped = build_odds(spec.L, W[:4], 2, 64)
    assert len(capped.odds) == 4 and abs(sum(capped.odds) - 1.0) < 1e-12
    assert np.array_equal(capped.plan, np.zeros(64)) and build_odds(spec.L, W[:4], 2, 64).odds == capped.odds
    # the run's odds: the sector engine's cap at L = 8 holds every number (none), the same object every row
    settings = make_settings(spec, trajectories=64, thermal_strata="cost")
    assert strata_for(spec, settings, "leakage") is strata_for(spec, settings, "leakage")
    assert strata_for(spec, settings, "leakage").odds == odds.odds


def test_weighted_sample_gives_the_gibbs_mean():
    """sum P f / sum P over rows drawn at the odds, f = the levels of the array's sites (their thermal populations
    by site) and the indicator of >= 3 excitations, against their exact Gibbs values."""
    spec = ArraySpec.from_user(length=10, conditions="realistic", temperature="200mK")
    settings = make_settings(spec, trajectories=64, thermal_strata="cost")
    odds = strata_for(spec, settings, "leakage")
    real = spec.draw_realization(np.random.default_rng(5))
    p = spec.thermal_probabilities(real)[1:]
    rng = np.random.default_rng(6)
    M = 20000
    rows = [odds.draw(0, p, rng.random(2 + spec.L - 1)) for _ in range(M)]
    P = np.array([w for _, w in rows])
    F = np.array([np.concatenate([lv[1:], [float(lv.sum() >= 3)]]) for lv, _ in rows])
    R = (P[:, None] * F).sum(axis=0) / P.sum()
    err = np.sqrt(np.mean((P[:, None] * (F - R)) ** 2, axis=0) / M) / P.mean()
    exact = np.concatenate([p[:, 1] + 2 * p[:, 2], [1.0 - number_distribution(p, 2).sum()]])
    assert np.all(np.abs(R - exact) <= 4.0 * err), (R - exact) / err
    assert abs(P.mean() - 1.0) < 4.0 * P.std() / np.sqrt(M)  # E_q[P] = 1
    # the hot rows are thinned: fewer of them drawn than in the natural sample, at least DEFENSIVE of them
    assert DEFENSIVE * exact[-1] - 4 * np.sqrt(exact[-1] / M) < F[:, -1].mean() < 0.75 * exact[-1]


def _case(n: int, seed: int, real, spec):
    return simulate(spec, init="all", realization=real, t_final=400.0, time_points=21, trajectories=n, seed=seed,
                    engine="exact", thermal_strata="cost")


def test_fixed_realization_against_master_equation():
    """L = 4 at 300 mK (2.1 thermal excitations' worth of hot rows: n >= 2 in 13 % of the sample), one
    realization, every start: every resolved point within 4 sigma; S(0) = 1 exactly."""
    spec = ArraySpec.from_user(length=4, conditions="realistic", temperature="300mK")
    real = spec.draw_realization(np.random.default_rng(2026))
    res = _case(1500, 4, real, spec)
    s1 = res.observable("leakage_site1")
    assert abs(s1.mean[0] - 1.0) < 1e-12
    refs = {i: lindblad_observables(spec, real, i, res.times, t0_nodes=200) for i in ("leakage", "qubit", "coherence")}
    ref = reference_curves(refs)
    for name in ("leakage_array", "leakage_site1", "qubit_population", "qubit_coherence"):
        ms = res.observable(name)
        ok = ms.resolved & (res.times > 0)
        assert ok.sum() >= len(ok) // 2, name
        dev = np.abs(ms.mean - ref[name])[ok]
        assert np.all(dev <= 4.0 * ms.sem[ok] + 1e-12), (name, np.max(dev / (ms.sem[ok] + 1e-300)))


@pytest.mark.long
def test_error_is_the_scatter_over_seeds():
    """P_star^(L) and <n_1> of the L = 4, 300 mK realization over independent seeds: the spread of
    (mean - exact) / sem is 1 within 4 of its standard errors (one early, one middle and one late point per seed)."""
    K = max(12, int(48 * long_scale()))
    spec = ArraySpec.from_user(length=4, conditions="realistic", temperature="300mK")
    real = spec.draw_realization(np.random.default_rng(2026))
    pulls, ref = [], None
    for seed in range(K):
        res = _case(400, 100 + seed, real, spec)
        if ref is None:
            refs = {i: lindblad_observables(spec, real, i, res.times, t0_nodes=200) for i in ("leakage", "qubit")}
            ref = reference_curves(refs)
        for name in ("leakage_array", "qubit_population"):
            ms = res.observable(name)
            for k in (3, 10, 18):
                if ms.resolved[k] and ms.sem[k] > 0:
                    pulls.append((ms.mean[k] - ref[name][k]) / ms.sem[k])
    pulls = np.array(pulls)
    assert len(pulls) >= 4 * K
    assert abs(pulls.mean()) < 4.0 / np.sqrt(len(pulls))
    assert abs(pulls.std() - 1.0) < 4.0 / np.sqrt(2.0 * len(pulls)), pulls.std()


@pytest.mark.parametrize("options, name", [
    ({"thermal_strata": "number"}, "thermal_strata"),
    ({"thermal_strata": "cost", "hot_tail": 2.0}, "hot_tail"),
    ({"thermal_strata": "cost", "leakage_thermal_odds": 4.0}, "leakage_thermal_odds"),
])
def test_refused_by_name(options, name):
    spec = ArraySpec.from_user(length=4, conditions="realistic", temperature="100mK")
    with pytest.raises(ParameterError) as err:
        make_settings(spec, **options)
    assert err.value.name == name and "\n" not in str(err.value), str(err.value)


def test_cold_and_off_are_not_weighted():
    spec = ArraySpec.from_user(length=4, conditions="realistic", temperature="0")
    assert strata_for(spec, make_settings(spec, thermal_strata="cost"), "leakage") is None
    warm = ArraySpec.from_user(length=4, conditions="realistic", temperature="100mK")
    assert strata_for(warm, make_settings(warm), "leakage") is None
