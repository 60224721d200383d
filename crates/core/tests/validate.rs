//! Validated replay: planted truths through sin, exp and powers (a violation by 1e-9 is
//! validated, one that never happens never is), a boundary only more precision decides (checked
//! against mpmath when present), domain exits, and agreement with the exact replay on rational
//! systems (the validated step follows `ir::sim` decision by decision).

use trestle_core::validate::{
    EnclosedRun, NotValidated, PRECISIONS, Truth, Validation, is_rational_valued, truth, validate_by_enclosures,
    validate_violation,
};
use trestle_core::{ReplayError, Trace};
use trestle_ir::enclosed::Enclosed;
use trestle_ir::num::{parse_rational, rational_from_i64};
use trestle_ir::parse::{SimpleScope, parse_pred};
use trestle_ir::sim::SimError;
use trestle_ir::{Pred, Rational, System};
use trestle_testkit::{SCALE, WALK, example, one_var_system, system_from_text};

fn q(s: &str) -> Rational {
    parse_rational(s).unwrap()
}

/// x' = STEP over one real (or typed) variable, the action `a = x` by an identity network.
fn system(state: &str, step: &str) -> System {
    system_from_text(&one_var_system("init = \"0 <= x <= 1\"\n[system]\nname = \"planted\"", state, step))
}

fn pred(text: &str) -> Pred {
    parse_pred(text, &SimpleScope::with_state(&["x"])).unwrap()
}

/// `n` steps of the only branch with no inputs.
fn steps(n: usize) -> Vec<(Vec<Rational>, usize)> {
    vec![(Vec::new(), 0); n]
}

/// pi to 100 decimals, truncated (so below pi): its first 100 decimals are checked against mpmath
/// below when python3 with mpmath is present.
const PI_100: &str =
    "3.1415926535897932384626433832795028841971693993751058209749445923078164062862089986280348253421170679";

#[test]
fn a_violation_by_1e9_through_exp_is_validated_and_a_margin_of_1e9_is_not() {
    let sys = system("{ type = \"real\" }", "exp(x)");
    assert!(!is_rational_valued(&sys));
    // e = 2.71828182845904523536...: 2.7182818274 is 1.06e-9 below, 2.7182818294 0.94e-9 above.
    match validate_violation(&sys, &[q("1")], &steps(1), &pred("x <= 2.7182818274")) {
        Ok(Validation::Validated { precision_bits: 256, run }) => {
            let last = &run.states[1][0];
            assert!(last.lo <= last.hi && &last.hi - &last.lo < q("1e-70"), "{last}");
            assert!(last.lo > q("2.718281828459045") && last.hi < q("2.718281828459046"), "{last}");
        }
        other => panic!("expected a validated violation, got {other:?}"),
    }
    assert_eq!(
        validate_violation(&sys, &[q("1")], &steps(1), &pred("x <= 2.7182818294")),
        Err(NotValidated::Holds { precision_bits: Some(256) })
    );
}

#[test]
fn a_sin_run_through_a_network_over_several_steps_is_validated() {
    // x' = x + 0.1*sin(a), a = x: from 1, x increases towards pi; after 3 steps
    // x = 1.26471135222135789075... (mpmath), so x <= 1.2647113522 is violated by 2.2e-11.
    let sys = system("{ type = \"real\", domain = [0, 4] }", "x + 0.1*sin(a)");
    match validate_violation(&sys, &[q("1")], &steps(3), &pred("x <= 1.2647113522")) {
        Ok(Validation::Validated { precision_bits, run }) => {
            assert_eq!(precision_bits, 256);
            assert_eq!(run.states.len(), 4);
            assert_eq!(run.actions.len(), 3);
            // The first action is exact (a = x = 1); later ones are enclosures.
            assert_eq!(run.actions[0][0].lo, q("1"));
            assert!(run.actions[1][0].lo < run.actions[1][0].hi);
        }
        other => panic!("expected a validated violation, got {other:?}"),
    }
    assert!(matches!(
        validate_violation(&sys, &[q("1")], &steps(3), &pred("x <= 1.2647113523")),
        Err(NotValidated::Holds { .. })
    ));
}

