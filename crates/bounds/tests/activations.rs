//! Property tests of the bounds of every activation (issue 35, "Done when"): on random small
//! networks (2-4 layers of width 2-8, activations mixed per layer) and random boxes, every
//! sampled output, evaluated in 200-bit interval arithmetic (MPFR, `trestle_real::BigInterval`,
//! the piecewise-linear activations on exact rational ends; more bits where an enclosure touches
//! a bound, as saturated tanh and sigmoid do), lies inside the IBP, CROWN,
//! alpha-CROWN and forward output boxes and between their linear bounds (compared exactly, as
//! rationals). Each property test is run per new activation (every hidden layer of the network
//! draws from it and ReLU/identity), and once with all of them mixed.
//!
//! CROWN and alpha-CROWN intersect their boxes with the interval bounds of their own pass (IBP's
//! up to the rounding of its products, since that pass starts from tightened bounds), so the
//! tests assert that CROWN is never looser than IBP (up to 1e-12 relative) and alpha-CROWN never
//! looser than CROWN (exactly), output by output. And so that a
//! relaxation degrading to constant bounds fails: on small boxes around a point, deep tanh /
//! sigmoid networks must have CROWN boxes well inside IBP's, and one neuron's linear bounds must
//! pinch to second order.

mod common;

use common::*;
use num_traits::Zero;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use trestle_bounds::{InputBox, Method, OutputBounds, bound};
use trestle_ir::network::{Activation, DenseLayer, Layer, Matrix, Network};
use trestle_ir::num::{Rational, rational_from_f64};
use trestle_real::BigInterval;

const PREC: u32 = 200;

/// The activation of a whole interval (a tight enclosure of a point's pre-activation): tanh and
/// sigmoid by MPFR, the piecewise-linear ones on the exact rational ends from their definitions
/// (the image of `[a, b]` is the hull of the ends' images and, for the non-monotone leaky ReLU,
/// of 0's).
fn activate(act: Activation, z: &BigInterval, prec: u32) -> BigInterval {
    match act {
        Activation::Tanh => z.tanh(),
        Activation::Sigmoid => z.sigmoid(),
        Activation::Identity => z.clone(),
        _ => {
            let (Some(a), Some(b)) = z.to_rationals() else { panic!("unbounded pre-activation") };
            let f = |q: &Rational| -> Rational {
                let zero = Rational::zero();
                match act {
                    Activation::Relu => q.clone().max(zero),
                    Activation::LeakyRelu { alpha } if *q < zero => q * rational_from_f64(alpha),
                    Activation::LeakyRelu { .. } => q.clone(),
                    Activation::Clip { lo, hi } => {
                        let mut y = q.clone();
                        if lo.is_finite() && y < rational_from_f64(lo) {
                            y = rational_from_f64(lo);
                        }
                        if hi.is_finite() && y > rational_from_f64(hi) {
                            y = rational_from_f64(hi);
                        }
                        y
                    }
                    _ => unreachable!(),
                }
            };
            let mut values = vec![f(&a), f(&b)];
            if a < Rational::zero() && b > Rational::zero() {
                values.push(f(&Rational::zero()));
            }
            let lo = values.iter().min().unwrap();
            let hi = values.iter().max().unwrap();
            BigInterval::from_rational_ends(lo, hi, prec).unwrap()
        }
    }
}

/// The network's output at `x`, enclosed at 200 bits.
fn big_output(net: &Network, x: &[f64], prec: u32) -> Vec<BigInterval> {
    let mut v: Vec<BigInterval> = x.iter().map(|&xi| BigInterval::from_f64(xi, prec).unwrap()).collect();
    for layer in &net.layers {
        let Layer::Dense(d) = layer else { panic!("dense only") };
        v = (0..d.weights.rows)
            .map(|r| {
                let mut acc = BigInterval::from_f64(d.bias[r], prec).unwrap();
                for (w, xi) in d.weights.row(r).iter().zip(&v) {
                    acc = acc.add(&BigInterval::from_f64(*w, prec).unwrap().mul(xi));
                }
                activate(d.activation, &acc, prec)
            })
            .collect();
    }
    v
}

