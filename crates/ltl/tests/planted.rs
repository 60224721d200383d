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

/// testkit's planted tanh system (`x' = tanh(x) + c`, Init `0 <= x <= 1/2`) with the exact
/// decimal `c`.
fn tanh_system(c: &str) -> System {
    system_from_text(&trestle_testkit::planted_nonlinear(trestle_testkit::Nonlinear::TanhController, "tanh", c))
}

/// A recurrent tanh controller: `h' = tanh(x + h)` (zero at first), `u = h`, `x' = u + 1/4`,
/// Init `0 <= x <= 1/2`. `|h| < 1` keeps `x <= 5/4` forever; `x` passes 1 within four steps from
/// every start (from 0: 0, 1/4, 0.495, 0.88, 1.157).
const RECURRENT_TANH: &str = r#"
init = "0 <= x <= 0.5"
[system]
name = "recurrent-tanh"
[state]
x = { type = "real" }
[networks.memory]
layers = [
  { type = "recurrent", weights = [[1.0]], recurrent = [[1.0]], bias = [0.0], activation = "tanh" },
  { type = "dense", weights = [[1.0]], bias = [0.0], activation = "identity" },
]
[controller]
network = "memory"
inputs = ["x"]
actions = ["u"]
[step]
x = "u + 0.25"
"#;

/// The verdict of `text` on `sys`, every refutation checked: an exact one replays, a validated
/// one re-validates from its exact start and choices alone, and its violated predicate is the
/// formula's (`x <= bound` of a `G`): the last state's enclosure strictly outside it.
fn check_nonlinear(sys: &System, text: &str, opts: LtlOptions) -> trestle_ltl::LtlResult {
    let phi = parse_ltl(text, &SimpleScope::with_state(&["x"])).unwrap();
    let r = check_ltl(sys, &phi, &opts, &Budget::unlimited()).unwrap();
    match &r.verdict {
        Verdict::Refuted { .. } => panic!("{text}: an exact trace through tanh: {:?}", r.verdict),
        Verdict::RefutedValidated { trace } => {
            trace.revalidate(sys).unwrap_or_else(|e| panic!("{text}: {e:?}"));
            let last = &trace.run.states.last().unwrap()[0];
            let bound = text.split("x <= ").nth(1).and_then(|b| b.strip_suffix(')')).unwrap();
            assert!(last.lo > trestle_ir::num::parse_rational(bound).unwrap(), "{text}: {trace}");
            assert_eq!(trace.start.len(), 1);
            assert!(trace.start[0] >= trestle_ir::num::parse_rational("0").unwrap());
        }
        _ => {}
    }
    r
}

fn ltl_opts(method: Method, domain: trestle_ltl::bpt::Domain) -> LtlOptions {
    LtlOptions { method, bpt: domain, ..LtlOptions::default() }
}

/// The runs from a grid of starts, enclosed at high precision (`trestle_core::validate`, as
/// `simulate` runs a tanh system): the hand truth of `G<=k (x <= bound)` on them.
fn simulated_always(sys: &System, k: usize, bound: &str) -> bool {
    let bound = trestle_ir::num::parse_rational(bound).unwrap();
    (0..=8).all(|i| {
        let start = vec![trestle_ir::num::parse_rational(&format!("{i}/16")).unwrap()];
        let (_, run) = trestle_core::validate::enclose_run(sys, &start, &vec![(Vec::new(), 0); k]).unwrap();
        assert!(run.states.iter().all(|s| s[0].lo <= s[0].hi));
        // Decided on every run of the grid: entirely inside or entirely outside.
        let inside = run.states.iter().all(|s| s[0].hi <= bound);
        assert!(inside || run.states.iter().any(|s| s[0].lo > bound));
        inside
    })
}

