"""The MPS engine: TEBD of the non-Hermitian H_eff on qutrit MPS with U(1) charge blocks.

``tebd`` (the one TEBD kernel: gates, Trotter schedule, charge-block split,
truncation), ``kernels`` and ``environments`` (its numba code), ``state``
(options, the propagator of one realization, the ordinary state, the quimb
reference kernel), ``store`` (what the batched stores share), ``batch`` (the
compiled row store), ``padded`` (padded arrays for GPU backends), ``engine``
(:class:`MPSEngine`).
"""

from .batch import MPSBatch
from .engine import MPSEngine
from .padded import PaddedMPSBatch
from .state import (DISCARDED_WEIGHT_WARN, NORM_ERROR_WARN, MPSOptions, MPSPropagator, MPSState, QuimbMPSState,
                    hamiltonian_mpo, warn_diagnostics)

__all__ = ["DISCARDED_WEIGHT_WARN", "MPSBatch", "MPSEngine", "MPSOptions", "MPSPropagator", "MPSState",
           "NORM_ERROR_WARN", "PaddedMPSBatch", "QuimbMPSState", "hamiltonian_mpo", "warn_diagnostics"]
