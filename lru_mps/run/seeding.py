"""Random streams: every trajectory's numbers depend only on (seed, index, initial state).

Trajectory i (0-based) of a run with ``seed`` draws its disorder realization
from SeedSequence(seed, spawn_key=(i, 0)), and its thermal sample,
measurement clock and events for initial state ``init`` from
SeedSequence(seed, spawn_key=(i, 1, code(init))) (docs/physics.md §6.4).  So
a result never depends on the order, the batch or the process a trajectory
runs in, and the three initial states of trajectory i share one realization.
"""

from __future__ import annotations

import numpy as np

from ..physics.model import INIT_STATES

INIT_CODE = {name: k for k, name in enumerate(INIT_STATES)}


def disorder_rng(seed: int, index: int) -> np.random.Generator:
    """The disorder stream of trajectory ``index``."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index, 0)))


def event_rng(seed: int, index: int, init: str) -> np.random.Generator:
    """The thermal-sample and event stream of trajectory ``index`` for initial state ``init``."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index, 1, INIT_CODE[init])))
