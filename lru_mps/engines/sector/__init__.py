"""The sector engine: exact fixed-N sectors for long arrays with few excitations.

``engine`` (:class:`SectorEngine`), ``state`` (bases, sector Hamiltonians,
the propagator, the ordinary state), ``chebyshev`` (the compiled Chebyshev propagation of
the large sectors), ``array_chebyshev`` (the same expansion over an array
library: torch or cupy on a GPU, with a run's ``backend``), ``batch`` (the
batched store of the rows whose sectors are all small: the exact batch on
``kept_basis``, the sectors 0..N_max); rows in larger sectors run one at a
time on the ordinary states.
"""

from .array_chebyshev import ArrayChebyshevBlock
from .chebyshev import ChebyshevBlock
from .engine import (EIG_MAX_DIM, MAX_SECTOR_DIM, ExpmMultiplyBlock, SectorBasis, SectorEngine, SectorPropagator,
                     SectorState, sector_basis, sector_dimension, sector_hamiltonian)

__all__ = ["ArrayChebyshevBlock", "ChebyshevBlock", "EIG_MAX_DIM", "ExpmMultiplyBlock", "MAX_SECTOR_DIM", "SectorBasis",
           "SectorEngine", "SectorPropagator", "SectorState", "sector_basis", "sector_dimension", "sector_hamiltonian"]
