//! Unbounded F, G and U on the walk (hand truths) and the project's PI-controller benchmarks
//! (configs/systems/pi-tuned.toml, pi-oscillating.toml): invariants prove G, lassos refute F, each
//! lasso replayed exactly with its loop on the full state (environment and hidden state).

use trestle_ir::parse::{SimpleScope, parse_ltl};
use trestle_ir::{Rational, System};
use trestle_ltl::{LtlOptions, LtlResult, LtlVerdict, Method, check_ltl};
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
    let r = check_ltl(sys, &phi, &opts).unwrap();
    if let LtlVerdict::False { trace } = &r.verdict {
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
    let LtlVerdict::False { trace } = &r.verdict else { panic!("{:?}", r.verdict) };
    let j = trace.loop_back.expect("a lasso");
    assert_eq!(trace.states.last(), Some(&trace.states[j]));
    assert!(trace.states.iter().all(|s| s[0] != q("8")));
    // Every path leaves 5 at once.
    assert!(matches!(check(&sys, "x", "F (x != 5)", Method::Auto).verdict, LtlVerdict::True { .. }));
    // The domain is an inductive box: G (x >= 0) by invariant, exactly.
    let r = check(&sys, "x", "G (x >= 0)", Method::Auto);
    assert_eq!((r.method, &r.verdict), ("invariant", &LtlVerdict::True { exact: true, margin: None }));
    // 10 is reached after 5 steps up: G (x <= 9) fails on a finite path.
    let r = check(&sys, "x", "G (x <= 9)", Method::Auto);
    let LtlVerdict::False { trace } = &r.verdict else { panic!("{:?}", r.verdict) };
    assert!(trace.loop_back.is_none() && trace.states.iter().any(|s| s[0] == q("10")));
    // (x >= 3) U (x == 8): 5, 4, 3, 2 leaves x >= 3 before 8.
    assert!(matches!(check(&sys, "x", "(x >= 3) U (x == 8)", Method::Auto).verdict, LtlVerdict::False { .. }));
    // Methods that cannot decide a shape say unknown, never a wrong verdict.
    assert!(matches!(check(&sys, "x", "G (x >= 0)", Method::Lasso).verdict, LtlVerdict::Unknown { .. }));
    assert!(matches!(check(&sys, "x", "F (x == 8)", Method::Invariant).verdict, LtlVerdict::Unknown { .. }));
}

#[test]
fn tuned_pi_controller_stays_and_settles() {
    let sys = load(&repo().join("configs/systems/pi-tuned.toml"), &[]);
    let stays = "G (x <= 0.5 and x >= -0.5)";
    let r = check(&sys, "x", stays, Method::Auto);
    assert_eq!((r.method, &r.verdict), ("invariant", &LtlVerdict::True { exact: true, margin: None }));
    // The bounded version: exact by bound propagation, and by the MILP alone to t = 10 (evidence
    // with the margin 1/4 the truth has: |x| <= 1/4).
    let r = check(&sys, "x", "G<=20 (x <= 0.5 and x >= -0.5)", Method::Auto);
    assert_eq!((r.method, &r.verdict), ("bpt", &LtlVerdict::True { exact: true, margin: None }));
    let r = check_with(&sys, "x", "G<=10 (x <= 0.5 and x >= -0.5)", whole_margin(Method::Rmilp));
    match r.verdict {
        LtlVerdict::True { exact: false, margin: Some(m) } => assert!((m - 0.25).abs() < 1e-6, "{m}"),
        other => panic!("{other:?}"),
    }
    // An invariant must also lie inside the predicate: |x| <= 1/8 is left by the first step.
    let r = check(&sys, "x", "G (x <= 0.125 and x >= -0.125)", Method::Auto);
    assert!(matches!(r.verdict, LtlVerdict::False { .. }), "{:?}", r.verdict);
}

#[test]
fn oscillating_pi_controller_never_settles() {
    let sys = load(&repo().join("configs/systems/pi-oscillating.toml"), &[]);
    let r = check(&sys, "x", "F (x <= 0.1 and x >= -0.1)", Method::Lasso);
    assert_eq!(r.method, "lasso");
    let LtlVerdict::False { trace } = &r.verdict else { panic!("{:?}", r.verdict) };
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
        let h = trestle_ltl::bpt::invariant(&sys, &start, 160).unwrap().expect("the proof's invariant");
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
