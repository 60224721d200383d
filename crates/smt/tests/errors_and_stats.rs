//! Input problems are typed errors (never answers, never panics); tampered witnesses fail the
//! replay; statistics add up, also across threads.

mod common;

use common::*;
use trestle_ir::linear::AffineMap;
use trestle_ir::network::Matrix;
use trestle_ir::{FBox, Pred};
use trestle_smt::{
    Answer, BridgeQuery, CheckError, Checker, CheckerConfig, EnvChecker, LinearPost, Postcondition, Stats, Target,
    Z3Backend, replay_bridge,
};

#[test]
fn malformed_queries_are_errors() {
    let sys = det_maze();
    let mut checker = Checker::new(&sys, CheckerConfig::default()).unwrap();
    let inv = pred(INV);
    let p = fbox(&[0.5, 0.6], &[0.6, 0.7]);
    let psi = Postcondition::Box(fbox(&[-0.1, -0.1], &[0.1, 0.1]));
    let err = |q: BridgeQuery<'_>, checker: &mut Checker<'_>| checker.check_bridge(&q).unwrap_err();
    // Three actions' worth of psi for two actions.
    let psi3 = Postcondition::Box(FBox::new(vec![0.0; 3], vec![0.0; 3]));
    assert!(matches!(
        err(BridgeQuery::new(&p, &psi3, Target::StaysIn(&inv)), &mut checker),
        CheckError::Dimension { .. }
    ));
    // Inverted, NaN and infinite boxes.
    for bad in
        [fbox(&[0.6, 0.6], &[0.5, 0.7]), fbox(&[f64::NAN, 0.6], &[0.6, 0.7]), fbox(&[0.5, 0.6], &[f64::INFINITY, 0.7])]
    {
        assert!(matches!(
            err(BridgeQuery::new(&bad, &psi, Target::StaysIn(&inv)), &mut checker),
            CheckError::InvalidBox { .. }
        ));
    }
    // Linear bounds with the wrong shape or a NaN.
    let lin = |rows: usize, v: f64| {
        Postcondition::Linear(LinearPost {
            lower: AffineMap { a: Matrix::new(rows, 2, vec![v; rows * 2]), c: vec![0.0; rows] },
            upper: AffineMap { a: Matrix::new(rows, 2, vec![0.0; rows * 2]), c: vec![0.0; rows] },
            bounds: fbox(&[-1.0, -1.0], &[1.0, 1.0]),
        })
    };
    assert!(matches!(
        err(BridgeQuery::new(&p, &lin(1, 0.0), Target::StaysIn(&inv)), &mut checker),
        CheckError::Dimension { .. }
    ));
    assert!(matches!(
        err(BridgeQuery::new(&p, &lin(2, f64::NAN), Target::StaysIn(&inv)), &mut checker),
        CheckError::NotFinite { .. }
    ));
    // A target over actions.
    let bad_target = pred("x + a0 <= 1");
    assert!(matches!(
        err(BridgeQuery::new(&p, &psi, Target::StaysIn(&bad_target)), &mut checker),
        CheckError::NotStatePredicate { .. }
    ));
    // A state variable the system does not have.
    let ghost = Pred::Cmp(trestle_ir::Expr::Var(trestle_ir::expr::VarRef::State(5)), trestle_ir::CmpOp::Le, expr("1"));
    assert!(matches!(
        err(BridgeQuery::new(&p, &psi, Target::StaysIn(&ghost)), &mut checker),
        CheckError::UnknownVariable { .. }
    ));
    assert!(matches!(checker.check_implication(&ghost, &inv), Err(CheckError::UnknownVariable { .. })));
    // An invalid system is refused up front.
    let mut broken = det_maze();
    broken.step.branches[0].updates.pop();
    assert!(matches!(Checker::new(&broken, CheckerConfig::default()), Err(CheckError::System(_))));
    // Nothing above was counted as an answer.
    assert_eq!(checker.stats().snapshot().queries, 0);
}

