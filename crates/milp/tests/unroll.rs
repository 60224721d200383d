//! The unrolling library against the exact semantics: optima of k-step MILPs replayed exactly
//! through `trestle_ir::sim` (a feed-forward argmax policy with guarded commands and free inputs,
//! the recurrent network of Figure 1, a recurrent controller in closed loop), compared with the
//! bounds crate's boxes and with known maxima, and never below a simulated run (soundness).

use good_lp::Expression;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use trestle_bounds::{InputBox, Method, bound_unrolled};
use trestle_config::{Overrides, load_system, load_system_from_str};
use trestle_ir::num::{parse_rational, rational_from_i64, to_f64_nearest};
use trestle_ir::sim;
use trestle_ir::system::{NondetDomain, System, VarKind};
use trestle_ir::{RBox, Rational};
use trestle_milp::{
    MilpError, NondetChoice, Sense, SolveOptions, SolveStatus, StepOptions, Strictness, UnrollOptions, Unrolled, unroll,
};
use trestle_testkit::repo;

/// How far the solver's values may be from the exact replay of its own run: HiGHS's feasibility
/// tolerance (1e-6) carried through a few steps with coefficients of order one.
const REPLAY_TOLERANCE: f64 = 1e-5;

/// Slack between a MILP bound and a simulated value: HiGHS's tolerances (1e-6) and the nearest-f64
/// rounding of the system's decimal constants.
const BOUND_SLACK: f64 = 1e-6;

/// A feed-forward argmax policy over a real `x` and an integer mode `m`, three guarded commands
/// (two share the label "left"; their guards overlap at m = 1), an interval input `d` and a set
/// input `s`, both read linearly.
const POLICY: &str = r#"
init = "false"
[state]
x = { type = "real" }
m = { type = "int", domain = [0, 2] }
[nondet]
d = { interval = [-0.1, 0.2] }
s = { values = [0, 1] }
[networks.policy]
layers = [
  { weights = [[1.0, 0.5], [-1.0, 0.25], [0.5, -1.0]], bias = [0.1, 0.2, -0.1], activation = "relu" },
  { weights = [[1.0, -1.0, 0.5], [-0.5, 1.0, 1.0]], bias = [0.0, 0.1], activation = "identity" },
]
[controller]
network = "policy"
inputs = ["x", "m"]
argmax = "a"
labels = ["left", "right"]
[[command]]
label = "left"
guard = "m <= 1"
update = { x = "x - 0.5 + d", m = "m + s" }
[[command]]
label = "left"
guard = "m >= 1"
update = { x = "x + 1", m = "0" }
[[command]]
label = "right"
update = { x = "0.5*x + 0.75 + d", m = "max(m - s, 0)" }
"#;

/// A recurrent controller reading the state: x' = x + 0.5 u + d.
const MEMORY: &str = r#"
init = "false"
[state]
x = { type = "real" }
[nondet]
d = { interval = [-0.1, 0.1] }
[networks.mem]
layers = [
  { type = "dense", weights = [[1.0], [-1.0]], bias = [0.0, 0.5], activation = "relu" },
  { type = "recurrent", weights = [[1.0, -0.5]], recurrent = [[0.5]], bias = [0.1], activation = "relu" },
  { type = "dense", weights = [[-1.0]], bias = [0.3], activation = "identity" },
]
[controller]
network = "mem"
inputs = ["x"]
actions = ["u"]
[step]
x = "x + 0.5*u + d"
"#;

fn inline(text: &str) -> System {
    load_system_from_str(text, Path::new("inline.toml"), &Overrides::default()).unwrap()
}

