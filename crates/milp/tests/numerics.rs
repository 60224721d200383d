//! Systems built to trip a floating-point MILP, each with its truth established by exact reasoning
//! (stated next to it): tiny coefficients next to huge ones, huge big-M constants, integer
//! variables with huge domains, violations at and below the feasibility tolerance, argmax ties
//! under the lowest-index rule, states outside their declared domains. The rule every test
//! enforces: a MILP answer is never `Evidence` for a system that is not inductive, and every
//! `Invalid` replays exactly (here also through the Z3 crate's independent replay).

use std::path::Path;
use trestle_config::{Overrides, load_system_from_str};
use trestle_core::replay_inductive;
use trestle_ir::num::{parse_rational, rational_from_f64, rational_from_i64};
use trestle_ir::{Rational, System};
use trestle_milp::{MilpAnswer, MilpCheck, MilpOptions, MilpUnknown, check_inductive_milp, replay_exact};

/// One state variable `x` (declared as `x_decl`), one network `n` (its `layers`) observing `x`,
/// and the controller's outputs with the step (`tail`).
fn system(invariant: &str, x_decl: &str, layers: &str, tail: &str) -> System {
    let text = format!(
        "init = \"false\"\ninvariant = \"{invariant}\"\n[state]\nx = {{ {x_decl} }}\n[networks.n]\nlayers = [{layers}]\n\
         [controller]\nnetwork = \"n\"\ninputs = [\"x\"]\n{tail}"
    );
    load_system_from_str(&text, Path::new("inline.toml"), &Overrides::default()).unwrap()
}

const REAL: &str = "type = \"real\"";

/// One real action `a` and the step `x' = update`.
fn step(update: &str) -> String {
    format!("actions = [\"a\"]\n[step]\nx = \"{update}\"")
}

fn run(sys: &System) -> MilpCheck {
    let inv = sys.invariant.clone().expect("the test systems have an invariant");
    check_inductive_milp(sys, &inv, &MilpOptions::default()).unwrap()
}

/// The answer is a counterexample that replays exactly, from `state`.
fn assert_refuted(sys: &System, check: &MilpCheck, state: &[Rational]) {
    let w = check.answer.witness().unwrap_or_else(|| panic!("expected Invalid, got {}", check.answer));
    replay_inductive(sys, sys.invariant.as_ref().unwrap(), w).unwrap();
    assert_eq!(w.state, state, "{w}");
}

fn margin(check: &MilpCheck) -> f64 {
    match check.answer {
        MilpAnswer::Evidence { margin } => margin,
        ref other => panic!("expected Evidence, got {other}"),
    }
}

/// `a = relu(x) + W2 * relu(W1 * x)` with `W1 * W2 = 9e-5` (as f64 values; exactly a little more
/// or less, which does not matter at this margin): `a = 1.00009 x` for `x >= 0`, `a = 0` below.
fn tiny(w1: &str, w2: &str, k: &str) -> System {
    let layers = format!(
        "{{ weights = [[1.0], [{w1}]], bias = [0.0, 0.0], activation = \"relu\" }}, \
         {{ weights = [[1.0, {w2}]], bias = [0.0], activation = \"identity\" }}"
    );
    system("-1 <= x <= 1", REAL, &layers, &step(&format!("{k} * a")))
}

