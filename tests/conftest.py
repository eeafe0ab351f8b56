import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

#: modules whose tests share an expensive module-scoped fixture (test_dask: a LocalCluster;
#: test_temperature_physics: the captured temperature sweep; test_summary_numbers: the README's ensemble): under
#: xdist (pyproject's addopts) each runs on one worker, so that the fixture is set up once; every other test is
#: handed out on its own (the quick studies are shared across the workers by :func:`quick_study`)
ONE_WORKER_MODULES = ("test_dask.py", "test_temperature_physics.py", "test_summary_numbers.py")


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
    for key in (_WARM_UP, _QUICK_STUDIES):
        proc = config.stash.get(key, None)
        if proc is not None and proc.poll() is None:  # a short run: the cache is written one kernel at a time
            proc.kill()
            proc.wait()


_WARM_UP = pytest.StashKey[subprocess.Popen]()
_QUICK_STUDIES = pytest.StashKey[subprocess.Popen]()

#: the quick studies each module reads through :func:`quick_study` ("*": every registered study, one per
#: parametrized test, its id the study's name): the xdist controller runs those of the collected tests ahead of them
QUICK_STUDIES = {
    "test_cli.py": ("dynamics",), "test_design.py": ("design",), "test_figures.py": ("design", "routing", "dynamics"),
    "test_gaps.py": "*", "test_length_scaling.py": ("length-scaling",),
    "test_notebook.py": ("length-scaling", "qec", "design", "tolerance", "logical"),
    "test_qec.py": ("qec",), "test_routing.py": ("routing",),
    "test_sweeps.py": ("rate-sweep", "disorder-sweep", "hopping-sweep", "dynamics"),
    "test_temperature_sweep.py": ("temperature-sweep",), "test_tolerance.py": ("tolerance",)}


def _studies_read(nodeids) -> list[str]:
    """The quick studies the tests ``nodeids`` read (:data:`QUICK_STUDIES`), in the order they first need them."""
    names: list[str] = []
    for nodeid in nodeids:
        module, _, test = nodeid.partition("::")
        wanted = QUICK_STUDIES.get(Path(module).name, ())
        if wanted == "*":
            wanted = (test[test.index("[") + 1:-1],) if test.endswith("]") else ()
        names += [n for n in wanted if n not in names]
    return names


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` with ONE_WORKER_MODULES as groups, and the quick studies the collected tests read run
    ahead of them (tests/quick_studies.py, started once the collection is known).

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
            return module if Path(module).name in ONE_WORKER_MODULES else super()._split_scope(nodeid)

        def schedule(self) -> None:
            first = self.collection is None
            super().schedule()
            names = _studies_read(self.collection or []) if first else []
            if names and _QUICK_STUDIES not in config.stash:
                root = config._tmp_path_factory.getbasetemp() / "quick-studies"  # (the workers' :func:`_shared_folder`)
                env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
                warm = config.stash.get(_WARM_UP, None)
                after = [f"--after={warm.pid}"] if warm is not None else []
                config.stash[_QUICK_STUDIES] = subprocess.Popen(
                    [sys.executable, str(Path(__file__).with_name("quick_studies.py")), str(root), *after, *names],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)

    return ModuleGroups(config, log)


def _shared_folder(tmp_path_factory) -> Path:
    """A folder that every process of this test run sees: the run's base temporary folder (under xdist, the parent
    of the workers' own ``popen-gwN`` folders, which the controller's is; without xdist, this process's own)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def quick_study(tmp_path_factory):
    """``quick_study(name)``: (StudyResult, CPU seconds of its run) of ``lru-mps study NAME --quick`` (``run_study(name,
    StudyContext(out, workers=1), quick=True)``), each study run once for the whole test run, shared by every
    module that reads one and by the xdist workers (tests/quick_studies.py: the first process to ask runs it under
    a file lock into ``quick-studies/NAME/run`` in the run's shared temporary folder and pickles the StudyResult
    it returned, with its CPU time; the others wait for it and load that).  Under xdist the controller runs the
    studies the collected tests read ahead of them.  The folder is shared: a test that writes into it (a rerun,
    a redraw) works on a copy (:func:`copy_study`)."""
    from quick_studies import quick_result

    root = _shared_folder(tmp_path_factory) / "quick-studies"
    runs = {}

    def get(name: str):
        if name not in runs:
            runs[name] = quick_result(root, name)
        return runs[name]

    return get


def copy_study(folder, to) -> Path:
    """A copy of a stored study's folder (config, results, summary, figures and its work/ of finished blocks, the
    files' times kept), for a test that reruns or redraws it: the session's quick studies are shared."""
    import shutil

    return Path(shutil.copytree(folder, to))


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """Small matrices: one BLAS thread (threaded OpenBLAS on a busy 2-core machine is 10-100x slower).

    The BLAS libraries are looked up again only when modules were imported since the last look (a look-up reads
    every loaded library: ~10 ms a test; the limit itself costs microseconds)."""
    with _blas_controller().limit(limits=1, user_api="blas"):
        yield


_BLAS: dict = {"modules": -1, "controller": None}


def _blas_controller():
    """A threadpoolctl controller of the BLAS libraries loaded now (kept while no module is imported)."""
    from threadpoolctl import ThreadpoolController

    if len(sys.modules) != _BLAS["modules"]:
        _BLAS["controller"], _BLAS["modules"] = ThreadpoolController(), len(sys.modules)
    return _BLAS["controller"]
