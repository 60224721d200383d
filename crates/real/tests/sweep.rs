//! 10^6 arguments per function (the integer powers share theirs among six exponents): every f64
//! enclosure contains MPFR's 256-bit enclosure of the exact value and lies within its allowed ulps
//! of the correctly rounded directed values; on every 64th argument the 256-bit `BigInterval`
//! overlaps the f64 enclosure (two independent libraries, CORE-MATH and MPFR, agreeing).
//!
//! The sweep is deterministic (one ChaCha8 seed per function). A mutant test shows the check
//! catches enclosures shifted inward or widened by one ulp more than allowed.

mod common;

use common::{Case, REFERENCE_BITS, argument, cases, check, overlaps, rng};
use trestle_real::{BigInterval, Enclosure};

const POINTS: usize = 1_000_000;
const POWI_EXPONENTS: usize = 6;

fn case(name: &str) -> Case {
    cases().into_iter().find(|c| c.name == name).expect("a case of that name")
}

fn sweep_case(case: &Case, points: usize, seed: u64) {
    let mut rng = rng(seed);
    let mut failures = Vec::new();
    let mut worst = 0;
    let mut worst_at = 0.0;
    for i in 0..points {
        let x = argument(case, &mut rng, i);
        let e = match (case.enclose)(x) {
            Ok(e) => e,
            Err(err) => {
                failures.push(format!("{}({x:e}) inside the domain refused: {err}", case.name));
                continue;
            }
        };
        let reference = (case.reference)(x, REFERENCE_BITS);
        match check(case.name, x, e, &reference, case.max_ulps) {
            Ok(beyond) if beyond > worst => (worst, worst_at) = (beyond, x),
            Ok(_) => {}
            Err(message) => failures.push(message),
        }
        if i % 64 == 0 {
            let point = BigInterval::from_f64(x, REFERENCE_BITS).unwrap();
            match (case.big)(&point) {
                Ok(big) if overlaps(&big, e) => {}
                Ok(big) => {
                    failures.push(format!("{}({x:e}): BigInterval {big} misses the f64 enclosure {e}", case.name))
                }
                Err(err) => failures.push(format!("{}({x:e}): BigInterval refused: {err}", case.name)),
            }
        }
        if failures.len() >= 20 {
            break;
        }
    }
    assert!(failures.is_empty(), "{} failure(s), first ones:\n{}", failures.len(), failures.join("\n"));
    eprintln!(
        "{}: {points} arguments, ends at most {worst} ulp(s) beyond the directed roundings (at {worst_at:e})",
        case.name
    );
}

fn sweep(name: &str, seed: u64) {
    sweep_case(&case(name), POINTS, seed);
}

#[test]
fn sweep_exp() {
    sweep("exp", 1);
}

#[test]
fn sweep_expm1() {
    sweep("expm1", 2);
}

#[test]
fn sweep_log() {
    sweep("log", 3);
}

#[test]
fn sweep_log1p() {
    sweep("log1p", 4);
}

#[test]
fn sweep_sqrt() {
    sweep("sqrt", 5);
}

#[test]
fn sweep_sin() {
    sweep("sin", 6);
}

#[test]
fn sweep_cos() {
    sweep("cos", 7);
}

#[test]
fn sweep_tan() {
    sweep("tan", 8);
}

#[test]
fn sweep_atan() {
    sweep("atan", 9);
}

#[test]
fn sweep_tanh() {
    sweep("tanh", 10);
}

#[test]
fn sweep_sigmoid() {
    sweep("sigmoid", 11);
}

#[test]
fn sweep_tanh_derivative() {
    sweep("tanh_derivative", 12);
}

#[test]
fn sweep_sigmoid_derivative() {
    sweep("sigmoid_derivative", 13);
}

#[test]
fn sweep_powi() {
    let powers: Vec<Case> = cases().into_iter().filter(|c| c.name.starts_with("powi(")).collect();
    assert_eq!(powers.len(), POWI_EXPONENTS);
    for (k, case) in powers.iter().enumerate() {
        sweep_case(case, POINTS.div_ceil(POWI_EXPONENTS), 100 + k as u64);
    }
}

/// The check itself can fail: on a sample of every function, each end moved inward by one ulp
/// more than the allowed slack is caught as unsound at every argument, and the lower end moved
/// outward the same way is caught as too wide.
#[test]
fn the_check_catches_shifted_and_widened_bounds() {
    let step = |x: f64, n: u32, up: bool| (0..n).fold(x, |y, _| if up { y.next_up() } else { y.next_down() });
    for case in cases() {
        let mut rng = rng(999);
        for i in 0..400 {
            let x = argument(&case, &mut rng, i);
            let e = (case.enclose)(x).unwrap();
            let reference = (case.reference)(x, REFERENCE_BITS);
            check(case.name, x, e, &reference, case.max_ulps).unwrap();
            let moved = common::allowed_ulps(case.max_ulps, &reference) + 2;
            if e.lo.is_finite() {
                let raised = step(e.lo, moved, true);
                let mutant = Enclosure { lo: raised, hi: e.hi.max(raised) };
                assert!(
                    check(case.name, x, mutant, &reference, case.max_ulps).is_err(),
                    "{} {x:e}: raised lo passed",
                    case.name
                );
                let widened = Enclosure { lo: step(e.lo, moved, false), hi: e.hi };
                if widened.lo.is_finite() {
                    assert!(
                        check(case.name, x, widened, &reference, case.max_ulps).is_err(),
                        "{} {x:e}: widened lo passed",
                        case.name
                    );
                }
            }
            if e.hi.is_finite() {
                let lowered = step(e.hi, moved, false);
                let mutant = Enclosure { lo: e.lo.min(lowered), hi: lowered };
                assert!(
                    check(case.name, x, mutant, &reference, case.max_ulps).is_err(),
                    "{} {x:e}: lowered hi passed",
                    case.name
                );
            }
        }
    }
}
