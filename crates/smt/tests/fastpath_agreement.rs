//! The fast path against Z3 on random boxes and postconditions (seeded): it may leave a query
//! undecided, but what it decides must be what Z3 decides, and its witnesses must replay.

mod common;

use common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use trestle_ir::linear::AffineMap;
use trestle_ir::network::Matrix;
use trestle_ir::{FBox, Pred, System};
use trestle_smt::{
    Answer, AnswerKind, BridgeQuery, CheckerConfig, EnvChecker, FastPath, LinearPost, Postcondition, Target, Unknown,
    Z3Backend, replay_bridge,
};

fn random_interval(rng: &mut ChaCha8Rng, lo: f64, hi: f64, max_width: f64) -> (f64, f64) {
    let a = rng.random_range(lo..hi);
    // One in eight is degenerate (lo = hi).
    let w = if rng.random_range(0..8) == 0 { 0.0 } else { rng.random_range(0.0..max_width) };
    (a, a + w)
}

fn random_box(rng: &mut ChaCha8Rng, lo: f64, hi: f64, max_width: f64) -> FBox {
    let (a, b) = random_interval(rng, lo, hi, max_width);
    let (c, d) = random_interval(rng, lo, hi, max_width);
    FBox::new(vec![a, c], vec![b, d])
}

fn random_post(rng: &mut ChaCha8Rng, p: &FBox) -> Postcondition {
    if rng.random_bool(0.5) {
        return Postcondition::Box(random_box(rng, -1.5, 1.2, 0.6));
    }
    // a_j in [A_j s + c_j, A_j s + c_j + w_j], clipped to a random action box.
    let a: Vec<Vec<f64>> = (0..2).map(|_| (0..2).map(|_| rng.random_range(-3.0..3.0)).collect()).collect();
    let centre = p.center();
    let c: Vec<f64> = (0..2).map(|j| rng.random_range(-1.0..1.0) - a[j][0] * centre[0] - a[j][1] * centre[1]).collect();
    let w: Vec<f64> = (0..2).map(|_| rng.random_range(0.0..0.3)).collect();
    Postcondition::Linear(LinearPost {
        lower: AffineMap { a: Matrix::from_rows(&a), c: c.clone() },
        upper: AffineMap { a: Matrix::from_rows(&a), c: c.iter().zip(&w).map(|(c, w)| c + w).collect() },
        bounds: random_box(rng, -2.0, 0.5, 1.5),
    })
}

/// Runs `n` random queries per target; returns how many the fast path decided.
fn agree(sys: &System, seed: u64, n: usize) -> (usize, usize) {
    agree_with(sys, seed, n, &pred(INV), |rng| {
        let p = random_box(rng, 0.2, 1.0, 0.12);
        let post = random_post(rng, &p);
        (p, post)
    })
}

/// Queries hugging the invariant's east and north edges with small actions: answers hinge on the
/// last digits.
fn edge_query(rng: &mut ChaCha8Rng) -> (FBox, Postcondition) {
    let w = 10f64.powi(-rng.random_range(2..12));
    let x = 0.95 - rng.random_range(0.0..4.0) * w;
    let p = FBox::new(vec![x, 0.7], vec![x + rng.random_range(0.0..2.0) * w, 0.95 - w]);
    let a = rng.random_range(-2.0..2.0) * w * 10.0;
    let post = Postcondition::Box(FBox::new(vec![a, -w], vec![a + w * 10.0 * rng.random_range(0.0..1.0), w * 10.0]));
    (p, post)
}

