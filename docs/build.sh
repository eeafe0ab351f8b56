#!/usr/bin/env bash
# Build the manual (docs/*.md, the API reference from the docstrings and
# studies/analysis.ipynb, not executed) as HTML, warnings as errors:
#   docs/build.sh              -> docs/_build/html/index.html
#   docs/build.sh OUTDIR       -> OUTDIR/index.html
# Run it in the virtualenv that has lru-mps; where the docs tools are missing
# it installs the package with its docs extra (python -m pip install '.[docs]').
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/_build/html}"
if ! python -c "import lru_mps, sphinx, numpydoc, myst_nb, furo" 2>/dev/null; then
    python -m pip install '.[docs]'
fi
python -m sphinx -W --keep-going -b html docs "$out"
echo "manual: $out/index.html"
