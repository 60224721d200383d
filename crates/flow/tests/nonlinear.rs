//! Enclosure soundness on the pendulum and on TORA (ARCH-COMP benchmark 9's dynamics) against a
//! high-precision non-validated integrator (MPFR Taylor, 128 bits), itself checked against an
//! independent MPFR Runge-Kutta with tiny steps and against closed forms (tests/linear.rs and the
//! crate's unit tests). Every reference state must lie inside the enclosure and its linear form
//! (within `MARGIN`), and the enclosure must not be much wider than the sampled image.

mod common;

use common::*;
use rug::Float;
use trestle_flow::{Flow, FlowSettings};
use trestle_ir::Rational;
use trestle_ir::num::parse_rational;

/// ARCH-COMP's single pendulum has g/l = 2; the classical pendulum of the issue with g = 9.81,
/// l = 1 is stiffer: use that.
fn pendulum() -> Flow {
    flow(&["th", "w"], &["u"], &["w", "-9.81 * sin(th) + u"])
}

/// dynamics9.m: the network's output f(x) is offset by -10 (u = f(x) - 10); the action here is
/// the network's output.
fn tora() -> Flow {
    flow(&["x1", "x2", "x3", "x4"], &["f"], &["x2", "-x1 + 0.1*sin(x3)", "x4", "f - 10"])
}

/// The classical fourth-order Runge-Kutta method in MPFR with `steps` equal steps, the right-hand
/// side evaluated through the tape's order-1 coefficient (function values only, none of the
/// higher-order recurrences the Taylor reference uses).
fn rk4(f: &Flow, y0: &[Rational], period: &Rational, steps: u32) -> Vec<Float> {
    use trestle_flow::coef::{Big, Coefficient};
    let prec = PREC;
    let rhs = |y: &[Big]| -> Vec<Big> { f.tape().series(y, 1).unwrap().iter().map(|c| c[1].clone()).collect() };
    let h = Big(Float::with_val(prec, trestle_real::big::rational_to_rug(period)) / steps);
    let half = Rational::new(1.into(), 2.into());
    let sixth = Rational::new(1.into(), 6.into());
    let two = Rational::from_integer(2.into());
    let mut y: Vec<Big> = y0.iter().map(|q| Big::new(prec, q)).collect();
    let axpy = |y: &[Big], k: &[Big], s: &Rational| -> Vec<Big> {
        y.iter().zip(k).map(|(a, b)| a.add(&b.mul(&h).scale(s))).collect()
    };
    let one = Rational::from_integer(1.into());
    for _ in 0..steps {
        let k1 = rhs(&y);
        let k2 = rhs(&axpy(&y, &k1, &half));
        let k3 = rhs(&axpy(&y, &k2, &half));
        let k4 = rhs(&axpy(&y, &k3, &one));
        y = (0..y.len())
            .map(|i| {
                let s = k1[i].add(&k2[i].scale(&two)).add(&k3[i].scale(&two)).add(&k4[i]);
                y[i].add(&s.mul(&h).scale(&sixth))
            })
            .collect();
    }
    y.into_iter().map(|b| b.0).collect()
}

/// Random boxes of states and actions, sampled; every reference inside.
fn check(
    what: &str,
    f: &Flow,
    ranges: &[(f64, f64)],
    max_width: f64,
    period: &str,
    boxes_default: usize,
    quadratic: f64,
) {
    let n = f.tape().state_dim();
    let period = parse_rational(period).unwrap();
    let mut rng = rng(3);
    let (mut points, mut substeps, mut worst) = (0, 0, 0.0f64);
    let count = boxes(boxes_default);
    for _ in 0..count {
        let b = random_box(&mut rng, ranges, max_width);
        let e = f.enclose(&b[..n], &b[n..], &[], &period, &FlowSettings::default()).unwrap();
        substeps += e.substeps;
        let mut images = Vec::new();
        for y0 in sample_points(&mut rng, &b, 2) {
            let (x0, u) = y0.split_at(n);
            let r = f.simulate_big(&exact(x0), &exact(u), &[], &period, PREC, 30).unwrap();
            assert_enclosed(what, &e, x0, u, &r);
            images.push(r.iter().map(Float::to_f64).collect::<Vec<f64>>());
            points += 1;
        }
        assert_tight(what, &e, &b, &images, 1.0 + 1e-9, quadratic);
        worst = worst.max(e.state.iter().map(|v| v.width()).fold(0.0, f64::max));
    }
    eprintln!("{what}: {points} states inside; {count} boxes, {substeps} sub-steps, widest enclosure {worst:.3e}");
}

#[test]
fn pendulum_enclosures_hold_the_true_states() {
    let ranges = [(-3.0, 3.0), (-3.0, 3.0), (-2.0, 2.0)];
    check("pendulum", &pendulum(), &ranges, 0.1, "0.05", 500, 0.5);
}

#[test]
fn tora_enclosures_hold_the_true_states() {
    // ARCH's region [-2, 2]^4; the network's outputs around the offset 10.
    let ranges = [(-2.0, 2.0), (-2.0, 2.0), (-2.0, 2.0), (-2.0, 2.0), (5.0, 15.0)];
    check("tora", &tora(), &ranges, 0.05, "1", 100, 1.0);
}

