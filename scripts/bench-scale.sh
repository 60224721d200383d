#!/usr/bin/env bash
# Scale benchmarks of `check` (issue 16): deterministic synthetic controllers of growing width and
# depth on the deterministic maze (their random weights make the candidate non-inductive: these
# measure the counterexample path, exact replay included), and candidates that are unions of
# 300, 1000 and 2500 grid boxes (the same set as the maze's box candidate, so proven; these measure
# the per-query cost against a large invariant; needs ../shared/models for the 2x32 controller).
# n-dimensional mazes with centering controllers (safe: splits and queries against dimension, width
# and depth). Prints one line per case: time, splits, queries. Writes its inputs under target/bench-scale/.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${TRESTLE:-}" ] || cargo build -q --release --bin trestle
cargo build -q --release -p trestle-nn --example synthetic_controller
out=target/bench-scale
mkdir -p "$out"
trestle=${TRESTLE:-target/release/trestle}
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
    [ -f "$model" ] || target/release/examples/synthetic_controller random "$sizes" 7 "$model"
    run "synthetic $sizes" "$sys" --set "controller.model=$model"
done
# n-dimensional mazes x_i' = x_i + 0.1 a_i with a centering controller plus 0.02 times a random
# network (inductive box [0.25, 0.95]^n with a margin): how splits and queries grow with the
# state dimension, the width and the depth on instances that are safe.
nd_system() { # dims, model, out
    python3 - "$@" <<'PY'
import sys
n, model, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
xs = [f"x{i}" for i in range(1, n + 1)]
box = lambda lo, hi: " and ".join(f"{lo} <= {x} <= {hi}" for x in xs)
lines = [f'init = "{box(0.55, 0.65)}"', f'safe = "{box(0.2, 1)}"', f'invariant = "{box(0.25, 0.95)}"', "",
         "[system]", f'name = "maze-{n}d"', f'description = "{n}-dimensional maze, centering controller"', "",
         "[state]"] + [f'{x} = {{ type = "real" }}' for x in xs] + ["", "[controller]", f'model = "{model}"',
         "inputs = [" + ", ".join(f'"{x}"' for x in xs) + "]",
         "actions = [" + ", ".join(f'"a{i}"' for i in range(1, n + 1)) + "]", "", "[step]"] + \
        [f'{x} = "{x} + 0.1*a{i}"' for i, x in enumerate(xs, 1)]
open(out, "w").write("\n".join(lines) + "\n")
PY
}
for dims in 2 4 6; do
    for wd in 64x2 256x2 512x2 128x4 128x6; do
        width=${wd%x*}; depth=${wd#*x}
        model="$out/centering-${dims}d-$wd.onnx"
        [ -f "$model" ] || target/release/examples/synthetic_controller centering "$dims" "$width" "$depth" 0.02 7 "$model"
        nd_system "$dims" "$(realpath "$model")" "$out/maze-${dims}d-$wd.toml"
        run "maze ${dims}d, centering $wd" "$out/maze-${dims}d-$wd.toml"
    done
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
