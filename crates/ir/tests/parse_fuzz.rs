//! Property tests of the expression, predicate and formula parsers (issue 9, fuzzing): whatever
//! the text, a parse returns (no panic, no stack overflow, no hang) with a result or an error that
//! points into the text; what parses prints back to text that parses to the same value (and, through
//! elementary functions, which have no exact value, to the same functions and powers).

use proptest::prelude::*;
use trestle_ir::expr::{Env, Expr, VarRef};
use trestle_ir::num::{Rational, parse_rational};
use trestle_ir::parse::{MAX_NESTING, ParseError, SimpleScope, Symbol, parse_ctl, parse_expr, parse_ltl, parse_pred};
use trestle_ir::pred::Pred;
use trestle_ir::print::Names;

fn scope() -> SimpleScope {
    let mut s = SimpleScope::with_state(&["x", "y"]);
    s.add("a0", Symbol::Var(VarRef::Action(0)));
    s.add("c", Symbol::Var(VarRef::Nondet(0)));
    s.add("b", Symbol::BoolVar(VarRef::Action(1)));
    s.add("K", Symbol::Const(parse_rational("1/3").unwrap()));
    s.add("m", Symbol::Macro(parse_expr("x - 2*y", &SimpleScope::with_state(&["x", "y"])).unwrap()));
    s
}

fn names() -> Names<'static> {
    Names { state: vec!["x", "y"], action: vec!["a0", "b"], nondet: vec!["c"] }
}

/// Words of the language, its neighbours and a few strangers (huge exponents, look-alike
/// Unicode, stray punctuation), so that random sequences reach every rule and every error.
const WORDS: &[&str] = &[
    "x", "y", "a0", "c", "b", "K", "m", "zz", "0", "1", "2.5", "0.1", ".5", "7.", "1e3", "1E-2", "1e99999", "1/3",
    "00", "1..2", "+", "-", "*", "/", "(", ")", "[", "]", ",", "<=", "<", ">=", ">", "==", "!=", "=", "!", "&&", "||",
    "->", "^", "~", "not", "and", "or", "if", "then", "else", "min", "max", "relu", "abs", "lookup", "true", "false",
    "AX", "EX", "AF", "EF", "AG", "EG", "A", "E", "U", "R", "X", "F", "G", "<=3", "^2", "≤", "−", "é", "$", "\"",
    "\u{0}", "sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "sigmoid", "pow", "**", "^3", "^-1", "^K", "x^2",
    "sin(x)", "cosh",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 0..40).prop_map(|w| w.join(" "))
}

/// The state (x, y), actions (a0, b) and non-deterministic input (c) values used to compare two
/// parses: generic enough that different expressions rarely agree by chance.
fn env_values() -> [Vec<Rational>; 3] {
    let q = |s: &str| parse_rational(s).unwrap();
    [vec![q("3/7"), q("-5/11")], vec![q("13/17"), q("1")], vec![q("-2/9")]]
}

/// The start of a long text, for messages.
fn short(text: &str) -> String {
    let head: String = text.chars().take(160).collect();
    if head.len() < text.len() { format!("{head:?}..") } else { format!("{head:?}") }
}

/// An error points into the text and says something.
fn check_error(text: &str, e: &ParseError) {
    assert!(!e.message.is_empty(), "{text:?}");
    assert!(e.offset <= text.len(), "{text:?}: offset {} beyond {}", e.offset, text.len());
    assert!(e.caret.ends_with('^'), "{text:?}: caret {:?}", e.caret);
}

fn value(e: &Expr) -> Option<Rational> {
    let [s, a, n] = env_values();
    e.eval_exact(&Env::new(&s, &a, &n)).ok()
}

/// The functions and powers a tree applies, sorted: printing keeps them (values of expressions
/// through functions cannot be compared exactly).
fn applied(e: &Expr) -> Vec<String> {
    let mut out = Vec::new();
    e.visit_exprs(&mut |x| match x {
        Expr::Apply(f, _) => out.push(f.name().to_string()),
        Expr::Pow(_, n) => out.push(format!("^{n}")),
        _ => {}
    });
    out.sort();
    out
}

fn truth(p: &Pred) -> Option<bool> {
    let [s, a, n] = env_values();
    p.eval_exact(&Env::new(&s, &a, &n)).ok()
}

