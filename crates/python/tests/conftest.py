"""Shared fixtures: the repository root (tests run from anywhere), the installed ``trestle``
console script, and the third-party models beside the repository (``../shared/models``), which
are skipped when absent unless ``CI=true``."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SHARED_MODELS = ROOT.parent / "shared" / "models"


@pytest.fixture
def root():
    return ROOT


@pytest.fixture
def shared_models():
    if not SHARED_MODELS.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"the shared models are missing under CI=true: {SHARED_MODELS}")
        pytest.skip(f"no shared models at {SHARED_MODELS}")
    return SHARED_MODELS


def cli(*args):
    """Runs the installed ``trestle`` command (the package's console script) from the root."""
    exe = Path(sys.executable).parent / "trestle"
    return subprocess.run([str(exe), *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=600)
