//! The flow engine's leaf systems against the damped oscillator's closed-form flow
//! (configs/systems/flow/damped-oscillator.toml): with the action `v = u + d` held, the state
//! relative to the equilibrium `(0.8 v, 0.4 v)` turns by `t` and shrinks by `e^(-t/2)`. On random
//! boxes of the invariant and random points of them (actions by the network, inputs at random),
//! the true successor must satisfy the linear enclosure's claim (`succ - (A x + B u + C w + o)` in
//! the remainder) and lie in the box enclosure. Run with `--nocapture` for the widths by order
//! and sub-steps on the whole invariant box.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use trestle_bounds::Method;
use trestle_bridge::flow::FlowStep;
use trestle_bridge::post::PostEngine;
use trestle_config::{Overrides, load_sampled_system};
use trestle_flow::FlowSettings;
use trestle_ir::FBox;
use trestle_ir::system::System;
use trestle_testkit::repo;

fn damped() -> (System, trestle_ir::plant::SampledPlant) {
    let path = repo().join("configs/systems/flow/damped-oscillator.toml");
    let (sys, plant) = load_sampled_system(&path, &Overrides::default()).unwrap();
    (sys, plant.expect("a [flow] system"))
}

/// The exact successor after 0.5 s (f64 evaluation of the closed form: error a few ulps).
fn closed_form(x: f64, y: f64, u: f64, d: f64) -> [f64; 2] {
    let v = u + d;
    let (ex, ey) = (0.8 * v, 0.4 * v);
    let (c, s, k) = (0.5f64.cos(), 0.5f64.sin(), (-0.25f64).exp());
    let (zx, zy) = (x - ex, y - ey);
    [ex + k * (c * zx + s * zy), ey + k * (-s * zx + c * zy)]
}

#[test]
fn leaf_enclosures_hold_the_closed_form_flow() {
    let (sys, plant) = damped();
    let step = FlowStep::new(&sys, &plant, FlowSettings::default()).unwrap();
    let post = PostEngine::new(&sys, Method::Crown, true).unwrap();
    let net = &sys.networks[0].network;
    let mut rng = ChaCha8Rng::seed_from_u64(40);
    let slack = 1e-12;
    for _ in 0..200 {
        let (cx, cy) = (rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0));
        let w = rng.random_range(1e-3..0.5);
        let p = FBox::new(vec![cx - w, cy - w], vec![cx + w, cy + w]);
        let psi = post.compute(&p).unwrap();
        let e = step.enclose(&p, psi.action_box()).unwrap();
        let l = &e.linear;
        for _ in 0..20 {
            let (x, y) = (rng.random_range(p.lo[0]..=p.hi[0]), rng.random_range(p.lo[1]..=p.hi[1]));
            let d = rng.random_range(-0.02..=0.02);
            let u = net.eval(&[x, y]).unwrap()[0];
            let succ = closed_form(x, y, u, d);
            for (i, &next) in succ.iter().enumerate() {
                assert!(e.state[i].lo - slack <= next && next <= e.state[i].hi + slack, "box {i}: {e:?}");
                let affine =
                    l.state[i][0] * x + l.state[i][1] * y + l.action[i][0] * u + l.nondet[i][0] * d + l.offset[i];
                let r = next - affine;
                assert!(
                    l.remainder[i].lo - slack <= r && r <= l.remainder[i].hi + slack,
                    "linear {i}: {r} outside {:?} on {p:?}",
                    l.remainder[i]
                );
            }
        }
        // The leaf systems are valid systems with one input per state variable added.
        let leaf = step.linear_leaf(&sys, l);
        assert!(leaf.validate().is_ok());
        assert_eq!(leaf.nondet.len(), sys.nondet.len() + sys.state.len());
    }
}

#[test]
fn widths_by_order_and_substeps_on_the_invariant_box() {
    let (sys, plant) = damped();
    let post = PostEngine::new(&sys, Method::Crown, true).unwrap();
    let inv = FBox::new(vec![-1.0, -1.0], vec![1.0, 1.0]);
    let psi = post.compute(&inv).unwrap();
    eprintln!(
        "damped oscillator on [-1, 1]^2, u in {:?}: box width (x, y) and remainder width (x, y)",
        psi.action_box()
    );
    let mut widest_remainder = Vec::new();
    for (order, substeps) in [
        (Some(2), Some(1)),
        (Some(2), Some(4)),
        (Some(4), Some(1)),
        (Some(4), Some(4)),
        (Some(8), Some(2)),
        (None, None),
    ] {
        let settings = FlowSettings { order, substeps, ..FlowSettings::default() };
        let step = FlowStep::new(&sys, &plant, settings).unwrap();
        let t = std::time::Instant::now();
        let e = step.enclose(&inv, psi.action_box()).unwrap();
        let micros = t.elapsed().as_secs_f64() * 1e6;
        let rem: Vec<f64> = e.linear.remainder.iter().map(|r| r.width()).collect();
        eprintln!(
            "order {:>2} sub-steps {:>2}: box {:.6} {:.6}  remainder {:.3e} {:.3e}  ({micros:.0} us)",
            e.order,
            e.substeps,
            e.state[0].width(),
            e.state[1].width(),
            rem[0],
            rem[1]
        );
        widest_remainder.push(rem[0].max(rem[1]));
    }
    // The flow is linear in (x, u, d): the remainder is truncation and rounding only, and the
    // automatic settings make it negligible; order 2 in one step of 0.5 s leaves it visible.
    assert!(*widest_remainder.last().unwrap() < 1e-9, "{widest_remainder:?}");
    assert!(widest_remainder[0] > 1e3 * widest_remainder.last().unwrap(), "{widest_remainder:?}");
}

