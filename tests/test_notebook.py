"""studies/analysis.ipynb runs on a --quick length-scaling study."""

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from lru_mps.studies import run_study
from lru_mps.studies.base import StudyContext

NOTEBOOK = Path(__file__).resolve().parents[1] / "studies" / "analysis.ipynb"


def test_analysis_notebook_executes(tmp_path, monkeypatch):
    run_study("length-scaling", StudyContext(out=tmp_path / "study", workers=1), quick=True)
    monkeypatch.setenv("LRU_MPS_STUDY_DIR", str(tmp_path / "study"))
    monkeypatch.setenv("MPLBACKEND", "Agg")  # the test chooses a file backend; a user's Jupyter keeps its own
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = "".join(
        o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
    )
    assert "xi (study fit)" in outputs and "T_star per L" in outputs
    assert (tmp_path / "study" / "figures" / "localization_length.png").exists()
