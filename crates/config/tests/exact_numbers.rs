//! Issue 9, item 4: TOML float literals lost digits silently (`1.00000000000000000001` was read as
//! 1, `1e-400` as 0), which flipped verdicts. Every number of a system file is read from its text.

use trestle_config::{Overrides, load_system_from_str};
use trestle_ir::num::{Rational, parse_rational};
use trestle_ir::system::{NondetDomain, System};
use trestle_ir::{Pred, pred::CmpOp};
use trestle_testkit::{one_var_system, scratch};

fn q(s: &str) -> Rational {
    parse_rational(s).unwrap()
}

fn load_with(text: &str, set: &[&str]) -> Result<System, String> {
    let (_dir, path) = scratch("sys.toml", text);
    let overrides = Overrides::parse(&set.iter().map(|s| s.to_string()).collect::<Vec<_>>())?;
    load_system_from_str(text, &path, &overrides).map_err(|e| e.to_string())
}

fn load(text: &str) -> Result<System, String> {
    load_with(text, &[])
}

/// A one-variable system with an inline identity network (a = x, x' = a), `extra` tables after
/// the regions.
fn system(regions: &str, state: &str, extra: &str) -> String {
    one_var_system(&format!("{regions}\n{extra}"), state, "a")
}

/// The constants of every comparison in a predicate, in order.
fn constants(p: &Pred) -> Vec<Rational> {
    let mut out = Vec::new();
    fn walk(p: &Pred, out: &mut Vec<Rational>) {
        match p {
            Pred::Cmp(a, _, b) => {
                out.extend(a.as_const().cloned());
                out.extend(b.as_const().cloned());
            }
            Pred::Not(a) => walk(a, out),
            Pred::And(xs) | Pred::Or(xs) => xs.iter().for_each(|x| walk(x, out)),
            Pred::True | Pred::False => {}
        }
    }
    walk(p, &mut out);
    out
}

const LONG: &str = "1.00000000000000000001";

#[test]
fn the_issue_literal_keeps_every_digit_in_region_tables() {
    let text = system(
        &format!("init = {{ x = [-0.5, 0.5] }}\nsafe = {{ x = [-0.5, {LONG}] }}\ninvariant = {{ x = [-0.5, {LONG}] }}"),
        "{ type = \"real\" }",
        "",
    );
    let sys = load(&text).unwrap();
    let inv = sys.invariant.as_ref().unwrap();
    assert_eq!(constants(inv), vec![q("-0.5"), q(LONG)]);
    assert_ne!(q(LONG), q("1"));
    assert_eq!(constants(sys.safe.as_ref().unwrap()), vec![q("-0.5"), q(LONG)]);
}

#[test]
fn every_place_a_number_is_read_is_exact() {
    let text = system(
        &format!(
            "init = {{ x = {{ values = [0.1, {LONG}] }} }}\ninvariant = {{ boxes = [{{ x = [1e-400, {LONG}] }}, {{ x = 0.3 }}] }}"
        ),
        &format!("{{ type = \"real\", domain = [-1e-30, {LONG}] }}"),
        &format!(
            "[constants]\nK = {LONG}\nT = 0.1\n[nondet]\nc = {{ interval = [0.1, {LONG}] }}\nd = {{ values = [1e-400, 2.5e+3] }}"
        ),
    );
    let sys = load(&text).unwrap();
    assert_eq!(sys.constants, vec![("K".to_string(), q(LONG)), ("T".to_string(), q("1/10"))]);
    assert_eq!(sys.state[0].domain.lo, Some(q("-1e-30")));
    assert_eq!(sys.state[0].domain.hi, Some(q(LONG)));
    assert_eq!(sys.nondet[0].domain, NondetDomain::Interval(q("0.1"), q(LONG)));
    // 1e-400 is below the smallest double: as an f64 it was 0.
    assert_eq!(sys.nondet[1].domain, NondetDomain::Set(vec![q("1e-400"), q("2500")]));
    assert_eq!(constants(&sys.init), vec![q("0.1"), q(LONG)]);
    assert_eq!(constants(sys.invariant.as_ref().unwrap()), vec![q("1e-400"), q(LONG), q("0.3")]);
}

#[test]
fn set_overrides_are_exact_too() {
    let text = system("init = { x = [0, 0.5] }", "{ type = \"real\" }", "[constants]\nK = 1");
    let sys = load_with(&text, &[&format!("constants.K={LONG}"), "init.x=[0.1, 1_000.000_1]"]).unwrap();
    assert_eq!(sys.constants[0].1, q(LONG));
    assert_eq!(constants(&sys.init), vec![q("0.1"), q("1000.0001")]);
    let e = load_with(&text, &["constants.K=nan"]).unwrap_err();
    assert!(e.contains("--set constants.K=nan: nan is not a finite number"), "{e}");
}

