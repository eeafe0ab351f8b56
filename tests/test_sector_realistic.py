"""The sector engine under realistic conditions (T1q, Tphi, a thermal array), and the per-trajectory engine choice.

* the Chebyshev propagation of large sectors against the dense matrix
  exponential, and its reuse of sub-step starts (bit-identical);
* sector = exact per trajectory (same seeds: same events, same observables)
  at L <= 6 with noise and a hot array, every reset kind, with the
  eigendecomposition and with the Chebyshev path;
* sector = MPS per trajectory at L = 10 for every reset kind on a hot array
  (short times here, L = 12 behind the ``long`` marker);
* `auto`'s MPS rows (threshold lowered) = the sector engine per record, to 12/J with events;
* a block's propagator (eigendecomposition or Chebyshev) priced against the run's horizon, with the same
  trajectories either way;
* the per-trajectory choice depends on the seed and the settings only.

Cost: about a minute on one core, most of it in the MPS trajectories.
"""

import numpy as np
import pytest
import scipy.linalg as sla
from scipy.sparse import diags as sp_diags

from conftest import long_scale
from helpers import one, records_differ
from lru_mps.engines import choose_engine, get_engine
from lru_mps.engines.sector import ExpmMultiplyBlock, sector_dimension, sector_hamiltonian
from lru_mps.engines.sector.chebyshev import ChebyshevBlock
from lru_mps.physics.model import ArraySpec
from lru_mps.run.settings import RunSettings, time_grid
from lru_mps.run.trajectories import draw, engine_mix, format_engine_mix, run_trajectories

RESETS = ("periodic", "random", "dissipation")


def _hot(L, reset, t1="30/J", tphi="20/J", temperature="250mK"):
    """Realistic conditions with short T1q, Tphi (events within a few 1/J) and a hot array."""
    return ArraySpec.from_user(length=L, conditions="realistic", reset=reset, rate="0.5J", t1=t1, tphi=tphi,
                               temperature=temperature)


@pytest.mark.parametrize("N", [2, 3])
def test_chebyshev_matches_the_dense_exponential(N):
    """exp(-i H_eff t) x on a sector (dissipation + noise: non-Hermitian) to 1e-11, over several sub-steps."""
    spec = _hot(7, "dissipation")
    real = spec.draw_realization(np.random.default_rng(4))
    H = sector_hamiltonian(spec, real, N)
    assert not np.allclose(H.toarray(), H.toarray().conj().T)  # the anti-Hermitian part is there
    x = np.random.default_rng(5).normal(size=H.shape[0]) * (1 + 0.5j)
    x /= np.linalg.norm(x)
    blk = ChebyshevBlock(H)
    ref = ExpmMultiplyBlock(H)
    for t in (0.3 * blk.tau_s, blk.tau_s, 2.0 * blk.tau_s, 7.31):
        exact = sla.expm(-1j * t * H.toarray()) @ x
        assert np.abs(blk.apply(x, t) - exact).max() < 1e-11, t
        assert np.abs(ref.apply(x, t) - exact).max() < 1e-10, t
    assert blk.apply(x, 7.31).shape == x.shape and np.linalg.norm(blk.apply(x, 7.31)) < 1.0  # decays


@pytest.mark.parametrize("N", [0, 1, 2])
def test_chebyshev_holds_on_blocks_narrow_against_their_decay(N):
    """The vacuum and the few-state blocks of a heated array (a thermal bath: the vacuum decays by heating, its
    spectrum has no width): the expansion's scale keeps T_k's growth bounded, so exp(-i H_eff t) x is exact to 1e-11
    (before: the scale was the spectrum's width alone, and such a block was off by up to 4e-5)."""
    spec = ArraySpec.from_user(length=4, reset="periodic", rate="0.5J", t1="10/J", tphi="100/J", temperature="250mK",
                               thermal_bath=True)
    real = spec.draw_realization(np.random.default_rng(0))
    H = sector_hamiltonian(spec, real, N)
    assert H.diagonal().imag.min() < -0.05  # decays
    x = np.random.default_rng(N).normal(size=H.shape[0]) * (1 - 0.3j)
    x /= np.linalg.norm(x)
    blk = ChebyshevBlock(H)
    for t in (0.43, 1.1, 2.0, 7.7):
        assert np.abs(blk.apply(x, t) - sla.expm(-1j * t * H.toarray()) @ x).max() < 1e-11, t


