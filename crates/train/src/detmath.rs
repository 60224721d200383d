//! `exp` and `ln` from IEEE additions, multiplications and divisions only.
//!
//! The standard library's `exp`/`ln` call the platform's libm, whose last bits differ between
//! C libraries; softmax and the cross-entropy loss (which early stopping compares) must not, or
//! two machines would train different networks from one seed. These are accurate to a few units
//! in the last place of f64, which is far more than training needs.

use std::f64::consts::{LN_2, LOG2_E};

/// `ln 2 = LN2_HI + LN2_LO` to about 2^-85 (fdlibm's split): `LN2_HI` has trailing zero bits so
/// that `k * LN2_HI` is exact for the `k` used here (Cody–Waite range reduction).
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);

/// `e^x`; 0 below -745, infinity above 709.78.
pub fn exp(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 709.78 {
        return f64::INFINITY;
    }
    if x < -745.2 {
        return 0.0;
    }
    let k = (x * LOG2_E).round();
    let r = (x - k * LN2_HI) - k * LN2_LO; // |r| <= ln2 / 2 (plus rounding)
    // Taylor series to r^14 / 14!: the remainder is below 1e-17 for |r| <= 0.35.
    let mut p = 1.0;
    for n in (1..=14).rev() {
        p = 1.0 + p * r / f64::from(n);
    }
    scale_by_power_of_two(p, k as i32)
}

/// `v * 2^k` for `v` in about `[0.7, 1.5]`, in two exact steps so that no intermediate
/// overflows or underflows early.
fn scale_by_power_of_two(v: f64, k: i32) -> f64 {
    let half = k / 2;
    v * power_of_two(half) * power_of_two(k - half)
}

fn power_of_two(k: i32) -> f64 {
    // |k| <= 538 here, so 1023 + k is a normal exponent.
    f64::from_bits(((1023 + k) as u64) << 52)
}

/// Natural logarithm of a positive finite `x` (NaN for negatives, -inf at 0).
pub fn ln(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x.is_infinite() {
        return x;
    }
    // x = m * 2^e with m in [sqrt(1/2), sqrt(2)); subnormals are scaled up first.
    let (mut x, mut e) = (x, 0i32);
    if x < f64::MIN_POSITIVE {
        x *= power_of_two(54);
        e -= 54;
    }
    let bits = x.to_bits();
    e += ((bits >> 52) & 0x7ff) as i32 - 1023;
    let mut m = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52));
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    // ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716: the series to s^23 is exact to 1e-19.
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut series = 0.0;
    for n in (0..=11).rev() {
        series = 1.0 / f64::from(2 * n + 1) + s2 * series;
    }
    2.0 * s * series + f64::from(e) * LN_2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 4.0 * f64::EPSILON * b.abs()
    }

    #[test]
    fn agrees_with_libm_to_a_few_ulps() {
        let mut x = -700.0;
        while x < 700.0 {
            assert!(close(exp(x), x.exp()), "exp({x}) = {} vs {}", exp(x), x.exp());
            x += 0.137;
        }
        for &x in &[1e-300, 1e-10, 0.3, 0.999, 1.0, 1.5, 2.0, 10.0, 12345.678, 1e300, 5e-324] {
            assert!((ln(x) - x.ln()).abs() <= 4.0 * f64::EPSILON * x.ln().abs().max(1.0), "ln({x})");
        }
        assert_eq!(ln(1.0), 0.0);
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-800.0), 0.0);
        assert_eq!(exp(800.0), f64::INFINITY);
    }
}
