#!/usr/bin/env bash
# The 16 peer maze controllers of the compositional paper (../shared/models/maze), two at a time.
#   scripts/peer-suite.sh check [FLAGS...]   # the paper's candidate, our best configuration (or --paper)
#   scripts/peer-suite.sh synth [FLAGS...]   # invariant synthesis, no candidate
# Prints each instance's verdict and statistics, then the suite's wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
cmd=${1:-check}
shift || true
models=../shared/models/maze
[ -d "$models" ] || { echo "peer-suite: $models is missing" >&2; exit 2; }
cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/trestle
flags="$*"
export bin cmd flags
run_one() {
  local kind=$1 h=$2 out
  out=$("$bin" "$cmd" "configs/systems/peer-maze-$kind.toml" \
    --set "controller.model=../shared/models/maze/$kind/maze_2d_${h}x${h}.onnx" --threads 1 $flags 2>&1) || true
  printf '%-7s 2x%-4s %s\n        %s\n' "$kind" "$h" "$(echo "$out" | head -1)" "$(echo "$out" | grep '^ *stats:' | sed 's/^ *//' || true)"
}
export -f run_one
start=$(date +%s.%N)
for kind in det nondet; do for h in 32 40 48 56 64 128 256 512; do echo "$kind $h"; done; done |
  xargs -P 2 -L 1 bash -c 'run_one "$0" "$1"'
end=$(date +%s.%N)
awk -v a="$start" -v b="$end" 'BEGIN { printf "suite wall time: %.2f s (2 instances at a time, 1 thread each)\n", b - a }'