def test_chebyshev_kernel_is_the_plain_recurrence_bit_for_bit():
    """The compiled kernel (off-diagonal values as codes into a table of the distinct ones, real and imaginary parts
    side by side) gives exactly the numbers of the plain CSR recurrence written out here: each row's diagonal
    term, then its neighbours in column order, float64 throughout; the table holds every value exactly."""
    from lru_mps.engines.sector.chebyshev import _chebyshev, compact_values

    spec = _hot(6, "dissipation")
    H = sector_hamiltonian(spec, spec.draw_realization(np.random.default_rng(8)), 3)
    blk = ChebyshevBlock(H)
    data = (H - sp_diags(H.diagonal())).tocsr()
    data.sort_indices()
    vals = data.data.real / blk.r
    codes, table = compact_values(vals)
    assert np.array_equal(table[codes], vals) and len(table) < len(vals) and codes.dtype == np.uint8
    x = np.random.default_rng(9).normal(size=H.shape[0]) + 1j * np.random.default_rng(10).normal(size=H.shape[0])
    co = blk.coefficients(0.7 * blk.tau_s)
    dr, di, ip, ix = blk.dr, blk.di, data.indptr, data.indices

    def product(a):  # H' a in the kernel's order, real and imaginary parts
        out = np.empty((len(a), 2))
        for i in range(len(a)):
            sr = dr[i] * a[i, 0] - di[i] * a[i, 1]
            si = dr[i] * a[i, 1] + di[i] * a[i, 0]
            for j in range(ip[i], ip[i + 1]):
                sr += vals[j] * a[ix[j], 0]
                si += vals[j] * a[ix[j], 1]
            out[i] = sr, si
        return out

    a0 = np.column_stack([x.real, x.imag])
    out = np.column_stack([co[0].real * a0[:, 0] - co[0].imag * a0[:, 1], co[0].real * a0[:, 1] + co[0].imag * a0[:, 0]])
    a1 = product(a0)
    for k in range(1, len(co)):
        if k >= 2:
            a0, a1 = a1, 2.0 * product(a1) - a0
        out[:, 0] += co[k].real * a1[:, 0] - co[k].imag * a1[:, 1]
        out[:, 1] += co[k].real * a1[:, 1] + co[k].imag * a1[:, 0]
    none = np.zeros((0, 0))
    yr, yi = _chebyshev(blk.indptr, blk.indices, blk.codes, blk.table, dr, di, x.real.copy(), x.imag.copy(),
                        co.real.copy(), co.imag.copy(), none, none)
    assert np.array_equal(yr, out[:, 0]) and np.array_equal(yi, out[:, 1])


def test_chebyshev_reuse_of_sub_steps_is_bit_identical():
    """Evolving by tau from a start whose longer evolution was kept gives exactly a fresh block's numbers."""
    spec = _hot(8, "periodic")
    H = sector_hamiltonian(spec, spec.draw_realization(np.random.default_rng(6)), 3)
    x = np.random.default_rng(7).normal(size=H.shape[0]) + 0j
    used = ChebyshevBlock(H)
    used.apply(x, 9.0)
    for tau in (0.1, 2.5 * used.tau_s, 8.9):
        fresh = ChebyshevBlock(H)
        assert np.array_equal(used.apply(x, tau), fresh.apply(x, tau))


@pytest.mark.parametrize("L,N", [(3, 1), (5, 3), (8, 4), (12, 2)])
def test_level_populations_are_the_sparse_products_bit_for_bit(L, N):
    """A state's level populations (the compiled sum over configurations) are scipy's indicator.T @ w, bit for
    bit, and add up to the sector's excitation number (sum_l <n_l> = N)."""
    from lru_mps.engines.sector.state import _level_sums, sector_basis

    basis = sector_basis(L, N)
    rng = np.random.default_rng(L * 10 + N)
    w = rng.exponential(size=basis.dim) * rng.choice([1e-12, 1.0, 1e3], size=basis.dim)
    for level in (1, 2):
        want = basis.indicator[level].T @ w
        got = _level_sums(basis.indicator[level], w)
        assert np.array_equal(got, want), (level, np.max(np.abs(got - want)))
    p = w / w.sum()
    n = _level_sums(basis.indicator[1], p) + 2 * _level_sums(basis.indicator[2], p)
    assert abs(n.sum() - N) <= 1e-12 * N


