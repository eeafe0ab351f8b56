"""The MPS engine: TEBD of the non-Hermitian H_eff on qutrit MPS (an :class:`~lru_mps.engines.protocol.Engine`).

Options and propagators are :class:`~lru_mps.engines.mps.state.MPSOptions`;
the engine names its batched store: the compiled row store
(:mod:`~lru_mps.engines.mps.batch`) for the lean kernel, none for the quimb
reference kernel (its states run one at a time).
"""

from __future__ import annotations

from .batch import MPSBatch
from .state import MPSOptions, warn_diagnostics


class MPSEngine(MPSOptions):
    """TEBD quantum-trajectory engine on qutrit MPS."""

    name = "mps"

    def batch_store(self) -> type[MPSBatch] | None:
        """The compiled row store for the lean kernel (padded arrays on a GPU backend: :meth:`MPSBatch.for_backend`);
        None for the quimb kernel."""
        return MPSBatch if self.kernel == "lean" else None

    def check_diagnostics(self, diag: dict, label: str) -> None:
        warn_diagnostics(diag, label)

    def describe(self) -> dict:
        return {"engine": self.name, "dt": self.dt, "order": self.order, "max_bond": self.max_bond,
                "cutoff": self.cutoff, "kernel": self.kernel}
