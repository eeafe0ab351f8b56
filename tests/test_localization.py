"""Per-realization qubit rates in ideal conditions and the localization length (lru_mps.analysis.rates, lru_mps.analysis.localization).

Physics: docs/physics.md §7-§10.  Units of J (energies, rates) and 1/J (times).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from lru_mps.physics import analytic
from lru_mps.physics import anderson
from helpers import batched, one
from lru_mps.run.settings import RunSettings, time_grid
from lru_mps.errors import ParameterError
from lru_mps.analysis.localization import fit_localization_length, typical
from lru_mps.analysis.rates import (
    C_SMALL_G,
    RESOLVE_FACTOR,
    exact_rates,
    log_edge_weight,
    qubit_mode,
    qubit_rates,
    reset_factor,
)
from lru_mps.physics.conditions import Conditions, Reset
from lru_mps.physics.model import ArraySpec, Realization

KINDS = ("dissipation", "periodic", "random")


def make(dw, kind, G, W=8.0, **kw):
    dw = np.asarray(dw, dtype=float)
    spec = ArraySpec(L=dw.size, W=W, Ubar=max(50.0, 2.0 * W), reset=Reset(kind, G), **kw)
    return spec, Realization(dw=dw, U=spec.Ubar + 2.0 * dw)


# ------------------------------------------------------------------ the qubit mode
def test_log_edge_weight_equals_direct_eigenvector_weight():
    """Backward recursion in log space == |psi_L|^2 of eigh_tridiagonal where the latter is resolvable."""
    rng = np.random.default_rng(1)
    for L in range(3, 9):
        for _ in range(5):
            dw = rng.uniform(-10.0, 10.0, L)  # W = 20 J
            E, psi = qubit_mode(dw)
            assert psi[0] > 0 and np.isclose(np.linalg.norm(psi), 1.0)
            direct = psi[-1] ** 2
            assert math.exp(log_edge_weight(dw, E)) == pytest.approx(direct, rel=1e-8)
    # also with J != 1 (same unit for dw, E and J)
    dw = rng.uniform(-10.0, 10.0, 6)
    E, psi = qubit_mode(2.0 * dw, J=2.0)
    assert math.exp(log_edge_weight(2.0 * dw, E, J=2.0)) == pytest.approx(psi[-1] ** 2, rel=1e-8)


def test_log_edge_weight_finite_and_linear_far_past_the_floor():
    """L = 50, 100, 200 at W = 20 J: finite, linear in L with slope ~ -1/xi, where eigh has nothing."""
    rng = np.random.default_rng(2)
    lengths = np.array([50, 100, 200])
    curves = []
    for _ in range(8):
        dw = rng.uniform(-10.0, 10.0, lengths[-1])
        logs = []
        for L in lengths:
            E, psi = qubit_mode(dw[:L])
            lw = log_edge_weight(dw[:L], E)
            assert math.isfinite(lw) and lw < -100.0
            # the direct weight is zero / round-off noise, nowhere near the true value
            assert not (abs(psi[-1] ** 2 / math.exp(max(lw, -745.0)) - 1.0) < 0.5)
            logs.append(lw)
        curves.append(logs)
    mean = np.mean(curves, axis=0)
    slopes = np.diff(mean) / np.diff(lengths)
    expected = -1.0 / anderson.xi_strong(20.0)  # ~ -3 per site
    assert np.all(slopes < 0)
    # linear: both halves have the same slope (to the scatter of 8 realizations), close to -1/xi
    assert slopes[0] == pytest.approx(slopes[1], rel=0.15)
    assert np.all(np.abs(slopes / expected - 1.0) < 0.15)


# ------------------------------------------------------------- the reset factor c
def test_reset_factor_small_G_limits_and_L2_formulas():
    """c -> 1 (dissipation), 2 (random); periodic: 4 sin^2 per realization, mean 2, typical 1."""
    rng = np.random.default_rng(3)
    for _ in range(5):
        dw = rng.uniform(-10.0, 10.0, 6)
        assert reset_factor(dw, "dissipation", 1e-3) == pytest.approx(C_SMALL_G["dissipation"], rel=1e-4)
        assert reset_factor(dw, "random", 1e-3) == pytest.approx(C_SMALL_G["random"], rel=1e-4)
    cs = np.array([reset_factor(rng.uniform(-10.0, 10.0, 6), "periodic", 0.01) for _ in range(3000)])
    assert np.all((cs >= 0) & (cs <= 4.0 + 1e-12))
    assert cs.mean() == pytest.approx(C_SMALL_G["periodic"], abs=4 * cs.std() / math.sqrt(cs.size))
    logc = np.log(cs[cs > 0])
    assert math.exp(logc.mean()) == pytest.approx(1.0, abs=4 * logc.std() / math.sqrt(logc.size))

    # L = 2: docs/physics.md §9 (perturbative in J/dw: relative corrections O(J^2/dw^2))
    dw12, G = 8.0, 0.7
    dw = np.array([dw12 / 2, -dw12 / 2])
    spec, real = make(dw, "dissipation", G, W=10.0)
    r = qubit_rates(spec, real, "log-space")
    tau = analytic.qubit_tau_dissipation(G, dw12)
    assert r.gamma1 == pytest.approx(1.0 / tau, rel=3.0 / dw12**2)
    spec, real = make(dw, "random", G, W=10.0)
    r = qubit_rates(spec, real, "log-space")
    assert r.gamma1 == pytest.approx(1.0 / analytic.qubit_T1_feedback(G, dw12), rel=3.0 / dw12**2)
    assert r.T2 == pytest.approx(analytic.qubit_T2_feedback(G, dw12), rel=3.0 / dw12**2)
    # periodic, one bath mode of weight w = 1 - |psi_L|^2 on the reset site: c = 4 / (1 + w^2 cot^2(d/2G)),
    # i.e. 4 sin^2(d/2G) up to O(|psi_L|^2)
    E, V = np.linalg.eigh(np.diag(dw) + np.diag([1.0], 1) + np.diag([1.0], -1))
    q = int(np.argmax(V[0] ** 2))
    d, w = E[1 - q] - E[q], V[1, 1 - q] ** 2
    c = reset_factor(dw, "periodic", G)
    assert c == pytest.approx(4.0 / (1.0 + (w / math.tan(d / (2 * G))) ** 2), rel=1e-12)
    assert c == pytest.approx(4.0 * math.sin(d / (2 * G)) ** 2, rel=5.0 / dw12**2)


# ---------------------------------------------- exact rates vs the trajectory engine
def _late_slope(t, y, t_from):
    m = t >= t_from
    return -np.polyfit(t[m], np.log(y[m]), 1)[0]


ENGINE_CASES = {
    # L: detunings (W = 8 J box) chosen well away from resonances; periodic rates chosen so that the
    # qubit mode is the slowest mode with weight on site 1 (checked below), i.e. it sets the late tail
    3: ([3.0, -2.5, 0.5], {"dissipation": 1.0, "periodic": 0.37, "random": 0.5}),
    5: ([2.2, -1.2, 0.4, -2.6, 1.1], {"dissipation": 1.0, "periodic": 0.6, "random": 0.5}),
}


@pytest.mark.parametrize("L", sorted(ENGINE_CASES))
@pytest.mark.parametrize("kind", KINDS)
def test_exact_rates_match_branch_estimator_of_the_engine(kind, L):
    """Gamma_1 and Gamma_2 equal the late-time slopes of the engine's removal-free branch.

    populations[:, 0, 1] (probability of |1> on site 1) and |coherence| of the
    branch estimator, fixed realization.  Dissipation is deterministic (one
    trajectory, sector engine).  Feedback: the measurement clock is sampled
    (periodic: the phase t0, which only shifts the time origin, 4 clocks on
    the sector engine; random: the Poisson times, 64 clocks on the batched
    exact engine), so the branch is averaged over clocks (the one-period map
    / the Liouvillian describe that average, unbiased: tests/test_branch_estimator.py
    compares it with the master equation point by point) and the slope error
    is a jackknife over clocks.  Tolerance: 3 jackknife sigma plus 0.2% for the
    residual interference wiggles of the finite window, for every kind (the
    slope of the log of a finite-sample mean carries a Jensen bias of
    ~ Var/(2 n) per unit log, here < 0.05%, inside the jackknife error).
    """
    dw, rates = ENGINE_CASES[L]
    spec, real = make(dw, kind, rates[kind])
    r = qubit_rates(spec, real, method="exact")
    assert r.method == "exact" and r.resolvable
    if kind == "periodic":  # guard: no slower mode with weight on site 1
        E, V = np.linalg.eigh(np.diag(real.dw) + np.diag(np.ones(L - 1), 1) + np.diag(np.ones(L - 1), -1))
        M = (V * np.exp(-1j * E / spec.reset.rate)) @ V.T
        M[-1] = 0.0
        mu, vec = np.linalg.eig(M)
        others = np.abs(mu)[np.abs(vec[0]) > 1e-3]
        assert np.sort(others)[-1] == pytest.approx(math.exp(-r.gamma1 / (2 * spec.reset.rate)), rel=1e-10)

    t_final = min(30.0 / r.gamma1, 4000.0)
    settings = RunSettings(
        times=time_grid(t_final, 301),
        seed=0,
        engine="exact" if kind == "random" else "sector",  # many clocks: the batched exact engine
        estimator="branch",
        inits=("qubit", "coherence"),
    )
    n_traj = {"dissipation": 1, "periodic": 4, "random": 64}[kind]
    if kind == "random":
        outs = batched(spec, settings, list(range(n_traj)), real)
    else:
        outs = [one(spec, settings, i, real) for i in range(n_traj)]
    pops = [out["qubit"].populations[:, 0, 1] for out in outs]
    cohs = [out["coherence"].coherence for out in outs]
    t = settings.times
    pops, cohs = np.array(pops), np.array(cohs)
    t_from = t_final / 3.0

    def slopes(sel):
        return (
            _late_slope(t, pops[sel].mean(axis=0), t_from),
            _late_slope(t, np.abs(cohs[sel].mean(axis=0)), t_from),
        )

    g1_fit, g2_fit = slopes(np.arange(n_traj))
    if n_traj > 1:
        jk = np.array([slopes(np.delete(np.arange(n_traj), j)) for j in range(n_traj)])
        err = np.sqrt((n_traj - 1) / n_traj * np.sum((jk - jk.mean(axis=0)) ** 2, axis=0))
    else:
        err = np.zeros(2)
    window = 2e-3  # residual interference wiggles of the finite fit window
    assert abs(g1_fit - r.gamma1) < 3 * err[0] + window * r.gamma1, (g1_fit, r.gamma1, err)
    assert abs(g2_fit - r.gamma2) < 3 * err[1] + window * r.gamma2, (g2_fit, r.gamma2, err)
    if kind == "random":
        # Gamma_2 = Gamma_1/2 only to leading order in |psi_L|^2 (two different eigenproblems; for
        # dissipation and periodic feedback the code sets Gamma_2 = Gamma_1/2, checked by g2_fit above)
        assert r.gamma2 == pytest.approx(r.gamma1 / 2, rel=2 * math.exp(r.log_edge_weight))
        assert r.gamma2 != pytest.approx(r.gamma1 / 2, rel=1e-6)


def test_periodic_rate_of_a_qubit_hybridized_with_the_reset_site_is_finite():
    """dw_1 ~ dw_L (W = 10 J, L = 4, from the study's stream): the zero eigenvalue of P0 U is never the qubit's.

    The qubit mode has 0.42 of its weight on site 1 and 0.49 on the reset
    site; the projected-out direction U^dag|L> overlaps it most, and picking
    it gave Gamma_1 = inf (ln T1 = -inf, silently dropped from T1_typical).
    The rate must be one of the L - 1 nonzero stroboscopic rates.
    """
    dw = np.array([0.15653641, -1.49809861, -1.66194857, 0.15655855])
    spec, real = make(dw, "periodic", 0.03, W=10.0)
    r = qubit_rates(spec, real)
    assert r.method == "exact" and math.isfinite(r.log_T1) and r.gamma1 > 0
    E, V = np.linalg.eigh(np.diag(dw) + np.diag(np.ones(3), 1) + np.diag(np.ones(3), -1))
    M = (V * np.exp(-1j * E / 0.03)) @ V.T
    M[-1] = 0.0
    mu = np.sort(np.abs(np.linalg.eigvals(M)))[1:]
    assert np.min(np.abs(-0.06 * np.log(mu) - r.gamma1)) < 1e-9 * r.gamma1


def test_random_feedback_sparse_liouvillian_equals_dense():
    rng = np.random.default_rng(4)
    for L in (8, 14):
        spec = ArraySpec(L=L, W=4.0, reset=Reset("random", 0.5))
        real = spec.draw_realization(rng)
        dense = exact_rates(spec, real, dense_liouvillian=True)
        sparse = exact_rates(spec, real, dense_liouvillian=False)
        assert sparse[0] == pytest.approx(dense[0], rel=1e-8)
        # Gamma_2 comes from H1 - i G Pi, not from the Liouvillian: it agrees with the sparse Gamma_1/2
        # only to leading order in the qubit's weight on the reset site
        edge = math.exp(qubit_rates(spec, real).log_edge_weight)
        assert sparse[1] == pytest.approx(sparse[0] / 2, rel=2 * edge)


# ------------------------------------------------------- log-space vs exact, the floor
@pytest.mark.parametrize("kind", KINDS)
def test_log_space_agrees_with_exact_where_both_are_valid(kind):
    """W = 20 J, L = 6-8: |log-space/exact - 1| within 3 (perturbative + round-off) estimates."""
    rng = np.random.default_rng(5)
    checked = 0
    for G in (0.03, 0.3, 3.0):
        for L in (6, 7, 8):
            spec = ArraySpec(L=L, W=20.0, reset=Reset(kind, G))
            for _ in range(4):
                real = spec.draw_realization(rng)
                ls = qubit_rates(spec, real, "log-space")
                assert ls.method == "log-space"
                if not ls.resolvable:
                    continue
                ex = qubit_rates(spec, real, "exact")
                tol = 3.0 * (ls.perturbative_error + ex.roundoff_error)
                assert ls.gamma1 / ex.gamma1 - 1.0 == pytest.approx(0.0, abs=tol)
                assert ls.log_gamma1 == pytest.approx(ex.log_gamma1, abs=tol)
                assert ex.roundoff_error < 1.0 / RESOLVE_FACTOR * 1.0001
                checked += 1
    assert checked >= 10


def test_auto_switches_to_log_space_past_the_floor():
    rng = np.random.default_rng(6)
    spec = ArraySpec(L=5, W=20.0, reset=Reset("dissipation", 0.3))
    r = qubit_rates(spec, spec.draw_realization(rng))
    assert r.method == "exact" and r.resolvable
    assert r.T1 == pytest.approx(1.0 / r.gamma1) and r.T2 == pytest.approx(2.0 * r.T1)

    for kind in KINDS:
        spec = ArraySpec(L=40, W=20.0, reset=Reset(kind, 0.3))
        real = spec.draw_realization(rng)
        r = qubit_rates(spec, real)  # auto
        assert r.method == "log-space" and not r.resolvable
        assert "past the floating-point floor" in r.message
        assert "log-space continuation" in r.message
        assert math.isfinite(r.log_gamma1) and r.log_gamma1 < -60.0  # ~ -3 per site
        assert r.gamma1 < r.floor
        assert r.log_T1 == -r.log_gamma1 and r.log_T2 == pytest.approx(r.log_T1 + math.log(2.0))
        # asking for the exact eigenvalue there is refused: it is round-off noise
        with pytest.raises(ParameterError) as err:
            qubit_rates(spec, real, "exact")
        assert err.value.name == "method" and "floor" in str(err.value)
        raw, _ = exact_rates(spec, real)
        assert not (abs(raw / r.gamma1 - 1.0) < 0.5)  # the raw number is noise, not the rate

    # far past double precision: Gamma_1 underflows, its log does not
    spec = ArraySpec(L=400, W=20.0, reset=Reset("periodic", 0.03))
    r = qubit_rates(spec, spec.draw_realization(rng))
    assert r.gamma1 == 0.0 and r.T1 == math.inf
    assert math.isfinite(r.log_gamma1) and r.log10_T1 > 308
    assert r.as_dict()["T1"] is None


# ---------------------------------------------------------- typical and the xi fits
# xi against its references (transfer matrix, strong disorder): tests/test_localization_length.py


def test_fit_localization_length_and_typical_on_synthetic_data():
    L = np.arange(5, 31, 5)
    y = 2.0 + L / 0.7
    fit = fit_localization_length(L, y, np.full(L.size, 0.1))
    assert fit["value"] == pytest.approx(0.7, rel=1e-12)
    assert fit["intercept"] == pytest.approx(2.0, rel=1e-12)
    # slope error with unit-free errors 0.1: sqrt(1/sum (L - <L>)^2) * 0.1
    assert fit["slope_error"] == pytest.approx(0.1 / math.sqrt(np.sum((L - L.mean()) ** 2)), rel=1e-10)
    assert fit["error"] == pytest.approx(fit["slope_error"] * 0.7**2, rel=1e-10)
    rng = np.random.default_rng(9)
    noisy = y + rng.normal(0.0, 0.5, L.size)
    fit = fit_localization_length(L, noisy)
    assert not fit["weighted"] and abs(fit["value"] - 0.7) < 4 * fit["error"]
    flat = fit_localization_length(L, np.ones(L.size) + 1e-3 * rng.normal(size=L.size) - 1e-2 * L)
    assert not flat["ok"] and flat["value"] == math.inf

    t = typical([1.0, 100.0])
    assert t["value"] == pytest.approx(10.0) and t["log_mean"] == pytest.approx(math.log(10.0))
    assert t["log_error"] == pytest.approx(math.log(100.0) / math.sqrt(2) / math.sqrt(2))
    big = typical(logs=[1000.0, 1002.0])
    assert big["value"] == math.inf and big["log_mean"] == pytest.approx(1001.0)


# --------------------------------------------------------------------- bad input
def test_bad_input_names_the_parameter():
    dw = [1.0, -2.0, 0.5]

    def name_of(fn, *args, **kw):
        with pytest.raises(ParameterError) as err:
            fn(*args, **kw)
        return err.value.name

    spec, real = make(dw, "none", 0.0)
    assert name_of(qubit_rates, spec, real) == "reset"
    spec, real = make(dw, "dissipation", 0.3, conditions=Conditions(T1q=1e4))
    assert name_of(qubit_rates, spec, real) == "conditions"
    spec, real = make(dw, "dissipation", 0.3, conditions=Conditions(temperature_K=0.05))
    assert name_of(qubit_rates, spec, real) == "conditions"
    spec, real = make(dw, "dissipation", 0.3)
    assert name_of(qubit_rates, spec, real, method="fast") == "method"
    assert name_of(qubit_rates, spec, Realization(np.zeros(4), np.full(4, 50.0))) == "realization"
    assert name_of(qubit_rates, spec, Realization(np.array([0.0, np.nan, 1.0]), np.full(3, 50.0))) == "realization"
    assert name_of(qubit_mode, [1.0]) == "dw"
    assert name_of(qubit_mode, dw, J=0.0) == "J"
    assert name_of(log_edge_weight, [[1.0, 2.0]], 0.0) == "dw"
    assert name_of(log_edge_weight, [1.0, np.inf], 0.0) == "dw"
    assert name_of(log_edge_weight, dw, math.nan) == "energy"
    assert name_of(reset_factor, dw, "none", 0.3) == "reset"
    assert name_of(reset_factor, dw, "random", -1.0) == "rate"
    assert name_of(fit_localization_length, [5], [1.0]) == "lengths"
    assert name_of(fit_localization_length, [5, 5, 5], [1.0, 2.0, 3.0]) == "lengths"
    assert name_of(fit_localization_length, [5, 10], [1.0]) == "log_T1_typical"
    assert name_of(fit_localization_length, [5, 10], [1.0, 2.0], [0.1, -1.0]) == "errors"
    assert name_of(fit_localization_length, [5, 10], [1.0, 2.0]) == "lengths"  # unweighted needs 3
    assert name_of(typical, []) == "values"
    assert name_of(typical, [1.0, -2.0]) == "values"
    assert name_of(typical, logs=[1.0, math.inf]) == "logs"


def test_auto_falls_back_when_the_exact_value_lands_under_the_floor(monkeypatch):
    """The log-space estimate decides whether to try the exact eigenvalue; the exact value has the last word."""
    import lru_mps.analysis.rates as loc

    spec, real = make([2.2, -1.2, 0.4, -2.6, 1.1], "dissipation", 1.0)
    good = qubit_rates(spec, real)
    assert good.method == "exact" and "exact N = 1" in good.message
    monkeypatch.setattr(loc, "eigen_rates", lambda *a, **k: (0.5 * good.floor, 0.25 * good.floor))
    r = qubit_rates(spec, real)
    assert r.method == "log-space" and not r.resolvable and "past the floating-point floor" in r.message
    assert r.gamma1 == pytest.approx(qubit_rates(spec, real, "log-space").gamma1)
    with pytest.raises(ParameterError, match="floor"):
        qubit_rates(spec, real, "exact")