fn agree_with(
    sys: &System,
    seed: u64,
    n: usize,
    inv: &Pred,
    make: impl Fn(&mut ChaCha8Rng) -> (FBox, Postcondition),
) -> (usize, usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut fast = FastPath::new(sys, CheckerConfig::default()).unwrap();
    let mut z3 = Z3Backend::new(sys, CheckerConfig::default().with_fast_path(false)).unwrap();
    let (mut decided, mut total) = (0, 0);
    let mut tally = std::collections::BTreeMap::new();
    for i in 0..n {
        let (p, post) = make(&mut rng);
        for target in [Target::StaysIn(inv), Target::Leaves(inv)] {
            let q = BridgeQuery::new(&p, &post, target);
            let f = fast.check_bridge(&q).unwrap();
            let z = z3.check_bridge(&q).unwrap();
            total += 1;
            assert!(!z.is_unknown(), "#{i}: z3 undecided {z:?} on {p:?} {post:?}");
            match &f {
                Answer::Unknown(Unknown::Undecided) => {}
                Answer::Valid => {
                    assert_eq!(z, Answer::Valid, "#{i}: fast Valid, z3 {z:?} on {p:?} {post:?} {target:?}")
                }
                Answer::Invalid(w) => {
                    assert_eq!(z.kind(), AnswerKind::Invalid, "#{i}: fast Invalid, z3 {z:?} on {p:?} {post:?}");
                    replay_bridge(sys, &q, w).unwrap();
                }
                Answer::Unknown(r) => panic!("unexpected fast-path reason {r:?}"),
            }
            if let Answer::Invalid(w) = &z {
                replay_bridge(sys, &q, w).unwrap();
            }
            decided += usize::from(!f.is_unknown());
            *tally.entry(format!("{}/{:?}: fast {:?}", sys.name, z.kind(), f.kind())).or_insert(0) += 1;
        }
    }
    eprintln!("{tally:?}");
    (decided, total)
}

#[test]
fn deterministic_maze() {
    let (decided, total) = agree(&det_maze(), 1, 200);
    eprintln!("det: fast path decided {decided}/{total}");
    assert!(decided * 2 > total, "the fast path should decide most det queries ({decided}/{total})");
}

#[test]
fn nondeterministic_maze() {
    let (decided, total) = agree(&nondet_maze(), 2, 120);
    eprintln!("nondet: fast path decided {decided}/{total}");
    assert!(decided * 2 > total, "the fast path should decide most nondet queries ({decided}/{total})");
}

#[test]
fn guarded_piecewise_linear_maze() {
    let (decided, total) = agree(&pwl_maze(), 3, 120);
    eprintln!("pwl: fast path decided {decided}/{total}");
    assert!(decided > 0);
}

#[test]
fn int_bool_lookup_and_guards() {
    // The counter system (common::counter): x real, mode int in [0, 2], flag bool, guarded
    // branches, a lookup on mode; random boxes with mode inside its table.
    for exit in [trestle_ir::system::DomainExit::Error, trestle_ir::system::DomainExit::Drop] {
        let sys = common::counter::counter(exit);
        let target = common::counter::p("0.3 <= x <= 0.9 and mode <= 1");
        let (decided, total) = agree_with(&sys, 5, 120, &target, |rng| {
            let (x0, x1) = random_interval(rng, 0.2, 1.0, 0.2);
            let m0 = rng.random_range(0..3) as f64;
            let m1 = (m0 + rng.random_range(0..2) as f64).min(2.0);
            let f0 = rng.random_range(0..2) as f64;
            let f1 = (f0 + rng.random_range(0..2) as f64).min(1.0);
            let p = FBox::new(vec![x0, m0, f0], vec![x1, m1, f1]);
            let (a0, a1) = random_interval(rng, -1.5, 1.0, 1.0);
            (p, Postcondition::Box(FBox::new(vec![a0], vec![a1])))
        });
        eprintln!("counter {exit:?}: fast path decided {decided}/{total}");
        assert!(decided > 0);
    }
}

#[test]
fn queries_on_the_edge() {
    for (k, sys) in [det_maze(), nondet_maze()].iter().enumerate() {
        let (decided, total) = agree_with(sys, 10 + k as u64, 100, &pred(INV), edge_query);
        eprintln!("{} edge: fast path decided {decided}/{total}", sys.name);
    }
}

#[test]
fn sub_boxes_of_fast_proofs_are_z3_proofs() {
    // Metamorphic: shrink each box the fast path proves; Z3 proves the sub-box too.
    let sys = nondet_maze();
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mut fast = FastPath::new(&sys, CheckerConfig::default()).unwrap();
    let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
    let inv = pred(INV);
    let mut proven = 0;
    for _ in 0..100 {
        let p = random_box(&mut rng, 0.25, 0.9, 0.1);
        let post = Postcondition::Box(random_box(&mut rng, -0.6, 0.3, 0.3));
        if fast.check_bridge(&BridgeQuery::new(&p, &post, Target::StaysIn(&inv))).unwrap() == Answer::Valid {
            proven += 1;
            let (a, b) = p.bisect(rng.random_range(0..2));
            for sub in [a, b] {
                assert_eq!(
                    z3.check_bridge(&BridgeQuery::new(&sub, &post, Target::StaysIn(&inv))).unwrap(),
                    Answer::Valid
                );
            }
        }
    }
    assert!(proven > 10, "{proven}");
}
