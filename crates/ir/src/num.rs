//! Exact numbers and their f64 enclosures.
//!
//! Every constant a user writes (`0.1`, `19/20`, `32.2`) is kept as the exact rational it denotes;
//! every weight read from a model file is an f64 (an exact dyadic rational). Engines that work in
//! floating point never see a constant "rounded to nearest": they get an enclosing pair
//! `[down(q), up(q)]` from [`enclose`] and round outward from there.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

/// An exact rational number.
pub type Rational = BigRational;

/// The exact rational value of a finite f64 (every finite float is a dyadic rational).
///
/// # Panics
/// Never for finite input; callers validate finiteness first (NaN/inf are input errors).
pub fn rational_from_f64(x: f64) -> Rational {
    try_rational_from_f64(x).expect("rational_from_f64 needs a finite float")
}

/// The exact value of a finite float, or `None` for NaN / infinities.
///
/// Built in lowest terms directly: `x = m 2^e` with `m` odd, so the fraction is `m / 2^-e` (or the
/// integer `m 2^e`) and needs no gcd, which `BigRational::from_float` computes (the replays and
/// the sampler convert every weight-derived float they touch, and that gcd was most of it).
pub fn try_rational_from_f64(x: f64) -> Option<Rational> {
    if !x.is_finite() {
        return None;
    }
    if x == 0.0 {
        return Some(Rational::zero());
    }
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let fraction = bits & ((1u64 << 52) - 1);
    // Subnormals have no implicit bit and the exponent of the smallest normal.
    let (mantissa, exponent) = if biased == 0 { (fraction, -1074) } else { (fraction | (1u64 << 52), biased - 1075) };
    let zeros = mantissa.trailing_zeros();
    let odd = BigInt::from(mantissa >> zeros);
    let exponent = exponent + i64::from(zeros);
    let signed = if x < 0.0 { -odd } else { odd };
    Some(if exponent >= 0 {
        Rational::from_integer(signed << exponent as usize)
    } else {
        Rational::new_raw(signed, BigInt::one() << (-exponent) as usize)
    })
}

/// The integer `x` as a rational.
pub fn rational_from_i64(x: i64) -> Rational {
    BigRational::from_integer(BigInt::from(x))
}

/// Largest decimal exponent magnitude [`parse_rational`] accepts (`1e10000`; the f64 range ends
/// near 1e308 and its smallest subnormal near 1e-324). Larger ones would expand into numbers of
/// millions of digits from a few characters of text.
pub const MAX_DECIMAL_EXPONENT: u64 = 10_000;

/// Whether `text` is a decimal literal whose exponent (after `e`/`E`) exceeds
/// [`MAX_DECIMAL_EXPONENT`] in magnitude: why [`parse_rational`] refuses it.
pub fn exponent_out_of_range(text: &str) -> bool {
    let Some(i) = text.find(['e', 'E']) else { return false };
    let digits = text[i + 1..].trim();
    let digits = digits.strip_prefix(['+', '-']).unwrap_or(digits);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let significant = digits.trim_start_matches('0');
    significant.len() > 20 || significant.parse::<u64>().is_ok_and(|e| e > MAX_DECIMAL_EXPONENT)
}

/// Parses a decimal literal (`-0.125`, `3`, `1e-3`, `2.5E+2`) or a fraction (`19/20`) exactly.
/// Exponents beyond ±[`MAX_DECIMAL_EXPONENT`] are refused (`None`).
pub fn parse_rational(text: &str) -> Option<Rational> {
    let t = text.trim();
    if let Some((n, d)) = t.split_once('/') {
        let n = parse_rational(n)?;
        let d = parse_rational(d)?;
        if d.is_zero() {
            return None;
        }
        return Some(n / d);
    }
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i64>().ok()?),
        None => (t, 0),
    };
    if exponent.unsigned_abs() > MAX_DECIMAL_EXPONENT {
        return None;
    }
    let (negative, digits) = match mantissa.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, mantissa.strip_prefix('+').unwrap_or(mantissa)),
    };
    let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    if !int_part.bytes().all(|b| b.is_ascii_digit()) || !frac_part.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let all_digits = format!("{int_part}{frac_part}");
    let mut value = BigRational::from_integer(all_digits.parse::<BigInt>().ok()?);
    // Both terms are bounded (the exponent above, the fraction by the text's length).
    let scale = exponent - i64::try_from(frac_part.len()).ok()?;
    let ten = BigInt::from(10);
    let power = BigRational::from_integer(num_traits::pow(ten, usize::try_from(scale.unsigned_abs()).ok()?));
    if scale >= 0 {
        value *= power;
    } else {
        value /= power;
    }
    Some(if negative { -value } else { value })
}

/// The f64 nearest to `q`, ties to even, overflow to infinity.
pub fn to_f64_nearest(q: &Rational) -> f64 {
    // BigRational::to_f64 rounds correctly (it is implemented via exact integer division).
    q.to_f64().unwrap_or(if q.is_negative() { f64::NEG_INFINITY } else { f64::INFINITY })
}

/// The largest f64 that is <= q.
pub fn down(q: &Rational) -> f64 {
    let f = to_f64_nearest(q);
    if f.is_finite() && rational_from_f64(f) > *q { f.next_down() } else { f }
}

/// The smallest f64 that is >= q.
pub fn up(q: &Rational) -> f64 {
    let f = to_f64_nearest(q);
    if f.is_finite() && rational_from_f64(f) < *q { f.next_up() } else { f }
}

