"""Disorder patterns and fabrication/tuning spreads (issue 22 items 2 and 5; docs/physics.md §3.1).

* Off (box pattern, no spreads) a realization is bit for bit the paper's
  recipe as drawn before the options existed (dw_l ~ U[-W/2, W/2],
  U_l = Ubar + 2 dw_l, the same L uniforms and nothing else from the stream),
  and ``as_dict`` (JSON parameters, cache keys of stored runs) is unchanged.
* Statistics of each option over many realizations (means and standard
  deviations within 5 standard errors; with a fixed seed the numbers are
  deterministic, the bands are what a correct implementation meets with
  probability > 1 - 1e-6 per check): the e2 spread moves E2_l = 2 dw_l - U_l
  by N(0, S) and leaves dw_l; the frequency noise moves dw_l by N(0, S) and
  E2_l by twice that, and leaves U_l; the Gaussian pattern has the box's
  standard deviation W/sqrt(12) and a Gaussian (not the box's) kurtosis; the
  quasiperiodic one lies on (W/2) cos(2 pi beta l + phi) with a uniform phi;
  the alternating one alternates +-W/2 with a fair sign of site 1.
* The detuned two-site stack against its closed form (below).
* The command line and study TOML tables take the options, record them, and
  refuse bad values with one line naming the option.

The detuned two-site stack.  L = 2, ideal conditions, no reset, site 1 in
|2>, one fixed realization whose |2> energies differ by Delta.  N = 2 holds
|2,0>, |1,1>, |0,2> with <1,1|H|2,0> = <1,1|H|0,2> = sqrt(2) J; |1,1> lies
U_1 (resp. U_2) above |2,0> (|0,2>).  Second-order perturbation theory in J
(Schrieffer-Wolff onto {|2,0>, |0,2>}) gives a two-level system with coupling
J_eff = J^2 (1/U_1 + 1/U_2) = J_prop (1 + O(Delta/Ubar)), J_prop = 2 J^2/Ubar,
and detuning Delta_eff = Delta + 2 J^2 (1/U_1 - 1/U_2) = Delta (1 + O(J^2/Ubar^2))
(the level shifts -2 J^2/U_l differ when U_1 != U_2).  Rabi's formula then
gives the maximal transfer probability to site 2,

    P_max = 4 J_prop^2 / (4 J_prop^2 + Delta^2) = 1 / (1 + (Delta / (2 J_prop))^2),

reached at t = pi / sqrt(4 J_prop^2 + Delta^2).  Corrections, all
O((J/Ubar)^2) for Delta <= 5 J_prop = 10 J^2/Ubar (J = 1 below): the coupling
asymmetry Delta/(2 Ubar) <= 5/Ubar^2 moves P_max by at most
2 P (1 - P) 5/Ubar^2 <= 2.5/Ubar^2; the shift difference by at most
2 P (1 - P) 2/Ubar^2 <= 1/Ubar^2; the bare |0,2> population differs from the
dressed one by the |1,1> admixture (weight 2/Ubar^2 per state, plus its fast
oscillation at ~Ubar), at most ~2.5/Ubar^2.  Tolerance: 6 (J/Ubar)^2, i.e.
2.4e-3 at the paper's Ubar = 50 J and 9.6e-3 at Ubar = 25 J; a factor 2
wrong in the closed form (Delta/J_prop) would be off by >= 0.14 at
Delta >= J_prop/2.  Measured (exact engine, 2001 time points over
1.3 pi/Omega): worst |P_max - closed form| = 1.63/Ubar^2 (6.5e-4 at
Ubar = 50, 2.6e-3 at 25, both at Delta = 5 J_prop with the detuning made by
the e2 offset; 0.45/Ubar^2 made by a frequency offset); it scales as
1/Ubar^2, as it should.
"""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from lru_mps import simulate
from lru_mps.errors import ParameterError
from lru_mps.physics import disorder
from lru_mps.physics.conditions import Conditions, Reset
from lru_mps.physics.model import ArraySpec, Realization
from lru_mps.run.seeding import disorder_rng
from lru_mps_cli.main import main

NSE = 5.0  # standard errors allowed for a mean or a standard deviation
OLD_KEYS = ["L", "J_over_2pi_Hz", "Ubar_J", "wbar_J", "W_J", "reset", "rate_J", "T1q_J", "Tphi_J", "temperature_K"]


