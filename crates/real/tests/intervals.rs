//! The interval versions, f64 and `BigInterval`, on random intervals (narrow to wide, near 0 and
//! at 1e300): every sampled point's value (MPFR, 256 bits) lies inside; monotone functions give
//! exactly the point enclosures of their ends; sin and cos reach ±1 exactly when an extremum lies
//! inside and otherwise stay within their ends' enclosures; tan is refused exactly when a pole lies
//! inside. Where an extremum or a pole lies is decided independently of the crate's quadrant
//! reduction: the first `pi/2 + k pi` (or `k pi`) at or above the lower end, from MPFR at 3000 bits.

mod common;

use common::{Case, REFERENCE_BITS, cases, rng};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rug::Float;
use rug::float::{Constant, Round};
use rug::ops::Pow;
use trestle_real::{BigInterval, Enclosure, ErrorKind, interval, point};

const INTERVALS: usize = 20_000;
const SAMPLES: usize = 8;

/// A random interval: a lower end at one of several scales, a width from 1e-12 to 10.
fn random_interval(rng: &mut ChaCha8Rng, domain_min: f64) -> (f64, f64) {
    let scale = [1.0, 10.0, 1e3, 1e8, 1e15, 1e300][rng.random_range(0..6)];
    let lo = (rng.random_range(-1.0f64..1.0) * scale).max(domain_min);
    let width = 10f64.powf(rng.random_range(-12.0..1.0));
    (lo, lo + width)
}

/// Points of `[lo, hi]`: both ends and random interior points.
fn samples(rng: &mut ChaCha8Rng, lo: f64, hi: f64) -> Vec<f64> {
    let mut xs = vec![lo, hi];
    xs.extend((0..SAMPLES).map(|_| rng.random_range(lo..=hi)));
    xs
}

fn contains_reference(e: &Enclosure, r: &(Float, Float)) -> bool {
    r.0 >= e.lo && r.1 <= e.hi
}

/// Whether `offset + k period` lies in `[lo, hi]` for some integer k (MPFR at 3000 bits: enough
/// for any f64 end, and independent of the crate's reduction).
fn has_point(lo: f64, hi: f64, offset_halves: u32, period_halves: u32) -> bool {
    let p = 3000;
    let half_pi = Float::with_val(p, Constant::Pi) / 2u32;
    let offset = Float::with_val(p, &half_pi * offset_halves);
    let period = Float::with_val(p, &half_pi * period_halves);
    let k = ((Float::with_val(p, lo) - &offset) / &period).ceil();
    let first = offset + k * period;
    first <= hi
}

fn case(name: &str) -> Case {
    cases().into_iter().find(|c| c.name == name).unwrap()
}

#[test]
fn monotone_functions_are_enclosed_by_their_ends() {
    type IntervalFn = fn(f64, f64) -> Result<Enclosure, trestle_real::RealError>;
    let functions: Vec<(&str, IntervalFn, f64)> = vec![
        ("exp", |a, b| Ok(interval::exp(a, b)), f64::MIN),
        ("expm1", |a, b| Ok(interval::expm1(a, b)), f64::MIN),
        ("tanh", |a, b| Ok(interval::tanh(a, b)), f64::MIN),
        ("sigmoid", |a, b| Ok(interval::sigmoid(a, b)), f64::MIN),
        ("atan", |a, b| Ok(interval::atan(a, b)), f64::MIN),
        ("log", interval::log, 1e-300),
        ("log1p", interval::log1p, -0.999),
        ("sqrt", interval::sqrt, 0.0),
    ];
    for (name, f, domain_min) in functions {
        let c = case(name);
        let mut rng = rng(7);
        for _ in 0..INTERVALS {
            let (lo, hi) = random_interval(&mut rng, domain_min);
            let e = f(lo, hi).unwrap();
            let ends = ((c.enclose)(lo).unwrap().lo, (c.enclose)(hi).unwrap().hi);
            assert_eq!((e.lo, e.hi), ends, "{name}([{lo:e}, {hi:e}])");
            let big = (c.big)(&BigInterval::from_f64_ends(lo, hi, REFERENCE_BITS).unwrap()).unwrap();
            for x in samples(&mut rng, lo, hi) {
                let r = (c.reference)(x, REFERENCE_BITS);
                assert!(contains_reference(&e, &r), "{name}([{lo:e}, {hi:e}]) = {e} misses {name}({x:e})");
                assert!(
                    *big.lo() <= r.0 && *big.hi() >= r.1,
                    "big {name}([{lo:e}, {hi:e}]) = {big} misses {name}({x:e})"
                );
            }
        }
    }
}

