"""The package's build backend: maturin, after building the ``trestle`` CLI binary and copying
it into the package (``trestle/_bin/trestle``), where the ``trestle`` console script runs it.

maturin builds one crate per wheel, and a pyo3 extension cannot also be a binary target; so the
CLI is built here with cargo, in the workspace's target directory (reusing what the extension's
build compiles), and shipped in the wheel as package data.
"""

import os
import shutil
import subprocess
from pathlib import Path

import maturin

CRATE = Path(__file__).resolve().parent.parent
WORKSPACE = CRATE.parent.parent
BUNDLED = CRATE / "python" / "trestle" / "_bin" / "trestle"


def _bundle_cli():
    cargo = os.environ.get("CARGO", "cargo")
    manifest = WORKSPACE / "Cargo.toml"
    subprocess.run([cargo, "build", "--release", "--bin", "trestle", "--manifest-path", str(manifest)], check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", WORKSPACE / "target"))
    BUNDLED.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(target / "release" / "trestle", BUNDLED)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _bundle_cli()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _bundle_cli()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    return maturin.build_sdist(sdist_directory, config_settings)


get_requires_for_build_wheel = maturin.get_requires_for_build_wheel
get_requires_for_build_editable = maturin.get_requires_for_build_editable
get_requires_for_build_sdist = maturin.get_requires_for_build_sdist
prepare_metadata_for_build_wheel = maturin.prepare_metadata_for_build_wheel
prepare_metadata_for_build_editable = maturin.prepare_metadata_for_build_editable