/// Planted truths through a tanh controller. With `c = 1 - tanh(1) - 1e-9` every run stays
/// below 1 (the fixed point is below 1) and passes 0.99 at step 6; with `c = 1/2` every run passes 1 by step 3 (from 0:
/// 0, 1/2, 0.962, 1.245) and the runs from 1/2 by step 2. Every method that takes the system
/// gives the hand truth or unknown, the refutations are validated runs, and the two bound
/// propagation domains agree where both decide.
#[test]
fn tanh_controllers_have_their_planted_truths() {
    use trestle_ltl::bpt::Domain::{Crown, Interval};
    let gap = trestle_testkit::Nonlinear::TanhController.gap();
    let safe = tanh_system(&format!("{gap} - 0.000000001"));
    let unsafe_ = tanh_system("0.5");
    assert!(simulated_always(&safe, 6, "1"));
    // The run from 1/2 creeps up to the fixed point just below 1: 0.99398 at step 6.
    assert!(simulated_always(&safe, 5, "0.99") && !simulated_always(&safe, 6, "0.99"));
    assert!(!simulated_always(&unsafe_, 3, "1"));
    let cases: [(&System, &str, Option<bool>); 6] = [
        (&safe, "G<=6 (x <= 1)", Some(true)),
        (&safe, "G<=6 (x <= 0.99)", Some(false)),
        (&unsafe_, "G<=3 (x <= 1)", Some(false)),
        (&unsafe_, "G<=2 (x <= 1)", Some(false)),
        (&unsafe_, "F<=3 (x >= 1.2)", Some(true)),
        (&unsafe_, "X^3 (x <= 1)", Some(false)),
    ];
    for (sys, text, truth_of) in cases {
        let mut decided = Vec::new();
        for opts in [ltl_opts(Method::Auto, Interval), ltl_opts(Method::Bpt, Interval), ltl_opts(Method::Bpt, Crown)] {
            let r = check_nonlinear(sys, text, opts.clone());
            let t = truth(&r.verdict);
            assert!(t.is_none() || t == truth_of, "{text} by {}: {:?}", r.method, r.verdict);
            if opts.method == Method::Bpt {
                decided.push(t);
            }
            if opts.method == Method::Auto && truth_of.is_some() {
                assert_eq!(t, truth_of, "{text}: auto decides: {:?}", r.verdict);
            }
        }
        if let [Some(a), Some(b)] = decided[..] {
            assert_eq!(a, b, "{text}: intervals and CROWN disagree");
        }
    }
    // Bound propagation's proof carries the certificate `trestle certify` re-checks through the
    // rigorous tanh bounds.
    let phi = parse_ltl("G<=6 (x <= 1)", &SimpleScope::with_state(&["x"])).unwrap();
    let r = check_nonlinear(&safe, "G<=6 (x <= 1)", ltl_opts(Method::Bpt, Interval));
    let Verdict::Proven { certificate: Some(c) } = &r.verdict else { panic!("{:?}", r.verdict) };
    let cert: trestle_ltl::certificate::BoundedJson = serde_json::from_value(c.0.clone()).unwrap();
    let checked = trestle_ltl::certificate::certify_bounded(&cert, &safe, &phi).unwrap();
    assert!(checked.valid, "{:?}", checked.checks);
    // Every run from the whole Init box is past 1 at step 3: bound propagation alone refutes,
    // by a validated run.
    let r = check_nonlinear(&unsafe_, "G<=3 (x <= 1)", ltl_opts(Method::Bpt, Crown));
    assert!(matches!(r.verdict, Verdict::RefutedValidated { .. }), "{:?}", r.verdict);
    // Unbounded G: an inductive box proves it (with c = 1/5 the runs converge to 0.93; the
    // margin of 1e-9 above is beyond bound propagation's widening, and the engine says so:
    // `trestle ltl` hands such a G p to the bridge engine); a bounded instance refutes it,
    // validated.
    let r = check_nonlinear(&tanh_system("0.2"), "G (x <= 1)", LtlOptions::default());
    assert_eq!(truth(&r.verdict), Some(true), "{:?}", r.verdict);
    let r = check_nonlinear(&safe, "G (x <= 1)", LtlOptions::default());
    assert!(matches!(&r.verdict, Verdict::Unknown(u) if u.to_string().contains("G<=10 holds")), "{:?}", r.verdict);
    let r = check_nonlinear(&unsafe_, "G (x <= 1)", LtlOptions::default());
    assert!(matches!(r.verdict, Verdict::RefutedValidated { .. }), "{:?}", r.verdict);
    // A violation of F<=2 needs a whole path below 1.2 (0, 1/2, 0.962 from 0): no single state
    // refutes it, so it stays unknown, with the reason; never an exact trace, never "true".
    let r = check_nonlinear(&unsafe_, "F<=2 (x >= 1.2)", LtlOptions::default());
    assert!(matches!(r.verdict, Verdict::Unknown(_)), "{:?}", r.verdict);
    // F p cannot be refuted (a lasso through irrational values cannot be shown to close).
    let r = check_nonlinear(&safe, "F (x >= 1)", LtlOptions::default());
    assert!(matches!(r.verdict, Verdict::Unknown(_)), "{:?}", r.verdict);
}

