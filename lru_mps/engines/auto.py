"""The per-trajectory engine policy: the fixed-N sector engine where a trajectory's sectors are small, MPS otherwise.

Without a thermal bath or a readout error every channel lowers or keeps the
excitation number N and H_eff conserves it, so a trajectory never leaves the
sectors N <= N0 of its sampled initial product state (N0 = the sum of the largest level on each site: 2 for |2> on
the qubit, 1 for the coherence state, plus the thermal levels).  The sector
engine holds it exactly; its cost grows with the dimension of the N0 sector
(the coefficient of x^N0 in (1 + x + x^2)^L), the MPS engine's does not.  So
each trajectory (index, initial state) is given to the sector engine when
that dimension is at most ``sector_max_dim`` and to the MPS engine otherwise:
the choice depends on the trajectory's seed (through its thermal sample) and
the settings only, never on the batch, the worker or the run it is part of.

Where events can raise N (a thermal bath's heating, a readout error's false
report: ``lru_mps.physics.rules.number_can_grow``) a row still starts on the engine of
its initial sector, and a sector row that would be raised into a sector of
more than ``sector_max_dim`` states is handed over to MPS at that event, from
its exact state (:class:`HandoverState`; its diagnostics then say
``handed_over`` = 1 and ``engine_mps`` = 1).  The hand-over happens *before*
the raising operation: the exact sector state becomes an MPS
(:meth:`MPSPropagator.state_from_configurations`, cut at the MPS engine's
cutoff and bond) and the row goes on as an MPS state, with the MPS engine's
time step, for the rest of the trajectory.  The random stream is the row's
own throughout (the loop draws the same numbers whatever holds the state),
so where and whether it hands over is decided by its own events: the
trajectory is a function of its seed only, and it agrees with the same
trajectory run on either engine alone within the MPS engine's accuracy
(tests/test_handover.py).  The loop reads a state's ``time_step`` at every
advance, so a row that can hand over runs in a store of its own
(:mod:`lru_mps.run.trajectories`).
"""

from __future__ import annotations

import copy
from typing import Callable

import numpy as np

from ..errors import require
from ..physics.rules import number_can_grow
from .mps.engine import MPSEngine
from .row_states import IndexRows, RowPreparer, RowState
from .sector.engine import EIG_MAX_DIM, SectorEngine, SectorState, sector_dimension

#: above this many states in a trajectory's largest sector the MPS engine takes it
SECTOR_AUTO_MAX_DIM = 1_000_000

#: the diagnostics every trajectory of a per-trajectory run reports (the same keys for both engines)
DIAGNOSTIC_KEYS = ("engine_mps", "sector_dimension", "discarded_weight", "norm_error", "max_bond", "handed_over")


class PerTrajectoryEngine:
    """`--engine auto` at T > 0 on long arrays: sector or MPS, chosen per trajectory (module docstring).

    An :class:`~lru_mps.engines.protocol.Engine` without ``prepare``: the
    propagator comes from the engine :meth:`engine` names for a trajectory.
    """

    name = "auto"
    max_length = min(SectorEngine.max_length, MPSEngine.max_length)

    def __init__(self, sector_max_dim: int = SECTOR_AUTO_MAX_DIM, eig_max_dim: int = EIG_MAX_DIM, large: str = "chebyshev",
                 **mps_options):
        require(int(sector_max_dim) == sector_max_dim and sector_max_dim >= 1, "sector_max_dim", sector_max_dim,
                "an integer >= 1 (states of the largest sector a trajectory may have on the sector engine)")
        self.sector_max_dim = int(sector_max_dim)
        self.sector = SectorEngine(eig_max_dim=eig_max_dim, large=large)
        self.mps = MPSEngine(**mps_options)

    def batch_store(self) -> None:
        """None: each trajectory runs on its chosen engine's ordinary states."""
        return None

    def for_horizon(self, horizon: float, time_points: int = 0) -> "PerTrajectoryEngine":
        """This policy for a run to ``horizon`` (1/J) with ``time_points``: its sector engine's
        :meth:`SectorEngine.for_horizon`."""
        out = copy.copy(self)
        out.sector = self.sector.for_horizon(horizon, time_points)
        return out

    def on_backend(self, backend: str) -> "PerTrajectoryEngine":
        """This policy with its sector engine's Chebyshev blocks on the array library ``backend``
        (:meth:`SectorEngine.on_backend`; its MPS rows run one at a time on the host as before)."""
        out = copy.copy(self)
        out.sector = self.sector.on_backend(backend)
        return out

    def choose(self, L: int, nmax: int) -> str:
        """'sector' or 'mps' for a trajectory on L sites whose initial state reaches the sector N = nmax."""
        return "sector" if sector_dimension(L, nmax) <= self.sector_max_dim else "mps"

    def handing_over(self, state, mps_propagator) -> HandoverState:
        """A sector row's state that moves to MPS when an event would raise it past ``sector_max_dim`` states
        (``mps_propagator``: a callable giving the realization's MPS propagator)."""
        return HandoverState(state, mps_propagator, self.sector_max_dim)

    def engine(self, name: str):
        return self.sector if name == "sector" else self.mps

    def row_preparer(self, spec, free_spec=None, fixed=None) -> "AutoRowPreparer":
        """The rows of a run under this policy (:mod:`lru_mps.engines.row_states`); a chain only (it may hand rows to MPS)."""
        require(spec.is_chain, "engine", "auto", "a chain for the per-trajectory policy (it may hand rows to the MPS "
                "engine)", "use the exact or sector engine on a graph geometry")
        return AutoRowPreparer(self, spec, free_spec, fixed)

    def diagnostics(self, name: str, L: int, nmax: int, diag: dict) -> dict:
        """A trajectory's diagnostics on the common keys (:data:`DIAGNOSTIC_KEYS`; 0 where an engine has none)."""
        out = {k: float(diag.get(k, 0.0)) for k in DIAGNOSTIC_KEYS}
        out["engine_mps"] = float(name == "mps" or out["handed_over"] > 0)
        out["sector_dimension"] = float(sector_dimension(L, nmax))
        return out

    def check_diagnostics(self, diag: dict, label: str) -> None:
        """The MPS engine's checks (truncation, norm) on the trajectories it ran; the sector engine is exact."""
        if diag.get("engine_mps", 0.0):
            self.mps.check_diagnostics(diag, label)

    def describe(self) -> dict:
        return {"engine": self.name, "sector_max_dim": self.sector_max_dim, "sector": self.sector.describe(),
                "mps": self.mps.describe()}


