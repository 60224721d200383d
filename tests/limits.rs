//! Issue 34.4 (limits): every loop that can run long polls the run's one budget. Each reproducer
//! runs through the binary under a wall-clock cap far above its `--timeout`, measured by this
//! process (`common::run_with_limit`), so only a run that ignores its limit fails.

mod common;

use serde_json::Value;
use std::time::Duration;
use trestle_testkit::repo;

/// Far above the one-second limits below (a loaded machine included), far below what the runs
/// took before their loops polled the limit.
const CAP: Duration = Duration::from_secs(30);

fn run(args: &[&str]) -> common::Run {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let r = common::run_with_limit(env!("CARGO_BIN_EXE_trestle"), &args, &repo(), CAP);
    assert!(!r.timed_out, "{args:?} still ran after {CAP:?}: its time limit was not honoured");
    r
}

/// `synth --timeout 1 --resolution 300` on the double integrator ran 400 s (50 s at resolution
/// 200): whether the fixed point still covers Init subtracted ninety thousand grid cells from
/// Init's box without looking at the clock. It now ends with the time limit as its reason.
#[test]
fn synthesis_on_a_fine_grid_stops_at_its_time_limit() {
    let r = run(&[
        "synth",
        "examples/double-integrator.toml",
        "--timeout",
        "1",
        "--resolution",
        "300",
        "--max-boxes",
        "100000",
        "--json",
    ]);
    assert_eq!(r.code, Some(3), "{}", r.stderr);
    let j: Value = r.json().expect("one JSON object");
    assert_eq!(j["status"], "unknown", "{j}");
    assert_eq!(j["reason_kind"], "time-limit", "{j}");
}
