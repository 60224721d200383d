//! The known hard places of each function, checked against MPFR at 256 bits like the sweep, plus
//! what must hold exactly there: huge arguments reduced right (sin 1e22, the worst case of
//! argument reduction in binary64), exp at its overflow and underflow thresholds (an upper end of
//! +inf is sound, a lower end never above the truth), tanh where it rounds to ±1, signed zeros,
//! subnormals, sigmoid at ±745.

mod common;

use common::{REFERENCE_BITS, cases, check};
use trestle_real::{BigInterval, Enclosure, point};

/// Muller's worst case for the reduction modulo pi/2 in binary64 (Elementary Functions, table of
/// hard cases): 6381956970095103 * 2^797 lies within 2^-60.9 of a multiple of pi/2.
fn muller_worst_case() -> f64 {
    6381956970095103.0 * 2f64.powi(797)
}

fn hard_arguments(name: &str) -> Vec<f64> {
    let tiny = [0.0, -0.0, 5e-324, -5e-324, 1e-310, -2.2250738585072014e-308, 1e-300, -1e-300, 1e-20];
    let huge =
        [1e22, -1e22, muller_worst_case(), -muller_worst_case(), f64::MAX, f64::MIN, 2f64.powi(1023) * 1.5, 1e300];
    let mut xs: Vec<f64> = tiny.to_vec();
    xs.extend(match name {
        "exp" | "expm1" => vec![
            709.782712893384, // largest x with exp(x) finite
            709.782712893384f64.next_up(),
            709.78,
            710.0,
            -708.3964185322641, // exp(x) at the normal/subnormal boundary
            -745.1332191019411, // exp(x) near the smallest subnormal
            -745.1332191019412,
            -745.2,
            -746.0,
            -1e300,
            1e300,
        ],
        "sin" | "cos" | "tan" => {
            let mut v = huge.to_vec();
            v.extend([
                std::f64::consts::FRAC_PI_2,
                std::f64::consts::FRAC_PI_2.next_up(),
                std::f64::consts::PI,
                -std::f64::consts::PI,
                1.0e6 * std::f64::consts::PI,
                355.0, // 355/113 approximates pi
                103_993.0,
            ]);
            v
        }
        "tanh" => vec![20.0, -20.0, 19.061547465398498, 18.714973875118524, 22.0, 40.0, -40.0, 1e300, -1e300],
        "sigmoid" | "sigmoid_derivative" | "tanh_derivative" => {
            vec![745.0, -745.0, 746.0, -746.0, 744.4, -744.4, 36.7, -36.7, 709.0, -709.0, 1e300, -1e300]
        }
        "log" | "log1p" | "sqrt" => vec![1.0, 1.0f64.next_up(), 1.0f64.next_down(), f64::MAX, 2.0, 0.5],
        "atan" => huge.to_vec(),
        _ => vec![f64::MAX, 1e154, -1e154, 1e-154, 2.0, -2.0, 0.5],
    });
    xs
}

#[test]
fn hard_places_are_enclosed_tightly() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in cases() {
        let mut xs = hard_arguments(case.name);
        xs.retain(|&x| case.domain.contains(x) && !(case.name.starts_with("powi(-") && x == 0.0));
        for x in xs {
            let e = (case.enclose)(x).unwrap_or_else(|err| panic!("{}({x:e}) refused: {err}", case.name));
            let reference = (case.reference)(x, REFERENCE_BITS);
            if let Err(message) = check(case.name, x, e, &reference, case.max_ulps) {
                failures.push(message);
            }
            let big = (case.big)(&BigInterval::from_f64(x, REFERENCE_BITS).unwrap()).unwrap();
            if !common::overlaps(&big, e) {
                failures.push(format!("{}({x:e}): BigInterval {big} misses {e}", case.name));
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 300, "only {checked} hard cases");
}

#[test]
fn exact_facts_at_the_extremes() {
    // Overflow: the upper end is +inf, the lower end the largest f64, below the truth.
    assert_eq!(point::exp(710.0), Enclosure { lo: f64::MAX, hi: f64::INFINITY });
    let at_threshold = point::exp(709.782712893384);
    assert!(at_threshold.lo < f64::MAX && at_threshold.lo > 1.79e308);
    // Underflow: the lower end 0 (never above the truth), the upper end positive.
    let under = point::exp(-746.0);
    assert_eq!(under.lo, 0.0);
    assert!(under.hi > 0.0 && under.hi <= 1e-323);
    // tanh rounds to ±1 from about |x| = 19.06: the enclosure touches ±1 but tanh never reaches it.
    for x in [20.0, 40.0, 1e300] {
        let t = point::tanh(x);
        assert!(t.hi == 1.0 && t.lo < 1.0, "tanh({x}) = {t}");
        let t = point::tanh(-x);
        assert!(t.lo == -1.0 && t.hi > -1.0, "tanh(-{x}) = {t}");
    }
    // Signed zeros are kept; tiny arguments give enclosures around themselves.
    assert_eq!(point::tanh(-0.0).hi.to_bits(), (-0.0f64).to_bits());
    assert_eq!(point::sin(-0.0).lo.to_bits(), (-0.0f64).to_bits());
    let t = point::tanh(1e-300);
    assert!(t.contains(1e-300) && t.lo > 0.0);
    let t = point::tanh(5e-324);
    assert!(t.lo == 0.0 && t.hi >= 5e-324);
    // sigmoid at ±745: positive and below 1e-323 on the left, within an ulp of 1 on the right.
    let s = point::sigmoid(-745.0);
    assert!(s.lo >= 0.0 && s.hi > 0.0 && s.hi < 1e-322, "{s}");
    let s = point::sigmoid(745.0);
    assert!(s.hi == 1.0 && s.lo >= 1.0f64.next_down().next_down(), "{s}");
    // sin at 1e22 (the textbook test of argument reduction): -0.8522008497671888...
    let s = point::sin(1e22);
    assert!(s.contains(-0.8522008497671888) && s.width() <= 2.3e-16, "{s}");
    // The worst case of the reduction: |cos| or |sin| there is below 1e-18 in magnitude.
    let x = muller_worst_case();
    let (s, c) = (point::sin(x), point::cos(x));
    assert!(s.hi.abs().min(c.hi.abs()) < 1e-17, "sin {s}, cos {c}");
}
