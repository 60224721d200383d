//! What the flow refuses and reports, settings that are honoured, non-deterministic inputs, and
//! the f64 simulator against the high-precision one.

mod common;

use common::*;
use trestle_flow::{Flow, FlowError, FlowSettings};
use trestle_ir::expr::VarRef;
use trestle_ir::num::parse_rational;
use trestle_ir::parse::{SimpleScope, Symbol, parse_expr};
use trestle_ir::{Interval, Rational};

fn q(text: &str) -> Rational {
    parse_rational(text).unwrap()
}

#[test]
fn non_smooth_dynamics_are_refused_by_name() {
    let scope = SimpleScope::with_state(&["x"]);
    for (text, name) in [("relu(x)", "relu"), ("abs(x)", "abs"), ("max(x, 0)", "max"), ("if x > 0 then x else 0", "if")]
    {
        let e = parse_expr(text, &scope).unwrap();
        match Flow::new(&[e], 0, 0) {
            Err(FlowError::NotSmooth(what)) => assert!(what.starts_with(name), "{text}: {what}"),
            other => panic!("{text}: {other:?}"),
        }
    }
}

#[test]
fn blow_up_and_domain_exits_fail_instead_of_enclosing() {
    // x' = x^2 from 1 reaches infinity at t = 1.
    let f = flow(&["x"], &[], &["x^2"]);
    let e = f.enclose(&[Interval::point(1.0)], &[], &[], &q("2"), &FlowSettings::default());
    assert!(matches!(e, Err(FlowError::StepFailed { time, .. }) if time < 1.0 && time > 0.9), "{e:?}");
    // Before the blow-up it encloses 1 / (1 - t).
    let e = f.enclose(&[Interval::point(1.0)], &[], &[], &q("0.5"), &FlowSettings::default()).unwrap();
    assert!(e.state[0].contains(2.0) && e.state[0].width() < 1e-9, "{:?}", e.state);
    // x' = -1, y' = log(x) from x = 1/2: log leaves its domain at t = 1/2.
    let f = flow(&["x", "y"], &[], &["-1", "log(x)"]);
    let e = f.enclose(&[Interval::point(0.5), Interval::point(0.0)], &[], &[], &q("1"), &FlowSettings::default());
    assert!(matches!(e, Err(FlowError::StepFailed { time, .. }) if time < 0.5), "{e:?}");
}

#[test]
fn fixed_order_and_substeps_are_used() {
    let f = flow(&["x", "y"], &[], &["y", "-x"]);
    let x0 = [Interval::new(0.9, 1.1), Interval::new(-0.1, 0.1)];
    let settings = FlowSettings { order: Some(7), substeps: Some(5), ..FlowSettings::default() };
    let e = f.enclose(&x0, &[], &[], &q("1"), &settings).unwrap();
    assert_eq!((e.order, e.substeps), (7, 5));
    let bad = FlowSettings { substeps: Some(0), ..FlowSettings::default() };
    assert!(matches!(f.enclose(&x0, &[], &[], &q("1"), &bad), Err(FlowError::Input(_))));
}

#[test]
fn held_nondeterministic_inputs_enter_the_linear_enclosure() {
    // x' = -x + w with w held in [-1, 1]: x(T) = e^-T x0 + (1 - e^-T) w.
    let mut scope = SimpleScope::with_state(&["x"]);
    scope.add("w", Symbol::Var(VarRef::Nondet(0)));
    let f = Flow::new(&[parse_expr("-x + w", &scope).unwrap()], 0, 1).unwrap();
    let e = f
        .enclose(&[Interval::new(1.0, 2.0)], &[], &[Interval::new(-1.0, 1.0)], &q("0.5"), &FlowSettings::default())
        .unwrap();
    let decay = (-0.5f64).exp();
    assert!((e.linear.state[0][0] - decay).abs() < 1e-14, "{:?}", e.linear);
    assert!((e.linear.nondet[0][0] - (1.0 - decay)).abs() < 1e-14, "{:?}", e.linear);
    assert!(e.linear.remainder[0].width() < 1e-13, "{:?}", e.linear.remainder);
    let image = e.linear.image(&[Interval::new(1.0, 2.0)], &[], &[Interval::new(-1.0, 1.0)]);
    assert!(image[0].contains(decay - (1.0 - decay)) && image[0].contains(2.0 * decay + 1.0 - decay));
    assert!((image[0].width() - e.state[0].width()).abs() < 1e-12);
}

#[test]
fn f64_simulation_agrees_with_the_high_precision_reference() {
    let f = flow(&["th", "w"], &["u"], &["w", "-9.81 * sin(th) + u"]);
    let mut rng = rng(9);
    for _ in 0..50 {
        let y = random_box(&mut rng, &[(-3.0, 3.0), (-3.0, 3.0), (-2.0, 2.0)], 1e-9);
        let y: Vec<f64> = y.iter().map(|v| v.lo).collect();
        let fast = f.simulate(&y[..2], &y[2..], &[], 2.0, 1e-14).unwrap();
        let precise = f.simulate_big(&exact(&y[..2]), &exact(&y[2..]), &[], &q("2"), PREC, 30).unwrap();
        for (a, b) in fast.iter().zip(&precise) {
            assert!((a - b.to_f64()).abs() < 1e-10 * (1.0 + a.abs()), "{y:?}: {a} vs {b}");
        }
    }
    assert!(matches!(f.simulate(&[0.0], &[0.0], &[], 1.0, 1e-9), Err(FlowError::Dimension(_))));
}
