"""Engineered hopping profiles (``--hopping-profile``, docs/physics.md §3.3).

* uniform = the chain without a profile, bit for bit (realizations, cache keys, a run's records);
* the profiles' shapes from their definitions (transfer: the stack's 2 J_l^2/Ubar ~ sqrt(l (L - l)); linear: a ramp;
  a list: rescaled to mean 1), the spread multiplying the profile with the same random numbers;
* the clean-chain transit of a leakage stack (exact N = 2 sector evolution) against the effective one-particle model
  of :func:`lru_mps.physics.hopping_profile.effective_stack_hamiltonian` (hopping 2 J_l^2/Ubar and the second-order
  on-site shifts) at large Ubar/J, with the error shrinking as (J/Ubar)^2;
* sector = exact = batched exact per trajectory with events (L = 4, two profiles), and trajectories against the
  Lindblad reference (L = 3, realistic) with a linear profile, which the uniform reference would fail;
* bad values: one line naming hopping_profile and the allowed forms (the CLI too); a device file refuses a profile.
"""

import numpy as np
import pytest
from click.testing import CliRunner

from helpers import batched, one, records_differ, window_sum
from lru_mps.engines.sector import sector_basis, sector_hamiltonian
from lru_mps.errors import ParameterError
from lru_mps.physics import hopping_profile as hp
from lru_mps.physics.conditions import Conditions, Reset
from lru_mps.physics.model import ArraySpec, Realization
from lru_mps.references import lindblad
from lru_mps.run.settings import RunSettings, time_grid
from lru_mps.run.trajectories import disorder_rng


# ------------------------------------------------------------------------------------------ uniform = today
@pytest.mark.parametrize("kw", [{}, {"hopping_spread": "5%"}, {"disorder_pattern": "gaussian", "e2_spread": "0.1J"}])
def test_uniform_is_the_chain_bit_for_bit(kw):
    base, uni = ArraySpec.from_user(length=5, **kw), ArraySpec.from_user(length=5, hopping_profile="uniform", **kw)
    assert base == uni and base.as_dict() == uni.as_dict() and "hopping_profile" not in uni.as_dict()
    for i in range(4):
        a, b = base.draw_realization(disorder_rng(3, i)), uni.draw_realization(disorder_rng(3, i))
        assert np.array_equal(a.dw, b.dw) and np.array_equal(a.U, b.U)
        assert (a.J is None and b.J is None) or np.array_equal(a.J, b.J)
    assert uni.clean_realization().J is None and uni.profile() is None


def test_uniform_run_records_are_todays():
    """The same trajectories with and without naming the uniform profile (records equal exactly)."""
    spec = ArraySpec.from_user(length=3, reset="random", rate="0.3J", t1="60/J", tphi="40/J")
    settings = RunSettings(times=time_grid(40.0, 5), seed=4, engine="exact")
    a = one(spec, settings, 0)
    b = one(spec.replace(hopping_profile="uniform"), settings, 0)
    assert records_differ(a, b, tol=0.0) == []


# ---------------------------------------------------------------------------------------- the profiles
@pytest.mark.parametrize("L", [2, 3, 6, 11])
def test_transfer_profile_gives_the_stack_sqrt_l_L_minus_l(L):
    P = hp.couplings("transfer", L)
    l = np.arange(1, L)
    assert P.mean() == pytest.approx(1.0, abs=1e-14)
    jp = 2.0 * P**2 / 50.0  # the stack's hopping on each bond
    np.testing.assert_allclose(jp / np.sqrt(l * (L - l)), jp[0] / np.sqrt(L - 1), rtol=1e-12)


def test_linear_and_list_profiles():
    P = hp.couplings("linear:0.5:1.5", 6)  # 5 bonds from 0.5 to 1.5, mean 1
    np.testing.assert_allclose(P, [0.5, 0.75, 1.0, 1.25, 1.5], rtol=1e-14)
    np.testing.assert_allclose(hp.couplings("linear:1:3", 4), np.array([1, 2, 3]) / 2.0, rtol=1e-14)
    np.testing.assert_allclose(hp.couplings("2,1,1", 4), [1.5, 0.75, 0.75], rtol=1e-14)  # relative, mean 1
    assert hp.couplings([1.2, 0.8], 3).tolist() == pytest.approx([1.2, 0.8])
    assert hp.parse("Transfer") == "transfer" and hp.parse(" 1.2, 0.8 ") == (1.2, 0.8)


