"""The one rule for showing a number (lru_mps.analysis.numbers): a value to its error's digits, 'not resolved (reason)'
for an error of half the value or more, a flag where a value passes a physical bound by more than its error, and a
reason beside every null of a JSON summary."""

from __future__ import annotations

import pytest

from lru_mps.analysis.numbers import (bound_flag, fit_flag, not_resolved, pm, probability_flag, resolution_reason,
                                      shown, sig, t2_flags, unexplained_nulls, with_parameter_reasons)


@pytest.mark.parametrize("value, error, text", [
    (0.9172, 0.21, "0.92 +- 0.21"),
    (90.4, 36.0, "90 +- 36"),
    (118.3, 14.0, "118 +- 14"),
    (24.97, 7.8, "25.0 +- 7.8"),
    (553.7, 630.0, "550 +- 630"),
    (2.7103, 0.0998, "2.71 +- 0.10"),  # 0.0998 rounds to 0.10, not 0.100
    (3.45e-5, 1.2e-6, "(3.45 +- 0.12)e-05"),
    (6.8257e-4, 5.5e-4, "(6.8 +- 5.5)e-04"),
    (1.5e6, 2.0e4, "(1.500 +- 0.020)e+06"),
    (1.0, 0.0, "1.000"),  # an exact value: four digits
    (float("nan"), 0.1, "-"),
])
def test_value_to_its_errors_digits(value, error, text):
    assert pm(value, error) == text


def test_significant_digits_keep_trailing_zeros():
    assert sig(7.696, 3) == "7.70" and sig(0.33428442298163175) == "0.3343" and sig(100.0, 3) == "100"
    assert sig(None) == "-" and sig(1e-5) == "1.000e-05"


def test_an_error_of_half_the_value_or_more_is_not_resolved():
    assert resolution_reason(553.7, 630.0, "more trajectories") == \
        "its error is half its value or more (550 +- 630); more trajectories"
    assert resolution_reason(10.0, 5.0) is not None and resolution_reason(10.0, 4.99) is None
    assert resolution_reason(None, 1.0) is None  # a missing value: its reason is the caller's
    assert shown(553.7, 630.0, remedy="more trajectories", unit="us").startswith("not resolved (its error is half")
    assert shown(9.466, 1.04, unit="us") == "9.5 +- 1.0 us"
    assert shown(None, None, "the run ends first") == "not resolved (the run ends first)"
    assert not_resolved("not resolved: too few points") == "not resolved (too few points)"


def test_bounds_are_flagged_beyond_the_error_only():
    # the temperature sweep's T2 = 9.47 +- 1.04 us at 300 mK against the single transmon's 7.70 us
    assert t2_flags(9.466, 1.04, 10.41, 1.1, 7.696, "the single transmon's T2 limit") == \
        ["above the single transmon's T2 limit = 7.70 us"]
    assert t2_flags(8.5, 1.2, 20.0, 1.0, 7.696) == []  # within its error of the limit: no flag
    assert t2_flags(30.0, 1.0, 10.0, 1.0) == ["above 2 T1 = 20.0 us"]
    assert t2_flags(21.0, 1.0, 10.0, 0.5) == []  # T1's error counts too: 21 - hypot(1, 1) < 20
    assert probability_flag(1.2, 0.1) == "above 1 (a probability)" and probability_flag(1.05, 0.1) is None
    assert probability_flag(-0.05, 0.01) == "below 0 (a probability)" and probability_flag(0.5, 0.1) is None
    assert bound_flag(None, 0.1, 1.0, "x") is None
    assert probability_flag(1.0 + 2e-16, 0.0) is None  # rounding passes no bound
    from lru_mps.analysis.lifetimes import Fraction
    from lru_mps.studies.lifetimes import LifetimeGrid, cells

    grid = LifetimeGrid((2,))
    grid.put((0,), {"removal_efficiency": Fraction(1.3, 0.1)})
    grid.put((1,), {"removal_efficiency": Fraction(0.7, 0.1)})
    bad, good = grid.as_json((0,), 5e6)["removal_efficiency"], grid.as_json((1,), 5e6)["removal_efficiency"]
    assert bad["flags"] == ["above 1 (the share eta is a probability)"] and "flags" not in good
    assert cells(None, None, bad).endswith("1.30+-0.10!") and cells(None, None, good).endswith("0.70+-0.10")


def test_a_poor_fit_is_flagged():
    assert fit_flag(21.58).startswith("poor fit: chi2_red = 21.6 > 3")
    assert fit_flag(1.2) is None and fit_flag(21.6, weighted=False) is None and fit_flag(None) is None


def test_every_null_needs_a_reason():
    assert unexplained_nulls({"a": 1, "b": [1, 2]}) == []
    assert unexplained_nulls({"a": None, "b": [1, None]}) == [".a", ".b[1]"]
    # a value object's reason; a sibling K_reason (a string, or aligned lists and tables)
    assert unexplained_nulls({"T1": {"value_J": None, "error_J": None, "reason": "not resolved: why"}}) == []
    assert unexplained_nulls({"mean": [1, None, None], "mean_reason": [None, "not run", "not run"]}) == []
    assert unexplained_nulls({"mean": [1, None, None], "mean_reason": [None, "not run", None]}) == [".mean[2]"]
    assert unexplained_nulls({"opt": {"p": {"low": None, "high": 1}}, "opt_reason": {"p": {"low": "no minimum"}}}) == []
    assert unexplained_nulls({"opt": {"p": {"low": None}}, "opt_reason": {"p": {"high": "x"}}}) == [".opt.p.low"]
    assert unexplained_nulls({"x": {"y": None}, "x_reason": "all of it"}) == []
    assert unexplained_nulls({"reasons": [None, "a"], "a_reason": None, "reason": None}) == []  # nulls in reasons
    assert unexplained_nulls({"reason": "", "v": None}) == [".v"]  # an empty reason explains nothing
    params = with_parameter_reasons({"T1q_J": None, "L": 3, "device": None})
    assert unexplained_nulls(params) == [] and "infinite" in params["T1q_J_reason"]
