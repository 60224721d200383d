//! Regressions of issue 9 found at the keyboard (items 4 and 10-15): each test is named after the
//! bug it pins and runs the reproducer through the command line, checking exit codes and output.
//! Exit codes: 0 proven/done, 1 refuted, 2 input error, 3 unknown, 4 internal, 130 interrupted.

mod common;

use common::cli::{s, trestle};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use trestle_testkit::{one_var_system, scratch};

/// A one-variable system: an inline network passing x through (a = x), `x' = step`.
fn one_var(regions: &str, step: &str) -> String {
    one_var_system(regions, "{ type = \"real\" }", step)
}

// ---------- item 4: TOML float literals ----------

/// `1.00000000000000000001` was read as 1: Inv = [-0.5, 1] then lies inside Safe (x <= 1) and the
/// system was "safe"; with the literal's exact value Inv => Safe fails at x = 1 + 1e-20.
#[test]
fn toml_float_with_more_digits_than_a_double_flips_no_verdict() {
    let text = one_var(
        "init = { x = [0, 0.5] }\nsafe = \"x <= 1\"\ninvariant = { x = [-0.5, 1.00000000000000000001] }",
        "a/2",
    );
    let (_d, p) = scratch("sys.toml", &text);
    let r = trestle(&["check", s(&p), "--json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["verdict"], "unsafe-candidate");
    assert_eq!(
        j["details"]["conditions"]["inv_implies_safe"]["witness"]["state_exact"][0],
        "100000000000000000001/100000000000000000000"
    );
    // With the bound written as 1 the same system is safe.
    let (_e, q) = scratch("sys.toml", &text.replace("1.00000000000000000001", "1.0"));
    assert_eq!(trestle(&["check", s(&q), "--json"]).code, 0);
}

// ---------- item 10: NNet clamp for huge inputs ----------

#[test]
fn eval_of_an_nnet_clamps_huge_inputs_exactly() {
    let net = "examples/networks/maze-2x8.nnet";
    let clamped = trestle(&["eval", net, "--input", "1000,0.75", "--json"]).json();
    assert_eq!(clamped["output"], serde_json::json!([-1.0, 0.0]));
    for x in ["1e20", "9.3e18", "1e300"] {
        let r = trestle(&["eval", net, "--input", &format!("{x},0.75"), "--json"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(r.json()["output"], clamped["output"], "x = {x}");
    }
    let below = trestle(&["eval", net, "--input", "-1e20,0.75", "--json"]).json();
    assert_eq!(below["output"], trestle(&["eval", net, "--input", "-1000,0.75", "--json"]).json()["output"]);
}

// ---------- item 12: deep and long expressions ----------

#[test]
fn long_flat_sums_work_in_check_and_info() {
    // x' = (x + x + .. 2500 times) / 5000 - (0*a - 0*a - ..): flat sums of 2500 terms, value x/2.
    let sum = vec!["x"; 2500].join(" + ");
    let zeros = vec!["0*a"; 2500].join(" - ");
    let guard = vec!["x <= 2"; 2500].join(" and ");
    let text = one_var("init = { x = [0, 0.5] }\nsafe = \"-1 <= x <= 1\"\ninvariant = { x = [0, 0.5] }", "")
        .replace("x = \"\"", &format!("x = \"({sum})/5000 - ({zeros})\""))
        .replace("safe = \"-1 <= x <= 1\"", &format!("safe = \"-1 <= x <= 1 and {guard}\""));
    let (_d, p) = scratch("sys.toml", &text);
    let info = trestle(&["info", s(&p), "--json"]);
    assert_eq!(info.code, 0, "{}", info.stderr);
    assert!(info.json()["step"][0]["updates"][0]["next"].as_str().unwrap().len() > 10_000);
    let r = trestle(&["check", s(&p), "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["verdict"], "safe");
}

#[test]
fn deep_nesting_is_an_input_error_with_a_json_object() {
    let n = 10_000;
    for (what, region) in [
        ("parentheses", format!("{}x{} <= 1", "(".repeat(n), ")".repeat(n))),
        ("unary minus", format!("{}x <= 1", "-".repeat(n))),
        ("not", format!("{}x <= 1", "not ".repeat(n))),
    ] {
        let text = one_var(&format!("init = \"{region}\"\nsafe = \"x <= 1\"\ninvariant = \"0 <= x <= 1\""), "a");
        let (_d, p) = scratch("sys.toml", &text);
        for cmd in ["check", "info"] {
            let r = trestle(&[cmd, s(&p), "--json"]);
            r.expect_input_error(&["init", "nested too deeply"]);
            assert_eq!(r.json()["error"]["kind"], "input", "{what}");
        }
    }
}

// ---------- item 13: threads and time ----------

#[test]
fn absurd_thread_counts_are_refused() {
    for cmd in ["check", "synth"] {
        let r = trestle(&[cmd, "examples/maze-det.toml", "--threads", "20000", "--timeout", "2", "--json"]);
        r.expect_input_error(&["--threads 20000 is too many: at most 1024"]);
        assert_eq!(r.json()["error"]["kind"], "input");
    }
}

/// A time limit of 0 leaves nothing for any stage: the engine stops at once with verdict unknown
/// (and so does a synthesis after the failure). (The side conditions of this system are box
/// inclusions, decided exactly without Z3; Z3 queries past the deadline are pinned in
/// trestle-smt's `a_passed_deadline_stops_z3_queries`.)
#[test]
fn the_time_limit_bounds_the_whole_check() {
    let r = trestle(&["check", "examples/maze-det.toml", "--timeout", "0", "--no-fast-path", "--json"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["verdict"], "unknown");
    assert_eq!(j["details"]["conditions"]["inductive"]["reason"], "time limit reached");
    let r = trestle(&["check", "examples/maze-det.toml", "--timeout", "0", "--synthesize-on-failure", "--json"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let j = r.json();
    assert_eq!((j["verdict"].as_str(), j["method"].as_str()), (Some("unknown"), Some("bridge+synth")));
    assert_eq!(j["details"]["candidate"]["verdict"], "unknown", "the candidate's result rides along");
}

// ---------- item 14: result files ----------

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(status.success());
}

#[test]
fn certificates_and_plots_never_replace_special_files() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo");
    mkfifo(&fifo);
    for (flag, target, want) in [
        ("--certificate", fifo.clone(), "it is a FIFO (named pipe), not a regular file"),
        ("--plot", fifo.clone(), "it is a FIFO (named pipe), not a regular file"),
        ("--certificate", PathBuf::from("/dev/null"), "it is a character device"),
        ("--certificate", PathBuf::from("/dev/full"), "it is a character device"),
        ("--certificate", PathBuf::from("/tmp"), "it is a directory"),
        ("--plot", d.path().to_path_buf(), "it is a directory"),
    ] {
        let r = trestle(&["check", "examples/maze-det.toml", flag, s(&target), "--json"]);
        r.expect_input_error(&[&format!("{flag} {}: {want}", target.display())]);
        // No temporary file is named (they are `.NAME.PID-N.tmp`).
        assert!(!r.stderr.contains(".tmp\n") && !r.stderr.contains(".tmp:"), "{}", r.stderr);
    }
    assert_eq!(names(d.path()), ["fifo"]);
    assert!(names(Path::new("/")).iter().all(|n| !n.contains(".tmp")), "{:?}", names(Path::new("/")));
    // A write that fails (no file can be created in /proc, even by root) names the target and the
    // system's reason, never the temporary file, and leaves none.
    let r = trestle(&["check", "examples/maze-det.toml", "--certificate", "/proc/trestle-cert.json", "--json"]);
    r.expect_input_error(&["cannot write /proc/trestle-cert.json: "]);
    assert!(!r.stderr.contains(".tmp"), "{}", r.stderr);
    assert!(names(Path::new("/proc")).iter().all(|n| !n.contains("trestle")));
}

#[test]
fn certificates_are_written_through_symlinks() {
    let d = tempfile::tempdir().unwrap();
    let real = d.path().join("real.json");
    std::fs::write(&real, "old").unwrap();
    let link = d.path().join("cert.json");
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    let r = trestle(&["check", "examples/maze-det.toml", "--certificate", s(&link), "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    let cert: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    assert!(cert["format"].as_str().unwrap().starts_with("trestle-bridge-certificate/"), "{}", cert["format"]);
    assert_eq!(names(d.path()), ["cert.json", "real.json"]);
}

// ---------- item 15: argument errors and messages ----------

#[test]
fn argument_errors_honour_json() {
    for args in [
        vec!["check", "--json"],
        vec!["check", "examples/maze-det.toml", "--json", "--no-such-flag"],
        vec!["eval", "--json"],
        vec!["info", "--json", "a", "b"],
        vec!["frobnicate", "--json"],
    ] {
        let r = trestle(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        let j = r.json();
        assert_eq!(j["error"]["kind"], "input", "{args:?}");
        assert!(!j["error"]["message"].as_str().unwrap().starts_with("error:"), "{j}");
    }
    // Without --json: clap's message on stderr, nothing on stdout.
    let r = trestle(&["check"]);
    assert_eq!((r.code, r.stdout.as_str()), (2, ""));
    assert!(r.stderr.contains("required"), "{}", r.stderr);
    // --help is not an error.
    assert_eq!(trestle(&["check", "--help", "--json"]).code, 0);
}

#[test]
fn non_ascii_characters_are_shown_whole() {
    let text = one_var("init = \"0 ≤ x ≤ 1\"\nsafe = \"x <= 1\"\ninvariant = \"0 <= x <= 1\"", "a");
    let (_d, p) = scratch("sys.toml", &text);
    let r = trestle(&["info", s(&p)]);
    r.expect_input_error(&["init", "unexpected character '≤' (write '<=')"]);
    assert!(!r.stderr.contains('â'), "{}", r.stderr);
    let r = trestle(&["info", s(&p), "--json"]);
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("'≤'"));
}

#[test]
fn an_unbounded_invariant_names_its_variable() {
    let text = one_var("init = \"0 <= x <= 1\"\nsafe = \"x <= 1\"\ninvariant = \"x >= 0\"", "a");
    let (_d, p) = scratch("sys.toml", &text);
    trestle(&["check", s(&p)]).expect_input_error(&["a box is unbounded in x"]);
}

#[test]
fn a_malformed_certificate_says_what_is_expected() {
    let d = tempfile::tempdir().unwrap();
    let cert = d.path().join("cert.json");
    // "data did not match any variant of untagged enum CertificateJson" named a Rust type and
    // not the problem; the message says what is wrong where (expect_input_error refuses the name).
    std::fs::write(&cert, r#"{"format": "trestle-bridge-certificate/1", "clauses": 3}"#).unwrap();
    let r = trestle(&["certify", s(&cert), "examples/maze-det.toml", "--json"]);
    r.expect_input_error(&["not a trestle certificate: ", "expected a sequence"]);
    assert_eq!(r.json()["error"]["kind"], "input");
    std::fs::write(&cert, r#"{"verdict": 1}"#).unwrap();
    let r = trestle(&["certify", s(&cert), "examples/maze-det.toml", "--json"]);
    r.expect_input_error(&["not a trestle certificate: "]);
}

// ---------- item 11: Ctrl-C ----------

/// A check that runs until it is stopped: the invariant's whole boundary is made of fixed points
/// (x' = x, y' = y through an identity network), so boundary boxes stay undecided and are split
/// down to a minimum width of 1e-12 with no split limit, each by Z3 (no fast path, no exact
/// decision of small boxes).
const ENDLESS_RUN: &str = r#"
init = "0.3 <= x <= 0.4 and 0.6 <= y <= 0.7"
safe = "-1 <= x <= 2 and -1 <= y <= 2"
invariant = "0 <= x <= 1 and 0 <= y <= 1"
[state]
x = { type = "real" }
y = { type = "real" }
[networks.id]
layers = [{ weights = [[1.0, 0.0], [0.0, 1.0]], bias = [0.0, 0.0], activation = "identity" }]
[controller]
network = "id"
actions = ["a0", "a1"]
[step]
x = "a0"
y = "a1"
"#;

/// SIGINT during `check` sometimes segfaulted (exit 139: Z3's own SIGINT handler, installed and
/// restored by concurrent queries through one global pointer) and was sometimes ignored (the run
/// went on and wrote its certificate). It must stop the run: exit 128 + signal, one JSON error
/// object, no certificate and no temporary file. Repeated at different moments to catch races;
/// SIGTERM likewise.
#[test]
fn sigint_stops_check_cleanly() {
    let (dir, p) = scratch("sys.toml", ENDLESS_RUN);
    let cert = dir.path().join("cert.json");
    for (signal, code, delay_ms) in
        [("INT", 130, 150), ("INT", 130, 400), ("INT", 130, 900), ("INT", 130, 1500), ("TERM", 143, 700)]
    {
        let mut child = Command::new(env!("CARGO_BIN_EXE_trestle"))
            .args(["check", s(&p), "--no-fast-path", "--no-exact-leaf", "--min-width", "1e-12"])
            .args(["--max-splits", "1000000000000"])
            .args(["--threads", "4", "--json", "--certificate", s(&cert)])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        assert!(child.try_wait().unwrap().is_none(), "the endless run ended by itself");
        let pid = child.id().to_string();
        assert!(Command::new("kill").args([&format!("-{signal}"), &pid]).status().unwrap().success());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "SIG{signal} after {delay_ms} ms: {:?}\n{stderr}", out.status);
        assert!(stderr.contains(&format!("interrupted by SIG{signal}")), "{stderr}");
        let j: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        assert_eq!(j["error"]["kind"], "interrupted");
        assert_eq!(names(dir.path()), ["net.nnet", "sys.toml"], "SIG{signal} after {delay_ms} ms");
    }
}