#[test]
fn the_references_agree_with_runge_kutta() {
    // RK4 with 20000 steps: global error about (T/20000)^4 * T * |y^(5)|, below 1e-17 here.
    let mut rng = rng(5);
    for (f, ranges, period) in [
        (pendulum(), vec![(-3.0, 3.0), (-3.0, 3.0), (-2.0, 2.0)], "0.05"),
        (tora(), vec![(-2.0, 2.0), (-2.0, 2.0), (-2.0, 2.0), (-2.0, 2.0), (5.0, 15.0)], "1"),
    ] {
        let n = f.tape().state_dim();
        let period = parse_rational(period).unwrap();
        for _ in 0..3 {
            let y0: Vec<f64> = ranges.iter().map(|&(lo, hi)| rand::Rng::random_range(&mut rng, lo..hi)).collect();
            let taylor = f.simulate_big(&exact(&y0[..n]), &exact(&y0[n..]), &[], &period, PREC, 30).unwrap();
            let runge = rk4(&f, &exact(&y0), &period, 20_000);
            for (a, b) in taylor.iter().zip(&runge) {
                let d = Float::with_val(PREC, a - b).abs().to_f64();
                assert!(d < 1e-15, "{y0:?}: Taylor {a} vs RK4 {b}");
            }
        }
    }
}

/// Whether the point `p` lies in the planar zonotope `z` (widened by `MARGIN` times the norm of
/// each direction): exact in the plane, where the facet normals are the generators turned by 90°
/// (and the axes, for the degenerate cases). Products of f64s summed at 1100 bits are exact.
fn in_planar_zonotope(z: &trestle_flow::Zonotope, p: &[Float]) -> bool {
    let wide = |x: f64| Float::with_val(1100, x);
    let mut normals: Vec<[f64; 2]> = z.generators.iter().map(|g| [-g[1], g[0]]).collect();
    normals.extend([[1.0, 0.0], [0.0, 1.0]]);
    normals.iter().all(|d| {
        for s in [1.0, -1.0] {
            let (d0, d1) = (wide(s * d[0]), wide(s * d[1]));
            let support = z.generators.iter().fold(wide(z.center[0]) * &d0 + wide(z.center[1]) * &d1, |acc, g| {
                acc + (wide(g[0]) * &d0 + wide(g[1]) * &d1).abs()
            });
            let value = Float::with_val(1100, &p[0] * &d0) + Float::with_val(1100, &p[1] * &d1);
            let slack = Float::with_val(1100, d0.clone().abs() + d1.clone().abs()) * MARGIN;
            if value > support + slack {
                return false;
            }
        }
        true
    })
}

#[test]
fn zonotopes_through_periods_hold_the_true_runs() {
    // Planar plants under a linear feedback u = k·x (its affine form over the zonotope is exact
    // up to rounding), 8 periods of 0.5 s from random boxes, zonotopes reduced to 6 generators;
    // every MPFR run from sampled starts must stay in every step's zonotope.
    use trestle_flow::Zonotope;
    use trestle_ir::Interval;
    let plants = [
        flow(&["x", "y"], &["u"], &["y", "-x + u"]),
        flow(&["x", "y"], &["u"], &["y", "-sin(x) - 0.1*y + u"]),
        flow(&["x", "y"], &["u"], &["y - 0.1*x*x", "-x - 0.2*y + u"]),
    ];
    let period = parse_rational("1/2").unwrap();
    let mut rng = rng(11);
    let (mut states, mut widest) = (0usize, 0.0f64);
    for trial in 0..boxes(12) {
        let f = &plants[trial % plants.len()];
        let k = [rand::Rng::random_range(&mut rng, -0.6..0.0), rand::Rng::random_range(&mut rng, -0.6..0.0)];
        let init = random_box(&mut rng, &[(-1.0, 1.0), (-1.0, 1.0)], 0.3);
        let gain = vec![vec![Interval::point(k[0]), Interval::point(k[1])]];
        let mut zs = vec![Zonotope::from_box(&init)];
        for _ in 0..8 {
            let z = zs.last().unwrap();
            let u = z.affine_map(&gain, &[Interval::point(0.0)]);
            let (mut next, _) = z.flow_step(f, &u, &u.hull(), &[], &period, &FlowSettings::default()).unwrap();
            next.reduce(6);
            assert!(next.generators.len() <= 6);
            zs.push(next);
        }
        widest = widest.max(zs.last().unwrap().width());
        let kq = exact(&k);
        for start in sample_points(&mut rng, &init, 26) {
            let mut x = exact(&start);
            for (step, z) in zs.iter().enumerate() {
                let big: Vec<Float> =
                    x.iter().map(|q| Float::with_val(1100, trestle_real::big::rational_to_rug(q))).collect();
                assert!(in_planar_zonotope(z, &big), "trial {trial}, step {step}: {big:?} outside {z:?}");
                states += 1;
                let u = &kq[0] * &x[0] + &kq[1] * &x[1];
                let r = f.simulate_big(&x, &[u], &[], &period, PREC, 30).unwrap();
                x = r.iter().map(|v| trestle_real::big::rational_from_rug(&v.to_rational().unwrap())).collect();
            }
        }
    }
    assert!(states >= 12 * 30 * 9, "{states} states checked");
    eprintln!("zonotope soundness: {states} states inside; widest final hull side {widest:.3e}");
}
