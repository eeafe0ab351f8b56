"""The exact engine (full 3^L space, L <= 7): its options, propagators and batched store.

The propagator and the ordinary state are in :mod:`lru_mps.engines.exact.state`,
the batched store in :mod:`lru_mps.engines.exact.batch`.
"""

from __future__ import annotations

from ...physics.model import ArraySpec, Realization
from .batch import ExactBatch
from .state import MAX_LENGTH, ExactPropagator


class ExactEngine:
    """Exact full-space engine for L <= 7 (an :class:`~lru_mps.engines.protocol.Engine`)."""

    name = "exact"
    max_length = MAX_LENGTH

    def prepare(self, spec: ArraySpec, real: Realization) -> ExactPropagator:
        return ExactPropagator(spec, real)

    def batch_store(self) -> type[ExactBatch]:
        """The stacked N-block store (every backend)."""
        return ExactBatch

    def check_diagnostics(self, diag: dict, label: str) -> None:
        """Exact propagation: nothing to check."""

    def describe(self) -> dict:
        return {"engine": self.name}