def test_the_spread_multiplies_the_profile_with_the_same_random_numbers():
    plain = ArraySpec.from_user(length=5, hopping_spread="10%")
    ramp = plain.replace(hopping_profile="linear:0.6:1.4")
    for i in range(3):
        a, b = plain.draw_realization(disorder_rng(8, i)), ramp.draw_realization(disorder_rng(8, i))
        assert np.array_equal(a.dw, b.dw) and np.array_equal(a.U, b.U)
        np.testing.assert_allclose(b.J, ramp.profile() * a.J, rtol=1e-15)
    np.testing.assert_allclose(ramp.clean_realization().J, np.linspace(0.6, 1.4, 4), rtol=1e-14)
    assert ramp.as_dict()["hopping_profile"] == "linear:0.6:1.4"


# ------------------------------------------------------------------------- physics: the stack's transit
def _transit_error(profile: str, L: int, Ubar: float) -> tuple[float, float]:
    """(max over t <= 3 T_prop of |P_exact - P_eff| over the sites, the exact best transfer to site L).

    The exact populations of |2> on each site from the N = 2 sector of the clean chain (no reset, ideal), started
    with the stack on site 1; the effective model is the one-particle H of effective_stack_hamiltonian."""
    spec = ArraySpec(L=L, W=0.0, Ubar=Ubar, reset=Reset("none", 0.0), conditions=Conditions(), hopping_profile=profile)
    real = spec.clean_realization()
    H = sector_hamiltonian(spec, real, 2).toarray()
    occ = sector_basis(L, 2).occ
    idx = [int(np.nonzero(occ[:, l] == 2)[0][0]) for l in range(L)]
    Heff = hp.effective_stack_hamiltonian(real.hoppings, Ubar)
    w, V = np.linalg.eigh(H)
    we, Ve = np.linalg.eigh(Heff)
    c0, ce = V[idx[0]].conj(), Ve[0].conj()
    err, best = 0.0, 0.0
    for t in np.linspace(0.0, 3.0 * spec.T_prop, 241):
        p = np.abs(V[idx] @ (np.exp(-1j * w * t) * c0)) ** 2
        q = np.abs(Ve @ (np.exp(-1j * we * t) * ce)) ** 2
        err, best = max(err, float(np.max(np.abs(p - q)))), max(best, float(p[-1]))
    return err, best


@pytest.mark.parametrize("profile", ["uniform", "transfer", "linear:0.6:1.4", "1.3,0.8,1.1,0.8"])
def test_clean_chain_transit_follows_the_effective_stack_model(profile):
    """L = 5: the exact stack populations follow the effective model to O((J_max/Ubar)^2) (measured 2.7-15 times
    (J_max/U)^2 at U = 100..400 J, J_max the largest coupling): at U = 200 J within 25 (J_max/U)^2, and the error
    falls by 4 (+-15 %) when U doubles, which a missing shift (an error of order J_prop t ~ 1) or a wrong hopping
    would not do."""
    e200, best = _transit_error(profile, 5, 200.0)
    e400, _ = _transit_error(profile, 5, 400.0)
    jmax = float(np.max(hp.couplings(profile, 5))) if profile != "uniform" else 1.0
    assert e200 < 25 * (jmax / 200.0) ** 2, e200
    assert 4 / 1.15 < e200 / e400 < 4 * 1.15, (e200, e400)
    assert best > 0.2  # the stack does reach the far end


def test_without_the_shifts_the_effective_model_fails():
    """The on-site shifts are part of the model: dropping them moves the populations by O(1) within 3 T_prop."""
    L, U = 5, 200.0
    J = hp.couplings("transfer", L)
    H = hp.effective_stack_hamiltonian(J, U)
    bare = H - np.diag(np.diag(H))
    T = 3.0 * np.pi / (2.0 * 2.0 / U)
    from scipy.linalg import expm

    p = np.abs(expm(-1j * H * T)[:, 0]) ** 2
    q = np.abs(expm(-1j * bare * T)[:, 0]) ** 2
    assert np.max(np.abs(p - q)) > 0.1


