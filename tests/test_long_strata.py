"""The thermal start by strata on a long array (``thermal_strata = "all"``, L > MAX_SITES + 1; docs/physics.md §6.5).

What is checked:
- the strata are configurations of the MAX_SITES sites next to the qubit (LONG_STRATA of them: the empty one and
  the rest); their probabilities add up to 1 in every
  realization, a stratum's draw holds its configuration (a shared stratum's configurations in proportion to their
  Gibbs weights) and draws the sites after them from their own Gibbs weights (chi-square against the quantile of
  its own distribution);
- unbiased: at L = 8, 200 mK (an excited array in a third of the rows), the stratified run's leakage curves agree
  with the natural sample's within their combined standard errors at every time point;
- off is as before: a true ``thermal_strata`` leaves a long array natural (bit for bit the run without it), and the
  cache-key entries of false and true are the ones they always were.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chi2

from lru_mps.errors import ParameterError
from lru_mps.physics.model import ArraySpec
from lru_mps.run.cache import run_key
from lru_mps.run.settings import make_settings
from lru_mps.run.simulate import simulate
from lru_mps.run.thermal_sample import LONG_STRATA, MAX_SITES, build_strata, strata_for, thermal_start_row

#: chi-square tests fail at this probability under the null (the quantile of the statistic's own distribution)
P_FAIL = 1e-4


def _spec(L=9, temperature="200mK", **kw):
    return ArraySpec.from_user(length=L, conditions="realistic", temperature=temperature, **kw)


def _chi2_ok(observed: np.ndarray, expected: np.ndarray) -> tuple[bool, float, float]:
    """Pearson's chi-square with the bins of expected count < 5 pooled: (passes at P_FAIL, statistic, quantile)."""
    small = expected < 5.0
    obs = np.append(observed[~small], observed[small].sum())
    exp = np.append(expected[~small], expected[small].sum())
    keep = exp > 0
    obs, exp = obs[keep], exp[keep]
    stat = float(np.sum((obs - exp) ** 2 / exp))
    q = float(chi2.ppf(1.0 - P_FAIL, len(exp) - 1))
    return stat < q, stat, q


def test_long_strata_are_the_sites_next_to_the_qubit_and_sum_to_one():
    spec = _spec(10)
    st = strata_for(spec, make_settings(spec, init="leakage", trajectories=2000, thermal_strata="all"), "leakage")
    assert st is not None and st.n_sites == MAX_SITES and st.rest  # 3^6 configurations: the rarest share one
    # the empty sites 2..7 and the rest (an own excited stratum's minimum rows would cost ~7x an empty row each)
    assert st.n_strata == LONG_STRATA and st.configs == ((0,) * MAX_SITES,)
    assert len(st.groups) == st.n_strata and len(set(st.groups[:-1])) == st.n_strata - 1 and st.groups[-1] == -1
    assert sum(st.counts) == 2000 and abs(sum(st.nominal) - 1.0) < 1e-12
    rng = np.random.default_rng(4)
    for _ in range(5):
        p = spec.thermal_probabilities(spec.draw_realization(rng))[1:]
        total = sum(st.probability(s, p) for s in range(st.n_strata))
        assert abs(total - 1.0) < 1e-12
        # the stratum probability is the stratified sites' product: the natural rest integrates out
        assert abs(st.probability(0, p) - np.prod([p[j, c] for j, c in enumerate(st.configs[0])])) < 1e-15
    # true leaves the long array natural (as it always did); the short arrays are stratified by either value
    assert strata_for(spec, make_settings(spec, trajectories=64, thermal_strata=True), "leakage") is None
    short = _spec(MAX_SITES + 1)
    a = strata_for(short, make_settings(short, trajectories=64, thermal_strata=True), "leakage")
    b = strata_for(short, make_settings(short, trajectories=64, thermal_strata="all"), "leakage")
    assert a.n_sites == MAX_SITES and np.array_equal(a.plan, b.plan) and a.configs == b.configs
    cold = ArraySpec.from_user(length=10, conditions="realistic", temperature="0")
    assert strata_for(cold, make_settings(cold, trajectories=64, thermal_strata="all"), "leakage") is None


