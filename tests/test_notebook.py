"""studies/analysis.ipynb runs on the --quick length-scaling, qec, design, tolerance and logical studies.

Cost: the five quick studies (the session's runs, conftest.quick_study, shared with the studies' own tests, each
read here from a copy of its folder) and the notebook's kernel: 50 s (41 s of CPU) on the 2-core development
machine at load 2 with the studies run here; the length-scaling study and the kernel alone took 20 s of it.
"""

import json
import shutil
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from conftest import copy_study

NOTEBOOK = Path(__file__).resolve().parents[1] / "studies" / "analysis.ipynb"
#: study -> the environment variable the notebook reads its folder from
FOLDERS = {"length-scaling": "LRU_MPS_STUDY_DIR", "qec": "LRU_MPS_QEC_DIR", "design": "LRU_MPS_DESIGN_DIR",
           "tolerance": "LRU_MPS_TOLERANCE_DIR", "logical": "LRU_MPS_LOGICAL_DIR"}


def test_analysis_notebook_executes(quick_study, tmp_path, monkeypatch):
    """Every code cell runs without an error (nbclient raises on one; the outputs carry none) and leaves
    its own outputs: the figures replot() redraws exist only because the notebook wrote them (the study's
    figures are removed first), the printed numbers are the notebook's, read from each study's summary, and
    each of the qec, design, tolerance and logical sections draws its figure."""
    summaries = {}
    for name, env in FOLDERS.items():  # the session's quick runs (conftest), each in a copy of its folder
        res, _ = quick_study(name)
        summaries[name] = res.summary
        monkeypatch.setenv(env, str(copy_study(res.out, tmp_path / name)))
    study = tmp_path / "length-scaling"
    shutil.rmtree(study / "figures")  # written by the study: the notebook must write its own
    # Jupyter's own backend: the figures the notebook draws are its outputs (as a user sees them)
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
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
    # the qec, design and tolerance sections: their headline numbers as the summaries have them
    qec = json.loads(json.dumps(summaries["qec"], default=float))
    D = qec["mean_leakage_cycles"]
    assert f"mean leakage duration D = {D['value']:.3g} +- {D['error']:.2g} cycles" in text
    assert f"added error per cycle p_total = {qec['error_per_cycle']['added']['p_total']['value']:.3g}" in text
    design = summaries["design"]
    assert f"verdict: {design['verdict']['text']}" in text and design["paper_point"]["label"] in text
    unconfirmed = [f for f in design["screen"]["front"] if not f["confirmed"]]
    assert all(f"front point {f['label']}: not confirmed: " in text for f in unconfirmed)
    tol = summaries["tolerance"]
    for kind in tol["kinds"]:
        assert f"{kind}, L = {tol['lengths'][0]}: T_star doubles at S = " in text
    reasons = [t["reason"] for kind in tol["kinds"] for row in tol[kind]["by_length"] for q in ("T_star", "T1", "T2")
               for t in row[q] if t.get("reason")]
    assert all(r in text for r in reasons)  # every unresolved time of the tolerance study said, with its reason
    sections = {}
    for c in nb.cells:  # the code cells under each section heading
        if c.cell_type == "markdown" and c.source.startswith("## "):
            head = c.source.splitlines()[0]
        elif c.cell_type == "code" and nb.cells.index(c) > 1:
            sections.setdefault(head, []).append(c)
    logical = summaries["logical"]
    for x in logical["lambda"]:  # the logical section: Lambda per LRU kind and the break-even verdict, as stored
        assert f"Lambda {x['lru']} (d = {x['distances'][0]} -> {x['distances'][1]}) = " in text
    assert f"break-even: {logical['sweep']['break_even']['verdict']}" in text
    for word in ("QEC", "Design", "Tolerance", "The logical"):
        (cells,) = [v for k, v in sections.items() if k.startswith(f"## {word}")]
        assert any(o.get("data", {}).get("image/png") for c in cells for o in c.outputs), word  # a figure drawn
