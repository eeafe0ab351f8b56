"""The exact engine: the full 3^L space, block-diagonalized exact propagation (L <= 7).

``state`` (H_eff on the full space, the propagator of one realization, the
ordinary state), ``batch`` (the batched store on the kept N-blocks),
``feedback`` (its feedback trains), ``engine`` (:class:`ExactEngine`).
"""

from .batch import ExactBatch
from .engine import ExactEngine
from .state import MAX_LENGTH, ExactPropagator, ExactState, embed, embed_bond, hamiltonian_eff, number_of_excitations

__all__ = ["ExactBatch", "ExactEngine", "ExactPropagator", "ExactState", "MAX_LENGTH", "embed", "embed_bond",
           "hamiltonian_eff", "number_of_excitations"]
