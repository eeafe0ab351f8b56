"""`lru-mps simulate`'s summary and JSON show each number as what it is: the README's Python example (its T_star fit
has chi2_red = 21.6) flagged where the fit is reported, a time that is not there said why (never 'not
measured/resolved'), energies and rates in MHz beside J, every JSON null with its reason."""

from __future__ import annotations

import pytest

from lru_mps import ArraySpec, decay_times, simulate
from lru_mps.analysis.numbers import unexplained_nulls
from lru_mps.io.datasets import to_json
from lru_mps.io.summary import format_summary


@pytest.fixture(scope="module")
def readme():
    """The README's Python example."""
    spec = ArraySpec.from_user(length=3, reset="dissipation", rate="0.04J", conditions="ideal")
    return simulate(spec, t_final="1000/J", trajectories=200)


def test_the_readme_example_flags_its_poor_fit(readme):
    d = decay_times(readme)["T_star"]
    assert d.fit.chi2_red == pytest.approx(21.58, abs=0.01)  # the number itself unchanged
    assert d.flags and d.flags[0].startswith("poor fit: chi2_red = 21.6 > 3")
    assert str(d).startswith("80.5 +- 3.1 /J [poor fit: chi2_red = 21.6") and "flags=" in repr(d)
    text = format_summary(readme)
    assert "! T_star: poor fit: chi2_red = 21.6" in text
    assert not any(line.startswith("! T1") or line.startswith("! T2") for line in text.splitlines())
    times = to_json(readme)["decay_times"]
    assert times["T_star"]["flags"] == d.flags and "flags" not in times["T1"]


def test_the_header_gives_MHz_beside_J_and_times_their_digits(readme):
    text = format_summary(readme)
    head = text.splitlines()[0]
    assert "Ubar=50 J (250 MHz)" in head and "W=20 J (100 MHz)" in head and "G=0.04 J (0.2 MHz)" in head
    row = next(line for line in text.splitlines() if line.startswith("T_star "))
    assert "2.56 +- 0.10" in row and "80.5 +- 3.1" in row  # us first, 1/J beside it, each to its error's digits
    assert "not measured/resolved" not in text


def test_a_time_not_there_says_why(readme):
    assert unexplained_nulls(to_json(readme)) == []
    spec = ArraySpec.from_user(length=3, reset="dissipation", rate="0.04J", conditions="ideal")
    qubit = simulate(spec, init="qubit", t_final="300/J", trajectories=16)
    text = format_summary(qubit)
    line = next(x for x in text.splitlines() if x.startswith("T_star "))
    assert "not measured (the run has no leakage start (it ran qubit); run with --init leakage or --init all)" in line
    data = to_json(qubit)
    assert data["decay_times"]["T_star"]["value_J"] is None and "--init leakage" in data["decay_times"]["T_star"]["reason"]
    assert set(data["decay_times"]) == {"T_prop", "T_star", "T1", "T2"}  # the keys unchanged
    assert unexplained_nulls(data) == [], unexplained_nulls(data)
