//! Planted truths: small systems whose LTL answers are known, by hand and by an explicit oracle
//! (every path enumerated exactly), decided by every method, which must agree with the truth.

use proptest::prelude::*;
use trestle_core::Trace;
use trestle_core::{Budget, Verdict};
use trestle_ir::num::rational_from_i64;
use trestle_ir::parse::{SimpleScope, parse_ltl};
use trestle_ir::{Ltl, System};
use trestle_ltl::{LtlOptions, Method, PathFormula, check_ltl};
use trestle_testkit::{WALK, system_from_text};

/// WALK started anywhere in 3..=6 (x: an int in [0, 10], moves +1 / -1 clamped).
fn walk_from_3_to_6() -> System {
    system_from_text(&WALK.replace("init = \"x == 5\"", "init = \"3 <= x <= 6\""))
}

/// Whether every path of `k` steps from every integer start state in Init satisfies the formula:
/// all paths enumerated, states computed exactly by `Trace::simulate`.
fn oracle(sys: &System, phi: &Ltl) -> bool {
    let f = PathFormula::of(phi, false).unwrap();
    let k = f.depth();
    let b = &sys.init.to_box_union(1, 4).unwrap()[0];
    let (lo, hi) = (b.lo[0].clone().unwrap().to_integer(), b.hi[0].clone().unwrap().to_integer());
    let (lo, hi): (i64, i64) = (lo.try_into().unwrap(), hi.try_into().unwrap());
    (lo..=hi).all(|x0| {
        (0..1u32 << k).all(|code| {
            let choices = (0..k).map(|t| (Vec::new(), (code >> t) as usize & 1));
            let trace = Trace::simulate(sys, vec![rational_from_i64(x0)], choices).unwrap();
            f.holds_exact(&trace.states).unwrap()
        })
    })
}

fn check(sys: &System, text: &str, method: Method) -> Verdict {
    check_with(sys, text, LtlOptions { method, ..LtlOptions::default() })
}

fn check_with(sys: &System, text: &str, opts: LtlOptions) -> Verdict {
    let phi = parse_ltl(text, &SimpleScope::with_state(&["x"])).unwrap();
    let r = check_ltl(sys, &phi, &opts, &Budget::unlimited()).unwrap();
    if let Verdict::Refuted { trace, .. } = &r.verdict {
        trace.replay(sys).unwrap();
        assert!(!PathFormula::of(&phi, false).unwrap().holds_exact(&trace.states).unwrap(), "{text}: {trace:?}");
    }
    r.verdict
}

/// The verdict's truth value, `None` when undecided.
fn truth(v: &Verdict) -> Option<bool> {
    match v {
        Verdict::Proven { .. } | Verdict::Evidence { .. } => Some(true),
        Verdict::Refuted { .. } | Verdict::RefutedValidated { .. } => Some(false),
        Verdict::Unknown(_) => None,
    }
}

#[test]
fn walk_formulas_have_their_hand_computed_truth() {
    let sys = system_from_text(WALK);
    let cases = [
        ("X^3 (x <= 8)", true),
        ("X^3 (x == 8)", false),
        ("X^2 (x == 3 or x == 5 or x == 7)", true),
        ("G<=3 (x >= 2)", true),
        ("G<=3 (x >= 3)", false),
        ("F<=2 (x == 7)", false),
        ("F<=1 (x != 5)", true),
        ("(x >= 5) U<=3 (x == 8)", false),
        ("(x >= 4) U<=1 (x <= 4 or x >= 6)", true),
        ("(x == 9) R<=2 (x >= 3)", true),
        ("G<=2 F<=1 (x != 5)", true),
        ("not X (x == 6)", false),
    ];
    for (text, expected) in cases {
        let phi = parse_ltl(text, &SimpleScope::with_state(&["x"])).unwrap();
        assert_eq!(oracle(&sys, &phi), expected, "oracle on {text}");
        for method in [Method::Auto, Method::Rmilp] {
            assert_eq!(truth(&check(&sys, text, method)), Some(expected), "{text} by {method:?}");
        }
        if let Some(b) = truth(&check(&sys, text, Method::Bpt)) {
            assert_eq!(b, expected, "{text} by BPT");
        }
    }
}

