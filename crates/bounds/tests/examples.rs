//! Hand-computed bounds, edge-case boxes, input errors and API contracts.

mod common;

use common::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use trestle_bounds::{AlphaConfig, BoundsError, InputBox, Method, bound, bound_affine_of, bound_batch};
use trestle_ir::network::{Activation, DenseLayer, Layer, Matrix, Network};

/// `y = relu(x1 + x2 + 0.5) - relu(x1 - x2)` on `[-1, 1]^2`.
fn two_two_one() -> Network {
    Network::new(
        "inline:2-2-1",
        vec![
            Layer::Dense(DenseLayer {
                weights: Matrix::from_rows(&[vec![1.0, 1.0], vec![1.0, -1.0]]),
                bias: vec![0.5, 0.0],
                activation: Activation::Relu,
            }),
            Layer::Dense(DenseLayer {
                weights: Matrix::from_rows(&[vec![1.0, -1.0]]),
                bias: vec![0.0],
                activation: Activation::Identity,
            }),
        ],
    )
    .unwrap()
}

fn unit_box() -> InputBox {
    InputBox::new(vec![-1.0, -1.0], vec![1.0, 1.0])
}

/// `v` is at least `exact` and within `1e-12` of it.
fn just_above(v: f64, exact: f64) -> bool {
    v >= exact && v - exact < 1e-12
}

#[test]
fn hand_computed_crown_bounds_of_a_2_2_1_network() {
    // p1 = x1 + x2 + 0.5 in [-1.5, 2.5]: upper slope 2.5/4 = 0.625, intercept 0.9375, adaptive lower
    // slope 1 (2.5 > 1.5). p2 = x1 - x2 in [-2, 2]: slope 0.5, intercept 1, lower slope 0 (2 > 2 fails).
    // Upper of y: h1 (coefficient +1) by 0.625 p1 + 0.9375, h2 (-1) by 0: y <= 0.625 x1 + 0.625 x2 + 1.25.
    // Upper of -y: h1 (-1) by p1, h2 (+1) by 0.5 p2 + 1: -y <= -0.5 x1 - 1.5 x2 + 0.5.
    let out = bound(&two_two_one(), &unit_box(), &Method::Crown).unwrap();
    let linear = out.linear.unwrap();
    assert_eq!(linear.upper.a.data, vec![0.625, 0.625]);
    assert!(just_above(linear.upper.c[0], 1.25), "{}", linear.upper.c[0]);
    assert_eq!(linear.lower.a.data, vec![0.5, 1.5]);
    assert!(just_above(-linear.lower.c[0], 0.5), "{}", linear.lower.c[0]);
    // Concretised: [-2.5, 2.5]; IBP gives [-2, 2.5], so the box keeps IBP's tighter lower end.
    assert!(just_above(out.hi[0], 2.5));
    assert!(just_above(-out.lo[0], 2.0), "{}", out.lo[0]);
    let ibp = bound(&two_two_one(), &unit_box(), &Method::Ibp).unwrap();
    assert!(just_above(-ibp.lo[0], 2.0) && just_above(ibp.hi[0], 2.5));
    assert!(
        linear.lower.min_over(0, &unit_box().lo, &unit_box().hi) < ibp.lo[0] - 0.4,
        "CROWN's linear lower bound is looser here"
    );
}

#[test]
fn alpha_crown_finds_the_better_lower_slope() {
    // The lower bound's relaxation of h1 with slope a gives -y <= |0.5 - a| + |0.5 + a| + 1 - 0.5 a,
    // minimal (1.75) at a = 0.5; CROWN's a = 1 gives 2.5 and IBP 2. The true minimum of y is -1.5.
    let out = bound(&two_two_one(), &unit_box(), &Method::AlphaCrown(AlphaConfig::default())).unwrap();
    let lower = out.linear.unwrap().lower.min_over(0, &unit_box().lo, &unit_box().hi);
    assert!((-1.80..=-1.75).contains(&lower), "{lower}");
    assert!((-1.80..=-1.75).contains(&out.lo[0]), "{}", out.lo[0]);
    let none =
        bound(&two_two_one(), &unit_box(), &Method::AlphaCrown(AlphaConfig { iterations: 0, step_size: 0.5 })).unwrap();
    assert_eq!(none, bound(&two_two_one(), &unit_box(), &Method::Crown).unwrap(), "no steps is CROWN");
}

#[test]
fn a_stored_crown_bound_rechecks_to_exactly_zero() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..20 {
        let sizes = random_sizes(&mut rng);
        let net = network(&mut rng, &sizes);
        let b = random_box(&mut rng, sizes[0]);
        let linear = bound(&net, &b, &Method::Crown).unwrap().linear.unwrap();
        let m = *sizes.last().unwrap();
        for i in 0..m {
            let mut e = Matrix::new(1, m, vec![0.0; m]);
            e.data[i] = 1.0;
            let neg = |row: &[f64]| Matrix::new(1, row.len(), row.iter().map(|v| -v).collect());
            // f_i - A_u x - c_u <= 0.
            let (_, hi) =
                bound_affine_of(&net, &b, &Method::Crown, &e, &neg(linear.upper.a.row(i)), &[-linear.upper.c[i]])
                    .unwrap();
            assert_eq!(hi[0], 0.0);
            // -f_i + A_l x + c_l <= 0.
            let minus_e = neg(&e.data);
            let a_l = Matrix::new(1, sizes[0], linear.lower.a.row(i).to_vec());
            let (_, hi) = bound_affine_of(&net, &b, &Method::Crown, &minus_e, &a_l, &[linear.lower.c[i]]).unwrap();
            assert_eq!(hi[0], 0.0);
        }
    }
}

