#!/usr/bin/env bash
# The LTL benchmark tables (issue 12), each cell one `trestle ltl` run with a wall-clock limit:
#   1. Figure 1: X^t (z <= 2), t = 1..10, by RMILP alone;
#   2. RMILP with adaptive splitting (the default race of the encodings with and without LP
#      tightening, then each alone: --tighten on, --tighten off) against the baseline
#      (--no-adaptive): the PI servos' G<=t |x| <= 1/2 and Simple Spread's G<=t |x1| <= 1.15
#      (from its start box and from a 0.02-wide one), by RMILP alone;
#   3. Simple Spread (2 and 4 agents): stable = F<=t G<=t near and live = G<=t F<=t near,
#      t = 0..9, with the default pipeline (BPT, simulated runs, RMILP).
#
#   scripts/ltl-tables.sh [--timeout S] [--out FILE]
#
# Cell legend: T = true, exact; T~ = true on MILP evidence (floating point, margin >= 2^-10);
# F = false, with a path replayed in exact arithmetic; TO = the time limit was reached;
# ? = unknown. Figures are wall-clock seconds as the run reports them.
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

# One cell: "<mark> <seconds>[ <method>]".
cell() {
  local json code=0
  json="$("$bin" ltl "$@" --timeout "$timeout" --json 2>/dev/null)" || code=$?
  local status verdict secs method reason
  status="$(printf '%s' "$json" | grep -o '"status": "[a-z-]*"' | head -1 | cut -d'"' -f4)"
  verdict="$(printf '%s' "$json" | grep -o '"verdict": "[a-z]*"' | head -1 | cut -d'"' -f4)"
  secs="$(printf '%s' "$json" | grep -o '"seconds": [0-9.e+-]*' | head -1 | awk '{printf "%.3f", $2}')"
  method="$(printf '%s' "$json" | grep -o '"method": "[a-z]*"' | head -1 | cut -d'"' -f4)"
  reason="$(printf '%s' "$json" | grep -o '"reason": "[^"]*"' | head -1)"
  local mark="?"
  case "$status/$verdict" in
    proven/true) mark=T ;;
    evidence/true) mark="T~" ;;
    refuted/false) mark=F ;;
  esac
  if [ "$mark" = "?" ] && printf '%s' "$reason" | grep -q "time-out"; then mark=TO; fi
  [ "$code" -le 3 ] || mark="error"
  echo "$mark ${secs:-?} ${method:-}"
}

report() {
  if [ -n "$out" ]; then echo "$1" >> "$out"; fi
  echo "$1"
}
[ -z "$out" ] || : > "$out"

report "## Figure 1: X^t (z <= 2), --method rmilp"
report "| t | verdict | s |"
report "|---|---|---|"
for t in $(seq 1 10); do
  read -r mark secs _ <<<"$(cell configs/systems/rnn-figure1.toml --formula "X^$t (z <= 2)" --method rmilp)"
  report "| $t | $mark | $secs |"
done

report ""
report "## RMILP: adaptive splitting (the race, --tighten on, --tighten off) vs the baseline (--no-adaptive)"
report "| case | t | race | s | on | s | off | s | baseline | s |"
report "|---|---|---|---|---|---|---|---|---|---|"
# One row: the case's name, t, then the arguments of `trestle ltl` without the method flags.
row() {
  local name="$1" t="$2"
  shift 2
  read -r m0 s0 _ <<<"$(cell "$@" --method rmilp)"
  read -r m1 s1 _ <<<"$(cell "$@" --method rmilp --tighten on)"
  read -r m2 s2 _ <<<"$(cell "$@" --method rmilp --tighten off)"
  read -r m3 s3 _ <<<"$(cell "$@" --method rmilp --no-adaptive)"
  report "| $name | $t | $m0 | $s0 | $m1 | $s1 | $m2 | $s2 | $m3 | $s3 |"
}
for t in 10 20; do
  row pi-tuned "$t" configs/systems/pi-tuned.toml --formula "G<=$t (x <= 0.5 and x >= -0.5)"
done
for t in 5 10 15; do
  row pi-integral "$t" configs/systems/pi-integral.toml --formula "G<=$t (x <= 0.5 and x >= -0.5)"
done
for t in 1 2 3 4; do
  row spread-2 "$t" configs/systems/spread-2.toml --formula "G<=$t (x1 <= 1.15 and x1 >= -1.15)"
done
# Simple Spread from a 0.02-wide start box: agent 1 near (0.91, 0.91), agent 2 near (-0.91, 0.31).
near=(--set "init.x1=[0.9, 0.92]" --set "init.y1=[0.9, 0.92]" --set "init.x2=[-0.92, -0.9]" --set "init.y2=[0.3, 0.32]")
for t in 4 6 8 10; do
  row "spread-2 (0.02 box)" "$t" configs/systems/spread-2.toml "${near[@]}" --formula "G<=$t (x1 <= 1.15 and x1 >= -1.15)"
done

for n in 2 4; do
  report ""
  report "## Simple Spread, $n agents (verdict, seconds, deciding method)"
  report "| t | stable | live |"
  report "|---|---|---|"
  for t in $(seq 0 9); do
    read -r m1 s1 w1 <<<"$(cell configs/systems/spread-$n.toml --property stable --k "$t")"
    read -r m2 s2 w2 <<<"$(cell configs/systems/spread-$n.toml --property live --k "$t")"
    report "| $t | $m1 $s1 ($w1) | $m2 $s2 ($w2) |"
  done
done
