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


#: the step of the strata's low-discrepancy sequence over trajectory indices (golden ratio: the most uniform)
GOLDEN_STEP = (5.0 ** 0.5 - 1.0) / 2.0


def stratum_uniform(seed: int, index: int, init: str) -> float:
    """The uniform that picks trajectory ``index``'s thermal stratum: (offset + index x golden ratio) mod 1.

    Each value is uniform on [0, 1) (the offset is drawn from the run's seed,
    SeedSequence(seed, spawn_key=(2**31 - 1, code(init)))), so a row's
    weighted value is unbiased; along the indices the values are spread
    evenly (a Kronecker sequence), so every block of consecutive trajectories
    holds each stratum in its expected share to within a row or two, and the
    between-strata variance of a random assignment is gone
    (:func:`lru_mps.run.thermal_sample.stratified_levels`).
    """
    offset = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2**31 - 1, INIT_CODE[init]))).random()
    return float((offset + index * GOLDEN_STEP) % 1.0)


def event_rng(seed: int, index: int, init: str) -> np.random.Generator:
    """The thermal-sample and event stream of trajectory ``index`` for initial state ``init``."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index, 1, INIT_CODE[init])))
