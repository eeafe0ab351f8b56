"""The sector engine's batched store: rows in small sectors advanced together, as the exact batch advances them.

On the routing layouts and the short chains of the main study every row at 0 K lives in sectors of a few to a
few hundred states (the leakage start has N = 2: L(L+1)/2 states), where a row's time is the trajectory loop's
per-event bookkeeping, not its propagation.  :class:`SectorBatch` is the exact batch
(:class:`~lru_mps.engines.exact.batch.ExactBatch`: the realizations' blocks eigendecomposed in one stacked call,
the rows' grid steps one batched matmul per block, measurements and resets of all rows in a few array
operations, the feedback trains) on the sector bases N = 0..N_max (:mod:`lru_mps.engines.sector.kept_basis`)
instead of the sorted 3^L space.  It holds a run's rows whose kept sectors all have at most
:data:`BATCH_MAX_DIM` states (those the sector engine always eigendecomposes); the others run one at a time as
before (:func:`lru_mps.run.trajectories.run_trajectories` asks :meth:`SectorBatch.largest_number`).  The same
physics to rounding: the eigendecompositions are the same blocks' (common.eigen), stacked.
"""

from __future__ import annotations

from ...physics.rules import number_can_grow
from ..exact.batch import ExactBatch
from .state import EIG_MIN_DIM, largest_number, sector_limit
from .kept_basis import sector_kept_basis

#: the largest sector a batched row may reach: blocks the sector engine eigendecomposes whatever the run
#: (EIG_MIN_DIM); a larger block goes to the Chebyshev expansion or to eig_pays, row by row
BATCH_MAX_DIM = EIG_MIN_DIM


class SectorBatch(ExactBatch):
    """The exact batch on the sector bases N = 0..N_max (module docstring)."""

    kept_basis = staticmethod(sector_kept_basis)

    @classmethod
    def largest_number(cls, spec) -> int | None:
        """The largest initial excitation number N_max whose rows the batch holds: every sector 0..N_max of at
        most :data:`BATCH_MAX_DIM` states; where an event can raise N (a bath's heating, a readout error) every
        sector of the array must be that small (-1 where not: no row is held)."""
        n = largest_number(spec.L, min(BATCH_MAX_DIM, sector_limit()))
        if n is None:
            return 2 * spec.L
        return -1 if number_can_grow(spec) else n