/// Random formulas over the walk from several start states: RMILP always decides and agrees with
/// the oracle; BPT agrees whenever it decides.
fn formula() -> impl Strategy<Value = String> {
    let atom = (0..=10i64, prop_oneof!["<=", ">=", "==", "<", ">"]).prop_map(|(c, op)| format!("x {op} {c}"));
    atom.prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|a| format!("not ({a})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) and ({b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) or ({b})")),
            (1..=2u32, inner.clone()).prop_map(|(k, a)| format!("X^{k} ({a})")),
            (0..=2u32, inner.clone()).prop_map(|(k, a)| format!("F<={k} ({a})")),
            (0..=2u32, inner.clone()).prop_map(|(k, a)| format!("G<={k} ({a})")),
            (0..=1u32, inner.clone(), inner.clone()).prop_map(|(k, a, b)| format!("({a}) U<={k} ({b})")),
            (0..=1u32, inner.clone(), inner).prop_map(|(k, a, b)| format!("({a}) R<={k} ({b})")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn random_formulas_agree_with_the_oracle(text in formula()) {
        let sys = walk_from_3_to_6();
        let phi = parse_ltl(&text, &SimpleScope::with_state(&["x"])).unwrap();
        let expected = oracle(&sys, &phi);
        prop_assert_eq!(truth(&check(&sys, &text, Method::Rmilp)), Some(expected), "{}", text);
        if let Some(b) = truth(&check(&sys, &text, Method::Bpt)) {
            prop_assert_eq!(b, expected, "BPT on {}", text);
        }
    }
}

/// SCALE: x in [0, 1], a = x, x' = 2x or x / 2. From x = 1 two doublings reach 4 exactly: the
/// non-strict bound holds on the boundary, the strict one fails there and only there.
#[test]
fn boundary_cases_on_a_continuous_system() {
    let sys = system_from_text(trestle_testkit::SCALE);
    // Tight on the boundary: bound propagation proves it exactly ([0, 4] at step 2); the MILP's
    // relaxation touches the boundary (slack 0), its path does not violate the bound exactly and
    // no path violates it by the search gap, so RMILP alone says unknown, never false.
    let auto = check(&sys, "X^2 (x <= 4)", Method::Auto);
    assert!(auto.is_proven(), "{:?}", auto);
    assert_eq!(truth(&check(&sys, "X^2 (x <= 4)", Method::Rmilp)), None);
    // Likewise x = 0 stays 0: x >= 0 is tight.
    assert!(check(&sys, "G<=3 (x >= 0)", Method::Auto).is_proven());
    assert_eq!(truth(&check(&sys, "G<=3 (x >= 0)", Method::Rmilp)), None);
    // With room to spare the MILP's evidence has a margin: the whole of it without the cutoff,
    // the cutoff with it (no path violates the bound with the atoms relaxed by less).
    let mut whole = LtlOptions { method: Method::Rmilp, ..LtlOptions::default() };
    whole.rmilp.margin_cutoff = None;
    match check_with(&sys, "G<=3 (x >= -0.5)", whole) {
        Verdict::Evidence { margin: m } => assert!((m - 0.5).abs() < 1e-6, "{m}"),
        other => panic!("{other:?}"),
    }
    match check(&sys, "G<=3 (x >= -0.5)", Method::Rmilp) {
        Verdict::Evidence { margin: m } => assert_eq!(m, trestle_ltl::rmilp::MARGIN_CUTOFF),
        other => panic!("{other:?}"),
    }
    for method in [Method::Auto, Method::Rmilp] {
        let v = check(&sys, "X^2 (x < 4)", method);
        let Verdict::Refuted { trace, .. } = &v else { panic!("{method:?}: {v:?}") };
        assert_eq!(trace.states[0], vec![rational_from_i64(1)]);
        assert_eq!(trace.states[2], vec![rational_from_i64(4)]);
        assert_eq!(truth(&check(&sys, "F<=2 (x <= 0.25)", method)), Some(false), "{method:?}");
    }
}

/// A system whose runs stop with an error outside the domain (the default `on_domain_exit`):
/// enclosures that reach past the domain decide nothing, since a run might end in an error there.
#[test]
fn enclosures_past_an_erroring_domain_decide_nothing() {
    // x in [0, 10] starting at 9, moving up by 1 (no clamp): the second step leaves the domain.
    let text = WALK.replace("init = \"x == 5\"", "init = \"x == 9\"").replace("min(a + 1, 10)", "a + 1");
    let sys = system_from_text(&text);
    let v = check(&sys, "X^2 (x >= 0)", Method::Bpt);
    assert!(matches!(v, Verdict::Unknown(_)), "{v:?}");
    // Within the domain, the enclosures still decide.
    assert_eq!(truth(&check(&sys, "X (x >= 0)", Method::Bpt)), Some(true));
}