@pytest.mark.parametrize("reset", RESETS)
@pytest.mark.parametrize("L,eig_max_dim", [(5, 1000), (5, 1), (6, 1000)])
def test_sector_follows_exact_trajectory_realistic(reset, L, eig_max_dim):
    """L = 5 and 6 at 250 mK with noise: same events and observables as the exact engine (eig and Chebyshev paths).

    Detects a 1e-8 difference in any record; events (jumps, measurements) asserted.
    """
    spec = _hot(L, reset)
    times = time_grid(25.0, 6)
    ex = RunSettings(times=times, seed=9, engine="exact")
    se = RunSettings(times=times, seed=9, engine="sector", engine_options={"eig_max_dim": eig_max_dim})
    events = 0
    for i in range(3):
        a, b = one(spec, ex, i), one(spec, se, i)
        assert records_differ(a, b, tol=1e-8) == [], (reset, i)
        events += sum(len(r.events) for r in a.values())
    assert events > 6


def test_a_block_takes_its_eigendecomposition_where_it_pays_to_the_run_horizon():
    """A run's sector blocks under eig_max_dim take the eigendecomposition only where it costs less than Chebyshev to
    t_final (eig_pays: EIG_COST d^3 / (d + nnz) against r t); without a horizon every such block does (the
    engine's own rule); run_engine gives the sector engine and auto's sector engine the run's t_final."""
    from lru_mps.engines import run_engine
    from lru_mps.engines.common.eigen import BlockPropagator
    from lru_mps.engines.sector.chebyshev import scale_radius, spectral_bounds
    from lru_mps.engines.sector.engine import EIG_COST, EIG_MIN_DIM, SectorEngine, eig_pays

    spec = _hot(12, "periodic")
    real = spec.draw_realization(np.random.default_rng(1))
    H = sector_hamiltonian(spec, real, 3)
    d = H.shape[0]
    assert d > EIG_MIN_DIM
    even = EIG_COST * d**3 / (d + H.nnz) / scale_radius(*spectral_bounds(H))  # the horizon where both cost the same
    assert 100.0 < even < 10_000.0
    assert isinstance(SectorEngine().prepare(spec, real).block(3), BlockPropagator)
    assert isinstance(SectorEngine().for_horizon(0.9 * even).prepare(spec, real).block(3), ChebyshevBlock)
    assert isinstance(SectorEngine().for_horizon(1.1 * even).prepare(spec, real).block(3), BlockPropagator)
    assert not eig_pays(H, 0.99 * even) and eig_pays(H, 1.01 * even)
    assert isinstance(SectorEngine(eig_max_dim=100).for_horizon(1e9).prepare(spec, real).block(3), ChebyshevBlock)
    assert eig_pays(sector_hamiltonian(spec, real, 1), 1e-9)  # (a small block: always eig)
    times = time_grid(40.0, 3)
    assert run_engine(RunSettings(times=times, engine="sector").for_engines()).horizon == 40.0
    assert run_engine(RunSettings(times=times, engine="auto").for_engines()).sector.horizon == 40.0