def _old_recipe(spec, rng):
    """The paper's recipe exactly as ArraySpec.draw_realization drew it before the spreads existed."""
    dw = rng.uniform(-spec.W / 2.0, spec.W / 2.0, size=spec.L)
    return dw, spec.Ubar + 2.0 * dw


def _draws(spec, n, seed=1):
    """n realizations of spec as arrays (n, L): dw, U, and the box/pattern part dw0 from an identical stream."""
    rng = np.random.default_rng(seed)
    dw, U = np.empty((n, spec.L)), np.empty((n, spec.L))
    for i in range(n):
        r = spec.draw_realization(rng)
        dw[i], U[i] = r.dw, r.U
    return dw, U


def _mean_ok(x, expected, sigma):
    se = sigma / np.sqrt(x.size)
    assert abs(np.mean(x) - expected) <= NSE * se, (np.mean(x), expected, se)


def _std_ok(x, sigma):
    se = sigma / np.sqrt(2.0 * (x.size - 1))  # Gaussian samples
    assert abs(np.std(x, ddof=1) - sigma) <= NSE * se, (np.std(x, ddof=1), sigma, se)


# ---------------------------------------------------------------------------------------------- off = today
@pytest.mark.parametrize("L, W, Ubar", [(2, 0.0, 50.0), (3, 20.0, 50.0), (7, 4.0, 25.0), (12, 20.0, 50.0)])
def test_off_draws_the_old_realization_bit_for_bit(L, W, Ubar):
    spec = ArraySpec(L=L, W=W, Ubar=Ubar)
    for seed in (0, 7):
        for i in range(20):
            rng, old = disorder_rng(seed, i), disorder_rng(seed, i)
            real = spec.draw_realization(rng)
            dw, U = _old_recipe(spec, old)
            np.testing.assert_array_equal(real.dw, dw)
            np.testing.assert_array_equal(real.U, U)
            assert rng.bit_generator.state == old.bit_generator.state  # nothing else drawn


def test_off_from_user_and_as_dict_are_unchanged():
    spec = ArraySpec.from_user()
    assert list(spec.as_dict()) == OLD_KEYS
    explicit = ArraySpec.from_user(e2_spread="0MHz", frequency_noise=0, disorder_pattern="box")
    assert explicit == spec and explicit.as_dict() == spec.as_dict()
    assert (spec.e2_spread, spec.frequency_noise, spec.disorder_pattern) == (0.0, 0.0, "box")
    # the time-step check's fastest scale is the old one (Ubar + W, W/2 + 2, the rates)
    assert ArraySpec(L=3, W=20.0, Ubar=50.0).fastest_scale() == 70.0
    # on, the keys come after the old ones, and replace keeps the options
    on = spec.replace(e2_spread=0.1, frequency_noise=0.2, disorder_pattern="gaussian")
    assert list(on.as_dict()) == OLD_KEYS + ["disorder_pattern", "e2_spread_J", "frequency_noise_J"]
    assert on.replace(L=5).as_dict() == {**on.as_dict(), "L": 5}


def test_spreads_draw_after_the_pattern():
    """With a spread on, dw (e2 spread) or U (frequency noise) is the old recipe's: the extra numbers come after."""
    for kw, same in (({"e2_spread": 0.3}, "dw"), ({"frequency_noise": 0.3}, "U")):
        spec = ArraySpec(L=4, W=20.0, **kw)
        rng, old = disorder_rng(3, 5), disorder_rng(3, 5)
        real = spec.draw_realization(rng)
        dw, U = _old_recipe(spec, old)
        np.testing.assert_array_equal(getattr(real, same), dw if same == "dw" else U)
        assert not np.array_equal(real.dw, dw) or not np.array_equal(real.U, U)


