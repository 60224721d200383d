#!/usr/bin/env bash
# Scale benchmarks of `check` (issue 16): deterministic synthetic controllers of growing width and
# depth on the deterministic maze (their random weights make the candidate non-inductive: these
# measure the counterexample path, exact replay included), and candidates that are unions of
# 300, 1000 and 2500 grid boxes (the same set as the maze's box candidate, so proven; these measure
# the per-query cost against a large invariant; needs ../shared/models for the 2x32 controller).
# Prints one line per case: time, splits, queries. Writes its inputs under target/bench-scale/.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --release --bin trestle
cargo build -q --release -p trestle-nn --example synthetic_controller
out=target/bench-scale
mkdir -p "$out"
trestle=target/release/trestle
sys=configs/systems/peer-maze-det.toml
run() { # label, then trestle check arguments
    local label=$1; shift
    local t0 t1 stats
    t0=$(date +%s.%N)
    stats=$("$trestle" check "$@" --threads 1 2>&1 | grep -E '^stats:' || true)
    t1=$(date +%s.%N)
    printf '%-34s wall %6.3f s   %s\n' "$label" "$(echo "$t1 - $t0" | bc)" "${stats#stats:  }"
}
for sizes in 2,256,256,2 2,1024,1024,2 2,2048,2048,2 2,256,256,256,256,2 2,128,128,128,128,128,128,2; do
    model="$out/synthetic-$sizes.onnx"
    [ -f "$model" ] || target/release/examples/synthetic_controller "$sizes" 7 "$model"
    run "synthetic $sizes" "$sys" --set "controller.model=$model"
done
if [ -d ../shared/models/maze ]; then
    for grid in 20x15 40x25 50x50; do
        cand="$out/union-$grid.toml"
        python3 - "$grid" "$sys" "$cand" <<'PY'
import sys
from fractions import Fraction as F
(a, b), sysfile, out = map(int, sys.argv[1].split('x')), sys.argv[2], sys.argv[3]
def q(f): return f"{f.numerator}/{f.denominator}"
boxes = []
for i in range(a):
    for j in range(b):
        x0, x1 = F(1, 4) + F(7, 10) * i / a, F(1, 4) + F(7, 10) * (i + 1) / a
        y0, y1 = F(11, 20) + F(2, 5) * j / b, F(11, 20) + F(2, 5) * (j + 1) / b
        boxes.append(f"({q(x0)} <= x <= {q(x1)} and {q(y0)} <= y <= {q(y1)})")
text = open(sysfile).read().replace('invariant = "0.25 <= x <= 0.95 and 0.55 <= y <= 0.95"',
                                   'invariant = "' + ' or '.join(boxes) + '"')
import os
text = text.replace('../../../shared', os.path.abspath('../shared'))
open(out, 'w').write(text)
PY
        run "union of $((${grid%x*} * ${grid#*x})) boxes (2x32)" "$cand"
    done
else
    echo "(../shared/models absent: the union-of-boxes cases are skipped)"
fi