/// The reproducer: HiGHS drops matrix entries up to 1e-9 by default, and the weight 1e-10
/// vanished: `x' = 0.99999 a` looked like `0.99999 x` (a proof with margin 1e-5). Truth: from
/// `x = 1`, `x' = 0.99999 * 1.00009 = 1.0000799991 > 1`, not inductive.
#[test]
fn a_weight_of_1e_minus_10_next_to_9e5_is_kept() {
    let sys = tiny("9e5", "1e-10", "0.99999");
    let check = run(&sys);
    assert_refuted(&sys, &check, &[rational_from_i64(1)]);
    assert!(check.stats.moved_coefficients >= 1, "{:?}", check.stats);
    // The tiny weight on the input side: y2 = relu(1e-10 x) in [0, 1e-10], a = x + 9e5 y2.
    let sys = tiny("1e-10", "9e5", "0.99999");
    assert_refuted(&sys, &run(&sys), &[rational_from_i64(1)]);
    // Below HiGHS's smallest `small_matrix_value` (1e-12), with hidden values up to 9e7: kept.
    let sys = tiny("9e7", "1e-12", "0.99999");
    assert_refuted(&sys, &run(&sys), &[rational_from_i64(1)]);
    // With 9e8 (a big-M of 9e8 next to coefficients 1) HiGHS 1.15 reports the optimum -0.99991
    // (it misses x = 1 altogether, with or without presolve); the rounding gate keeps that from
    // counting. Whatever HiGHS says, it is never evidence.
    let sys = tiny("9e8", "1e-13", "0.99999");
    let check = run(&sys);
    match &check.answer {
        MilpAnswer::Unknown(MilpUnknown::OutOfRange(_)) => {}
        MilpAnswer::Invalid(_) => assert_refuted(&sys, &check, &[rational_from_i64(1)]),
        other => panic!("expected out of range or a counterexample, got {other}"),
    }
    // Truth: x' = 0.9999 * 1.00009 x <= 0.999989991 on [0, 1] and 0 below: inductive with margin
    // 1.0009e-5, which the relaxed slack does not lose (it peaks where x does).
    let m = margin(&run(&tiny("9e5", "1e-10", "0.9999")));
    assert!((m - 1.0009e-5).abs() < 1e-7, "margin {m}");
}

/// `x' = a = relu(w x)` on `[-1, 1]`. Truth: not inductive exactly when the f64 `w` exceeds 1
/// (for `x > 1 / w`); inductive with margin `1 - w` otherwise.
fn scale(w: &str) -> System {
    let layers = format!("{{ weights = [[{w}]], bias = [0.0], activation = \"relu\" }}");
    system("-1 <= x <= 1", REAL, &layers, &step("a"))
}

#[test]
fn violations_at_and_below_the_feasibility_tolerance_are_found_and_margins_below_it_prove_nothing() {
    // Violations of 1e-6 (the feasibility tolerance), 1e-7 and 2^-40 (far below it) are real.
    for w in ["1.000001", "1.0000001", "1.0000000000009095"] {
        let sys = scale(w);
        assert!(rational_from_f64(w.parse().unwrap()) > rational_from_i64(1));
        let check = run(&sys);
        let witness = check.answer.witness().unwrap_or_else(|| panic!("{w}: expected Invalid, got {}", check.answer));
        replay_inductive(&sys, sys.invariant.as_ref().unwrap(), witness).unwrap();
    }
    // A true margin of 1e-6 is below the threshold 2e-6: no evidence, and no counterexample.
    let check = run(&scale("0.999999"));
    assert!(matches!(check.answer, MilpAnswer::Unknown(MilpUnknown::NoMargin { .. })), "{}", check.answer);
    // A margin of 1e-5 is evidence.
    let m = margin(&run(&scale("0.99999")));
    assert!((m - 1e-5).abs() < 1e-7, "margin {m}");
}

/// `a = relu(x) + 1e-12 relu(1e12 x - B)`: a hidden neuron with pre-activation bounds of about
/// ±2e12 (a big-M constant of 2e12) next to a weight of 1e-12.
fn big_m(update: &str) -> System {
    let layers = "{ weights = [[1.0], [1e12]], bias = [0.0, -999999000000.0], activation = \"relu\" }, \
                  { weights = [[1.0, 1e-12]], bias = [0.0], activation = \"identity\" }";
    system("-1 <= x <= 1", REAL, layers, &step(update))
}

#[test]
fn huge_big_m_constants_next_to_small_coefficients_never_give_evidence() {
    // Truth: B = -999999000000 makes the second neuron 1e6 at x = 1, so a = 1 + 1e-12 * 1e6 > 1
    // (exactly: the f64 1e-12 is positive) and x' = a leaves [-1, 1]: not inductive.
    let sys = big_m("a");
    let check = run(&sys);
    assert!(!check.answer.is_evidence(), "{}", check.answer);
    assert_refuted(&sys, &check, &[rational_from_i64(1)]);
    // Truth: x' = 0.5 (a - x) is -x / 2 in (0, 0.5] for x < 0 and at most 0.5e-6 for x >= 0:
    // inductive. Interval bounds do not decide it, and values of 1e12 are beyond what HiGHS's
    // absolute tolerances can certify: unknown, never evidence.
    let check = run(&big_m("0.5 * (a - x)"));
    assert!(matches!(check.answer, MilpAnswer::Unknown(MilpUnknown::OutOfRange(_))), "{}", check.answer);
}