# ---------------------------------------------------------------------------------------------- statistics
def test_e2_spread_statistics():
    """E2_l = 2 dw_l - U_l = -Ubar + delta_l, delta_l ~ N(0, S) independent per site; dw_l the box's."""
    S, W, Ubar = 0.37, 20.0, 50.0
    spec = ArraySpec(L=6, W=W, Ubar=Ubar, e2_spread=S)
    dw, U = _draws(spec, 4000)
    box_dw, _ = _draws(ArraySpec(L=6, W=W, Ubar=Ubar), 4000)
    assert not np.array_equal(dw, box_dw)  # the stream moves on: realization i+1 starts after i's deltas
    delta = (2 * dw - U) + Ubar
    _mean_ok(delta, 0.0, S)
    _std_ok(delta, S)
    # independence: neighbouring sites uncorrelated (|r| within 5/sqrt(n))
    r = np.corrcoef(delta[:, :-1].ravel(), delta[:, 1:].ravel())[0, 1]
    assert abs(r) <= NSE / np.sqrt(delta[:, 1:].size)
    # dw keeps the box distribution: mean 0, std W/sqrt(12), bounded by W/2
    _mean_ok(dw, 0.0, W / np.sqrt(12))
    assert np.all(np.abs(dw) <= W / 2)
    # box: var(s^2) = (mu4 - s^4)/n = 0.8 s^4/n, so SE(s) = s sqrt(0.8/(4n))
    assert abs(np.std(dw) - W / np.sqrt(12)) <= NSE * W / np.sqrt(12) * np.sqrt(0.8 / dw.size / 4)


def test_frequency_noise_statistics():
    """dw_l = dw0_l + s_l, s_l ~ N(0, S); U_l unchanged (= Ubar + 2 dw0_l), so E2_l moves by 2 s_l (std 2 S)."""
    S, W, Ubar = 0.25, 0.0, 50.0
    spec = ArraySpec(L=5, W=W, Ubar=Ubar, frequency_noise=S)
    dw, U = _draws(spec, 4000)
    np.testing.assert_array_equal(U, Ubar)  # W = 0: dw0 = 0, U untouched
    _mean_ok(dw, 0.0, S)
    _std_ok(dw, S)
    e2 = 2 * dw - U + Ubar
    np.testing.assert_allclose(e2, 2 * dw, atol=1e-12)  # E1 and E2/2 move together
    _std_ok(e2, 2 * S)
    r = np.corrcoef(dw[:, :-1].ravel(), dw[:, 1:].ravel())[0, 1]
    assert abs(r) <= NSE / np.sqrt(dw[:, 1:].size)


def test_both_spreads_on_a_box_are_independent():
    """Both on: delta = Ubar + 2 dw0 - U and s = dw - dw0 (dw0 the box draws, the first L numbers) are independent."""
    Se, Sf, W, Ubar, L, n = 0.3, 0.2, 20.0, 50.0, 4, 3000
    spec = ArraySpec(L=L, W=W, Ubar=Ubar, e2_spread=Se, frequency_noise=Sf)
    rng, old = np.random.default_rng(9), np.random.default_rng(9)
    delta, s = np.empty((n, L)), np.empty((n, L))
    for i in range(n):
        real = spec.draw_realization(rng)
        dw0 = old.uniform(-W / 2, W / 2, size=L)  # the same stream, step by step: L uniforms, L normals, L normals
        old.normal(size=2 * L)
        delta[i], s[i] = Ubar + 2 * dw0 - real.U, real.dw - dw0
    assert rng.bit_generator.state == old.bit_generator.state
    _std_ok(delta, Se)
    _std_ok(s, Sf)
    _mean_ok(delta, 0.0, Se)
    _mean_ok(s, 0.0, Sf)
    assert abs(np.corrcoef(delta.ravel(), s.ravel())[0, 1]) <= NSE / np.sqrt(delta.size)


def test_gaussian_pattern():
    """dw_l ~ N(0, W/sqrt(12)) (the box's std) with Gaussian kurtosis (box: excess -1.2); U_l = Ubar + 2 dw_l."""
    W, Ubar = 20.0, 50.0
    spec = ArraySpec(L=8, W=W, Ubar=Ubar, disorder_pattern="gaussian")
    dw, U = _draws(spec, 3000)
    sigma = W / np.sqrt(12)
    _mean_ok(dw, 0.0, sigma)
    _std_ok(dw, sigma)
    kurt = stats.kurtosis(dw.ravel())  # excess, 0 for a Gaussian, SE sqrt(24/n)
    assert abs(kurt) <= NSE * np.sqrt(24 / dw.size), kurt
    assert np.max(np.abs(dw)) > W / 2  # unbounded, unlike the box (P(|z| > sqrt3) = 8% per site)
    np.testing.assert_allclose(2 * dw - U, -Ubar, atol=1e-12)  # resonant E2


