#!/usr/bin/env bash
# The scale table (issue 16): how splits, queries and time grow with the controller's width and
# depth (configs/maze/scale.toml: 2-D mazes, 2x1024, 2x2048, 4x256, 6x128) and with the number of
# state variables (configs/arena/scale.toml: 3-, 4- and 6-D arenas, 2x32 and 2x64, det and
# disturbed). Generates both suites once into target/maze-scale and target/arena-scale
# (regenerated when the spec or the binary changes; the models are not committed), then runs
# `trestle check SYSTEM --threads 1 --json` on every instance with a wall-clock limit.
#
#   scripts/scale-table.sh [--timeout S] [--out FILE] [--only maze|arena]
#
# Row: instance, state dims, network shape, verdict (with "!= EXPECTED" when it differs from the
# suite's independently established verdict), then the JSON's stats; "timeout" when the limit
# was reached.
set -euo pipefail
cd "$(dirname "$0")/.."
timeout=300
out=""
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --timeout) timeout="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
bin=target/release/trestle
if ! { [ -x "$bin" ] && "$bin" arena --help >/dev/null 2>&1; }; then
  scripts/setup.sh && cargo build --release --quiet --bin trestle
fi

# generate KIND SPEC DIR: the suite of SPEC into DIR, unless already there from this spec and binary.
generate() {
  local kind=$1 spec=$2 dir=$3 stamp
  stamp="$(sha256sum "$spec" "$bin" | sha256sum | cut -c1-16)"
  if [ ! -f "$dir/.stamp" ] || [ "$(cat "$dir/.stamp")" != "$stamp" ]; then
    rm -rf "$dir"
    local t0=$SECONDS
    "$bin" "$kind" generate "$spec" "$dir" --quiet >&2
    echo "$kind: generated $spec into $dir in $((SECONDS - t0)) s" >&2
    echo "$stamp" > "$dir/.stamp"
  fi
}

row() {
  local system=$1 expect=$2 json rc=0
  json=$(timeout --kill-after=10 $((timeout + 30)) "$bin" check "$system" --threads 1 --json --timeout "$timeout" \
    2>/dev/null) || rc=$?
  python3 - "$system" "$expect" "$rc" "$json" <<'PY'
import json, re, sys
system, expect, rc, text = sys.argv[1:5]
name = system.rsplit("/", 1)[-1].removesuffix(".toml")
m = re.search(r"-(\d+)d-", name)
dims = m.group(1) if m else "2"
shape = re.search(r"-(\d+x\d+)-", name).group(1)
try:
    j = json.loads(text)
except Exception:
    print(f"| {name} | {dims} | {shape} | {'timeout (killed)' if rc in ('124', '137') else 'error ' + rc} |" + " |" * 9)
    sys.exit()
s = j.get("stats", {})
v = j.get("verdict", "error")
if v == "unknown" and "time limit" in json.dumps(j.get("conditions", {})):
    v = "timeout"
if expect and v != expect:
    v += f" != {expect}"
f = lambda k, d=1: f"{s[k]:.{d}f}" if isinstance(s.get(k), float) else str(s.get(k, "-"))
print(f"| {name} | {dims} | {shape} | {v} | {f('seconds', 2)} | {f('splits')} | {f('boxes')} | "
      f"{f('bound_queries')} | {f('bounds_seconds', 2)} | {f('search_seconds', 2)} | {f('smt_seconds', 2)} | "
      f"{f('exact_seconds', 2)} |")
PY
}

# suite SUITE: "system expect" per instance, in the suite's order (paths relative to the suite).
instances() {
  python3 - "$1" <<'PY'
import os, sys, tomllib
suite = sys.argv[1]
with open(suite, "rb") as f:
    doc = tomllib.load(f)
for i in doc["instance"]:
    print(os.path.normpath(os.path.join(os.path.dirname(suite), i["system"])), i.get("expect", ""))
PY
}

table() {
  echo "| instance | state dims | network | verdict | seconds | splits | boxes | bound_queries | bounds_seconds | search_seconds | smt_seconds | exact_seconds |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  for kind in maze arena; do
    [ -n "$only" ] && [ "$only" != "$kind" ] && continue
    generate "$kind" "configs/$kind/scale.toml" "target/$kind-scale"
    while read -r system expect; do
      row "$system" "$expect"
    done < <(instances "target/$kind-scale/suite.toml")
  done
}

if [ -n "$out" ]; then table | tee "$out"; else table; fi
