"""The batched MPS engine gives the unbatched MPS engine's trajectories (issue: Throughput).

Every check compares a batched MPS store (the compiled row store on numpy, or the padded store the
GPU backends use, run here on numpy) with the engine's ordinary MPS states (``StateList``)
trajectory by trajectory: populations, coherence and event records to 1e-8
(the SVD gauge and the order of sums differ, nothing else), and the engine
diagnostics (discarded weight, largest bond, steps, Trotter drift).  Short
runs with W = 4 J, fast feedback, strong noise and a hot initial state make
every kind of event happen; jumps amplify rounding differences, so runs are
kept short (see test_batched.py).
"""

import numpy as np
import pytest

from lru_mps.engines.common.arraylib import ArrayLib
from lru_mps.engines.mps.padded import PaddedMPSBatch
from helpers import batched, one, records_differ
from lru_mps.run.blocks import run_block
from lru_mps.run.settings import RunSettings, make_settings, time_grid
from lru_mps.errors import ParameterError
from lru_mps.physics.conditions import Conditions, Reset
from lru_mps.physics.model import INIT_STATES, ArraySpec

NOISY = Conditions(T1q=50.0, Tphi=30.0, temperature_K=0.3)
#: initial states of definite excitation number: the padded store (no charge labels) has the bonds of the row
#: store only for these (a superposition of N and N + 1, the coherence state, needs up to twice the bond with labels)
DEFINITE_N = ("leakage", "qubit")
FAST = dict(dt=0.02, order=2)


def _spec(L, reset, conditions, W=4.0):
    return ArraySpec(L=L, W=W, reset=Reset(reset, 0.3 if reset != "none" else 0.0), conditions=conditions)


def _compare(spec, estimator, n=4, times=None, options=FAST, seed=3, inits=INIT_STATES, **kw):
    """The batched MPS store vs unbatched MPS states on n indices; returns (events seen, batched records)."""
    times = time_grid(10.0, 6) if times is None else times
    settings = RunSettings(times=times, trajectories=n, seed=seed, engine="mps", estimator=estimator,
                           engine_options=dict(options), inits=inits)
    got = batched(spec, settings, range(n), **kw)
    events = 0
    for i in range(n):
        ref = one(spec, settings, i)
        problems = records_differ(got[i], ref, tol=1e-8)
        assert not problems, (i, problems[:3])
        events += sum(len(r.events) for r in ref.values())
        for init, rec in got[i].items():
            mine, theirs = rec.diagnostics, ref[init].diagnostics
            assert set(mine) == set(theirs)
            assert mine["steps"] == theirs["steps"] and mine["max_bond"] == theirs["max_bond"]
            for key in ("discarded_weight", "energy_drift"):
                assert abs(mine[key] - theirs[key]) <= 1e-8 * max(1.0, abs(theirs[key])), (key, mine, theirs)
            assert mine["norm_error"] < 1e-10
    return events, got


@pytest.fixture
def padded(monkeypatch):
    """Batched runs use the padded store (the GPU backends' store) on numpy."""
    import lru_mps.run.trajectories as trajectories

    monkeypatch.setattr(trajectories, "batch_store", lambda engine: PaddedMPSBatch)


@pytest.mark.parametrize("L", [2, 4])
@pytest.mark.parametrize("reset", ["periodic", "random", "dissipation", "none"])
def test_sampled_with_noise_and_temperature(L, reset):
    assert _compare(_spec(L, reset, NOISY), "sampled")[0] > 10


def test_padded_store_with_noise_and_temperature(padded):
    """The padded store (GPU backends) gives the unbatched trajectories too (here on numpy)."""
    assert _compare(_spec(4, "periodic", NOISY), "sampled", inits=DEFINITE_N)[0] > 10


def test_branch_periodic_tracks_the_trotter_drift():
    """Ideal conditions, periodic feedback: H_eff = H between measurements, so the drift of <H> is tracked
    (and compared with the unbatched run by _compare); the branch records every measurement (outcome 0)."""
    events, got = _compare(_spec(3, "periodic", Conditions()), "branch")
    assert events > 0
    recs = [r for traj in got for r in traj.values()]
    assert all(e.outcome == 0 for r in recs for e in r.events)
    assert max(r.diagnostics["energy_drift"] for r in recs) > 0.0


def test_branch_dissipation_decays_without_events():
    """Ideal conditions, dissipative reset: the branch has no events and its weight (the unnormalized
    populations of site 1 summed) decays below 1; H_eff is not Hermitian, so no drift is tracked."""
    events, got = _compare(_spec(3, "dissipation", Conditions()), "branch")
    assert events == 0
    for traj in got:
        for r in traj.values():
            weight = r.populations[:, 0, :].sum(axis=1)
            assert weight[0] == pytest.approx(1.0) and weight[-1] < 1.0 - 1e-3
            assert r.diagnostics["energy_drift"] == 0.0


def test_sampled_measurements_without_jump_channels():
    assert _compare(_spec(3, "random", Conditions()), "sampled")[0] > 10


