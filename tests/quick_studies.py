"""The ``--quick`` studies of a test run, each run once and shared by every process of the run (conftest.quick_study).

A study NAME runs into ``ROOT/NAME/run`` (``run_study(NAME, StudyContext(out, workers=1), quick=True)``, one BLAS
thread as the tests have), and its StudyResult, with the dataset and summary it returned, and its CPU seconds (the
run's process time: it runs in this one process, so the number does not depend on the machine's load) are pickled
beside it (``ROOT/NAME/result.pickle``).  Whoever asks first takes the study's file lock
(``fcntl.flock`` on ``ROOT/NAME/lock``) and runs it; whoever asks meanwhile waits on the lock, then loads the
pickle, or runs meanwhile another study the run wants that nobody has started.  Run as a script (``python
quick_studies.py ROOT [--after=PID] NAME...``: the xdist controller starts it, conftest's scheduler, with the
studies the collected tests read) it runs those studies ahead of the tests that read them (and writes their names
into ``ROOT/wanted``), once the kernel warm-up PID has compiled numba's kernels; a study that fails there is left
to the tests, which run it again and see the error.
"""

from __future__ import annotations

import fcntl
import pickle
import sys
import time
from pathlib import Path


def quick_result(root: Path, name: str) -> tuple:
    """(StudyResult, CPU seconds of its run) of ``lru-mps study NAME --quick`` in ``root``: run here, or loaded where another
    process of the test run has run it.  While another process runs it, this one runs a study of
    ``root/wanted`` (those the collected tests read, written by the xdist controller) that nobody has started,
    then looks again; with none left it waits."""
    folder = Path(root) / name
    folder.mkdir(parents=True, exist_ok=True)
    while True:
        with open(folder / "lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # (released when the file is closed)
            except BlockingIOError:
                pass
            else:
                return _run_or_load(folder, name)
        if not _run_another(Path(root), name):
            with open(folder / "lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                return _run_or_load(folder, name)


def _run_another(root: Path, busy: str) -> bool:
    """Run one wanted study that no process has started (none holds its lock, none has finished it or seen it
    fail); whether there was one."""
    wanted = root / "wanted"
    for other in (wanted.read_text().split() if wanted.exists() else []):
        folder = root / other
        if other == busy or (folder / "result.pickle").exists() or (folder / "failed").exists():
            continue
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / "lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            try:
                _run_or_load(folder, other)
            except Exception:  # (not this test's study: its own tests run it again, and report the error)
                (folder / "failed").touch()
            return True
    return False


def _run_or_load(folder: Path, name: str) -> tuple:
    """The study's pickled result, or (none yet) run it and pickle it; the caller holds its lock."""
    from threadpoolctl import threadpool_limits

    from lru_mps.studies import StudyContext, run_study

    done = folder / "result.pickle"
    if done.exists():
        return pickle.loads(done.read_bytes())
    with threadpool_limits(limits=1, user_api="blas"):
        t0 = time.process_time()
        res = run_study(name, StudyContext(out=folder / "run", workers=1), quick=True)
        result = (res, time.process_time() - t0)
    tmp = folder / "result.pickle.tmp"
    tmp.write_bytes(pickle.dumps(result))
    tmp.rename(done)
    return result


def _wait_for(pid: int) -> None:
    """Wait until process ``pid`` (the kernel warm-up, tests/warm_kernels.py) has ended: the studies then load the
    compiled kernels from numba's cache instead of compiling them a second time."""
    while True:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return
        except (OSError, IndexError):
            return
        time.sleep(0.5)


def main(root: str, names: list[str]) -> None:
    from warm_kernels import _die_with_parent  # (the kernel warm-up's: both end with the pytest process)

    _die_with_parent()
    after = [int(n.split("=", 1)[1]) for n in names if n.startswith("--after=")]
    names = [n for n in names if not n.startswith("--after=")]
    Path(root).mkdir(parents=True, exist_ok=True)
    (Path(root) / "wanted").write_text("\n".join(names) + "\n")
    for pid in after:
        _wait_for(pid)
    for name in names:
        try:
            quick_result(Path(root), name)
        except Exception:  # (the tests that read it run it again, and report the error)
            (Path(root) / name / "failed").touch()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