fn figure1(sets: &[&str]) -> System {
    let overrides = Overrides::parse(&sets.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    load_system(&repo().join("configs/systems/rnn-figure1.toml"), &overrides).unwrap()
}

fn rbox(ends: &[(&str, &str)]) -> RBox {
    let q = |s: &str| Some(parse_rational(s).unwrap());
    RBox { lo: ends.iter().map(|(l, _)| q(l)).collect(), hi: ends.iter().map(|(_, h)| q(h)).collect() }
}

/// Optimises `objective`; returns HiGHS's bound, its objective value and its solution.
fn optimise(u: &Unrolled, sense: Sense, objective: &Expression) -> (f64, f64, Vec<f64>) {
    let out = u.model.solve(sense, objective, &SolveOptions::default()).unwrap();
    assert_eq!(out.status, SolveStatus::Optimal, "{out:?}");
    (out.bound.unwrap(), out.primal.unwrap(), out.values.unwrap())
}

/// Replays the solution's run exactly and checks that every state of it is the solver's state
/// within [`REPLAY_TOLERANCE`]; returns the exact states.
fn replay_matches(sys: &System, u: &Unrolled, values: &[f64], context: &str) -> Vec<Vec<Rational>> {
    let run = u.run_at(sys, values);
    let trace = u.replay(sys, values).unwrap_or_else(|e| panic!("{context}: the run does not replay: {e}"));
    trace.replay(sys).unwrap_or_else(|e| panic!("{context}: the rebuilt run does not replay: {e}"));
    let states = trace.states;
    for (t, (exact, solver)) in states.iter().zip(&run.states).enumerate() {
        for (j, (q, x)) in exact.iter().zip(solver).enumerate() {
            let v = to_f64_nearest(q);
            assert!((v - x).abs() <= REPLAY_TOLERANCE, "{context}: state {t} variable {j}: exact {v}, MILP {x}");
        }
    }
    states
}

#[test]
fn feed_forward_optima_replay_exactly() {
    let sys = inline(POLICY);
    let start = rbox(&[("-2", "2"), ("0", "2")]);
    // Argmax choices that win by a margin, so that HiGHS's tolerance cannot tip an optimum on a
    // tie to the index the lowest-index rule would not take (the closure, which admits the ties, is
    // checked for soundness below). The guards read only the integer mode, where closures are exact.
    let step = StepOptions { strictness: Strictness::Margin(1e-4), ..StepOptions::default() };
    let opts = UnrollOptions { step, nondet: Vec::new(), tighten: false, ..UnrollOptions::default() };
    let mut branches_used = std::collections::BTreeSet::new();
    for k in 1..=3 {
        let u = unroll(&sys, &start, k, &opts).unwrap().expect("runs exist");
        assert_eq!((u.states.len(), u.steps.len()), (k + 1, k));
        assert!(u.model.num_binaries() > 0);
        for j in 0..2 {
            for sense in [Sense::Maximise, Sense::Minimise] {
                let context = format!("k = {k}, variable {j}, {sense:?}");
                let objective = u.states[k][j].expr.clone();
                let (bound, primal, values) = optimise(&u, sense, &objective);
                assert!((bound - primal).abs() <= 1e-6, "{context}: bound {bound}, primal {primal}");
                let states = replay_matches(&sys, &u, &values, &context);
                let exact = to_f64_nearest(&states[k][j]);
                assert!((exact - primal).abs() <= REPLAY_TOLERANCE, "{context}: exact {exact}, MILP {primal}");
                let iv = u.states[k][j].iv;
                assert!(
                    iv.lo - BOUND_SLACK <= primal && primal <= iv.hi + BOUND_SLACK,
                    "{context}: {primal} outside {iv:?}"
                );
                branches_used.extend(u.run_at(&sys, &values).branches);
            }
        }
    }
    assert_eq!(branches_used.len(), 3, "the optima use every command: {branches_used:?}");
}

/// Figure 1: bound propagation says `z_t <= t`-ish, the truth is `z_t = 0`. The MILP's maximum is
/// the truth, its maximiser replays to exactly 0, and it lies inside the bounds crate's box (which
/// is looser). With `x1` in `[-1, 1]` instead the maximum is `2 t` (x1 = -1, x2 = 1 every step),
/// attained and replayed exactly.
#[test]
fn figure1_rnn_maxima_are_exact_and_inside_the_bounds_box() {
    let sys = figure1(&[]);
    let net = &sys.networks[0].network;
    let start = rbox(&[("0", "0")]);
    for t in 1..=4 {
        let u = unroll(&sys, &start, t, &UnrollOptions::default()).unwrap().unwrap();
        let (bound, primal, values) = optimise(&u, Sense::Maximise, &u.states[t][0].expr.clone());
        assert!(bound.abs() <= BOUND_SLACK && primal.abs() <= BOUND_SLACK, "t = {t}: max z = {bound} ({primal})");
        let states = replay_matches(&sys, &u, &values, &format!("figure 1, t = {t}"));
        assert_eq!(states[t][0], rational_from_i64(0));
        let steps = vec![InputBox::new(vec![0.0; 2], vec![1.0; 2]); t];
        let h0 = InputBox::new(vec![0.0], vec![0.0]);
        let (b, _) = bound_unrolled(net, &steps, std::slice::from_ref(&h0), &Method::Crown).unwrap();
        assert!(b.lo[0] <= primal + BOUND_SLACK && bound <= b.hi[0] + BOUND_SLACK, "t = {t}: box {b:?}");
        assert!(b.hi[0] >= 0.25, "t = {t}: the bounds crate is looser than the truth here ({})", b.hi[0]);
    }
    let sys = figure1(&["nondet.x1.interval=[-1, 1]"]);
    for t in 1..=4 {
        let u = unroll(&sys, &start, t, &UnrollOptions::default()).unwrap().unwrap();
        let (bound, primal, values) = optimise(&u, Sense::Maximise, &u.states[t][0].expr.clone());
        let expected = 2.0 * t as f64;
        assert!((bound - expected).abs() <= BOUND_SLACK && (primal - expected).abs() <= BOUND_SLACK, "t = {t}");
        // The maximiser's inputs are HiGHS's floats near the vertex (-1, 1): its exact value is
        // at most the truth and within the tolerance of it.
        let states = replay_matches(&sys, &u, &values, &format!("figure 1 with x1 in [-1, 1], t = {t}"));
        assert!(states[t][0] <= rational_from_i64(2 * t as i64), "t = {t}: above the truth");
    }
}

#[test]
fn recurrent_closed_loop_optima_replay_exactly() {
    let sys = inline(MEMORY);
    let start = rbox(&[("-1", "1")]);
    for k in 1..=3 {
        let u = unroll(&sys, &start, k, &UnrollOptions::default()).unwrap().unwrap();
        for sense in [Sense::Maximise, Sense::Minimise] {
            let context = format!("closed loop, k = {k}, {sense:?}");
            let (_, primal, values) = optimise(&u, sense, &u.states[k][0].expr.clone());
            let states = replay_matches(&sys, &u, &values, &context);
            assert!((to_f64_nearest(&states[k][0]) - primal).abs() <= REPLAY_TOLERANCE, "{context}");
        }
    }
}

/// Fixed inputs per step are honoured: with `d = 0.2, s = 1` at both steps the optimum is that of
/// the runs with those inputs, and the replayed run has them.
#[test]
fn fixed_inputs_are_the_inputs_of_the_run() {
    let sys = inline(POLICY);
    let start = rbox(&[("-2", "2"), ("0", "2")]);
    let fixed = NondetChoice::Fixed(vec![parse_rational("0.2").unwrap(), rational_from_i64(1)]);
    let step = StepOptions { strictness: Strictness::Margin(1e-4), ..StepOptions::default() };
    let opts = UnrollOptions { step, nondet: vec![fixed.clone(), fixed], tighten: false, ..UnrollOptions::default() };
    let u = unroll(&sys, &start, 2, &opts).unwrap().unwrap();
    let (_, _, values) = optimise(&u, Sense::Maximise, &u.states[2][0].expr.clone());
    let run = u.run_at(&sys, &values);
    assert!(run.nondet.iter().all(|n| n == &vec![parse_rational("0.2").unwrap(), rational_from_i64(1)]), "{run:?}");
    replay_matches(&sys, &u, &values, "fixed inputs");
    // A product of a free interval input with an action is not piecewise linear.
    let maze = trestle_testkit::example("maze-nondet.toml");
    let start = rbox(&[("0.3", "0.4"), ("0.6", "0.7")]);
    let err = unroll(&maze, &start, 1, &UnrollOptions::default()).unwrap_err();
    assert!(matches!(err, MilpError::NotPiecewiseLinear { .. }), "{err}");
    let vertex = NondetChoice::Fixed(vec![rational_from_i64(1)]);
    assert!(unroll(&maze, &start, 1, &UnrollOptions { nondet: vec![vertex], ..UnrollOptions::default() }).is_ok());
}

/// A value of the input's domain: an end of an interval half the time, a point of a grid of it
/// otherwise; any element of a set.
fn random_input(rng: &mut ChaCha8Rng, domain: &NondetDomain) -> Rational {
    match domain {
        NondetDomain::Interval(lo, hi) => match rng.random_range(0..4) {
            0 => lo.clone(),
            1 => hi.clone(),
            _ => lo + (hi - lo) * rational_from_i64(rng.random_range(0..=64i64)) / rational_from_i64(64),
        },
        NondetDomain::Set(values) => values[rng.random_range(0..values.len())].clone(),
    }
}

/// The MILP's maxima and minima of every state variable after 1, 2 and 3 steps (HiGHS's bounds),
/// with every argmax tie admitted (the closure), bound every run simulated exactly from random
/// states of the start box with random inputs and random enabled branches; so do the enclosures
/// of the state values, with and without LP tightening.
#[test]
fn three_step_optima_are_never_beaten_by_a_simulated_run() {
    let cases = [
        ("policy", inline(POLICY), rbox(&[("-2", "2"), ("0", "2")])),
        ("closed loop", inline(MEMORY), rbox(&[("-1", "1")])),
        ("figure 1", figure1(&["nondet.x1.interval=[-1, 1]"]), rbox(&[("0", "0")])),
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    for ((name, sys, start), tighten) in cases.iter().flat_map(|c| [(c, false), (c, true)]) {
        // Tightened, the enclosures of steps 1 and 2 are the LP relaxation's bounds (checked too).
        let u = unroll(sys, start, 3, &UnrollOptions { tighten, ..UnrollOptions::default() }).unwrap().unwrap();
        // extremes[t][j] = (min, max) of variable j after t steps.
        let extremes: Vec<Vec<(f64, f64)>> = (1..=3)
            .map(|t| {
                (0..sys.state.len())
                    .map(|j| {
                        let e = u.states[t][j].expr.clone();
                        (optimise(&u, Sense::Minimise, &e).0, optimise(&u, Sense::Maximise, &e).0)
                    })
                    .collect()
            })
            .collect();
        let mut steps = 0;
        for _ in 0..150 {
            let mut state: Vec<Rational> = sys
                .state
                .iter()
                .enumerate()
                .map(|(j, v)| {
                    let (lo, hi) = (start.lo[j].clone().unwrap(), start.hi[j].clone().unwrap());
                    let q = &lo + (&hi - &lo) * rational_from_i64(rng.random_range(0..=32i64)) / rational_from_i64(32);
                    if v.kind == VarKind::Real { q } else { q.round() }
                })
                .collect();
            let mut memory = sim::initial_memory::<Rational>(sys);
            for (t, after) in extremes.iter().enumerate() {
                let nondet: Vec<Rational> = sys.nondet.iter().map(|v| random_input(&mut rng, &v.domain)).collect();
                let successors = sim::successors(sys, &state, &mut memory, &nondet).unwrap();
                if successors.next.is_empty() {
                    break;
                }
                state = successors.next[rng.random_range(0..successors.next.len())].1.clone();
                for (j, q) in state.iter().enumerate() {
                    let (lo, hi) = after[j];
                    let x = to_f64_nearest(q);
                    assert!(
                        lo - BOUND_SLACK <= x && x <= hi + BOUND_SLACK,
                        "{name} (tighten {tighten}): step {} variable {j}: {x} outside [{lo}, {hi}]",
                        t + 1
                    );
                    let iv = u.states[t + 1][j].iv;
                    assert!(
                        iv.lo <= x && x <= iv.hi,
                        "{name} (tighten {tighten}): step {} variable {j}: {x} outside its enclosure {iv:?}",
                        t + 1
                    );
                }
                steps += 1;
            }
        }
        assert!(steps > 300, "{name}: {steps} simulated steps");
    }
}
