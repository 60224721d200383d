//! Exact affine layers over one common denominator.
//!
//! A counterexample is replayed by running the network in exact rational arithmetic. Done term
//! by term (`acc += w_ij * x_j` on `BigRational`s), every addition computes a gcd, and a 2x2048
//! network (4M weights) takes tens of seconds. Here a layer's input is a vector of big integers
//! over ONE denominator, `x_j = n_j / d`, and every weight is the dyadic rational `m * 2^e` it
//! denotes (`m` an integer below 2^53). A row's value is then
//!
//! ```text
//!   sum_j m_ij 2^(e_ij) n_j / d + m_b 2^(e_b) = 2^E (sum_j m_ij 2^(e_ij - E) n_j + m_b 2^(e_b - E) d) / d
//! ```
//!
//! with `E` the least exponent of the row: integer multiply-adds only, no gcd. Each term
//! `m_ij 2^(e_ij - E) n_j` is added on fixed 64-bit words (the positive and the negative terms in
//! two sums, subtracted once per row), so a term costs a few word multiplications and no
//! allocation; a 2x2048 network runs in ~30 ms where big-integer additions per term took ~0.3 s.
//! The result is exactly the rational the term-by-term sum gives (property tests compare them,
//! also on values many words long); fractions are reduced once, when the output leaves as
//! `Rational`s.

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{Signed, Zero};

use crate::network::{Activation, Matrix};
use crate::num::Rational;

/// A layer's exact values over one common denominator: `value_j = num[j] / den`, `den > 0`
/// (opaque outside the exact forward pass).
#[derive(Clone, Debug)]
pub struct Scaled {
    num: Vec<BigInt>,
    den: BigInt,
}

impl Scaled {
    /// The vector over the least common denominator of its entries.
    pub(crate) fn of(xs: &[Rational]) -> Scaled {
        let den = xs.iter().fold(BigInt::from(1), |d, x| d.lcm(x.denom()));
        let num = xs.iter().map(|x| x.numer() * (&den / x.denom())).collect();
        Scaled { num, den }
    }

    pub(crate) fn to_rationals(&self) -> Vec<Rational> {
        self.num.iter().map(|n| Rational::new(n.clone(), self.den.clone())).collect()
    }

    /// The same values over the denominator `den * k` (`k >= 1`).
    fn scaled_by(&self, k: &BigInt) -> Scaled {
        Scaled { num: self.num.iter().map(|n| n * k).collect(), den: &self.den * k }
    }
}

/// `m * 2^e = x` with `|m| < 2^53` (zero gives `None`).
fn dyadic(x: f64) -> Option<(i64, i32)> {
    if x == 0.0 {
        return None;
    }
    debug_assert!(x.is_finite(), "network weights are validated finite");
    let (mantissa, exponent, sign) = num_traits::float::FloatCore::integer_decode(x);
    let m = mantissa as i64; // < 2^53
    Some((if sign < 0 { -m } else { m }, exponent as i32))
}

/// A value of the layer as sign and magnitude limbs (little-endian 64-bit words), converted once
/// per layer so every term of every row reads it without allocating.
struct Limbs {
    negative: bool,
    words: Vec<u64>,
}

impl Limbs {
    fn of(n: &BigInt) -> Limbs {
        let (sign, words) = n.to_u64_digits();
        Limbs { negative: sign == Sign::Minus, words }
    }
}

/// `acc[at..] += v * m` on unsigned words. Each step's `acc + v_k m + carry` is at most
/// `(2^64 - 1) + (2^64 - 1)^2 + (2^64 - 1) = 2^128 - 1`, so the u128 never overflows; the caller
/// sizes `acc` so the final carry always finds a word.
#[inline]
fn mac(acc: &mut [u64], at: usize, v: &[u64], m: u64) {
    let mut carry: u128 = 0;
    for (a, &vk) in acc[at..at + v.len()].iter_mut().zip(v) {
        let t = *a as u128 + vk as u128 * m as u128 + carry;
        *a = t as u64;
        carry = t >> 64;
    }
    let mut i = at + v.len();
    while carry != 0 {
        let t = acc[i] as u128 + carry;
        acc[i] = t as u64;
        carry = t >> 64;
        i += 1;
    }
}

