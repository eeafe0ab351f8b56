"""The exact density-matrix reference (lru_mps/reference.py).

Units of J (energies, rates) and 1/J (times) throughout.
"""

import numpy as np
import pytest

from lru_mps.engines.common import eigen
from lru_mps.references import lindblad as ref
from lru_mps.references import sector_propagation
from lru_mps.engines.exact import ExactPropagator
from lru_mps.errors import ParameterError
from lru_mps.physics.model import ArraySpec
from lru_mps.physics.initial_states import product_state
from lru_mps.mcwf.loop import run_trajectory


def noisy_spec(kind, length=3):
    """Hardware noise, temperature and a reset strong enough to act within a few 1/J."""
    return ArraySpec.from_user(
        length=length, conditions="realistic", reset=kind, rate="0.3J", temperature="300mK", t1="50/J", tphi="80/J"
    )


def realization(spec, seed=7):
    return spec.draw_realization(np.random.default_rng(seed))


def max_diff(a, b):
    return max(np.abs(a.populations - b.populations).max(), np.abs(a.coherence - b.coherence).max())


@pytest.mark.parametrize(
    "kind, init",
    [
        ("periodic", "leakage"),
        ("periodic", "coherence"),
        ("random", "coherence"),
        ("dissipation", "coherence"),
        ("none", "coherence"),
    ],
)
def test_liouvillian_matches_matrix_ode(kind, init):
    """Eigenbasis propagation of the charge-sector Liouvillian vs solve_ivp on the full matrix equation.

    The coherence state fills the q = 0 and q = 1 sectors; the thermal sites
    put weight in every N sector.  Both use the same 3 t0 nodes, so the only
    difference is the propagation (ODE tolerance rtol 1e-10); 3 nodes put the
    three measurements of t <= 10/J at three offsets each (8 nodes cost the
    periodic cases 2.7x as much, 51 s in the suite, and check nothing more).
    """
    spec = noisy_spec(kind)
    real = realization(spec)
    times = np.linspace(0.0, 10.0, 21)
    exact = ref.lindblad_observables(spec, real, init, times, t0_nodes=3)
    ode = ref.lindblad_observables_ode(spec, real, init, times, t0_nodes=3)
    assert exact.populations.shape == (21, 3, 3) and exact.coherence.shape == (21,)
    assert np.abs(exact.populations - ode.populations).max() < 1e-7
    assert np.abs(exact.coherence - ode.coherence).max() < 1e-7
    assert np.ptp(exact.populations[:, 2, 0]) > 1e-2  # the dynamics is not trivial
    if init == "coherence":
        assert np.abs(exact.coherence).min() > 1e-2


def test_two_site_leakage_disintegration():
    """L = 2, W = 0, ideal, no reset, start in |20> (docs/physics.md §9).

    In the N = 2 sector (|20>, |11>, |02>; exactly these three states in the
    3-level model) H = [[-U, sqrt2 J, 0], [sqrt2 J, 0, sqrt2 J], [0, sqrt2 J, -U]]:
    (|20> + |02>)/sqrt2 couples to |11> with 2J, the antisymmetric state is
    dark, so rho_{11,11}(t) = (8 J^2/w^2) sin^2(w t/2), w = sqrt(U^2 + 16 J^2),
    exactly.  |11> is the only N = 2 state with site 1 (or site 2) in |1>, so
    it equals populations[:, 0, 1] and populations[:, 1, 1].
    """
    spec = ArraySpec.from_user(length=2, disorder=0, reset="none", conditions="ideal")
    times = np.linspace(0.0, 2.0, 201)  # 16 oscillation periods, 12 points each
    res = ref.lindblad_observables(spec, spec.clean_realization(), "leakage", times)
    w = np.sqrt(spec.Ubar**2 + 16.0)
    expected = 8.0 / w**2 * np.sin(w * times / 2.0) ** 2
    assert np.abs(res.populations[:, 0, 1] - expected).max() < 1e-10
    assert np.abs(res.populations[:, 1, 1] - expected).max() < 1e-10
    assert expected.max() > 3e-3


