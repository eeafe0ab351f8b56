"""The sector engine: exact fixed-N sectors for long arrays with few excitations.

``engine`` (bases, sector Hamiltonians, the propagator, the ordinary state and
:class:`SectorEngine`), ``chebyshev`` (the compiled Chebyshev propagation of
the large sectors).  No batched store: sector states run one at a time.
"""

from .chebyshev import ChebyshevBlock
from .engine import (EIG_MAX_DIM, MAX_SECTOR_DIM, ExpmMultiplyBlock, SectorBasis, SectorEngine, SectorPropagator,
                     SectorState, sector_basis, sector_dimension, sector_hamiltonian)

__all__ = ["ChebyshevBlock", "EIG_MAX_DIM", "ExpmMultiplyBlock", "MAX_SECTOR_DIM", "SectorBasis", "SectorEngine",
           "SectorPropagator", "SectorState", "sector_basis", "sector_dimension", "sector_hamiltonian"]
