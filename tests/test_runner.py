"""Blocks, workers and resuming give bit-identical numbers."""

import numpy as np
import pytest

from lru_mps.run.simulate import simulate
from lru_mps.physics.model import ArraySpec

OBS = ("leakage_array", "leakage_site1", "qubit_population", "qubit_coherence")
KW = dict(trajectories=24, t_final=150.0, time_points=11, seed=4)


def _same(a, b):
    for name in OBS:
        assert np.array_equal(a.observable(name).mean, b.observable(name).mean), name
        assert np.array_equal(a.observable(name).sem, b.observable(name).sem), name
    for init in a.blocks:
        assert np.array_equal(a.site_resolved(init).mean, b.site_resolved(init).mean)


def test_workers_and_resume_are_bit_identical(tmp_path):
    spec = ArraySpec.from_user(length=3, conditions="realistic", reset="random", rate="0.1J")
    serial = simulate(spec, **KW)
    parallel = simulate(spec, workers=2, **KW)
    _same(serial, parallel)
    stored = simulate(spec, cache=tmp_path, **KW)
    _same(serial, stored)
    # lose some finished blocks, as after a kill -9: the rerun recomputes only those
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    blocks = sorted(run_dir.glob("block_*.npz"))
    assert len(blocks) == 16
    for path in blocks[::3]:
        path.unlink()
    resumed = simulate(spec, cache=tmp_path, **KW)
    _same(serial, resumed)
    assert len(list(run_dir.glob("block_*.npz"))) == 16
    # a different seed is a different run, not a reuse of the stored blocks
    other = simulate(spec, cache=tmp_path, **{**KW, "seed": 5})
    assert not np.array_equal(other.observable("qubit_population").mean, serial.observable("qubit_population").mean)


def test_simulate_takes_settings_or_options_and_refuses_an_unknown_one():
    """One list of run options (RUN_OPTIONS): simulate takes them as keywords or as settings; keywords with settings
    replace those options and keep the rest (the same numbers as the keywords alone); an unknown one is refused by
    name."""
    from lru_mps.errors import ParameterError
    from lru_mps.run.settings import RUN_OPTIONS, make_settings

    spec = ArraySpec.from_user(length=3, conditions="ideal")
    settings = make_settings(spec, init="leakage", t_final=100.0, time_points=11, trajectories=4, seed=2)
    a = simulate(spec, settings)
    b = simulate(spec, init="leakage", t_final=100.0, time_points=11, trajectories=4, seed=2)
    assert np.array_equal(a.observable("leakage_array").mean, b.observable("leakage_array").mean)
    c = simulate(spec, settings, seed=5)
    d = simulate(spec, init="leakage", t_final=100.0, time_points=11, trajectories=4, seed=5)
    assert c.settings.seed == 5 and np.array_equal(c.times, settings.times)
    assert np.array_equal(c.observable("leakage_array").mean, d.observable("leakage_array").mean)
    assert simulate(spec, settings, time_points=6).times.size == 6
    with pytest.raises(ParameterError, match="trajectory_count.*an option of a run: init, t_final"):
        simulate(spec, trajectory_count=3)
    assert list(RUN_OPTIONS)[:3] == ["init", "t_final", "time_points"]