def test_a_real_symmetric_block_prices_its_eigh_and_its_stops():
    """An ideal chain's N = 2 block (1275 states at L = 50, real symmetric) past eig_max_dim takes the real
    eigendecomposition where it pays: EIG_COST_REAL d^3 / (d + nnz) once and EIG_STOP_COST_REAL d^2 / (d + nnz) at
    each stop (the run's time points and G t feedback measurements) against r t; up to EIG_REAL_DIM_FACTOR x
    eig_max_dim states; a realistic block (decay: not real symmetric) keeps the complex rule.  Both propagators
    give the same exp(-i H t) x."""
    from lru_mps.engines import run_engine
    from lru_mps.engines.common.eigen import BlockPropagator
    from lru_mps.engines.sector.chebyshev import scale_radius, spectral_bounds
    from lru_mps.engines.sector.engine import EIG_MAX_DIM, SectorEngine, eig_pays
    from lru_mps.engines.sector.state import (EIG_COST, EIG_COST_REAL, EIG_REAL_DIM_FACTOR, EIG_STOP_COST_REAL,
                                              is_real_symmetric)

    spec = ArraySpec.from_user(length=50, conditions="ideal")
    real = spec.draw_realization(np.random.default_rng(1))
    H = sector_hamiltonian(spec, real, 2)
    d, G, points = H.shape[0], spec.reset.rate, 201
    assert EIG_MAX_DIM < d <= EIG_REAL_DIM_FACTOR * EIG_MAX_DIM and spec.reset.kind == "periodic"
    assert is_real_symmetric(H)
    assert not is_real_symmetric(sector_hamiltonian(_hot(8, "periodic"), real, 2))
    A, B = EIG_COST_REAL * d**3 / (d + H.nnz), EIG_STOP_COST_REAL * d**2 / (d + H.nnz)
    r = scale_radius(*spectral_bounds(H))
    even = (A + B * points) / (r - B * G)  # the horizon where both cost the same (stops: points + G t)
    assert 100.0 < even < 10_000.0 and A < EIG_COST * d**3 / (d + H.nnz) / 10
    assert not eig_pays(H, 0.99 * even, points + G * 0.99 * even) and eig_pays(H, 1.01 * even, points + G * 1.01 * even)

    def block(engine, horizon):
        times = time_grid(horizon, points)
        eng = run_engine(RunSettings(times=times, engine="sector").for_engines()) if engine is None else \
            engine.for_horizon(horizon, points)
        return eng.prepare(spec, real).block(2)

    assert isinstance(block(None, 0.9 * even), ChebyshevBlock)  # (run_engine passes the time points on)
    eig = block(None, 1.1 * even)
    assert isinstance(eig, BlockPropagator) and eig.real and not np.iscomplexobj(eig.H)
    assert isinstance(SectorEngine().prepare(spec, real).block(2), ChebyshevBlock)  # (no horizon: eig_max_dim)
    small = int(np.ceil(d / EIG_REAL_DIM_FACTOR))
    assert isinstance(block(SectorEngine(eig_max_dim=small - 1), 10 * even), ChebyshevBlock)
    assert isinstance(block(SectorEngine(eig_max_dim=small), 10 * even), BlockPropagator)
    x = np.random.default_rng(2).normal(size=d) + 1j * np.random.default_rng(3).normal(size=d)
    x /= np.linalg.norm(x)
    assert np.linalg.norm(eig.apply(x, 37.3) - ChebyshevBlock(H).apply(x, 37.3)) < 1e-10


def test_the_block_rule_is_part_of_a_runs_key(monkeypatch):
    """A change of the rule that picks a block's propagator changes a sector or auto run's cache key (a resumed run
    never mixes blocks made under two rules); an exact run's key does not hold it."""
    import lru_mps.engines.sector.state as sector_engine
    from lru_mps.run.cache import run_key

    spec = _hot(8, "periodic")
    settings = {e: RunSettings(times=time_grid(40.0, 3), engine=e) for e in ("sector", "auto", "exact")}
    before = {e: run_key(spec, st, None)[0] for e, st in settings.items()}
    monkeypatch.setattr(sector_engine, "EIG_COST", 3.0)
    after = {e: run_key(spec, st, None)[0] for e, st in settings.items()}
    assert before["sector"] != after["sector"] and before["auto"] != after["auto"]
    assert before["exact"] == after["exact"]


def test_the_horizon_rule_keeps_every_trajectory(monkeypatch):
    """L = 12 at 250 mK over 25/J: the three-excitation sector (352 states) runs on Chebyshev under the rule and
    through its eigendecomposition with EIG_COST = 0: the same events and observables (1e-8)."""
    import lru_mps.engines.sector.state as sector_engine

    spec = _hot(12, "periodic")
    st = RunSettings(times=time_grid(25.0, 6), seed=5, engine="sector")
    indices = [i for i in range(40) if draw(spec, st, i).nmax >= 3][:3]
    assert len(indices) == 3
    rule = [one(spec, st, i) for i in indices]
    monkeypatch.setattr(sector_engine, "EIG_COST", 0.0)
    for i, a in zip(indices, rule):
        assert records_differ(a, one(spec, st, i), tol=1e-8) == [], i


