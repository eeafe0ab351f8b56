"""Bad input stops with one line naming the parameter and what is allowed, never a wrong number.

Each test here is fast (seconds): it checks that the input is refused, or
resolved as the user meant, without running a study.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from lru_mps.errors import ParameterError
from lru_mps_cli.main import main


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _one_error_line(res) -> str:
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    (line,) = [x for x in res.output.splitlines() if x.startswith("Error:")]
    return line


def _no_compute(monkeypatch, module, name):
    """Make a study's compute step fail loudly, so a test sees whether the input was refused before it ran."""
    def started(*args, **kwargs):
        raise AssertionError("the study started")
    monkeypatch.setattr(module, name, started)


# ------------------------------------------------------------------ design: --budget
@pytest.mark.parametrize("budget", ["-1", "0", "-0.005", "2", "nan"])
def test_design_refuses_a_budget_that_is_not_a_probability(tmp_path, monkeypatch, budget):
    from lru_mps.studies import design_screen

    _no_compute(monkeypatch, design_screen, "screen_leakage")
    res = cli("study", "design", "--budget", budget, "--out", tmp_path / "run", "--workers", "1")
    line = _one_error_line(res)
    assert line.startswith(f"Error: --budget={budget}") and "(0, 1]" in line, line


def test_design_refuses_a_bad_budget_from_the_study_file(tmp_path, monkeypatch):
    from lru_mps.studies import design_screen
    from lru_mps.studies.base import StudyContext
    from lru_mps.studies import run_study

    _no_compute(monkeypatch, design_screen, "screen_leakage")
    config = tmp_path / "design.toml"
    config.write_text('study = "design"\nbudget = -0.01\n')
    with pytest.raises(ParameterError) as err:
        run_study("design", StudyContext(out=tmp_path / "run", workers=1), config_file=config)
    assert err.value.name == "budget" and "(0, 1]" in str(err.value)
