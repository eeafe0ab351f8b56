"""Scheduling blocks of trajectories: in process, in a process pool, resumable.

Blocks are independent (each trajectory owns its random streams), so they can
run in any order and in any process; results are merged in block order by
exact sums, which makes the numbers independent of the number of workers.
The local process pool is the package's one (:func:`map_in_processes`: workers
that end with their parent, stopped at once on a failure, Ctrl-C or SIGTERM,
a worker's death reported as such); other
work that runs in processes (the qec study's direct simulation) maps through it.
"""

from __future__ import annotations

import os
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Sequence

from .blocks import BlockResult, n_blocks, run_block
from .settings import RunSettings
from ..errors import (Interrupted, ParameterError, WorkerLost, check_stop, clear_stop, require, stop_deferred,
                      stop_on_signal, stop_requested)
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
    # SIGTERM (the parent's terminate) ends a worker at once: the parent's own handler (raise SystemExit, inherited
    # through fork) would wait for a compiled kernel to return and then be caught by the pool's worker loop
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
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
    for proc in processes:  # a worker that outlived SIGTERM: the interpreter's exit would wait for it
        if proc.is_alive():
            proc.kill()
            proc.join(timeout=5)


def map_in_processes(fn: Callable, items: Sequence[tuple], workers: int,
                     on_result: Callable[[int, object], None] | None = None) -> list:
    """``[fn(*args) for args in items]`` in a local pool of up to ``workers`` processes, in the items' order.

    The one process pool of the package: its workers take one BLAS thread and
    end with their parent (:func:`_init_worker`); a failure, Ctrl-C or
    SIGTERM (:class:`~lru_mps.errors.Interrupted`) in the parent, or in
    ``on_result``, terminates them at once (:func:`_stop_pool`) and is raised
    again; a worker that dies (killed, out of memory) stops the others and
    raises :class:`~lru_mps.errors.WorkerLost`, saying how it died.  The parent
    looks at a request to stop (:func:`~lru_mps.errors.check_stop`) every
    :data:`POLL_S` seconds while it waits.  ``on_result(i, result)`` is called
    in the parent as each item finishes (completion order), e.g. to store it
    before the others end.  With ``workers`` <= 1 or at most one item the
    items run in this process, in order.  ``fn`` and the items must pickle
    (``fn`` a module-level function).
    """
    if workers <= 1 or len(items) <= 1:
        out = []
        for i, args in enumerate(items):
            check_stop()
            out.append(fn(*args))
            if on_result is not None:
                on_result(i, out[-1])
        return out
    out = [None] * len(items)
    pool = ProcessPoolExecutor(max_workers=min(workers, len(items)), initializer=_init_worker,
                               initargs=(os.getpid(),))
    processes = []
    try:
        futures = {pool.submit(fn, *args): i for i, args in enumerate(items)}
        processes = list((getattr(pool, "_processes", None) or {}).values())  # (all started by the first submit)
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            check_stop()
            for fut in finished:
                i = futures[fut]
                out[i] = fut.result()
                if on_result is not None:
                    on_result(i, out[i])
    except BrokenProcessPool as err:  # a worker died: say how (its exit code), not the pool's traceback
        _stop_pool(pool)
        check_stop()  # (the parent's own signal, which the workers' deaths followed)
        if err.__cause__ is not None:  # none died: a result the parent could not unpickle (a bug: its traceback)
            raise
        raise WorkerLost(_how_it_died(processes)) from None
    except BaseException:  # Ctrl-C, SIGTERM (Interrupted), a failed item: stop the workers at once
        _stop_pool(pool)
        raise
    pool.shutdown()
    return out


#: seconds between the pool's looks at a request to stop while it waits for its workers
POLL_S = 0.25