# -------------------------------------------------------------------------------------- trajectories
@pytest.mark.parametrize("profile", ["transfer", "linear:0.6:1.4"])
def test_sector_exact_and_batched_follow_each_other_per_trajectory(profile):
    """L = 4, 250 mK, noise, periodic feedback: sector = exact = batched exact per record (1e-8), with events."""
    spec = ArraySpec.from_user(length=4, conditions="realistic", reset="periodic", rate="0.5J", t1="30/J",
                               tphi="20/J", temperature="250mK", hopping_profile=profile, hopping_spread="5%")
    times = time_grid(20.0, 5)
    ex = RunSettings(times=times, seed=9, engine="exact")
    se = RunSettings(times=times, seed=9, engine="sector")
    rows = batched(spec, ex, [0, 1, 2])
    events = 0
    for i in range(3):
        real = spec.draw_realization(disorder_rng(9, i))
        assert np.max(np.abs(real.J / spec.profile() - 1.0)) < 0.25  # the profile is in the realization
        a, b = one(spec, ex, i), one(spec, se, i)
        assert records_differ(a, b, tol=1e-8) == [], (profile, i)
        assert records_differ(a, rows[i], tol=1e-8) == [], (profile, i)
        events += sum(len(r.events) for r in a.values())
    assert events > 4


def test_trajectories_agree_with_lindblad_with_a_linear_profile():
    """L = 3, realistic (the reference test's noisy conditions), linear 0.6 -> 1.4: every resolved point within the
    reference test's bounds, the late window to < 15 % (3 sigma), and the uniform chain's reference 4+ sigma off."""
    from test_vs_reference import _check_against_reference, _noisy

    spec = _noisy(3, "periodic").replace(hopping_profile="linear:0.6:1.4")
    real = spec.draw_realization(np.random.default_rng(21))
    np.testing.assert_allclose(real.J, [0.6, 1.4])
    res, curves, pooled = _check_against_reference(spec, real, trajectories=1500, cover=300.0, seed=13)
    assert all(v < 0.15 for v in pooled.values()), pooled
    uniform = lindblad.lindblad_observables(spec, Realization(real.dw, real.U), "leakage", res.times, t0_nodes=50)
    window = (res.times >= 2 * spec.T_prop) & (res.times <= 300.0)
    total, sigma = window_sum(res, "leakage_array", window)
    assert abs(total - float(np.sum(uniform.populations[window, :, 2]))) > 4 * sigma


# ------------------------------------------------------------------------------------------ bad values
@pytest.mark.parametrize("value", ["linear", "ramp", "linear:0:1", "linear:1", "1,-1,1", "nan,1,1", 3, True])
def test_bad_profiles_name_hopping_profile(value):
    with pytest.raises(ParameterError) as info:
        ArraySpec.from_user(length=4, hopping_profile=value)
    assert info.value.name == "hopping_profile" and "linear:A:B" in str(info.value)


def test_a_list_must_fit_the_length():
    with pytest.raises(ParameterError) as info:
        ArraySpec.from_user(length=5, hopping_profile="1,1,1")
    assert info.value.name == "hopping_profile" and "4 relative couplings" in str(info.value)


def test_a_device_file_refuses_a_profile():
    device = {"frequencies": ["7512MHz", "7468MHz", "7530MHz"], "anharmonicities": ["274MHz", "186MHz", "310MHz"],
              "couplings": ["5.1MHz", "4.9MHz"]}
    with pytest.raises(ParameterError) as info:
        ArraySpec.from_user(device=device, hopping_profile="transfer")
    assert info.value.name == "hopping_profile" and "device" in str(info.value)
    assert ArraySpec.from_user(device=device, hopping_profile="uniform").device is not None


def test_cli_error_is_one_line_and_help_names_the_option():
    from lru_mps_cli.main import main

    res = CliRunner().invoke(main, ["simulate", "--trajectories", "1", "--hopping-profile", "linear"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    (line,) = [x for x in res.output.splitlines() if x.startswith("Error:")]
    assert line.startswith("Error: --hopping-profile=linear is not allowed: uniform, transfer, linear:A:B"), line
    assert "--hopping-profile" in CliRunner().invoke(main, ["study", "length-scaling", "--help"]).output


def test_no_infinite_chain_reference_for_a_profile():
    """xi_theory has no reference for a profile (a bond's coupling changes with L): NaN, not the uniform chain's."""
    from lru_mps.analysis.localization import xi_theory

    uniform = xi_theory(ArraySpec(L=4, W=20.0), n_grid=5, n_sites=200, chains=4)
    assert np.isfinite(uniform["strong"]) and np.isfinite(uniform["transfer"])
    ramp = xi_theory(ArraySpec(L=4, W=20.0, hopping_profile="linear:0.6:1.4"), n_grid=5, n_sites=200, chains=4)
    assert np.isnan(ramp["strong"]) and np.isnan(ramp["transfer"]) and ramp["inverse_at_energies"] is None
