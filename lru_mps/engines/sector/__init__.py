"""The sector engine: exact fixed-N sectors for long arrays with few excitations.

``engine`` (bases, sector Hamiltonians, the propagator, the ordinary state and
:class:`SectorEngine`), ``chebyshev`` (the compiled Chebyshev propagation of
the large sectors), ``array_chebyshev`` (the same expansion over an array
library: torch or cupy on a GPU, with a run's ``backend``).  No batched store:
sector states run one at a time.
"""

from .array_chebyshev import ArrayChebyshevBlock
from .chebyshev import ChebyshevBlock
from .engine import (EIG_MAX_DIM, MAX_SECTOR_DIM, ExpmMultiplyBlock, SectorBasis, SectorEngine, SectorPropagator,
                     SectorState, sector_basis, sector_dimension, sector_hamiltonian)

__all__ = ["ArrayChebyshevBlock", "ChebyshevBlock", "EIG_MAX_DIM", "ExpmMultiplyBlock", "MAX_SECTOR_DIM", "SectorBasis",
           "SectorEngine", "SectorPropagator", "SectorState", "sector_basis", "sector_dimension", "sector_hamiltonian"]
