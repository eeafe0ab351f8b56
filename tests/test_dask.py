"""Blocks on a real dask.distributed LocalCluster: same numbers, and a killed worker loses nothing."""

import os
import signal
import threading
import time

import numpy as np
import pytest

distributed = pytest.importorskip("dask.distributed", reason="dask.distributed is in the test extras; install it")

from lru_mps.run.simulate import simulate
from lru_mps.physics.model import ArraySpec

KW = dict(trajectories=32, t_final=200.0, time_points=11, seed=9)
OBS = ("leakage_array", "qubit_population", "qubit_coherence")


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        with distributed.Client(c) as client:
            yield c, client


def _same(a, b):
    for name in OBS:
        assert np.array_equal(a.observable(name).mean, b.observable(name).mean), name
        assert np.array_equal(a.observable(name).sem, b.observable(name).sem), name


def test_dask_cluster_gives_identical_numbers(cluster):
    _, client = cluster
    spec = ArraySpec.from_user(length=3, conditions="realistic", reset="dissipation", rate="0.1J")
    _same(simulate(spec, **KW), simulate(spec, client=client, **KW))


def test_killed_worker_chunk_is_recomputed(cluster, tmp_path):
    """kill -9 a worker while blocks are running: the scheduler reruns the lost ones elsewhere."""
    _, client = cluster
    spec = ArraySpec.from_user(length=4, conditions="realistic", reset="periodic", rate="0.1J")
    kw = {**KW, "trajectories": 96, "t_final": 600.0}
    reference = simulate(spec, **kw)
    pids = list(client.run(os.getpid).values())
    killed = []

    def killer():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # wait until the run is under way: a first block is stored
            done = len(list(tmp_path.glob("*/block_*.npz")))
            if done >= 1:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(done)
                return
            time.sleep(0.01)

    thread = threading.Thread(target=killer)
    thread.start()
    result = simulate(spec, client=client, cache=tmp_path, **kw)
    thread.join()
    assert killed and killed[0] < 12, "the worker was not killed mid-run: nothing was tested"
    _same(reference, result)
    assert result.completed == kw["trajectories"]
    assert len(list(tmp_path.glob("*/block_*.npz"))) == 16
