//! Systems where a run from Init leaves Safe: the verdict is unsafe, with a run replayed exactly
//! (every state a state of the system). And issue 9's regressions: no run starts from a
//! non-integer value of an `int` variable, and a run that needs hundreds of steps to leave Safe
//! is followed to the end when the step budget allows.

mod common;
use common::*;
use trestle_config::{Overrides, load_system_from_str};
use trestle_core::Budget;
use trestle_ir::num::{is_integer, parse_rational};
use trestle_ir::{Env, Rational, System, sim};
use trestle_synth::{SynthConfig, SynthReport, synthesize};

fn load(text: &str) -> System {
    load_system_from_str(text, &repo().join("inline.toml"), &Overrides::default()).unwrap()
}

fn q(text: &str) -> Rational {
    parse_rational(text).unwrap()
}

/// The maze with a ReLU controller that pushes right: `a0 = relu(x) + 0.2`, `a1 = 0`.
const PUSHED_RIGHT: &str = r#"
init = "0.3 <= x <= 0.4 and 0.6 <= y <= 0.7"
safe = "0.22 <= x <= 0.98 and 0.54 <= y <= 0.98"

[system]
name = "pushed-right"

[state]
x = { type = "real" }
y = { type = "real" }

[networks.push]
layers = [
  { weights = [[1.0, 0.0], [0.0, 1.0]], bias = [0.0, 0.0] },
  { weights = [[1.0, 0.0], [0.0, 0.0]], bias = [0.2, 0.0], activation = "identity" },
]

[controller]
network = "push"
inputs = ["x", "y"]
actions = ["a0", "a1"]

[step]
x = "x + 0.1*a0"
y = "y + 0.1*a1"
"#;

/// A controller pulling x to 0.5 against a disturbance `k*c`, `c in [-1, 1]`: the run stays in
/// [0, 1] when `k = 0.2` (fixed points 0.1 .. 0.9), and can leave when `k = 0.3`.
fn disturbed(k: &str) -> String {
    format!(
        r#"
init = "0.4 <= x <= 0.6 and 0.4 <= y <= 0.6"
safe = "0 <= x <= 1 and 0 <= y <= 1"

[system]
name = "disturbed-{k}"

[state]
x = {{ type = "real" }}
y = {{ type = "real" }}

[nondet]
c = {{ interval = [-1, 1] }}

[networks.pull]
layers = [{{ weights = [[-0.5, 0.0], [0.0, -0.5]], bias = [0.25, 0.25], activation = "identity" }}]

[controller]
network = "pull"
inputs = ["x", "y"]
actions = ["a0", "a1"]

[step]
x = "x + a0 + {k}*c"
y = "y + a1"
"#
    )
}

/// Replays the reported run independently, step by step, and checks it is a refutation: the
/// start satisfies Init, every step is the IR's step with the recorded choices, and only the last
/// state is outside Safe.
fn assert_replayed_refutation(sys: &System, r: &SynthReport) {
    assert_eq!(r.word(), "unsafe", "{}", r.reason);
    let t = r.trajectory.as_ref().expect("a trajectory");
    let e = t.exact.as_ref().expect("replayed exactly");
    assert!(t.distance > 0.0);
    let holds = |p: &trestle_ir::Pred, s: &[Rational]| p.eval_exact(&Env::new(s, &[], &[])).unwrap();
    let safe = sys.safe.as_ref().unwrap();
    assert!(holds(&sys.init, &e.states[0]));
    let mut memory = sim::initial_memory::<Rational>(sys);
    for k in 0..e.actions.len() {
        sim::check_state(sys, &e.states[k]).unwrap();
        assert!(holds(safe, &e.states[k]), "step {k} is still inside Safe");
        let step = sim::step::<Rational>(sys, &e.states[k], &mut memory, &e.nondet[k], e.branches[k]).unwrap();
        assert_eq!(step.actions, e.actions[k]);
        assert_eq!(step.next, e.states[k + 1]);
    }
    assert!(!holds(safe, e.states.last().unwrap()), "the last state leaves Safe");
}

