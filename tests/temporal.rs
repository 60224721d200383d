//! `trestle ctl` and `trestle ltl` at their limits (issues 34.3-5, 34.7, 34.11, 39.4-6, 39.8-9,
//! 39.16): every reproducer through the binary, under an address-space limit where memory is the
//! point and with a generous wall-clock cap that only catches a run that never ends (no timing is
//! asserted). A limit is an answer: exit 3 with its typed reason, never a crash or exit 4.

mod common;

use common::cli::{Run, s, trestle};
use serde_json::Value;
use std::time::Duration;
use trestle_testkit::{WALK, repo, scratch, shared_models};

/// Address space a run may use where memory is the point: generous for the tool (about 1 GB of
/// models at most, see `trestle_milp::MAX_UNROLL_ENTRIES`), far below what the reproducers took
/// (24 GB for `G<=10000`, 25 GB for a billion pieces).
const MEMORY: &str = "--as=3221225472";

/// Runs `trestle ARGS` under `prlimit MEMORY`, killed if it outlives `cap` (a hang, reported as
/// such rather than waited for).
fn limited(args: &[&str], cap: Duration) -> Run {
    let argv: Vec<String> = [MEMORY, "--", env!("CARGO_BIN_EXE_trestle")]
        .into_iter()
        .chain(args.iter().copied())
        .map(String::from)
        .collect();
    let run = common::run_with_limit("prlimit", &argv, &repo(), cap);
    assert!(!run.timed_out, "{args:?} still ran after {cap:?}: its limit was not honoured");
    Run {
        code: run.code.unwrap_or_else(|| panic!("{args:?} was killed by a signal: {}", run.stderr)),
        stdout: run.stdout,
        stderr: run.stderr,
    }
}

/// The wall-clock cap of a run with `--timeout 2`: far above the limit, so only a run that ignores
/// it fails.
const CAP: Duration = Duration::from_secs(60);

/// An unknown answer with reason kind `kind` (and, for the time limit, its text).
fn unknown(r: &Run, kinds: &[&str]) -> Value {
    assert_eq!(r.code, 3, "exit code; stderr: {}", r.stderr);
    r.expect_no_internals();
    let j = r.json();
    assert_eq!(j["status"], "unknown", "{j}");
    let kind = j["reason_kind"].as_str().unwrap_or_else(|| panic!("no reason kind: {j}"));
    assert!(kinds.contains(&kind), "reason kind {kind}, expected one of {kinds:?}: {j}");
    if kind == "time-limit" {
        assert_eq!(j["reason"], "time limit reached", "{j}");
    }
    j
}

/// 39.8: the LP tightening never checked the deadline (`X^10` on Spread ran 268 s with
/// `--timeout 5`); 34.3: the default race ran 34 s. Both encodings, raced and alone.
#[test]
fn ltl_tightening_honours_the_time_limit() {
    let spread = "configs/systems/spread-2.toml";
    for tighten in ["race", "on"] {
        let r = limited(
            &["ltl", spread, "--formula", "X^10 (x1 <= 1)", "--tighten", tighten, "--timeout", "2", "--json"],
            CAP,
        );
        unknown(&r, &["time-limit"]);
    }
}

/// 39.4: `G<=10000` with `--tighten off` took 24 GB before the kernel killed it: the unrolling's
/// size is estimated and refused before it is built (unknown, the limit named), in every method
/// that unrolls.
#[test]
fn ltl_unrollings_too_large_to_build_are_refused() {
    let spread = "configs/systems/spread-2.toml";
    let formula = "G<=10000 (x1 <= 1.15)";
    let r = limited(&["ltl", spread, "--formula", formula, "--method", "rmilp", "--tighten", "off", "--json"], CAP);
    let j = unknown(&r, &["limit"]);
    assert!(j["reason"].as_str().unwrap().contains("matrix entries"), "{j}");
    // The default method tries the cheap ones first, within the time limit.
    let r = limited(&["ltl", spread, "--formula", formula, "--timeout", "2", "--json"], CAP);
    unknown(&r, &["limit", "time-limit"]);
}

/// 39.6: `--depth 10000` made bound propagation overflow f64 and the run exit 4 (after 36-51 s
/// with `--timeout 5`): overflowing enclosures decide nothing, and the limit ends the run.
#[test]
fn ltl_overflowing_bounds_are_no_internal_error() {
    let spread = "configs/systems/spread-2.toml";
    let r =
        limited(&["ltl", spread, "--formula", "G (x1 <= 1.15)", "--depth", "10000", "--timeout", "2", "--json"], CAP);
    unknown(&r, &["time-limit", "overflow", "limit"]);
}