def _sector_vs_mps(L, reset, t_final, indices, inits=("leakage", "coherence")):
    # T1q = Tphi = 2/J (64 ns at 5 MHz, under what a user may type): events within a few 1/J, set in internal units
    from lru_mps.physics.conditions import Conditions

    spec = _hot(L, reset).replace(conditions=Conditions(T1q=2.0, Tphi=2.0, temperature_K=0.25))
    times = time_grid(t_final, 3)
    se = RunSettings(times=times, seed=4, engine="sector", inits=inits)
    mp = RunSettings(times=times, seed=4, engine="mps", inits=inits, engine_options={"dt": 0.004, "order": 4})
    events, nmax = {}, 0
    for i in indices:
        a, b = one(spec, se, i), one(spec, mp, i)
        for init in inits:
            ea, eb = a[init].events, b[init].events
            assert [(e.channel, e.site, e.outcome) for e in ea] == [(e.channel, e.site, e.outcome) for e in eb]
            assert all(abs(x.time - y.time) < 1e-6 for x, y in zip(ea, eb))
            assert np.abs(a[init].populations - b[init].populations).max() < 1e-6
            assert np.abs(a[init].coherence - b[init].coherence).max() < 1e-6
            for e in ea:
                events[e.channel] = events.get(e.channel, 0) + 1
        nmax = max(nmax, draw(spec, se, i).nmax)
    return events, nmax


@pytest.mark.parametrize("reset", RESETS)
def test_sector_follows_mps_trajectory_L10(reset):
    """L = 10, 250 mK (several thermal excitations), strong noise so that jumps happen within 0.2/J."""
    events, nmax = _sector_vs_mps(10, reset, 0.2, [0])
    assert sum(events.values()) > 0 and nmax >= 3


@pytest.mark.long
@pytest.mark.parametrize("reset", RESETS)
def test_sector_follows_mps_trajectory_L12_long(reset):
    """L = 12 to 2/J, trajectory indices 0-2 (reduced form: 0.4/J, index 2, whose clocks put a periodic
    measurement at 0.07/J, a random one at 0.21/J and a dissipation jump at 0.32/J: every reset kind acts,
    asserted from the records, besides decay and dephasing jumps; the MPS engine is the slow one).  Detects
    a difference of 1e-6 in any population or coherence, or one differing event."""
    full = long_scale() >= 1
    events, nmax = _sector_vs_mps(12, reset, 2.0 * long_scale() if full else 0.4, [0, 1, 2] if full else [2])
    reset_channel = "dissipation" if reset == "dissipation" else "measurement"
    assert events.get(reset_channel, 0) > 0 and events.get("dephasing", 0) + events.get("decay", 0) > 0, events
    assert nmax >= 3


def _states(L, N):
    """States in the excitation-number sector N of L qutrits (the coefficient of x^N in (1 + x + x^2)^L)."""
    return int(np.polynomial.polynomial.polypow([1, 1, 1], L)[N])


@pytest.mark.parametrize("reset", RESETS)
def test_auto_mps_rows_match_the_sector_engine(reset):
    """`auto` with its sector threshold lowered to the N = 4 sector at L = 8 (266 states): a row whose thermal
    start holds 5 excitations (trajectory 3: |2> on the qubit, three thermal ones) goes to MPS (default
    settings), one with 2 (trajectory 2) to the sector engine; both agree with the sector engine per record
    (populations, coherence, event channels, outcomes and times) to 1e-6 up to t = 12/J, W = 20 J, 400 mK,
    T1q = Tphi = 100/J, reset at 0.1 J (the trajectories of test_mps.py's hard MPS tests).  Detects an error
    of 1e-6 in any record of an MPS row (measured: below 1e-7)."""
    spec = ArraySpec.from_user(length=8, conditions="realistic", reset=reset, rate="0.1J", t1="100/J",
                               tphi="100/J", temperature="400mK")
    times = time_grid(12.0, 25)
    inits = ("leakage",)
    auto = RunSettings(times=times, seed=1, engine="auto", inits=inits,
                       engine_options={"sector_max_dim": _states(8, 4)})
    sector = RunSettings(times=times, seed=1, engine="sector", inits=inits)
    idx = [2, 3]
    got = run_trajectories(spec, auto, idx)
    want = run_trajectories(spec, sector, idx)
    assert [r["leakage"].diagnostics["engine_mps"] for r in got] == [0.0, 1.0]  # the mix holds an MPS row
    assert engine_mix({"leakage": {"engine_mps": np.array([r["leakage"].diagnostics["engine_mps"] for r in got])}}) \
        == {"sector": 1, "mps": 1}
    for i, a, b in zip(idx, got, want):
        assert records_differ(a, b, tol=1e-6) == [], (reset, i)
    events = [len(r["leakage"].events) for r in want]
    assert min(events) > 0, events  # jumps or measurements in both rows, the MPS one included
    print(reset, "events per row", events, "MPS row", got[1]["leakage"].diagnostics)


