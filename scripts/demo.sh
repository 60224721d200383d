#!/usr/bin/env bash
# The main job on the built-in example: prove the non-deterministic 2D maze with Trestle's own
# hand-set 2x8 controller safe forever, draw it, write the certificate and re-check it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --quiet
mkdir -p results
target/release/trestle check examples/maze-nondet.toml \
  --plot results/example-maze-nondet.svg --certificate results/example-maze-nondet.cert.json
target/release/trestle certify results/example-maze-nondet.cert.json examples/maze-nondet.toml
