"""Worker processes end with the run that started them; finished blocks stay on disk."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux) to find worker processes")

API_RUN = """
import sys
from lru_mps.run.simulate import simulate
from lru_mps.physics.model import ArraySpec

spec = ArraySpec.from_user(length=5, conditions="realistic")
simulate(spec, trajectories=4000, t_final=1000.0, time_points=51, workers=2, cache=sys.argv[1], seed=1)
"""
CLI_RUN = ["-m", "lru_mps_cli.main", "simulate", "--length", "5", "--conditions", "realistic",
           "--trajectories", "4000", "--time-points", "51", "--workers", "2", "--json"]


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process, None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1])


def _children(pid: int) -> list[int]:
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            st = _stat(int(entry.name))
            if st is not None and st[1] == pid and st[0] != "Z":
                kids.append(int(entry.name))
    return kids


def _alive(pid: int) -> bool:
    st = _stat(pid)
    return st is not None and st[0] != "Z"  # a zombie has stopped computing


def _start(args, tmp_path):
    proc = subprocess.Popen([sys.executable, *args], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    kids: list[int] = []
    while time.monotonic() < deadline and proc.poll() is None:
        kids = _children(proc.pid)
        if len(kids) >= 2 and (args[0] != "-c" or list(tmp_path.glob("work/*/block_*.npz"))):
            break
        time.sleep(0.1)
    assert proc.poll() is None and len(kids) >= 2, "the run did not start two workers"
    time.sleep(0.5)  # the workers are computing now
    return proc, kids


def _assert_workers_end(kids, within: float = 10.0):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and any(_alive(k) for k in kids):
        time.sleep(0.1)
    left = [k for k in kids if _alive(k)]
    assert not left, f"workers {left} still alive {within:g} s after their parent ended"


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_cli_workers_end_with_their_parent(tmp_path, sig):
    proc, kids = _start(CLI_RUN, tmp_path)
    os.kill(proc.pid, sig)
    proc.wait(timeout=30)
    _assert_workers_end(kids)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "Ctrl-C"])
def test_api_workers_end_and_finished_blocks_stay(tmp_path, sig):
    from lru_mps.run.cache import BlockCache

    proc, kids = _start(["-c", API_RUN, str(tmp_path / "work")], tmp_path)
    os.kill(proc.pid, sig)
    proc.wait(timeout=30)
    _assert_workers_end(kids)
    blocks = sorted(tmp_path.glob("work/*/block_*.npz"))
    assert blocks, "no finished block on disk"
    store = BlockCache(tmp_path / "work")
    for path in blocks:
        res = store.load(path.parent.name, int(path.stem.split("_")[1]))
        assert res is not None and res.trajectories == 250


def _sigterm_default_or_stuck(i: int):
    """Item 0: whether SIGTERM has its default action in the worker; item 1: a worker that outlives SIGTERM (e.g.
    inside a long kernel)."""
    if i == 0:
        return signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(120)


class _Stop(Exception):
    pass


def test_workers_take_sigterm_at_once_and_a_stuck_one_is_killed():
    """A pool worker ends on its parent's terminate (SIGTERM's default action, not the CLI's SystemExit handler
    inherited through fork, which a compiled kernel delays and the pool's worker loop catches); one that outlives
    SIGTERM is killed, so the parent's exit does not wait for it (measured before the fix: a killed length-scaling
    study stayed alive, its interpreter waiting for workers busy in the Chebyshev kernel).  Through the package's
    one pool (map_in_processes), stopped by a failure in the parent while one worker is stuck."""
    from lru_mps.run.executors import map_in_processes

    kids: list[int] = []
    stopped: list[float] = []
    # children this process had before the pool (e.g. a multiprocessing resource tracker or forkserver started by an
    # earlier test in the same pytest worker, which lives as long as this process) are not the pool's workers
    before = set(_children(os.getpid()))

    def first(i, default_action):
        assert i == 0 and default_action
        time.sleep(1.0)  # the other item is in a worker now, ignoring SIGTERM
        kids.extend(k for k in _children(os.getpid()) if k not in before)
        stopped.append(time.monotonic())
        raise _Stop

    previous = signal.signal(signal.SIGTERM, lambda *a: (_ for _ in ()).throw(SystemExit(143)))
    try:
        with pytest.raises(_Stop):
            map_in_processes(_sigterm_default_or_stuck, [(0,), (1,)], workers=2, on_result=first)
        assert time.monotonic() - stopped[0] < 15
        assert kids
        _assert_workers_end(kids, within=5.0)
    finally:
        signal.signal(signal.SIGTERM, previous)
