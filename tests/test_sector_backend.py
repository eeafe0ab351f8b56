"""The sector engine's Chebyshev propagation over an array library (lru_mps.engines.sector.array_chebyshev).

* the library path (numpy: scipy's sparse products; torch:cpu where torch is installed) gives the compiled kernel's
  states to 1e-10 after evolutions of several sub-steps of realistic, non-Hermitian sectors (L = 6, N = 2 and 3,
  decay, dephasing and the reset's dissipation in H_eff), one row and a batch of rows alike;
* its reuse of kept sub-steps (the jump-time search) gives a fresh evolution's numbers on the same backend;
* a stop request is looked at between the orders of a sub-step;
* the engine takes the library path only with a backend other than numpy (the default stays the compiled block),
  and a run's ``backend`` reaches it; a whole short run on torch:cpu gives the numpy run's trajectories and means.

torch is optional (not a dependency of the package): its cases skip where it is not installed.  torch runs with
one thread here (on a loaded machine its OpenMP threads wait on each other, and the run layer limits BLAS only).
Cost: a few seconds.
"""

import importlib.util

import numpy as np
import pytest

from helpers import one, records_differ
from lru_mps import errors
from lru_mps.engines import get_engine, run_engine
from lru_mps.engines.sector import sector_hamiltonian
from lru_mps.engines.sector.array_chebyshev import ArrayChebyshevBlock
from lru_mps.engines.sector.chebyshev import ChebyshevBlock
from lru_mps.engines.sector.engine import SectorEngine
from lru_mps.errors import Interrupted, ParameterError
from lru_mps.physics.model import ArraySpec
from lru_mps.run.settings import RunSettings, time_grid

HAVE_TORCH = importlib.util.find_spec("torch") is not None
NO_TORCH = "torch is not installed (an optional array library: pip install torch)"
torch_only = pytest.mark.skipif(not HAVE_TORCH, reason=NO_TORCH)
BACKENDS = ["numpy", pytest.param("torch:cpu", marks=torch_only)]
pytestmark = pytest.mark.filterwarnings("ignore::lru_mps.errors.ParameterWarning")  # (the short T1q, Tphi of _hot)


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    if not HAVE_TORCH:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _hot(reset="dissipation", L=6):
    """Realistic conditions with short T1q, Tphi, a strong reset and a hot array: a clearly non-Hermitian H_eff."""
    return ArraySpec.from_user(length=L, conditions="realistic", reset=reset, rate="0.5J", t1="30/J", tphi="20/J",
                               temperature="250mK")


def _sector(N: int, seed: int = 4):
    spec = _hot()
    H = sector_hamiltonian(spec, spec.draw_realization(np.random.default_rng(seed)), N)
    assert np.max(-H.diagonal().imag) > 0.1  # the decay is in H_eff
    return H


