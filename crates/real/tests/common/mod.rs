//! What the tests share: the functions under test with their MPFR references at 256 bits, the
//! deterministic argument sweeps, and the one containment-and-tightness check every test uses.
//!
//! The reference of each function is MPFR at `REFERENCE_BITS`, correctly rounded to nearest and
//! then widened by one 256-bit ulp each way: an enclosure of the exact value at least as precise
//! as any claim checked against it (the f64 enclosures are ~2^-52 wide).

#![allow(dead_code)]

use std::cmp::Ordering;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rug::Float;
use rug::float::Round;
use rug::ops::PowAssignRound;
use trestle_real::{BigInterval, Enclosure, RealError, point};

pub const REFERENCE_BITS: u32 = 256;

/// Where a function is defined (the sweeps draw only there; domain errors are tested apart).
#[derive(Clone, Copy, PartialEq)]
pub enum Domain {
    All,
    NonNegative,
    Positive,
    AboveMinusOne,
}

impl Domain {
    pub fn contains(self, x: f64) -> bool {
        match self {
            Domain::All => !x.is_nan(),
            Domain::NonNegative => x >= 0.0,
            Domain::Positive => x > 0.0,
            Domain::AboveMinusOne => x > -1.0,
        }
    }
}

/// A function under test.
pub struct Case {
    pub name: &'static str,
    /// The f64 enclosure under test.
    pub enclose: fn(f64) -> Result<Enclosure, RealError>,
    /// The reference enclosure at `prec` bits of the exact value at a finite argument.
    pub reference: fn(f64, u32) -> (Float, Float),
    /// The high-precision interval version.
    pub big: fn(&BigInterval) -> Result<BigInterval, RealError>,
    /// How many ulps each end may lie beyond the correctly rounded directed value: 1 for the
    /// functions CORE-MATH computes directly, more for the compositions (sigmoid, derivatives).
    pub max_ulps: u32,
    pub domain: Domain,
    /// Where the function does something (uniform draws).
    pub core: (f64, f64),
    /// Arguments near this function's hard places (overflow thresholds, poles, multiples of pi/2).
    pub special: fn(&mut ChaCha8Rng) -> f64,
}

/// MPFR's round-to-nearest value `y` and the side the exact value lies on (MPFR's ternary value:
/// `Less` when `y` is below it): the exact value as a point, or `y` and its neighbour on that side.
fn around(y: Float, ternary: Ordering) -> (Float, Float) {
    let mut other = y.clone();
    match ternary {
        Ordering::Equal => (y, other),
        Ordering::Less => {
            other.next_up();
            (y, other)
        }
        Ordering::Greater => {
            other.next_down();
            (other, y)
        }
    }
}

fn mpfr(x: f64, prec: u32, f: fn(&mut Float, Round) -> Ordering) -> (Float, Float) {
    let mut y = Float::with_val(prec, x);
    let ternary = f(&mut y, Round::Nearest);
    around(y, ternary)
}

/// 1/(1 + e^-x) with each end rounded outward through every step.
fn sigmoid_reference(x: f64, prec: u32) -> (Float, Float) {
    let end = |round: Round, inner: Round| {
        let mut e = Float::with_val(prec, -x);
        e.exp_round(inner);
        let den = Float::with_val_round(prec, &e + 1u32, inner).0;
        Float::with_val_round(prec, 1 / &den, round).0
    };
    (end(Round::Down, Round::Up), end(Round::Up, Round::Down))
}

/// `1 / (scale (offset + cosh x)^power)` rounded outward: tanh' = 1/cosh^2, sigmoid' =
/// 1/(2 (1 + cosh)).
fn cosh_reciprocal(x: f64, prec: u32, offset: u32, scale: u32, square: bool) -> (Float, Float) {
    let end = |round: Round, inner: Round| {
        let mut c = Float::with_val(prec, x);
        c.cosh_round(inner);
        let mut d = Float::with_val_round(prec, &c + offset, inner).0;
        if square {
            d = Float::with_val_round(prec, &d * &d, inner).0;
        }
        d = Float::with_val_round(prec, &d * scale, inner).0;
        Float::with_val_round(prec, 1 / &d, round).0
    };
    (end(Round::Down, Round::Up), end(Round::Up, Round::Down))
}