/// 39.9: `AX^100000` spent 18.9 s building its normal form with `--timeout 1`, and the
/// compositional engine then cloned its jobs without end (23 GB); `--pieces 10000` took 79 s
/// with `--timeout 5`; a billion pieces aborted on a 25 GB allocation.
#[test]
fn ctl_limits_on_the_case_study() {
    if shared_models().is_none() {
        return;
    }
    let vcas = "configs/systems/vcas.toml";
    let deep = "AX^100000 (h > 100 or h < -100)";
    for method in ["auto", "compositional", "monolithic"] {
        let r = limited(&["ctl", vcas, "--formula", deep, "--method", method, "--timeout", "2", "--json"], CAP);
        unknown(&r, &["time-limit"]);
    }
    let r = limited(&["ctl", vcas, "--property", "sep", "--pieces", "10000", "--timeout", "2", "--json"], CAP);
    unknown(&r, &["time-limit"]);
    let r = limited(&["ctl", vcas, "--property", "sep", "--pieces", "1000000000"], CAP);
    r.expect_input_error(&["pieces", "65536"]);
}

/// Without a time limit a formula whose encoding grows past what a model may hold ends with that
/// limit named (the compositional engine's jobs of one path, or a monolithic model), not by the
/// memory running out.
#[test]
fn ctl_encodings_stop_at_their_size_limit() {
    if shared_models().is_none() {
        return;
    }
    let vcas = "configs/systems/vcas.toml";
    let r = limited(&["ctl", vcas, "--formula", "AX^100000 (h > 100 or h < -100)", "--json"], Duration::from_secs(600));
    let j = unknown(&r, &["limit"]);
    assert!(j["reason"].as_str().unwrap().contains("matrix entries"), "{j}");
}

/// A formula as deep as the normal form allows, on a system with few states: the explicit
/// engine (chosen by `auto`) evaluates it without recursing once per step (which overflowed the
/// stack: a crash), and the answer is exact. Past the cap the formula is refused, not built.
#[test]
fn ctl_deep_formulas_neither_crash_nor_build_without_end() {
    let (_d, walk) = scratch("walk.toml", WALK);
    let r = limited(&["ctl", s(&walk), "--formula", "AG^100000 (x >= 0)", "--json"], Duration::from_secs(300));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!((j["status"].as_str(), j["method"].as_str()), (Some("proven"), Some("explicit")), "{j}");
    let r = limited(&["ctl", s(&walk), "--formula", "AX^4000000000 (x >= 0)"], CAP);
    r.expect_input_error(&["bound too large (at most 1000000)"]);
    let r = limited(&["ctl", s(&walk), "--formula", "AX^1000000 (x >= 0) and AX^1000000 (x <= 100)"], CAP);
    r.expect_input_error(&["at most 1048576"]);
}

