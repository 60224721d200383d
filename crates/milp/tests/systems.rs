//! The inductiveness check on small inline systems with known answers: non-determinism by vertices
//! (intervals and sets), argmax with guarded commands, unions of boxes with `ite`, a float optimum on
//! the boundary (must not be reported either way), the replay gate, and the refusals.

use std::path::Path;
use trestle_config::{Overrides, load_system_from_str};
use trestle_core::replay_inductive;
use trestle_ir::num::{parse_rational, rational_from_i64};
use trestle_ir::{Pred, RBox, System};
use trestle_milp::{
    MilpAnswer, MilpError, MilpOptions, MilpUnknown, check_inductive_milp, replay_candidate, replay_exact,
};

fn system(text: &str, sets: &[&str]) -> System {
    let text = format!("init = \"false\"\n{text}");
    let overrides = Overrides::parse(&sets.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    load_system_from_str(&text, Path::new("inline.toml"), &overrides).unwrap()
}

fn check(sys: &System) -> Result<MilpAnswer, MilpError> {
    let inv = sys.invariant.clone().expect("the test systems have an invariant");
    check_inductive_milp(sys, &inv, &MilpOptions::default()).map(|c| c.answer)
}

fn assert_valid(answer: &MilpAnswer, margin: f64) {
    match answer {
        MilpAnswer::Evidence { margin: m } => assert!((m - margin).abs() < 1e-6, "margin {m}, expected {margin}"),
        other => panic!("expected Evidence with margin {margin}, got {other}"),
    }
}

/// The witness re-checked by the Z3 crate's independent replay.
fn assert_invalid(sys: &System, answer: &MilpAnswer) -> trestle_core::Witness {
    let w = answer.witness().unwrap_or_else(|| panic!("expected Invalid, got {answer}")).clone();
    replay_inductive(sys, sys.invariant.as_ref().unwrap(), &w).unwrap();
    w
}

/// `x' = x + c (0.5 - x)`: contracts toward 0.5 for c in [0, 2).
const PULL: &str = r#"
invariant = "0 <= x <= 1"
[state]
x = { type = "real" }
[nondet]
c = { interval = [0.5, 1.0] }
[networks.n]
layers = [{ weights = [[-1.0]], bias = [0.5], activation = "identity" }]
[controller]
network = "n"
inputs = ["x"]
actions = ["a"]
[step]
x = "x + c*a"
"#;

#[test]
fn interval_inputs_are_checked_at_their_ends() {
    // Worst case c = 0.5: x' in [0.25, 0.75].
    assert_valid(&check(&system(PULL, &[])).unwrap(), 0.25);
    // c = 2.5 overshoots: from x = 0, x' = 1.25.
    let sys = system(PULL, &["nondet.c.interval=[0.5, 2.5]"]);
    let w = assert_invalid(&sys, &check(&sys).unwrap());
    assert_eq!(w.nondet, vec![parse_rational("2.5").unwrap()]);
}

#[test]
fn finite_input_sets_are_enumerated() {
    // c = 0.25: x' in [0.125, 0.875].
    let sys = system(PULL, &["nondet.c={ values = [1.5, 0.25, 1] }"]);
    assert_valid(&check(&sys).unwrap(), 0.125);
    let sys = system(PULL, &["nondet.c={ values = [0.5, 3] }"]);
    let w = assert_invalid(&sys, &check(&sys).unwrap());
    assert_eq!(w.nondet, vec![rational_from_i64(3)]);
}

const ARGMAX: &str = r#"
invariant = "0 <= x <= 1"
[state]
x = { type = "real" }
[networks.n]
layers = [{ weights = [[1.0], [-1.0]], bias = [0.0, 1.0], activation = "identity" }]
[controller]
network = "n"
inputs = ["x"]
argmax = "a"
labels = ["down", "up"]
[[command]]
label = "down"
update = { x = "x - 0.2" }
[[command]]
label = "up"
update = { x = "x + 0.2" }
"#;

#[test]
fn argmax_policies_with_guarded_commands() {
    // "down" where x >= 0.5, "up" where x <= 0.5 (either at the tie).
    assert_valid(&check(&system(ARGMAX, &[])).unwrap(), 0.2);
    // Swapped: at x = 1 the policy picks index 0, which now moves up.
    let swapped = ARGMAX.replace("x - 0.2", "x + TMP").replace("x + 0.2", "x - 0.2").replace("x + TMP", "x + 0.2");
    let sys = system(&swapped, &[]);
    let w = assert_invalid(&sys, &check(&sys).unwrap());
    assert!(w.next[0] > rational_from_i64(1) || w.next[0] < rational_from_i64(0));
}

const UNION: &str = r#"
invariant = "(0 <= x <= 1) or (2 <= x <= 3)"
[state]
x = { type = "real" }
[networks.n]
layers = [{ weights = [[0.0]], bias = [0.0], activation = "identity" }]
[controller]
network = "n"
inputs = ["x"]
actions = ["a"]
[step]
x = "if x <= 1.5 then 0.5*x + 2.25 + a else 0.5*x - 0.75 + a"
"#;

#[test]
fn unions_of_boxes_with_ite_steps() {
    // [0, 1] -> [2.25, 2.75], [2, 3] -> [0.25, 0.75].
    assert_valid(&check(&system(UNION, &[])).unwrap(), 0.25);
    let sys = system(&UNION.replace("0.5*x + 2.25", "0.5*x + 2.6"), &[]);
    let w = assert_invalid(&sys, &check(&sys).unwrap());
    assert!(w.next[0] > rational_from_i64(3));
}

const STILL: &str = r#"
invariant = "0 <= x <= 1"
[state]
x = { type = "real" }
[networks.n]
layers = [{ weights = [[0.0]], bias = [BIAS], activation = "identity" }]
[controller]
network = "n"
inputs = ["x"]
actions = ["a"]
[step]
x = "x + a"
"#;

#[test]
fn an_optimum_on_the_boundary_is_neither_proof_nor_counterexample() {
    // x' = x: the worst successor sits exactly on the face; the float optimum is 0.
    let sys = system(&STILL.replace("BIAS", "0.0"), &[]);
    let inv = sys.invariant.clone().unwrap();
    let result = check_inductive_milp(&sys, &inv, &MilpOptions::default()).unwrap();
    assert!(matches!(result.answer, MilpAnswer::Unknown(MilpUnknown::NoMargin { .. })), "{}", result.answer);
    assert!(result.stats.replays > 0 && result.stats.replayed == 0, "{:?}", result.stats);
    // A genuine violation as small as 2^-30 is found and replays (it is real).
    let sys = system(&STILL.replace("BIAS", "9.313225746154785e-10"), &[]);
    let w = assert_invalid(&sys, &check(&sys).unwrap());
    assert_eq!(w.state, vec![rational_from_i64(1)]);
}

#[test]
fn the_replay_gate_rejects_points_that_do_not_violate_exactly() {
    let sys = system(&STILL.replace("BIAS", "0.0"), &[]);
    let inv = sys.invariant.clone().unwrap();
    let region = inv.to_box_union(1, 4).unwrap().remove(0);
    // A solver point just outside the box (within its feasibility tolerance): clamped to 1, whose
    // successor is 1, inside: rejected.
    assert!(replay_candidate(&sys, &inv, &region, &[1.0 + 1e-7], &[], 0).is_err());
    assert!(replay_candidate(&sys, &inv, &region, &[0.5], &[], 0).is_err());
    // The same point with a real drift replays after clamping.
    let sys = system(&STILL.replace("BIAS", "0.5"), &[]);
    let w = replay_candidate(&sys, &inv, &region, &[1.0 + 1e-7], &[], 0).unwrap();
    assert_eq!(w.state, vec![rational_from_i64(1)]);
    replay_inductive(&sys, &inv, &w).unwrap();
    // A state outside the invariant is never a witness.
    assert!(replay_exact(&sys, &inv, &[parse_rational("1.5").unwrap()], &[], 0).is_err());
    // Nor is one whose exact successor is inside, whatever the float says.
    assert!(replay_exact(&sys, &inv, &[parse_rational("0.25").unwrap()], &[], 0).is_err());
    let region2 = RBox { lo: vec![Some(rational_from_i64(0))], hi: vec![Some(rational_from_i64(1))] };
    assert_eq!(region, region2);
}

#[test]
fn what_cannot_be_encoded_exactly_is_refused() {
    let refused = |text: &str, sets: &[&str]| check(&system(text, sets)).unwrap_err();
    // x + c^2 a is not affine in c: with c in [-1, 1] and a < 0 its maximum is at c = 0, inside the
    // interval, so its ends prove nothing. Every degree-2 form is refused, however it is written.
    for step in ["x + c*c*a", "x + c*(c*a)", "x + c*(x + c*a)", "x + (c*a)/2*c", "x + c*a*c - x*0"] {
        let e = refused(&PULL.replace("x + c*a", step), &[]);
        assert!(matches!(e, MilpError::NotMultilinear { .. }), "{step}: {e}");
    }
    let e = refused(&PULL.replace("x + c*a", "x + relu(c - 0.7)*a"), &[]);
    assert!(matches!(e, MilpError::NotMultilinear { .. }), "{e}");
    let e = refused(&PULL.replace("inputs = [\"x\"]", "inputs = [\"x + c\"]"), &[]);
    assert!(matches!(e, MilpError::NotMultilinear { .. }), "{e}");
    let e = refused(&PULL.replace("0 <= x <= 1", "0 <= x <= 1 or 2 <= x <= 3"), &[]);
    assert!(matches!(e, MilpError::NotMultilinear { .. }), "{e}");
    let e = refused(&STILL.replace("BIAS", "0.0").replace("x + a", "x * a"), &[]);
    assert!(matches!(e, MilpError::NotPiecewiseLinear { .. }), "{e}");
    let e = refused(&STILL.replace("BIAS", "0.0").replace("0 <= x <= 1", "0 <= x < 1"), &[]);
    assert!(matches!(e, MilpError::NotBoxUnion { .. }), "{e}");
    let e = refused(&STILL.replace("BIAS", "0.0").replace("0 <= x <= 1", "x >= 0"), &[]);
    assert!(matches!(e, MilpError::NotBoxUnion { .. }), "{e}");
    // A set-valued input may be anywhere (all its values are enumerated).
    assert!(check(&system(&PULL.replace("x + c*a", "x + c*c*a"), &["nondet.c={ values = [0.5, 1] }"])).is_ok());
}

#[test]
fn an_invariant_that_is_false_is_trivially_inductive() {
    let sys = system(&STILL.replace("BIAS", "0.0"), &[]);
    let result = check_inductive_milp(&sys, &Pred::False, &MilpOptions::default()).unwrap();
    assert!(result.answer.is_evidence() && result.stats.milps == 0);
}

const SELECT: &str = r#"
invariant = "0 <= x <= 1 and 0 <= m <= 1"
[state]
x = { type = "real" }
m = { type = "int", domain = [0, 1] }
[networks.n0]
layers = [{ weights = [[-1.0, 0.0]], bias = [0.5], activation = "identity" }]
[networks.n1]
layers = [{ weights = [[-0.5, 0.0]], bias = [B1], activation = "identity" }]
[controller]
networks = ["n0", "n1"]
select_by = "m"
inputs = ["x", "m"]
actions = ["a"]
[step]
x = "x + 0.5*a"
m = "m"
"#;

#[test]
fn network_selectors_split_the_state_and_integer_successors_are_exact() {
    // m = 0: x' = 0.5 x + 0.25; m = 1: x' = 0.75 x + 0.125. The mode m' = m sits on its faces,
    // which is still a proof: an integer successor above 1 would be at least 2.
    let sys = system(&SELECT.replace("B1", "0.25"), &[]);
    let inv = sys.invariant.clone().unwrap();
    let result = check_inductive_milp(&sys, &inv, &MilpOptions::default()).unwrap();
    assert_valid(&result.answer, 0.125);
    assert!(result.stats.records.iter().any(|r| r.label.contains("m=1")), "{:?}", result.stats.records);
    // m = 1 with a bias of 2.5: x' = 0.75 x + 1.25 leaves.
    let sys = system(&SELECT.replace("B1", "2.5"), &[]);
    let w = assert_invalid(&sys, &check(&sys).unwrap());
    assert_eq!(w.state[1], rational_from_i64(1));
}

#[test]
fn solver_failures_are_errors_never_verdicts() {
    let sys = system(&STILL.replace("BIAS", "0.5"), &[]);
    let inv = sys.invariant.clone().unwrap();
    let mut opts = MilpOptions::default();
    opts.highs_options.push(("no_such_highs_option".into(), trestle_milp::model::HighsValue::Int(1)));
    let err = check_inductive_milp(&sys, &inv, &opts).unwrap_err();
    assert!(matches!(err, MilpError::Solver(_)), "{err}");
}