/// The unsigned integer of little-endian words.
fn biguint_of(words: &[u64]) -> BigUint {
    BigUint::from_slice(&words.iter().flat_map(|&w| [w as u32, (w >> 32) as u32]).collect::<Vec<u32>>())
}

/// Scratch space reused across the rows of a layer.
#[derive(Default)]
struct Terms {
    /// `(exponent, mantissa, column)` of every non-zero term of the row (column `usize::MAX`: bias).
    terms: Vec<(i32, i64, usize)>,
    /// Sums of the positive and of the negative terms' magnitudes.
    positive: Vec<u64>,
    negative: Vec<u64>,
}

/// `act(W x + R h + b)` exactly. `x` and `h` may have different denominators.
pub(crate) fn affine(w: &Matrix, x: &Scaled, b: &[f64], act: Activation, rec: Option<(&Matrix, &Scaled)>) -> Scaled {
    // One denominator for x and h: d = lcm(dx, dh).
    let (x, h) = match rec {
        None => (x.clone(), None),
        Some((_, h)) => {
            let d = x.den.lcm(&h.den);
            (x.scaled_by(&(&d / &x.den)), Some(h.scaled_by(&(&d / &h.den))))
        }
    };
    let den = &x.den;
    let n_x = x.num.len();
    // Every value a term can read: x, then h, then the denominator (the bias term's).
    let values: Vec<Limbs> =
        x.num.iter().chain(h.iter().flat_map(|h| h.num.iter())).chain(std::iter::once(den)).map(Limbs::of).collect();
    let bias_at = values.len() - 1;
    let longest = values.iter().map(|v| v.words.len()).max().unwrap_or(0);
    let mut scratch = Terms::default();
    // Row i is T_i * 2^(E_i) / den, E_i its least exponent: T_i = sum of m 2^(e - E_i) value, the
    // positive and the negative terms summed apart on fixed words (no allocation per term).
    let rows: Vec<(BigInt, i32)> = (0..w.rows)
        .map(|i| {
            let t = &mut scratch.terms;
            t.clear();
            for (j, &wij) in w.row(i).iter().enumerate() {
                if let Some((m, e)) = dyadic(wij)
                    && !x.num[j].is_zero()
                {
                    t.push((e, m, j));
                }
            }
            if let (Some((wr, _)), Some(h)) = (rec, h.as_ref()) {
                for (j, &wij) in wr.row(i).iter().enumerate() {
                    if let Some((m, e)) = dyadic(wij)
                        && !h.num[j].is_zero()
                    {
                        t.push((e, m, n_x + j));
                    }
                }
            }
            if let Some((m, e)) = dyadic(b[i])
                && !den.is_zero()
            {
                t.push((e, m, bias_at));
            }
            let Some(least) = t.iter().map(|term| term.0).min() else { return (BigInt::zero(), 0) };
            let widest = t.iter().map(|term| term.0).max().expect("non-empty") - least;
            // Shifts below 2^widest+64, values below 2^(64 longest), at most 2^32 terms: the sums
            // fit in widest/64 + longest + 2 words plus one for the count; one more to spare.
            let len = widest as usize / 64 + longest + 4;
            let (pos, neg) = (&mut scratch.positive, &mut scratch.negative);
            pos.clear();
            pos.resize(len, 0);
            neg.clear();
            neg.resize(len, 0);
            for &(e, m, j) in t.iter() {
                let v = &values[j];
                let shift = (e - least) as u32;
                let (word, bit) = ((shift / 64) as usize, shift % 64);
                let scaled = (m.unsigned_abs() as u128) << bit; // < 2^(53 + 63)
                let acc = if (m < 0) != v.negative { &mut *neg } else { &mut *pos };
                mac(acc, word, &v.words, scaled as u64);
                let high = (scaled >> 64) as u64;
                if high != 0 {
                    mac(acc, word + 1, &v.words, high);
                }
            }
            let total =
                BigInt::from_biguint(Sign::Plus, biguint_of(pos)) - BigInt::from_biguint(Sign::Plus, biguint_of(neg));
            (total, least)
        })
        .collect();
    // Common denominator of the layer's outputs: den * 2^s, s = max(0, -min E_i).
    let s = rows.iter().filter(|(t, _)| !t.is_zero()).map(|&(_, e)| (-e).max(0)).max().unwrap_or(0);
    let num = rows
        .into_iter()
        .map(|(t, e)| {
            if t.is_zero() || (act == Activation::Relu && t.is_negative()) {
                BigInt::zero()
            } else {
                t << ((s + e) as usize) // s + e >= 0 by the choice of s
            }
        })
        .collect();
    Scaled { num, den: den << (s as usize) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::num::rational_from_f64;
    use proptest::prelude::*;

    fn term_by_term(w: &Matrix, x: &[Rational], b: &[f64], act: Activation) -> Vec<Rational> {
        (0..w.rows)
            .map(|i| {
                let mut acc = rational_from_f64(b[i]);
                for (wij, xj) in w.row(i).iter().zip(x) {
                    acc += rational_from_f64(*wij) * xj;
                }
                if act == Activation::Relu && acc.is_negative() { Rational::zero() } else { acc }
            })
            .collect()
    }

    /// Floats of every magnitude, zeros and subnormals included.
    fn weight() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(0.0),
            Just(f64::MIN_POSITIVE / 8.0),
            (-1.0e3f64..1.0e3),
            (-1.0f64..1.0, -60i32..60).prop_map(|(m, e)| m * 2f64.powi(e)),
        ]
    }

    fn rational() -> impl Strategy<Value = Rational> {
        (-1000i64..1000, 1i64..1000).prop_map(|(n, d)| Rational::new(n.into(), d.into()))
    }

    proptest! {
        #[test]
        fn equals_the_term_by_term_sum(
            (rows, cols) in (1usize..6, 1usize..6),
            seed in proptest::collection::vec(weight(), 36),
            bias in proptest::collection::vec(weight(), 6),
            x in proptest::collection::vec(rational(), 6),
            relu in any::<bool>(),
        ) {
            let w = Matrix::new(rows, cols, seed[..rows * cols].to_vec());
            let act = if relu { Activation::Relu } else { Activation::Identity };
            let x = &x[..cols];
            let got = affine(&w, &Scaled::of(x), &bias[..rows], act, None).to_rationals();
            prop_assert_eq!(got, term_by_term(&w, x, &bias[..rows], act));
        }

        #[test]
        fn equals_the_term_by_term_sum_on_multi_word_values(
            (rows, cols) in (1usize..5, 1usize..40),
            seed in proptest::collection::vec(weight(), 160),
            bias in proptest::collection::vec(weight(), 4),
            x in proptest::collection::vec(weight(), 40),
            relu in any::<bool>(),
        ) {
            // Inputs are floats of every magnitude: denominators up to 2^1074 and long numerators,
            // so the word sums carry across many words.
            let w = Matrix::new(rows, cols, seed[..rows * cols].to_vec());
            let act = if relu { Activation::Relu } else { Activation::Identity };
            let x: Vec<Rational> = x[..cols].iter().map(|&v| rational_from_f64(v) * Rational::new(7.into(), 3.into())).collect();
            let got = affine(&w, &Scaled::of(&x), &bias[..rows], act, None).to_rationals();
            prop_assert_eq!(got, term_by_term(&w, &x, &bias[..rows], act));
        }

        #[test]
        fn recurrent_terms_over_another_denominator(
            wx in proptest::collection::vec(weight(), 6),
            wh in proptest::collection::vec(weight(), 4),
            bias in proptest::collection::vec(weight(), 2),
            x in proptest::collection::vec(rational(), 3),
            h in proptest::collection::vec(rational(), 2),
        ) {
            let (w, r) = (Matrix::new(2, 3, wx), Matrix::new(2, 2, wh));
            let got = affine(&w, &Scaled::of(&x), &bias, Activation::Identity, Some((&r, &Scaled::of(&h))))
                .to_rationals();
            let mut joint = x.clone();
            joint.extend(h.iter().cloned());
            let wj = Matrix::from_rows(&(0..2).map(|i| [w.row(i), r.row(i)].concat()).collect::<Vec<_>>());
            prop_assert_eq!(got, term_by_term(&wj, &joint, &bias, Activation::Identity));
        }
    }
}
