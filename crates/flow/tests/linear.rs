//! Enclosure soundness on linear ODEs with closed-form flows: every true state (computed in
//! MPFR from the closed form, or exactly) lies inside the enclosure and its linear form, and the
//! enclosure is about as wide as the exact image (the image of a box under a linear flow is a
//! parallelotope whose box hull the images of the corners give).

mod common;

use common::*;
use rug::Float;
use trestle_flow::FlowSettings;
use trestle_ir::num::parse_rational;
use trestle_ir::{Interval, Rational};

/// `exp(A t)` by its Taylor series in MPFR (terms until they vanish at `PREC + 64` bits).
fn expm(a: &[Vec<f64>], t: &Rational) -> Vec<Vec<Float>> {
    let prec = PREC + 64;
    let n = a.len();
    let t = Float::with_val(prec, trestle_real::big::rational_to_rug(t));
    let m: Vec<Vec<Float>> = a.iter().map(|r| r.iter().map(|&x| Float::with_val(prec, x) * &t).collect()).collect();
    let identity = |i: usize, j: usize| Float::with_val(prec, u32::from(i == j));
    let mut sum: Vec<Vec<Float>> = (0..n).map(|i| (0..n).map(|j| identity(i, j)).collect()).collect();
    let mut term = sum.clone();
    for k in 1..400u32 {
        term = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        let mut s = Float::with_val(prec, 0);
                        for l in 0..n {
                            s += Float::with_val(prec, &term[i][l] * &m[l][j]);
                        }
                        s / k
                    })
                    .collect()
            })
            .collect();
        let mut largest = 0.0f64;
        for i in 0..n {
            for j in 0..n {
                sum[i][j] += &term[i][j];
                largest = largest.max(term[i][j].to_f64().abs());
            }
        }
        if largest < 1e-60 && k > 10 {
            break;
        }
    }
    sum
}

/// Checks enclosures of `dy/dt = A y` (the actions are the last coordinates of `y`, with zero
/// rows in `A`) on random boxes against `exp(A T) y0`.
struct LinearCase<'a> {
    what: &'a str,
    states: &'a [&'a str],
    actions: &'a [&'a str],
    rhs: &'a [&'a str],
    a: Vec<Vec<f64>>,
    ranges: &'a [(f64, f64)],
    period: &'a str,
    boxes_default: usize,
}

fn check_linear(case: LinearCase<'_>) {
    let LinearCase { what, states, actions, rhs, a, ranges, period, boxes_default } = case;
    let a = &a;
    let f = flow(states, actions, rhs);
    let period = parse_rational(period).unwrap();
    let e_at = expm(a, &period);
    let n = states.len();
    let mut rng = rng(7);
    let mut points = 0;
    for _ in 0..boxes(boxes_default) {
        let b = random_box(&mut rng, ranges, 0.2);
        let e = f.enclose(&b[..n], &b[n..], &[], &period, &FlowSettings::default()).unwrap();
        let mut images = Vec::new();
        for y0 in sample_points(&mut rng, &b, 6) {
            let r: Vec<Float> = (0..n)
                .map(|i| {
                    let mut s = Float::with_val(PREC + 64, 0);
                    for (j, y) in y0.iter().enumerate() {
                        s += Float::with_val(PREC + 64, &e_at[i][j] * *y);
                    }
                    s
                })
                .collect();
            assert_enclosed(what, &e, &y0[..n], &y0[n..], &r);
            images.push(r.iter().map(Float::to_f64).collect());
            points += 1;
        }
        assert_tight(what, &e, &b, &images, 1.0 + 1e-9, 0.0);
    }
    eprintln!("{what}: {points} states inside their enclosures");
}

#[test]
fn rotation_against_its_closed_form() {
    // x' = 2y, y' = -2x: exp(A t) is the rotation by 2t.
    check_linear(LinearCase {
        what: "rotation",
        states: &["x", "y"],
        actions: &[],
        rhs: &["2*y", "-2*x"],
        a: vec![vec![0.0, 2.0], vec![-2.0, 0.0]],
        ranges: &[(-3.0, 3.0), (-3.0, 3.0)],
        period: "0.3",
        boxes_default: 300,
    });
}