@pytest.mark.parametrize("init", ["leakage", "coherence"])
def test_same_fields_as_a_trajectory(init):
    """Without events (ideal, no reset, T = 0) one trajectory is the ensemble: every field must agree.

    Checks the conventions shared with TrajectoryRecord: site order, level
    populations, and the coherence frame (dressed qubit frequency by default).
    """
    spec = ArraySpec.from_user(length=3, reset="none", conditions="ideal")
    real = realization(spec)
    times = np.linspace(0.0, 5.0, 11)
    state = ExactPropagator(spec, real).state(product_state(init, np.zeros(3, dtype=int)))
    rec = run_trajectory(state, spec, real, times, np.random.default_rng(0))
    res = ref.lindblad_observables(spec, real, init, times)
    assert np.abs(res.populations - rec.populations).max() < 1e-10
    assert np.abs(res.coherence - rec.coherence).max() < 1e-10
    bare = ref.lindblad_observables(spec, real, init, times, qubit_frequency=real.dw[0])
    assert np.allclose(bare.coherence, res.coherence * np.exp(1j * (real.dw[0] - spec.qubit_frequency(real)) * times))


@pytest.mark.parametrize("kind", ["periodic", "random"])
def test_density_matrix_is_physical(kind):
    """Unit trace, Hermitian and positive at every time (noisy L = 3, thermal sites, coherence state)."""
    spec = noisy_spec(kind)
    times = np.linspace(0.0, 30.0, 31)
    rho = ref.lindblad_density_matrices(spec, realization(spec), "coherence", times, t0_nodes=50)
    assert rho.shape == (31, 27, 27)
    assert np.abs(np.trace(rho, axis1=1, axis2=2) - 1.0).max() < 1e-10
    assert np.abs(rho - rho.conj().transpose(0, 2, 1)).max() < 1e-10
    assert np.linalg.eigvalsh(rho).min() > -1e-10
    res = ref.lindblad_observables(spec, realization(spec), "coherence", times, t0_nodes=50)
    assert np.abs(res.populations.sum(axis=2) - 1.0).max() < 1e-10


def test_t0_average_converges():
    """Midpoint rule over t0 in [0, 1/G): O(1/M), from measurement times crossing grid times.

    On a grid incommensurate with the node spacing the differences fall by
    ~4 from (50, 100) to (200, 400); require at least 2.
    """
    spec = noisy_spec("periodic")
    real = realization(spec)
    times = np.linspace(0.0, 20.0, 37)
    res = {M: ref.lindblad_observables(spec, real, "coherence", times, t0_nodes=M) for M in (50, 100, 200, 400)}
    coarse, fine = max_diff(res[50], res[100]), max_diff(res[200], res[400])
    assert fine < coarse / 2.0
    assert coarse > 1e-4  # the t0 average matters at this rate


def test_measurement_at_a_grid_time_acts_after_recording():
    """With one node t0 = 1/(2G), a grid time equal to t0 sees the state before the measurement."""
    spec = noisy_spec("periodic", length=2)
    t0 = 0.5 / spec.reset.rate  # the single midpoint node, bit for bit
    times = np.array([0.0, t0, t0 + 1e-9])
    res = ref.lindblad_observables(spec, realization(spec), "qubit", times, t0_nodes=1)
    excited_last = 1.0 - res.populations[:, 1, 0]
    assert excited_last[1] > 1e-2  # thermal excitation of site 2, not yet reset
    assert excited_last[2] < 1e-12  # reset to |0> just after


def test_expm_fallback_matches_eigenbasis(monkeypatch):
    """The scipy expm path (for ill-conditioned eigenvectors) gives the same result."""
    spec = noisy_spec("periodic")
    real = realization(spec)
    times = np.linspace(0.0, 8.0, 9)
    fast = ref.lindblad_observables(spec, real, "coherence", times, t0_nodes=3)
    calls = []
    expm = sector_propagation.sla.expm
    monkeypatch.setattr(eigen, "COND_LIMIT", 0.0)
    monkeypatch.setattr(sector_propagation.sla, "expm", lambda a: calls.append(a.shape) or expm(a))
    slow = ref.lindblad_observables(spec, real, "coherence", times, t0_nodes=3)
    assert len(calls) > 10  # the fallback did run
    assert max_diff(fast, slow) < 1e-10


def test_rejects_long_arrays_and_bad_grids():
    spec = ArraySpec.from_user(length=5)
    with pytest.raises(ParameterError, match="length") as err:
        ref.lindblad_observables(spec, realization(spec), "leakage", [0.0, 1.0])
    assert err.value.name == "length"
    small = ArraySpec.from_user(length=2)
    with pytest.raises(ParameterError, match="times"):
        ref.lindblad_observables(small, realization(small), "leakage", [1.0, 0.5])
    with pytest.raises(ParameterError, match="t0_nodes"):
        ref.lindblad_observables(small, realization(small), "leakage", [0.0, 1.0], t0_nodes=0)