#[test]
fn a_boundary_straddling_at_256_bits_is_decided_at_1024() {
    let sys = system("{ type = \"real\" }", "sin(x)");
    let safe = pred("x >= 0");
    let below = q(PI_100);
    let above = &below + q("1e-100");
    // pi lies strictly between them (the digits are pi's, truncated), so sin(above) < 0 < sin(below);
    // |sin| is about 8e-101 and 1e-101 < 2^-256 relative precision cannot tell.
    match validate_violation(&sys, &[above], &steps(1), &safe) {
        Ok(Validation::Validated { precision_bits, run }) => {
            assert_eq!(precision_bits, PRECISIONS[1], "256 bits should straddle");
            assert!(run.states[1][0].hi < Rational::from_integer(0.into()));
        }
        other => panic!("expected a violation validated at 1024 bits, got {other:?}"),
    }
    assert_eq!(
        validate_violation(&sys, std::slice::from_ref(&below), &steps(1), &safe),
        Err(NotValidated::Holds { precision_bits: Some(PRECISIONS[1]) })
    );
}

#[test]
fn the_pi_digits_agree_with_mpmath() {
    let python = ["python3", "/usr/bin/python3"].into_iter().find(|p| {
        std::process::Command::new(p).args(["-c", "import mpmath"]).output().is_ok_and(|o| o.status.success())
    });
    let Some(python) = python else {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "no python3 with mpmath under CI=true");
        eprintln!("skipped: no python3 with mpmath");
        return;
    };
    let script = "import mpmath; mpmath.mp.dps = 150; x = mpmath.mpf(__import__('sys').argv[1]); \
                  print(mpmath.nstr(mpmath.pi, 120)); print(mpmath.sign(mpmath.sin(x)), mpmath.sign(mpmath.sin(x + mpmath.mpf(10)**-100)))";
    let out = std::process::Command::new(python).args(["-c", script, PI_100]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with(PI_100), "{text}");
    assert_eq!(lines.next().unwrap().trim(), "1.0 -1.0", "{text}");
}

#[test]
fn runs_that_never_leave_are_never_validated() {
    // |sin| <= 1: no run of x' = sin(x) leaves [-1, 1] after its first step.
    let sys = system("{ type = \"real\" }", "sin(x)");
    let safe = pred("-1 <= x <= 1");
    let mut state = 12345u64;
    for _ in 0..40 {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let start = Rational::new(((state >> 33) as i64 - (1 << 30)).into(), 1_000_003.into());
        for n in 1..4 {
            match validate_violation(&sys, std::slice::from_ref(&start), &steps(n), &safe) {
                Err(NotValidated::Holds { .. }) => {}
                other => panic!("x' = sin(x) from {start}, {n} steps: {other:?}"),
            }
        }
    }
    // sin(x)^2 + cos(x)^2 = 1 exactly: the enclosure straddles 1 at every precision, so a claim
    // that it exceeds 1 stays undecided, and is never a counterexample.
    let sys = system("{ type = \"real\" }", "sin(x)^2 + cos(x)^2");
    match validate_violation(&sys, &[q("0.7")], &steps(1), &pred("x <= 1")) {
        Err(NotValidated::Undecided { precision_bits: 4096, step: None, .. }) => {}
        other => panic!("expected undecided, got {other:?}"),
    }
}

#[test]
fn polynomial_systems_keep_the_exact_replay() {
    let sys = system("{ type = \"real\" }", "x - 0.1*x^3 + 0.1*a");
    assert!(is_rational_valued(&sys));
    // From 2: 2 - 0.8 + 0.2 = 1.4 exactly.
    match validate_violation(&sys, &[q("2")], &steps(1), &pred("x <= 1.4 - 1e-9")) {
        Ok(Validation::Exact(trace)) => {
            assert_eq!(trace.last(), &[q("1.4")]);
            trace.replay(&sys).unwrap();
        }
        other => panic!("expected an exact replay, got {other:?}"),
    }
    assert_eq!(
        validate_violation(&sys, &[q("2")], &steps(1), &pred("x <= 1.4")),
        Err(NotValidated::Holds { precision_bits: None })
    );
    // The claim itself may apply a function: then enclosures decide it. exp(1.4) = 4.0552...
    match validate_violation(&sys, &[q("2")], &steps(1), &pred("exp(x) <= 4.05")) {
        Ok(Validation::Validated { precision_bits: 256, .. }) => {}
        other => panic!("expected a validated violation, got {other:?}"),
    }
}