fn powi_reference(x: f64, n: i32, prec: u32) -> (Float, Float) {
    let mut y = Float::with_val(prec, x);
    let ternary = y.pow_assign_round(n, Round::Nearest);
    around(y, ternary)
}

fn ok(e: Enclosure) -> Result<Enclosure, RealError> {
    Ok(e)
}

fn uniform(rng: &mut ChaCha8Rng, lo: f64, hi: f64) -> f64 {
    rng.random_range(lo..=hi)
}

/// An f64 a few ulps from `x`.
fn jitter(rng: &mut ChaCha8Rng, x: f64) -> f64 {
    let mut y = x;
    for _ in 0..rng.random_range(0..4) {
        y = if rng.random_bool(0.5) { y.next_up() } else { y.next_down() };
    }
    y
}

/// Near a multiple of pi/2 (k up to 2^40, the f64 fast path of the reduction and beyond).
fn near_half_pi_multiple(rng: &mut ChaCha8Rng) -> f64 {
    let bits = rng.random_range(1..42);
    let k = rng.random_range(1i64..(1 << bits)) as f64;
    let x = Float::with_val(128, rug::float::Constant::Pi) * k / 2u32;
    let x = if rng.random_bool(0.5) { x.to_f64() } else { -x.to_f64() };
    jitter(rng, x)
}