/// Whether the outputs enclosed in `y` lie in the box and between the linear bounds (exact
/// rational comparisons): `Err` when one is outside, `Ok(false)` when an enclosure touches a bound
/// (undecided at this precision: near saturation tanh and sigmoid round to ±1, 0 or 1 even at 200
/// bits), `Ok(true)` when all are decided inside.
fn inside(bounds: &OutputBounds, xq: &[Rational], y: &[BigInterval]) -> Result<bool, String> {
    let mut decided = true;
    let mut test = |holds: Option<bool>, what: &str, i: usize| match holds {
        Some(true) => Ok(()),
        Some(false) => Err(format!("output {i} ~ {} {what}", y[i].mid_f64())),
        None => {
            decided = false;
            Ok(())
        }
    };
    for (i, yi) in y.iter().enumerate() {
        test(yi.ge(&rational_from_f64(bounds.lo[i])), &format!("below {}", bounds.lo[i]), i)?;
        test(yi.le(&rational_from_f64(bounds.hi[i])), &format!("above {}", bounds.hi[i]), i)?;
        if let Some(linear) = &bounds.linear {
            test(
                yi.ge(&exact_affine(linear.lower.a.row(i), linear.lower.c[i], xq)),
                "below its linear lower bound",
                i,
            )?;
            test(
                yi.le(&exact_affine(linear.upper.a.row(i), linear.upper.c[i], xq)),
                "above its linear upper bound",
                i,
            )?;
        }
    }
    Ok(decided)
}

/// Asserts that the output at `x` lies inside every method's bounds, evaluating at 200 bits and,
/// where an enclosure touches a bound, again at higher precision (up to 2^17 bits, enough for
/// tanh of arguments in the tens of thousands).
fn assert_inside_all(net: &Network, results: &[(&str, OutputBounds)], x: &[f64], context: &str) {
    let xq = exact_vec(x);
    let mut prec = PREC;
    loop {
        let y = big_output(net, x, prec);
        let mut decided = true;
        for (name, bounds) in results {
            match inside(bounds, &xq, &y) {
                Err(e) => panic!("{context} {name} at {x:?}: {e}"),
                Ok(d) => decided &= d,
            }
        }
        if decided {
            return;
        }
        assert!(prec < 1 << 17, "{context} at {x:?}: still undecided at {prec} bits");
        prec *= 8;
    }
}

/// A random activation of the family `kind` (or of any family for `None`), with ReLU and
/// identity mixed in.
fn draw(rng: &mut ChaCha8Rng, kind: Option<&str>) -> Activation {
    let kind = kind.unwrap_or(["leaky", "clip", "tanh", "sigmoid"][rng.random_range(0..4)]);
    if rng.random_range(0..5) == 0 {
        return if rng.random_bool(0.5) { Activation::Relu } else { Activation::Identity };
    }
    match kind {
        "leaky" => Activation::LeakyRelu {
            alpha: match rng.random_range(0..3) {
                0 => rng.random_range(0.0..1.0),
                1 => rng.random_range(-1.0..0.0),
                _ => rng.random_range(1.0..3.0),
            },
        },
        "clip" => match rng.random_range(0..3) {
            0 => {
                let lo = rng.random_range(-2.0..0.5);
                Activation::Clip { lo, hi: lo + rng.random_range(0.0..2.0) }
            }
            1 => Activation::Clip { lo: f64::NEG_INFINITY, hi: rng.random_range(-1.0..1.0) },
            _ => Activation::Clip { lo: rng.random_range(-1.0..1.0), hi: f64::INFINITY },
        },
        "tanh" => Activation::Tanh,
        "sigmoid" => Activation::Sigmoid,
        other => panic!("{other}"),
    }
}

