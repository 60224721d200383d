//! Init => Inv and Inv => Safe, strict and non-strict atoms, on the maze, for both backends.

mod common;

use common::*;
use trestle_ir::expr::Env;
use trestle_ir::{Pred, System};
use trestle_smt::{Answer, CheckError, Checker, CheckerConfig, EnvChecker, FastPath, Unknown, Z3Backend};

fn answers(sys: &System, premise: &Pred, conclusion: &Pred) -> Vec<Answer> {
    let mut z3 = Z3Backend::new(sys, CheckerConfig::default()).unwrap();
    let mut layered = Checker::new(sys, CheckerConfig::default()).unwrap();
    vec![z3.check_implication(premise, conclusion).unwrap(), layered.check_implication(premise, conclusion).unwrap()]
}

fn assert_valid(sys: &System, premise: &str, conclusion: &str) {
    for a in answers(sys, &pred(premise), &pred(conclusion)) {
        assert_eq!(a, Answer::Valid, "{premise} => {conclusion}");
    }
}

/// Invalid for both backends; each witness satisfies the premise and violates the conclusion.
fn assert_invalid(sys: &System, premise: &str, conclusion: &str) -> Vec<trestle_ir::Rational> {
    let (p, c) = (pred(premise), pred(conclusion));
    let mut last = Vec::new();
    for a in answers(sys, &p, &c) {
        let w = a.witness().unwrap_or_else(|| panic!("{premise} => {conclusion}: expected Invalid, got {a:?}"));
        let env = Env::new(&w.state[..], &[], &[]);
        assert!(p.eval_exact(&env).unwrap() && !c.eval_exact(&env).unwrap(), "bad witness {w}");
        assert!(w.actions.is_empty() && w.next.is_empty());
        last = w.state.clone();
    }
    last
}

#[test]
fn init_implies_inv_and_inv_implies_safe() {
    // Init = [0.3,0.4]x[0.6,0.7] inside Inv = [0.25,0.95]x[0.55,0.95] inside Safe =
    // [0.22,0.98]x[0.54,0.98].
    let sys = det_maze();
    let mut checker = Checker::new(&sys, CheckerConfig::default()).unwrap();
    let inv = pred(INV);
    assert_eq!(checker.check_init(&inv).unwrap(), Answer::Valid);
    assert_eq!(checker.check_safe(&inv).unwrap(), Answer::Valid);
    let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
    assert_eq!(z3.check_init(&inv).unwrap(), Answer::Valid);
    assert_eq!(z3.check_safe(&inv).unwrap(), Answer::Valid);
}

#[test]
fn an_invariant_reaching_outside_safe_is_refuted() {
    // x may go down to 0.2 < 0.22.
    let sys = det_maze();
    let state =
        assert_invalid(&sys, "0.2 <= x <= 0.95 and 0.55 <= y <= 0.95", "0.22 <= x <= 0.98 and 0.54 <= y <= 0.98");
    assert!(state[0] < q("0.22"));
    // Init not inside a shrunken invariant: x in [0.3, 0.4] but the invariant starts at 0.35.
    assert_invalid(&sys, "0.3 <= x <= 0.4 and 0.6 <= y <= 0.7", "0.35 <= x <= 0.95 and 0.55 <= y <= 0.95");
}

#[test]
fn strict_atoms_are_honoured_exactly() {
    let sys = det_maze();
    // x <= 0.95 admits x = 19/20 exactly, which x < 0.95 excludes: the only counterexamples have
    // x = 0.95 (the exact rational, not a float).
    let state = assert_invalid(&sys, "0.9 <= x <= 0.95 and y == 0.6", "x < 0.95");
    assert_eq!(state[0], q("0.95"));
    // The converse holds.
    assert_valid(&sys, "0.9 <= x < 0.95", "x <= 0.95");
    assert_valid(&sys, "0.9 < x < 0.95", "0.9 < x and x < 0.95");
    // x > 0.95 and x < 0.95 + 10^-30: no gap too small.
    assert_invalid(&sys, "0.95 < x < 0.950000000000000000000000000001", "x <= 0.95");
    assert_valid(&sys, "x >= 0.95 and x <= 0.95", "x == 0.95");
    assert_invalid(&sys, "x >= 0.95 and x <= 0.95 + 0.000000000000000000001", "x == 0.95");
}

#[test]
fn disjunctions_and_negations() {
    let sys = det_maze();
    assert_valid(&sys, "x <= 0.3 or x >= 0.7", "not (0.3 < x and x < 0.7)");
    assert_invalid(&sys, "x <= 0.3 or x >= 0.7", "x <= 0.3");
    assert_valid(&sys, "false", "x >= 100");
    assert_valid(&sys, "x >= 1 and x <= 0", "false");
}

#[test]
fn the_fast_path_proves_box_containment_alone() {
    let sys = det_maze();
    let mut fast = FastPath::new(&sys, CheckerConfig::default()).unwrap();
    assert_eq!(fast.check_init(&pred(INV)).unwrap(), Answer::Valid);
    // Strict atoms are not boxes: left to Z3.
    assert_eq!(
        fast.check_implication(&pred("0.3 < x < 0.4"), &pred("0 <= x <= 1 and 0 < x")).unwrap(),
        Answer::Unknown(Unknown::Undecided)
    );
    // Its sampler finds the corner counterexample.
    let a = fast.check_implication(&pred(INV), &pred("x <= 0.9")).unwrap();
    assert!(a.witness().unwrap().state[0] > q("0.9"));
}

#[test]
fn no_safe_predicate_is_an_error_not_an_answer() {
    let mut sys = det_maze();
    sys.safe = None;
    let mut checker = Checker::new(&sys, CheckerConfig::default()).unwrap();
    assert_eq!(checker.check_safe(&pred(INV)), Err(CheckError::NoSafe));
}