/// 34.4: `--method auto` is the default: the explicit engine on a system with few states (exact),
/// the MILP engines raced on a continuous one (the result names the one that decided), and the
/// verdicts are those of the engines alone.
#[test]
fn ctl_auto_picks_an_engine_and_names_it() {
    let (_d, walk) = scratch("walk.toml", WALK);
    let r = trestle(&["ctl", s(&walk), "--formula", "AX^3 (x == 8)", "--json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.json()["method"], "explicit");
    let (_e, scale) = scratch("scale.toml", trestle_testkit::SCALE);
    // `x <= 5` holds: the winner of the race proves it (bounds rule out every job) or gives
    // evidence, so its exit code is 0 or 3; its verdict is "true" either way.
    for (formula, codes) in [("AX^2 (x <= 3)", &[1][..]), ("AX^2 (x <= 5)", &[0, 3][..])] {
        let r = trestle(&["ctl", s(&scale), "--formula", formula, "--json"]);
        assert!(codes.contains(&r.code), "{formula}: exit {}: {}", r.code, r.stderr);
        let j = r.json();
        let method = j["method"].as_str().unwrap();
        assert!(["compositional", "monolithic"].contains(&method), "{formula}: {j}");
        for alone in ["compositional", "monolithic"] {
            let a = trestle(&["ctl", s(&scale), "--formula", formula, "--method", alone, "--json"]);
            assert_eq!(a.json()["verdict"], j["verdict"], "{formula}: {alone}");
        }
    }
}

/// Two branches whose guards together cover every state (`comply` and `not comply`): stop-free,
/// so a true bounded-CTL or LTL formula is not "unknown: runs may stop" (34.5).
#[test]
fn complementary_guards_do_not_make_true_formulas_unknown() {
    let text = r#"
init = "0 <= x <= 1"
[system]
name = "comply"
[state]
x = { type = "real" }
[networks.id]
layers = [{ weights = [[1.0]], bias = [0.0], activation = "identity" }]
[controller]
network = "id"
inputs = ["x"]
actions = ["a"]
[[branch]]
name = "comply"
guard = "x <= 3 and a >= 0"
update = { x = "x + 1" }
[[branch]]
name = "defy"
guard = "not (x <= 3 and a >= 0)"
update = { x = "x - 1" }
"#;
    let (_d, p) = scratch("comply.toml", text);
    for method in ["monolithic", "compositional"] {
        let r = trestle(&["ctl", s(&p), "--formula", "AG^3 (x <= 100)", "--method", method, "--json"]);
        let j = r.json();
        assert_eq!(j["verdict"], "true", "{method}: {j}");
    }
    let r = trestle(&["ltl", s(&p), "--formula", "G<=3 (x <= 100)", "--json"]);
    assert_eq!((r.code, r.json()["verdict"].as_str()), (0, Some("true")), "{}", r.stdout);
}

/// 34.7: `G (-1 <= p <= 1)` where nothing bounds another variable was an input error from the
/// synthesis fallback ("the safe region must be a bounded union of boxes"): it is unknown.
#[test]
fn ltl_always_with_an_unbounded_variable_is_unknown_not_an_error() {
    let text = r#"
init = "-0.5 <= p <= 0.5 and 0 <= q <= 1"
[system]
name = "drift"
[state]
p = { type = "real" }
q = { type = "real" }
[networks.id]
layers = [{ weights = [[1.0, 0.0]], bias = [0.0], activation = "identity" }]
[controller]
network = "id"
inputs = ["p", "q"]
actions = ["a"]
[step]
p = "0.5 * a"
q = "q + 1"
"#;
    let (_d, path) = scratch("drift.toml", text);
    let r = trestle(&["ltl", s(&path), "--formula", "G (-1 <= p and p <= 1)", "--timeout", "20", "--json"]);
    let j = unknown(&r, &["undecided"]);
    assert!(!r.stderr.contains("bounded union of boxes"), "{}", r.stderr);
    assert!(j["reason"].as_str().unwrap().contains("G<=10 holds"), "the bounded check's finding is said: {j}");
}

/// 34.11: a product of two state variables is refused once, accurately (it said "fix the
/// non-deterministic inputs first", twice); 39.16: an unknown `G p` no longer claims that no
/// path violates it within N steps when no path search ran.
#[test]
fn ctl_and_ltl_messages_say_what_happened_once() {
    let text = r#"
init = "0 <= x <= 1 and 0 <= y <= 1"
[system]
name = "product"
[state]
x = { type = "real" }
y = { type = "real" }
[networks.id]
layers = [{ weights = [[1.0, 0.0]], bias = [0.0], activation = "identity" }]
[controller]
network = "id"
inputs = ["x", "y"]
actions = ["a"]
[step]
x = "x * y"
y = "y + a"
"#;
    let (_d, p) = scratch("product.toml", text);
    for args in [
        vec!["ctl", s(&p), "--formula", "AX^2 (x <= 5)"],
        vec!["ltl", s(&p), "--formula", "X^2 (x <= 5)", "--method", "rmilp"],
    ] {
        let r = trestle(&args);
        r.expect_input_error(&["product of two variables"]);
        assert_eq!(r.stderr.matches("not piecewise linear").count(), 1, "{}", r.stderr);
        assert!(!r.stderr.contains("non-deterministic"), "{}", r.stderr);
    }
    let fig = "configs/systems/rnn-figure1.toml";
    let r = trestle(&["ltl", fig, "--formula", "G (z <= 2)", "--method", "invariant", "--json"]);
    let j = r.json();
    assert_eq!(j["status"], "unknown", "{j}");
    assert!(!j["reason"].as_str().unwrap().contains("no path violates"), "{j}");
    // A HiGHS status is said in words.
    let spread = "configs/systems/spread-2.toml";
    let r = trestle(&["ltl", spread, "--formula", "X^6 (x1 <= 1)", "--method", "rmilp", "--timeout", "1"]);
    assert!(!r.stdout.contains("Reached") && !r.stdout.contains("time-out ("), "{}", r.stdout);
}