#[test]
fn domain_exits_and_bad_starts_are_errors_of_the_run_not_counterexamples() {
    // e^0.5 = 1.6487 leaves [0, 1]: the run ends in the system's error.
    let sys = system("{ type = \"real\", domain = [0, 1] }", "exp(x)");
    match validate_violation(&sys, &[q("0.5")], &steps(1), &pred("x <= 1.5")) {
        Err(NotValidated::Replay(ReplayError::Step { step: 0, error: SimError::DomainExit { var, .. } })) => {
            assert_eq!(var, "x")
        }
        other => panic!("expected a domain exit, got {other:?}"),
    }
    // A start outside the domain is no run.
    assert!(matches!(
        validate_violation(&sys, &[q("2")], &steps(1), &pred("x <= 1.5")),
        Err(NotValidated::Replay(ReplayError::Start(_)))
    ));
    // sqrt below 0: the step cannot be evaluated, so nothing is claimed.
    let sys = system("{ type = \"real\" }", "sqrt(x - 1)");
    match validate_violation(&sys, &[q("0.5")], &steps(1), &pred("x >= 0")) {
        Err(NotValidated::Undecided { step: Some(0), what, .. }) => assert!(what.contains("sqrt"), "{what}"),
        other => panic!("expected an undecided step, got {other:?}"),
    }
    // An int variable given an irrational value: never an integer, so not a state.
    let sys = system("{ type = \"int\", domain = [-5, 5] }", "x + sin(x)");
    assert!(matches!(
        validate_violation(&sys, &[q("1")], &steps(1), &pred("x <= 0")),
        Err(NotValidated::Replay(ReplayError::Step { step: 0, error: SimError::DomainExit { .. } }))
    ));
    // The claim must be about the state.
    assert_eq!(
        validate_violation(
            &sys,
            &[q("1")],
            &steps(0),
            &parse_pred("a <= 0", &{
                let mut s = SimpleScope::with_state(&["x"]);
                s.add("a", trestle_ir::parse::Symbol::Var(trestle_ir::VarRef::Action(0)));
                s
            })
            .unwrap()
        ),
        Err(NotValidated::NotStatePredicate)
    );
}

#[test]
fn truth_on_enclosures_is_three_valued() {
    let p = pred("x >= 0");
    let sin_of = |x: &str| -> Vec<Enclosed<256>> {
        vec![trestle_ir::Arith::apply(&Enclosed::<256>::Exact(q(x)), trestle_ir::expr::Function::Sin).unwrap()]
    };
    assert_eq!(truth(&p, &sin_of("1")).unwrap(), Truth::Holds);
    assert_eq!(truth(&p, &sin_of("-1")).unwrap(), Truth::Violated);
    assert!(matches!(truth(&p, &sin_of(PI_100)).unwrap(), Truth::Undecided(_)));
    assert_eq!(truth(&p, &[Enclosed::<256>::Exact(q("0"))]).unwrap(), Truth::Holds);
}

/// The enclosures of a rational system's run are its exact values, point by point.
fn assert_points(run: &EnclosedRun, trace: &Trace) {
    assert_eq!(run.states.len(), trace.states.len());
    for (enclosed, exact) in run.states.iter().zip(&trace.states) {
        for (b, x) in enclosed.iter().zip(exact) {
            assert!(b.lo == *x && b.hi == *x, "{b} vs {x}");
        }
    }
    for (enclosed, step) in run.actions.iter().zip(&trace.steps) {
        for (b, x) in enclosed.iter().zip(&step.actions) {
            assert!(b.lo == *x && b.hi == *x, "{b} vs {x}");
        }
    }
}

#[test]
fn the_validated_step_agrees_with_the_exact_step_on_rational_systems() {
    // The example maze: a ReLU network, an interval input multiplying the action.
    let sys = example("maze-nondet.toml");
    let choices = vec![(vec![q("0.5")], 0), (vec![q("1")], 0), (vec![q("3/4")], 0)];
    let trace = Trace::simulate(&sys, vec![q("0.3"), q("0.6")], choices.clone()).unwrap();
    let last = trace.last().to_vec();
    let violated = parse_pred(&format!("x < {}", last[0]), &SimpleScope::with_state(&["x", "y"])).unwrap();
    match validate_by_enclosures(&sys, &[q("0.3"), q("0.6")], &choices, &violated) {
        Ok(Validation::Validated { run, .. }) => assert_points(&run, &trace),
        other => panic!("{other:?}"),
    }
    // Two branches on an int walk: both exact paths agree, a disabled or unknown branch is refused.
    let walk = system_from_text(WALK);
    let choices: Vec<(Vec<Rational>, usize)> = vec![(vec![], 0), (vec![], 0), (vec![], 1)];
    let trace = Trace::simulate(&walk, vec![rational_from_i64(9)], choices.clone()).unwrap();
    assert_eq!(trace.last(), &[rational_from_i64(9)]);
    match validate_by_enclosures(&walk, &[rational_from_i64(9)], &choices, &pred("x <= 8")) {
        Ok(Validation::Validated { run, .. }) => assert_points(&run, &trace),
        other => panic!("{other:?}"),
    }
    // A branch the system does not have is a malformed run on either path (never an index panic).
    for result in [
        validate_by_enclosures(&walk, &[rational_from_i64(9)], &[(vec![], 7)], &pred("x <= 8")),
        validate_violation(&walk, &[rational_from_i64(9)], &[(vec![], 7)], &pred("x <= 8")),
    ] {
        assert!(matches!(result, Err(NotValidated::Replay(ReplayError::Shape(_)))), "{result:?}");
    }

    let scale = system_from_text(SCALE);
    let choices: Vec<(Vec<Rational>, usize)> = vec![(vec![], 0), (vec![], 1), (vec![], 0)];
    if let Ok(trace) = Trace::simulate(&scale, vec![q("0.3")], choices.clone()) {
        let violated = pred(&format!("x < {}", trace.last()[0]));
        match validate_by_enclosures(&scale, &[q("0.3")], &choices, &violated) {
            Ok(Validation::Validated { run, .. }) => assert_points(&run, &trace),
            other => panic!("{other:?}"),
        }
    }
}

