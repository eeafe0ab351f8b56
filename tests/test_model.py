"""The array model (lru_mps.physics.model): disorder recipe, thermal state, H and H_eff, validation."""

import math
from functools import reduce

import numpy as np
import pytest
from scipy.constants import Boltzmann, Planck

from lru_mps.physics import operators as ops
from lru_mps.engines.exact import hamiltonian_eff, number_of_excitations
from lru_mps.errors import ParameterError
from lru_mps.physics.conditions import Conditions, Reset
from lru_mps.physics.model import ArraySpec


# ------------------------------------------------------------------------ disorder
def test_disorder_recipe_resonant_leakage_level():
    """2 w_l - U_l = 2 wbar - Ubar on every site (1e-12); dw_l in [-W/2, W/2]; seeded."""
    spec = ArraySpec(L=7, Ubar=50.0, wbar=1500.0, W=20.0)
    rng = np.random.default_rng(42)
    all_dw = []
    for _ in range(2000):
        real = spec.draw_realization(rng)
        assert real.L == 7 and real.dw.shape == (7,) and real.U.shape == (7,)
        E2 = 2 * (spec.wbar + real.dw) - real.U
        assert np.all(np.abs(E2 - (2 * spec.wbar - spec.Ubar)) < 1e-12)
        assert np.all(np.abs(real.dw) <= spec.W / 2)
        assert np.all(real.U > 0)
        all_dw.append(real.dw)
    all_dw = np.concatenate(all_dw)
    # uniform in [-W/2, W/2]: mean 0, variance W^2/12 (14000 draws)
    assert abs(all_dw.mean()) < 4 * (20.0 / math.sqrt(12)) / math.sqrt(all_dw.size)
    assert all_dw.var() == pytest.approx(20.0**2 / 12, rel=0.03)
    assert all_dw.min() < -9.9 and all_dw.max() > 9.9
    # the same seed gives the same realization, another seed another one
    a = spec.draw_realization(np.random.default_rng(7))
    b = spec.draw_realization(np.random.default_rng(7))
    c = spec.draw_realization(np.random.default_rng(8))
    assert np.array_equal(a.dw, b.dw) and np.array_equal(a.U, b.U)
    assert not np.array_equal(a.dw, c.dw)
    clean = spec.clean_realization()
    assert np.all(clean.dw == 0) and np.all(clean.U == spec.Ubar)


def test_zero_disorder_draws_the_clean_array():
    spec = ArraySpec(L=3, W=0.0)
    real = spec.draw_realization(np.random.default_rng(1))
    assert np.all(real.dw == 0) and np.all(real.U == spec.Ubar)


# ------------------------------------------------------------------------ thermal
def _gibbs(spec, real):
    """Independent J = 0 Gibbs weights: E1 = h f, E2 = h (2 f - U/2pi), f = (wbar + dw) J_hz."""
    f = (spec.wbar + real.dw) * spec.J_hz
    E1 = Planck * f
    E2 = Planck * (2 * f - real.U * spec.J_hz)
    kT = Boltzmann * spec.conditions.temperature_K
    w = np.stack([np.ones_like(f), np.exp(-E1 / kT), np.exp(-E2 / kT)], axis=1)
    return w / w.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("temperature", [0.05, 0.1, 0.3])
def test_thermal_probabilities_are_boltzmann(temperature):
    spec = ArraySpec(L=4, W=20.0, conditions=Conditions(temperature_K=temperature))
    real = spec.draw_realization(np.random.default_rng(3))
    p = spec.thermal_probabilities(real)
    assert p.shape == (4, 3)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-14)
    np.testing.assert_allclose(p, _gibbs(spec, real), rtol=1e-10, atol=1e-300)
    # Boltzmann ratios directly
    f = (spec.wbar + real.dw) * spec.J_hz
    kT = Boltzmann * temperature
    np.testing.assert_allclose(p[:, 1] / p[:, 0], np.exp(-Planck * f / kT), rtol=1e-10)
    np.testing.assert_allclose(p[:, 2] / p[:, 0], np.exp(-Planck * (2 * f - real.U * spec.J_hz) / kT), rtol=1e-10)
    # leakage level energy is the same on every site, the qubit level is disordered
    np.testing.assert_allclose(p[:, 2] / p[:, 0], p[0, 2] / p[0, 0], rtol=1e-10)


