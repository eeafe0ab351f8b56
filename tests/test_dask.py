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


ROUTING = ["--grids", "2x2", "--temperatures", "0,100mK", "--thermal-max-sites", "12", "--realizations", "2",
           "--trajectories", "4"]


def test_routing_study_on_a_cluster_from_its_own_options(cluster, tmp_path):
    """`lru-mps study routing --scheduler ADDRESS` (the study's own option): the same results.nc, bit for bit, as the
    run in this process, the 100 mK thermal rows included (the 2x2 layout with its arms has 12 transmons)."""
    import xarray as xr
    from click.testing import CliRunner

    from lru_mps_cli.main import main
    from lru_mps.studies import StudyContext, run_study

    c, _ = cluster
    config = tmp_path / "small.toml"
    config.write_text('study = "routing"\ntime_points = 21\nt_base = "1000/J"\nt_per_hop = 10.0\n'
                      'realistic_t_after = "16us"\n[model]\nconditions = "both"\n')
    res = CliRunner().invoke(main, ["study", "routing", *ROUTING, "--config", str(config), "--scheduler",
                                    c.scheduler_address, "--out", str(tmp_path / "cluster")], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    here = run_study("routing", StudyContext(out=tmp_path / "here", workers=1, quiet=True), config_file=config,
                     overrides=dict(grids="2x2", temperatures="0,100mK", thermal_max_sites=12, realizations=2,
                                    trajectories=4))
    on_cluster = xr.load_dataset(tmp_path / "cluster" / "results.nc")
    here = xr.load_dataset(here.out / "results.nc")
    hot = here.sel(condition="realistic 100 mK")
    assert (hot["run"] == 1).all() and np.isfinite(hot["leakage_lifetime_qubit_J"]).all()  # the thermal point ran
    assert on_cluster.identical(here)
