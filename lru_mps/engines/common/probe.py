"""A state copied before a step, evolved on its own to find the jump time inside the step."""

from __future__ import annotations

from typing import Callable


class CopyProbe:
    """``norm2_after(tau)`` of a copy of ``before`` evolved by tau; ``commit(tau)`` evolves ``before`` and hands it to ``put``.

    ``before`` is an ordinary state (evolve, norm2, copy); ``put`` puts the
    state at the jump time back where the row lives.
    """

    def __init__(self, before, put: Callable[[object], None]):
        self.before = before
        self.put = put

    def norm2_after(self, tau: float) -> float:
        s = self.before.copy()
        s.evolve(tau)
        return s.norm2()

    def commit(self, tau: float) -> None:
        self.before.evolve(tau)
        self.put(self.before)