#[test]
fn non_finite_huge_and_malformed_numbers_are_clear_errors() {
    let base = |k: &str| system("init = { x = [0, 0.5] }", "{ type = \"real\" }", &format!("[constants]\nK = {k}"));
    for (k, want) in [
        ("inf", "key `constants.K`: inf is not a finite number"),
        ("-inf", "-inf is not a finite number"),
        ("nan", "nan is not a finite number"),
        ("1e400", "floating-point number overflowed"),
        ("99999999999999999999", "integer number overflowed"),
        ("\"1e99999\"", "'1e99999' is out of range: decimal exponents are limited to ±10000"),
        ("\"0x1p-3\"", "'0x1p-3' is not a number"),
        ("\"1/0\"", "'1/0' is not a number"),
    ] {
        let e = load(&base(k)).unwrap_err();
        assert!(e.contains(want), "{k}: {e}");
        assert!(!e.contains("RawNum") && !e.contains("untagged"), "{e}");
    }
    // Beyond the f64 range, a string holds the exact value; hex integers are TOML integers.
    let sys = load(&base("\"1e400\"")).unwrap();
    assert_eq!(sys.constants[0].1, q("1e400"));
    assert_eq!(load(&base("0x10")).unwrap().constants[0].1, q("16"));
}

/// Inline weights are f64 by definition: a literal is the nearest double (documented).
#[test]
fn inline_weights_are_the_nearest_double() {
    let text = system("init = { x = [0, 0.5] }", "{ type = \"real\" }", "")
        .replace("weights = [[1.0]], bias = [0.0]", &format!("weights = [[0.1]], bias = [{LONG}]"));
    let sys = load(&text).unwrap();
    let trestle_ir::network::Layer::Dense(d) = &sys.networks[0].network.layers[0] else { panic!("dense") };
    assert_eq!(d.weights.data, vec![0.1]);
    assert_eq!(d.bias, vec![1.0]);
    let bad = text.replace(&format!("bias = [{LONG}]"), "bias = [\"x\"]");
    let e = load(&bad).unwrap_err();
    assert!(e.contains("'x' is not a finite number (a network weight)"), "{e}");
}

/// Issue 9, item 15: serde messages named Rust types ("struct RawStateVar", "untagged enum
/// RawRegion"); they say what is expected in the user's words.
#[test]
fn shape_errors_say_what_is_expected_not_the_rust_type() {
    let base = system("init = { x = [0, 0.5] }", "{ type = \"real\" }", "");
    for (from, to, want) in [
        ("x = { type = \"real\" }", "x = \"real\"", "expected a state variable: a table like { type = \"real\" }"),
        ("init = { x = [0, 0.5] }", "init = 3", "expected a region: a predicate in a string"),
        ("init = { x = [0, 0.5] }", "init = { x = [0, 0.5, 1] }", "key `init.x`: a range has two ends [lo, hi], not 3"),
        ("init = { x = [0, 0.5] }", "init = { x = true }", "expected a value (0.5), a range ([lo, hi])"),
        ("init = { x = [0, 0.5] }", "init = { x = { value = [1] } }", "unknown field `value`, expected `values`"),
        (
            "init = { x = [0, 0.5] }",
            "init = { boxes = [{ x = 1 }], x = 2 }",
            "`boxes` cannot be mixed with variables (x)",
        ),
        ("init = { x = [0, 0.5] }", "init = { boxes = [{ x = [1] }] }", "key `init.boxes[0].x`: a range has two ends"),
        (
            "actions = [\"a\"]",
            "actions = 3",
            "key `controller.actions`: invalid type: integer `3`, expected a sequence",
        ),
        ("bias = [0.0]", "bias = [[0.0]]", "a number (a network weight)"),
    ] {
        let e = load(&base.replacen(from, to, 1)).unwrap_err();
        assert!(e.contains(want), "{to}: {e}");
        for internal in ["Raw", "untagged enum", "struct "] {
            assert!(!e.contains(internal), "{to}: {e}");
        }
    }
}

#[test]
fn comparison_constants_stay_exact_in_text_regions() {
    let sys = load(&system(&format!("init = \"0 <= x <= {LONG}\""), "{ type = \"real\" }", "")).unwrap();
    let Pred::And(atoms) = &sys.init else { panic!("{:?}", sys.init) };
    assert!(matches!(&atoms[1], Pred::Cmp(_, CmpOp::Le, b) if b.as_const() == Some(&q(LONG))));
}