def _how_it_died(processes) -> str:
    """How the first of a broken pool's workers that was not stopped by the pool itself ended (its exit code)."""
    import signal

    codes = [p.exitcode for p in processes]
    own = -signal.SIGTERM  # the pool terminates the others once one died
    code = next((c for c in codes if c not in (None, 0, own)), own if own in codes else None)
    if code is None:
        return "it ended abruptly"
    if code < 0:
        name = signal.Signals(-code).name
        return f"killed by {name}" + (", as the out-of-memory killer does" if code == -signal.SIGKILL else "")
    return f"it exited with status {code}"


def client_for(scheduler):
    """A dask.distributed Client for ``scheduler``: an address ('tcp://host:8786'), a Client, or None.  A client
    made from an address is the caller's to close."""
    if scheduler is None:
        return None
    try:
        from dask.distributed import Client
    except ImportError:
        raise ParameterError("scheduler", scheduler, "dask.distributed installed (pip install 'lru-mps[dask]')") from None
    if isinstance(scheduler, Client):
        return scheduler
    try:  # (not the process's default client: dask's global scheduler setting stays as it was)
        return Client(scheduler, timeout="20s", set_as_default=False)
    except OSError as err:
        raise ParameterError("scheduler", scheduler, f"the address of a running Dask scheduler ({err})") from None


class _Tally:
    """Trajectories done of a run, reported to ``progress(done, total)``: the one progress path of every map."""

    def __init__(self, done: int, total: int, progress: Callable[[int, int], None] | None):
        self.n, self.total, self.progress = done, total, progress
        self.report()

    def report(self) -> None:
        if self.progress is not None:
            self.progress(self.n, self.total)

    def tick(self, n: int = 1) -> None:
        """n more trajectories of the running block (in-process runs report them as they finish)."""
        self.n += n
        self.report()


@dataclass(frozen=True)
class _BlockTask:
    """run_block of one run's blocks: the task every map runs, one block index at a time."""

    spec: ArraySpec
    settings: RunSettings
    realization: Realization | None

    def args(self, b: int) -> tuple:
        return self.spec, self.settings, b, self.realization


# Every map has one signature: map(task, blocks, on_result, tally, **executor options).  It runs
# task on every block index, calls on_result(result) as each block finishes (in completion order),
# and reports progress through the tally.


def serial_map(task: _BlockTask, blocks: list[int], on_result, tally: _Tally) -> None:
    """The blocks in this process, one after another, reporting every trajectory as it finishes."""
    for b in blocks:
        check_stop()
        start = tally.n
        res = run_block(*task.args(b), on_trajectory=tally.tick)
        on_result(res)
        tally.n = start + res.trajectories


def process_map(task: _BlockTask, blocks: list[int], on_result, tally: _Tally, workers: int) -> None:
    """The blocks in a local process pool of up to ``workers`` processes (:func:`map_in_processes`); a failure or
    Ctrl-C stops the pool."""

    def finished(_: int, res: BlockResult) -> None:
        on_result(res)
        tally.tick(res.trajectories)

    map_in_processes(run_block, [task.args(b) for b in blocks], workers, on_result=finished)


def dask_map(task: _BlockTask, blocks: list[int], on_result, tally: _Tally, client, key: str) -> None:
    """The blocks as Dask tasks; a task lost with a dying worker is recomputed by the scheduler."""
    from dask.distributed import as_completed as dask_completed

    futures = [client.submit(run_block, *task.args(b), key=f"lru-mps-{key or 'run'}-block-{b}", pure=False, retries=2)
               for b in blocks]
    for fut in dask_completed(futures, loop=client.loop):  # (the run's client, not a process default)
        check_stop()
        res = fut.result()
        on_result(res)
        tally.tick(res.trajectories)


def _load_finished(cache, spec, settings, realization, nb: int):
    """(the cache and the run's key, the blocks already in it) (None, {} without a cache)."""
    from .cache import BlockCache, run_key

    if cache is None:
        return None, None, {}
    if not isinstance(cache, BlockCache):
        cache = BlockCache(cache)
    key, desc = run_key(spec, settings, realization)
    cache.describe(key, desc)
    done = {}
    for b in range(nb):
        res = cache.load(key, b)
        if res is not None:
            done[b] = res
    return cache, key, done


