#!/usr/bin/env bash
# Every test of every crate (release build: the same binaries the demo uses). Tests that read the
# third-party models in ../shared/models skip when it is absent, and fail when it is absent under CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --workspace --release