class AutoRowPreparer(RowPreparer):
    """The rows of a run under the per-trajectory policy: each row on the engine of its initial sector."""

    def for_index(self, real, nmax_per_init) -> "AutoIndexRows":
        return AutoIndexRows(self, self.fixed if self.fixed is not None else real, nmax_per_init)


class AutoIndexRows(IndexRows):
    """One index's rows: the sector engine where a row's largest sector is small, MPS otherwise; where events can
    raise N (``number_can_grow``) a sector row is a :class:`HandoverState` in a store of its own."""

    def engine_of(self, q: int) -> str:
        return self.preparer.engine.choose(self.preparer.spec.L, self.nmax[q])

    def _mps(self):
        p = self.preparer
        return p.propagator(self._cache, "mps", p.engine.mps, p.spec, self.real)

    def state(self, q: int, product) -> RowState:
        p = self.preparer
        if self.engine_of(q) == "mps":
            return RowState(self._mps().state(product))
        state = p.propagator(self._cache, "sector", p.engine.sector, p.spec, self.real).state(product)
        if number_can_grow(p.spec):
            return RowState(p.engine.handing_over(state, self._mps), alone=True)
        return RowState(state)

    def free_propagator(self, q: int):
        p = self.preparer
        name = self.engine_of(q)
        return p.propagator(self._cache, f"free {name}", p.engine.engine(name), p.free_spec, self.real)

    def diagnostics(self, q: int, diag: dict) -> dict:
        return self.preparer.engine.diagnostics(self.engine_of(q), self.preparer.spec.L, self.nmax[q], diag)


class HandoverState:
    """A TrajectoryState: a sector row that moves to MPS before an operation (``apply_local``: a jump or a
    feedback map) would give it a component in a sector of more than ``max_dim`` states (module docstring).

    ``mps_propagator``: a callable returning the realization's MPS propagator
    (built on the first hand-over, shared by the rows of an index).
    ``current`` is the state that holds the row now (a sector state, then an
    MPS state); the trajectory methods act on it.
    """

    def __init__(self, inner, mps_propagator: Callable[[], object], max_dim: int):
        self.current = inner
        self.mps_propagator = mps_propagator
        self.max_dim = int(max_dim)

    @property
    def handed_over(self) -> bool:
        """Whether the row has moved to MPS (its state is no longer a sector state)."""
        return not isinstance(self.current, SectorState)

    @property
    def time_step(self):
        return self.current.time_step

    def evolve(self, dt: float) -> None:
        self.current.evolve(dt)

    def norm2(self) -> float:
        return self.current.norm2()

    def site_populations(self) -> np.ndarray:
        return self.current.site_populations()

    def site_rdm(self, site: int) -> np.ndarray:
        return self.current.site_rdm(site)

    def scale(self, factor: float) -> None:
        self.current.scale(factor)

    def dense(self) -> np.ndarray:
        """The current state's full 3^L vector (small L only)."""
        return self.current.dense()

    def copy(self) -> "HandoverState":
        return HandoverState(self.current.copy(), self.mps_propagator, self.max_dim)

    def apply_local(self, op: np.ndarray, site: int) -> None:
        """op on ``site``; a sector state first moves to MPS if op would reach a sector of more than max_dim."""
        if not self.handed_over and self._outgrows(op):
            self.hand_over()
        self.current.apply_local(op, site)

    def _outgrows(self, op: np.ndarray) -> bool:
        shifts = {i - j for i in range(3) for j in range(3) if op[i, j] != 0 and i > j}
        L = self.current.L
        return any(sector_dimension(L, N + d) > self.max_dim for N in self.current.numbers() for d in shifts)

    def hand_over(self) -> None:
        """The sector state, exactly as it is, becomes an MPS state (cut at the MPS engine's cutoff and bond)."""
        self.current = self.mps_propagator().state_from_configurations(*self.current.configurations())

    def diagnostics(self) -> dict:
        """The MPS state's diagnostics after a hand-over (with ``handed_over`` = 1), else none."""
        if not self.handed_over:
            return {"handed_over": 0.0}
        return {**self.current.diagnostics(), "handed_over": 1.0}
