//! The recurrent controllers lifted into memoryless ones (`trestle_ir::lift`): the same runs in
//! exact arithmetic, and `G p` proven by invariant synthesis over the lifted state where no box
//! is inductive (configs/systems/pi-integral.toml).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use trestle_core::Trace;
use trestle_core::{Budget, Verdict};
use trestle_ir::lift::lift_hidden_state;
use trestle_ir::num::rational_from_f64;
use trestle_ir::parse::{SimpleScope, parse_ltl};
use trestle_ir::system::NondetDomain;
use trestle_ir::{Env, Rational, System};
use trestle_ltl::{LtlOptions, Method, bpt, check_ltl};
use trestle_testkit::{load, repo};

/// A random run's start (a point of Init's first box on a grid of eighths) and choices.
fn random_run(sys: &System, steps: usize, rng: &mut StdRng) -> (Vec<Rational>, Vec<(Vec<Rational>, usize)>) {
    let init = &sys.init.to_box_union(sys.state.len(), 64).unwrap()[0];
    let start = (0..sys.state.len())
        .map(|i| {
            let (lo, hi) = (init.lo[i].clone().unwrap(), init.hi[i].clone().unwrap());
            let k = Rational::from_integer(rng.random_range(0..=8).into()) / Rational::from_integer(8.into());
            lo.clone() + (hi - lo) * k
        })
        .collect();
    let choices = (0..steps)
        .map(|_| {
            let nondet = sys
                .nondet
                .iter()
                .map(|v| match &v.domain {
                    NondetDomain::Interval(lo, hi) => match rng.random_range(0..3) {
                        0 => lo.clone(),
                        1 => hi.clone(),
                        _ => lo.clone() + (hi.clone() - lo.clone()) * rational_from_f64(rng.random_range(0.0..1.0)),
                    },
                    NondetDomain::Set(s) => s[rng.random_range(0..s.len())].clone(),
                })
                .collect();
            (nondet, 0)
        })
        .collect();
    (start, choices)
}

/// Every shipped recurrent system and its lift run alike, exactly: the same states, the lifted
/// hidden variables equal to the controllers' kept hidden units, the same actions.
#[test]
fn lifted_systems_have_the_original_runs() {
    let mut rng = StdRng::seed_from_u64(0x11f7ed);
    for file in ["rnn-figure1.toml", "pi-tuned.toml", "pi-oscillating.toml", "pi-integral.toml", "spread-2.toml"] {
        let sys = load(&repo().join("configs/systems").join(file), &[]);
        let lifted = lift_hidden_state(&sys).unwrap();
        assert!(lifted.system.networks.iter().all(|n| !n.network.is_recurrent()), "{file}");
        assert!(!lifted.hidden.is_empty(), "{file}");
        for _ in 0..20 {
            let (start, choices) = random_run(&sys, 12, &mut rng);
            let original = Trace::simulate(&sys, start.clone(), choices.clone()).unwrap();
            let mut lifted_start = start;
            lifted_start.resize(lifted.system.state.len(), Rational::from_integer(0.into()));
            let run = Trace::simulate(&lifted.system, lifted_start, choices).unwrap();
            assert_eq!(run.len(), original.len(), "{file}");
            for t in 0..=original.len() {
                assert_eq!(run.states[t][..sys.state.len()], original.states[t][..], "{file} step {t}");
                for h in &lifted.hidden {
                    assert_eq!(run.states[t][h.state], original.hidden[t][h.controller][h.layer][h.unit], "{file} {t}");
                }
            }
            for (a, b) in run.steps.iter().zip(&original.steps) {
                assert_eq!(a.actions[..sys.actions.len()], b.actions[..], "{file}");
            }
        }
    }
}

fn check(sys: &System, text: &str, method: Method) -> trestle_ltl::LtlResult {
    let phi = parse_ltl(text, &SimpleScope::with_state(&["x"])).unwrap();
    check_ltl(sys, &phi, &LtlOptions { method, ..LtlOptions::default() }, &Budget::unlimited()).unwrap()
}

/// The integral without leak: no box is inductive (the box methods give up), a union of boxes
/// over (x, relu(I), relu(-I)) is, and the bridge engine proves it. Simulated runs agree; a
/// predicate Init already leaves is refuted with a replayed run.
#[test]
fn pi_integral_always_by_synthesis() {
    let sys = load(&repo().join("configs/systems/pi-integral.toml"), &[]);
    let init = &sys.init.to_box_union(1, 4).unwrap()[0];
    assert_eq!(bpt::invariant(&sys, init, 160, &Budget::unlimited()).unwrap(), None, "a box would be inductive");
    for (text, bound) in [("G (x <= 0.5 and x >= -0.5)", 0.5), ("G (x <= 0.3 and x >= -0.3)", 0.3)] {
        for method in [Method::Auto, Method::Invariant] {
            let r = check(&sys, text, method);
            assert!(r.verdict.is_proven(), "{text} {method:?}: {:?}", r.verdict);
            assert_eq!(r.method, "synthesis");
            assert!(r.stats.invariant_boxes > 0 && r.stats.invariant_dims == 3, "{:?}", r.stats);
        }
        // No simulated run contradicts the proof.
        let mut rng = StdRng::seed_from_u64(7);
        for _ in 0..200 {
            let (start, choices) = random_run(&sys, 60, &mut rng);
            let run = Trace::simulate(&sys, start, choices).unwrap();
            let worst = run.states.iter().map(|s| trestle_ir::num::to_f64_nearest(&s[0]).abs()).fold(0.0, f64::max);
            assert!(worst <= bound, "{text}: a run reaches |x| = {worst}");
        }
    }
    // Refutations, replayed in the original system: Init itself leaves |x| <= 0.2; with four
    // times the disturbance a run leaves |x| <= 1/2 after some steps.
    let wide = load(&repo().join("configs/systems/pi-integral.toml"), &["nondet.w.interval=[-0.25, 0.25]".into()]);
    for (sys, bound, at_init) in [(&sys, "0.2", true), (&wide, "0.5", false)] {
        let atom = format!("x <= {bound} and x >= -{bound}");
        let r = check(sys, &format!("G ({atom})"), Method::Invariant);
        assert_eq!(r.method, "synthesis");
        let Verdict::Refuted { trace, .. } = &r.verdict else { panic!("{:?}", r.verdict) };
        trace.replay(sys).unwrap();
        assert_eq!(trace.is_empty(), at_init, "{} steps", trace.len());
        let p = trestle_ltl::state_pred(&parse_ltl(&atom, &SimpleScope::with_state(&["x"])).unwrap()).unwrap();
        assert!(!p.eval_exact(&Env::new(trace.states.last().unwrap(), &[], &[])).unwrap());
    }
}
