"""A study declares itself: a new study is one package (its Study class, named in STUDIES) and its TOML file.

The registry finds studies by name; everything else about a study (its own options and their help, what it
sweeps, what it refuses) is on its class, and the command line is built from that.  Here a toy study is written to
a folder of its own, added to the studies' path and the TOML folders, and runs from the Python API and from
`lru-mps study` with no other file edited.
"""

from __future__ import annotations

import json
import textwrap
from importlib import resources

import pytest
from click.testing import CliRunner

import lru_mps.studies as studies
from lru_mps.errors import ParameterError
from lru_mps.studies import base

TOY = '''
"""A toy study: the fraction of the time grid before a given time (no physics; it tests the registry)."""

import json

import numpy as np
import xarray as xr

from lru_mps.studies.base import Study, StudyContext, StudyOption


class Toy(Study):
    NAME = "toy-count"
    HELP = """Count the points of a grid below a time (a registry test)."""
    OPTIONS = (StudyOption("points", "Points of the grid, e.g. 11.", kind="int"),)
    SWEPT = {"length": ("lengths",)}
    REFUSES_DEVICE = "it sweeps nothing a device fixes, but says no all the same"

    def compute(self, cfg, ctx: StudyContext):
        grid = np.linspace(0.0, 1.0, int(cfg["points"]))
        below = int(np.sum(grid < float(cfg["below"])))
        lengths = [int(x) for x in str(cfg["lengths"]).split(",")]
        return xr.Dataset({"grid": ("t", grid)}), {"study": self.NAME, "below": below, "lengths": lengths}

    def table(self, summary):
        return f"below: {summary['below']}"

    def plot(self, dataset, summary, figdir):
        return []


STUDIES = {Toy.NAME: Toy()}
'''

TOML = '''
study = "toy-count"
points = 11      # points of the grid
below = 0.35     # the time the points are counted below
lengths = "3,4"

[model]

[quick]
points = 5
'''


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy study's package and TOML in tmp_path, on the studies' path and the TOML folders."""
    pkg = tmp_path / "pkgs" / "toy_count"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(textwrap.dedent(TOY))
    folder = tmp_path / "tomls"
    folder.mkdir()
    (folder / "toy-count.toml").write_text(TOML)
    monkeypatch.setattr(studies, "__path__", [*studies.__path__, str(tmp_path / "pkgs")])
    monkeypatch.setattr(base, "STUDY_FOLDERS", [resources.files("lru_mps_studies"), folder])
    base._study_file.cache_clear()
    studies.forget_studies()
    yield tmp_path
    studies.forget_studies()
    base._study_file.cache_clear()


def test_a_new_study_is_its_package_and_its_toml(toy):
    assert "toy-count" in studies.study_names()
    res = studies.run_study("toy-count", base.StudyContext(out=toy / "out", quiet=True))
    assert res.summary["below"] == 4 and res.table == "below: 4"  # 0, 0.1, 0.2, 0.3 of 11 points
    quick = studies.run_study("toy-count", base.StudyContext(out=toy / "quick", quiet=True), quick=True)
    assert quick.summary["below"] == 2  # 0, 0.25 of 5 points
    assert json.loads((toy / "out" / "summary.json").read_text())["below"] == 4
    # what it sweeps: a single -L runs alone, with its list refused beside it
    one = studies.run_study("toy-count", base.StudyContext(out=toy / "one", quiet=True), overrides={"length": 5})
    assert one.summary["lengths"] == [5]
    with pytest.raises(ParameterError) as err:
        studies.run_study("toy-count", base.StudyContext(out=toy / "two", quiet=True),
                          overrides={"length": 5, "lengths": "3,4"})
    assert err.value.name == "length"
    # what it refuses: a device file, a graph
    for key, value in (("device", "chip.toml"), ("geometry", "grid:2x2")):
        with pytest.raises(ParameterError) as err:
            studies.run_study("toy-count", base.StudyContext(out=toy / key, quiet=True), overrides={key: value})
        assert err.value.name == key


def test_a_new_study_gets_its_command_from_its_declaration(toy):
    """`lru-mps study toy-count`: its own option under its heading, the default read from its TOML."""
    import click

    from lru_mps_cli.study import make_command

    group = click.Group(name="study")
    make_command("toy-count", group)
    help_text = CliRunner().invoke(group, ["toy-count", "--help"]).output
    assert "Options of this study:" in help_text and "--points INTEGER" in help_text
    assert "[default: 11; --quick: 5]" in help_text
    res = CliRunner().invoke(group, ["toy-count", "--points", "21", "--out", str(toy / "cli"), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output.strip().splitlines()[-1])["below"] == 7  # 0..0.3 in steps of 0.05


def test_every_installed_study_declares_what_the_registry_reads():
    for name in studies.study_names():
        study = studies.get_study(name)
        assert study.NAME == name
        assert set(study.SWEPT_HOW) == {k for k, v in study.SWEPT.items() if v is None}, name
        for option in study.OPTIONS:
            assert option.key in study.DEFAULTS, (name, option.key)  # its default is in the TOML, not in the code
