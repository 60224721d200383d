//! `Cancel`: a raised token stops a HiGHS solve (through its interrupt callback), the LP bounds
//! of a relaxation, and an unrolling; a child token stops with its parent, not the other way.

use good_lp::{Expression, Variable};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Duration;
use trestle_ir::RBox;
use trestle_ir::num::parse_rational;
use trestle_milp::model::MilpModel;
use trestle_milp::{Cancel, MilpError, Sense, SolveOptions, SolveStatus, UnrollOptions, unroll};

/// A market-split instance (Cornuéjols and Dawande): 4 rows of 30 binaries with coefficients in
/// [0, 99] and right-hand sides half the row sums, the deviation minimised. Branch and bound
/// needs far more than seconds on these; HiGHS does not finish one before it is interrupted.
fn market_split(seed: u64) -> (MilpModel, Expression) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut m = MilpModel::new();
    let x: Vec<Variable> = (0..30).map(|_| m.binary()).collect();
    let mut deviation = Expression::from(0.0);
    for i in 0..4 {
        let a: Vec<f64> = (0..30).map(|_| f64::from(rng.random_range(0..100u32))).collect();
        let rhs = (a.iter().sum::<f64>() / 2.0).floor();
        let over = m.continuous(0.0, 3000.0, &format!("over{i}")).unwrap();
        let under = m.continuous(0.0, 3000.0, &format!("under{i}")).unwrap();
        let row: Expression = x.iter().zip(&a).map(|(&v, &k)| k * v).sum();
        m.add((row + under - over).eq(rhs));
        deviation += over + under;
    }
    (m, deviation)
}

fn interrupted(status: &SolveStatus) -> bool {
    matches!(status, SolveStatus::Limit(why) if why.contains("Interrupt"))
}

#[test]
fn a_token_raised_before_the_solve_interrupts_it() {
    let (m, objective) = market_split(1);
    let cancel = Cancel::new();
    cancel.cancel();
    let opts = SolveOptions { cancel: Some(cancel), ..SolveOptions::default() };
    let out = m.solve(Sense::Minimise, &objective, &opts).unwrap();
    assert!(interrupted(&out.status), "{:?}", out.status);
}

/// Raised from another thread while HiGHS searches: the solve returns interrupted, long before
/// its (generous) time limit, which would give `ReachedTimeLimit` instead.
#[test]
fn a_token_raised_during_the_solve_interrupts_it() {
    let (m, objective) = market_split(2);
    let cancel = Cancel::new();
    let opts = SolveOptions {
        cancel: Some(cancel.clone()),
        time_limit: Some(Duration::from_secs(600)),
        ..SolveOptions::default()
    };
    let out = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            cancel.cancel();
        });
        m.solve(Sense::Minimise, &objective, &opts).unwrap()
    });
    assert!(interrupted(&out.status), "{:?}", out.status);
    // Whatever HiGHS found before it stopped is a bound or a point, never a claim of optimality.
    if let (Some(b), Some(p)) = (out.bound, out.primal) {
        assert!(b <= p + 1e-6, "{b} > {p}");
    }
}

#[test]
fn a_token_not_raised_changes_nothing() {
    let mut m = MilpModel::new();
    let (x, y) = (m.binary(), m.binary());
    m.add((x + 2.0 * y).geq(1.0));
    m.add((3.0 * x + y).geq(1.0));
    let objective = Expression::from(x) + y;
    let plain = m.solve(Sense::Minimise, &objective, &SolveOptions::default()).unwrap();
    let watched = SolveOptions { cancel: Some(Cancel::new()), ..SolveOptions::default() };
    let out = m.solve(Sense::Minimise, &objective, &watched).unwrap();
    assert_eq!((out.status.clone(), out.primal), (SolveStatus::Optimal, Some(1.0)));
    assert_eq!((plain.status, plain.primal), (out.status, out.primal));
    let mut relaxation = m.relaxation(&watched).unwrap().unwrap();
    let lo = relaxation.bound(Sense::Minimise, &objective).unwrap().unwrap();
    assert!(lo <= 0.6 && lo > 0.6 - 1e-9, "{lo}");
}

#[test]
fn a_raised_token_stops_a_relaxation_and_an_unrolling() {
    let (m, objective) = market_split(3);
    let cancel = Cancel::new();
    let opts = SolveOptions { cancel: Some(cancel.clone()), ..SolveOptions::default() };
    let mut relaxation = m.relaxation(&opts).unwrap().unwrap();
    assert!(relaxation.bound(Sense::Minimise, &objective).unwrap().is_some());
    cancel.cancel();
    assert_eq!(relaxation.bound(Sense::Maximise, &objective).unwrap_err(), MilpError::Cancelled);

    // The Figure-1 RNN with a non-deterministic input, from z = 0.
    let figure1 = trestle_testkit::repo().join("configs/systems/rnn-figure1.toml");
    let sys = trestle_testkit::load(&figure1, &["nondet.x1.interval=[-1, 1]".to_string()]);
    let zero = Some(parse_rational("0").unwrap());
    let start = RBox { lo: vec![zero.clone()], hi: vec![zero] };
    let live = UnrollOptions { tighten: true, cancel: Some(Cancel::new()), ..UnrollOptions::default() };
    assert!(unroll(&sys, &start, 3, &live).unwrap().is_some());
    let stopped = UnrollOptions { cancel: Some(cancel), ..live };
    assert_eq!(unroll(&sys, &start, 3, &stopped).unwrap_err(), MilpError::Cancelled);
}

#[test]
fn a_child_stops_with_its_parent_and_not_the_other_way() {
    let parent = Cancel::new();
    let (a, b) = (parent.child(), parent.child());
    assert!(!a.is_cancelled() && a != b && a == a.clone());
    a.cancel();
    assert!(a.is_cancelled() && !b.is_cancelled() && !parent.is_cancelled());
    parent.cancel();
    assert!(b.is_cancelled());
    let fresh = Cancel::default();
    assert!(fresh != parent && !fresh.is_cancelled());
}
