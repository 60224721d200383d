#!/usr/bin/env bash
# The Python package's tests: a virtual environment under target/python-venv (made once and
# reused; pytest and maturin come from the registry), the package built from crates/python and
# installed into it (the extension and the bundled CLI, in the workspace's target directory, so a
# warm target rebuilds nothing), then its pytest suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/python-venv
python=${PYTHON:-python3}
if ! "$venv/bin/python" -c 'import pytest, maturin' 2>/dev/null; then
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet pytest 'maturin>=1.5,<2'
fi
# The venv's tools (maturin, the installed `trestle`) come first, as in an activated venv.
export PATH="$PWD/$venv/bin:$PATH"
# Without build isolation the venv's maturin builds (no fresh environment and download per run);
# `pip install ./crates/python` with isolation is what users run, and gives the same wheel.
"$venv/bin/python" -m pip install --quiet --no-build-isolation --force-reinstall --no-deps ./crates/python
"$venv/bin/python" -m pytest -q crates/python/tests "$@"