def _rows(n: int, m: int, seed: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, m)) + 1j * rng.normal(size=(n, m))
    return x / np.linalg.norm(x, axis=0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("N", [2, 3])
def test_the_library_path_gives_the_compiled_kernels_states(backend, N):
    """One row and a batch of three rows of the N sector evolved by 0.3, 1, 2.5 sub-steps, 7.31/J and 40/J (tens of
    sub-steps): the compiled block's states to 1e-10 (the norms decay: non-Hermitian)."""
    H = _sector(N)
    compiled = ChebyshevBlock(H)
    lib = ArrayChebyshevBlock(H, backend)
    assert (lib.r, lib.c, lib.tau_s) == (compiled.r, compiled.c, compiled.tau_s)
    X = _rows(H.shape[0], 3)
    for t in (0.3 * compiled.tau_s, compiled.tau_s, 2.5 * compiled.tau_s, 7.31, 40.0):
        ref = np.stack([ChebyshevBlock(H).apply(X[:, j].copy(), t) for j in range(3)], axis=1)
        y = lib.apply(X[:, 0].copy(), t)
        assert y.shape == (H.shape[0],) and isinstance(y, np.ndarray)
        assert np.abs(y - ref[:, 0]).max() < 1e-10, t
        Y = lib.apply(X, t)
        assert Y.shape == X.shape and np.abs(Y - ref).max() < 1e-10, t
    assert np.linalg.norm(ref[:, 0]) < 0.5  # decayed over 40/J
    assert lib.apply(X[:, 0], 0.0).tolist() == X[:, 0].tolist()


@pytest.mark.parametrize("backend", BACKENDS)
def test_reuse_of_kept_sub_steps_gives_a_fresh_evolutions_numbers(backend):
    """Evolving by tau from a start whose longer evolution was kept (the jump-time search's sub-step starts and
    Chebyshev basis) gives exactly a fresh block's numbers on the same backend."""
    H = _sector(3, seed=6)
    x = _rows(H.shape[0], 1, seed=7)[:, 0]
    used = ArrayChebyshevBlock(H, backend)
    used.apply(x, 9.0)
    for tau in (0.1, 2.5 * used.tau_s, 8.9, 8.7):
        assert np.array_equal(used.apply(x, tau), ArrayChebyshevBlock(H, backend).apply(x, tau)), tau


def test_a_stop_request_is_looked_at_between_the_orders_of_a_sub_step(monkeypatch):
    """A stop request raises Interrupted inside a sub-step's recurrence (between two sparse products), not only
    between evolutions."""
    from lru_mps.engines.sector import array_chebyshev

    H = _sector(3)
    blk = ArrayChebyshevBlock(H)
    x = _rows(H.shape[0], 1)[:, 0]
    K = len(blk.coefficients(blk.tau_s))
    assert K > 20
    seen = []

    def check():
        seen.append(blk.products)
        if len(seen) == 5:
            errors.check_stop()

    monkeypatch.setattr(array_chebyshev, "check_stop", check)
    monkeypatch.setattr(errors, "_stop_request", "SIGINT")
    with pytest.raises(Interrupted):
        blk.apply(x, 0.9 * blk.tau_s)
    assert len(seen) == 5  # the fifth order of the first sub-step


def test_the_engine_takes_the_library_path_only_with_a_backend():
    """numpy (the default) keeps the compiled block, and the engine's description as it was; another backend puts
    the Chebyshev blocks on it (the eigendecomposed ones and the states stay in numpy); a bad backend is refused by
    name; a run's backend reaches the engine through run_engine."""
    spec = _hot()
    real = spec.draw_realization(np.random.default_rng(1))
    assert type(SectorEngine(eig_max_dim=1).prepare(spec, real).block(3)) is ChebyshevBlock
    assert SectorEngine().describe() == {"engine": "sector", "eig_max_dim": 1000, "large": "chebyshev"}
    blk = SectorEngine(eig_max_dim=1, backend="numpy").on_backend("numpy").prepare(spec, real).block(3)
    assert type(blk) is ChebyshevBlock
    with pytest.raises(ParameterError, match="backend"):
        get_engine("sector", backend="jax")
    times = time_grid(10.0, 3)
    assert run_engine(RunSettings(times=times, engine="sector").for_engines()).backend == "numpy"
    if HAVE_TORCH:
        eng = run_engine(RunSettings(times=times, engine="sector", backend="torch:cpu").for_engines())
        assert eng.backend == "torch:cpu" and eng.horizon == 10.0 and eng.describe()["backend"] == "torch:cpu"
        prop = SectorEngine(eig_max_dim=1, backend="torch:cpu").prepare(spec, real)
        assert isinstance(prop.block(3), ArrayChebyshevBlock) and prop.block(3).backend == "torch:cpu"
        assert type(prop.block(0)).__name__ == "BlockPropagator"  # (one state: its eigendecomposition)


@torch_only
def test_a_short_run_on_torch_gives_the_numpy_runs_trajectories():
    """L = 6 at 250 mK with periodic feedback, the sector engine on its Chebyshev path (eig_max_dim = 1): the same
    records (events, populations, coherence) per trajectory on torch:cpu as on numpy to 1e-10, and through
    simulate() the same means."""
    from lru_mps import simulate

    spec = _hot("periodic")
    times = time_grid(20.0, 6)
    opts = {"eig_max_dim": 1}
    a_s = RunSettings(times=times, seed=9, engine="sector", engine_options=opts)
    b_s = RunSettings(times=times, seed=9, engine="sector", engine_options=opts, backend="torch:cpu")
    events = 0
    for i in range(2):
        a, b = one(spec, a_s, i), one(spec, b_s, i)
        assert records_differ(a, b, tol=1e-10) == [], i
        events += sum(len(r.events) for r in a.values())
    assert events > 2
    run = dict(engine="sector", t_final=12.0, time_points=5, trajectories=3, seed=2, workers=1, engine_options=opts)
    ra, rb = simulate(spec, **run), simulate(spec, backend="torch:cpu", **run)
    for name in ("leakage_array", "qubit_population", "qubit_coherence"):
        ma, mb = ra.observable(name).mean, rb.observable(name).mean
        assert np.abs(np.asarray(ma) - np.asarray(mb)).max() < 1e-10, name


def test_the_per_trajectory_policy_puts_its_sector_rows_on_the_backend():
    """--engine auto with a backend: its sector engine's Chebyshev blocks on the library (its MPS engine as it was),
    numpy leaving the policy as it is."""
    times = time_grid(10.0, 3)
    eng = run_engine(RunSettings(times=times, engine="auto").for_engines())
    assert eng.sector.backend == "numpy"
    if HAVE_TORCH:
        eng = run_engine(RunSettings(times=times, engine="auto", backend="torch:cpu").for_engines())
        assert eng.name == "auto" and eng.sector.backend == "torch:cpu" and eng.sector.horizon == 10.0


def test_a_block_runs_on_one_cpu_thread():
    """A block's rows run with one BLAS thread and, where torch is loaded, one torch thread; both put back after."""
    from threadpoolctl import threadpool_info

    from lru_mps.engines.common.arraylib import one_cpu_thread

    def blas():
        return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]

    before = blas()
    with one_cpu_thread("torch:cpu" if HAVE_TORCH else "numpy"):
        assert blas() and all(n == 1 for n in blas())
        if HAVE_TORCH:
            import torch

            assert torch.get_num_threads() == 1
    assert blas() == before
