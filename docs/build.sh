#!/usr/bin/env bash
# Build the manual (docs/*.md, the API reference from the docstrings and
# studies/analysis.ipynb, not executed) as HTML, warnings as errors:
#   docs/build.sh              -> docs/_build/html/index.html
#   docs/build.sh OUTDIR       -> OUTDIR/index.html
# Installs the package with its docs extra into the current Python first;
# run it inside a virtualenv.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/_build/html}"
python -m pip install -q '.[docs]'
python -m sphinx -W --keep-going -b html docs "$out"
echo "manual: $out/index.html"
