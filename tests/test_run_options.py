"""Run options declared once: a field of RunSettings is the option list, its check, with_options and its cache key.

The plain options (RunSettings' fields with a RunOption) are read by RUN_OPTIONS, make_settings, with_options,
run_key and the options table; the feedback trains' rule has one owner (lru_mps.mcwf.trains.trains_apply), read
both by the trajectory loop (what runs) and by the summary (what it reports).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from lru_mps.errors import ParameterError
from lru_mps.physics.model import ArraySpec
from lru_mps.run.cache import run_key
from lru_mps.run.settings import (RUN_OPTIONS, RunSettings, feedback_path, make_settings, options_table,
                                  plain_options, time_grid, with_options)

SPEC = ArraySpec.from_user(length=3, reset="periodic", rate="0.03J", conditions="realistic", temperature="100mK")

#: per plain option: a value other than its default that a run accepts, and one it refuses
OTHER_AND_BAD = {
    "trajectories": (7, 0),
    "seed": (3, -1),
    "batched": (False, "yes"),
    "backend": ("torch:cpu", "fortran"),
    "feedback": ("reference", "slow"),
    "hot_tail": (4.0, 0.5),
    "leakage_thermal_odds": (8.0, 0.0),
    "integrate_decay": (True, 1),
    "thermal_strata": (True, "on"),
}


def test_every_field_with_a_declaration_is_an_option_and_nothing_else_is():
    fields = {f.name for f in dataclasses.fields(RunSettings)}
    assert set(plain_options()) <= fields
    assert set(plain_options()) <= set(RUN_OPTIONS)
    assert set(RUN_OPTIONS) - set(plain_options()) == {"init", "t_final", "time_points", "engine", "estimator",
                                                       "engine_options"}
    assert set(OTHER_AND_BAD) == set(plain_options())  # a new option adds its row here
    for name in plain_options():
        assert RUN_OPTIONS[name] == next(f.default for f in dataclasses.fields(RunSettings) if f.name == name)
        assert f"``{name}``" in options_table()


def _torch() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


#: the options whose other value runs here (a torch backend only where torch is installed)
RUNNABLE = sorted(n for n in OTHER_AND_BAD if n != "backend" or _torch())


@pytest.mark.parametrize("name", sorted(OTHER_AND_BAD))
def test_each_option_is_checked_naming_itself(name):
    other, bad = OTHER_AND_BAD[name]
    with pytest.raises(ParameterError) as err:
        make_settings(SPEC, **{name: bad})
    assert err.value.name == name
    with pytest.raises(ParameterError) as err:
        RunSettings(times=time_grid(1.0, 2), **{name: bad})
    assert err.value.name == name
    if name in RUNNABLE:
        assert getattr(make_settings(SPEC, **{name: other}), name) == other
    else:  # not installed: refused naming the backend
        with pytest.raises(ParameterError) as err:
            make_settings(SPEC, **{name: other})
        assert err.value.name == name


@pytest.mark.parametrize("name", RUNNABLE)
def test_with_options_keeps_every_other_option(name):
    other, _ = OTHER_AND_BAD[name]
    base = make_settings(SPEC, engine="exact", t_final="50/J", time_points=11)
    new = with_options(SPEC, base, **{name: other})
    assert getattr(new, name) == other
    for kept in plain_options():
        if kept != name:
            assert getattr(new, kept) == getattr(base, kept), kept
    np.testing.assert_array_equal(new.times, base.times)


@pytest.mark.parametrize("name", sorted(OTHER_AND_BAD))
def test_an_option_enters_the_cache_key_as_it_declares(name):
    """An option with a key changes the run's key when set off its default; one without (feedback: the same
    numbers) does not; the default adds no entry (the keys of earlier runs stay valid)."""
    other, _ = OTHER_AND_BAD[name]
    base = make_settings(SPEC, engine="exact", init="all")
    key, desc = run_key(SPEC, base)
    new = dataclasses.replace(base)
    setattr(new, name, other)  # (set after the check: a torch backend keys a run whether or not torch is here)
    new_key, new_desc = run_key(SPEC, new)
    declared = plain_options()[name].key is not None
    assert (new_key != key) is declared
    if declared and name not in ("trajectories", "seed", "batched"):
        assert name not in desc and name in new_desc


def _two_resets() -> ArraySpec:
    return ArraySpec.from_user(geometry="grid:2x2", start_site="1,1", reset_site="1,2; 2,1", reset="periodic",
                               rate="0.05J", conditions="ideal")


@pytest.mark.parametrize("spec, expected", [(ArraySpec.from_user(length=3, reset="periodic", rate="0.05J",
                                                                 conditions="ideal"), "fast"),
                                            (_two_resets(), "reference")])
def test_the_summary_reports_the_feedback_path_that_ran(spec, expected):
    """What the summary says (feedback_path) is what the loop does (its trains or one stop per measurement): an
    exact run with two LRUs takes the reference path and says so."""
    from lru_mps.engines import batch_store, run_engine
    from lru_mps.mcwf.loop import feedback_trains

    settings = make_settings(spec, engine="exact", t_final="20/J", time_points=3, trajectories=1)
    assert feedback_path(spec, settings) == expected
    store_cls = batch_store(run_engine(settings.for_engines()))
    real = spec.draw_realization(np.random.default_rng(0))
    store = store_cls(spec, settings.for_engines(), [real], 1, [[np.eye(3)[0]] * spec.L], np.array([2]))
    assert (feedback_trains(store, spec, settings.estimator) is not None) is (expected == "fast")


def test_the_block_cache_is_cache_and_store_its_former_name(tmp_path):
    """simulate(cache=folder) keeps the finished blocks; store= (the former name) still works, with a deprecation
    warning, and reads the same blocks; both together are refused by name."""
    from lru_mps.run.simulate import simulate

    spec = ArraySpec.from_user(length=2, reset="periodic", rate="0.05J", conditions="ideal")
    kw = dict(trajectories=8, t_final="20/J", time_points=5, engine="exact", init="leakage")
    first = simulate(spec, cache=tmp_path, **kw)
    assert list(tmp_path.glob("*/block_*.npz"))
    with pytest.warns(DeprecationWarning, match="cache"):
        again = simulate(spec, store=tmp_path, **kw)
    np.testing.assert_array_equal(first.observable("leakage_array").mean, again.observable("leakage_array").mean)
    with pytest.raises(ParameterError) as err:
        simulate(spec, cache=tmp_path, store=tmp_path, **kw)
    assert err.value.name == "store"