#[test]
fn tampered_witnesses_fail_the_replay() {
    let sys = det_maze();
    let inv = pred(INV);
    let p = fbox(&[0.9, 0.6], &[0.95, 0.7]);
    let psi = Postcondition::Box(fbox(&[-0.1, -0.1], &[0.1, 0.1]));
    let q = BridgeQuery::new(&p, &psi, Target::StaysIn(&inv));
    let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
    let w = z3.check_bridge(&q).unwrap().witness().cloned().expect("Invalid");
    replay_bridge(&sys, &q, &w).unwrap();
    let mut outside = w.clone();
    outside.state[0] = f(0.95f64.next_up());
    assert!(replay_bridge(&sys, &q, &outside).is_err());
    let mut wrong_next = w.clone();
    wrong_next.next[0] += q_("1/1000000000000000000000");
    assert!(replay_bridge(&sys, &q, &wrong_next).is_err());
    let mut wrong_action = w.clone();
    wrong_action.actions[1] = q_("0.2");
    assert!(replay_bridge(&sys, &q, &wrong_action).is_err());
    let mut branchless = w.clone();
    branchless.branch = 3;
    assert!(replay_bridge(&sys, &q, &branchless).is_err());
    // The same witness does not refute "Leaves": its successor leaves.
    assert!(replay_bridge(&sys, &BridgeQuery::new(&p, &psi, Target::Leaves(&inv)), &w).is_err());
}

fn q_(s: &str) -> trestle_ir::Rational {
    q(s)
}

#[test]
fn statistics_add_up_across_threads() {
    let stats = Stats::new();
    let sys = det_maze();
    std::thread::scope(|s| {
        for t in 0..2 {
            let (stats, sys) = (stats.clone(), &sys);
            s.spawn(move || {
                let cfg = CheckerConfig::default().with_stats(stats).with_fast_path(t == 0);
                let mut checker = Checker::new(sys, cfg).unwrap();
                let inv = pred(INV);
                let p = fbox(&[0.5, 0.6], &[0.6, 0.7]);
                let psi = Postcondition::Box(fbox(&[-0.4, -0.4], &[0.4, 0.4]));
                for _ in 0..5 {
                    assert_eq!(
                        checker.check_bridge(&BridgeQuery::new(&p, &psi, Target::StaysIn(&inv))).unwrap(),
                        Answer::Valid
                    );
                }
                let far = fbox(&[0.94, 0.6], &[0.95, 0.7]);
                let push = Postcondition::Box(fbox(&[0.2, 0.0], &[0.3, 0.0]));
                assert!(
                    checker.check_bridge(&BridgeQuery::new(&far, &push, Target::StaysIn(&inv))).unwrap().is_invalid()
                );
            });
        }
    });
    let s = stats.snapshot();
    assert_eq!((s.queries, s.valid, s.invalid, s.unknown), (12, 10, 2, 0));
    // Thread 0 decided its 6 queries on the fast path; thread 1 asked Z3 six times.
    assert_eq!(s.fast_decided, 6);
    assert_eq!(s.z3_checks, 6);
    assert!(s.max <= s.total && s.z3_max <= s.z3_total);
    let mut merged = s;
    merged.merge(&s);
    assert_eq!(merged.queries, 24);
}

/// Issue 9, item 13: `--timeout` bounds the whole run. Past the run's deadline a Z3 query answers
/// `Unknown(Timeout)` without running; before it, the same query is decided.
#[test]
fn a_passed_deadline_stops_z3_queries() {
    use std::time::{Duration, Instant};
    use trestle_smt::Unknown;
    let sys = det_maze();
    let (premise, conclusion) = (pred("0.3 <= x <= 0.4 and 0.6 <= y <= 0.7"), pred(INV));
    let passed = CheckerConfig::default().with_deadline(Some(Instant::now()));
    assert_eq!(passed.query_limit(), Some(Duration::ZERO));
    let mut z3 = Z3Backend::new(&sys, passed).unwrap();
    assert!(matches!(z3.check_implication(&premise, &conclusion).unwrap(), Answer::Unknown(Unknown::Timeout)));
    let later = CheckerConfig::default().with_deadline(Some(Instant::now() + Duration::from_secs(3600)));
    // The per-query limit (60 s by default) is the smaller one.
    assert_eq!(later.query_limit(), Some(Duration::from_secs(60)));
    let mut z3 = Z3Backend::new(&sys, later).unwrap();
    assert!(matches!(z3.check_implication(&premise, &conclusion).unwrap(), Answer::Valid));
}
