"""Scheduling blocks of trajectories: in process, in a process pool, resumable.

Blocks are independent (each trajectory owns its random streams), so they can
run in any order and in any process; results are merged in block order by
exact sums, which makes the numbers independent of the number of workers.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Callable

from .ensemble import BlockResult, RunSettings, n_blocks, run_block
from .errors import require
from .model import ArraySpec, Realization


def default_workers() -> int:
    """All local cores."""
    return max(1, os.cpu_count() or 1)


def _init_worker() -> None:
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def run_blocks(
    spec: ArraySpec,
    settings: RunSettings,
    *,
    realization: Realization | None = None,
    workers: int = 1,
    store=None,
    progress: Callable[[int, int], None] | None = None,
) -> list[BlockResult]:
    """All blocks of a run, loading finished ones from ``store`` and saving new ones."""
    require(int(workers) == workers and workers >= 1, "workers", workers, "an integer >= 1")
    from .runstore import RunStore, run_key

    if store is not None and not isinstance(store, RunStore):
        store = RunStore(store)
    total = settings.trajectories
    nb = n_blocks(total)
    key = None
    done: dict[int, BlockResult] = {}
    if store is not None:
        key, desc = run_key(spec, settings, realization)
        store.describe(key, desc)
        for b in range(nb):
            res = store.load(key, b)
            if res is not None:
                done[b] = res
    count = sum(r.trajectories for r in done.values())
    if progress is not None:
        progress(count, total)
    todo = [b for b in range(nb) if b not in done]

    def finished(res: BlockResult) -> None:
        done[res.index] = res
        if store is not None:
            store.save(key, res)

    if workers == 1 or len(todo) <= 1:
        for b in todo:
            state = {"n": count}

            def tick():
                state["n"] += 1
                if progress is not None:
                    progress(state["n"], total)

            res = run_block(spec, settings, b, realization, on_trajectory=tick)
            finished(res)
            count += res.trajectories
    else:
        with ProcessPoolExecutor(max_workers=min(workers, len(todo)), initializer=_init_worker) as pool:
            futures = [pool.submit(run_block, spec, settings, b, realization) for b in todo]
            for fut in as_completed(futures):
                res = fut.result()
                finished(res)
                count += res.trajectories
                if progress is not None:
                    progress(count, total)
    return [done[b] for b in range(nb)]