/// `x' = tanh(x) - x/2 + c` from `0 <= x <= 2`: the successor's maximum is at the interior point
/// `atanh(1/sqrt 2) = 0.8814`, `sqrt(1/2) - 0.4407 + c = 0.26643 + c`, where a relaxation of tanh
/// by lines over the whole of `[0, 2]` overshoots (it is tight only where its tangents touch).
fn hump(c: &str) -> System {
    system_from_text(&format!(
        "init = \"0 <= x <= 2\"\n[system]\nname = \"hump\"\n[state]\nx = {{ type = \"real\" }}\n\
         [networks.squash]\nlayers = [{{ type = \"dense\", weights = [[1.0]], bias = [0.0], activation = \"tanh\" }}]\n\
         [controller]\nnetwork = \"squash\"\ninputs = [\"x\"]\nactions = [\"u\"]\n[step]\nx = \"u - 0.5*x + {c}\"\n"
    ))
}

/// RMILP's encodings: adaptive with and without the LP tightening, and the paper's baseline
/// (interval bounds, no fixing); each must give the same truth where it decides.
fn rmilp_encodings() -> Vec<LtlOptions> {
    use trestle_ltl::rmilp::{RmilpOptions, Tightening};
    let with = |adaptive, tightening| LtlOptions {
        method: Method::Rmilp,
        rmilp: RmilpOptions { adaptive, tightening, ..RmilpOptions::default() },
        ..LtlOptions::default()
    };
    vec![with(true, Tightening::Off), with(true, Tightening::On), with(false, Tightening::Off)]
}

/// RMILP on tanh controllers relaxes their neurons soundly: where bound propagation decides, RMILP
/// agrees (true as evidence, false only as a validated run), in every encoding; a violation that
/// needs a whole path stays unknown, saying why.
#[test]
fn rmilp_on_tanh_agrees_with_bound_propagation() {
    let unsafe_ = tanh_system("0.5");
    let calm = tanh_system("0.2");
    let cases: [(&System, &str, bool); 5] = [
        (&unsafe_, "G<=3 (x <= 1)", false),
        (&unsafe_, "X^3 (x <= 1)", false),
        (&calm, "G<=6 (x <= 1)", true),
        (&unsafe_, "F<=3 (x >= 1.2)", true),
        (&calm, "X^2 (x >= 0.2)", true),
    ];
    for (sys, text, truth_of) in cases {
        let bpt = check_nonlinear(sys, text, ltl_opts(Method::Bpt, trestle_ltl::bpt::Domain::Crown));
        assert_eq!(truth(&bpt.verdict), Some(truth_of), "{text} by bpt: {:?}", bpt.verdict);
        for opts in rmilp_encodings() {
            let r = check_nonlinear(sys, text, opts.clone());
            assert_eq!(
                (r.method, truth(&r.verdict)),
                ("rmilp", Some(truth_of)),
                "{text} {:?}: {:?}",
                opts.rmilp,
                r.verdict
            );
            if truth_of {
                assert!(matches!(r.verdict, Verdict::Evidence { .. }), "{text}: {:?}", r.verdict);
            } else {
                assert!(matches!(r.verdict, Verdict::RefutedValidated { .. }), "{text}: {:?}", r.verdict);
            }
            assert!(r.stats.rmilp.relaxed_neurons > 0, "{text}: {:?}", r.stats.rmilp);
        }
    }
    // F<=2 (x >= 1.2) is false (0, 1/2, 0.962 from 0), but only a whole path shows it.
    let r = check_nonlinear(&unsafe_, "F<=2 (x >= 1.2)", rmilp_encodings().remove(0));
    let Verdict::Unknown(why) = &r.verdict else { panic!("{:?}", r.verdict) };
    assert!(why.to_string().contains("needs a whole path"), "{why}");
}

