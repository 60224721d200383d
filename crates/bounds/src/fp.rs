//! Rigorous error bounds for the floating-point kernels every engine shares.
//!
//! The hot loops (dot products, `axpy`) run in ordinary round-to-nearest f64. Their rounding error is
//! then bounded with Higham's a-priori bound for a dot product of length `n` evaluated in any order,
//! `|fl(a.b) - a.b| <= gamma(n) sum |a_i b_i| + n * UNDERFLOW_FLOOR` (the floor covers products that
//! land in the subnormal range), and that error is added, rounded up, to a constant term. The sum
//! `sum |a_i b_i|` is itself computed in floating point, so it is first turned into an upper bound of
//! the exact sum with [`nonneg_dot_upper`].

use trestle_ir::round::{self, UNDERFLOW_FLOOR, div_up, gamma, mul_up, sub_down};

/// Smallest f64 >= a + b, exact when the sum is 0 (`trestle_ir::round::add_up` steps outward near
/// the subnormal range, also from an exact 0; but a float sum that rounds to 0 is exactly 0, since
/// sums in the subnormal range are exact). Keeps bounds that cancel exactly at 0.
#[inline]
pub(crate) fn add_up(a: f64, b: f64) -> f64 {
    if a + b == 0.0 { 0.0 } else { round::add_up(a, b) }
}

/// Largest f64 <= a + b, exact when the sum is 0 (see [`add_up`]).
#[inline]
pub(crate) fn add_down(a: f64, b: f64) -> f64 {
    if a + b == 0.0 { 0.0 } else { round::add_down(a, b) }
}

/// Unit roundoff of f64: round-to-nearest has `|fl(x) - x| <= U |fl(x)|` outside the subnormal range.
pub(crate) const UNIT_ROUNDOFF: f64 = f64::EPSILON * 0.5;

/// Safety factor for short chains of round-to-nearest operations on non-negative values: each of
/// at most 16 additions or multiplications leaves its result at least `(1 - U)` times the exact
/// one, so the exact value is at most the computed one times `(1 - U)^-17 < 1 + 2^-48` (the final
/// multiplication by this factor included). Every chain below ends by adding a positive floor of at
/// least `1e-300`, so the absolute losses of subnormal intermediate results (`2^-1075` each) are
/// far below the `2^-49` relative slack left. Used instead of `trestle_ir::round`'s `mul_up`, whose
/// FMA is a slow library call on CPUs the binary is not compiled for.
const CHAIN_SAFETY: f64 = 1.0 + 1.0 / (1u64 << 48) as f64;

/// The a-priori error bound of dot products of length `n`, its constants computed once.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DotBound {
    gamma: f64,
    /// `>= 1 / (1 - gamma)`.
    inflate: f64,
    /// `>= n * UNDERFLOW_FLOOR`.
    floor: f64,
}

impl DotBound {
    pub fn new(n: usize) -> DotBound {
        let gamma = gamma(n);
        DotBound {
            gamma,
            inflate: div_up(1.0, sub_down(1.0, gamma)),
            floor: mul_up((n as f64).max(1.0), UNDERFLOW_FLOOR),
        }
    }

    /// An upper bound of the exact `sum a_i b_i` of `n` non-negative products given its
    /// floating-point value `computed`: from `|computed - exact| <= gamma exact + n floor` follows
    /// `exact <= (computed + n floor) / (1 - gamma)` (evaluated as a safe chain, see `CHAIN_SAFETY`).
    #[inline]
    pub fn nonneg_upper(&self, computed: f64) -> f64 {
        (computed + self.floor) * self.inflate * CHAIN_SAFETY
    }

    /// An upper bound of `|fl(a.b) - a.b|` for a dot product whose absolute products sum, computed
    /// in floating point, to `abs_computed`.
    #[inline]
    pub fn error(&self, abs_computed: f64) -> f64 {
        (self.gamma * ((abs_computed + self.floor) * self.inflate) + self.floor) * CHAIN_SAFETY
    }
}

/// An upper bound of `sum_i |fl(x_i) - x_i| m_i` for `n` round-to-nearest products `fl(x_i)` scaled
/// by magnitudes `m_i >= 0`, given `abs_computed = fl(sum |fl(x_i)| m_i)` and `magnitude_sum >=
/// sum m_i`: each product is off by at most `U |fl(x_i)| + UNDERFLOW_FLOOR`.
#[inline]
pub(crate) fn product_error(abs_computed: f64, n: usize, magnitude_sum: f64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    add_up(mul_up(UNIT_ROUNDOFF, DotBound::new(n).nonneg_upper(abs_computed)), mul_up(UNDERFLOW_FLOOR, magnitude_sum))
}