/// `x` moved to the nearest f64 whose exact value lies in `[lo, hi]`; `None` when the interval
/// holds no f64. The float nearest to a decimal end may lie outside the exact interval (the
/// nearest f64 of -0.005 is below -1/200), and an f64 run fed such a value leaves the declared
/// domain: every conversion of an exact interval member to f64 for a run goes through here.
pub fn clamp_f64_inside(x: f64, lo: &Rational, hi: &Rational) -> Option<f64> {
    let (l, h) = (up(lo), down(hi));
    (l <= h).then(|| x.clamp(l, h))
}

/// `[down(q), up(q)]`: the tightest f64 pair enclosing `q` (equal when q is a float).
pub fn enclose(q: &Rational) -> (f64, f64) {
    (down(q), up(q))
}

/// Whether the rational is an integer.
pub fn is_integer(q: &Rational) -> bool {
    q.denom().is_one()
}

/// Exact comparison of a float with a rational.
pub fn cmp_f64_rational(x: f64, q: &Rational) -> std::cmp::Ordering {
    rational_from_f64(x).cmp(q)
}

/// A short human form: the decimal if it terminates within 17 digits, else `p/q`.
pub fn display_rational(q: &Rational) -> String {
    if is_integer(q) {
        return q.numer().to_string();
    }
    // A fraction terminates in decimal iff its reduced denominator has only factors 2 and 5.
    let mut d = q.denom().clone();
    let two = BigInt::from(2);
    let five = BigInt::from(5);
    let mut digits = 0usize;
    let mut twos = 0usize;
    let mut fives = 0usize;
    while (&d % &two).is_zero() {
        d /= &two;
        twos += 1;
    }
    while (&d % &five).is_zero() {
        d /= &five;
        fives += 1;
    }
    digits += twos.max(fives);
    if d.is_one() && digits <= 17 {
        let scaled = q * BigRational::from_integer(num_traits::pow(BigInt::from(10), digits));
        let n = scaled.to_integer();
        let neg = n.is_negative();
        let s = n.abs().to_string();
        let s = format!("{s:0>width$}", width = digits + 1);
        let (i, f) = s.split_at(s.len() - digits);
        return format!("{}{}.{}", if neg { "-" } else { "" }, i, f);
    }
    format!("{}/{}", q.numer(), q.denom())
}

/// SMT-LIB 2 spelling of an exact rational: `(/ 3 10)`, `(- 5)`, `(/ (- 1) 2)`.
pub fn smtlib_rational(q: &Rational) -> String {
    let int = |n: &BigInt| {
        if n.is_negative() { format!("(- {}.0)", n.abs()) } else { format!("{n}.0") }
    };
    if is_integer(q) { int(q.numer()) } else { format!("(/ {} {})", int(q.numer()), int(q.denom())) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_literals_are_exact() {
        assert_eq!(parse_rational("0.1").unwrap(), BigRational::new(1.into(), 10.into()));
        assert_eq!(parse_rational("-32.2").unwrap(), BigRational::new((-161).into(), 5.into()));
        assert_eq!(parse_rational("19/20").unwrap(), BigRational::new(19.into(), 20.into()));
        assert_eq!(parse_rational("1e-3").unwrap(), BigRational::new(1.into(), 1000.into()));
        assert_eq!(parse_rational("2.5E+2").unwrap(), rational_from_i64(250));
        assert!(parse_rational("1/0").is_none());
        assert!(parse_rational("abc").is_none());
        assert!(parse_rational(".").is_none());
    }

    #[test]
    fn floats_convert_to_their_exact_value_in_lowest_terms() {
        let mut stream = crate::space::Stream::new(7);
        let mut cases = vec![0.0, -0.0, 1.0, -1.0, 0.5, 3.0, 0.1, -2.5e-300, f64::MAX, f64::MIN_POSITIVE];
        cases.extend([
            f64::from_bits(1),
            -f64::from_bits(3),
            f64::from_bits(0x000f_ffff_ffff_ffff),
            1e300,
            2f64.powi(80),
        ]);
        // Random bit patterns cover every exponent, subnormals included.
        cases.extend((0..20_000).map(|_| f64::from_bits(stream.bits())).filter(|x| x.is_finite()));
        for x in cases {
            let fast = rational_from_f64(x);
            assert_eq!(fast, BigRational::from_float(x).unwrap(), "{x:e}");
            // Lowest terms, positive denominator: equal values have equal representations.
            assert!(
                fast.denom().is_positive() && num_integer::Integer::gcd(fast.numer(), fast.denom()).is_one(),
                "{x:e}"
            );
        }
        assert!(try_rational_from_f64(f64::NAN).is_none() && try_rational_from_f64(f64::NEG_INFINITY).is_none());
    }

    #[test]
    fn enclosure_brackets_non_dyadic_constants() {
        let q = parse_rational("0.1").unwrap();
        let (lo, hi) = enclose(&q);
        assert!(rational_from_f64(lo) < q && q < rational_from_f64(hi));
        assert_eq!(lo.next_up(), hi);
        let half = parse_rational("0.5").unwrap();
        assert_eq!(enclose(&half), (0.5, 0.5));
    }

    #[test]
    fn display_is_exact() {
        assert_eq!(display_rational(&parse_rational("-110.525").unwrap()), "-110.525");
        assert_eq!(display_rational(&parse_rational("1/3").unwrap()), "1/3");
        assert_eq!(display_rational(&parse_rational("0.05").unwrap()), "0.05");
        assert_eq!(smtlib_rational(&parse_rational("-0.5").unwrap()), "(/ (- 1.0) 2.0)");
    }
}
