//! The f64 enclosure every function of this crate returns, and the one error type.

/// A closed interval `[lo, hi]` of f64 guaranteed to contain the exact real value (or the exact set
/// of values) it encloses. Ends may be infinite (`exp` of a large argument has `hi = +inf`); they
/// are never NaN and `lo <= hi` always.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Enclosure {
    pub lo: f64,
    pub hi: f64,
}

impl Enclosure {
    /// An exact value: both ends equal.
    pub const fn point(x: f64) -> Enclosure {
        Enclosure { lo: x, hi: x }
    }

    /// An enclosure from its ends, refused (an invalid-interval error naming `function`) when an
    /// end is NaN or `lo > hi`.
    pub fn checked(function: &'static str, lo: f64, hi: f64) -> Result<Enclosure, RealError> {
        if lo.is_nan() || hi.is_nan() || lo > hi {
            return Err(RealError::new(function, lo, hi, ErrorKind::InvalidInterval));
        }
        Ok(Enclosure { lo, hi })
    }

    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    pub fn width(&self) -> f64 {
        self.hi - self.lo
    }

    /// The smallest enclosure of both.
    pub fn hull(&self, other: &Enclosure) -> Enclosure {
        Enclosure { lo: self.lo.min(other.lo), hi: self.hi.max(other.hi) }
    }

    /// The same enclosure with its ends pulled into `[min, max]`, the function's known range
    /// (a faithful result widened by one ulp may step past a bound the function never crosses).
    pub(crate) fn clamp(self, min: f64, max: f64) -> Enclosure {
        Enclosure { lo: self.lo.max(min), hi: self.hi.min(max) }
    }
}

impl std::fmt::Display for Enclosure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{:e}, {:e}]", self.lo, self.hi)
    }
}

/// Why a function could not give an enclosure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Part of the argument lies outside the function's domain (`log` at or below 0, `sqrt`
    /// below 0, `log1p` at or below -1, a negative power at 0). For plant dynamics this is a
    /// domain exit of the system, not a bug.
    OutsideDomain,
    /// The argument interval contains a pole of `tan` (an odd multiple of pi/2), or an infinite
    /// end where `tan` has no limit.
    Pole,
    /// A division by an interval containing 0.
    DivisionByZero,
    /// An end is NaN or the ends are inverted: the caller's bug.
    InvalidInterval,
    /// The argument's position relative to the poles of `tan` could not be decided at the
    /// largest working precision tried (an end within about 2^-60000 of a pole).
    Undecided,
}

/// An argument a function cannot enclose: which function, the argument's ends (rounded outward to
/// f64 for high-precision arguments) and why.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("{function} of [{lo:e}, {hi:e}]: {}", self.kind.reason(self.function))]
pub struct RealError {
    pub function: &'static str,
    pub lo: f64,
    pub hi: f64,
    pub kind: ErrorKind,
}

impl RealError {
    pub(crate) fn new(function: &'static str, lo: f64, hi: f64, kind: ErrorKind) -> RealError {
        RealError { function, lo, hi, kind }
    }
}

impl ErrorKind {
    fn reason(self, function: &str) -> String {
        match self {
            ErrorKind::OutsideDomain => match function {
                "log" => "the argument reaches 0 or below (log is defined for x > 0)".into(),
                "log1p" => "the argument reaches -1 or below (log1p is defined for x > -1)".into(),
                "sqrt" => "the argument reaches below 0 (sqrt is defined for x >= 0)".into(),
                _ => "the argument contains 0, where a negative power is undefined".into(),
            },
            ErrorKind::Pole => "the argument contains a pole of tan (an odd multiple of pi/2)".into(),
            ErrorKind::DivisionByZero => "the divisor contains 0".into(),
            ErrorKind::InvalidInterval => "not an interval (an end is NaN, or lo > hi)".into(),
            ErrorKind::Undecided => {
                "whether the argument contains a pole could not be decided at the largest working precision".into()
            }
        }
    }
}
