"""The sector engine (:class:`SectorEngine`): exact fixed-N sectors for long arrays with few excitations.

What it holds and how a state evolves is :mod:`lru_mps.engines.sector.state` (the sector bases, the sector
H_eff, the propagator and the ordinary state; its names are importable from here too); the rows whose sectors
are all small advance together in its batched store (:mod:`lru_mps.engines.sector.batch`).
"""

from __future__ import annotations

from ...errors import require
from ...physics.model import ArraySpec, Realization
from ..common.arraylib import BACKENDS, ArrayLib
from .batch import SectorBatch
from .state import (EIG_COST, EIG_MAX_DIM, EIG_MIN_DIM, MAX_SECTOR_DIM, ExpmMultiplyBlock, SectorBasis,
                    SectorPropagator, SectorState, block_rule, bond_hop, eig_pays, largest_number, sector_basis,
                    sector_dimension, sector_hamiltonian, transition)

__all__ = ["EIG_COST", "EIG_MAX_DIM", "EIG_MIN_DIM", "MAX_SECTOR_DIM", "ExpmMultiplyBlock", "SectorBasis",
           "SectorEngine", "SectorPropagator", "SectorState", "block_rule", "bond_hop", "eig_pays", "largest_number",
           "sector_basis", "sector_dimension", "sector_hamiltonian", "transition"]


class SectorEngine:
    """Exact fixed-N sector engine (few excitations, long arrays; an :class:`~lru_mps.engines.protocol.Engine`)."""

    name = "sector"
    max_length = 400

    def __init__(self, eig_max_dim: int = EIG_MAX_DIM, large: str = "chebyshev", backend: str = "numpy"):
        require(int(eig_max_dim) == eig_max_dim and eig_max_dim >= 1, "eig_max_dim", eig_max_dim, "an integer >= 1")
        require(large in ("chebyshev", "expm_multiply"), "large", large, "chebyshev or expm_multiply")
        require(backend in BACKENDS, "backend", backend, f"one of {', '.join(BACKENDS)}")
        if backend != "numpy":
            ArrayLib(backend)  # installed, and a GPU where one is named
        self.eig_max_dim = int(eig_max_dim)
        self.large = large
        #: array library of the Chebyshev blocks (numpy: the compiled kernel; lru_mps.engines.sector.array_chebyshev)
        self.backend = backend
        self.horizon: float | None = None
        self.time_points = 0

    def for_horizon(self, horizon: float, time_points: int = 0) -> "SectorEngine":
        """This engine for a run to ``horizon`` (1/J) that records ``time_points`` times: its blocks under
        ``eig_max_dim`` (a real symmetric one: EIG_REAL_DIM_FACTOR times that) take the eigendecomposition only where
        it pays (:func:`eig_pays`, with the time points and the feedback measurements as the stops)."""
        out = SectorEngine(self.eig_max_dim, self.large, self.backend)
        out.horizon, out.time_points = float(horizon), int(time_points)
        return out

    def on_backend(self, backend: str) -> "SectorEngine":
        """This engine with its Chebyshev blocks on the array library ``backend`` (a run's ``backend``; the
        eigendecomposed blocks, the states and the events stay in numpy on the host)."""
        out = SectorEngine(self.eig_max_dim, self.large, backend)
        out.horizon, out.time_points = self.horizon, self.time_points
        return out

    def prepare(self, spec: ArraySpec, real: Realization) -> SectorPropagator:
        return SectorPropagator(spec, real, self.eig_max_dim, self.large, self.horizon, self.backend, self.time_points)

    def batch_store(self) -> type[SectorBatch]:
        """:class:`~lru_mps.engines.sector.batch.SectorBatch`: the rows whose sectors are all small advance together
        (its ``largest_number``); the others run one at a time (a StateList of :class:`SectorState`)."""
        return SectorBatch

    def check_diagnostics(self, diag: dict, label: str) -> None:
        """Exact propagation: nothing to check."""

    def describe(self) -> dict:
        out = {"engine": self.name, "eig_max_dim": self.eig_max_dim, "large": self.large}
        return out if self.backend == "numpy" else {**out, "backend": self.backend}
