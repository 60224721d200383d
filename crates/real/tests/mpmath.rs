//! An independent check: Python's mpmath evaluates every function at 800 bits on 300 arguments per
//! function (the sweep's kinds of arguments), and the f64 enclosure (CORE-MATH) and the 256-bit
//! `BigInterval` (MPFR) must both contain its value (`tests/mpmath_check.py`). MPFR is the
//! reference of the other tests; this one does not rely on it.
//!
//! It needs a python3 with mpmath (`scripts/setup.sh` installs Debian's python3-mpmath); without
//! one the test says so and passes, except under `CI=true`, where it fails.

mod common;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use common::{REFERENCE_BITS, argument, cases, rng};
use trestle_real::BigInterval;

const PER_FUNCTION: usize = 300;

/// A python3 that can import mpmath: the one on PATH, else Debian's.
fn python_with_mpmath() -> Option<&'static str> {
    ["python3", "/usr/bin/python3"].into_iter().find(|python| {
        Command::new(python).args(["-c", "import mpmath"]).output().is_ok_and(|out| out.status.success())
    })
}

/// `m e` with value `m 2^e`, exactly.
fn binary(f: &rug::Float) -> String {
    let (m, e) = f.to_integer_exp().expect("a finite end");
    format!("{m} {e}")
}

/// The lines of the check file; `sabotage` raises one BigInterval's lower end above its value.
fn lines(sabotage: bool) -> String {
    let mut out = String::new();
    for (k, case) in cases().iter().enumerate() {
        let mut rng = rng(500 + k as u64);
        for i in 0..PER_FUNCTION {
            let x = argument(case, &mut rng, i);
            let e = (case.enclose)(x).unwrap();
            let big = (case.big)(&BigInterval::from_f64(x, REFERENCE_BITS).unwrap()).unwrap();
            if !(e.lo.is_finite() && e.hi.is_finite() && big.lo().is_finite() && big.hi().is_finite()) {
                continue; // beyond f64 or MPFR's range: the sweep checks those against MPFR
            }
            let mut lo = big.lo().clone();
            if sabotage && k == 0 && i == 3 {
                lo = big.hi().clone();
                lo.next_up();
            }
            let bits = |v: f64| format!("{:016x}", v.to_bits());
            writeln!(
                out,
                "{} {} {} {} {} {}",
                case.name,
                bits(x),
                bits(e.lo),
                bits(e.hi),
                binary(&lo),
                binary(big.hi())
            )
            .unwrap();
        }
    }
    out
}

fn run(python: &str, script: &Path, data: &Path) -> std::process::Output {
    Command::new(python).arg(script).arg(data).output().expect("python runs")
}

#[test]
fn mpmath_agrees_with_both_enclosures() {
    let Some(python) = python_with_mpmath() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "no python3 with mpmath under CI=true (scripts/setup.sh installs it)"
        );
        eprintln!("skipped: no python3 with mpmath");
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mpmath_check.py");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("enclosures.txt");
    let text = lines(false);
    assert!(text.lines().count() > 5000, "only {} arguments", text.lines().count());
    std::fs::write(&data, text).unwrap();
    let out = run(python, &script, &data);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "mpmath disagrees:\n{report}{}", String::from_utf8_lossy(&out.stderr));
    eprint!("{report}");

    // The check can fail: one BigInterval moved above its value is caught.
    std::fs::write(&data, lines(true)).unwrap();
    let out = run(python, &script, &data);
    assert_eq!(out.status.code(), Some(1), "a sabotaged enclosure passed:\n{}", String::from_utf8_lossy(&out.stdout));
}
