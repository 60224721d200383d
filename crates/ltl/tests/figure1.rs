//! The notes' Figure-1 vector: y = relu(W1 x), z_t = relu(W2 y + z_{t-1}), x in [0, 1]^2 fresh at
//! every step. Intervals give z_t in [0, t]; the truth is z_t = 0.

use trestle_core::{Budget, Verdict};
use trestle_ir::System;
use trestle_ir::parse::{SimpleScope, parse_ltl};
use trestle_ltl::rmilp::MARGIN_CUTOFF;
use trestle_ltl::{LtlOptions, Method, check_ltl};
use trestle_testkit::{load, repo};

fn figure1() -> System {
    load(&repo().join("configs/systems/rnn-figure1.toml"), &[])
}

fn check(sys: &System, text: &str, method: Method) -> trestle_ltl::LtlResult {
    check_with(sys, text, LtlOptions { method, ..LtlOptions::default() })
}

fn check_with(sys: &System, text: &str, opts: LtlOptions) -> trestle_ltl::LtlResult {
    let phi = parse_ltl(text, &SimpleScope::with_state(&["z"])).unwrap();
    check_ltl(sys, &phi, &opts, &Budget::unlimited()).unwrap()
}

#[test]
fn bpt_proves_two_steps_and_not_three() {
    let sys = figure1();
    let r = check(&sys, "X^2 (z <= 2)", Method::Bpt);
    assert!(r.verdict.is_proven(), "{:?}", r.verdict);
    assert_eq!((r.method, r.depth), ("bpt", 2));
    assert_eq!(r.stats.bpt_enclosures, vec![vec![(0.0, 0.0)], vec![(0.0, 1.0)], vec![(0.0, 2.0)]]);
    let r = check(&sys, "X^3 (z <= 2)", Method::Bpt);
    assert!(matches!(r.verdict, Verdict::Unknown(_)), "{:?}", r.verdict);
}

#[test]
fn rmilp_proves_every_horizon_up_to_ten() {
    let sys = figure1();
    for t in 1..=10 {
        let r = check(&sys, &format!("X^{t} (z <= 2)"), Method::Rmilp);
        match r.verdict {
            // Proven up to the margin cutoff: no path violates it with the atoms relaxed by less.
            Verdict::Evidence { margin: m } => assert_eq!(m, MARGIN_CUTOFF, "t = {t}"),
            other => panic!("t = {t}: {other:?}"),
        }
        assert_eq!((r.method, r.depth), ("rmilp", t));
    }
    // Without the cutoff the MILP finds the whole margin: z_t = 0 exactly, no path comes within 2
    // of violating it (the slack's cap is 1).
    let mut opts = LtlOptions { method: Method::Rmilp, ..LtlOptions::default() };
    opts.rmilp.margin_cutoff = None;
    match check_with(&sys, "X^10 (z <= 2)", opts).verdict {
        Verdict::Evidence { margin: m } => assert!(m >= 1.0 - 1e-9, "margin {m}"),
        other => panic!("{other:?}"),
    }
    // Auto: interval BPT decides t <= 2, CROWN's enclosures (z_t <= 1/2 at t = 10) the rest,
    // exactly.
    assert_eq!(check(&sys, "X^2 (z <= 2)", Method::Auto).method, "bpt");
    for t in [3, 5, 10] {
        let r = check(&sys, &format!("X^{t} (z <= 2)"), Method::Auto);
        assert_eq!(r.method, "bpt-crown", "t = {t}");
        assert!(r.verdict.is_proven(), "t = {t}: {:?}", r.verdict);
    }
    let crown = LtlOptions { method: Method::Bpt, bpt: trestle_ltl::bpt::Domain::Crown, ..LtlOptions::default() };
    assert!(check_with(&sys, "X^3 (z <= 2)", crown).verdict.is_proven());
}

#[test]
fn refutations_come_with_replayed_paths() {
    let sys = figure1();
    // z_1 is 0 on every path: BPT's enclosure [0, 1] already excludes z_1 <= -1.
    let r = check(&sys, "X (z <= -1)", Method::Auto);
    assert_eq!(r.method, "bpt");
    let Verdict::Refuted { trace, .. } = r.verdict else { panic!("{:?}", r.verdict) };
    trace.replay(&sys).unwrap();
    // z_3 >= 1/2 fails on every path, which interval BPT cannot see ([0, 3]): a simulated run
    // shows it (auto, before CROWN), CROWN's enclosure ([0, 3/32]) shows it, RMILP finds a path.
    let crown = LtlOptions { method: Method::Bpt, bpt: trestle_ltl::bpt::Domain::Crown, ..LtlOptions::default() };
    let runs = [
        (LtlOptions::default(), "simulation"),
        (crown, "bpt-crown"),
        (LtlOptions { method: Method::Rmilp, ..LtlOptions::default() }, "rmilp"),
    ];
    for (opts, by) in runs {
        let r = check_with(&sys, "X^3 (z >= 0.5)", opts);
        assert_eq!(r.method, by);
        let Verdict::Refuted { trace, .. } = r.verdict else { panic!("{:?}", r.verdict) };
        trace.replay(&sys).unwrap();
        assert_eq!(trace.len(), 3);
    }
    let Verdict::Refuted { trace, .. } = check(&sys, "X^3 (z >= 0.5)", Method::Rmilp).verdict else { unreachable!() };
    assert!(
        trace.hidden.iter().all(|m| m
            .iter()
            .flatten()
            .flatten()
            .all(|h| *h == trestle_ir::Rational::from_integer(0.into())))
    );
}
