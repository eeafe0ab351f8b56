"""The hand-over of a sector trajectory to MPS (issue 22 item 3; lru_mps/engines/auto.py, docs/physics.md §5.1).

Where heating (or a readout error's false report) raises the excitation
number, ``--engine auto`` starts a row on the engine of its initial sector and
moves a sector row to MPS, from its exact state, at the first event that
would raise it into a sector of more than ``sector_max_dim`` states.
Checked here:

* the MPS built from a sector state's configurations is that state (1e-12 at L = 6, several sectors, both
  kernels), and TEBD (lean kernel) evolves it as the sector engine does (to the Trotter error);
* per trajectory, with a limit that hands rows over (L = 5, hot bath): the same events and observables as
  the trajectory on the sector engine alone and on MPS alone (1e-5, the MPS tolerance of the engine
  comparisons), rows that hand over and rows that do not, and diagnostics that say which;
* without growth (no bath, no readout error) nothing is wrapped.
"""

import numpy as np

from helpers import one, records_differ
from lru_mps.engines.auto import PerTrajectoryEngine
from lru_mps.engines.mps.engine import MPSEngine
from lru_mps.engines.mps.state import MPSState
from lru_mps.engines.sector.engine import SectorEngine, SectorState, sector_basis
from lru_mps.physics.rules import number_can_grow
from lru_mps.physics.model import ArraySpec
from lru_mps.run.settings import RunSettings, time_grid

HOT = dict(length=5, reset="periodic", rate="0.5J", t1="10/J", tphi="100/J", temperature="250mK",
           thermal_bath=True)
MPS_OPTIONS = {"dt": 0.01, "order": 4}


def _random_sector_state(spec, real, sectors, rng):
    prop = SectorEngine().prepare(spec, real)
    vecs = {N: rng.standard_normal(sector_basis(spec.L, N).dim) + 1j * rng.standard_normal(sector_basis(spec.L, N).dim)
            for N in sectors}
    return SectorState(prop, vecs)


def test_mps_from_configurations_is_the_sector_state():
    spec = ArraySpec.from_user(**{**HOT, "length": 6})
    real = spec.draw_realization(np.random.default_rng(1))
    state = _random_sector_state(spec, real, (2, 3, 5), np.random.default_rng(0))
    occ, amps = state.configurations()
    later = state.copy()
    later.evolve(0.2)
    for kernel in ("lean", "quimb"):
        prop = MPSEngine(kernel=kernel, cutoff=0.0, max_bond=1000, **MPS_OPTIONS).prepare(spec, real)
        m = prop.state_from_configurations(occ, amps)
        assert np.max(np.abs(m.dense() - state.dense())) < 1e-12 * np.max(np.abs(amps)), kernel
        assert abs(m.norm2() - state.norm2()) < 1e-12 * state.norm2() and m.diagnostics()["norm_error"] < 1e-12
        assert m.diag["discarded_weight"] == 0.0 and m.diag["max_bond"] > 1
        if kernel == "lean":  # TEBD from the built row: the sector engine's evolution to the Trotter error (the
            for _ in range(20):  # quimb kernel's first gates compile quimb's own kernels: ~15 s in CI for nothing new)
                m.evolve(0.01)
            assert np.max(np.abs(m.dense() - later.dense())) < 1e-5 * np.max(np.abs(later.dense()))
    # a product state's configurations give the product row the engine builds from site vectors
    prop = MPSEngine(**MPS_OPTIONS).prepare(spec, real)
    vecs = [np.array([0, 0, 1.0])] + [np.array([0.8, 0.6, 0])] + [np.array([1.0, 0, 0])] * 4
    product = prop.state(vecs)
    single = SectorEngine().prepare(spec, real).state(vecs)
    built = prop.state_from_configurations(*single.configurations())
    assert np.max(np.abs(built.dense() - product.dense())) < 1e-14


def test_truncation_is_reported():
    spec = ArraySpec.from_user(**{**HOT, "length": 6})
    real = spec.draw_realization(np.random.default_rng(1))
    state = _random_sector_state(spec, real, (3,), np.random.default_rng(2))
    occ, amps = sector_basis(6, 3).occ, state.vecs[3]
    m = MPSEngine(max_bond=2, **MPS_OPTIONS).prepare(spec, real).state_from_configurations(occ, amps)
    full = state.dense() / np.sqrt(state.norm2())
    overlap = abs(np.vdot(m.dense(), full)) ** 2 / m.norm2()
    assert m.diag["max_bond"] == 2 and 0.05 < m.diag["discarded_weight"] < 1
    # the kept part is the best rank-2 cut at the worst bond only approximately; the fidelity lost is at least
    # the weight discarded at one cut and at most the sum over cuts (the sum reported)
    assert 1 - overlap <= m.diag["discarded_weight"] + 1e-12


