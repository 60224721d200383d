//! Elementary functions and integer powers in expressions: the text syntax, the four evaluators,
//! and soundness of the enclosures at random points.
//!
//! Random expression trees over `x`, `y` (sums, products, division by constants, powers, every
//! elementary function) are evaluated at random rational points three ways: outward-rounded f64
//! intervals ([`Interval`]), 256-bit MPFR enclosures ([`Enclosed`]) and, independently, Python's
//! mpmath at 1300 bits. The f64 interval must contain the 256-bit enclosure, and both must contain
//! mpmath's value (`tests/elementary_check.py`; skipped without python3+mpmath except under
//! `CI=true`).

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use std::fmt::Write as _;
use std::process::Command;
use trestle_ir::Interval;
use trestle_ir::arith::Arith;
use trestle_ir::enclosed::Enclosed;
use trestle_ir::expr::{Env, EvalError, Expr, Function, VarRef};
use trestle_ir::num::{Rational, parse_rational, rational_from_f64};
use trestle_ir::parse::{SimpleScope, Symbol, parse_expr, parse_pred};
use trestle_ir::print::Names;

fn q(s: &str) -> Rational {
    parse_rational(s).unwrap()
}

fn scope() -> SimpleScope {
    let mut s = SimpleScope::with_state(&["x", "y"]);
    s.add("N", Symbol::Const(q("3")));
    s
}

fn at(e: &Expr, x: &str, y: &str) -> Result<Rational, EvalError> {
    let s = [q(x), q(y)];
    e.eval_exact(&Env::new(&s, &[], &[]))
}

#[test]
fn functions_and_powers_parse_and_print_back() {
    let s = scope();
    let names = Names { state: vec!["x", "y"], action: vec![], nondet: vec![] };
    for text in [
        "sin(x) + cos(y)",
        "x - 0.1*x^3 + 0.1*y",
        "-x^2",
        "(-x)^2",
        "(x + y)^3 * exp(-x)",
        "sqrt(x^2 + y^2) + log(1 + x^2)",
        "tanh(sigmoid(x)) - tan(y/3)",
        "sin(x)^2 + cos(x)^2",
        "(x^2)^3",
        "x^N",
        "pow(x, 2) + x^(N - 1)",
        "x^0 + y^1",
    ] {
        let e = parse_expr(text, &s).unwrap_or_else(|err| panic!("{text}: {err}"));
        let printed = names.expr(&e);
        assert_eq!(parse_expr(&printed, &s).unwrap(), e, "{text} printed as {printed}");
    }
    // A power binds tighter than a unary minus; constants fold exactly.
    assert_eq!(at(&parse_expr("-x^2", &s).unwrap(), "3", "0").unwrap(), q("-9"));
    assert_eq!(parse_expr("2^10 - (1/2)^2", &s).unwrap(), Expr::Const(q("4095/4")));
    assert_eq!(parse_expr("pow(x, 3)", &s).unwrap(), parse_expr("x^3", &s).unwrap());
    // Polynomials stay exact; x^0 = 1.
    assert_eq!(at(&parse_expr("x - 0.1*x^3 + y^0", &s).unwrap(), "0.5", "7").unwrap(), q("1.4875"));
    // Predicates take them too.
    let p = parse_pred("x^2 + y^2 <= 1 and exp(x) > 0", &s).unwrap();
    assert_eq!(p.first_function(), Some(Function::Exp));
}

#[test]
fn bad_powers_and_calls_are_clear_errors() {
    let s = scope();
    let err = |t: &str| parse_expr(t, &s).unwrap_err().message;
    assert!(err("x**2").contains("write x^n"), "{}", err("x**2"));
    assert!(err("x^-1").contains("negative powers"), "{}", err("x^-1"));
    assert!(err("x^0.5").contains("non-negative integer"), "{}", err("x^0.5"));
    assert!(err("x^65").contains("at most 64"), "{}", err("x^65"));
    assert!(err("x^2^3").contains("does not chain"), "{}", err("x^2^3"));
    assert!(err("x^y").contains("neither"), "{}", err("x^y"));
    assert!(err("x^(y)").contains("constant"), "{}", err("x^(y)"));
    assert!(err("sin(x, y)").contains("1 argument"), "{}", err("sin(x, y)"));
    assert!(err("cosh(x)").contains("known:") && err("cosh(x)").contains("sigmoid"), "{}", err("cosh(x)"));
    assert!(err("pow(x, y)").contains("neither"), "{}", err("pow(x, y)"));
}