/// An integer state with a domain of 10^12 values; `a = relu(x - (10^12 - 1))` is 1 only at the
/// top.
fn huge_int(update: &str) -> System {
    let layers = "{ weights = [[1.0]], bias = [-999999999999.0], activation = \"relu\" }";
    system("0 <= x <= 1000000000000", "type = \"int\"", layers, &step(update))
}

#[test]
fn integer_variables_with_huge_domains_never_give_evidence() {
    // Truth: from x = 10^12, x' = 10^12 + 1: not inductive.
    let sys = huge_int("x + a");
    let check = run(&sys);
    assert!(!check.answer.is_evidence(), "{}", check.answer);
    assert_refuted(&sys, &check, &[parse_rational("1000000000000").unwrap()]);
    // Truth: x' = x - a stays in [0, 10^12]: inductive, but not certifiable at this magnitude.
    let check = run(&huge_int("x - a"));
    assert!(matches!(check.answer, MilpAnswer::Unknown(MilpUnknown::OutOfRange(_))), "{}", check.answer);
}

/// Two scores and two commands; the simulator picks the lowest index among the maximal scores.
fn ties(s1: &str, b1: &str, second: &str) -> System {
    let layers = format!("{{ weights = [[1.0], [{s1}]], bias = [0.0, {b1}], activation = \"identity\" }}");
    let tail = format!(
        "argmax = \"a\"\nlabels = [\"first\", \"second\"]\n[[command]]\nlabel = \"first\"\n\
         update = {{ x = \"0.5*x + 0.25\" }}\n[[command]]\nlabel = \"second\"\nupdate = {{ x = \"{second}\" }}"
    );
    system("0 <= x <= 1", REAL, &layers, &tail)
}

#[test]
fn argmax_ties_follow_the_lowest_index_rule() {
    // Identical scores: index 0 always wins, so "second" (x' = x + 10) never happens. Truth:
    // x' = 0.5 x + 0.25, inductive with margin 0.25 (the score gaps prune index 1).
    let check = run(&ties("1.0", "0.0", "x + 10"));
    assert!((margin(&check) - 0.25).abs() < 1e-9, "{}", check.answer);
    // Scores x and 1 - x: "second" exactly where x < 1/2, moving to x + 0.6. Truth: not inductive
    // (x = 0.45 goes to 1.05); the MILP's maximum sits on the tie x = 1/2, where the simulator picks
    // "first", and the counterexample is found past the tie.
    let sys = ties("-1.0", "1.0", "x + 0.6");
    let check = run(&sys);
    let w = check.answer.witness().unwrap_or_else(|| panic!("expected Invalid, got {}", check.answer));
    replay_inductive(&sys, sys.invariant.as_ref().unwrap(), w).unwrap();
    assert!(w.state[0] < parse_rational("0.5").unwrap() && w.state[0] > parse_rational("0.4").unwrap(), "{w}");
    // Truth: "second" (x < 1/2) moves to x + 0.4 < 0.9; only at the tie, where "second" is never
    // chosen, would it jump to 2. Inductive; the closure of the strict rule cannot show it, so
    // the answer is unknown and never a counterexample.
    let check = run(&ties("-1.0", "1.0", "if x < 0.5 then x + 0.4 else 2"));
    assert!(matches!(check.answer, MilpAnswer::Unknown(_)), "{}", check.answer);
    assert!(check.stats.tie_searches >= 1 && check.stats.replayed == 0, "{:?}", check.stats);
}

#[test]
fn states_outside_their_declared_domain_are_not_states() {
    // Truth: x lives in [0, 0.5], where x' = x / 2: inductive with margin 0.75 on [-1, 1]. The
    // invariant's part (0.5, 1] holds no state, and its jump to 5 is no counterexample.
    let layers = "{ weights = [[0.0]], bias = [0.0], activation = \"identity\" }";
    let sys = system(
        "-1 <= x <= 1",
        "type = \"real\", domain = [0, 0.5]",
        layers,
        &step("if x < 0.75 then x / 2 + a else 5"),
    );
    assert!((margin(&run(&sys)) - 0.75).abs() < 1e-9);
    let inv = sys.invariant.clone().unwrap();
    let e = replay_exact(&sys, &inv, &[parse_rational("0.9").unwrap()], &[], 0).unwrap_err();
    assert!(e.contains("is not a state") && e.contains("[0, 0.5]"), "{e}");
}
