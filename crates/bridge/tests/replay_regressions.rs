//! Regressions of issue 9 in the bridge engine's counterexample search and replay: witnesses are
//! states of the system (an `int` variable holds integers), counterexamples that exist only in
//! exact arithmetic are found (f64 only ranks candidates), and so are those at interior values of
//! an input the step is not multilinear in. Each truth is derived by hand in the test's comment;
//! every reported witness is re-checked by the checker's independent replay.

mod common;
use common::*;
use trestle_bridge::certificate::{CertificateJson, certify};
use trestle_bridge::{BridgeError, Config, Inductiveness, check};
use trestle_core::Budget;
use trestle_ir::num::{is_integer, parse_rational};
use trestle_ir::{Rational, System, sim};
use trestle_smt::{Witness, replay_inductive};

fn q(text: &str) -> Rational {
    parse_rational(text).unwrap()
}

/// A one-variable system with the identity controller `a = x` (exact: weight 1, bias 0).
fn identity_system(kind: &str, step: &str, nondet: &str) -> System {
    system_from_text(&format!(
        r#"
init = "0 <= x <= 0.5"
safe = "0 <= x <= 200"
invariant = "0 <= x <= 1"
[system]
name = "exact"
[state]
x = {{ type = "{kind}" }}
{nondet}
[networks.id]
layers = [{{ weights = [[1.0]], bias = [0.0], activation = "identity" }}]
[controller]
network = "id"
inputs = ["x"]
actions = ["a"]
[step]
x = "{step}"
"#
    ))
}

/// Checks the candidate and returns the refutation's witness, re-checked independently.
fn refuted(sys: &System) -> Witness {
    let r = check(sys, &Config::default(), &Budget::unlimited(), &quiet).unwrap();
    assert_eq!(r.word(), "not-inductive", "{:?}", r.inductive.outcome);
    let Inductiveness::Refuted(refutation) = r.inductive.outcome else { unreachable!() };
    let w = refutation.witness;
    sim::check_state(sys, &w.state).unwrap();
    replay_inductive(sys, sys.invariant.as_ref().unwrap(), &w).unwrap_or_else(|e| panic!("{w}: {e}"));
    w
}

#[test]
fn int_bug_is_never_refuted_at_a_non_integer_state() {
    let sys = system_from_text(INT_BUG);
    let r = check(&sys, &Config::default(), &Budget::unlimited(), &quiet).unwrap();
    // Safe is the truth; the engine may still answer unknown where the controller's bounds are
    // widened by a hair at x = 0 (a in [-1e-12, 1e-12]), but never not-inductive.
    assert_ne!(r.word(), "not-inductive", "{:?}", r.inductive.outcome);
    assert!(matches!(r.word(), "safe" | "unknown"), "{:?}", r.verdict);
}

/// Truth: as in the reproducer, x in {0, 1} steps to x. Every box strictly between the integers
/// holds no state and is proven vacuously; the verdict is safe.
#[test]
fn int_bug_without_the_controller_is_safe() {
    let sys = system_from_text(&INT_BUG.replace("then 100 else a", "then 100 else x"));
    let r = check(&sys, &Config::default(), &Budget::unlimited(), &quiet).unwrap();
    assert_eq!(r.word(), "safe", "{:?}", r.inductive.outcome);
    let c = certify(&trestle_bridge::certificate::from_report(&sys, &r), &sys).unwrap();
    assert!(c.valid, "{:?}", c.checks);
}

/// Truth: x int in [0, 3] steps to x + 1; only x = 3 leaves [0, 3] among the integers (a real x
/// in (2, 3) would too, but is no state).
#[test]
fn an_int_counterexample_is_an_integer_state() {
    let mut sys = identity_system("int", "x + 1", "");
    sys.invariant = Some(trestle_ir::parse::parse_pred("0 <= x <= 3", &scope()).unwrap());
    let w = refuted(&sys);
    assert!(is_integer(&w.state[0]), "{w}");
    assert_eq!((w.state[0].clone(), w.next[0].clone()), (q("3"), q("4")));
}

fn scope() -> trestle_ir::parse::SimpleScope {
    trestle_ir::parse::SimpleScope::with_state(&["x"])
}