#[test]
fn exact_evaluation_refuses_functions_and_f64_reports_domains() {
    let s = scope();
    let e = parse_expr("x + sin(y)", &s).unwrap();
    let error = at(&e, "1", "0").unwrap_err();
    assert_eq!(error, EvalError::Irrational { function: Function::Sin });
    assert_eq!(error.to_string(), "sin has no exact rational value: validated replay needed");
    let f = |t: &str, x: f64| parse_expr(t, &s).unwrap().eval_f64(&Env::new(&[x, 0.0], &[], &[]));
    assert!(matches!(f("sqrt(x)", -1.0), Err(EvalError::OutsideDomain { function: Function::Sqrt, .. })));
    assert!(matches!(f("log(x)", 0.0), Err(EvalError::OutsideDomain { function: Function::Log, .. })));
    assert_eq!(f("sqrt(x)", 0.0).unwrap(), 0.0);
    assert_eq!(f("x^3", -2.0).unwrap(), -8.0);
    // Intervals: a partial function whose argument reaches outside its domain fails, and the
    // enclosure of the whole expression is then the whole line (it proves nothing).
    let g = parse_expr("sqrt(x)", &s).unwrap();
    let b = [Interval::new(-1.0, 4.0), Interval::point(0.0)];
    assert!(g.eval(&Env::new(&b, &[], &[])).is_err());
    assert_eq!(g.eval_interval(&Env::new(&b, &[], &[])), Interval::ENTIRE);
    let b = [Interval::new(1.0, 4.0), Interval::point(0.0)];
    assert_eq!(g.eval_interval(&Env::new(&b, &[], &[])), Interval::new(1.0, 2.0));
    // Even powers of an interval around 0 are tight, not the product rule's.
    let p = parse_expr("x^2", &s).unwrap();
    let b = [Interval::new(-1.0, 2.0), Interval::point(0.0)];
    assert_eq!(p.eval_interval(&Env::new(&b, &[], &[])), Interval::new(0.0, 4.0));
}

/// Random trees: leaves `x`, `y` and small rationals; sums, products, negation, division by a
/// constant, powers 0..=4, every elementary function.
fn tree() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        Just(Expr::Var(VarRef::State(0))),
        Just(Expr::Var(VarRef::State(1))),
        (-20i64..=20, 1i64..=9).prop_map(|(n, d)| Expr::Const(Rational::new(n.into(), d.into()))),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        let b = |e| Box::new(e);
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(move |(a, c)| Expr::Add(b(a), b(c))),
            (inner.clone(), inner.clone()).prop_map(move |(a, c)| Expr::Sub(b(a), b(c))),
            (inner.clone(), inner.clone()).prop_map(move |(a, c)| Expr::Mul(b(a), b(c))),
            inner.clone().prop_map(move |a| Expr::Neg(b(a))),
            (inner.clone(), 1i64..=7).prop_map(move |(a, k)| Expr::Div(b(a), Rational::new(k.into(), 3.into()))),
            (inner.clone(), 0u32..=4).prop_map(move |(a, n)| Expr::Pow(b(a), n)),
            (inner, prop::sample::select(Function::ALL.to_vec())).prop_map(move |(a, f)| Expr::Apply(f, b(a))),
        ]
    })
}

fn point() -> impl Strategy<Value = Rational> {
    (-3000i64..=3000, 1i64..=997).prop_map(|(n, d)| Rational::new(n.into(), d.into()))
}

/// Both evaluations, when both are defined: the f64 interval and the 256-bit enclosure's ends.
fn evaluate(e: &Expr, x: &Rational, y: &Rational) -> Option<(Interval, Rational, Rational)> {
    let boxes = [Interval::of_rational(x), Interval::of_rational(y)];
    let iv = e.eval(&Env::new(&boxes, &[], &[])).ok()?;
    let points = [Enclosed::<256>::constant(x), Enclosed::<256>::constant(y)];
    let big = e.eval(&Env::new(&points, &[], &[])).ok()?;
    let (lo, hi) = big.ends();
    Some((iv, lo?, hi?))
}