#[test]
fn harmonic_oscillator_over_a_long_period() {
    // x' = v, v' = -x over 2.5 (many sub-steps): cos and sin.
    check_linear(LinearCase {
        what: "oscillator",
        states: &["x", "v"],
        actions: &[],
        rhs: &["v", "-x"],
        a: vec![vec![0.0, 1.0], vec![-1.0, 0.0]],
        ranges: &[(-2.0, 2.0), (-2.0, 2.0)],
        period: "2.5",
        boxes_default: 200,
    });
}

#[test]
fn damped_system_with_a_held_action() {
    // x' = v, v' = -2x - v/2 + u with u held: the augmented matrix's exponential.
    check_linear(LinearCase {
        what: "damped",
        states: &["x", "v"],
        actions: &["u"],
        rhs: &["v", "-2*x - v/2 + u"],
        a: vec![vec![0.0, 1.0, 0.0], vec![-2.0, -0.5, 1.0], vec![0.0, 0.0, 0.0]],
        ranges: &[(-2.0, 2.0), (-2.0, 2.0), (-1.0, 1.0)],
        period: "0.7",
        boxes_default: 300,
    });
}

#[test]
fn double_integrator_with_a_held_action_exactly() {
    // x' = v, v' = u: x + v T + u T^2 / 2 and v + u T, exact rationals.
    let f = flow(&["x", "v"], &["u"], &["v", "u"]);
    let period = parse_rational("0.1").unwrap();
    let mut rng = rng(11);
    for _ in 0..boxes(300) {
        let b = random_box(&mut rng, &[(-5.0, 5.0), (-5.0, 5.0), (-3.0, 3.0)], 0.5);
        let e = f.enclose(&b[..2], &b[2..], &[], &period, &FlowSettings::default()).unwrap();
        let mut images = Vec::new();
        for y in sample_points(&mut rng, &b, 4) {
            let [x, v, u] = [&y[0], &y[1], &y[2]].map(|&z| trestle_ir::num::rational_from_f64(z));
            let half = Rational::new(1.into(), 2.into());
            let xt = &x + &v * &period + &u * &period * &period * half;
            let vt = &v + &u * &period;
            let r: Vec<Float> =
                [xt, vt].iter().map(|q| Float::with_val(1100, trestle_real::big::rational_to_rug(q))).collect();
            assert_enclosed("double integrator", &e, &y[..2], &y[2..], &r);
            images.push(r.iter().map(Float::to_f64).collect());
        }
        assert_tight("double integrator", &e, &b, &images, 1.0 + 1e-9, 0.0);
        // The flow is affine in (x0, u): the linear part is exact up to rounding.
        assert!(e.linear.remainder.iter().all(|r| r.width() < 1e-13), "{:?}", e.linear.remainder);
    }
}

#[test]
fn a_sabotaged_enclosure_is_caught() {
    // The check itself can fail: shrink a true enclosure by 1e-9 on one side and a corner's
    // true image falls outside.
    let f = flow(&["x", "y"], &[], &["2*y", "-2*x"]);
    let b = [Interval::new(0.5, 0.7), Interval::new(-0.1, 0.1)];
    let period = parse_rational("0.3").unwrap();
    let mut e = f.enclose(&b, &[], &[], &period, &FlowSettings::default()).unwrap();
    let e_at = expm(&[vec![0.0, 2.0], vec![-2.0, 0.0]], &period);
    e.state[0].hi -= 1e-9;
    let caught = std::panic::catch_unwind(|| {
        for y0 in sample_points(&mut rng(1), &b, 0) {
            let r: Vec<Float> = (0..2)
                .map(|i| Float::with_val(PREC, &e_at[i][0] * y0[0]) + Float::with_val(PREC, &e_at[i][1] * y0[1]))
                .collect();
            assert_enclosed("sabotaged", &e, &y0, &[], &r);
        }
    });
    assert!(caught.is_err());
}