/// Parses `text` in every mode; what parses prints to text that parses again, to the same value.
/// (Not to the same tree: sums are rebuilt balanced from the printed flat list, which may group
/// and fold constants differently.)
fn parse_everything(text: &str) {
    let (s, n) = (scope(), names());
    match parse_expr(text, &s) {
        Err(e) => check_error(text, &e),
        Ok(e) => {
            let printed = n.expr(&e);
            let again = parse_expr(&printed, &s)
                .unwrap_or_else(|err| panic!("{} printed as {}: {err}", short(text), short(&printed)));
            assert_eq!(value(&again), value(&e), "{} printed as {}", short(text), short(&printed));
            assert_eq!(applied(&again), applied(&e), "{} printed as {}", short(text), short(&printed));
        }
    }
    match parse_pred(text, &s) {
        Err(e) => check_error(text, &e),
        Ok(p) => {
            let printed = n.pred(&p);
            let again = parse_pred(&printed, &s)
                .unwrap_or_else(|err| panic!("{} printed as {}: {err}", short(text), short(&printed)));
            assert_eq!(truth(&again), truth(&p), "{} printed as {}", short(text), short(&printed));
        }
    }
    match parse_ctl(text, &s) {
        Err(e) => check_error(text, &e),
        Ok(f) => {
            let printed = n.ctl(&f);
            parse_ctl(&printed, &s)
                .unwrap_or_else(|err| panic!("{} printed as {}: {err}", short(text), short(&printed)));
        }
    }
    match parse_ltl(text, &s) {
        Err(e) => check_error(text, &e),
        Ok(f) => {
            let printed = n.ltl(&f);
            parse_ltl(&printed, &s)
                .unwrap_or_else(|err| panic!("{} printed as {}: {err}", short(text), short(&printed)));
        }
    }
}

/// Openers that each add one level of nesting, with what closes them.
const OPENERS: &[(&str, &str)] = &[
    ("(", ")"),
    ("-", ""),
    ("relu(", ")"),
    ("min(1, ", ")"),
    ("if x <= 1 then 2 else ", ""),
    ("abs(", ")"),
    ("sin(", ")"),
    ("sqrt(", ")"),
    ("pow(", ", 2)"),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn word_sequences_parse_or_fail_cleanly(text in soup()) {
        parse_everything(&text);
    }

    #[test]
    fn arbitrary_text_parses_or_fails_cleanly(text in "\\PC{0,80}") {
        parse_everything(&text);
    }

    /// Sums, products and chains of any length, with constants folded: the printed form gives
    /// the same value.
    #[test]
    fn flat_chains_round_trip(
        items in prop::collection::vec((prop::sample::select(&["+", "-", "*", "/ 3 *", "- 2 *"][..]),
                                        prop::sample::select(&["x", "y", "a0", "c", "K", "m", "2", "0.5", "sin(x)", "x^2", "exp(-y)^3"][..])), 1..300)
    ) {
        let text: String = items.iter().map(|(op, v)| format!(" {op} {v}")).collect();
        let text = format!("y{text}");
        prop_assert!(parse_expr(&text, &scope()).is_ok(), "{}", text);
        parse_everything(&text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any mix of nesting parses when it is within the limit and is the clear error beyond it
    /// (10 000 levels used to overflow the stack).
    #[test]
    fn nesting_parses_or_is_refused_by_depth(
        openers in prop::collection::vec(prop::sample::select(OPENERS), 0..3 * MAX_NESTING),
        as_pred in any::<bool>(),
    ) {
        let open: String = openers.iter().map(|(o, _)| *o).collect();
        let close: String = openers.iter().rev().map(|(_, c)| *c).collect();
        let expr = format!("{open}x{close}");
        let result = if as_pred { parse_pred(&format!("{expr} <= 1"), &scope()).map(|_| ()) } else {
            parse_expr(&expr, &scope()).map(|_| ())
        };
        match result {
            Ok(()) => prop_assert!(openers.len() < MAX_NESTING, "{} levels accepted", openers.len()),
            Err(e) => {
                prop_assert!(e.message.contains("nested too deeply"), "{}", e.message);
                prop_assert!(openers.len() + 2 >= MAX_NESTING / 2, "{} levels refused", openers.len());
            }
        }
    }
}