def test_paper_thermal_populations_at_100mK():
    """At 100 mK, 7.5 GHz: P(|1>) ~ exp(-h f/kT) ~ 2.7%, P(|2>) ~ 0.08%."""
    spec = ArraySpec(L=2, W=0.0, conditions=Conditions(temperature_K=0.1))
    p = spec.thermal_probabilities(spec.clean_realization())
    x = Planck * 7.5e9 / (Boltzmann * 0.1)
    assert p[1, 1] == pytest.approx(math.exp(-x) / (1 + math.exp(-x) + math.exp(-x * (15 - 0.25) / 7.5)), rel=1e-9)
    assert 0.025 < p[1, 1] < 0.03 and 5e-4 < p[1, 2] < 1e-3


def test_thermal_sampler_frequencies_match_probabilities():
    """Level frequencies of sites 2..L within 4 standard errors; site 1 always 0."""
    spec = ArraySpec(L=4, W=20.0, conditions=Conditions(temperature_K=0.3))
    real = spec.draw_realization(np.random.default_rng(5))
    p = spec.thermal_probabilities(real)
    rng = np.random.default_rng(6)
    n = 20000
    samples = np.array([spec.thermal_levels(real, rng) for _ in range(n)])
    assert np.all(samples[:, 0] == 0)
    for site in range(1, spec.L):
        for level in range(3):
            freq = np.mean(samples[:, site] == level)
            se = math.sqrt(p[site, level] * (1 - p[site, level]) / n)
            assert abs(freq - p[site, level]) < 4 * se, (site, level, freq, p[site, level])
    assert np.mean(samples[:, 1:] == 2) > 0.03  # the leakage level is really sampled


def test_zero_temperature_is_ground_state_and_consumes_L_minus_1_uniforms():
    spec = ArraySpec(L=5, conditions=Conditions(temperature_K=0.0))
    real = spec.draw_realization(np.random.default_rng(1))
    rng_a, rng_b = np.random.default_rng(9), np.random.default_rng(9)
    assert np.all(spec.thermal_levels(real, rng_a) == 0)
    rng_b.random(spec.L - 1)
    assert rng_a.random() == rng_b.random()
    p = spec.thermal_probabilities(real)
    assert np.all(p[:, 0] == 1.0) and np.all(p[:, 1:] == 0.0)


# ------------------------------------------------------------------- Hamiltonian
def _embed(op, site, L):
    return reduce(np.kron, [op if l == site else np.eye(3) for l in range(L)])


def _bose_hubbard(real, L):
    """Independent dense H = sum [dw n - U/2 n(n-1)] + sum (a^dag a' + h.c.) (J = 1)."""
    H = np.zeros((3**L, 3**L), dtype=complex)
    for l in range(L):
        n = _embed(ops.n, l, L)
        H += real.dw[l] * n - 0.5 * real.U[l] * n @ (n - np.eye(3**L))
    for l in range(L - 1):
        hop = _embed(ops.adag, l, L) @ _embed(ops.a, l + 1, L)
        H += hop + hop.conj().T
    return H


def _noisy_spec(L=3, reset=Reset("dissipation", 0.7)):
    return ArraySpec(L=L, W=20.0, reset=reset, conditions=Conditions(T1q=50.0, Tphi=30.0, temperature_K=0.1))


@pytest.mark.parametrize("reset", [Reset("dissipation", 0.7), Reset("random", 0.4), Reset("periodic", 0.03), Reset("none")])
def test_hamiltonian_is_hermitian_conserves_N_and_is_bose_hubbard(reset):
    spec = _noisy_spec(reset=reset)
    real = spec.draw_realization(np.random.default_rng(11))
    H = hamiltonian_eff(spec, real, hermitian_only=True).toarray()
    assert np.max(np.abs(H - H.conj().T)) < 1e-14
    Ntot = sum(_embed(ops.n, l, spec.L) for l in range(spec.L))
    assert np.max(np.abs(H @ Ntot - Ntot @ H)) < 1e-12
    np.testing.assert_array_equal(np.diag(Ntot).real, number_of_excitations(spec.L))
    assert np.max(np.abs(H - _bose_hubbard(real, spec.L))) < 1e-12
    # H_eff conserves N as well (every op^dag op is diagonal)
    Heff = hamiltonian_eff(spec, real).toarray()
    assert np.max(np.abs(Heff @ Ntot - Ntot @ Heff)) < 1e-12


