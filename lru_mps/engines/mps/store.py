"""The part of the batched MPS stores that does not depend on how the rows are held.

:class:`~lru_mps.engines.mps.batch.MPSBatch` (numba lists of the rows' own
tensors) and :class:`~lru_mps.engines.mps.padded.PaddedMPSBatch` (padded
arrays of one array library) differ in how a Trotter step runs and how a row
is stored; the grouping of the loop's steps and the jumps (on one row as an
:class:`~lru_mps.engines.mps.state.MPSState`) are shared here.
"""

from __future__ import annotations

import numpy as np

from ..common.store import BatchStore, jump
from .state import MPSState


class MPSStore(BatchStore):
    """What the MPS state stores (:mod:`~lru_mps.engines.mps.batch`, :mod:`~lru_mps.engines.mps.padded`) share.

    Steps: ``step(rows, dt)`` advances rows by one Trotter step (one dt for
    all, or one per row); :meth:`evolve` groups the loop's steps.  Jumps: row b
    is handled as an :class:`MPSState` (``row_state(b)``), kept in ``held``
    between the calls of one jump (the channel weights, then the operator),
    and put back with ``set_row(b, state)`` (which clears ``held``).
    """

    #: the engine's time step (1/J)
    dt: float

    #: (row, state) kept between the calls of one jump
    held = None

    def evolve(self, rows: np.ndarray, steps, grid_step: float | None = None) -> None:
        """One Trotter step of length steps[j] (at most dt) for each row: the regular steps together, the
        shortened ones (the ends of stretches, which rarely coincide) with a length each."""
        self.held = None
        rows = np.asarray(rows, dtype=np.intp)
        steps = np.broadcast_to(np.asarray(steps, dtype=float), (len(rows),))
        regular = steps == self.dt
        if regular.any():
            self.step(rows[regular], self.dt)
        if not regular.all():
            self.step(rows[~regular], steps[~regular])

    def _row(self, b: int) -> MPSState:
        if self.held is None or self.held[0] != b:
            self.held = (b, self.row_state(b))
        return self.held[1]

    def rdm(self, b: int, site: int) -> np.ndarray:
        return self._row(b).site_rdm(site)

    def apply_jump(self, b: int, channel: int) -> None:
        """The channel's operator on row b, renormalized, put back into the store (centre on the last site)."""
        state = self._row(b)
        jump(state, self.channels[channel])
        self.set_row(b, state)
