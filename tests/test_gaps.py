"""Every study's --quick run (the registry's: a new study is included by registering it) shows each number as what it
is: no null in summary.json without a reason beside it (lru_mps.analysis.numbers' convention), every 'value+-error'
cell of its table to the error's digits, and a time in 1/J only beside the same time in us.

Cost: the quick studies once per test run (conftest.quick_study, shared with the studies' own tests, test_figures
and test_notebook, and across the xdist workers): about 3 minutes on one core in all.
"""

from __future__ import annotations

import json
import re

import pytest

from lru_mps.analysis.numbers import unexplained_nulls
from lru_mps.studies import study_names
from lru_mps.studies.lifetimes import LEGEND

#: a table cell 'value+-error' (the cells of lru_mps.studies.lifetimes.time_cell and the sweeps' columns)
CELL = re.compile(r"(?<![\w.+-])(-?\d+(?:\.\d+)?)\+-(\d+(?:\.\d+)?)(?![\w.])")


def _decimals(error: str) -> int:
    """The decimal place of an error's last significant digit, two significant digits (440+-190: -1, the tens)."""
    if "." in error:
        return len(error.split(".")[1])
    return min(0, 2 - len(error.lstrip("0")))


def _digits_ok(value: str, error: str) -> bool:
    """A cell to its error's digits: the error with at most two significant digits, the value rounded at the same
    place ('0.92+-0.21', '118+-14', '440+-190', '90+-29')."""
    if "." in error:
        significant = len(error.replace(".", "").lstrip("0"))
    else:
        significant = len(error.lstrip("0").rstrip("0")) if len(error.lstrip("0")) > 2 else 1
    d = _decimals(error)
    if d >= 0:
        value_ok = (len(value.split(".")[1]) if "." in value else 0) == d
    else:
        value_ok = "." not in value and int(value) % 10 ** -d == 0
    return significant <= 2 and value_ok


def _loose(value: str, error: str) -> bool:
    """Whether a cell's error is half its value or more, whatever the rounding of the shown digits."""
    half_ulp = 0.5 * 10.0 ** -_decimals(error)
    return float(error) - half_ulp >= 0.5 * (abs(float(value)) + half_ulp)


@pytest.mark.parametrize("name", study_names())
def test_every_gap_says_why(quick_study, name):
    res, _ = quick_study(name)
    stored = json.loads((res.out / "summary.json").read_text())
    missing = unexplained_nulls(stored)
    assert not missing, f"{name}: nulls without a reason beside them: {missing[:10]} ({len(missing)} in all)"


@pytest.mark.parametrize("name", study_names())
def test_table_numbers_to_their_digits_and_in_one_unit(quick_study, name):
    res, _ = quick_study(name)
    bad = [m.group(0) for m in CELL.finditer(res.table) if not _digits_ok(m.group(1), m.group(2))]
    assert not bad, f"{name}: cells not to their error's digits: {bad[:10]}"
    # a number whose error is half of it or more reads 'not resolved*' (its reason under the table), never a number
    loose = [m.group(0) for m in CELL.finditer(res.table) if _loose(m.group(1), m.group(2))]
    assert not loose, f"{name}: cells whose error is half their value or more: {loose[:10]}"
    # a cell marked 'not resolved*' has its reason under the table (a '* ...' line, or the lifetimes' legend for
    # their columns)
    lines = res.table.splitlines()
    marked = [line for line in lines if "not resolved*" in line and not line.startswith("*")
              and "'not resolved*'" not in line]
    explained = any(line.startswith("* ") for line in lines) or LEGEND in res.table
    assert not marked or explained, f"{name}: 'not resolved*' without its reason: {marked[:3]}"
    # one unit system: a time in 1/J appears only beside the same time in us
    alone = [line for line in res.table.splitlines() if re.search(r"\d/J\b", line) and not re.search(r"\bus\b", line)]
    assert not alone, f"{name}: times in 1/J without their us: {alone[:5]}"
