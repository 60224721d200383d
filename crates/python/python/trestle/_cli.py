"""The ``trestle`` command installed with the package: the Rust CLI binary built with the
package and shipped inside it (``trestle/_bin/trestle``), run in place of this process so that
its exit codes, signals and output are the CLI's own."""

import os
import sys
from pathlib import Path


def binary():
    """The path of the bundled CLI binary."""
    return Path(__file__).resolve().parent / "_bin" / "trestle"


def main():
    exe = binary()
    if not exe.is_file():
        sys.stderr.write(
            f"error: the trestle binary is not in this installation ({exe}); "
            "install the package with `pip install ./crates/python`, which builds it\n"
        )
        return 2
    os.execv(exe, [str(exe), *sys.argv[1:]])