/// A forged refutation of the reproducer at x = 1/2 (where the step does go to 100) is no run of
/// the system: certify refuses it as malformed input.
#[test]
fn int_bug_certify_refuses_a_witness_at_a_non_integer_state() {
    let sys = system_from_text(INT_BUG);
    let forged = r#"{"format":"trestle-bridge-certificate/1","system":"int-bug","verdict":"not-inductive",
      "witness_exact":{"state":["1/2"],"action":["1/2"],"nondet":[],"next":["100"],"branch":"step"}}"#;
    let cert: CertificateJson = serde_json::from_str(forged).unwrap();
    match certify(&cert, &sys) {
        Err(BridgeError::Certificate(m)) => assert!(m.contains("x = 0.5 is not a state") && m.contains("int"), "{m}"),
        other => panic!("expected a certificate error, got {other:?}"),
    }
}

/// Truth: x' = x + 5e-17 (a = x exactly) leaves [0, 1] exactly at x = 1 (and nowhere else among
/// the states with x' > 1: x > 1 - 5e-17), while in f64 1 + 5e-17 rounds to 1.
#[test]
fn a_violation_of_5e_17_is_found() {
    let w = refuted(&identity_system("real", "a + 0.00000000000000005", ""));
    assert_eq!(w.next[0], q("1.00000000000000005"), "{w}");
}

/// Truth: as above with 1e-30.
#[test]
fn a_constant_of_1e_30_is_found() {
    let w = refuted(&identity_system("real", "a + 1e-30", ""));
    assert_eq!(w.next[0], q("1") + q("1e-30"), "{w}");
}

/// Truth: x' = 2 (outside [0, 1]) exactly when neither `x < 0.4` nor `x > 0.4`: at x = 2/5 only,
/// a number no f64 equals.
#[test]
fn a_single_bad_point_between_strict_guards_is_found() {
    let w = refuted(&identity_system("real", "if x < 0.4 then a else if x > 0.4 then a else 2", ""));
    assert_eq!((w.state[0].clone(), w.next[0].clone()), (q("2/5"), q("2")));
}

/// Truth: x' = 2 exactly when x = 2/5.
#[test]
fn a_single_bad_point_under_an_equality_guard_is_found() {
    let w = refuted(&identity_system("real", "if x == 0.4 then 2 else a", ""));
    assert_eq!((w.state[0].clone(), w.next[0].clone()), (q("2/5"), q("2")));
}

/// Truth: x' = 2 exactly for x in the open window (0.3, 0.3 + w). With w = 1e-15 a few floats
/// lie inside; with w = 1e-17 none does (the floats nearest 0.3 are 0.29999999999999998890 and
/// 0.30000000000000004441): only an exact point between the guard's thresholds refutes.
#[test]
fn a_guard_window_of_1e_15_is_found() {
    for hi in ["0.300000000000001", "0.30000000000000001"] {
        let w = refuted(&identity_system("real", &format!("if x > 0.3 and x < {hi} then 2 else a"), ""));
        assert!(q("0.3") < w.state[0] && w.state[0] < q(hi), "{hi}: {w}");
    }
}

/// Truth: x' = x/2 + 2a c (1 - c) + 1e-9 with a = x and c in [0, 0.8]. For every x the middle
/// term peaks at the parabola's vertex c = 1/2, where x' = x + 1e-9: above 1 exactly for x in
/// (1 - 1e-9, 1], and at x = 1 only for |c - 1/2| < 2.3e-5 (2c(1 - c) > 1/2 - 1e-9). The
/// interval's ends give x' <= 1/2 + 0.32 + 1e-9 and its quarter points 0.2, 0.4, 0.6 at most
/// 1/2 + 0.48 + 1e-9: a search trying only those misses every counterexample.
#[test]
fn an_interior_critical_input_of_a_quadratic_update_is_found() {
    let w = refuted(&identity_system(
        "real",
        "x/2 + 2*c*a - c*(c*(2*a)) + 0.000000001",
        "[nondet]\nc = { interval = [0, 0.8] }",
    ));
    assert!(w.state[0] > q("0.999999999"), "{w}");
    let off = &w.nondet[0] - q("1/2");
    assert!(off.clone() * off < q("5.3e-10"), "{w}");
}
