"""Circuits: the surface-code memory with leaking data qubits (docs/physics.md §8, "The logical error per cycle").

A room of its own between the analysis and the studies: it takes the
leakage removal unit as numbers (the survival S(k) or a return
probability, the added error per round) and never reaches into the
engines.  :mod:`.surface` builds stim's rotated Z-memory circuit and cuts
it where the leakage model acts, :mod:`.model` holds the return model and
its steady state and the per-cycle conversion, :mod:`.sampler` samples and
decodes it in batches.
"""

from .model import ReturnModel, per_cycle, ratio, return_probabilities, steady_leaked_fraction
from .sampler import Case, sample
from .surface import Program, decoder, memory_circuit

__all__ = ["Case", "Program", "ReturnModel", "decoder", "memory_circuit", "per_cycle", "ratio",
           "return_probabilities", "sample", "steady_leaked_fraction"]
