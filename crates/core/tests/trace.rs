//! The one exact replay: traces built by simulation replay, and every kind of tampering is caught
//! with the step and the variable named.

use trestle_core::{ReplayError, Trace};
use trestle_ir::num::{parse_rational, rational_from_i64};
use trestle_ir::{Rational, System};
use trestle_testkit::{example, load, scratch};

fn q(s: &str) -> Rational {
    parse_rational(s).unwrap()
}

fn maze() -> System {
    example("maze-nondet.toml")
}

fn maze_run() -> Trace {
    let sys = maze();
    Trace::simulate(&sys, vec![q("0.3"), q("0.6")], [(vec![q("0.5")], 0), (vec![q("1")], 0), (vec![q("3/4")], 0)])
        .expect("a run of the example maze from Init")
}

#[test]
fn a_simulated_trace_replays() {
    let sys = maze();
    let t = maze_run();
    assert_eq!(t.len(), 3);
    assert_eq!(t.states.len(), 4);
    t.replay(&sys).unwrap();
}

#[test]
fn a_changed_successor_is_caught_with_its_variable() {
    let sys = maze();
    let mut t = maze_run();
    t.states[2][1] += q("1/1000000000000000000000");
    match t.replay(&sys) {
        Err(ReplayError::State { step: 1, var, .. }) => assert_eq!(var, "y"),
        other => panic!("expected a state mismatch at step 1, got {other:?}"),
    }
}

#[test]
fn a_changed_action_is_caught() {
    let sys = maze();
    let mut t = maze_run();
    t.steps[0].actions[0] = rational_from_i64(7);
    assert!(matches!(t.replay(&sys), Err(ReplayError::Action { step: 0, .. })), "{:?}", t.replay(&sys));
}

#[test]
fn a_choice_outside_the_nondet_domain_is_refused() {
    let sys = maze();
    let mut t = maze_run();
    t.steps[1].nondet[0] = q("1.0000001");
    let err = t.replay(&sys).unwrap_err();
    assert!(matches!(err, ReplayError::Step { step: 1, .. }), "{err}");
    assert!(err.to_string().contains("outside its domain"), "{err}");
}

#[test]
fn malformed_traces_are_shape_errors() {
    let sys = maze();
    let mut t = maze_run();
    t.states.pop();
    assert!(matches!(t.replay(&sys), Err(ReplayError::Shape(_))));
}

const INT_SYSTEM: &str = r#"
init = "0 <= x <= 1"
safe = "0 <= x <= 1"
[state]
x = { type = "int", domain = [0, 1] }
[networks.id]
layers = [
  { weights = [[1.0], [-1.0]], bias = [0.0, 0.0], activation = "relu" },
  { weights = [[1.0, -1.0]], bias = [0.0], activation = "identity" },
]
[controller]
network = "id"
inputs = ["x"]
actions = ["a"]
[step]
x = "a"
"#;

#[test]
fn a_start_outside_the_kind_or_domain_of_a_variable_is_refused() {
    let (_dir, path) = scratch("int.toml", INT_SYSTEM);
    let sys = load(&path, &[]);
    let half = Trace::simulate(&sys, vec![q("1/2")], [(vec![], 0)]);
    assert!(matches!(half, Err(ReplayError::Start(ref m)) if m.contains("x = 0.5")), "{half:?}");
    let two = Trace::simulate(&sys, vec![rational_from_i64(2)], []);
    assert!(matches!(two, Err(ReplayError::Start(_))), "{two:?}");
    // Every integer of the domain is a fixed point: a lasso of one step closes.
    let one = Trace::simulate(&sys, vec![rational_from_i64(1)], [(vec![], 0)]).unwrap().with_loop_back(0);
    one.replay(&sys).unwrap();
}

#[test]
fn a_lasso_that_does_not_close_is_refused() {
    let sys = maze();
    let t = maze_run().with_loop_back(1);
    assert!(matches!(t.replay(&sys), Err(ReplayError::Loop { last: 3, back: 1 })));
}

#[test]
fn the_json_form_names_values_and_keeps_the_exact_ones() {
    let sys = maze();
    let t = maze_run();
    let j = t.to_json(&sys);
    assert_eq!(j.states.len(), 4);
    assert_eq!(j.states_exact[0], vec!["0.3".to_string(), "0.6".to_string()]);
    assert_eq!(j.states[0].keys().collect::<Vec<_>>(), vec!["x", "y"]);
    assert_eq!(j.steps[2].nondet_exact, vec!["0.75".to_string()]);
    assert_eq!(j.steps[0].branch, sys.step.branches[0].name);
    let text = serde_json::to_string(&j).unwrap();
    let back: trestle_core::TraceJson = serde_json::from_str(&text).unwrap();
    assert_eq!(back, j);
    // The exact successor is what the JSON says, re-derived from its exact strings.
    let next: Vec<Rational> = j.states_exact[1].iter().map(|s| q(s)).collect();
    assert_eq!(next, t.states[1]);
}