def test_quasiperiodic_pattern():
    """dw_l = (W/2) cos(2 pi beta l + phi), l = 1..L, beta golden, phi uniform in [0, 2 pi) per realization."""
    W, Ubar, L, n = 20.0, 50.0, 6, 4000
    spec = ArraySpec(L=L, W=W, Ubar=Ubar, disorder_pattern="quasiperiodic")
    dw, U = _draws(spec, n)
    np.testing.assert_allclose(2 * dw - U, -Ubar, atol=1e-12)
    theta = 2 * np.pi * disorder.GOLDEN * np.arange(1, L + 1)
    # dw_l = A cos(phi) cos(theta_l) - A sin(phi) sin(theta_l): linear in (A cos phi, A sin phi)
    basis = np.stack([np.cos(theta), -np.sin(theta)], axis=1)
    coef, *_ = np.linalg.lstsq(basis, dw.T, rcond=None)
    np.testing.assert_allclose(basis @ coef, dw.T, atol=1e-10)  # on the cosine
    np.testing.assert_allclose(np.hypot(*coef), W / 2, rtol=1e-10)  # of amplitude W/2
    phi = np.mod(np.arctan2(coef[1], coef[0]), 2 * np.pi)
    assert stats.kstest(phi / (2 * np.pi), "uniform").pvalue > 1e-6
    assert len(np.unique(np.round(phi, 9))) == n  # a new phase every realization
    # the wave number is golden: dw_{l+1} + dw_{l-1} = 2 cos(2 pi beta) dw_l
    np.testing.assert_allclose(dw[:, 2:] + dw[:, :-2], 2 * np.cos(2 * np.pi * disorder.GOLDEN) * dw[:, 1:-1],
                               atol=1e-10)


def test_alternating_pattern():
    """dw_l = s (-1)^(l-1) W/2, s = +-1 with probability 1/2 per realization; U_l = Ubar +- W."""
    W, Ubar, L, n = 20.0, 50.0, 5, 4000
    spec = ArraySpec(L=L, W=W, Ubar=Ubar, disorder_pattern="alternating")
    dw, U = _draws(spec, n)
    np.testing.assert_array_equal(np.abs(dw), W / 2)
    np.testing.assert_array_equal(dw[:, 1:], -dw[:, :-1])
    np.testing.assert_array_equal(U, Ubar + 2 * dw)
    up = np.mean(dw[:, 0] > 0)
    assert abs(up - 0.5) <= NSE * 0.5 / np.sqrt(n)


def test_frequency_noise_is_not_calibrated_away():
    """The coherence frame is the qubit frequency without the quasi-static noise, so the noise dephases the ensemble.

    L = 2, alternating pattern (|dw_1 - dw_2| = W = 20 J, the qubit localized up to J^2/W^2 = 0.25 %), ideal,
    no reset: each trajectory's qubit precesses at its offset s_1 (times 1 - O(J^2/W^2)) in the calibrated
    frame, so 2 C(t) = |<exp(i s_1 t)>| = exp(-(S t)^2/2) (a Ramsey T2*), within 5 standard errors plus
    0.01 (the J^2/W^2 hybridization and the bias of a modulus); without the noise 2 C = 1 within 0.01.
    Measured (400 trajectories, seed 4): within 1.5 standard errors.
    """
    S, W = 0.05, 20.0
    spec = ArraySpec(L=2, W=W, Ubar=50.0, reset=Reset("none", 0.0), conditions=Conditions(),
                     disorder_pattern="alternating", frequency_noise=S)
    real = spec.draw_realization(disorder_rng(4, 0))
    assert spec.qubit_frequency(real) == ArraySpec(L=2, W=W).qubit_frequency(Realization(real.dw - real.frequency_offset, real.U))
    assert spec.qubit_frequency(real, "bare") == pytest.approx(real.dw[0] - real.frequency_offset[0], abs=1e-12)
    for noise in (S, 0.0):
        res = simulate(spec.replace(frequency_noise=noise), init="coherence", t_final=2 / S, time_points=9,
                       trajectories=400, engine="exact", estimator="sampled", seed=4)
        c = res.observable("qubit_coherence")
        expected = np.exp(-((noise * res.times) ** 2) / 2)
        assert np.all(np.abs(2 * c.mean - expected) <= NSE * 2 * c.sem + 0.01), (noise, 2 * c.mean, expected)
    assert 2 * c.mean[-1] > 0.99 and expected[-1] == 1.0


