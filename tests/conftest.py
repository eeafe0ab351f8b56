import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

#: modules whose tests share an expensive module-scoped fixture (test_sweeps: the four quick studies;
#: test_dask: a LocalCluster; test_temperature_physics: the captured temperature sweep;
#: test_tolerance, test_temperature_sweep, test_design: the quick tolerance, temperature and design studies): under xdist
#: (pyproject's addopts) each runs on one worker, so that the fixture is set up once; every other test is
#: handed out on its own
ONE_WORKER_MODULES = ("test_sweeps.py", "test_dask.py", "test_temperature_physics.py", "test_tolerance.py",
                      "test_temperature_sweep.py", "test_design.py", "test_routing.py", "test_gaps.py")
#: modules that take their quick studies from the session's :func:`quick_study`: one group under xdist, so that
#: each study runs once for all of them
QUICK_STUDY_MODULES = ("test_sweeps.py", "test_tolerance.py", "test_temperature_sweep.py", "test_length_scaling.py",
                       "test_gaps.py")


def long_scale() -> float:
    """Scale factor for the long validation runs (default 0.25, the reduced form CI runs; LRU_MPS_LONG_SCALE=1 for the full runs)."""
    return float(os.environ.get("LRU_MPS_LONG_SCALE", "0.25"))


def pytest_collection_modifyitems(config, items):
    """The long validation runs first (a stable sort; the order of everything else is kept).

    They are the slowest tests by far (the slowest takes minutes): with the
    xdist workers taking tests one at a time, starting them first keeps one of
    them from running alone on one core at the end.
    """
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


def pytest_configure(config):
    """Under xdist, the controller compiles the numba kernels in the background (tests/warm_kernels.py)."""
    if hasattr(config, "workerinput") or not isinstance(getattr(config.option, "numprocesses", None), int) \
            or config.option.numprocesses < 2 or config.option.collectonly:
        return
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    config.stash[_WARM_UP] = subprocess.Popen([sys.executable, str(Path(__file__).with_name("warm_kernels.py"))],
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)


def pytest_unconfigure(config):
    proc = config.stash.get(_WARM_UP, None)
    if proc is not None and proc.poll() is None:  # a short run: the cache is written one kernel at a time
        proc.kill()
        proc.wait()


_WARM_UP = pytest.StashKey[subprocess.Popen]()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` with ONE_WORKER_MODULES as groups.

    xdist's own groups (``xdist_group`` marks) reach its scheduler through a
    suffix it writes into the test ids, which pytest 9.2 no longer takes
    (pytest-xdist issue 1386: the marks are silently ignored); the module
    names above reach it through the ids themselves.
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class ModuleGroups(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            if Path(module).name in QUICK_STUDY_MODULES:
                return "quick studies"
            return module if Path(module).name in ONE_WORKER_MODULES else super()._split_scope(nodeid)

    return ModuleGroups(config, log)


@pytest.fixture(scope="session")
def quick_study(tmp_path_factory):
    """``quick_study(name)``: (StudyResult, seconds) of ``lru-mps study NAME --quick``, each study run once per session
    (and worker) in its own folder, for every module that reads one (:data:`QUICK_STUDY_MODULES`)."""
    from lru_mps.studies import StudyContext, run_study

    runs = {}

    def get(name: str):
        if name not in runs:
            out = tmp_path_factory.mktemp(f"quick-{name}")
            t0 = time.perf_counter()
            res = run_study(name, StudyContext(out=out, workers=1), quick=True)
            runs[name] = (res, time.perf_counter() - t0)
        return runs[name]

    return get


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """Small matrices: one BLAS thread (threaded OpenBLAS on a busy 2-core machine is 10-100x slower)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield
