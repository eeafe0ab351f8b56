"""The stratified thermal start (docs/physics.md §6.5, "Strata of the thermal start").

What is checked:
- the allocation and the plan: every stratum of its own weight >= STRATUM_MIN_WEIGHT gets at least
  min(16, n / 2S) rows, the plan interleaves them so that every trajectory block holds every stratum, and it
  depends on nothing but the run's size and physics; T = 0, L = 2 and runs without the option are not stratified;
- a stratum's draw: its configuration, the strata's probabilities add up to 1 in every realization;
- the estimator: exact normalization (S(0) = P_star^(1)(0) = 1), merging blocks and a stored state give the same
  numbers, and its error is a claim checked by a pull test on synthetic strata (the scatter over independent
  replications against the quoted error; the tolerance is the statistics' own);
- against the master equation at L = 3 (a fixed realization, so the reference is one density matrix): every resolved
  point within 4 standard errors, and the long form: the length-scaling study's realistic L = 3 ensembles against
  the disorder average of the master equation (every stored point, resolved, within 4 standard errors), and the
  scatter of the stratified estimate over independent seeds against its error.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import long_scale
from lru_mps.physics.model import ArraySpec
from lru_mps.references.lindblad import lindblad_observables
from lru_mps.analysis.decay import reference_curves
from lru_mps.run.blocks import block_of, n_blocks
from lru_mps.run.settings import make_settings
from lru_mps.run.simulate import simulate
from lru_mps.run.statistics import ObservableAccumulator, StratifiedAccumulator
from lru_mps.run.thermal_sample import STRATUM_MIN_ROWS, STRATUM_MIN_WEIGHT, build_strata, strata_for


def _spec(L=3, **kw):
    return ArraySpec.from_user(length=L, **kw)


@pytest.mark.parametrize("L, n, odds", [(3, 720, 8.0), (4, 720, 1.0), (5, 240, 8.0), (6, 100, 1.0)])
def test_allocation_and_plan(L, n, odds):
    st = build_strata(_spec(L), n, odds)
    counts = np.array(st.counts)
    assert counts.sum() == n and np.all(np.bincount(st.plan, minlength=st.n_strata) == counts)
    S = st.n_strata
    m = max(1, min(STRATUM_MIN_ROWS, n // (4 * S)))
    assert np.all(counts >= m) and S <= max(2, n // (4 * STRATUM_MIN_ROWS))
    # every configuration of larger weight than the stated one has its own stratum
    assert all(w >= STRATUM_MIN_WEIGHT for w in st.nominal[: len(st.configs)])
    from lru_mps.run.thermal_sample import nominal_probabilities

    p = nominal_probabilities(_spec(L))
    weight = {c: float(np.prod(p[np.arange(L - 1), list(c)])) for c in st.configs + st.rest}
    assert all(weight[c] <= st.stated_weight for c in st.rest)  # a class above the stated weight has its own stratum
    assert abs(sum(st.nominal) - 1.0) < 1e-12
    # interleaved: a stratum with >= 16 rows appears in every block of the run
    blocks = np.array([block_of(i, n) for i in range(n)])
    for s, c in enumerate(counts):
        if c >= n_blocks(n):
            assert len(set(blocks[st.plan == s])) == n_blocks(n), (s, c)
    again = build_strata(_spec(L), n, odds)
    assert np.array_equal(again.plan, st.plan) and again.counts == st.counts


def test_l3_strata_are_every_configuration():
    """At L = 3 every configuration of sites 2, 3 has a stratum (9, the rarest |2>|2> at 7e-7), >= 16 rows each."""
    st = build_strata(_spec(3), 720, 8.0)
    assert sorted(st.configs) == [(a, b) for a in range(3) for b in range(3)] and st.rest == ()
    assert st.stated_weight == 0.0 and min(st.counts) >= STRATUM_MIN_ROWS
    assert st.counts[st.configs.index((1, 0))] > 720 * 0.026 * 4  # the odds
    # strata that differ only at the reset site share a group
    g = dict(zip(st.configs, st.groups))
    assert g[(0, 0)] == g[(0, 1)] == g[(0, 2)] != g[(1, 0)] == g[(1, 1)]


def test_not_stratified_where_it_does_not_apply():
    on = dict(trajectories=64, thermal_strata=True)
    assert strata_for(_spec(3), make_settings(_spec(3), **on), "leakage") is not None
    assert strata_for(_spec(3), make_settings(_spec(3), trajectories=64), "leakage") is None
    assert strata_for(_spec(2), make_settings(_spec(2), **on), "leakage") is None
    ideal = _spec(3, conditions="ideal")
    assert strata_for(ideal, make_settings(ideal, **on), "qubit") is None
    assert strata_for(_spec(8), make_settings(_spec(8), engine="sector", **on), "qubit") is None


def test_draw_in_stratum_and_probabilities_add_up():
    spec = _spec(5)
    st = build_strata(spec, 400, 1.0)
    rng = np.random.default_rng(3)
    for _ in range(5):
        real = spec.draw_realization(rng)
        p = spec.thermal_probabilities(real)[1:]
        assert abs(sum(st.probability(s, p) for s in range(st.n_strata)) - 1.0) < 1e-12
        for s in range(st.n_strata):
            levels, prob = st.draw(s, p, rng.random(2))
            assert levels[0] == 0 and abs(prob - st.probability(s, p)) < 1e-15
            assert tuple(levels[1:]) in ((st.configs[s],) if s < len(st.configs) else st.rest)


def _synthetic(rng, n_rows, plan, W, mu, sd, T=4):
    """A synthetic stratified sample as an accumulator's sums (vectorized): P jitters around W_s by 2 %, values
    Gaussian in strata 0 and 2 and a rare spike (10 % of the rows at 3) in stratum 1."""
    S = len(W)
    acc = StratifiedAccumulator(T, 2, S)
    P = W[plan] * (1.0 + 0.02 * (rng.random(len(plan)) - 0.5))
    f = mu[plan, None] + sd[plan, None] * rng.standard_normal((len(plan), T))
    f[plan == 1] = (rng.random((int(np.sum(plan == 1)), T)) < 0.1) * 3.0
    y = P[:, None] * f
    for s in range(S):
        r = plan == s
        acc.counts[s] = np.count_nonzero(r)
        acc.sum_p[s], acc.sum_p2[s] = P[r].sum(), (P[r] ** 2).sum()
        acc.sums["leakage_site1"][s] = y[r].sum(axis=0)
        acc.squares["leakage_site1"][s] = (y[r] ** 2).sum(axis=0)
        acc.cross["leakage_site1"][s] = (P[r, None] * y[r]).sum(axis=0)
        acc.absolute["leakage_site1"][s] = np.abs(y[r]).sum(axis=0)
    return acc


def test_pull_of_the_stratified_error_on_synthetic_strata():
    """Over 4000 independent replications: the estimate is unbiased (its mean within 4 of its standard errors of
    the truth) and the quoted error is the scatter (the rms of the quoted errors over the spread of the estimates
    is 1 within 4 standard errors of that ratio, sqrt(1 / 2K) for K replications)."""
    rng = np.random.default_rng(11)
    W = np.array([0.9, 0.08, 0.02])
    mu, sd = np.array([0.2, 0.0, 1.0]), np.array([0.1, 0.0, 0.5])
    truth = float(np.sum(W * np.array([0.2, 0.3, 1.0])))  # stratum 1: 0.1 x 3
    plan = np.repeat([0, 1, 2], [120, 60, 20])
    K = 4000
    est = [_synthetic(rng, len(plan), plan, W, mu, sd, T=1).get("leakage_site1") for _ in range(K)]
    means = np.array([m.mean[0] for m in est])
    sems = np.array([m.sem[0] for m in est])
    assert abs(means.mean() - truth) < 4.0 * means.std() / np.sqrt(K), (means.mean(), truth)
    ratio = np.sqrt(np.mean(sems**2)) / means.std()
    assert abs(ratio - 1.0) < 4.0 / np.sqrt(2.0 * K), ratio


def test_merge_and_state_give_the_same_numbers():
    rng = np.random.default_rng(5)
    W = np.array([0.9, 0.08, 0.02])
    plan = np.repeat([0, 1, 2], [40, 20, 16])
    parts = [_synthetic(rng, 76, plan, W, np.array([0.2, 0, 1.0]), np.array([0.1, 0, 0.5])) for _ in range(3)]
    # the same sums from rows added one at a time
    one = StratifiedAccumulator(4, 2, 3)
    for s, p in zip(plan, W[plan]):
        pops = np.zeros((4, 2, 3))
        pops[:, 0, 2] = p * np.arange(4)
        one.add(pops, np.zeros(4, dtype=complex), (int(s), p))
    assert np.allclose(one.get("leakage_site1").mean, np.sum(W * np.bincount(plan) / np.bincount(plan)) * np.arange(4)
                       / W.sum())
    total = parts[0].empty()
    for p in parts:
        total.merge(p)
    again = ObservableAccumulator.from_state({k: np.array(v) for k, v in total.state().items()})
    assert isinstance(again, StratifiedAccumulator) and again.count == 3 * 76
    a, b = total.get("leakage_site1"), again.get("leakage_site1")
    assert np.array_equal(a.mean, b.mean) and np.array_equal(a.sem, b.sem) and np.array_equal(a.resolved, b.resolved)


def test_fixed_realization_against_master_equation():
    """L = 3 at 100 mK, one realization: every resolved point of P_star^(L), P_star^(1) within 4 sigma; S(0) = 1 and
    P_star^(L)(0) = 1 + the thermal |2> population exactly (every class is drawn)."""
    spec = _spec(3)
    real = spec.draw_realization(np.random.default_rng(2026))
    # 576 rows: every configuration of sites 2, 3 in a stratum of its own (n / 64 = 9 strata), none shared
    res = simulate(spec, init="leakage", realization=real, t_final=900.0, time_points=61, trajectories=576, seed=4,
                   engine="exact", estimator="branch", leakage_thermal_odds=8.0, thermal_strata=True)
    s1 = res.observable("leakage_site1")
    assert abs(s1.mean[0] - 1.0) < 1e-12 and s1.sem[0] < 1e-8  # (rounding in the sums of squares)
    ref = reference_curves({"leakage": lindblad_observables(spec, real, "leakage", res.times, t0_nodes=200)})
    assert abs(res.observable("leakage_array").mean[0] - ref["leakage_array"][0]) < 1e-12
    for name in ("leakage_array", "leakage_site1"):
        ms = res.observable(name)
        ok = ms.resolved
        assert ok[: len(ok) // 3].all(), name  # the first third is resolved
        dev = np.abs(ms.mean - ref[name])[ok]
        assert np.all(dev <= 4.0 * ms.sem[ok] + 1e-12), (name, np.max(dev / (ms.sem[ok] + 1e-300)))


def _study_run(init, n, seed, integrate=False, odds=None, hot=4.0):
    spec = _spec(3)
    t_final = 2 * spec.T_prop + 1256.6370614359173  # the study's (L - 1) T_prop + 40 us
    if odds is None:
        odds = 8.0 if init == "leakage" else 1.0
    return simulate(spec, init=init, t_final=t_final, time_points=201, trajectories=n, seed=seed, engine="exact",
                    estimator="branch", hot_tail=hot, leakage_thermal_odds=odds, thermal_strata=True,
                    integrate_decay=integrate)


def _disorder_average(counts, times, seed=777, groups=10):
    """The master equation's curves averaged over realizations drawn as the trajectories draw theirs, ``counts``
    = {init: number of realizations} (the first ones shared: one realization's initial states reuse its sectors):
    {observable: (mean, standard error, [the means of ``groups`` disjoint groups of realizations])}."""
    from lru_mps.run.seeding import disorder_rng

    spec = _spec(3)
    curves: dict = {}
    for i in range(max(counts.values())):
        real = spec.draw_realization(disorder_rng(seed, i))
        for init, n_real in counts.items():
            if i < n_real:
                ref = reference_curves({init: lindblad_observables(spec, real, init, times, t0_nodes=40)})
                for k, v in ref.items():
                    curves.setdefault(k, []).append(np.asarray(v))
    out = {}
    for k, rows in curves.items():
        c = np.array(rows)
        out[k] = (c.mean(axis=0), c.std(axis=0, ddof=1) / np.sqrt(len(c)),
                  [g.mean(axis=0) for g in np.array_split(c, groups)])
    return out


def _study_plan_at_3():
    """The length-scaling study's realistic L = 3 runs as its row plan sets them (studies/length-scaling.toml)."""
    from lru_mps.studies.base import study_defaults
    from lru_mps.studies.length_scaling.plan import _ensembles

    cfg = study_defaults("length-scaling")[0]
    return _ensembles(cfg, 3, False, int(cfg["realizations"]))


@pytest.mark.long
def test_study_l3_against_disorder_average():
    """The length-scaling study's realistic L = 3 ensembles (its own row plan: strata, the leakage start's odds and
    integrated decay, the qubit starts' factor) against the disorder-averaged master equation: every stored point
    (the resolved ones; the study writes NaN elsewhere) within 4 standard errors (both errors added in
    quadrature; the reference's over its realizations), and T_star, T1 and T2 against the same fit (window,
    weights) of the reference curve within 3 errors (the study's jackknife and the reference's over groups of
    realizations, in quadrature)."""
    from lru_mps.analysis.decay import decay_times, fit_decay
    from lru_mps.analysis.fitting import jackknife_error

    s = long_scale()
    n_real = max(100, int(1500 * s**2))  # the reference's own error enters the pulls
    plan = _study_plan_at_3()
    assert sorted(x for e in plan for x in ([e[0]] if isinstance(e[0], str) else e[0])) == \
        ["coherence", "leakage", "qubit"]
    runs = {}
    for inits, n_plan, odds, hot, integrate in plan:
        n = max(576, int(n_plan * s))  # >= 576: every configuration of sites 2, 3 has a stratum of its own
        for init in ([inits] if isinstance(inits, str) else inits):
            runs[init] = _study_run(init, n, seed=0, integrate=integrate, odds=odds, hot=hot)
    times = runs["leakage"].times
    assert all(np.array_equal(r.times, times) for r in runs.values())
    ref = _disorder_average({"leakage": max(100, n_real // 2), "qubit": n_real, "coherence": n_real}, times)
    for init, res in runs.items():
        names = {"leakage": ("leakage_array", "leakage_site1"), "qubit": ("qubit_population",),
                 "coherence": ("qubit_coherence",)}[init]
        for name in names:
            ms = res.observable(name)
            mean, err, _ = ref[name]
            ok = ms.resolved
            pull = (ms.mean - mean) / (np.sqrt(ms.sem**2 + err**2) + 1e-12)  # (1e-12: rounding at t = 0)
            assert ok.mean() > 0.5, (name, ok.mean())
            assert np.all(np.abs(pull[ok]) <= 4.0), (name, res.times[ok][np.argmax(np.abs(pull[ok]))],
                                                     np.max(np.abs(pull[ok])))
        fitted = decay_times(res)
        tau = {"leakage": "T_star", "qubit": "T1", "coherence": "T2"}[init]
        obs = names[0]
        mine = fitted[tau]
        assert mine is not None, tau
        exact = fit_decay(tau, res, curve=ref[obs][0]).tau
        groups = ref[obs][2]
        loo = [fit_decay(tau, res, curve=(len(groups) * ref[obs][0] - g) / (len(groups) - 1)).tau for g in groups]
        err_ref = float(jackknife_error(np.array(loo)))
        z = (mine.value - exact) / np.hypot(mine.error, err_ref)
        assert abs(z) <= 3.0, (tau, mine.value, mine.error, exact, err_ref)


@pytest.mark.long
def test_stratified_error_is_the_scatter_over_seeds():
    """P_star^(L) of a fixed realization at L = 3 over independent seeds (576 rows: every configuration its own
    stratum): the spread of (mean - exact) / sem is 1 within 4 of its standard errors (sqrt(1 / 2K) for K seeds x points taken as independent: the points of one
    seed are correlated, so only one early, one middle and one late point per seed are used)."""
    s = long_scale()
    K = max(12, int(48 * s))
    spec = _spec(3)
    real = spec.draw_realization(np.random.default_rng(2026))
    pulls = []
    ref = None
    for seed in range(K):
        res = simulate(spec, init="leakage", realization=real, t_final=600.0, time_points=31, trajectories=576,
                       seed=100 + seed, engine="exact", estimator="branch", leakage_thermal_odds=8.0,
                       thermal_strata=True)
        if ref is None:
            ref = reference_curves({"leakage": lindblad_observables(spec, real, "leakage", res.times,
                                                                    t0_nodes=200)})["leakage_array"]
        ms = res.observable("leakage_array")
        for k in (5, 15, 25):
            if ms.resolved[k]:
                pulls.append((ms.mean[k] - ref[k]) / ms.sem[k])
    pulls = np.array(pulls)
    assert len(pulls) >= 2 * K
    assert abs(pulls.mean()) < 4.0 / np.sqrt(len(pulls))
    assert abs(pulls.std() - 1.0) < 4.0 / np.sqrt(2.0 * len(pulls)), pulls.std()


def test_store_resume_and_batching_give_the_same_numbers(tmp_path):
    """A stratified run resumed from its store gives the same numbers bit for bit, unbatched ones to rounding; its
    leave-one-block-out results keep every stratum."""
    spec = _spec(3)
    kw = dict(init="all", t_final=300.0, time_points=31, trajectories=64, seed=3, engine="exact", estimator="branch",
              leakage_thermal_odds=8.0, thermal_strata=True)
    a = simulate(spec, **kw)
    simulate(spec, cache=tmp_path, **kw)
    b = simulate(spec, cache=tmp_path, **kw)  # every block from the store
    c = simulate(spec, batched=False, **kw)
    for name in ("leakage_array", "leakage_site1", "qubit_population", "qubit_coherence"):
        ma, mb, mc = (r.observable(name) for r in (a, b, c))
        assert np.array_equal(ma.mean, mb.mean) and np.array_equal(ma.sem, mb.sem)
        assert np.array_equal(ma.resolved, mb.resolved)
        assert np.allclose(ma.mean, mc.mean, atol=1e-12, rtol=0)
    assert isinstance(b.accumulators["leakage"], StratifiedAccumulator)
    loo = b.leave_one_out()
    assert len(loo) == 16 and all(np.all(r.accumulators["leakage"].counts > 0) for r in loo)