def test_auto_is_per_trajectory_at_T_above_zero_on_long_arrays():
    assert choose_engine(ArraySpec.from_user(length=8))[0] == "auto"
    assert choose_engine(ArraySpec.from_user(length=8, temperature=0))[0] == "sector"
    assert choose_engine(ArraySpec.from_user(length=6))[0] == "exact"
    assert sector_dimension(20, 3) == 1520 and sector_dimension(4, 8) == 1 and sector_dimension(3, 7) == 0


def test_per_trajectory_choice_depends_on_the_seed_only():
    """Each row's engine follows its own thermal sample; results do not depend on how indices are grouped."""
    spec = ArraySpec.from_user(length=8, temperature="300mK")
    engine = get_engine("auto", sector_max_dim=sector_dimension(8, 3))
    settings = RunSettings(times=time_grid(0.05, 2), seed=2, engine="auto",
                           engine_options={"sector_max_dim": sector_dimension(8, 3), "dt": 0.01})
    idx = list(range(4))
    together = run_trajectories(spec, settings, idx)
    apart = [run_trajectories(spec, settings, [i])[0] for i in reversed(idx)][::-1]
    choices = []
    for i, a, b in zip(idx, together, apart):
        assert records_differ(a, b, tol=0.0) == []
        d = draw(spec, settings, i)
        for q, init in enumerate(settings.inits):
            name = engine.choose(spec.L, d.nmax_per_init[q])
            assert a[init].diagnostics["engine_mps"] == float(name == "mps")
            assert a[init].diagnostics["sector_dimension"] == sector_dimension(8, d.nmax_per_init[q])
            assert set(a[init].diagnostics) == set(b[init].diagnostics)
            choices.append(name)
    assert {"sector", "mps"} <= set(choices)  # the sample exercises both engines
    diags = {init: {k: np.array([r[init].diagnostics[k] for r in together]) for k in together[0][init].diagnostics}
             for init in settings.inits}
    mix = engine_mix(diags)
    assert mix == {"sector": choices.count("sector"), "mps": choices.count("mps")}
    assert format_engine_mix(diags) == f"sector {mix['sector']:,} / mps {mix['mps']:,} trajectories"
    assert engine_mix({"leakage": {"discarded_weight": np.zeros(3)}}) == {}


def test_a_start_over_the_sector_limit_is_refused_before_any_work():
    """A thermal start that fills a sector past MAX_SECTOR_DIM (a stack and four thermal excitations on the 33 sites
    of the 5 x 5 routing layout: 2.5 million states) is refused at once naming the temperature, and on a graph
    without sending the user to the chain-only MPS engine; one excitation fewer is built."""
    from lru_mps.engines.sector import MAX_SECTOR_DIM
    from lru_mps.errors import ParameterError
    from lru_mps.physics.geometry import lru_grid

    g = lru_grid(5, 5)
    spec = ArraySpec.from_user(geometry=g.relabel(0, list(g.reset_sites)), conditions="realistic")
    prop = get_engine("sector").prepare(spec, spec.draw_realization(np.random.default_rng(0)))
    levels = [2, 1, 0, 1, 0, 1, 0, 1] + [0] * (spec.L - 8)
    vectors = [np.eye(3)[k] for k in levels]
    assert sector_dimension(spec.L, 6) > MAX_SECTOR_DIM
    with pytest.raises(ParameterError) as err:
        prop.state(vectors)
    msg = str(err.value)
    assert err.value.name == "temperature" and "N = 6" in msg and "MPS" not in msg and "\n" not in msg, msg
    levels[7] = 0
    assert prop.state([np.eye(3)[k] for k in levels]).numbers() == [5]