fn check_nested(e: &Expr, x: &Rational, y: &Rational) -> Result<(), TestCaseError> {
    let Some((iv, lo, hi)) = evaluate(e, x, y) else { return Ok(()) };
    prop_assert!(lo <= hi);
    // The f64 interval contains the 256-bit enclosure (each end compared exactly).
    prop_assert!(!iv.lo.is_nan() && !iv.hi.is_nan(), "{e:?}");
    prop_assert!(
        iv.lo == f64::NEG_INFINITY || rational_from_f64(iv.lo) <= lo,
        "{e:?} at ({x}, {y}): {iv} vs low end {lo}"
    );
    prop_assert!(
        iv.hi == f64::INFINITY || rational_from_f64(iv.hi) >= hi,
        "{e:?} at ({x}, {y}): {iv} vs high end {hi}"
    );
    // A rational-valued expression's enclosure holds its exact value.
    if e.is_rational_valued() {
        let s = [x.clone(), y.clone()];
        let exact = e.eval_exact(&Env::new(&s, &[], &[])).unwrap();
        prop_assert!(lo <= exact && exact <= hi);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn interval_evaluation_encloses_the_high_precision_value(e in tree(), x in point(), y in point()) {
        check_nested(&e, &x, &y)?;
    }
}

/// The expression as Python over mpmath (`mpf` rationals, `**` powers).
fn python(e: &Expr) -> String {
    let b = |a: &Expr| python(a);
    match e {
        Expr::Const(c) => format!("(mpf({})/{})", c.numer(), c.denom()),
        Expr::Var(VarRef::State(0)) => "x".into(),
        Expr::Var(_) => "y".into(),
        Expr::Add(a, c) => format!("({} + {})", b(a), b(c)),
        Expr::Sub(a, c) => format!("({} - {})", b(a), b(c)),
        Expr::Mul(a, c) => format!("({} * {})", b(a), b(c)),
        Expr::Neg(a) => format!("(-{})", b(a)),
        Expr::Div(a, k) => format!("({} * {} / mpf({}))", b(a), k.denom(), k.numer()),
        Expr::Pow(a, n) => format!("({} ** {n})", b(a)),
        Expr::Apply(f, a) => format!("{}({})", f.name(), b(a)),
        other => panic!("not generated: {other:?}"),
    }
}

fn python_with_mpmath() -> Option<&'static str> {
    ["python3", "/usr/bin/python3"].into_iter().find(|python| {
        Command::new(python).args(["-c", "import mpmath"]).output().is_ok_and(|out| out.status.success())
    })
}

/// The check file: one line per (expression, point) where both enclosures are finite.
fn lines(sabotage: bool) -> String {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = (tree(), point(), point());
    let mut out = String::new();
    let mut n = 0;
    while n < 400 {
        let (e, x, y) = strategy.new_tree(&mut runner).unwrap().current();
        let Some((iv, mut lo, hi)) = evaluate(&e, &x, &y) else { continue };
        if !(iv.lo.is_finite() && iv.hi.is_finite()) || e.is_rational_valued() {
            continue;
        }
        if sabotage && n == 7 {
            // Raise the 256-bit enclosure's low end above its high end's value: caught.
            lo = &hi + Rational::new(1.into(), 1_000_000.into());
        }
        let bits = |v: f64| format!("{:016x}", v.to_bits());
        writeln!(out, "{}\t{}\t{}\t{}\t{}\t{}\t{}", python(&e), x, y, bits(iv.lo), bits(iv.hi), lo, hi).unwrap();
        n += 1;
    }
    out
}

#[test]
fn mpmath_agrees_with_both_enclosures_of_random_expressions() {
    let Some(python) = python_with_mpmath() else {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "no python3 with mpmath under CI=true");
        eprintln!("skipped: no python3 with mpmath");
        return;
    };
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/elementary_check.py");
    let dir = std::env::temp_dir().join(format!("trestle-elementary-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("cases.txt");
    let run = |text: String| {
        std::fs::write(&data, text).unwrap();
        Command::new(python).arg(&script).arg(&data).output().expect("python runs")
    };
    let out = run(lines(false));
    let report = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "mpmath disagrees:\n{report}{}", String::from_utf8_lossy(&out.stderr));
    let count: usize = report.split(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(count >= 300, "only {count} cases checked:\n{report}");
    let out = run(lines(true));
    assert_eq!(out.status.code(), Some(1), "a sabotaged enclosure passed:\n{}", String::from_utf8_lossy(&out.stdout));
    std::fs::remove_dir_all(&dir).ok();
}
