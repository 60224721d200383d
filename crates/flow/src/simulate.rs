//! Non-validated integrators: adaptive Taylor series in f64 (simulation) and in MPFR floats at a
//! chosen precision (a high-precision reference for tests and for checking enclosures).
//!
//! Both use the tape's coefficients and the step-size rule of Jorba and Zou (2005): with order
//! `p` and the last two coefficients `y[p-1]`, `y[p]`, the step is
//! `h = min((tol / |y[p-1]|)^(1/(p-1)), (tol / |y[p]|)^(1/p)) * 0.9`, `tol` relative to
//! `max(1, |y|)`: the local error is about `tol`. Neither gives a bound; use
//! [`crate::Flow::enclose`] for that.

use rug::Float;
use trestle_ir::Rational;

use crate::FlowError;
use crate::coef::{Big, Coefficient};
use crate::tape::Tape;

/// The next step from the magnitudes of the last two coefficients of every coordinate.
fn step_size(norms: impl Iterator<Item = (f64, f64)>, order: usize, tol: f64) -> f64 {
    let p = order as f64;
    let mut h = f64::INFINITY;
    for (prev, last) in norms {
        if prev > 0.0 {
            h = h.min((tol / prev).powf(1.0 / (p - 1.0)));
        }
        if last > 0.0 {
            h = h.min((tol / last).powf(1.0 / p));
        }
    }
    0.9 * h
}

/// Evaluates `sum c[k] h^k` by Horner's rule.
fn horner<S: Coefficient>(coeffs: &[S], h: &S) -> S {
    let mut acc = coeffs[coeffs.len() - 1].clone();
    for c in coeffs[..coeffs.len() - 1].iter().rev() {
        acc = acc.mul(h).add(c);
    }
    acc
}

/// The state after `period` from the augmented initial value `y0` (state, actions, inputs), in
/// f64, with local error about `tol` per step. Also returns the number of steps.
pub fn simulate_f64(tape: &Tape, y0: &[f64], period: f64, tol: f64) -> Result<(Vec<f64>, usize), FlowError> {
    if !period.is_finite() || period < 0.0 || tol.is_nan() || tol <= 0.0 {
        return Err(FlowError::Input(format!("period {period} and tolerance {tol}: finite, >= 0 and > 0 needed")));
    }
    let order = ((-tol.ln() / 2.0).ceil() as usize + 1).clamp(4, 30);
    let mut y = y0.to_vec();
    let (mut t, mut steps) = (0.0f64, 0usize);
    while t < period {
        let s = tape.series(&y, order)?;
        let scale = y.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        let h = step_size(s.iter().map(|c| (c[order - 1].abs(), c[order].abs())), order, tol * scale);
        let h = h.min(period - t);
        if h.is_nan() || h <= 0.0 || steps > 10_000_000 {
            return Err(FlowError::StepFailed { time: t, step: h, reason: "the step size vanished".into() });
        }
        y = s.iter().map(|c| horner(c, &h)).collect();
        if y.iter().any(|v| !v.is_finite()) {
            return Err(FlowError::StepFailed { time: t, step: h, reason: "the solution became unbounded".into() });
        }
        t = if period - t <= h { period } else { t + h };
        steps += 1;
    }
    Ok((y, steps))
}

/// The state after `period` from exact initial values, integrated with MPFR floats of `prec`
/// bits by a Taylor series of order `order`, local error about `2^-(prec - 8)` per step.
pub fn simulate_big(
    tape: &Tape,
    y0: &[Rational],
    period: &Rational,
    prec: u32,
    order: usize,
) -> Result<Vec<Float>, FlowError> {
    let order = order.max(4);
    let mut y: Vec<Big> = y0.iter().map(|q| Big::new(prec, q)).collect();
    let end = Big::new(prec, period).0;
    let mut t = Float::with_val(prec, 0);
    let tol = 2f64.powi(-(prec as i32 - 8));
    let mut steps = 0usize;
    while t < end {
        let s = tape.series(&y, order)?;
        let scale = y.iter().fold(1.0f64, |m, v| m.max(v.0.to_f64().abs()));
        let norms = s.iter().map(|c| (c[order - 1].0.to_f64().abs(), c[order].0.to_f64().abs()));
        let h = step_size(norms, order, tol * scale);
        let left = Float::with_val(prec, &end - &t);
        let last = left.to_f64() <= h;
        let h = if last { left } else { Float::with_val(prec, h) };
        if !h.is_sign_positive() || h.is_zero() || steps > 1_000_000 {
            return Err(FlowError::StepFailed {
                time: t.to_f64(),
                step: h.to_f64(),
                reason: "the step size vanished".into(),
            });
        }
        let hb = Big(h.clone());
        y = s.iter().map(|c| horner(c, &hb)).collect();
        t = if last { end.clone() } else { Float::with_val(prec, &t + &h) };
        steps += 1;
    }
    Ok(y.into_iter().map(|b| b.0).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_ir::Expr;
    use trestle_ir::parse::{SimpleScope, parse_expr};

    #[test]
    fn integrators_reproduce_closed_forms() {
        // x' = -x^2 from 1: x(t) = 1 / (1 + t).
        let scope = SimpleScope::with_state(&["x"]);
        let tape = Tape::new(&[parse_expr("-x^2", &scope).unwrap()], 0, 0).unwrap();
        let (x, steps) = simulate_f64(&tape, &[1.0], 3.0, 1e-14).unwrap();
        assert!((x[0] - 0.25).abs() < 1e-12 && steps > 1, "{x:?} in {steps} steps");
        let one = Rational::from_integer(1.into());
        let big = simulate_big(&tape, &[one], &Rational::from_integer(3.into()), 200, 40).unwrap();
        let err = Float::with_val(200, &big[0] - 0.25f64).abs();
        assert!(err < 1e-50, "{err}");
        // The harmonic oscillator x' = v, v' = -x from (1, 0): (cos t, -sin t).
        let scope = SimpleScope::with_state(&["x", "v"]);
        let rhs: Vec<Expr> = ["v", "-x"].iter().map(|t| parse_expr(t, &scope).unwrap()).collect();
        let tape = Tape::new(&rhs, 0, 0).unwrap();
        let (x, _) = simulate_f64(&tape, &[1.0, 0.0], 10.0, 1e-15).unwrap();
        assert!((x[0] - 10f64.cos()).abs() < 1e-12 && (x[1] + 10f64.sin()).abs() < 1e-12, "{x:?}");
    }
}