def test_effective_hamiltonian_anti_hermitian_part():
    """(H_eff - H_eff^dag)/2i = -1/2 sum_k rate_k op_k^dag op_k over the jump channels."""
    G, T1q, Tphi = 0.7, 50.0, 30.0
    spec = _noisy_spec(L=3, reset=Reset("dissipation", G))
    real = spec.draw_realization(np.random.default_rng(12))
    Heff = hamiltonian_eff(spec, real).toarray()
    anti = (Heff - Heff.conj().T) / 2j
    L = spec.L
    a_dag_a = [_embed(ops.adag @ ops.a, l, L) for l in range(L)]
    n_sq = [_embed(ops.n @ ops.n, l, L) for l in range(L)]
    expected = -0.5 * (G * a_dag_a[L - 1] + sum(a / T1q for a in a_dag_a) + sum(2.0 / Tphi * m for m in n_sq))
    assert np.max(np.abs(anti - expected)) < 1e-14
    # the same from the spec's own channel list
    from_channels = sum(-0.5 * ch.rate * _embed(ch.op.conj().T @ ch.op, ch.site, L) for ch in spec.jump_channels())
    assert np.max(np.abs(anti - from_channels)) < 1e-14
    names = sorted({ch.name for ch in spec.jump_channels()})
    assert names == ["decay", "dephasing", "dissipation"]
    assert len(spec.jump_channels()) == 1 + 2 * L


def test_random_feedback_channels_and_no_jump_generator():
    """Random feedback: 3 Lindblad ops sqrt(G)|0><n|_L in channels(), not in jump_channels();
    sum_n P_n^dag P_n = 1, so H_eff has no anti-Hermitian part from it (constant -iG/2 left out)."""
    G = 0.4
    spec = ArraySpec(L=3, W=20.0, reset=Reset("random", G))
    chans = spec.channels()
    assert [c.name for c in chans] == ["measure0", "measure1", "measure2"]
    assert all(c.site == 2 and c.rate == G for c in chans)
    np.testing.assert_allclose(sum(c.op.conj().T @ c.op for c in chans), np.eye(3))
    assert [c.removes for c in chans] == [False, True, True]
    assert spec.jump_channels() == []
    real = spec.draw_realization(np.random.default_rng(1))
    Heff = hamiltonian_eff(spec, real).toarray()
    assert np.max(np.abs(Heff - Heff.conj().T)) < 1e-14


# ------------------------------------------------------------------- validation
def _raises_naming(name, func, *args, **kwargs):
    with pytest.raises(ParameterError) as info:
        func(*args, **kwargs)
    assert info.value.name == name
    assert str(info.value).startswith(f"{name}=")
    return info.value


@pytest.mark.parametrize("L", [1, 0, -3, 2.0, "3"])
def test_bad_length(L):
    _raises_naming("length", ArraySpec, L=L)


@pytest.mark.parametrize("kind", ["periodic", "random", "dissipation"])
@pytest.mark.parametrize("rate", [0.0, -0.1, math.inf, math.nan])
def test_bad_reset_rate(kind, rate):
    _raises_naming("rate", Reset, kind, rate)


def test_reset_none_needs_no_rate_and_unknown_kind_fails():
    assert Reset("none", 0.0).kind == "none"
    _raises_naming("reset", Reset, "sometimes", 0.1)


@pytest.mark.parametrize("W", [-1.0, -1e-9, math.nan, 50.0, 60.0])
def test_bad_disorder(W):
    """W < 0 and W >= Ubar (some U_l would be <= 0) are refused."""
    _raises_naming("disorder", ArraySpec, W=W, Ubar=50.0)


def test_other_spec_fields():
    _raises_naming("anharmonicity", ArraySpec, Ubar=0.0, W=0.0)
    _raises_naming("anharmonicity", ArraySpec, Ubar=-5.0, W=0.0)
    _raises_naming("hopping", ArraySpec, J_hz=0.0)
    _raises_naming("frequency", ArraySpec, wbar=-1.0)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"temperature_K": -0.01}, "temperature"),
        ({"temperature_K": math.inf}, "temperature"),
        ({"T1q": 0.0}, "t1"),
        ({"T1q": -5.0}, "t1"),
        ({"Tphi": -1.0}, "tphi"),
        ({"Tphi": math.nan}, "tphi"),
    ],
)
def test_bad_conditions(kwargs, name):
    _raises_naming(name, Conditions, **kwargs)


def test_unknown_units_via_from_user():
    _raises_naming("rate", ArraySpec.from_user, rate="0.03 parsec")
    _raises_naming("anharmonicity", ArraySpec.from_user, anharmonicity="250 MHzz")
    _raises_naming("temperature", ArraySpec.from_user, temperature="-")
    _raises_naming("t1", ArraySpec.from_user, t1="16.7 GHz")


