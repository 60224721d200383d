#!/usr/bin/env bash
# The CEGAR comparison table (issue 15): every shipped planning instance under witness splitting
# (ws, the default), concretisation exclusion (ce), ws without the heuristic, ws without
# incremental computation, and bounded model checking (bmc), each cell one `trestle cegar` run
# with a wall-clock limit; the explicit-state verdict beside them.
#
#   scripts/cegar-table.sh [--timeout S] [--out FILE]
#
# Cell: verdict, seconds, |P|, iterations, SMT calls (bmc: depth instead of |P| and iterations);
# "timeout" when the limit was reached.
set -euo pipefail
cd "$(dirname "$0")/.."
timeout=60
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --timeout) timeout="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ -x target/release/trestle ] || { scripts/setup.sh && cargo build --release --bin trestle; }
bin=target/release/trestle

cell() {
  local json
  json=$("$bin" cegar "$@" --timeout "$timeout" --json 2>/dev/null || true)
  python3 - "$json" <<'PY'
import json, sys
try:
    j = json.loads(sys.argv[1])
except Exception:
    print("error"); sys.exit()
s = j["stats"]
v = j["verdict"] if j["verdict"] != "unknown" else "timeout" if "timeout" in j.get("reason", "") else "unknown"
if j["method"] == "bmc":
    print(f"{v} {s['seconds']:.1f} s, depth {s['depth']}, {s['smt_calls']} calls")
else:
    print(f"{v} {s['seconds']:.1f} s, {s['predicates']} P, {s['iterations']} it, {s['smt_calls']} calls")
PY
}

table() {
  echo "| instance | explicit | ws | ce | no-heuristic | no-incremental | bmc | bmc, network in Z3 |"
  echo "|---|---|---|---|---|---|---|---|"
  for task in blocks4 blocks5 transport puzzle8; do
    for w in 16 32 64; do
      f=configs/systems/$task-h$w.toml
      ex=$(cell "$f" --method explicit)
      ws=$(cell "$f")
      ce=$(cell "$f" --refine ce)
      nh=$(cell "$f" --no-heuristic)
      ni=$(cell "$f" --no-incremental)
      bmc=$(cell "$f" --method bmc)
      bmcz3=$(cell "$f" --method bmc --encoding z3)
      echo "| $task-h$w | ${ex%%,*} | $ws | $ce | $nh | $ni | $bmc | $bmcz3 |"
    done
  done
}

if [ -n "$out" ]; then table | tee "$out"; else table; fi