# ---------------------------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"disorder_pattern": "gaussian", "disorder": "110MHz"}, "disorder"),  # 22 J > 50 sqrt12/8 = 21.65 J
        ({"disorder_pattern": "box", "disorder": "250MHz"}, "disorder"),
        ({"disorder_pattern": "triangular"}, "disorder_pattern"),
        ({"e2_spread": "-1MHz"}, "e2_spread"),
        ({"e2_spread": "8J"}, "e2_spread"),  # box: (Ubar - W)/4 = 7.5 J
        ({"e2_spread": "2 parsec"}, "e2_spread"),
        ({"e2_spread": "nan"}, "e2_spread"),
        ({"frequency_noise": "-1kHz"}, "frequency_noise"),
        ({"frequency_noise": "inf"}, "frequency_noise"),
        ({"frequency_noise": "10GHz"}, "frequency_noise"),  # w_l <= 0 within 4 std
        ({"anharmonicity": "0MHz", "e2_spread": "1Jprop"}, "anharmonicity"),
    ],
)
def test_bad_values_name_the_parameter(kwargs, name):
    with pytest.raises(ParameterError) as info:
        ArraySpec.from_user(**kwargs)
    assert info.value.name == name


def test_limits_keep_the_anharmonicities_positive():
    """At the accepted limits U_l <= 0 lies beyond 4 standard deviations; just inside them the spec is accepted."""
    ok = ArraySpec.from_user(disorder_pattern="gaussian")  # the paper's W = 20 J: 4.33 sigma
    assert (ok.Ubar - 2 * disorder.NEGLIGIBLE_SIGMAS * ok.W / np.sqrt(12)) > 0
    ArraySpec.from_user(e2_spread="7.49J")  # box: (Ubar - W)/4 = 7.5 J
    limit = np.sqrt((50 / 4) ** 2 - (2 * 20 / np.sqrt(12)) ** 2)  # gaussian: 4 sqrt(4 sigma_g^2 + S^2) < Ubar
    ArraySpec(L=3, W=20.0, Ubar=50.0, disorder_pattern="gaussian", e2_spread=limit - 1e-9)
    with pytest.raises(ParameterError):
        ArraySpec(L=3, W=20.0, Ubar=50.0, disorder_pattern="gaussian", e2_spread=limit + 1e-9)
    spec = ArraySpec.from_user(e2_spread="2Jprop", frequency_noise="100kHz")
    assert spec.e2_spread == pytest.approx(2 * spec.J_prop, rel=1e-12) and spec.frequency_noise == pytest.approx(0.02)


# ---------------------------------------------------------------------------------------------- two-site stack
UBARS = (50.0, 25.0)
DETUNINGS = (0.0, 0.5, 1.0, 2.0, 3.0, 5.0)  # Delta / J_prop


def _max_transfer(Ubar, real):
    spec = ArraySpec(L=2, W=0.0, Ubar=Ubar, reset=Reset("none", 0.0), conditions=Conditions())
    e2 = 2 * real.dw - real.U
    delta = e2[1] - e2[0]
    omega = np.sqrt(4 * spec.J_prop**2 + delta**2)
    res = simulate(spec, realization=real, init="leakage", t_final=1.3 * np.pi / omega, time_points=2001,
                   trajectories=1, engine="exact", estimator="sampled", seed=0)
    p2 = res.site_resolved("leakage", "site_leakage").mean[:, 1]  # |2> on site 2
    return float(p2.max()), delta, spec.J_prop


