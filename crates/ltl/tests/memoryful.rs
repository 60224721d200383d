//! Unbounded F, G and U on the walk (hand truths) and the project's PI-controller benchmarks
//! (configs/systems/pi-tuned.toml, pi-oscillating.toml): invariants prove G, lassos refute F, each
//! lasso replayed exactly with its loop on the full state (environment and hidden state).

use trestle_core::{Budget, Verdict};
use trestle_ir::parse::{SimpleScope, parse_ltl};
use trestle_ir::{Rational, System};
use trestle_ltl::{LtlOptions, LtlResult, Method, Tightening, check_ltl};
use trestle_testkit::{WALK, load, repo, system_from_text};

fn check(sys: &System, var: &str, text: &str, method: Method) -> LtlResult {
    check_with(sys, var, text, LtlOptions { method, ..LtlOptions::default() })
}

/// The MILP's exact minimum slack as the margin (no cutoff).
fn whole_margin(method: Method) -> LtlOptions {
    let mut opts = LtlOptions { method, ..LtlOptions::default() };
    opts.rmilp.margin_cutoff = None;
    opts
}

fn check_with(sys: &System, var: &str, text: &str, opts: LtlOptions) -> LtlResult {
    let phi = parse_ltl(text, &SimpleScope::with_state(&[var])).unwrap();
    let r = check_ltl(sys, &phi, &opts, &Budget::unlimited()).unwrap();
    if let Verdict::Refuted { trace, .. } = &r.verdict {
        trace.replay(sys).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
    r
}

fn q(text: &str) -> Rational {
    trestle_ir::num::parse_rational(text).unwrap()
}

#[test]
fn walk_unbounded_formulas() {
    let sys = system_from_text(WALK);
    // From 5, +-1 moves clamped to [0, 10]: 8 need never be reached (5, 6, 5, 6, ...).
    let r = check(&sys, "x", "F (x == 8)", Method::Auto);
    assert_eq!(r.method, "lasso");
    let Verdict::Refuted { trace, .. } = &r.verdict else { panic!("{:?}", r.verdict) };
    let j = trace.loop_back.expect("a lasso");
    assert_eq!(trace.states.last(), Some(&trace.states[j]));
    assert!(trace.states.iter().all(|s| s[0] != q("8")));
    // Every path leaves 5 at once.
    assert!(matches!(
        check(&sys, "x", "F (x != 5)", Method::Auto).verdict,
        Verdict::Proven { .. } | Verdict::Evidence { .. }
    ));
    // The domain is an inductive box: G (x >= 0) by invariant, exactly.
    let r = check(&sys, "x", "G (x >= 0)", Method::Auto);
    assert!(r.method == "invariant" && r.verdict.is_proven(), "{} {:?}", r.method, r.verdict);
    // 10 is reached after 5 steps up: G (x <= 9) fails on a finite path.
    let r = check(&sys, "x", "G (x <= 9)", Method::Auto);
    let Verdict::Refuted { trace, .. } = &r.verdict else { panic!("{:?}", r.verdict) };
    assert!(trace.loop_back.is_none() && trace.states.iter().any(|s| s[0] == q("10")));
    // (x >= 3) U (x == 8): 5, 4, 3, 2 leaves x >= 3 before 8.
    assert!(matches!(check(&sys, "x", "(x >= 3) U (x == 8)", Method::Auto).verdict, Verdict::Refuted { .. }));
    // Methods that cannot decide a shape say unknown, never a wrong verdict.
    assert!(matches!(check(&sys, "x", "G (x >= 0)", Method::Lasso).verdict, Verdict::Unknown(_)));
    assert!(matches!(check(&sys, "x", "F (x == 8)", Method::Invariant).verdict, Verdict::Unknown(_)));
}

#[test]
fn tuned_pi_controller_stays_and_settles() {
    let sys = load(&repo().join("configs/systems/pi-tuned.toml"), &[]);
    let stays = "G (x <= 0.5 and x >= -0.5)";
    let r = check(&sys, "x", stays, Method::Auto);
    assert!(r.method == "invariant" && r.verdict.is_proven(), "{} {:?}", r.method, r.verdict);
    // The bounded version: exact by bound propagation, and by the MILP alone to t = 10 (evidence
    // with the margin 1/4 the truth has: |x| <= 1/4).
    let r = check(&sys, "x", "G<=20 (x <= 0.5 and x >= -0.5)", Method::Auto);
    assert!(r.method == "bpt" && r.verdict.is_proven(), "{} {:?}", r.method, r.verdict);
    let r = check_with(&sys, "x", "G<=10 (x <= 0.5 and x >= -0.5)", whole_margin(Method::Rmilp));
    match r.verdict {
        Verdict::Evidence { margin: m } => assert!((m - 0.25).abs() < 1e-6, "{m}"),
        other => panic!("{other:?}"),
    }
    // An invariant must also lie inside the predicate: |x| <= 1/8 is left by the first step.
    let r = check(&sys, "x", "G (x <= 0.125 and x >= -0.125)", Method::Auto);
    assert!(matches!(r.verdict, Verdict::Refuted { .. }), "{:?}", r.verdict);
}

#[test]
fn oscillating_pi_controller_never_settles() {
    let sys = load(&repo().join("configs/systems/pi-oscillating.toml"), &[]);
    let r = check(&sys, "x", "F (x <= 0.1 and x >= -0.1)", Method::Lasso);
    assert_eq!(r.method, "lasso");
    let Verdict::Refuted { trace, .. } = &r.verdict else { panic!("{:?}", r.verdict) };
    let j = trace.loop_back.expect("a lasso");
    let n = trace.len();
    assert!(j < n);
    // The loop closes on the full state: position and the controller's hidden state.
    assert_eq!(trace.states[n], trace.states[j]);
    assert_eq!(trace.hidden[n], trace.hidden[j]);
    assert!(trace.hidden[n].iter().flatten().flatten().any(|h| *h != Rational::from_integer(0.into())));
    for s in &trace.states {
        let x = &s[0];
        assert!(*x > q("0.1") || *x < q("-0.1"), "{x}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]
    /// Simulated runs of the tuned controller (random starts and disturbances, exact arithmetic)
    /// never leave the invariant the proof found, a box strictly inside |x| <= 1/2.
    #[test]
    fn tuned_runs_stay_inside_the_proven_invariant(
        x0 in -64i64..=64,
        ws in proptest::collection::vec(-64i64..=64, 40),
    ) {
        let sys = load(&repo().join("configs/systems/pi-tuned.toml"), &[]);
        let start = sys.init.to_box_union(1, 4).unwrap().remove(0);
        let h = trestle_ltl::bpt::invariant(&sys, &start, 160, &Budget::unlimited()).unwrap().expect("the proof's invariant");
        let r = |n: i64, d: i64| Rational::new(n.into(), d.into());
        let choices = ws.iter().map(|&w| (vec![r(w, 1024)], 0));
        let trace = trestle_core::Trace::simulate(&sys, vec![r(x0, 256)], choices).unwrap();
        for (s, m) in trace.states.iter().zip(&trace.hidden) {
            let x = trestle_ir::num::to_f64_nearest(&s[0]);
            proptest::prop_assert!(h.state[0].lo <= x && x <= h.state[0].hi, "x = {x} outside {:?}", h.state[0]);
            for (hv, iv) in m.iter().flatten().flatten().zip(h.hidden.iter().flatten().flatten()) {
                let v = trestle_ir::num::to_f64_nearest(hv);
                proptest::prop_assert!(iv.lo <= v && v <= iv.hi, "hidden {v} outside {iv:?}");
            }
        }
    }
}

/// x' = x/2 + 1/2 from x = 0, x in [0, 2]: x_t = 1 - 2^-t, so G (x <= 1.001) holds. The minimal
/// invariant (Kleene iteration from Init, widened by 1/64) overshoots the attractor to about 1.01;
/// the maximal one (images of [0, 2]: [1 - 2^-k, 1 + 2^-k]) lies inside the predicate from k = 10,
/// and the ten steps before are checked from Init.
const ATTRACTOR: &str = r#"
[system]
name = "attractor"
[state]
x = { type = "real", domain = [0, 2] }
[networks.half]
layers = [{ weights = [[0.5]], bias = [0.5], activation = "identity" }]
[controller]
network = "half"
inputs = ["x"]
actions = ["u"]
[step]
x = "u"
[init]
x = 0
"#;

#[test]
fn the_maximal_invariant_proves_what_the_minimal_one_overshoots() {
    let sys = system_from_text(ATTRACTOR);
    let start = sys.init.to_box_union(1, 1).unwrap().remove(0);
    let minimal =
        trestle_ltl::bpt::invariant(&sys, &start, 160, &Budget::unlimited()).unwrap().expect("an inductive box");
    assert!(minimal.state[0].hi > 1.001, "the widening overshoots: {:?}", minimal.state[0]);
    let r = check(&sys, "x", "G (x <= 1.001)", Method::Invariant);
    assert!(r.method == "invariant" && r.verdict.is_proven(), "{} {:?}", r.method, r.verdict);
    assert_eq!(r.depth, 10, "I_10 = [1 - 2^-10, 1 + 2^-10] is the first image inside x <= 1.001");
    // Its certificate: the points 1 - 2^-t of the run from 0 before step 10, and I_10, re-checked
    // against G (x <= 1.001) and rejected for a bound the run crosses.
    let cert: Option<trestle_bridge::certificate::ProofJson> =
        r.verdict.certificate().and_then(|c| serde_json::from_value(c.0.clone()).ok());
    let Some(cert) = &cert else { panic!("the bridge engine re-proves the maximal invariant: {:?}", r.verdict) };
    assert_eq!(cert.invariant.len(), 11, "{:?}", cert.invariant);
    let certified = |bound: &str| {
        trestle_bridge::certificate::certify_always(cert, &sys, &parse_pred_x(&format!("x <= {bound}"))).unwrap()
    };
    assert!(certified("1.001").valid);
    assert!(!certified("0.99").valid);
    let (k, h) = trestle_ltl::bpt::maximal_invariant(&sys, &parse_pred_x("x <= 1.001"), 160, &Budget::unlimited())
        .unwrap()
        .unwrap();
    assert_eq!(k, 10);
    // Every exact run from Init is inside I_k from step k on.
    let trace = trestle_core::Trace::simulate(&sys, vec![q("0")], (0..40).map(|_| (vec![], 0))).unwrap();
    for (t, s) in trace.states.iter().enumerate().skip(k) {
        let x = &s[0];
        assert!(
            trestle_ir::num::cmp_f64_rational(h.state[0].lo, x).is_le()
                && trestle_ir::num::cmp_f64_rational(h.state[0].hi, x).is_ge(),
            "step {t}: {x} outside {:?}",
            h.state[0]
        );
    }
    // A bound below the attractor is crossed at step 10: a finite violating path.
    let r = check(&sys, "x", "G (x <= 0.999)", Method::Auto);
    assert!(matches!(r.verdict, Verdict::Refuted { .. }), "x_10 = 1 - 2^-10 > 0.999: {:?}", r.verdict);
}

fn parse_pred_x(text: &str) -> trestle_ir::Pred {
    trestle_ir::parse::parse_pred(text, &SimpleScope::with_state(&["x"])).unwrap()
}

/// The integral PI servo, `G<=10 |x| <= 1/2` by the MILP alone: its exact minimum slack (the
/// margin without cutoff: 1/2 minus the largest |x| of any run over 10 steps) is a property of the
/// runs, not of the encoding, so the baseline, adaptive splitting, adaptive splitting with LP
/// tightening, and the race of the two must all find the same one. A tightened bound that cut a
/// run would raise it. Only the race counts a winner, exactly one.
#[test]
fn pi_integral_margin_is_the_same_in_every_encoding() {
    let sys = load(&repo().join("configs/systems/pi-integral.toml"), &[]);
    let mut margins = Vec::new();
    let encodings =
        [(false, Tightening::Off), (true, Tightening::Off), (true, Tightening::On), (true, Tightening::Race)];
    for (adaptive, tightening) in encodings {
        let mut opts = whole_margin(Method::Rmilp);
        (opts.rmilp.adaptive, opts.rmilp.tightening) = (adaptive, tightening);
        let r = check_with(&sys, "x", "G<=10 (x <= 0.5 and x >= -0.5)", opts);
        match r.verdict {
            Verdict::Evidence { margin: m } => margins.push(m),
            other => panic!("adaptive {adaptive}, {tightening:?}: {other:?}"),
        }
        let wins = r.stats.rmilp.tightened_wins + r.stats.rmilp.plain_wins;
        assert_eq!(wins, usize::from(tightening == Tightening::Race), "{tightening:?}: {:?}", r.stats.rmilp);
    }
    assert!(margins.iter().all(|m| (m - margins[0]).abs() < 1e-6 && *m > 0.0), "{margins:?}");
}

/// The race answers as either encoding alone, on a refutation by lasso (the oscillating servo),
/// a refutation by a bounded path and a proof (the walk); a check cancelled from outside stops
/// both searches with an error, never a verdict.
#[test]
fn a_race_decides_as_each_encoding_alone() {
    let osc = load(&repo().join("configs/systems/pi-oscillating.toml"), &[]);
    let walk = system_from_text(WALK);
    let cases = [
        (&osc, "F (x <= 0.1 and x >= -0.1)", Method::Lasso),
        (&walk, "G<=6 (x <= 9)", Method::Rmilp),
        (&walk, "G<=6 (x >= 0)", Method::Rmilp),
    ];
    for (sys, text, method) in cases {
        let verdicts: Vec<(bool, bool)> = [Tightening::Race, Tightening::On, Tightening::Off]
            .into_iter()
            .map(|tightening| {
                let mut opts = LtlOptions { method, ..LtlOptions::default() };
                opts.rmilp.tightening = tightening;
                let r = check_with(sys, "x", text, opts);
                let wins = r.stats.rmilp.tightened_wins + r.stats.rmilp.plain_wins;
                assert!(tightening == Tightening::Race || wins == 0, "{text}: {:?}", r.stats.rmilp);
                (
                    matches!(r.verdict, Verdict::Proven { .. } | Verdict::Evidence { .. }),
                    matches!(r.verdict, Verdict::Refuted { .. }),
                )
            })
            .collect();
        assert!(verdicts.iter().all(|v| *v == verdicts[0]) && verdicts[0] != (false, false), "{text}: {verdicts:?}");
    }
    let cancelled = Budget::unlimited();
    cancelled.cancel();
    let opts = LtlOptions { method: Method::Rmilp, ..LtlOptions::default() };
    let phi = parse_ltl("G<=6 (x <= 9)", &SimpleScope::with_state(&["x"])).unwrap();
    let r = check_ltl(&walk, &phi, &opts, &cancelled).unwrap();
    assert_eq!(r.verdict, Verdict::Unknown(trestle_core::Unknown::Interrupted));
}
