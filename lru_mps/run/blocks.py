"""Blocks of trajectories: the unit of work of every executor and of the resumable cache.

A run's trajectories are split into at most :data:`MAX_BLOCKS` contiguous
index ranges.  A block's result is the exact sums of its trajectories'
observables (and their engine diagnostics), so blocks can run anywhere, in any
order, and merge (in block order) into numbers that do not depend on how the
work was split; the blocks also give jackknife errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..engines import get_engine
from ..engines.common.arraylib import one_cpu_thread
from ..physics.model import ArraySpec, Realization
from .settings import RunSettings
from .statistics import ObservableAccumulator, make_accumulator
from .thermal_sample import strata_for
from .trajectories import run_trajectories

#: trajectories are accumulated in this many contiguous blocks (jackknife errors)
MAX_BLOCKS = 16


def block_of(index: int, trajectories: int) -> int:
    """Block of trajectory ``index``: contiguous index ranges, at most MAX_BLOCKS."""
    n_blocks = min(MAX_BLOCKS, trajectories)
    return index * n_blocks // trajectories


def block_range(block: int, trajectories: int) -> range:
    """Trajectory indices of ``block`` (contiguous; see :func:`block_of`)."""
    idx = [i for i in range(trajectories) if block_of(i, trajectories) == block]
    return range(idx[0], idx[-1] + 1)


def n_blocks(trajectories: int) -> int:
    """Number of blocks of a run with this many trajectories."""
    return block_of(trajectories - 1, trajectories) + 1


@dataclass
class BlockResult:
    """Sums over the trajectories of one block, per initial state, plus engine diagnostics."""

    index: int
    accumulators: dict[str, ObservableAccumulator]
    diagnostics: dict[str, dict[str, np.ndarray]]
    trajectories: int

    def to_arrays(self) -> dict[str, np.ndarray]:
        out = {"index": np.array(self.index), "trajectories": np.array(self.trajectories)}
        for init, acc in self.accumulators.items():
            out.update({f"acc/{init}/{k}": v for k, v in acc.state().items()})
        for init, diag in self.diagnostics.items():
            out.update({f"diag/{init}/{k}": np.asarray(v) for k, v in diag.items()})
        return out

    @classmethod
    def from_arrays(cls, arrays) -> "BlockResult":
        accs: dict[str, dict] = {}
        diags: dict[str, dict] = {}
        for key in arrays:
            if key.startswith("acc/"):
                _, init, name = key.split("/", 2)
                accs.setdefault(init, {})[name] = arrays[key]
            elif key.startswith("diag/"):
                _, init, name = key.split("/", 2)
                diags.setdefault(init, {})[name] = np.asarray(arrays[key])
        return cls(
            int(arrays["index"]),
            {init: ObservableAccumulator.from_state(st) for init, st in accs.items()},
            diags,
            int(arrays["trajectories"]),
        )


def run_block(
    spec: ArraySpec,
    settings: RunSettings,
    block: int,
    realization: Realization | None = None,
    on_trajectory: Callable[[int], None] | None = None,
) -> BlockResult:
    """Run the trajectories of one block (one BLAS thread); ``on_trajectory(n)`` as n more finish."""
    engine = get_engine(settings.engine, **settings.engine_options)
    T = len(settings.times)
    accs = {name: make_accumulator(T, spec.L, strata_for(spec, settings, name)) for name in settings.inits}
    diagnostics: dict[str, dict[str, list]] = {name: {} for name in settings.inits}
    indices = block_range(block, settings.trajectories)
    # The matrices here are small: one BLAS thread per process is fastest, and
    # several spinning BLAS threads on a loaded machine can be 100x slower.
    with one_cpu_thread(settings.backend):
        records = run_trajectories(spec, settings, indices, realization, on_index=on_trajectory)
    for i, rec_by_init in zip(indices, records):
        for name, rec in rec_by_init.items():
            accs[name].add(rec.populations, rec.coherence, getattr(rec, "stratum", None))
            for key, value in rec.diagnostics.items():
                diagnostics[name].setdefault(key, []).append(value)
            if rec.diagnostics:
                engine.check_diagnostics(rec.diagnostics, f"trajectory {i} ({name})")
    diag = {name: {k: np.asarray(v) for k, v in d.items()} for name, d in diagnostics.items() if d}
    return BlockResult(block, accs, diag, len(indices))