fn near_zero(rng: &mut ChaCha8Rng) -> f64 {
    let x = 2f64.powi(rng.random_range(-1074..-20)) * rng.random_range(1.0..2.0);
    if rng.random_bool(0.5) { x } else { -x }
}

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "exp",
            enclose: |x| ok(point::exp(x)),
            reference: |x, p| mpfr(x, p, Float::exp_round),
            big: |x| Ok(x.exp()),
            max_ulps: 1,
            domain: Domain::All,
            core: (-745.2, 709.8),
            special: |r| match r.random_range(0..3) {
                0 => jitter(r, 709.782712893384),
                1 => jitter(r, -745.1332191019411),
                _ => near_zero(r),
            },
        },
        Case {
            name: "expm1",
            enclose: |x| ok(point::expm1(x)),
            reference: |x, p| mpfr(x, p, Float::exp_m1_round),
            big: |x| Ok(x.expm1()),
            max_ulps: 1,
            domain: Domain::All,
            core: (-40.0, 709.8),
            special: |r| if r.random_bool(0.5) { near_zero(r) } else { jitter(r, 709.782712893384) },
        },
        Case {
            name: "log",
            enclose: point::log,
            reference: |x, p| mpfr(x, p, Float::ln_round),
            big: |x| x.log(),
            max_ulps: 1,
            domain: Domain::Positive,
            core: (1e-3, 1e3),
            special: |r| if r.random_bool(0.5) { jitter(r, 1.0) } else { near_zero(r).abs() },
        },
        Case {
            name: "log1p",
            enclose: point::log1p,
            reference: |x, p| mpfr(x, p, Float::ln_1p_round),
            big: |x| x.log1p(),
            max_ulps: 1,
            domain: Domain::AboveMinusOne,
            core: (-0.999, 1e3),
            special: |r| if r.random_bool(0.5) { jitter(r, -1.0).max((-1.0f64).next_up()) } else { near_zero(r) },
        },
        Case {
            name: "sqrt",
            enclose: point::sqrt,
            reference: |x, p| mpfr(x, p, Float::sqrt_round),
            big: |x| x.sqrt(),
            max_ulps: 1,
            domain: Domain::NonNegative,
            core: (0.0, 1e6),
            special: |r| {
                // Exact squares and their neighbours.
                let s = r.random_range(1u64..(1 << 26)) as f64;
                jitter(r, s * s)
            },
        },
        Case {
            name: "sin",
            enclose: |x| ok(point::sin(x)),
            reference: |x, p| mpfr(x, p, Float::sin_round),
            big: |x| Ok(x.sin()),
            max_ulps: 1,
            domain: Domain::All,
            core: (-10.0, 10.0),
            special: near_half_pi_multiple,
        },
        Case {
            name: "cos",
            enclose: |x| ok(point::cos(x)),
            reference: |x, p| mpfr(x, p, Float::cos_round),
            big: |x| Ok(x.cos()),
            max_ulps: 1,
            domain: Domain::All,
            core: (-10.0, 10.0),
            special: near_half_pi_multiple,
        },
        Case {
            name: "tan",
            enclose: point::tan,
            reference: |x, p| mpfr(x, p, Float::tan_round),
            big: |x| x.tan(),
            max_ulps: 1,
            domain: Domain::All,
            core: (-1.57, 1.57),
            special: near_half_pi_multiple,
        },
        Case {
            name: "atan",
            enclose: |x| ok(point::atan(x)),
            reference: |x, p| mpfr(x, p, Float::atan_round),
            big: |x| Ok(x.atan()),
            max_ulps: 1,
            domain: Domain::All,
            core: (-100.0, 100.0),
            special: near_zero,
        },
        Case {
            name: "tanh",
            enclose: |x| ok(point::tanh(x)),
            reference: |x, p| mpfr(x, p, Float::tanh_round),
            big: |x| Ok(x.tanh()),
            max_ulps: 1,
            domain: Domain::All,
            core: (-20.0, 20.0),
            special: |r| {
                if r.random_bool(0.5) {
                    near_zero(r)
                } else {
                    uniform(r, 18.0, 40.0) * if r.random_bool(0.5) { 1.0 } else { -1.0 }
                }
            },
        },
        Case {
            name: "sigmoid",
            enclose: |x| ok(point::sigmoid(x)),
            reference: sigmoid_reference,
            big: |x| Ok(x.sigmoid()),
            max_ulps: 8,
            domain: Domain::All,
            core: (-50.0, 50.0),
            special: |r| match r.random_range(0..3) {
                0 => jitter(r, -745.0) + uniform(r, -1.0, 1.0),
                1 => uniform(r, 36.0, 745.0),
                _ => near_zero(r),
            },
        },
        Case {
            name: "tanh_derivative",
            enclose: |x| ok(point::tanh_derivative(x)),
            reference: |x, p| cosh_reciprocal(x, p, 0, 1, true),
            big: |x| {
                // 1 - tanh^2 at high precision, compared for overlap only.
                let t = x.tanh();
                let one = BigInterval::from_f64(1.0, x.precision()).unwrap();
                Ok(one.sub(&t.powi(2)?))
            },
            max_ulps: 8,
            domain: Domain::All,
            core: (-20.0, 20.0),
            special: |r| if r.random_bool(0.5) { near_zero(r) } else { uniform(r, 18.0, 720.0) },
        },
        Case {
            name: "sigmoid_derivative",
            enclose: |x| ok(point::sigmoid_derivative(x)),
            reference: |x, p| cosh_reciprocal(x, p, 1, 2, false),
            big: |x| {
                let s = x.sigmoid();
                let one = BigInterval::from_f64(1.0, x.precision()).unwrap();
                Ok(s.mul(&one.sub(&s)))
            },
            max_ulps: 8,
            domain: Domain::All,
            core: (-40.0, 40.0),
            special: |r| if r.random_bool(0.5) { near_zero(r) } else { uniform(r, 36.0, 745.0) },
        },
        powi_case("powi(2)", 2, |x| point::powi(x, 2), |x| x.powi(2)),
        powi_case("powi(3)", 3, |x| point::powi(x, 3), |x| x.powi(3)),
        powi_case("powi(7)", 7, |x| point::powi(x, 7), |x| x.powi(7)),
        powi_case("powi(-1)", -1, |x| point::powi(x, -1), |x| x.powi(-1)),
        powi_case("powi(-2)", -2, |x| point::powi(x, -2), |x| x.powi(-2)),
        powi_case("powi(-5)", -5, |x| point::powi(x, -5), |x| x.powi(-5)),
    ]
}

fn powi_case(
    name: &'static str,
    n: i32,
    enclose: fn(f64) -> Result<Enclosure, RealError>,
    big: fn(&BigInterval) -> Result<BigInterval, RealError>,
) -> Case {
    let reference: fn(f64, u32) -> (Float, Float) = match n {
        2 => |x, p| powi_reference(x, 2, p),
        3 => |x, p| powi_reference(x, 3, p),
        7 => |x, p| powi_reference(x, 7, p),
        -1 => |x, p| powi_reference(x, -1, p),
        -2 => |x, p| powi_reference(x, -2, p),
        _ => |x, p| powi_reference(x, -5, p),
    };
    Case {
        name,
        enclose,
        reference,
        big,
        max_ulps: 1,
        domain: Domain::All,
        core: (-100.0, 100.0),
        special: |r| if r.random_bool(0.5) { near_zero(r) } else { uniform(r, -1e40, 1e40) },
    }
}