// The kernels below are written once (`*_body`, lane-structured so they vectorise) and compiled
// twice on x86-64: for the baseline and with AVX2, chosen at run time. Neither uses FMA, and the
// lanes fix the order of every operation, so both give bit-identical results.

/// Whether the AVX2 versions may run (cached by the standard library).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn avx2() -> bool {
    std::is_x86_feature_detected!("avx2")
}

macro_rules! dispatch {
    ($(#[$doc:meta])* fn $name:ident / $avx:ident / $body:ident ($($arg:ident : $ty:ty),*) -> $ret:ty) => {
        $(#[$doc])*
        #[inline]
        pub(crate) fn $name($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            if $crate::fp::avx2() {
                // SAFETY: the CPU supports AVX2, checked just above.
                return unsafe { $avx($($arg),*) };
            }
            $body($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        fn $avx($($arg: $ty),*) -> $ret {
            $body($($arg),*)
        }
    };
}

pub(crate) const LANES: usize = 4;

dispatch! {
    /// `y += alpha x`, elementwise in round-to-nearest.
    fn axpy / axpy_avx2 / axpy_body(alpha: f64, x: &[f64], y: &mut [f64]) -> ()
}

#[inline(always)]
fn axpy_body(alpha: f64, x: &[f64], y: &mut [f64]) {
    for (y, x) in y.iter_mut().zip(x) {
        *y += alpha * x;
    }
}

/// `(sum w_j c_j, sum |w_j| ca_j, sum |w_j| r_j)` in round-to-nearest, in lanes; the summation
/// order is irrelevant to the error bounds used on the results.
#[inline]
pub(crate) fn dot_abs_radius(w: &[f64], c: &[f64], ca: &[f64], r: &[f64]) -> (f64, f64, f64) {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { dot_abs_radius_avx2(w, c, ca, r) };
    }
    dot_abs_radius_body(w, c, ca, r)
}

/// [`dot_abs_radius_body`] with 4-lane AVX2 registers as its lanes (same operations, same order).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_abs_radius_avx2(w: &[f64], c: &[f64], ca: &[f64], r: &[f64]) -> (f64, f64, f64) {
    use std::arch::x86_64::*;
    let n = w.len().min(c.len()).min(ca.len()).min(r.len());
    let body = n / LANES * LANES;
    let sign = _mm256_set1_pd(-0.0);
    let (mut s, mut a, mut q) = (_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd());
    for start in (0..body).step_by(LANES) {
        // SAFETY: start + LANES <= body <= the length of every slice.
        unsafe {
            let wv = _mm256_loadu_pd(w.as_ptr().add(start));
            let aw = _mm256_andnot_pd(sign, wv);
            s = _mm256_add_pd(s, _mm256_mul_pd(wv, _mm256_loadu_pd(c.as_ptr().add(start))));
            a = _mm256_add_pd(a, _mm256_mul_pd(aw, _mm256_loadu_pd(ca.as_ptr().add(start))));
            q = _mm256_add_pd(q, _mm256_mul_pd(aw, _mm256_loadu_pd(r.as_ptr().add(start))));
        }
    }
    let lanes = |v: __m256d| {
        let mut out = [0.0; LANES];
        // SAFETY: `out` holds exactly four f64.
        unsafe { _mm256_storeu_pd(out.as_mut_ptr(), v) };
        out
    };
    dot_abs_radius_finish(w, c, ca, r, body, [lanes(s), lanes(a), lanes(q)])
}

#[inline(always)]
fn dot_abs_radius_body(w: &[f64], c: &[f64], ca: &[f64], r: &[f64]) -> (f64, f64, f64) {
    let n = w.len().min(c.len()).min(ca.len()).min(r.len());
    let mut s = [0.0; LANES];
    let mut a = [0.0; LANES];
    let mut q = [0.0; LANES];
    let body = n / LANES * LANES;
    for start in (0..body).step_by(LANES) {
        let w: &[f64; LANES] = w[start..start + LANES].try_into().expect("lane chunk");
        let c: &[f64; LANES] = c[start..start + LANES].try_into().expect("lane chunk");
        let ca: &[f64; LANES] = ca[start..start + LANES].try_into().expect("lane chunk");
        let r: &[f64; LANES] = r[start..start + LANES].try_into().expect("lane chunk");
        for l in 0..LANES {
            let aw = w[l].abs();
            s[l] += w[l] * c[l];
            a[l] += aw * ca[l];
            q[l] += aw * r[l];
        }
    }
    dot_abs_radius_finish(w, c, ca, r, body, [s, a, q])
}

/// The elements past the last full lane chunk (`body..`) go into lane 0, then the lanes are
/// summed pairwise: shared by both kernels so they stay bit-identical.
#[inline(always)]
fn dot_abs_radius_finish(
    w: &[f64],
    c: &[f64],
    ca: &[f64],
    r: &[f64],
    body: usize,
    [mut s, mut a, mut q]: [[f64; LANES]; 3],
) -> (f64, f64, f64) {
    let n = w.len().min(c.len()).min(ca.len()).min(r.len());
    for j in body..n {
        let aw = w[j].abs();
        s[0] += w[j] * c[j];
        a[0] += aw * ca[j];
        q[0] += aw * r[j];
    }
    ((s[0] + s[1]) + (s[2] + s[3]), (a[0] + a[1]) + (a[2] + a[3]), (q[0] + q[1]) + (q[2] + q[3]))
}

dispatch! {
    /// `sum a_j b_j` in round-to-nearest, in lanes.
    fn dot / dot_avx2 / dot_body(a: &[f64], b: &[f64]) -> f64
}

#[inline(always)]
fn dot_body(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let mut s = [0.0; LANES];
    let body = n / LANES * LANES;
    for start in (0..body).step_by(LANES) {
        let a: &[f64; LANES] = a[start..start + LANES].try_into().expect("lane chunk");
        let b: &[f64; LANES] = b[start..start + LANES].try_into().expect("lane chunk");
        for l in 0..LANES {
            s[l] += a[l] * b[l];
        }
    }
    for j in body..n {
        s[0] += a[j] * b[j];
    }
    (s[0] + s[1]) + (s[2] + s[3])
}

dispatch! {
    /// `sum |a_j| b_j` in round-to-nearest, in lanes.
    fn dot_abs / dot_abs_avx2 / dot_abs_body(a: &[f64], b: &[f64]) -> f64
}

#[inline(always)]
fn dot_abs_body(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let mut s = [0.0; LANES];
    let body = n / LANES * LANES;
    for start in (0..body).step_by(LANES) {
        let a: &[f64; LANES] = a[start..start + LANES].try_into().expect("lane chunk");
        let b: &[f64; LANES] = b[start..start + LANES].try_into().expect("lane chunk");
        for l in 0..LANES {
            s[l] += a[l].abs() * b[l];
        }
    }
    for j in body..n {
        s[0] += a[j].abs() * b[j];
    }
    (s[0] + s[1]) + (s[2] + s[3])
}

/// Upper bound of `sum_j x_j` for non-negative floats, by directed additions.
pub(crate) fn sum_up(x: impl IntoIterator<Item = f64>) -> f64 {
    x.into_iter().fold(0.0, add_up)
}

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_ir::num::rational_from_f64 as q;

    #[test]
    fn dot_error_covers_the_exact_dot_product() {
        let a: Vec<f64> = (0..37).map(|i| (i as f64 * 0.37).sin() * 10f64.powi(i % 7 - 3)).collect();
        let b: Vec<f64> = (0..37).map(|i| (i as f64 * 1.91).cos() / 3.0).collect();
        let computed = dot(&a, &b);
        let abs: Vec<f64> = a.iter().map(|x| x.abs()).collect();
        let abs_b: Vec<f64> = b.iter().map(|x| x.abs()).collect();
        let abs_sum = dot(&abs, &abs_b);
        let err = DotBound::new(a.len()).error(abs_sum);
        let exact = a.iter().zip(&b).fold(q(0.0), |acc, (x, y)| acc + q(*x) * q(*y));
        assert!(q(computed) - q(err) <= exact && exact <= q(computed) + q(err));
        assert!(err < 1e-13 * abs_sum && err > 0.0);
    }

    #[test]
    fn dispatched_kernels_match_the_portable_ones_bit_for_bit() {
        let v = |k: f64| (0..103).map(|i| ((i as f64 + k) * 0.731).sin() * 10f64.powi(i % 9 - 4)).collect::<Vec<f64>>();
        let (w, c, ca, r) = (v(0.0), v(1.0), v(2.0).iter().map(|x| x.abs()).collect::<Vec<_>>(), v(3.0));
        for n in [0, 3, 4, 37, 103] {
            let portable = dot_abs_radius_body(&w[..n], &c[..n], &ca[..n], &r[..n]);
            assert_eq!(dot_abs_radius(&w[..n], &c[..n], &ca[..n], &r[..n]), portable);
            assert_eq!(dot(&w[..n], &c[..n]).to_bits(), dot_body(&w[..n], &c[..n]).to_bits());
        }
    }

    #[test]
    fn nonneg_upper_is_above_the_exact_sum() {
        let a: Vec<f64> = (1..50).map(|i| 1.0 / i as f64).collect();
        let exact = a.iter().fold(q(0.0), |acc, x| acc + q(*x) * q(*x));
        let up = DotBound::new(a.len()).nonneg_upper(dot(&a, &a));
        assert!(q(up) >= exact);
    }
}
