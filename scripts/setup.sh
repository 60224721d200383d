#!/usr/bin/env bash
# Installs what building Trestle needs and is missing: Z3's headers and library (z3 crate, linked
# against Debian's libz3 4.8.12), libclang (bindgen for the Z3 bindings), cmake and a C++ compiler
# (HiGHS is built from source by the highs-sys crate), GMP and MPFR (trestle-real's high-precision
# intervals: rug over gmp-mpfr-sys with use-system-libs links Debian's libgmp 6.2.1 and libmpfr
# 4.2.0 instead of building them), mpmath for Debian's python3 (trestle-real's independent
# check of its high-precision functions), and python3-venv (the Python package's virtual
# environments: `pip install ./crates/python`, scripts/python-tests.sh). Idempotent; uses sudo
# when not root.
set -euo pipefail
need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for pkg in cmake g++ libclang-dev libz3-dev pkg-config libgmp-dev libmpfr-dev python3-mpmath python3-venv; do
  have_pkg "$pkg" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
command -v cargo >/dev/null || { echo "cargo is missing: install Rust (rustup) first" >&2; exit 1; }
