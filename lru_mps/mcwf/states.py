"""Ordinary (one-trajectory) states, and the adapter that makes a list of them a state store.

Engines without a batched store (the quimb reference kernel), the sector
engine's rows in large sectors, the decay-integrated rows, and every engine
when run unbatched for checks hand the trajectory loop a :class:`StateList`: the same algorithm then runs on their states one
row at a time, with the same arithmetic as a single trajectory.
"""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from ..engines.common.probe import CopyProbe
from ..engines.common.store import BatchStore, jump, observe_states, site_level_populations, reset


class TrajectoryState(Protocol):
    """One trajectory's unnormalized state |psi> as an engine holds it."""

    #: None if :meth:`evolve` is exact for any duration; else the integrator's step (1/J)
    time_step: float | None

    def evolve(self, dt: float) -> None:
        """|psi> <- exp(-i H_eff dt) |psi> (dt in 1/J)."""

    def norm2(self) -> float:
        """<psi|psi>."""

    def site_populations(self) -> np.ndarray:
        """Level populations of every site, shape (L, 3): <psi| (|m><m|)_l |psi>."""

    def site_rdm(self, site: int) -> np.ndarray:
        """One-site density matrix (3, 3): rho[i, j] = <psi| (|j><i|)_site |psi>."""

    def apply_local(self, op: np.ndarray, site: int) -> None:
        """|psi> <- op_site |psi> (op a 3x3 matrix, site 0-based)."""

    def scale(self, factor: float) -> None:
        """|psi> <- factor |psi>."""

    def copy(self) -> "TrajectoryState":
        """An independent copy."""


class StateList(BatchStore):
    """A state store (:class:`lru_mps.mcwf.store_protocol.StateStore`) over a list of ordinary states."""

    def __init__(self, states: Sequence[TrajectoryState], spec):
        self.states = list(states)
        self.channels = spec.jump_channels()
        self.L = spec.L

    @property
    def time_step(self) -> float | None:
        """The states' integrator step (read at every advance: a state handed over to MPS changes it; a list
        that holds such a state holds it alone, lru_mps.engines.auto)."""
        return self.states[0].time_step if self.states else None

    def evolve(self, rows, durations, grid_step=None) -> None:
        d = np.broadcast_to(np.asarray(durations, dtype=float), (len(rows),))
        for j, b in enumerate(rows):
            self.states[b].evolve(float(d[j]))

    def norm2(self, rows=None) -> np.ndarray:
        rows = range(len(self.states)) if rows is None else rows
        return np.array([self.states[b].norm2() for b in rows], dtype=float)

    def scale(self, rows, factors) -> None:
        rows = range(len(self.states)) if rows is None else rows
        for b, f in zip(rows, factors):
            self.states[b].scale(float(f))

    def snapshot(self, rows) -> list:
        return [self.states[b].copy() for b in rows]

    def probe(self, b: int, snapshot, j: int) -> CopyProbe:
        return CopyProbe(snapshot[j], lambda state: self.states.__setitem__(b, state))

    def populations(self, b: int) -> np.ndarray:
        return self.states[b].site_populations()

    def rdm(self, b: int, site: int) -> np.ndarray:
        return self.states[b].site_rdm(site)

    def apply_jump(self, b: int, channel: int) -> None:
        jump(self.states[b], self.channels[channel])

    def observe(self, rows):
        n2 = np.array([self.states[b].norm2() for b in rows], dtype=float)
        pops, rho10 = observe_states([self.states[b] for b in rows], self.L)
        return pops, rho10, n2

    def reset_populations(self, rows, site: int) -> np.ndarray:
        return site_level_populations([self.states[b] for b in rows], site)

    def apply_reset(self, rows, site: int, outcomes, normalize: bool, targets=None) -> None:
        targets = np.zeros(len(rows), dtype=int) if targets is None else targets
        for b, o, k in zip(rows, outcomes, targets):
            reset(self.states[b], o, site, normalize, k)

    def diagnostics(self) -> list[dict]:
        return [s.diagnostics() if hasattr(s, "diagnostics") else {} for s in self.states]

    def state(self, b: int):
        return self.states[b]