def test_hand_over_before_the_raising_operation_only():
    """At the limit 30 (L = 5: N <= 3), lowering and number-keeping maps stay on the sector engine; a raising
    map (a readout error's X_02 at the reset site, heating's a^dag) moves the state to MPS first; the result
    is the sector engine's (computed without a limit) either way."""
    from lru_mps.engines.auto import HandoverState
    from lru_mps.physics import operators as ops

    spec = ArraySpec.from_user(**HOT)
    real = spec.draw_realization(np.random.default_rng(1))
    sector = _random_sector_state(spec, real, (2, 3), np.random.default_rng(5))
    made = []

    def mps_propagator():
        made.append(MPSEngine(**MPS_OPTIONS).prepare(spec, real))
        return made[-1]

    state = HandoverState(sector.copy(), mps_propagator, 30)
    x02 = np.outer(ops.ket(2), ops.ket(0)) + np.outer(ops.ket(0), ops.ket(2))
    for op, site, on_mps in ((ops.a, 1, False), (ops.n, 2, False), (x02, 4, True), (ops.adag, 0, True)):
        sector.apply_local(op, site)
        state.apply_local(op, site)
        assert state.handed_over == on_mps, (op, site)
        assert np.max(np.abs(state.dense() - sector.dense())) < 1e-12 * np.max(np.abs(sector.dense()))
    assert state.handed_over and len(made) == 1 and isinstance(state.current, MPSState)
    assert state.copy().handed_over and state.diagnostics()["handed_over"] == 1.0


def _runs(spec, indices, **auto_options):
    times = time_grid(16.0, 4)
    settings = {name: RunSettings(times=times, seed=3, engine=name, inits=("leakage", "qubit"),
                                  engine_options=options)
                for name, options in (("sector", {}), ("mps", MPS_OPTIONS),
                                      ("auto", {**MPS_OPTIONS, **auto_options}))}
    return {name: [one(spec, s, i, keep_states=True) for i in indices] for name, s in settings.items()}


def test_a_handed_over_trajectory_is_the_same_trajectory():
    """sector_max_dim = 30 at L = 5: N <= 3 (30 states) on the sector engine, N = 4 (45) on MPS, so a heating
    jump from N = 3 hands the row over.  Trajectory 3's qubit row does (found by running 0-7: its heating
    jumps come late, so it is cheap), trajectory 0 stays on the sector engine; each trajectory equals its
    sector-only (exact) and MPS-only runs, events included."""
    spec = ArraySpec.from_user(**HOT)
    runs = _runs(spec, (0, 3), sector_max_dim=30)
    handed = stayed = 0
    for i, (a, s, m) in enumerate(zip(runs["auto"], runs["sector"], runs["mps"])):
        assert records_differ(a, s, tol=1e-5) == [], i
        assert records_differ(a, m, tol=1e-5) == [], i
        for init, rec in a.items():
            d = rec.diagnostics
            if d["handed_over"]:
                handed += 1
                assert d["engine_mps"] == 1.0 and d["max_bond"] > 1
                assert [e for e in rec.events if e.channel == "heating"]  # what raised it
                assert isinstance(rec.final_state.current, MPSState) and max(s[init].final_state.numbers()) > 3
            elif d["engine_mps"] == 0.0:
                stayed += 1
                assert type(rec.final_state.current) is SectorState and max(rec.final_state.current.numbers()) <= 3
    assert handed >= 1 and stayed >= 1, (handed, stayed)


def test_no_growth_no_wrapper():
    """Without a bath or a readout error nothing hands over: the rows run on the plain engines' states.  (The
    sector rows of an index run together, so a row's jump-time root finding can differ from its sector-only
    run by ~1e-9, as before the hand-over existed.)"""
    spec = ArraySpec.from_user(**{**HOT, "thermal_bath": False})
    assert not number_can_grow(spec)
    runs = _runs(spec, (0, 3), sector_max_dim=30)
    for a, s in zip(runs["auto"], runs["sector"]):
        assert records_differ(a, s, tol=1e-8) == []
        for r in a.values():
            assert r.diagnostics["handed_over"] == 0.0
            assert type(r.final_state) is (SectorState if r.diagnostics["engine_mps"] == 0.0 else MPSState)


def test_auto_engine_chooses_on_the_initial_sector():
    eng = PerTrajectoryEngine()
    assert eng.choose(16, 2) == "sector" and eng.choose(20, 8) == "mps"  # N = 8 at L = 20: 1.4e6 states
    small = PerTrajectoryEngine(sector_max_dim=50)
    assert small.choose(5, 2) == "sector" and small.choose(5, 5) == "mps"  # 51 states