def test_check_time_step():
    spec = ArraySpec(L=3, Ubar=50.0, W=20.0, reset=Reset("dissipation", 0.5))
    limit = math.pi / spec.fastest_scale()  # Nyquist: phase per step below pi
    assert spec.fastest_scale() >= spec.Ubar + spec.W  # U_l up to Ubar + W must be resolved
    assert spec.check_time_step(0.5 * limit) == 0.5 * limit
    assert spec.check_time_step(0.999 * limit) == 0.999 * limit
    _raises_naming("dt", spec.check_time_step, limit)
    err = _raises_naming("dt", spec.check_time_step, 1.01 * limit)
    assert "fastest" in str(err)
    for bad in (0.0, -0.01, math.nan, math.inf, 0.1):
        _raises_naming("dt", spec.check_time_step, bad)
    _raises_naming("time_step", lambda: spec.check_time_step(1.0, name="time_step"))
    # a large reset rate is the fastest scale
    fast = spec.replace(reset=Reset("dissipation", 500.0))
    assert fast.fastest_scale() >= 500.0
    _raises_naming("dt", fast.check_time_step, 0.01)


def test_replace_revalidates_and_derived_quantities():
    spec = ArraySpec()
    assert spec.J_prop == pytest.approx(2.0 / 50.0)
    assert spec.T_prop == pytest.approx(math.pi / (2 * 0.04))
    _raises_naming("length", spec.replace, L=1)
    assert spec.replace(L=4).L == 4
    d = spec.as_dict()
    assert d["L"] == 3 and d["T1q_J"] is None and d["reset"] == "periodic"


# ------------------------------------------------------------ exact propagation of H_eff
@pytest.mark.parametrize(
    "spec, real",
    [
        (_noisy_spec(L=3), None),
        # exceptional point of the single-excitation block: G = 4J, W = 0 (defective H_eff block)
        (ArraySpec(L=2, W=0.0, reset=Reset("dissipation", 4.0)), "clean"),
    ],
    ids=["noisy-L3", "exceptional-point"],
)
def test_exact_state_evolution_is_exp_of_H_eff(spec, real):
    import scipy.linalg as sla

    from lru_mps.engines.exact import ExactPropagator
    from lru_mps.physics.initial_states import product_state

    real = spec.clean_realization() if real == "clean" else spec.draw_realization(np.random.default_rng(4))
    Heff = hamiltonian_eff(spec, real).toarray()
    prop = ExactPropagator(spec, real)
    for init in ("leakage", "qubit", "coherence"):
        levels = np.zeros(spec.L, int)
        levels[-1] = 1
        st = prop.state(product_state(init, levels))
        psi0 = st.dense()
        for t in (0.3, 2.0, 7.5):
            st2 = st.copy()
            st2.evolve(t)
            ref = sla.expm(-1j * Heff * t) @ psi0
            assert np.max(np.abs(st2.dense() - ref)) < 1e-10
            assert st2.norm2() == pytest.approx(np.vdot(ref, ref).real, abs=1e-12)


@pytest.mark.parametrize("kw", [dict(length=2), dict(length=4, conditions="realistic", reset="dissipation", rate="0.1J",
                                                       t1="100/J", tphi="300/J", temperature="100mK"),
                                dict(geometry="grid:2x3", conditions="realistic", t1="100/J", tphi="300/J")])
def test_exact_hamiltonian_is_the_sum_of_the_embedded_terms(kw):
    """hamiltonian_eff (its terms added at their entries of one dense array) = the sum, in the same order, of the
    sparse Kronecker embeddings of the on-site and bond terms: exactly (not to rounding), H_eff and H."""
    from lru_mps.engines.exact.state import embed, embed_edge

    spec = ArraySpec.from_user(**kw)
    real = spec.draw_realization(np.random.default_rng(3))
    for hermitian in (False, True):
        onsite = spec.onsite_terms(real)
        if hermitian:
            onsite = 0.5 * (onsite + onsite.conj().transpose(0, 2, 1))
        terms = [embed(onsite[l], l, spec.L) for l in range(spec.L)]
        terms += [embed_edge(spec.bond_terms(real)[b], i, j, spec.L) for b, (i, j) in enumerate(spec.edges())]
        expected = reduce(lambda x, y: x + y, terms).toarray()
        assert np.array_equal(hamiltonian_eff(spec, real, hermitian).toarray(), expected)
