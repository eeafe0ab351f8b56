"""State backends for the trajectory algorithm.

Each engine turns (spec, realization) into a *propagator* that makes
:class:`~lru_mps.trajectory.TrajectoryState` objects from product states.
"""

from __future__ import annotations

from ..errors import ParameterError
from .exact import ExactEngine
from .mps import MPSEngine
from .sector import SectorEngine

ENGINES = {"exact": ExactEngine, "sector": SectorEngine, "mps": MPSEngine}


def get_engine(name: str, **options):
    """The engine called ``name`` (exact; mps and sector come with their modules)."""
    if name not in ENGINES:
        raise ParameterError("engine", name, f"one of {', '.join(sorted(ENGINES))}")
    return ENGINES[name](**options)