/// An ARCH-COMP system of configs/systems/archcomp with its model from `../shared/models`, or
/// `None` when the folder is absent (outside CI).
fn archcomp(file: &str, model: &str) -> Option<(System, trestle_ir::plant::SampledPlant)> {
    let path = trestle_testkit::shared_models()?.join("archcomp").join(model);
    let overrides = Overrides::parse(&[format!("controller.model={}", path.display())]).unwrap();
    let (sys, plant) = load_sampled_system(&repo().join("configs/systems/archcomp").join(file), &overrides).unwrap();
    Some((sys, plant.expect("a [flow] system")))
}

/// The published violation of a bounded ARCH-COMP property (Safe over the clock `t`, at every
/// step 0..=`steps`): found by falsification, validated, the run's certificate accepted by
/// `certify_run` and a tampered start rejected. Prints the time and the enclosure widths.
fn reproduce_violation(file: &str, model: &str, steps: usize) {
    use trestle_bridge::certificate::run::run_json;
    use trestle_bridge::flow_falsify::{FalsifySettings, falsify};
    let Some((sys, plant)) = archcomp(file, model) else { return };
    let settings = FlowSettings { refinements: 0, ..FlowSettings::default() };
    let step = FlowStep::new(&sys, &plant, settings).unwrap();
    let init = sys.init.to_box_union(sys.state.len(), 1).unwrap()[0].inner_fbox().unwrap().into_fbox();
    let safe = sys.safe.clone().unwrap();
    let in_init = |x: &[trestle_ir::Rational]| sys.init.eval_exact(&trestle_ir::Env::new(x, &[], &[])) == Ok(true);
    let clock = std::time::Instant::now();
    let found = falsify(&sys, &step, &safe, 0..=steps, &init, in_init, &FalsifySettings::default());
    let (trace, run) = found.unwrap_or_else(|| panic!("{file}: no validated violation"));
    println!("{file}: violated at step {} in {:.2?}; widths {:?}", trace.len(), clock.elapsed(), run.widths());
    assert!(trace.len() <= steps && in_init(&trace.start), "{trace}");
    let record = run_json(&sys, &trace.start, &trace.choices);
    let clock = std::time::Instant::now();
    let c = trestle_bridge::flow_run::certify_run(&record, &sys, &step);
    assert!(c.valid, "{c:?}");
    println!("{file}: certified in {:.2?}", clock.elapsed());
    // A start moved out of Init, and the run cut one period short (its last box is not strictly
    // outside Safe: the violation was the first decided one), are rejected.
    let mut tampered = record.clone();
    let i = (0..init.dims()).find(|&i| init.lo[i] < init.hi[i]).unwrap();
    let outside = trestle_ir::num::rational_from_f64(2.0 * init.hi[i] - init.lo[i]);
    tampered.start[i] = trestle_ir::num::display_rational(&outside);
    let c = trestle_bridge::flow_run::certify_run(&tampered, &sys, &step);
    assert!(!c.valid && !c.checks[0].1, "{c:?}");
    let mut short = record.clone();
    short.steps.pop();
    let c = trestle_bridge::flow_run::certify_run(&short, &sys, &step);
    assert!(!c.valid && c.checks[0].1 && !c.checks[1].1, "{c:?}");
}

#[test]
fn arch_single_pendulum_violation_is_a_validated_run_that_certify_accepts() {
    reproduce_violation("single-pendulum.toml", "Single_Pendulum/controller_single_pendulum.onnx", 20);
}

#[test]
fn arch_double_pendulum_more_robust_violation_is_a_validated_run_that_certify_accepts() {
    reproduce_violation(
        "double-pendulum-more-robust.toml",
        "Double_Pendulum/controller_double_pendulum_more_robust.onnx",
        20,
    );
}

#[test]
fn arch_airplane_violation_is_a_validated_run_that_certify_accepts() {
    reproduce_violation("airplane.toml", "Airplane/controller_airplane.onnx", 20);
}