/// A planted spurious witness: on `hump` the relaxation by lines over `[0, 2]` lets the successor
/// exceed 0.2668 although no run does (true maximum 0.26643). RMILP never calls that "violated": the
/// candidate fails validation, its loose neurons are cut into pieces, and the refined model proves
/// the bound (evidence), in every encoding. Below the true maximum (0.26) the candidate validates.
#[test]
fn a_spurious_relaxation_witness_is_refined_never_reported() {
    let sys = hump("0");
    for opts in rmilp_encodings() {
        let r = check_nonlinear(&sys, "X (x <= 0.2668)", opts.clone());
        assert!(matches!(r.verdict, Verdict::Evidence { .. }), "{:?}: {:?}", opts.rmilp, r.verdict);
        assert!(r.stats.rmilp.refinements >= 1, "{:?}: the first relaxation's witness was spurious", r.stats.rmilp);
        let r = check_nonlinear(&sys, "X (x <= 0.26)", opts.clone());
        let Verdict::RefutedValidated { trace } = &r.verdict else { panic!("{:?}: {:?}", opts.rmilp, r.verdict) };
        assert!(trace.run.states[1][0].lo > trestle_ir::num::parse_rational("0.26").unwrap(), "{trace}");
    }
    // The planted truth, on a grid of starts enclosed at high precision: the maximum lies between.
    let successors: Vec<_> = (0..=64)
        .map(|i| {
            let start = vec![trestle_ir::num::parse_rational(&format!("{i}/32")).unwrap()];
            trestle_core::validate::enclose_run(&sys, &start, &[(Vec::new(), 0)]).unwrap().1.states[1][0].clone()
        })
        .collect();
    let bound = |b: &str| trestle_ir::num::parse_rational(b).unwrap();
    assert!(successors.iter().all(|x| x.hi < bound("0.2668")) && successors.iter().any(|x| x.lo > bound("0.26")));
}

/// The lasso search on a tanh controller says only that no lasso exists in the relaxation (or
/// that the relaxation's lasso is a candidate), never a refutation; a step with an elementary
/// function is refused by both MILP methods.
#[test]
fn lassos_never_refute_through_tanh_and_elementary_steps_are_refused() {
    let sys = tanh_system("0.5");
    let opts = LtlOptions { method: Method::Lasso, depth: 3, ..LtlOptions::default() };
    let phi = parse_ltl("F (x <= 0)", &SimpleScope::with_state(&["x"])).unwrap();
    let r = check_ltl(&sys, &phi, &opts, &Budget::unlimited()).unwrap();
    let Verdict::Unknown(why) = &r.verdict else { panic!("{:?}", r.verdict) };
    assert!(why.to_string().contains("cannot be shown to close"), "{why}");
    let sin = system_from_text(&trestle_testkit::planted_nonlinear(trestle_testkit::Nonlinear::SinStep, "sin", "0.5"));
    for (method, text) in [(Method::Rmilp, "G<=2 (x <= 1)"), (Method::Lasso, "F (x <= 0)")] {
        let phi = parse_ltl(text, &SimpleScope::with_state(&["x"])).unwrap();
        let opts = LtlOptions { method, ..LtlOptions::default() };
        match check_ltl(&sin, &phi, &opts, &Budget::unlimited()) {
            Err(trestle_ltl::LtlError::Unsupported(why)) => {
                assert!(why.contains("applies sin") && why.contains("--method bpt"), "{why}")
            }
            other => panic!("{method:?}: {other:?}"),
        }
    }
}

/// A recurrent tanh controller: its validated refutation carries the exact start and choices
/// (the hidden state starts at zero and is recomputed by re-validation, not printed), and what
/// `|tanh| < 1` bounds is proven.
#[test]
fn recurrent_tanh_controllers_are_refuted_by_validated_runs() {
    let sys = system_from_text(RECURRENT_TANH);
    assert!(!simulated_always(&sys, 4, "1"));
    assert!(simulated_always(&sys, 8, "1.25"));
    let r = check_nonlinear(&sys, "G<=6 (x <= 1)", LtlOptions::default());
    let Verdict::RefutedValidated { trace } = &r.verdict else { panic!("{:?}", r.verdict) };
    assert!(trace.len() <= 4, "{trace}");
    let json = trace.to_json(&sys);
    assert!(json.hidden_exact.is_none() && json.precision_bits.is_some());
    for domain in [trestle_ltl::bpt::Domain::Interval, trestle_ltl::bpt::Domain::Crown] {
        let r = check_nonlinear(&sys, "G<=6 (x <= 1.3)", ltl_opts(Method::Bpt, domain));
        assert!(r.verdict.is_proven(), "{domain:?}: {:?}", r.verdict);
    }
}
