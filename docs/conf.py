"""Sphinx configuration of the lru-mps manual.

Build it with docs/build.sh (or: python -m pip install '.[docs]' &&
sphinx-build -W --keep-going -b html docs docs/_build/html).  The Markdown
pages are read by MyST (through myst-nb, which also renders the notebook
studies/analysis.ipynb, linked here as docs/analysis.ipynb, without running
it); the API reference comes from the docstrings (autodoc + numpydoc).
"""

from importlib.metadata import version as _version

project = "lru-mps"
author = "the lru-mps developers"
release = _version("lru-mps")
version = release

extensions = [
    "sphinx.ext.autodoc",
    "numpydoc",
    "myst_nb",  # includes myst-parser: the .md pages and the notebook
]

exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "build.sh"]

# MyST: headings become link targets (the pages link to each other's sections)
myst_heading_anchors = 3

# the notebook is rendered as stored (its outputs, if any), never executed
nb_execution_mode = "off"

# autodoc: members in source order; the public names are listed in api.md
autodoc_member_order = "bysource"
autodoc_typehints = "description"

# numpydoc: no autosummary tables of every member (they warn on members that are
# documented elsewhere or not at all); no cross-reference checking of types
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()

html_theme = "furo"
html_title = f"lru-mps {release}"


# ---------------------------------------------------------------------------------------------- broken tables
# A Markdown table interrupted by a blank line renders as a table and a paragraph of pipes: the rows after the
# blank line fall out of it, without a warning from MyST.  The build checks every page and the README itself
# (with -W, as CI builds it, a broken table fails the build).

import re as _re
from pathlib import Path as _Path

_ROOT = _Path(__file__).resolve().parent
_FENCE = _re.compile(r"^\s*(```|~~~)")
_SEPARATOR = _re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def _cells(line: str) -> int:
    """The number of cells of a table row (pipes inside code spans or escaped do not count)."""
    line = _re.sub(r"`[^`]*`", "", line.strip()).replace("\\|", "")
    return len(line.strip("|").split("|"))


def _is_row(line: str) -> bool:
    """A table row: it starts and ends with a pipe (a line of prose may start with a ket, |1>, but not end so)."""
    line = line.strip()
    return len(line) > 1 and line.startswith("|") and line.endswith("|")


def broken_tables(text: str) -> list[tuple[int, str]]:
    """(line number, what is wrong) for every Markdown table row of ``text`` that belongs to no table: a block of
    table rows (lines that start and end with a pipe, outside fenced code) must open with a header row and its separator
    (``|---|---|``), and every row has the header's number of cells."""
    problems, block, fenced = [], [], False
    lines = text.splitlines() + [""]
    for number, line in enumerate(lines, 1):
        if _FENCE.match(line):
            fenced = not fenced
        if not fenced and _is_row(line):
            block.append((number, line))
            continue
        if block:
            first = block[0][0]
            if len(block) < 2 or not _SEPARATOR.match(block[1][1]):
                problems.append((first, "table rows without a header row and separator above them (a table "
                                        "interrupted by a blank line?)"))
            else:
                width = _cells(block[0][1])
                problems += [(n, f"a row of {_cells(row)} cells in a table of {width}") for n, row in block[2:]
                             if _cells(row) != width]
            block = []
    return problems


def _check_tables(app) -> None:
    from sphinx.util import logging

    log = logging.getLogger(__name__)
    for path in sorted(_ROOT.glob("*.md")) + [_ROOT.parent / "README.md"]:
        for number, why in broken_tables(path.read_text(encoding="utf-8")):
            log.warning(f"broken Markdown table: {why}", location=f"{path}:{number}")


def setup(app):
    app.connect("builder-inited", _check_tables)