/// The `i`-th argument of a case's deterministic sweep: a quarter each of uniform draws over its
/// core range, random bit patterns (every magnitude, subnormals and huge values), log-uniform
/// magnitudes with either sign, and its special places; always inside the domain, never 0 for
/// functions undefined there.
pub fn argument(case: &Case, rng: &mut ChaCha8Rng, i: usize) -> f64 {
    loop {
        let x = match i % 4 {
            0 => uniform(rng, case.core.0, case.core.1),
            1 => f64::from_bits(rng.random::<u64>()),
            2 => {
                let m = 2f64.powi(rng.random_range(-1074..1024)) * rng.random_range(1.0..2.0);
                if rng.random_bool(0.5) { m } else { -m }
            }
            _ => (case.special)(rng),
        };
        let x = match case.domain {
            Domain::NonNegative | Domain::Positive if x < 0.0 => -x,
            _ => x,
        };
        let needs_nonzero = case.name.starts_with("powi(-");
        if x.is_finite() && case.domain.contains(x) && !(needs_nonzero && x == 0.0) {
            return x;
        }
    }
}

pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// The position of an f64 in the order of all f64 (consecutive floats differ by 1; both zeros are
/// 0, the infinities come right after the largest finite values).
fn ordinal(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    if bits < 0 { i64::MIN - bits } else { bits }
}

/// How many f64 steps lie from `a` up to `b` (0 when `b <= a`).
pub fn steps(a: f64, b: f64) -> u64 {
    (ordinal(b) - ordinal(a)).max(0) as u64
}

/// Below this magnitude results may be subnormal, where a composition (4E/(1+E)^2 with E itself
/// subnormal) carries an absolute error of a few subnormal units: `SUBNORMAL_SLACK` more ulps are
/// allowed there.
const TINY_RESULT: f64 = 1e-300;
pub const SUBNORMAL_SLACK: u32 = 16;

/// How many ulps beyond the directed roundings an end of `case.max_ulps` may lie at a value
/// enclosed by `r`.
pub fn allowed_ulps(max_ulps: u32, r: &(Float, Float)) -> u32 {
    if r.1.clone().abs() < TINY_RESULT { max_ulps + SUBNORMAL_SLACK } else { max_ulps }
}

/// The check of one enclosure against its reference `[r_lo, r_hi]`: sound (`lo <= r_lo`,
/// `r_hi <= hi`) and tight (each end at most `allowed_ulps` beyond the directed rounding of the
/// reference end, which is the directed rounding of the exact value itself unless the exact value
/// lies within 2^-256 of an f64). Returns how many ulps the looser end lies beyond.
pub fn check(name: &str, x: f64, e: Enclosure, r: &(Float, Float), max_ulps: u32) -> Result<u64, String> {
    let max_ulps = allowed_ulps(max_ulps, r);
    let (r_lo, r_hi) = r;
    if e.lo.is_nan() || e.hi.is_nan() || e.lo > e.hi {
        return Err(format!("{name}({x:e}) = {e}: not an interval"));
    }
    if *r_lo < e.lo || *r_hi > e.hi {
        return Err(format!("{name}({x:e}) = {e} does not contain the reference [{r_lo:.20e}, {r_hi:.20e}]"));
    }
    let (best_lo, best_hi) = (r_lo.to_f64_round(Round::Down), r_hi.to_f64_round(Round::Up));
    let beyond = steps(e.lo, best_lo).max(steps(best_hi, e.hi));
    if beyond > u64::from(max_ulps) {
        return Err(format!(
            "{name}({x:e}) = {e} lies {beyond} ulps beyond the directed roundings [{best_lo:e}, {best_hi:e}] (allowed: {max_ulps})"
        ));
    }
    Ok(beyond)
}

/// Whether a high-precision interval and an f64 enclosure of the same value overlap (both contain
/// it, so they must).
pub fn overlaps(big: &BigInterval, e: Enclosure) -> bool {
    *big.lo() <= e.hi && *big.hi() >= e.lo
}
