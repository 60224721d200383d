#!/usr/bin/env bash
# The bounded-CTL case-study tables (issue 11): FrozenLake safe/succ for k = 1..10 with the three
# engines, and VerticalCAS sep = AX^k (|h| > 100) for the notes' 12 initial climb rates x k = 1..10
# with the MILP engines. Each cell is one `trestle ctl` run with a wall-clock limit; a cell that
# reaches it says so. Needs ../shared/models.
#
#   scripts/ctl-tables.sh [--timeout S] [--compositional-timeout S] [--vcas-methods "monolithic compositional"] [--out FILE]
#
# Cell legend: T = true, exact (bounds or explicit enumeration); T~ = true on MILP evidence
# (floating-point, with a margin); F = false, with a trace replayed in exact arithmetic;
# TO = the time limit was reached; ? = unknown. Figures are wall-clock seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
timeout=60
comp_timeout=60
vcas_methods="monolithic compositional"
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --timeout) timeout="$2"; shift 2 ;;
    --compositional-timeout) comp_timeout="$2"; shift 2 ;;
    --vcas-methods) vcas_methods="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ -d ../shared/models ] || { echo "../shared/models is missing: the case studies need its networks" >&2; exit 2; }
[ -x target/release/trestle ] || { scripts/setup.sh && cargo build --release --bin trestle; }
bin=target/release/trestle

# One cell: "<mark> <seconds>", from the run's JSON (status) and its exit code.
cell() {
  local limit="$1"; shift
  local json code=0
  json="$("$bin" ctl "$@" --timeout "$limit" --jobs 2 --quiet --json 2>/dev/null)" || code=$?
  local status verdict secs
  status="$(printf '%s' "$json" | grep -o '"status": "[a-z-]*"' | head -1 | cut -d'"' -f4)"
  verdict="$(printf '%s' "$json" | grep -o '"verdict": "[a-z]*"' | head -1 | cut -d'"' -f4)"
  secs="$(printf '%s' "$json" | grep -o '"seconds": [0-9.e+-]*' | head -1 | awk '{printf "%.2f", $2}')"
  local reason
  reason="$(printf '%s' "$json" | grep -o '"reason_kind": "[^"]*"' | head -1 | cut -d'"' -f4)"
  case "$verdict/$status/$code" in
    true/proven/0) echo "T $secs" ;;
    true/evidence/3) echo "T~ $secs" ;;
    false/refuted/1) echo "F $secs" ;;
    unknown/unknown/3) case "$reason" in time-limit) echo "TO >$limit" ;; *) echo "? $secs" ;; esac ;;
    *) echo "error (exit $code)" ;;
  esac
}

report="$(mktemp)"
trap 'rm -f "$report"' EXIT
{
  echo "## FrozenLake (k = 1..10)"
  echo
  printf '| property | method |'; for k in $(seq 1 10); do printf ' k=%s |' "$k"; done; echo
  printf '| --- | --- |'; for k in $(seq 1 10); do printf ' --- |'; done; echo
  for p in safe succ; do
    for m in explicit monolithic compositional; do
      t="$timeout"; [ "$m" = compositional ] && t="$comp_timeout"
      printf '| %s | %s |' "$p" "$m"
      for k in $(seq 1 10); do printf ' %s |' "$(cell "$t" configs/systems/frozenlake.toml --property "$p" --k "$k" --method "$m")"; done
      echo
    done
  done
  for m in $vcas_methods; do
    t="$timeout"; [ "$m" = compositional ] && t="$comp_timeout"
    echo
    echo "## VerticalCAS, sep = AX^k (h > 100 or h < -100), $m (limit $t s per cell)"
    echo
    printf '| hdot0 |'; for k in $(seq 1 10); do printf ' k=%s |' "$k"; done; echo
    printf '| --- |'; for k in $(seq 1 10); do printf ' --- |'; done; echo
    for h in -19.5 -22.5 -25.5 -28.5 -31.5 -34.5 -37.5 -40.5 -43.5 -39 -39.5 -40; do
      printf '| %s |' "$h"
      for k in $(seq 1 10); do
        printf ' %s |' "$(cell "$t" configs/systems/vcas.toml --property sep --k "$k" --method "$m" --set "init.hdot0=$h")"
      done
      echo
    done
  done
  echo
  echo "T = true, exact (bounds or explicit enumeration); T~ = true on MILP evidence (floating point, with a margin);"
  echo "F = false, trace replayed exactly; TO = time limit reached; ? = unknown. Seconds of wall-clock time, 2 worker threads."
} | tee "$report"
if [ -n "$out" ]; then
  tmp="$out.tmp.$$"
  cp "$report" "$tmp" && mv "$tmp" "$out"
fi