@pytest.mark.parametrize("tol", [None, 1.0, 1e9])
def test_truncation_bucketing_and_order_four(monkeypatch, tol):
    """Order 4 with truncation (discarded weights compared): the row store (tol None), or the padded
    store with rows of different bonds SVD'd in separate buckets (pad_tolerance 1) or all padded
    together (huge tolerance).

    Truncation by a relative-size cutoff (1e-6, noisy and hot) and by max_bond (2, ideal).  Not
    compared: max_bond truncation of noisy hot states, which cuts between nearly equal singular
    values; there the kept subspace is decided by rounding, and even the unbatched lean and
    quimb kernels differ by ~1e-3.
    """
    inits = INIT_STATES
    if tol is not None:
        import lru_mps.run.trajectories as trajectories

        monkeypatch.setattr(PaddedMPSBatch, "pad_tolerance", tol)
        monkeypatch.setattr(trajectories, "batch_store", lambda engine: PaddedMPSBatch)
        inits = DEFINITE_N
    hot = Conditions(T1q=50.0, Tphi=30.0, temperature_K=0.5)
    _compare(_spec(5, "periodic", hot), "sampled", n=5, times=time_grid(4.0, 3),
             options=dict(dt=0.02, order=4, cutoff=1e-6), inits=inits)
    _compare(_spec(5, "periodic", Conditions()), "branch", n=3, times=time_grid(4.0, 3),
             options=dict(dt=0.02, order=4, max_bond=2), inits=inits)


def test_buckets_cover_every_row_once():
    store = PaddedMPSBatch.__new__(PaddedMPSBatch)
    store.pad_tolerance = 1.2
    rng = np.random.default_rng(0)
    al, km, cr = rng.integers(1, 9, 50), rng.integers(1, 9, 50), rng.integers(1, 9, 50)
    groups = store.buckets(al, km, cr, 8, 8, 8)
    assert len(groups) > 1
    rows = np.sort(np.concatenate([g[0] for g in groups]))
    assert np.array_equal(rows, np.arange(50))
    for pos, ga, gk, gc in groups:
        assert al[pos].max() <= ga and km[pos].max() <= gk and cr[pos].max() <= gc
    padded = sum(len(pos) * store.cost(ga, gk, gc) for pos, ga, gk, gc in groups)
    assert padded <= 1.2 * store.cost(al, km, cr).sum()


def test_run_block_uses_the_batched_engine():
    """run_block's ensemble sums agree with the unbatched run (batched=False)."""
    spec = ArraySpec.from_user(length=4, conditions="realistic")
    kw = dict(t_final=6.0, time_points=4, trajectories=3, seed=2, engine="mps", engine_options=FAST)
    a = run_block(spec, make_settings(spec, **kw), 0)
    b = run_block(spec, make_settings(spec, batched=False, **kw), 0)
    for init in a.accumulators:
        for key in ("leakage_array", "qubit_population", "site_population"):
            assert np.allclose(a.accumulators[init].get(key).mean, b.accumulators[init].get(key).mean, atol=1e-8)
        assert np.array_equal(a.diagnostics[init]["steps"], b.diagnostics[init]["steps"])


def test_refuses_the_quimb_kernel():
    spec = ArraySpec(L=3)
    quimb = RunSettings(times=time_grid(1.0, 2), engine="mps", engine_options={"kernel": "quimb"})
    with pytest.raises(ParameterError, match="kernel"):
        batched(spec, quimb, range(1))


def test_unknown_backend_is_refused():
    with pytest.raises(ParameterError, match="backend"):
        ArrayLib("jax")


def _gpu_backend():
    try:
        import torch
    except ImportError:
        return None
    return "torch:cuda" if torch.cuda.is_available() else None


@pytest.mark.skipif(_gpu_backend() is None, reason="no CUDA GPU with torch here: the GPU path runs only where one is")
@pytest.mark.parametrize("engine", ["exact", "mps"])
def test_gpu_backend_matches_numpy(engine):
    """The same batch on the GPU (torch) and on numpy: records to 1e-10 (exact) / 1e-8 (MPS)."""
    spec = _spec(4, "periodic", NOISY)
    opts = dict(FAST) if engine == "mps" else {}
    settings = RunSettings(times=time_grid(10.0, 6), trajectories=6, seed=3, engine=engine, estimator="sampled",
                           engine_options=opts)
    cpu = batched(spec, settings, range(6))
    gpu = batched(spec, settings, range(6), backend=_gpu_backend())
    tol = 1e-10 if engine == "exact" else 1e-8
    for a, b in zip(cpu, gpu):
        assert not records_differ(a, b, tol=tol)


def test_simulate_mps_batched_equals_unbatched_and_cli_backend(monkeypatch):
    """simulate(engine='mps') is batched by default and agrees with batched=False; the CLI's
    --backend names the parameter when the library is missing."""
    from click.testing import CliRunner

    from lru_mps.run.simulate import simulate
    from lru_mps_cli.main import main

    spec = ArraySpec.from_user(length=3, conditions="ideal")
    kw = dict(init="leakage", t_final=4.0, time_points=3, trajectories=4, engine="mps", engine_options=FAST)
    a, b = simulate(spec, **kw), simulate(spec, batched=False, **kw)
    assert np.allclose(a.observable("leakage_array").mean, b.observable("leakage_array").mean, atol=1e-10)
    try:
        import torch  # noqa: F401  (an availability check: which branch of the test runs)
    except ImportError:
        res = CliRunner().invoke(main, ["simulate", "-L", "2", "--trajectories", "2", "--backend", "torch"])
        assert res.exit_code == 2 and "backend" in res.output and "pip install torch" in res.output


def test_study_backend_option(tmp_path):
    """`lru-mps study ... --backend` reaches the runs: a missing library is a usage error naming it."""
    from click.testing import CliRunner

    from lru_mps_cli.main import main

    try:
        import torch  # noqa: F401  (an availability check: which branch of the test runs)
    except ImportError:
        res = CliRunner().invoke(main, ["study", "dynamics", "--quick", "--backend", "torch", "--workers", "1",
                                        "--out", str(tmp_path / "d")])
        assert res.exit_code == 2 and "backend" in res.output
    else:
        pytest.skip("torch is installed here: the missing-library error cannot be shown")