def run_blocks(
    spec: ArraySpec,
    settings: RunSettings,
    *,
    realization: Realization | None = None,
    workers: int = 1,
    cache=None,
    progress: Callable[[int, int], None] | None = None,
    client=None,
) -> list[BlockResult]:
    """All blocks of a run, loading finished ones from ``cache`` and saving new ones.

    Blocks run in this process (``workers`` = 1), in a local process pool, or
    as tasks on a Dask cluster (``client``: a dask.distributed Client or a
    scheduler address): :func:`serial_map`, :func:`process_map`,
    :func:`dask_map`, one signature.  Either way the merged numbers are the
    same.  ``cache``: a :class:`~lru_mps.run.cache.BlockCache` or its folder.
    A run stopped by a signal raises :class:`~lru_mps.errors.Interrupted`, one
    whose worker process died :class:`~lru_mps.errors.WorkerLost`, each with the
    blocks finished and the folder that keeps them (a rerun resumes from them).
    """
    require(int(workers) == workers and workers >= 1, "workers", workers, "an integer >= 1")
    from .cache import run_key
    from .sector_reach import check_rows_stay_in_reach

    nb = n_blocks(settings.trajectories)
    cache, key, done = _load_finished(cache, spec, settings, realization, nb)
    todo = [b for b in range(nb) if b not in done]
    if todo:
        check_rows_stay_in_reach(spec, settings)  # (an event that would raise rows past the sector engine's limit)
    tally = _Tally(sum(r.trajectories for r in done.values()), settings.trajectories, progress)

    def finished(res: BlockResult) -> None:
        with stop_deferred():  # (the block's file and its count: a signal in between waits for both)
            if cache is not None:
                cache.save(key, res)
            done[res.index] = res

    task = _BlockTask(spec, settings, realization)
    opened = client_for(client) if isinstance(client, str) else None  # (an address: this run's own client)
    client = opened or client_for(client)
    kept = None if cache is None else str(cache.folder)
    with _stopping(), _closing(opened):
        try:
            if client is not None:
                dask_map(task, todo, finished, tally, client, key or run_key(spec, settings, realization)[0])
            elif workers == 1 or len(todo) <= 1:
                serial_map(task, todo, finished, tally)
            else:
                process_map(task, todo, finished, tally, workers)
        except BaseException as err:  # a stop (Ctrl-C, SIGTERM) or a dead worker: what this run did, where it is kept
            why = stop_requested() or (getattr(err, "signal", "SIGINT") if isinstance(err, KeyboardInterrupt) else None)
            if why is not None:  # (whatever a signal raised on its way: numba's SystemError, a pool's break)
                raise Interrupted(why, len(done), nb, kept) from None
            if isinstance(err, WorkerLost):
                raise WorkerLost(err.cause, len(done), nb, kept) from None
            raise
    return [done[b] for b in range(nb)]


@contextmanager
def _closing(client):
    """Close ``client`` (a Dask client this run opened from an address) when the run ends, however it ends."""
    try:
        yield
    finally:
        if client is not None:
            client.close()


@contextmanager
def _stopping():
    """Ctrl-C stops the run within a fraction of a second even where its KeyboardInterrupt would be lost.

    Where the SIGINT handler is Python's own (a script, a notebook) it is
    :func:`~lru_mps.errors.stop_on_signal` for the run, which records the
    request that the loops look at (:func:`~lru_mps.errors.check_stop`); the
    request is forgotten when the run ends.  Where a handler of the package's
    is in place already (the command line's, for SIGINT and SIGTERM), or off
    the main thread, nothing changes.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    clear_stop()
    previous = signal.signal(signal.SIGINT, stop_on_signal)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        clear_stop()
