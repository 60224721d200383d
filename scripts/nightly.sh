#!/usr/bin/env bash
# The nightly regression: generates the nightly maze suite once (configs/maze/nightly.toml, into
# target/maze-nightly; regenerated when the spec changes), runs it into a results store that keeps
# every night's run, judges each instance against its expected verdict and against the previous
# night (a flipped verdict or an instance slower than the suite's slowdown factor fails), and keeps
# the night's report as nightly-YYYY-MM-DD.md beside the store; it also runs every pair of the
# planted-truth soundness suite. Non-zero exit on any regression.
#
#   scripts/nightly.sh [STORE_DIR]      # default target/nightly-results
set -euo pipefail
cd "$(dirname "$0")/.."
store=${1:-target/nightly-results}
spec=${NIGHTLY_SPEC:-configs/maze/nightly.toml}   # another spec for a trial run
gen=target/maze-$(basename "$spec" .toml)
# The nightly spec's suite file is shipped (configs/suites/maze-nightly.toml, regenerated to the
# same bytes); its 176 controllers are generated here on first use, not committed.
suite="$gen/suite.toml"
[ -z "${NIGHTLY_SPEC:-}" ] && suite=configs/suites/maze-nightly.toml

scripts/setup.sh
cargo build --release --quiet --bin trestle
bin=target/release/trestle
stamp="$(sha256sum "$spec" "$bin" | sha256sum | cut -c1-16)"
if [ ! -f "$gen/.stamp" ] || [ "$(cat "$gen/.stamp")" != "$stamp" ]; then
    rm -rf "$gen"
    "$bin" maze generate "$spec" "$gen" --suite "$suite"
    echo "$stamp" > "$gen/.stamp"
fi
mkdir -p "$store"
baseline=()
[ -f "$store/results.sqlite" ] && baseline=(--baseline "$store")
status=0
# The planted-truth suite with every (system, engine) pair: CI runs each bridge variant on a third
# of the systems (tests/planted.rs).
TRESTLE_PLANTED_FULL=1 cargo test --release --workspace --quiet --test planted || status=$?
"$bin" suite run "$suite" --jobs "$(nproc)" --quiet --out "$store" "${baseline[@]}" || status=$((status ? status : $?))
cp "$store/suite-report.md" "$store/nightly-$(date -u +%F).md"
echo "nightly: report $store/nightly-$(date -u +%F).md (exit $status)"
exit "$status"
