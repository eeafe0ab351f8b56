"""A number that is not resolved says why and what would resolve it (the JSON's "reason" next to its null, the
table's 'not resolved*' with the reason under the table), instead of a bare gap."""

from __future__ import annotations

import re

import numpy as np

from lru_mps.analysis.decay import decay_times, unresolved_reason
from lru_mps.physics.model import ArraySpec
from lru_mps.run.simulate import simulate
from lru_mps.studies.base import time_json
from lru_mps.studies.lifetimes import reason_lines, time_cell


def test_reason_and_remedy_of_an_unresolved_decay_time():
    """T_star at L = 3 and 150 mK from 4 sampled trajectories is not resolved: the reason names the window and the
    trajectories that would resolve it, and that many (the same seed, so the same first rows) do resolve it; a
    resolved time and an observable that did not run have no reason."""
    spec = ArraySpec.from_user(length=3, temperature="150mK")
    run = dict(init="leakage", t_final="20us", time_points=41, seed=1, estimator="sampled")
    res = simulate(spec, trajectories=4, **run)
    assert decay_times(res)["T_star"] is None
    reason = unresolved_reason("T_star", res)
    found = re.search(r"at least about ([\d,]+) trajectories would resolve it \(ran 4\)", reason)
    assert reason.startswith("not resolved: ") and "fit window" in reason and found, reason
    need = int(found.group(1).replace(",", ""))
    assert need > 4
    big = simulate(spec, trajectories=need, **run)
    assert decay_times(big)["T_star"] is not None and unresolved_reason("T_star", big) is None
    assert unresolved_reason("T1", big) is None  # the qubit start did not run: no number, no reason


def test_reason_in_the_json_and_the_table():
    t = time_json(np.nan, np.nan, 5e6, "not resolved: because")
    assert t["value_J"] is None and t["reason"] == "not resolved: because"
    assert "reason" not in time_json(100.0, 1.0, 5e6, "not resolved: because")  # a value has no reason
    assert set(time_json(np.nan, np.nan, 5e6)) == {"value_J", "error_J", "value_us", "error_us"}  # the keys of old
    assert time_cell(t, "us").strip() == "not resolved*" and time_cell(None).strip() == "-"
    lines = reason_lines({"T1 at L = 3": t, "T2 at L = 3": t, "T_star at L = 3": time_json(1.0, 0.1, 5e6)})
    assert lines == ["* T1 at L = 3; T2 at L = 3: not resolved: because"]
