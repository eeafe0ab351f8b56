"""Scheduling blocks of trajectories: in process, in a process pool, resumable.

Blocks are independent (each trajectory owns its random streams), so they can
run in any order and in any process; results are merged in block order by
exact sums, which makes the numbers independent of the number of workers.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Callable

from .blocks import BlockResult, n_blocks, run_block
from .settings import RunSettings
from ..errors import ParameterError, require
from ..physics.model import ArraySpec, Realization


def default_workers() -> int:
    """All local cores."""
    return max(1, os.cpu_count() or 1)


#: how often a worker checks that its parent is still alive (seconds)
PARENT_POLL_S = 0.5


def _init_worker(parent: int) -> None:
    """Set up a pool worker: one BLAS thread, and death with its parent.

    A worker must never outlive the run that started it: a batch scheduler's
    time limit or a ``subprocess`` timeout kills the parent with SIGKILL, which
    gives it no chance to stop its pool.  On Linux the kernel sends the worker
    SIGKILL when its parent dies (``PR_SET_PDEATHSIG``); everywhere a daemon
    thread checks every :data:`PARENT_POLL_S` seconds that the parent is still
    there and ends the process otherwise.  Ctrl-C is left to the parent (which
    terminates the pool), so a worker does not print a traceback of its own.
    """
    import signal
    import threading
    import time

    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):  # not Linux: the watcher below does it
        pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(PARENT_POLL_S)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="lru-mps-parent-watch", daemon=True).start()


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel queued blocks and terminate running workers now (finished blocks are already saved)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    for proc in processes:
        proc.join(timeout=5)


def client_for(scheduler):
    """A dask.distributed Client for ``scheduler``: an address ('tcp://host:8786'), a Client, or None."""
    if scheduler is None:
        return None
    try:
        from dask.distributed import Client
    except ImportError:
        raise ParameterError("scheduler", scheduler, "dask.distributed installed (pip install 'lru-mps[dask]')") from None
    if isinstance(scheduler, Client):
        return scheduler
    try:
        return Client(scheduler, timeout="20s")
    except OSError as err:
        raise ParameterError("scheduler", scheduler, f"the address of a running Dask scheduler ({err})") from None


def _dask_blocks(client, spec, settings, realization, todo, key, finished, on_block):
    """Run blocks as Dask tasks; a task lost with a dying worker is recomputed by the scheduler."""
    from dask.distributed import as_completed as dask_completed

    futures = [
        client.submit(run_block, spec, settings, b, realization, key=f"lru-mps-{key or 'run'}-block-{b}", pure=False,
                      retries=2)
        for b in todo
    ]
    for fut in dask_completed(futures):
        res = fut.result()
        finished(res)
        on_block(res)


def run_blocks(
    spec: ArraySpec,
    settings: RunSettings,
    *,
    realization: Realization | None = None,
    workers: int = 1,
    store=None,
    progress: Callable[[int, int], None] | None = None,
    client=None,
) -> list[BlockResult]:
    """All blocks of a run, loading finished ones from ``store`` and saving new ones.

    Blocks run in this process (``workers`` = 1), in a local process pool, or
    as tasks on a Dask cluster (``client``: a dask.distributed Client or a
    scheduler address).  Either way the merged numbers are the same.
    ``store``: a :class:`~lru_mps.run.cache.BlockCache` or its folder.
    """
    require(int(workers) == workers and workers >= 1, "workers", workers, "an integer >= 1")
    from .cache import BlockCache, run_key

    if store is not None and not isinstance(store, BlockCache):
        store = BlockCache(store)
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

    client = client_for(client)
    if client is not None:
        from .cache import run_key as _rk

        state = {"n": count}

        def on_block(res):
            state["n"] += res.trajectories
            if progress is not None:
                progress(state["n"], total)

        _dask_blocks(client, spec, settings, realization, todo, key or _rk(spec, settings, realization)[0], finished,
                     on_block)
    elif workers == 1 or len(todo) <= 1:
        for b in todo:
            state = {"n": count}

            def tick(n: int = 1):
                state["n"] += n
                if progress is not None:
                    progress(state["n"], total)

            res = run_block(spec, settings, b, realization, on_trajectory=tick)
            finished(res)
            count += res.trajectories
    else:
        pool = ProcessPoolExecutor(max_workers=min(workers, len(todo)), initializer=_init_worker,
                                   initargs=(os.getpid(),))
        try:
            futures = [pool.submit(run_block, spec, settings, b, realization) for b in todo]
            for fut in as_completed(futures):
                res = fut.result()
                finished(res)
                count += res.trajectories
                if progress is not None:
                    progress(count, total)
        except BaseException:  # Ctrl-C, SIGTERM (as SystemExit), a failed block: stop the workers at once
            _stop_pool(pool)
            raise
        pool.shutdown()
    return [done[b] for b in range(nb)]