#[test]
fn sin_and_cos_reach_their_extrema_exactly_when_inside() {
    // sin: maxima at pi/2 + 2k pi (1 half, period 4 halves), minima at 3 pi/2 + 2k pi;
    // cos: maxima at 2k pi, minima at pi + 2k pi.
    type Periodic = (&'static str, fn(f64, f64) -> Enclosure, u32, u32);
    let functions: [Periodic; 2] = [("sin", interval::sin, 1, 3), ("cos", interval::cos, 0, 2)];
    for (name, f, max_at, min_at) in functions {
        let c = case(name);
        let mut rng = rng(8);
        let (mut with_max, mut without) = (0, 0);
        for _ in 0..INTERVALS {
            let (lo, hi) = random_interval(&mut rng, f64::MIN);
            let e = f(lo, hi);
            let (has_max, has_min) = (has_point(lo, hi, max_at, 4), has_point(lo, hi, min_at, 4));
            let ends = point_hull(&c, lo, hi);
            assert_eq!(e.hi == 1.0, has_max || ends.hi == 1.0, "{name}([{lo:e}, {hi:e}]) = {e}, max inside: {has_max}");
            assert_eq!(
                e.lo == -1.0,
                has_min || ends.lo == -1.0,
                "{name}([{lo:e}, {hi:e}]) = {e}, min inside: {has_min}"
            );
            if !has_max {
                assert_eq!(e.hi, ends.hi, "{name}([{lo:e}, {hi:e}]) wider than its ends");
            }
            if !has_min {
                assert_eq!(e.lo, ends.lo, "{name}([{lo:e}, {hi:e}]) wider than its ends");
            }
            let big = (c.big)(&BigInterval::from_f64_ends(lo, hi, REFERENCE_BITS).unwrap()).unwrap();
            let at = |x: f64| (c.big)(&BigInterval::from_f64(x, REFERENCE_BITS).unwrap()).unwrap();
            let big_ends = at(lo).hull(&at(hi));
            if has_max {
                assert!(*big.hi() == 1, "big {name}([{lo:e}, {hi:e}]) = {big} misses its maximum");
            } else {
                assert!(big.hi() == big_ends.hi(), "big {name}([{lo:e}, {hi:e}]) = {big} wider than its ends");
            }
            if has_min {
                assert!(*big.lo() == -1, "big {name}([{lo:e}, {hi:e}]) = {big} misses its minimum");
            } else {
                assert!(big.lo() == big_ends.lo(), "big {name}([{lo:e}, {hi:e}]) = {big} wider than its ends");
            }
            for x in samples(&mut rng, lo, hi) {
                let r = (c.reference)(x, REFERENCE_BITS);
                assert!(contains_reference(&e, &r), "{name}([{lo:e}, {hi:e}]) = {e} misses {name}({x:e})");
                assert!(*big.lo() <= r.0 && *big.hi() >= r.1, "big {name}([{lo:e}, {hi:e}]) misses {name}({x:e})");
            }
            if has_max { with_max += 1 } else { without += 1 }
        }
        assert!(
            with_max > INTERVALS / 40 && without > INTERVALS / 40,
            "{name}: {with_max} with a maximum, {without} without"
        );
    }
}

fn point_hull(c: &Case, lo: f64, hi: f64) -> Enclosure {
    (c.enclose)(lo).unwrap().hull(&(c.enclose)(hi).unwrap())
}

#[test]
fn tan_is_refused_exactly_at_poles() {
    let c = case("tan");
    let mut rng = rng(9);
    let (mut poles, mut fine) = (0, 0);
    for _ in 0..INTERVALS {
        let (lo, hi) = random_interval(&mut rng, f64::MIN);
        let pole = has_point(lo, hi, 1, 2);
        let big = BigInterval::from_f64_ends(lo, hi, REFERENCE_BITS).unwrap().tan();
        match interval::tan(lo, hi) {
            Err(e) => {
                assert!(pole && e.kind == ErrorKind::Pole, "tan([{lo:e}, {hi:e}]) refused: {e}");
                assert_eq!(big.unwrap_err().kind, ErrorKind::Pole);
                poles += 1;
            }
            Ok(e) => {
                assert!(!pole, "tan([{lo:e}, {hi:e}]) = {e} over a pole");
                assert_eq!((e.lo, e.hi), ((c.enclose)(lo).unwrap().lo, (c.enclose)(hi).unwrap().hi));
                let big = big.unwrap();
                for x in samples(&mut rng, lo, hi) {
                    let r = (c.reference)(x, REFERENCE_BITS);
                    assert!(contains_reference(&e, &r), "tan([{lo:e}, {hi:e}]) = {e} misses tan({x:e})");
                    assert!(*big.lo() <= r.0 && *big.hi() >= r.1);
                }
                fine += 1;
            }
        }
    }
    assert!(poles > INTERVALS / 20 && fine > INTERVALS / 20, "{poles} with poles, {fine} without");
}

#[test]
fn powers_and_derivatives_contain_every_sampled_value() {
    let mut rng = rng(10);
    for n in [-5, -2, -1, 0, 1, 2, 3, 4, 7] {
        for _ in 0..INTERVALS / 10 {
            let lo = rng.random_range(-4.0..4.0);
            let hi = lo + rng.random_range(0.0..4.0);
            let big = BigInterval::from_f64_ends(lo, hi, REFERENCE_BITS).unwrap().powi(n);
            match interval::powi(lo, hi, n) {
                Err(e) => {
                    assert!(n < 0 && lo <= 0.0 && hi >= 0.0 && e.kind == ErrorKind::OutsideDomain);
                    assert!(big.is_err());
                }
                Ok(e) => {
                    let big = big.unwrap();
                    for x in samples(&mut rng, lo, hi) {
                        // Exact for n >= 0 (at most 7 * 53 bits); within 2^-4000 for n < 0.
                        let exact = Float::with_val(4000, x).pow(n);
                        assert!(exact >= e.lo && exact <= e.hi, "powi([{lo}, {hi}], {n}) = {e} misses {x}^{n}");
                        assert!(*big.lo() <= exact && *big.hi() >= exact);
                    }
                    if n > 0 && n % 2 == 0 && lo < 0.0 && hi > 0.0 {
                        assert_eq!(e.lo, 0.0);
                    }
                }
            }
        }
    }
    for (name, f, peak) in [
        ("tanh_derivative", interval::tanh_derivative as fn(f64, f64) -> Enclosure, 1.0),
        ("sigmoid_derivative", interval::sigmoid_derivative, 0.25),
    ] {
        let c = case(name);
        for _ in 0..INTERVALS / 4 {
            let (lo, hi) = random_interval(&mut rng, f64::MIN);
            let e = f(lo, hi);
            assert_eq!(e.hi == peak, lo <= 0.0 && hi >= 0.0, "{name}([{lo:e}, {hi:e}]) = {e}");
            for x in samples(&mut rng, lo, hi) {
                let r = (c.reference)(x, REFERENCE_BITS);
                assert!(contains_reference(&e, &r), "{name}([{lo:e}, {hi:e}]) = {e} misses {name}({x:e})");
            }
        }
    }
}

#[test]
fn arithmetic_of_big_intervals_encloses_sampled_results() {
    let mut rng = rng(11);
    for _ in 0..INTERVALS / 4 {
        let (a, b) = (random_interval(&mut rng, f64::MIN), random_interval(&mut rng, f64::MIN));
        let (x, y) =
            (BigInterval::from_f64_ends(a.0, a.1, 128).unwrap(), BigInterval::from_f64_ends(b.0, b.1, 128).unwrap());
        let (sum, difference, product) = (x.add(&y), x.sub(&y), x.mul(&y));
        let quotient = x.div(&y);
        for _ in 0..SAMPLES {
            let (u, v) = (rng.random_range(a.0..=a.1), rng.random_range(b.0..=b.1));
            let (u, v) = (Float::with_val(4000, u), Float::with_val(4000, v));
            let inside = |i: &BigInterval, value: Float| *i.lo() <= value && *i.hi() >= value;
            assert!(inside(&sum, Float::with_val(4000, &u + &v)));
            assert!(inside(&difference, Float::with_val(4000, &u - &v)));
            assert!(inside(&product, Float::with_val(4000, &u * &v)));
            if let Ok(q) = &quotient {
                let exact_enough = Float::with_val_round(4000, &u / &v, Round::Down).0;
                assert!(*q.lo() <= exact_enough && *q.hi() >= exact_enough);
            } else {
                assert!(b.0 <= 0.0 && b.1 >= 0.0);
            }
        }
    }
}

#[test]
fn a_wrong_extremum_rule_would_be_caught() {
    // The independent oracle of the tests above disagrees with a sin that forgot its maxima.
    let forgetful = |lo: f64, hi: f64| point::sin(lo).hull(&point::sin(hi));
    let caught = (0..200).map(|i| (i as f64 * 0.1, i as f64 * 0.1 + 0.5)).any(|(lo, hi)| {
        let has_max = has_point(lo, hi, 1, 4);
        (forgetful(lo, hi).hi == 1.0) != has_max
    });
    assert!(caught);
}
