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

/// Issue 34.9: the same `--quiet`, `--json`, `--timeout` and `--threads` (or `--jobs`) on every
/// command that decides a question; `ltl` and `cegar` refused `--threads`, `check`, `synth` and
/// `verify` refused `--jobs`, `ctl` refused `--threads`. A zero count names the flag written.
#[test]
fn every_deciding_command_takes_the_same_limits() {
    let maze = "examples/maze-det.toml";
    let commands: [&[&str]; 6] = [
        &["check", maze],
        &["synth", maze],
        &["verify", maze],
        &["ctl", maze, "--formula", "AX (x >= 0)"],
        &["ltl", maze, "--formula", "X (x >= 0)"],
        &["cegar", "configs/systems/blocks4-h16.toml"],
    ];
    for command in commands {
        for threads in ["--threads", "--jobs"] {
            let mut args: Vec<&str> = command.to_vec();
            args.extend(["--quiet", "--json", "--timeout", "30", threads, "1"]);
            let r = run(&args);
            let j: Value = r.json().unwrap_or_else(|e| panic!("{args:?}: {e}\n{}", r.stderr));
            assert!(matches!(r.code, Some(0 | 1 | 3)), "{args:?}: exit {:?}: {}", r.code, r.stderr);
            assert!(j.get("error").is_none(), "{args:?}: {j}");
            assert!(r.stderr.is_empty(), "{args:?}: --quiet with --json leaves stderr empty: {}", r.stderr);
            let mut zero: Vec<&str> = command.to_vec();
            zero.extend([threads, "0"]);
            let r = run(&zero);
            assert_eq!(r.code, Some(2), "{zero:?}: {}", r.stderr);
            assert!(r.stderr.contains(&format!("{threads} must be at least 1")), "{zero:?}: {}", r.stderr);
        }
        let mut both: Vec<&str> = command.to_vec();
        both.extend(["--threads", "1", "--jobs", "1"]);
        assert_eq!(run(&both).code, Some(2), "{both:?}: one count, given once");
    }
}
