"""The Engine protocol: what every engine (exact, sector, mps, auto) offers, documented once.

An engine is a value object built from its options (``get_engine(name,
**options)``; bad options raise :class:`~lru_mps.errors.ParameterError`).
The run layer asks it four things: its largest array (``max_length``), its
batched store (``batch_store()``), how to check a trajectory's diagnostics and
how to describe itself in a result.  Engines that hold states themselves
(exact, sector, mps: :class:`PropagatingEngine`) also ``prepare`` the
propagator of one disorder realization, which makes ordinary states
(:class:`~lru_mps.mcwf.states.TrajectoryState`) from product states; the
``auto`` policy instead names the engine of each trajectory.

A batched store (:class:`~lru_mps.engines.common.store.BatchStore`) holds the
rows of a batch together; the engine names its class, and the class names the
store for an array library (``store_cls.for_backend(backend)``: one store for
every backend, or another for a GPU backend as the MPS engine's padded store).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

#: how feedback measurements run: trains of the store ("fast"), or one loop stop each ("reference", the path the
#: fast one is tested against)
FEEDBACK_PATHS = ("fast", "reference")


@dataclass(frozen=True)
class EngineSettings:
    """What the engines and their batched stores read of a run (the run layer's
    :meth:`~lru_mps.run.settings.RunSettings.for_engines` makes it).

    ``engine``: exact, sector, mps or auto; ``engine_options``: the engine's
    constructor options (MPS: dt, order, max_bond, cutoff, kernel);
    ``times``: the run's time grid (1/J); ``feedback``: one of
    :data:`FEEDBACK_PATHS` (a store builds its feedback trains for "fast");
    ``backend``: the run's array library (:mod:`lru_mps.engines.common.arraylib`;
    the batched stores' and the sector engine's large blocks').
    """

    engine: str
    times: np.ndarray
    engine_options: dict = field(default_factory=dict)
    feedback: str = FEEDBACK_PATHS[0]
    backend: str = "numpy"

    @property
    def horizon(self) -> float:
        """The run's final time t_final (1/J)."""
        return float(self.times[-1])


@runtime_checkable
class Engine(Protocol):
    """What every engine offers."""

    #: the engine's name (``--engine``): exact, sector, mps or auto
    name: str
    #: the longest array (sites) the engine runs
    max_length: int

    def batch_store(self) -> type | None:
        """The class of the engine's batched store (a BatchStore), or None: its states run one at a time."""

    def check_diagnostics(self, diag: dict, label: str) -> None:
        """Warn where a trajectory's diagnostics (truncation, norm) pass the engine's thresholds."""

    def describe(self) -> dict:
        """The engine's name and options, as a result records them."""


@runtime_checkable
class Propagator(Protocol):
    """exp(-i H_eff t) of one realization: makes the engine's ordinary states."""

    def state(self, site_vectors):
        """The product state of the given site vectors (site 1 first), a TrajectoryState."""


@runtime_checkable
class PropagatingEngine(Engine, Protocol):
    """An engine that holds the states itself (exact, sector, mps)."""

    def prepare(self, spec, real) -> Propagator:
        """The propagator of realization ``real`` of ``spec``."""