#[test]
fn a_controller_that_pushes_right_is_unsafe_with_a_replayed_run() {
    let sys = load(PUSHED_RIGHT);
    let r = synthesize(&sys, &SynthConfig::default(), &Budget::unlimited(), &quiet).unwrap();
    assert_replayed_refutation(&sys, &r);
    // x grows by 10% + 0.02 per step from at most 0.4: about nine steps.
    let steps = r.trajectory.as_ref().unwrap().exact.as_ref().unwrap().actions.len();
    assert!((6..=12).contains(&steps), "{steps} steps");
    assert!(r.certificate().is_none() && r.invariant.is_empty());
}

#[test]
fn the_environment_choices_decide_safety() {
    let safe = load(&disturbed("0.2"));
    let r = synthesize(&safe, &SynthConfig::default(), &Budget::unlimited(), &quiet).unwrap();
    assert_eq!(r.word(), "safe", "{}", r.reason);
    let unsafe_ = load(&disturbed("0.3"));
    let r = synthesize(&unsafe_, &SynthConfig::default(), &Budget::unlimited(), &quiet).unwrap();
    assert_replayed_refutation(&unsafe_, &r);
    // The run needs the disturbance at its extreme, c = 1, every step.
    let e = r.trajectory.as_ref().unwrap().exact.as_ref().unwrap();
    assert!(e.nondet.iter().all(|c| c[0] == parse_rational("1").unwrap()));
}

#[test]
fn a_state_of_init_outside_safe_is_a_run_of_length_zero() {
    let sys = load(&PUSHED_RIGHT.replace("0.3 <= x <= 0.4", "0.1 <= x <= 0.4"));
    let r = synthesize(&sys, &SynthConfig::default(), &Budget::unlimited(), &quiet).unwrap();
    assert_replayed_refutation(&sys, &r);
    assert_eq!(r.trajectory.unwrap().states.len(), 1);
}

#[test]
fn a_time_limit_gives_unknown_never_a_verdict() {
    let sys = load(&disturbed("0.2"));
    let r = synthesize(&sys, &SynthConfig::default(), &Budget::new(Some(std::time::Duration::ZERO)), &quiet).unwrap();
    assert_eq!(r.word(), "unknown");
    assert!(r.reason.contains("time limit"), "{}", r.reason);
}

#[test]
fn inputs_synthesis_cannot_handle_are_errors() {
    let no_safe = load(&PUSHED_RIGHT.replace("safe = \"0.22 <= x <= 0.98 and 0.54 <= y <= 0.98\"\n", ""));
    assert!(synthesize(&no_safe, &SynthConfig::default(), &Budget::unlimited(), &quiet).is_err());
    let unbounded = load(&PUSHED_RIGHT.replace("0.22 <= x <= 0.98 and ", ""));
    let e = synthesize(&unbounded, &SynthConfig::default(), &Budget::unlimited(), &quiet).unwrap_err();
    assert!(e.to_string().contains("unbounded"), "{e}");
    let e = synthesize(
        &load(PUSHED_RIGHT),
        &SynthConfig { threads: 0, ..Default::default() },
        &Budget::unlimited(),
        &quiet,
    )
    .unwrap_err();
    assert!(e.to_string().contains("threads"), "{e}");
}

/// Three state variables, each pulled toward 0.5: any dimension works.
#[test]
fn three_dimensions() {
    let text = r#"
init = "0.45 <= x <= 0.55 and 0.45 <= y <= 0.55 and 0.4 <= z <= 0.6"
safe = "0 <= x <= 1 and 0 <= y <= 1 and 0 <= z <= 1"

[system]
name = "cube"

[state]
x = { type = "real" }
y = { type = "real" }
z = { type = "real" }

[nondet]
c = { interval = [0.5, 1] }

[networks.pull]
layers = [
  { weights = [[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, -1.0]], bias = [-0.5, 0.5, -0.5, 0.5, -0.5, 0.5] },
  { weights = [[-1.0, 1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, -1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, -1.0, 1.0]], bias = [0.0, 0.0, 0.0], activation = "identity" },
]

[controller]
network = "pull"
inputs = ["x", "y", "z"]
actions = ["a0", "a1", "a2"]

[step]
x = "x + 0.5*c*a0"
y = "y + 0.5*c*a1 + 0.05*(z - 0.5)"
z = "z + 0.5*c*a2"
"#;
    let sys = load(text);
    for forward in [false, true] {
        let r = synthesize(&sys, &SynthConfig { forward, ..Default::default() }, &Budget::unlimited(), &quiet).unwrap();
        assert_eq!(r.word(), "safe", "forward {forward}: {}", r.reason);
        assert_eq!(r.stats.z3_queries, 0, "{:?}", r.stats);
    }
}

