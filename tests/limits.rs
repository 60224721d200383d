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

/// The attitude controller (6 -> 3x64 -> 3, sigmoid) on ARCH's polynomial rigid-body dynamics, in
/// the repository's system file: `--set` points it at `../shared/models`.
fn attitude(models: &std::path::Path) -> Vec<String> {
    let model = models.join("archcomp/Attitude-Control/attitude_control_3_64_torch.onnx");
    vec![
        "configs/systems/arch-attitude-sigmoid.toml".into(),
        "--set".into(),
        format!("controller.model={}", model.display()),
    ]
}

fn run_owned(args: Vec<String>) -> common::Run {
    run(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// The run of a limit: exit 3, unknown for the time limit, as one JSON object.
fn assert_time_limit(r: &common::Run) {
    assert_eq!(r.code, Some(3), "{}", r.stderr);
    let j: Value = r.json().expect("one JSON object");
    assert_eq!(j["status"], "unknown", "{j}");
    assert_eq!(j["reason_kind"], "time-limit", "{j}");
}

/// Issue 34 (limits on non-linear systems): `synth --forward --timeout 3` on the 6-D attitude
/// system ran past 60 s and grew to 3 GB (19 GB in 11 min at --timeout 120): whether an image
/// is covered by the cells around it subtracted them from it without looking at the clock, its
/// pieces multiplying. The subtraction polls the limit per piece and is capped in pieces.
#[test]
fn forward_synthesis_of_a_six_dimensional_system_stops_at_its_time_limit() {
    let Some(models) = trestle_testkit::shared_models() else { return };
    let mut args = vec!["synth".to_string()];
    args.extend(attitude(&models));
    args.extend(["--forward", "--timeout", "3", "--json"].map(String::from));
    assert_time_limit(&run_owned(args));
}

/// Issue 34 (limits on non-linear systems): `check --timeout 30` on the attitude system ran past
/// 120 s: one Z3 query on the non-linear step, interrupted by its watchdog at the deadline, did
/// not act on the interrupt for minutes (Z3 4.8's non-linear arithmetic; from about 16 s into
/// the query on this machine). The process now ends a run still going 2 s after its limit, with
/// the same unknown result (the note says it was ended).
#[test]
fn a_check_stuck_in_a_non_linear_solver_query_ends_at_its_time_limit() {
    let Some(models) = trestle_testkit::shared_models() else { return };
    let mut args = vec!["check".to_string()];
    args.extend(attitude(&models));
    args.extend(["--timeout", "16", "--json"].map(String::from));
    assert_time_limit(&run_owned(args));
}

/// `simulate` had no `--timeout`: exact arithmetic over 999999 steps ran for minutes (the
/// double integrator's rationals grow every step). It stops at the limit with the steps done,
/// status unknown (exit 3) and what was done.
#[test]
fn simulate_stops_at_its_time_limit_with_the_steps_done() {
    let r = run(&["simulate", "examples/double-integrator.toml", "--steps", "999999", "--timeout", "1", "--json"]);
    assert_time_limit(&r);
    let j: Value = r.json().expect("one JSON object");
    let steps = j["runs"][0]["steps"].as_array().expect("the steps done").len();
    assert!(steps > 0 && steps < 999999, "{steps} steps");
    assert!(j["runs"][0]["stopped"].as_str().is_some_and(|s| s.contains("time limit")), "{j}");
    assert_eq!(j["done"], format!("1 of 1 runs, {steps} of 999999 steps in the last one"), "{j}");
    let text = run(&["simulate", "examples/double-integrator.toml", "--steps", "999999", "--timeout", "1"]);
    assert_eq!(text.code, Some(3), "{}", text.stderr);
    assert!(text.stdout.contains("unknown: time limit reached: 1 of 1 runs"), "{}", text.stdout);
}

/// Issue 34: `cegar` accepted `--threads` and ran on one thread without a word. It still takes
/// the flag (campaigns pass it to every command) and says, unless quiet, that it adds none.
#[test]
fn cegar_says_that_threads_add_nothing() {
    for flag in ["--threads", "--jobs"] {
        let r = run(&["cegar", "configs/systems/blocks4-h16.toml", flag, "2"]);
        assert_eq!(r.code, Some(1), "{}", r.stderr);
        assert!(r.stderr.contains(&format!("warning: cegar runs on one thread: {flag} 2 adds none")), "{}", r.stderr);
        let quiet = run(&["cegar", "configs/systems/blocks4-h16.toml", flag, "2", "--quiet"]);
        assert_eq!(quiet.code, Some(1), "{}", quiet.stderr);
        assert!(!quiet.stderr.contains("warning"), "{}", quiet.stderr);
    }
}

/// The backstop printed the single-result shape for every command: `verify --json` must print
/// `verify`'s own shape, `{"system", "results"}`, with a row per property asked (the stuck one
/// unknown for the time limit), exit code by `verify`'s rule. With `--timeout 30` the implicit
/// property's candidate check sits in the non-linear query at the limit and the backstop ends
/// the run (measured: 32 s, the row's note says it was ended; at `--timeout 16` the check's share
/// of the time ends before the query and `verify` answers by itself).
#[test]
fn a_verify_stuck_in_a_solver_query_ends_in_its_own_shape() {
    let Some(models) = trestle_testkit::shared_models() else { return };
    let mut args = vec!["verify".to_string()];
    args.extend(attitude(&models));
    args.extend(["--timeout", "30", "--json"].map(String::from));
    // A cap of its own: the limit itself is at the common cap.
    let r = common::run_with_limit(env!("CARGO_BIN_EXE_trestle"), &args, &repo(), CAP * 3);
    assert!(!r.timed_out, "{args:?} still ran after {:?}: its time limit was not honoured", CAP * 3);
    assert_eq!(r.code, Some(3), "{}", r.stderr);
    let j: Value = r.json().expect("one JSON object");
    assert!(j.get("status").is_none(), "not the single-result shape: {j}");
    assert_eq!(j["system"], "arch-attitude-sigmoid", "{j}");
    let rows = j["results"].as_array().expect("verify's rows");
    assert_eq!(rows.len(), 1, "{j}");
    let row = &rows[0];
    assert_eq!((row["command"].as_str(), row["property"].as_str()), (Some("verify"), Some("safe")), "{j}");
    assert_eq!((row["status"].as_str(), row["reason_kind"].as_str()), (Some("unknown"), Some("time-limit")), "{j}");
    assert_eq!(row["format"], "trestle-result/1", "{j}");
}

/// `maze generate` and `arena generate` had no whole-run `--timeout` or `--json` (issue 34.9):
/// past the deadline no instance starts, the suite file lists those finished (none here: the
/// limit is zero), and the run is unknown for the time limit, exit 3, in one JSON object.
#[test]
fn generators_start_nothing_after_their_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let maze = "[maze]\nname = \"cut\"\nseed = 3\ndt = 0.1\ninit = [[0.3, 0.4], [0.6, 0.7]]\n\
                safe = [[0.22, 0.98], [0.54, 0.98]]\ncandidate = [[[0.25, 0.95], [0.55, 0.95]]]\ngoal = [0.6, 0.75]\n\n\
                [[family]]\ndynamics = \"det\"\nshapes = [\"2x16\"]\ndefects = [\"none\", \"drift\"]\n";
    let arena = "[arena]\nname = \"cut\"\nseed = 3\ndt = 0.1\ngoal = 0.5\ninit = [0.45, 0.55]\n\
                 candidate = [0.2, 0.8]\nsafe = [0.15, 0.85]\nsamples = 512\nepochs = 20\n\n\
                 [[family]]\ndims = [3]\ndynamics = \"det\"\nshapes = [\"1x16\"]\ndefects = [\"none\", \"drift\"]\n";
    for (kind, text) in [("maze", maze), ("arena", arena)] {
        let spec = dir.path().join(format!("{kind}.toml"));
        std::fs::write(&spec, text).unwrap();
        let out = dir.path().join(kind);
        let (spec, out_dir) = (spec.to_str().unwrap(), out.to_str().unwrap());
        let r = run(&[kind, "generate", spec, out_dir, "--timeout", "0", "--json"]);
        assert_eq!(r.code, Some(3), "{kind}: {}", r.stderr);
        let j: Value = r.json().expect("one JSON object");
        assert_eq!(j["command"], format!("{kind} generate"), "{j}");
        assert_eq!((j["status"].as_str(), j["reason_kind"].as_str()), (Some("unknown"), Some("time-limit")), "{j}");
        assert_eq!((j["verdict"].as_str(), j["stats"]["instances"].as_u64()), (Some("incomplete"), Some(2)), "{j}");
        assert_eq!(j["stats"]["generated"], 0, "{j}");
        let suite = std::fs::read_to_string(out.join("suite.toml")).expect("the suite file of what finished");
        assert!(!suite.contains("[[instance]]") && !suite.contains("[[job]]"), "{kind}: {suite}");
        assert!(std::fs::read_dir(out.join("models")).unwrap().next().is_none(), "{kind}: a model was trained");
        let text = run(&[kind, "generate", spec, out_dir, "--timeout", "0", "--quiet"]);
        assert_eq!(text.code, Some(3), "{kind}: {}", text.stderr);
        assert!(text.stdout.contains("unknown: time limit reached: 0 of 2 instances finished"), "{}", text.stdout);
    }
}