@pytest.mark.parametrize("Ubar", UBARS)
@pytest.mark.parametrize("how", ["e2_offset", "frequency_offset"])
def test_detuned_two_site_stack_closed_form(Ubar, how):
    """Max transfer of |2,0> to |0,2> = 1 / (1 + (Delta / 2 J_prop)^2) within 6 (J/Ubar)^2 (module docstring)."""
    tol = 6.0 / Ubar**2
    worst = 0.0
    for x in DETUNINGS:
        jp = 2.0 / Ubar
        if how == "e2_offset":  # E2_2 = -Ubar + Delta: U_2 -> U_2 - Delta (the e2 spread's convention)
            real = Realization(dw=np.zeros(2), U=np.array([Ubar, Ubar - x * jp]))
        else:  # a frequency offset Delta/2 on site 2 moves its E2 by Delta (the frequency noise's convention)
            real = Realization(dw=np.array([0.0, x * jp / 2]), U=np.array([Ubar, Ubar]))
        pmax, delta, J_prop = _max_transfer(Ubar, real)
        assert delta == pytest.approx(x * J_prop, rel=1e-12, abs=1e-15)
        closed = 1.0 / (1.0 + (delta / (2.0 * J_prop)) ** 2)
        assert abs(pmax - closed) <= tol, (x, pmax, closed, tol)
        worst = max(worst, abs(pmax - closed))
    assert worst * Ubar**2 < 6.0


# ---------------------------------------------------------------------------------------------- command line
def _cli(*args):
    return CliRunner().invoke(main, list(args))


def test_cli_records_the_options_and_they_reach_the_trajectories():
    base = ["simulate", "-L", "2", "--trajectories", "6", "--t-final", "80/J", "--time-points", "5",
            "--conditions", "ideal", "--reset", "none", "--init", "leakage", "--workers", "1", "--json"]
    off = _cli(*base)
    on = _cli(*base, "--e2-spread", "2Jprop", "--frequency-noise", "100kHz", "--disorder-pattern", "quasiperiodic")
    assert off.exit_code == 0 and on.exit_code == 0, (off.output, on.output)
    p_off, p_on = json.loads(off.output), json.loads(on.output)
    assert list(p_off["parameters"])[: len(OLD_KEYS)] == OLD_KEYS
    assert not {"e2_spread_J", "frequency_noise_J", "disorder_pattern"} & set(p_off["parameters"])
    par = p_on["parameters"]
    assert par["e2_spread_J"] == pytest.approx(0.08) and par["frequency_noise_J"] == pytest.approx(0.02)
    assert par["disorder_pattern"] == "quasiperiodic"
    # the realizations differ, and so does the transfer (ideal, no reset: deterministic per realization)
    a = np.array(p_off["observables"]["leakage_site1"]["mean"])
    b = np.array(p_on["observables"]["leakage_site1"]["mean"])
    assert np.max(np.abs(a - b)) > 1e-3


@pytest.mark.parametrize(
    "args, shown",
    [
        (["--e2-spread", "-3MHz"], "--e2-spread=-3MHz (= -0.6 J) is not allowed"),
        (["--e2-spread", "8J"], "--e2-spread=8J is not allowed"),
        (["--e2-spread", "2Jprob"], "--e2-spread=2Jprob is not allowed"),
        (["--frequency-noise", "-1kHz"], "--frequency-noise=-1kHz (= -0.0002 J) is not allowed"),
        (["--disorder-pattern", "gaussian", "--disorder", "120MHz"], "--disorder=120MHz (= 24 J) is not allowed"),
        (["--disorder-pattern", "triangular"], "Invalid value for '--disorder-pattern'"),
    ],
)
def test_cli_bad_values_are_one_clear_line(args, shown):
    res = _cli("simulate", "--trajectories", "1", *args)
    assert res.exit_code == 2 and "Traceback" not in res.output
    (line,) = [x for x in res.output.splitlines() if x.startswith("Error:")]
    assert line.startswith(f"Error: {shown}"), line


def test_study_takes_the_options_from_the_command_line_and_toml(tmp_path):
    from lru_mps.studies.base import load_config, study_defaults
    from lru_mps.studies.common import spec_of

    config = tmp_path / "dyn.toml"
    config.write_text('study = "dynamics"\n[model]\ne2_spread = "2Jprop"\ndisorder_pattern = "alternating"\n')
    defaults, _ = study_defaults("dynamics")
    cfg = load_config("dynamics", defaults, config, {"frequency_noise": "50kHz"})
    spec = spec_of(cfg)
    assert spec.e2_spread == pytest.approx(2 * spec.J_prop) and spec.frequency_noise == pytest.approx(0.01)
    assert spec.disorder_pattern == "alternating"
    res = _cli("study", "dynamics", "--e2-spread", "-1J", "--out", str(tmp_path / "out"))
    assert res.exit_code == 2 and "Error: --e2-spread=-1J is not allowed" in res.output
