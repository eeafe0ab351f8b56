"""The batched exact engine gives the unbatched engine's trajectories (issue: Throughput).

Every check compares the batched exact store with the exact engine's ordinary states (``StateList``), one trajectory at a time,
trajectory by trajectory: populations, coherence and the event records
(time, channel, site, outcome) to 1e-10.  Parameters are chosen so that
every kind of event happens often (W = 4 J hybridizes the array, fast
feedback, strong noise, a hot initial state) on short runs: the Monte-Carlo
unravelling amplifies rounding differences at every jump (a jump time that
moves by dt shifts the state by ~U dt), so on long runs with many jumps the
two engines -- or the unbatched engine against itself with a state perturbed
by one ulp -- drift apart by more than 1e-10.  How far depends on the
machine's BLAS kernels (the same code differs by 1.0e-10 on one x86_64 CPU,
by less on another), so a row that differs by more than 1e-10 is held to ten
times its own sensitivity: how far the unbatched trajectory moves when its
detunings move by one ulp (helpers.rounding_divergence), with the same events.
"""

import numpy as np
import pytest

import lru_mps.mcwf.trajectory_rows as rows_module
from lru_mps.engines.common import eigen
from lru_mps.engines.exact import batch as exact_batch
from helpers import batched, differ_beyond_rounding, one, records_differ
from lru_mps.run.blocks import run_block
from lru_mps.run.settings import RunSettings, make_settings, time_grid
from lru_mps.errors import ParameterError
from lru_mps.physics.conditions import Conditions, Reset
from lru_mps.physics.model import ArraySpec

NOISY = Conditions(T1q=50.0, Tphi=30.0, temperature_K=0.3)


def _spec(L, reset, conditions):
    return ArraySpec(L=L, W=4.0, reset=Reset(reset, 0.3 if reset != "none" else 0.0), conditions=conditions)


def _compare(spec, estimator, n=12, times=None, realization=None, seed=3, **kw):
    """The batched store vs the unbatched one on n indices; returns the number of events seen."""
    times = time_grid(60.0, 31) if times is None else times
    settings = RunSettings(times=times, trajectories=n, seed=seed, engine="exact", estimator=estimator)
    got = batched(spec, settings, range(n), realization, **kw)
    events = 0
    assert len(got) == n
    for i in range(n):
        ref = one(spec, settings, i, realization)
        problems = differ_beyond_rounding(got[i], ref, spec, settings, i, realization)
        assert not problems, (i, problems[:3])
        events += sum(len(r.events) for r in ref.values())
        for init, rec in got[i].items():
            assert rec.populations.shape == ref[init].populations.shape
            assert rec.final_state is None and rec.diagnostics == {}
    return events


@pytest.mark.parametrize("L", [2, 3, 4])
@pytest.mark.parametrize("reset", ["periodic", "random", "dissipation", "none"])
def test_sampled_with_noise_and_temperature(L, reset):
    events = _compare(_spec(L, reset, NOISY), "sampled")
    assert events > 50  # jumps (and measurements) must happen for this to test anything


@pytest.mark.parametrize("L", [2, 3, 4])
@pytest.mark.parametrize("reset", ["periodic", "random", "dissipation", "none"])
def test_branch_in_ideal_conditions(L, reset):
    events = _compare(_spec(L, reset, Conditions()), "branch")
    if reset in ("periodic", "random"):
        assert events > 50


@pytest.mark.parametrize("reset", ["periodic", "random"])
def test_sampled_without_jump_channels(reset):
    """Ideal conditions, sampled estimator: no waiting-time jumps, Born-rule measurements only."""
    assert _compare(_spec(3, reset, Conditions()), "sampled") > 50


def test_branch_with_hardware_noise():
    """The branch estimator with noise (refused by check_estimator, but the algorithm is defined)."""
    _compare(_spec(3, "periodic", Conditions(T1q=50.0, Tphi=30.0)), "branch")


def test_fixed_realization_irregular_grid_and_small_chunks():
    """One realization for all (R = 1), a grid whose steps differ in the last bits and
    does not start at 0, several chunks grouped by N_max."""
    spec = _spec(3, "random", NOISY)
    real = spec.draw_realization(np.random.default_rng(7))
    times = np.linspace(1.3, 37.3, 23)
    assert len(np.unique(np.diff(times))) > 1
    _compare(spec, "sampled", n=15, times=times, realization=real, batch_size=4)
    _compare(_spec(4, "dissipation", NOISY), "sampled", n=10, times=times, batch_size=3)


def test_batch_size_does_not_matter():
    spec = _spec(3, "periodic", NOISY)
    settings = RunSettings(times=time_grid(40.0, 21), trajectories=10, seed=5, engine="exact", estimator="sampled")
    single = batched(spec, settings, range(10), batch_size=1)
    many = batched(spec, settings, range(10))
    for a, b in zip(single, many):
        assert not records_differ(a, b, tol=1e-12)


@pytest.mark.parametrize("estimator,conditions", [("sampled", NOISY), ("branch", Conditions())])
def test_measurement_at_a_grid_time_records_first(monkeypatch, estimator, conditions):
    """Measurement times on grid points: record before measuring (both engines use the patched clock)."""

    class OnGrid(rows_module.MeasurementClock):
        def __init__(self, spec, rng):
            super().__init__(spec, rng)
            self.next = 6.0  # grid step 2, period 1/G = 4: every measurement is on a grid point

    monkeypatch.setattr(rows_module, "MeasurementClock", OnGrid)
    spec = ArraySpec(L=3, W=4.0, reset=Reset("periodic", 0.25), conditions=conditions)
    assert _compare(spec, estimator, n=8, times=time_grid(60.0, 31)) > 0