#[test]
fn int_bug_synthesis_reports_no_run_from_a_non_integer_state() {
    let sys = system_from_text(INT_BUG);
    let r = synthesize(&sys, &SynthConfig::default(), &Budget::unlimited(), &quiet).unwrap();
    assert_ne!(r.word(), "unsafe", "{}: {:?}", r.reason, r.trajectory);
    if let Some(t) = &r.trajectory {
        assert!(t.states.iter().all(|s| s.iter().all(|x| x.fract() == 0.0)), "{:?}", t.states);
    }
}

/// Truth: the reproducer with `else x`: x in {0, 1} is a fixed point, so [0, 1] is an inductive
/// invariant; the cells between the integers hold no state and are kept vacuously.
#[test]
fn int_bug_without_the_controller_is_proven_safe_by_synthesis() {
    let sys = system_from_text(&INT_BUG.replace("then 100 else a", "then 100 else x"));
    let r = synthesize(&sys, &SynthConfig::default(), &Budget::unlimited(), &quiet).unwrap();
    assert_eq!(r.word(), "safe", "{}", r.reason);
}

/// The network's output is the constant 1; c in [-1, 1] is chosen every step. Truth: x stays at
/// least 0 (the max), y never moves and stays 0.05 inside its band, and x grows by at most 1/1000
/// per step, so leaving Safe (x > 1) from x at most 0.07 takes at least 931 steps; with c = 1
/// every step, x = 0.07 reaches 1 + 1/1000 at step 931. While x drifts, y's face is the nearer one, so the
/// distance outside Safe does not change for 880 steps.
const SLOW_DRIFT: &str = r#"
init = "0.06 <= x <= 0.07 and 0 <= y <= 0.1"
safe = "-1 <= x <= 1 and -0.05 <= y <= 0.15"
[system]
name = "slow-drift"
[state]
x = { type = "real" }
y = { type = "real" }
[nondet]
c = { interval = [-1, 1] }
[networks.push]
layers = [{ weights = [[0.0, 0.0]], bias = [1.0], activation = "identity" }]
[controller]
network = "push"
inputs = ["x", "y"]
actions = ["a"]
[step]
x = "max(x + c*a/1000, 0)"
y = "y"
"#;

fn drift_config(steps: usize) -> SynthConfig {
    // Few boxes: the fixed point fails fast (every cell's image eventually leaves), then the runs.
    SynthConfig { attack_steps: steps, max_boxes: 400, ..SynthConfig::default() }
}

#[test]
fn a_run_needing_931_steps_is_found_when_the_budget_allows() {
    let sys = system_from_text(SLOW_DRIFT);
    let r = synthesize(&sys, &drift_config(10_000), &Budget::unlimited(), &quiet).unwrap();
    assert_replayed_refutation(&sys, &r);
    let steps = r.trajectory.as_ref().unwrap().exact.as_ref().unwrap().actions.len();
    assert!(steps >= 931, "{steps} steps");
    let e = r.trajectory.as_ref().unwrap().exact.as_ref().unwrap();
    assert!(e.nondet.iter().all(|c| c[0] == q("1")), "the drift needs c = 1 every step");
    assert!(e.states.iter().all(|s| is_integer(&(&s[0] * q("1000") - &e.states[0][0] * q("1000")))));
}

#[test]
fn no_run_leaves_within_930_steps_of_the_slow_drift() {
    let sys = system_from_text(SLOW_DRIFT);
    let r = synthesize(&sys, &drift_config(930), &Budget::unlimited(), &quiet).unwrap();
    assert_eq!(r.word(), "unknown", "{}", r.reason);
}
