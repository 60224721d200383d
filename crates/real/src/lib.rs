//! Rigorous elementary functions: every bound a proof rests on that involves exp, log, log1p,
//! expm1, sqrt, sin, cos, tan, atan, tanh, sigmoid or an integer power comes from here.
//!
//! The f64 functions of the standard library are not correctly rounded and document no error
//! bound, so an enclosure built on them is not a proof. This crate gives:
//!
//! - [`point`]: f64 enclosures at one argument, `f(x).lo <= f(x) <= f(x).hi` (the `f_down` /
//!   `f_up` of a proof), each end within one ulp of the correctly rounded downward / upward value;
//!   plus the derivatives of tanh and sigmoid (as `4E/(1+E)^2` and `E/(1+E)^2`, `E = e^(-2|x|)`,
//!   `e^(-|x|)`) that the CROWN tangent rules need, with their relative accuracy kept where tanh is
//!   close to ±1.
//! - [`interval`]: f64 enclosures of the image of an interval: monotone functions by their ends,
//!   sin/cos by their ends and the extrema inside (exact argument reduction, right for 1e300),
//!   tan refused on an interval containing a pole, log/log1p/sqrt refused on an interval reaching
//!   outside the domain (an [`ErrorKind::OutsideDomain`] the plant engine reports as a domain exit),
//!   powers by their monotone pieces.
//! - [`BigInterval`]: intervals with MPFR ends at a chosen precision (hundreds of bits) for
//!   validated replay: exact rationals in (enclosed), `+ - * /`, the same functions, comparisons
//!   with an exact rational that answer only when the whole interval is strictly on one side, and
//!   the ends out as exact rationals.
//!
//! # Choice of implementation
//!
//! Candidates compared (crates.io, November 2026), for guaranteed f64 ends, a high-precision mode,
//! build cost on a fresh Debian 12 machine with 2 cores, speed and maintenance:
//!
//! | candidate | guarantee | high precision | build / system | f64 speed | verdict |
//! | --- | --- | --- | --- | --- | --- |
//! | `core-math` 1.4 (CORE-MATH, INRIA; MIT) | binary64 functions correctly rounded to nearest, with published proofs and worst-case tests | none | C sources compiled by `cc` (~30 s), no system package | 8-21 ns (exp, tanh, sin) | **f64 layer** |
//! | `rug` 1.19 over `gmp-mpfr-sys` 1.5 (MPFR; LGPL-3.0+) | correctly rounded in every rounding mode at any precision; 25 years of use | yes | `use-system-libs`: links Debian's libgmp 6.2.1 / libmpfr 4.2.0 (`libgmp-dev`, `libmpfr-dev`), seconds | 1.1-1.5 µs at 53 bits | **high precision, huge-argument reduction, test reference** |
//! | `rug` >= 1.20 (gmp-mpfr-sys 1.6/1.7) | same | yes | needs GMP >= 6.3 for system libs, so builds GMP and MPFR from source with their test suites: minutes of CI | same | rejected (CI time) |
//! | `inari` 2 (IEEE 1788 intervals) | sound intervals | no (f64 only) | needs `target-cpu=haswell` for the whole build; its transcendental functions call MPFR anyway | MPFR's | rejected |
//! | `crlibm` 0.2 (CRlibm) | correctly rounded in all four modes, proven | no | GPL-2.0+ (incompatible with MIT/Apache), upstream unmaintained, no tanh | ~50 ns | rejected |
//! | `astro-float` 0.9, `dashu-float` 0.6 (pure Rust) | claim correct rounding; young transcendental code (dashu's trig added in 2026) | yes | pure Rust | µs | rejected: less vetted than MPFR for the same role |
//! | own argument-reduced series with a proven remainder | what we prove | possible | none | fast | rejected: a proof burden a vetted library already carries |
//!
//! Decision: **CORE-MATH for f64, MPFR for high precision.** CORE-MATH gives `y = RN(f(x))`; the
//! enclosure is `[pred(y), succ(y)]`, which needs only that `y` be *faithful* (one of the two floats
//! around `f(x)`): a misrounding in a hard case, the kind of bug CORE-MATH releases still fix (1.4.0
//! fixed fast paths of `tanh`, `expm1`, `pow`), cannot make it unsound. MPFR, 100x slower at 53
//! bits, serves `BigInterval`, the exact quadrant of huge arguments, and is the reference the tests
//! check CORE-MATH against (an independent implementation); `BigInterval` itself is checked against
//! Python's mpmath and against CORE-MATH. Square roots use IEEE sqrt (correctly rounded by the
//! hardware) with an exact FMA residual test, so exact roots stay points.
//!
//! Costs and caveats: `core-math-sys` compiles its C with `-march=native` unless `TARGET_CPU` is
//! set (a binary built on one machine may need that CPU); rug and gmp-mpfr-sys are LGPL-3.0+ (GMP
//! and MPFR are linked dynamically from the system; rug's Rust code is compiled in).
//!
//! Everything else here is outward rounding around those values: [`directed`] rounds the f64
//! operations, `quadrant` reduces arguments exactly (f64 fast path, MPFR fallback), and the
//! derivatives and sigmoid are written so that each end is rounded in the direction that keeps it
//! outside.

pub mod big;
mod big_fn;
pub mod directed;
mod enclosure;
pub mod interval;
pub mod point;
mod quadrant;

pub use big::BigInterval;
pub use enclosure::{Enclosure, ErrorKind, RealError};
