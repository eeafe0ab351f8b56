"""studies/analysis.ipynb runs on a --quick length-scaling study."""

import shutil
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from lru_mps.studies import run_study
from lru_mps.studies.base import StudyContext

NOTEBOOK = Path(__file__).resolve().parents[1] / "studies" / "analysis.ipynb"


def test_analysis_notebook_executes(tmp_path, monkeypatch):
    """Every code cell runs without an error (nbclient raises on one; the outputs carry none) and leaves
    its own outputs: the figures replot() redraws exist only because the notebook wrote them (the study's
    figures are removed first), and the printed numbers are the notebook's."""
    study = tmp_path / "study"
    run_study("length-scaling", StudyContext(out=study, workers=1), quick=True)
    shutil.rmtree(study / "figures")  # written by the study: the notebook must write its own
    monkeypatch.setenv("LRU_MPS_STUDY_DIR", str(study))
    monkeypatch.setenv("MPLBACKEND", "Agg")  # the test chooses a file backend; a user's Jupyter keeps its own
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    for c in code:
        c.outputs, c.execution_count = [], None
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert all(c.execution_count is not None for c in code)  # every cell ran
    outputs = [o for c in code for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    assert all(c.get("outputs") for c in code), [c.source[:40] for c in code if not c.get("outputs")]
    text = "".join(o.get("text", "") for o in outputs)
    assert "xi (study fit)" in text and "T_star per L" in text
    assert (study / "figures" / "localization_length.png").exists()  # redrawn by the notebook's replot()
