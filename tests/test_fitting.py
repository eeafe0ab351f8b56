"""Exponential decay fits (lru_mps.analysis.fitting): honest errors, free amplitude, slow decays, bad input."""

import math

import numpy as np
import pytest

from lru_mps.analysis.fitting import FitResult, fit_exponential
from lru_mps.physics.analytic import T_prop

N_REPLICAS = 100


def _replicas(tau, amp, sigma, t, weighted, seed):
    """Fit N_REPLICAS noisy copies of amp*exp(-t/tau); return arrays of tau, tau_err, A, A_err."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(N_REPLICAS):
        y = amp * np.exp(-t / tau) + rng.normal(0.0, sigma, t.size)
        fit = fit_exponential(t, y, sigma if weighted else None)
        assert fit.ok, fit.message
        out.append((fit.tau, fit.tau_err, fit.amplitude, fit.amplitude_err))
    return np.array(out).T


def _check_pulls(pull):
    """Pulls (estimate - truth)/reported error must look like a unit Gaussian.

    For N(0, 1) and 100 replicas: E|pull| = sqrt(2/pi) = 0.798 (std of the
    mean 0.060, window +-3 std) and P(|pull| < 2) = 0.954 (binomial std 0.021,
    floor 3 std below); 0.27 of 100 expected beyond 3 sigma.  Errors off by a
    factor 1.3 or more either way fail the mean |pull| window.
    """
    pull = np.asarray(pull)
    assert np.sum(np.abs(pull) > 3.0) <= 2, pull
    assert np.all(np.abs(pull) < 4.5), pull
    assert 0.62 < np.mean(np.abs(pull)) < 0.98, np.mean(np.abs(pull))
    assert np.mean(np.abs(pull) < 2.0) >= 0.89, np.mean(np.abs(pull) < 2.0)
    assert abs(np.mean(pull)) < 0.3, np.mean(pull)  # no bias beyond 3 std of the mean


@pytest.mark.parametrize("weighted", [True, False], ids=["weighted", "unweighted"])
def test_pull_distribution_is_gaussian(weighted):
    """Recovered tau and A scatter around the truth as their reported errors say.

    weighted: sem = sigma given, absolute_sigma; unweighted: error from the
    residual scatter.  Both must give honest errors.
    """
    tau, amp, sigma = 50.0, 1.0, 0.01
    t = np.linspace(0.0, 150.0, 100)
    taus, tau_errs, amps, amp_errs = _replicas(tau, amp, sigma, t, weighted, seed=20240 + weighted)
    _check_pulls((taus - tau) / tau_errs)
    _check_pulls((amps - amp) / amp_errs)
    # the reported error is also the right size: close to the replica scatter
    assert 0.8 < np.std(taus) / np.median(tau_errs) < 1.25


def test_weighted_errors_follow_sem_not_scatter():
    """With sem given (absolute_sigma) the error scales with the sem, not with chi^2."""
    t = np.linspace(0.0, 100.0, 60)
    y = 0.8 * np.exp(-t / 40.0)  # noiseless: residual scatter is zero
    f1 = fit_exponential(t, y, 0.01)
    f2 = fit_exponential(t, y, 0.02)
    assert f1.ok and f2.ok and f1.weighted
    assert f1.tau == pytest.approx(40.0, rel=1e-8)
    assert f2.tau_err == pytest.approx(2.0 * f1.tau_err, rel=1e-6)
    assert f1.tau_err > 0.1  # not the (zero) residual scatter
    # zero sem on some points: replaced by the smallest positive sem in the window
    sem = np.full(t.size, 0.01)
    sem[::3] = 0.0
    f3 = fit_exponential(t, y, sem)
    assert f3.weighted and f3.tau_err == pytest.approx(f1.tau_err, rel=1e-6)
    # all sem zero: unweighted fit, errors from the residual scatter (zero here)
    f4 = fit_exponential(t, y, np.zeros(t.size))
    assert f4.ok and not f4.weighted and f4.tau_err < 1e-8


def test_free_amplitude_with_early_drop_excluded():
    """Late-time window with A free recovers the slow tail under a fast early drop."""
    rng = np.random.default_rng(7)
    t = np.linspace(0.0, 300.0, 301)
    sigma = 2e-3
    truth_tau, truth_A = 100.0, 0.4
    y = truth_A * np.exp(-t / truth_tau) + 0.6 * np.exp(-t / 2.0) + rng.normal(0, sigma, t.size)
    fit = fit_exponential(t, y, sigma, t_start=20.0)
    assert fit.ok
    assert abs(fit.tau - truth_tau) < 3 * fit.tau_err
    assert abs(fit.amplitude - truth_A) < 3 * fit.amplitude_err
    # the window reported is the one used
    assert fit.t_start == 20.0 and fit.t_end == 300.0 and fit.n_points == 281
    # the same data fitted from t = 0 is badly biased (the drop is not exponential in tau)
    biased = fit_exponential(t, y, sigma, t_start=0.0)
    assert abs(biased.tau - truth_tau) > 10 * biased.tau_err
    # t_end restricts the window too
    part = fit_exponential(t, y, sigma, t_start=20.0, t_end=200.0)
    assert part.t_end == 200.0 and part.n_points == 181
    assert abs(part.tau - truth_tau) < 3 * part.tau_err


def test_slow_decay_gives_large_tau_with_sensible_error():
    """tau = 100x the window: fitted through the rate, the error is honest (pulls over replicas)."""
    t = np.linspace(0.0, 100.0, 101)
    tau, sigma = 1.0e4, 1e-3
    taus, errs, _, _ = _replicas(tau, 1.0, sigma, t, True, seed=99)
    pull = (taus - tau) / errs
    _check_pulls(pull)
    # the relative error is what linear error propagation predicts for the slope
    expected_rate_err = sigma / (np.std(t) * math.sqrt(t.size))
    assert np.median(errs) / tau**2 == pytest.approx(expected_rate_err, rel=0.1)


@pytest.mark.parametrize("tau", [math.inf, 1e8])
def test_rate_consistent_with_zero_is_not_resolved(tau):
    """A flat curve (or tau far beyond the noise) gives ok=False, 'no decay resolved', a lower bound."""
    rng = np.random.default_rng(3)
    t = np.linspace(0.0, 100.0, 101)
    y = np.exp(-t / tau) + rng.normal(0, 1e-3, t.size)
    fit = fit_exponential(t, y, 1e-3)
    assert not fit.ok
    assert "no decay resolved" in fit.message
    assert math.isnan(fit.tau)
    assert abs(fit.rate) <= 2.0 * fit.rate_err
    assert fit.tau_lower > 1e4  # what the data do say: tau is long
    assert fit.amplitude == pytest.approx(1.0, abs=1e-3)
    # exactly flat, noiseless: still not a decay (and no division by zero)
    flat = fit_exponential(t, np.full(t.size, 0.5))
    assert not flat.ok and "no decay resolved" in flat.message


def test_growing_curve_is_not_a_decay():
    t = np.linspace(0.0, 10.0, 20)
    fit = fit_exponential(t, np.exp(t / 5.0), 0.01)
    assert not fit.ok and fit.rate < 0


def test_large_time_offset_and_small_values():
    """Times ~1e4/J and values ~1e-9 do not upset the fit (internal rescaling)."""
    t = np.linspace(1.0e4, 1.2e4, 50)
    y = 3e-9 * np.exp(-(t - 1.0e4) / 500.0)
    fit = fit_exponential(t, y, t_start=0.0)
    assert fit.ok
    assert fit.tau == pytest.approx(500.0, rel=1e-8)
    assert fit.amplitude == pytest.approx(3e-9 * math.exp(1.0e4 / 500.0), rel=1e-6)


def test_negative_noisy_tail_points_are_used():
    """Noisy points that scatter below zero stay in the fit (only the start values skip them)."""
    rng = np.random.default_rng(11)
    t = np.linspace(0, 200, 201)
    y = np.exp(-t / 20.0) + rng.normal(0, 0.01, t.size)
    assert np.sum(y < 0) > 20
    fit = fit_exponential(t, y, 0.01)
    assert fit.ok and fit.n_points == 201
    assert abs(fit.tau - 20.0) < 3 * fit.tau_err


@pytest.mark.parametrize(
    "t, y, sem, kwargs, text",
    [
        ([], [], None, {}, "no finite points"),
        ([0.0, 1.0], [1.0, 0.5], None, {}, "fewer than 3"),
        ([0, 1, 2, 3], [1, 0.5, 0.25, 0.1], None, {"t_start": 2.5}, "fewer than 3"),
        ([0, 1, 2, 3], [0.0, 0.0, 0.0, 0.0], None, {}, "no positive"),
        ([0, 1, 2, 3], [-1.0, -0.5, -0.2, -0.1], None, {}, "no positive"),
        ([0, 1, 2], [1.0, 0.5], None, {}, "different lengths"),
        ([0, 1, 2, 3], [1, 0.5, 0.25, 0.1], [0.1, 0.1], {}, "sem"),
        ([0, 1, 2, 3], [1, 0.5, 0.25, 0.1], [0.1, -0.1, 0.1, 0.1], {}, "negative"),
        ([0, 1, 2, 3], [1, 0.5, 0.25, 0.1], None, {"t_start": 5.0, "t_end": 1.0}, "no finite points"),
        ([1, 1, 1, 1], [1, 0.5, 0.25, 0.1], None, {}, "same time"),
        (["a", "b", "c"], [1, 2, 3], None, {}, "numeric"),
        ([0, 1, 2, 3], [1, 0.5, 0.25, 0.1], None, {"t_start": float("nan")}, "window"),
    ],
)
def test_degenerate_inputs_never_raise(t, y, sem, kwargs, text):
    fit = fit_exponential(t, y, sem, **kwargs)
    assert isinstance(fit, FitResult)
    assert not fit.ok
    assert math.isnan(fit.tau)
    assert text in fit.message


def test_non_finite_points_are_dropped():
    t = np.linspace(0, 50, 51)
    y = np.exp(-t / 10.0)
    y[5] = np.nan
    y[7] = np.inf
    fit = fit_exponential(t, y)
    assert fit.ok and fit.n_points == 49
    assert fit.tau == pytest.approx(10.0, rel=1e-9)


def test_T_prop():
    """T_prop = pi/(2 J_prop), J_prop = 2 J^2/Ubar: 25 pi / 2 at Ubar = 50 J."""
    assert T_prop(50.0) == pytest.approx(25.0 * math.pi / 2.0, rel=1e-14)
    assert T_prop(50.0, J=2.0) == pytest.approx(T_prop(50.0) / 4.0, rel=1e-14)
    # the paper's T_prop = 1.25 us at Ubar/2pi = 250 MHz, J/2pi = 5 MHz
    assert T_prop(50.0) / (2 * math.pi * 5e6) * 1e6 == pytest.approx(1.25, rel=1e-12)