def test_a_stack_of_blocks_follows_the_one_block_rule():
    """decompose_stack, block by block, is common.eigen's rule for one block: an exactly Hermitian block by eigh
    (decompose's numbers, bit for bit; unitary V), any other by eig (numpy's numbers, bit for bit), in stacks of
    either kind and mixed; every propagator exp(-i H t) equals scipy's expm."""
    import scipy.linalg as sla

    rng = np.random.default_rng(7)
    d = 12
    A = rng.normal(size=(d, d)) + 1j * rng.normal(size=(d, d))
    S = rng.normal(size=(d, d))
    herm = [A + A.conj().T, S + S.T]
    other = [A, S, A + A.conj().T - 0.3j * np.diag(rng.random(d))]
    for stack in (herm, other, [other[0], herm[0], other[2], herm[1]]):
        M = np.array(stack, dtype=complex) if any(np.iscomplexobj(b) for b in stack) else np.array(stack)
        lam, V, Vinv, bad = eigen.decompose_stack(M)
        assert not bad.any()
        U = eigen.propagator_stack(lam, V, Vinv, bad, M, 0.7)
        for j, H in enumerate(M):
            assert np.allclose(U[j], sla.expm(-0.7j * H), rtol=0, atol=1e-12)
            if np.array_equal(H, H.conj().T):
                lam1, V1, _ = eigen.decompose(H, hermitian=True)
                assert np.array_equal(lam[j], lam1) and np.array_equal(V[j], V1)
                assert np.array_equal(Vinv[j], V[j].conj().T)
            else:
                lam0, V0 = np.linalg.eig(H)
                assert np.array_equal(lam[j], lam0) and np.array_equal(V[j], V0)


def test_one_block_takes_real_arithmetic_only_for_a_real_symmetric_block():
    """BlockPropagator: a real symmetric block (also stored as complex with zero imaginary parts) is diagonalized in
    real arithmetic (real orthogonal V), a complex Hermitian or non-Hermitian one as before; every propagated vector
    (complex, real, several times) equals scipy's expm applied to it."""
    import scipy.linalg as sla

    rng = np.random.default_rng(11)
    d = 15
    S = rng.normal(size=(d, d))
    A = rng.normal(size=(d, d)) + 1j * rng.normal(size=(d, d))
    cases = ((S + S.T, True), ((S + S.T).astype(complex), True), (A + A.conj().T, False),
             (S + S.T - 0.2j * np.diag(rng.random(d)), False))
    x = rng.normal(size=d) + 1j * rng.normal(size=d)
    for H, real in cases:
        blk = eigen.BlockPropagator(H)
        assert blk.use_eig and blk.real == real
        assert np.isrealobj(blk.V) == real
        for t in (0.0, 0.3, 7.0):
            U = sla.expm(-1j * t * H)
            assert np.allclose(blk.apply(x, t), U @ x, rtol=0, atol=1e-12)
            assert np.allclose(blk.apply(x.real.copy(), t), U @ x.real, rtol=0, atol=1e-12)


def test_generic_jump_and_expm_fallbacks(monkeypatch):
    """The full-space jump path and the expm path for ill-conditioned blocks."""
    spec = _spec(2, "random", NOISY)
    monkeypatch.setattr(exact_batch.ExactBatch, "_prepare_jumps", lambda self: None)
    assert _compare(spec, "sampled", n=6, times=time_grid(30.0, 16)) > 10
    # every block with more than one state counts as ill-conditioned in both engines
    monkeypatch.setattr(eigen, "COND_LIMIT", 1.0)  # the one rule of both engines
    assert _compare(spec, "sampled", n=4, times=time_grid(30.0, 16)) > 10


def test_run_block_accumulators_agree():
    """Paper parameters (realistic, periodic feedback): ensemble sums of the batched records equal run_block's."""
    from lru_mps.run.statistics import ObservableAccumulator

    spec = ArraySpec.from_user(length=3, conditions="realistic")
    settings = make_settings(spec, t_final=100.0, time_points=51, trajectories=8, seed=2)
    block = run_block(spec, settings, 0)  # 8 trajectories, 8 blocks: block 0 is index 0
    ref = run_block(spec, settings, 5)
    recs = batched(spec, settings, [0, 5])
    for blk, rec in ((block, recs[0]), (ref, recs[1])):
        for init, acc in blk.accumulators.items():
            mine = ObservableAccumulator(51, 3)
            mine.add(rec[init].populations, rec[init].coherence)
            for key in ("leakage_array", "qubit_population", "site_population"):
                assert np.allclose(mine.get(key).mean, acc.get(key).mean, atol=1e-10, rtol=0)
            assert np.allclose(mine.z, acc.z, atol=1e-10, rtol=0)


def test_refuses_long_arrays_and_an_unresolved_estimator():
    spec = ArraySpec(L=3)
    with pytest.raises(ParameterError, match="length"):
        batched(ArraySpec(L=8), RunSettings(times=time_grid(10.0, 3)), range(1))
    with pytest.raises(ParameterError, match="estimator"):
        batched(spec, RunSettings(times=time_grid(10.0, 3), estimator="auto"), range(1))