/// 2-4 layers of width 2-8 (1-4 inputs, 1-3 outputs), hidden activations drawn by [`draw`], the
/// output layer identity or drawn.
fn random_network(rng: &mut ChaCha8Rng, kind: Option<&str>) -> Network {
    let layers = rng.random_range(2..=4);
    let mut sizes = vec![rng.random_range(1..=4)];
    sizes.extend((1..layers).map(|_| rng.random_range(2..=8)));
    sizes.push(rng.random_range(1..=3));
    let mut net = network(rng, &sizes);
    let last = net.layers.len() - 1;
    for (l, layer) in net.layers.iter_mut().enumerate() {
        if let Layer::Dense(d) = layer
            && (l < last || rng.random_bool(0.3))
        {
            d.activation = draw(rng, kind);
        }
    }
    net
}

fn methods() -> [(&'static str, Method); 4] {
    ["ibp", "crown", "alpha-crown", "forward"].map(|m| (m, m.parse().unwrap()))
}

/// Soundness of every method, CROWN inside IBP and alpha-CROWN inside CROWN, on `trials`
/// networks of the family `kind`.
fn check_family(kind: Option<&str>, seed: u64, trials: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut checked = 0;
    for trial in 0..trials {
        let net = random_network(&mut rng, kind);
        let b = random_box(&mut rng, net.input_dim());
        let results: Vec<(&str, OutputBounds)> = methods()
            .into_iter()
            .map(|(name, m)| (name, bound(&net, &b, &m).unwrap_or_else(|e| panic!("trial {trial} {name}: {e}"))))
            .collect();
        let [ibp, crown, alpha, _forward] = [0, 1, 2, 3].map(|k| &results[k].1);
        for i in 0..ibp.lo.len() {
            let ctx = format!(
                "trial {trial} output {i}: ibp [{}, {}] crown [{}, {}] alpha [{}, {}]",
                ibp.lo[i], ibp.hi[i], crown.lo[i], crown.hi[i], alpha.lo[i], alpha.hi[i]
            );
            // CROWN intersects with the intervals of its own pass, which start from its tightened
            // bounds: IBP's up to the rounding of the midpoint-radius products (ulps).
            let slack = 1e-12 * ibp.lo[i].abs().max(ibp.hi[i].abs()).max(1.0);
            assert!(
                crown.lo[i] >= ibp.lo[i] - slack && crown.hi[i] <= ibp.hi[i] + slack,
                "CROWN looser than IBP: {ctx}"
            );
            // alpha-CROWN keeps CROWN's row wherever CROWN's is better, on the same intervals.
            assert!(alpha.lo[i] >= crown.lo[i] && alpha.hi[i] <= crown.hi[i], "alpha looser than CROWN: {ctx}");
        }
        for x in sample_points(&mut rng, &b, 12) {
            assert_inside_all(&net, &results, &x, &format!("{kind:?} trial {trial}"));
            checked += results.len();
        }
    }
    assert!(checked >= trials * 4 * 12, "{checked}");
}

#[test]
fn tanh_networks_are_bounded_soundly_by_every_method() {
    check_family(Some("tanh"), 0x7a11, 120);
}

#[test]
fn sigmoid_networks_are_bounded_soundly_by_every_method() {
    check_family(Some("sigmoid"), 0x5197, 120);
}

#[test]
fn leaky_relu_networks_are_bounded_soundly_by_every_method() {
    check_family(Some("leaky"), 0x1ea4, 120);
}

#[test]
fn clip_networks_are_bounded_soundly_by_every_method() {
    check_family(Some("clip"), 0xc119, 120);
}

#[test]
fn mixed_networks_are_bounded_soundly_by_every_method() {
    check_family(None, 0x313d, 160);
}

/// One dense layer `y = act(x)` on one input.
fn single(act: Activation) -> Network {
    let layer = Layer::Dense(DenseLayer { weights: Matrix::identity(1), bias: vec![0.0], activation: act });
    Network::new("inline:single", vec![layer]).unwrap()
}

/// On a box of width `w` the best linear bounds of a smooth function are `O(w^2)` apart; a
/// relaxation that fell back to constants would be `O(w)` apart. For every smooth activation and
/// box position (convex side, concave side, across the inflection point, far tails), the gap
/// between CROWN's upper and lower line at the box's midpoint is below `f''` scale times `w^2`,
/// and at most a hundredth of the output's width.
#[test]
fn one_neuron_linear_bounds_pinch_to_second_order() {
    for act in [Activation::Tanh, Activation::Sigmoid] {
        for centre in [-6.0, -1.5, -0.3, 0.0, 0.2, 1.0, 4.0] {
            let w: f64 = 1e-3;
            let b = InputBox::new(vec![centre - w / 2.0], vec![centre + w / 2.0]);
            for method in [Method::Crown, "alpha-crown".parse().unwrap(), Method::Forward] {
                let out = bound(&single(act), &b, &method).unwrap();
                let lin = out.linear.as_ref().unwrap();
                let gap =
                    (lin.upper.a.data[0] * centre + lin.upper.c[0]) - (lin.lower.a.data[0] * centre + lin.lower.c[0]);
                let width = act.apply_f64(centre + w / 2.0) - act.apply_f64(centre - w / 2.0);
                assert!(gap >= 0.0 && gap <= w * w, "{act} at {centre} {}: gap {gap}", method.name());
                assert!(gap <= width / 100.0, "{act} at {centre} {}: gap {gap} vs width {width}", method.name());
            }
        }
    }
}

/// Deep smooth networks on small boxes: CROWN's boxes are well inside IBP's (IBP loses the
/// correlation between neurons at every layer, a sound linear relaxation keeps it to first order).
/// Weights uniform in `[-1, 1]`, so the box stays small relative to the curvature. alpha-CROWN
/// is tighter still (measured: tanh 0.1846 vs CROWN 0.1849 vs IBP 2.58 summed widths; sigmoid
/// 0.004402 vs 0.004402 vs 0.0819).
#[test]
fn crown_is_much_tighter_than_ibp_on_small_boxes_of_deep_smooth_networks() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xdee9);
    for act in [Activation::Tanh, Activation::Sigmoid] {
        let (mut crown_total, mut ibp_total, mut alpha_total) = (0.0, 0.0, 0.0);
        for _ in 0..20 {
            let sizes = [3, 8, 8, 8, 2];
            let layers = sizes
                .windows(2)
                .enumerate()
                .map(|(l, w)| {
                    Layer::Dense(DenseLayer {
                        weights: Matrix::new(
                            w[1],
                            w[0],
                            (0..w[0] * w[1]).map(|_| rng.random_range(-1.0..1.0)).collect(),
                        ),
                        bias: (0..w[1]).map(|_| rng.random_range(-0.5..0.5)).collect(),
                        activation: if l + 2 < sizes.len() { act } else { Activation::Identity },
                    })
                })
                .collect();
            let net = Network::new("inline:deep", layers).unwrap();
            let centre: Vec<f64> = (0..3).map(|_| rng.random_range(-1.0..1.0)).collect();
            let b = InputBox::new(centre.iter().map(|c| c - 1e-3).collect(), centre.iter().map(|c| c + 1e-3).collect());
            let ibp = bound(&net, &b, &Method::Ibp).unwrap();
            let crown = bound(&net, &b, &Method::Crown).unwrap();
            let alpha = bound(&net, &b, &"alpha-crown".parse().unwrap()).unwrap();
            for i in 0..2 {
                ibp_total += ibp.hi[i] - ibp.lo[i];
                crown_total += crown.hi[i] - crown.lo[i];
                alpha_total += alpha.hi[i] - alpha.lo[i];
            }
        }
        eprintln!("{act}: alpha-CROWN widths {alpha_total}, CROWN {crown_total}, IBP {ibp_total}");
        // The slope search finds something: a broken gradient would leave CROWN's lines.
        assert!(alpha_total < crown_total, "{act}: alpha-CROWN {alpha_total} vs CROWN {crown_total}");
        assert!(crown_total < 0.5 * ibp_total, "{act}: CROWN widths {crown_total} vs IBP {ibp_total}");
    }
}