const GUARDED: &str = r#"
init = "0 <= x <= 1"
[system]
name = "guarded"
[state]
x = { type = "real" }
[networks.id]
layers = [{ weights = [[1.0]], bias = [0.0], activation = "identity" }]
[controller]
network = "id"
inputs = ["x"]
actions = ["a"]
[[branch]]
name = "low"
guard = "x <= 0.5"
update = { x = "x + sin(a)" }
[[branch]]
name = "high"
guard = "x > 0.5"
update = { x = "x - 0.1" }
"#;

#[test]
fn guards_on_enclosures_enable_and_disable_branches() {
    let sys = system_from_text(GUARDED);
    let (low, high) = ((vec![], 0), (vec![], 1));
    // 0.3 + sin(0.3) = 0.59552020666133957510532074568502737...; then 0.1 less.
    match validate_violation(&sys, &[q("0.3")], &[low.clone(), high.clone()], &pred("x <= 0.4955202066")) {
        Ok(Validation::Validated { precision_bits: 256, run }) => assert_eq!(run.states.len(), 3),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        validate_violation(&sys, &[q("0.3")], &[low.clone(), high.clone()], &pred("x <= 0.4955202067")),
        Err(NotValidated::Holds { precision_bits: Some(256) })
    );
    // "high" at 0.3, and "low" after the first step (0.5955 > 0.5), are disabled: no run.
    for (choices, at) in [(vec![high.clone()], 0), (vec![low.clone(), low], 1)] {
        match validate_violation(&sys, &[q("0.3")], &choices, &pred("x <= 0")) {
            Err(NotValidated::Replay(ReplayError::Step { step, error: SimError::BranchDisabled { .. } })) => {
                assert_eq!(step, at)
            }
            other => panic!("{other:?}"),
        }
    }
}

/// The controllers' actions over enclosures, which validated replay and the validated runs of
/// sampled-data systems (`trestle_bridge::flow_run`) share: an argmax decided on the whole
/// enclosure (ties to the lowest index), undecided where the outputs' enclosures overlap.
#[test]
fn argmax_actions_are_decided_on_the_whole_enclosure() {
    use trestle_core::validate::{StepFailure, controller_actions, zero_memory};
    use trestle_ir::Arith;
    let sys = system_from_text(
        r#"
init = "-1 <= x <= 1"
[system]
name = "argmax-sign"
[state]
x = { type = "real" }
[networks.sign]
layers = [{ weights = [[1.0], [-1.0]], bias = [0.0, 0.0], activation = "identity" }]
[controller]
network = "sign"
inputs = ["x"]
argmax = "a"
labels = ["up", "down"]
[step]
x = "x"
"#,
    );
    let actions = |x: Enclosed<256>| {
        let mut memory = zero_memory::<256>(&sys);
        controller_actions(&sys, &[x], &[], &mut memory)
    };
    let winner = |x: &str| match actions(Enclosed::Exact(q(x))) {
        Ok(a) => a[0].exact().cloned(),
        Err(e) => panic!("x = {x}: {e}"),
    };
    assert_eq!(winner("1/2"), Some(rational_from_i64(0)));
    assert_eq!(winner("-1/2"), Some(rational_from_i64(1)));
    assert_eq!(winner("0"), Some(rational_from_i64(0)), "a tie goes to the lowest index");
    let straddling = Enclosed::Exact(q("-1/4")).join(&Enclosed::Exact(q("1/4")));
    assert!(matches!(actions(straddling), Err(StepFailure::Undecided(_))));
}
