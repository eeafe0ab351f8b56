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
