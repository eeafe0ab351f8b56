"""lru-mps: quantum-trajectory simulations of a passive leakage removal unit.

A coding transmon at the end of a disordered transmon array (docs/physics.md).
Units: energies and rates in J, times in 1/J (J/2pi = 5 MHz by default).
"""

from .errors import ParameterError
from .physics.model import ArraySpec, Conditions, Realization, Reset

__all__ = ["ArraySpec", "Conditions", "ParameterError", "Realization", "Reset"]
__version__ = "0.1.0"