def test_draws_follow_the_conditioned_gibbs_weights():
    """An own stratum holds its configuration; the shared one draws its configurations in proportion to their Gibbs
    weights; every stratum draws sites MAX_SITES+2..L from their own weights (one chi-square each)."""
    spec = _spec(10, temperature="300mK")
    st = build_strata(spec, 400, 1.0, MAX_SITES)
    p = spec.thermal_probabilities(spec.draw_realization(np.random.default_rng(7)))[1:]
    rng = np.random.default_rng(8)
    natural = spec.L - 1 - MAX_SITES
    n = 4000
    shared = st.n_strata - 1
    w = np.array([np.prod(p[np.arange(MAX_SITES), list(c)]) for c in st.rest])
    drawn_cfg = np.zeros(len(st.rest))
    tail = np.zeros((natural, 3))
    index = {c: k for k, c in enumerate(st.rest)}
    prob_of = {s: st.probability(s, p) for s in (0, shared)}
    for i in range(n):
        s = 0 if i % 2 == 0 else shared
        levels, prob = st.draw(s, p, rng.random(2 + natural))
        assert levels[0] == 0 and abs(prob - prob_of[s]) < 1e-12
        cfg = tuple(int(x) for x in levels[1:MAX_SITES + 1])
        if s == 0:
            assert cfg == st.configs[0]
        else:
            drawn_cfg[index[cfg]] += 1
        tail[np.arange(natural), levels[MAX_SITES + 1:]] += 1
    ok, stat, q = _chi2_ok(drawn_cfg, (n // 2) * w / w.sum())
    assert ok, f"shared stratum's configurations: chi2 {stat:.1f} >= {q:.1f}"
    for j in range(natural):
        ok, stat, q = _chi2_ok(tail[j], n * p[MAX_SITES + j])
        assert ok, f"natural site {MAX_SITES + 2 + j}: chi2 {stat:.1f} >= {q:.1f}"


def test_stratified_long_array_agrees_with_the_natural_sample():
    """L = 8, 200 mK, leakage start: both runs' P_star^(1) and P_star^(L), every point within 4 combined errors."""
    spec = _spec(MAX_SITES + 2)
    kw = dict(init="leakage", t_final=120.0, time_points=9, trajectories=192, workers=1)
    natural = simulate(spec, seed=1, **kw)
    strat = simulate(spec, seed=2, thermal_strata="all", **kw)
    assert strata_for(spec, strat.settings, "leakage") is not None
    for obs in ("leakage_site1", "leakage_array"):
        a, b = natural.observable(obs), strat.observable(obs)
        if obs == "leakage_site1":
            assert abs(b.mean[0] - 1.0) < 1e-12  # the strata's estimate is normalized exactly
        late = natural.times > 0
        err = np.hypot(a.sem, b.sem)[late]
        assert np.all(err > 0)
        z = (b.mean - a.mean)[late] / err
        assert np.max(np.abs(z)) < 4.0, (obs, z)
        # the stratified curve moved off the natural one: its rows are not the natural sample's
        assert not np.array_equal(a.mean, b.mean)


def test_off_is_as_before():
    """A true thermal_strata leaves a long array's sample natural (bit for bit the run without the option); the
    cache-key entries of false and true are those of every earlier version; "all" adds its own."""
    spec = _spec(9)
    kw = dict(init="leakage", t_final=40.0, time_points=5, trajectories=6, seed=3, workers=1)
    off, true = simulate(spec, **kw), simulate(spec, thermal_strata=True, **kw)
    for obs in ("leakage_site1", "leakage_array"):
        assert np.array_equal(off.observable(obs).mean, true.observable(obs).mean)
        assert np.array_equal(off.observable(obs).sem, true.observable(obs).sem)
    # the draws: without strata, a row's levels are the natural Gibbs sample's from the same stream
    settings = make_settings(spec, trajectories=6, thermal_strata=True)
    real = spec.draw_realization(np.random.default_rng(0))
    levels, weight, s, prob = thermal_start_row(spec, real, "leakage", np.random.default_rng(5), settings, 2)
    assert s is None and prob == 1.0 and weight == 1.0
    assert np.array_equal(levels, spec.thermal_levels(real, np.random.default_rng(5)))
    keys = {v: run_key(spec, make_settings(spec, trajectories=6, thermal_strata=v))[1].get("thermal_strata")
            for v in (False, True, "all")}
    assert keys[False] is None
    assert keys[True] == "configurations of sites 2..L >= 1e-07 (L <= 7), >= 16 rows each"
    assert keys["all"].startswith(keys[True]) and keys["all"] != keys[True]
    with pytest.raises(ParameterError) as e:
        make_settings(spec, thermal_strata="long")
    assert e.value.name == "thermal_strata"