#[test]
fn degenerate_boxes_give_bounds_within_a_few_ulps_of_the_point() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for _ in 0..60 {
        let sizes = random_sizes(&mut rng);
        let net = network(&mut rng, &sizes);
        let around = random_box(&mut rng, sizes[0]);
        let point = sample_points(&mut rng, &around, 1).pop().unwrap();
        let b = InputBox::new(point.clone(), point.clone());
        let y = exact_output(&net, &point);
        let scale: f64 = y.iter().map(|v| trestle_ir::num::to_f64_nearest(v).abs()).fold(1.0, f64::max);
        for method in METHODS {
            let out = bound(&net, &b, &method.parse().unwrap()).unwrap();
            assert_contains(&out, &exact_vec(&point), &y, method);
            for i in 0..y.len() {
                assert!(
                    out.hi[i] - out.lo[i] <= 1e-12 * scale * 1e3,
                    "{method}: width {} at scale {scale}",
                    out.hi[i] - out.lo[i]
                );
            }
        }
    }
}

#[test]
fn huge_boxes_and_zero_width_dimensions_give_finite_bounds() {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    for _ in 0..30 {
        let sizes = random_sizes(&mut rng);
        let net = network(&mut rng, &sizes);
        let n = sizes[0];
        let b = InputBox::new(
            (0..n).map(|k| if k % 3 == 1 { 0.25 } else { -1e6 }).collect(),
            (0..n).map(|k| if k % 3 == 1 { 0.25 } else { 1e6 }).collect(),
        );
        for method in METHODS {
            let out = bound(&net, &b, &method.parse().unwrap()).unwrap();
            assert!(out.lo.iter().chain(&out.hi).all(|v| v.is_finite()));
            assert!(out.lo.iter().zip(&out.hi).all(|(l, h)| l <= h));
            for point in sample_points(&mut rng, &b, 20) {
                assert_contains(&out, &exact_vec(&point), &exact_output(&net, &point), method);
            }
        }
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    let net = two_two_one();
    let check =
        |b: InputBox| METHODS.iter().map(|m| bound(&net, &b, &m.parse().unwrap()).unwrap_err()).collect::<Vec<_>>();
    assert!(matches!(check(InputBox::new(vec![0.0, 1.0], vec![1.0, 0.5]))[1], BoundsError::Inverted { index: 1, .. }));
    assert!(matches!(
        check(InputBox::new(vec![f64::NAN, 0.0], vec![1.0, 0.0]))[2],
        BoundsError::NotFinite { index: 0, .. }
    ));
    assert!(matches!(check(InputBox::new(vec![0.0, 0.0], vec![f64::INFINITY, 0.0]))[0], BoundsError::NotFinite { .. }));
    assert!(matches!(
        check(InputBox::new(vec![0.0], vec![1.0]))[3],
        BoundsError::Dimension { found: 1, expected: 2, .. }
    ));
    assert!(matches!(check(InputBox::new(vec![0.0, 0.0], vec![1.0]))[1], BoundsError::BoxLengths { .. }));
    assert!(matches!(check(InputBox::new(vec![], vec![]))[0], BoundsError::Dimension { found: 0, .. }));
    // Bounds that would overflow are refused, not returned as infinities or NaN.
    let big = Network::new(
        "inline:big",
        vec![Layer::Dense(DenseLayer {
            weights: Matrix::new(1, 1, vec![1e300]),
            bias: vec![0.0],
            activation: Activation::Relu,
        })],
    )
    .unwrap();
    for m in METHODS {
        let err = bound(&big, &InputBox::new(vec![-1e10], vec![1e10]), &m.parse().unwrap()).unwrap_err();
        assert!(matches!(err, BoundsError::Overflow { .. }), "{m}: {err}");
    }
    // A NaN weight (the IR's fields are public) is caught too.
    let mut nan = two_two_one();
    if let Layer::Dense(d) = &mut nan.layers[1] {
        d.weights.data[0] = f64::NAN;
    }
    for m in METHODS {
        assert!(bound(&nan, &unit_box(), &m.parse().unwrap()).is_err(), "{m}");
    }
    let bad_alpha = Method::AlphaCrown(AlphaConfig { iterations: 3, step_size: -1.0 });
    assert_eq!(bound(&two_two_one(), &unit_box(), &bad_alpha).unwrap_err(), BoundsError::StepSize(-1.0));
    let wrong = Matrix::new(1, 3, vec![0.0; 3]);
    assert!(matches!(
        bound_affine_of(&two_two_one(), &unit_box(), &Method::Crown, &wrong, &Matrix::new(1, 2, vec![0.0; 2]), &[0.0]),
        Err(BoundsError::CoefficientShape { what: "out_coeffs", .. })
    ));
}

#[test]
fn methods_parse_by_name() {
    assert_eq!("ibp".parse::<Method>().unwrap(), Method::Ibp);
    assert_eq!("crown".parse::<Method>().unwrap(), Method::Crown);
    assert_eq!(
        "alpha-crown".parse::<Method>().unwrap(),
        Method::AlphaCrown(AlphaConfig { iterations: 20, step_size: 0.5 })
    );
    assert_eq!("forward".parse::<Method>().unwrap(), Method::Forward);
    assert!(matches!("deeppoly".parse::<Method>(), Err(BoundsError::UnknownMethod(_))));
}

#[test]
fn batches_match_single_calls() {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let net = network(&mut rng, &[3, 16, 16, 2]);
    let boxes: Vec<InputBox> = (0..40).map(|_| random_box(&mut rng, 3)).collect();
    for m in METHODS {
        let method: Method = m.parse().unwrap();
        let batch = bound_batch(&net, &boxes, &method);
        for (b, r) in boxes.iter().zip(batch) {
            assert_eq!(r.unwrap(), bound(&net, b, &method).unwrap(), "{m}");
        }
    }
}
