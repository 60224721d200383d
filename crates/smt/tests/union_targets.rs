//! Targets that are unions of boxes (synthesised invariants) and the successor boxes behind them:
//! the fast path decides them by box subtraction, must agree with Z3 where it decides, and its
//! successor boxes must hold every exact successor.

mod common;

use common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use trestle_ir::linear::AffineMap;
use trestle_ir::network::Matrix;
use trestle_ir::num::rational_from_f64;
use trestle_ir::sim;
use trestle_ir::system::{NondetDomain, System};
use trestle_ir::{FBox, Pred, Rational};
use trestle_smt::{
    Answer, AnswerKind, BridgeQuery, CheckerConfig, EnvChecker, FastPath, LinearPost, Postcondition, SuccessorBounds,
    Target, Unknown, Z3Backend, replay_bridge,
};

fn random_box(rng: &mut ChaCha8Rng, lo: f64, hi: f64, max_width: f64) -> FBox {
    let (a, c) = (rng.random_range(lo..hi), rng.random_range(lo..hi));
    FBox::new(vec![a, c], vec![a + rng.random_range(0.0..max_width), c + rng.random_range(0.0..max_width)])
}

fn random_post(rng: &mut ChaCha8Rng, p: &FBox) -> Postcondition {
    if rng.random_bool(0.5) {
        return Postcondition::Box(random_box(rng, -0.6, 0.4, 0.3));
    }
    let a: Vec<Vec<f64>> = (0..2).map(|_| (0..2).map(|_| rng.random_range(-2.0..2.0)).collect()).collect();
    let centre = p.center();
    let c: Vec<f64> = (0..2).map(|j| rng.random_range(-0.5..0.5) - a[j][0] * centre[0] - a[j][1] * centre[1]).collect();
    let w: Vec<f64> = (0..2).map(|_| rng.random_range(0.0..0.2)).collect();
    Postcondition::Linear(LinearPost {
        lower: AffineMap { a: Matrix::from_rows(&a), c: c.clone() },
        upper: AffineMap { a: Matrix::from_rows(&a), c: c.iter().zip(&w).map(|(c, w)| c + w).collect() },
        bounds: FBox::new(vec![-1.0, -1.0], vec![1.0, 1.0]),
    })
}

/// A union of grid cells of [0.2, 1] x [0.2, 1] (a staircase, so it is not one box).
fn random_union(rng: &mut ChaCha8Rng) -> Pred {
    let n = 8;
    let w = 0.8 / n as f64;
    let mut parts = Vec::new();
    for i in 0..n {
        let top = rng.random_range(2..=n);
        for j in 0..top {
            let (x, y) = (0.2 + w * i as f64, 0.2 + w * j as f64);
            parts.push(pred(&format!("{x} <= x <= {} and {y} <= y <= {}", x + w, y + w)));
        }
    }
    Pred::Or(parts)
}

fn agree(sys: &System, seed: u64, n: usize) -> usize {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut fast = FastPath::new(sys, CheckerConfig::default().with_sampling(false)).unwrap();
    let mut z3 = Z3Backend::new(sys, CheckerConfig::default().with_fast_path(false)).unwrap();
    let mut decided = 0;
    for i in 0..n {
        let union = random_union(&mut rng);
        for _ in 0..4 {
            let p = random_box(&mut rng, 0.2, 0.95, 0.1);
            let post = random_post(&mut rng, &p);
            for target in [Target::StaysIn(&union), Target::Leaves(&union)] {
                let q = BridgeQuery::new(&p, &post, target);
                let f = fast.check_bridge(&q).unwrap();
                if f == Answer::Unknown(Unknown::Undecided) {
                    continue;
                }
                assert_eq!(f, Answer::Valid, "#{i}: the fast path only proves");
                decided += 1;
                let z = z3.check_bridge(&q).unwrap();
                assert_eq!(z, Answer::Valid, "#{i}: fast Valid, z3 {z:?} on {p:?} {post:?} {target:?}");
            }
        }
    }
    decided
}

#[test]
fn the_fast_path_agrees_with_z3_on_unions() {
    for (sys, seed) in [(det_maze(), 1), (nondet_maze(), 2), (pwl_maze(), 3)] {
        let decided = agree(&sys, seed, 8);
        assert!(decided > 6, "{}: only {decided} queries decided", sys.name);
    }
}

#[test]
fn a_union_proves_what_neither_part_can() {
    let sys = det_maze();
    let psi = Postcondition::Box(FBox::new(vec![-0.4, -0.4], vec![0.4, 0.4]));
    let union = Pred::Or(vec![
        pred("0.25 <= x <= 0.55 and 0.55 <= y <= 0.95"),
        pred("0.55 <= x <= 0.95 and 0.55 <= y <= 0.95"),
    ]);
    let p = fbox(&[0.5, 0.6], &[0.6, 0.7]);
    let mut fast = FastPath::new(&sys, CheckerConfig::default()).unwrap();
    assert_eq!(fast.check_bridge(&BridgeQuery::new(&p, &psi, Target::StaysIn(&union))).unwrap(), Answer::Valid);
    // One ulp short of covering: not proven; Z3 finds the gap's witness.
    let gap = Pred::Or(vec![
        pred("0.25 <= x <= 0.55 and 0.55 <= y <= 0.95"),
        Pred::And(vec![pred("x <= 0.95 and 0.55 <= y <= 0.95"), pred(&format!("x >= {}", 0.55f64.next_up()))]),
    ]);
    let q = BridgeQuery::new(&p, &psi, Target::StaysIn(&gap));
    assert_ne!(fast.check_bridge(&q).unwrap(), Answer::Valid);
    let mut z3 = Z3Backend::new(&sys, CheckerConfig::default().with_fast_path(false)).unwrap();
    let a = z3.check_bridge(&q).unwrap();
    assert_eq!(a.kind(), AnswerKind::Invalid);
    replay_bridge(&sys, &q, a.witness().unwrap()).unwrap();
    // Every successor is far from a union on the other side: it leaves.
    let far = Pred::Or(vec![pred("x <= 0.1"), pred("y >= 2")]);
    assert_eq!(fast.check_bridge(&BridgeQuery::new(&p, &psi, Target::Leaves(&far))).unwrap(), Answer::Valid);
}

#[test]
fn unions_of_boxes_imply_by_subtraction() {
    let sys = det_maze();
    let mut fast = FastPath::new(&sys, CheckerConfig::default().with_sampling(false)).unwrap();
    let union = pred("(0.2 <= x <= 0.5 and 0.5 <= y <= 1) or (0.5 <= x <= 1 and 0.5 <= y <= 1)");
    assert_eq!(fast.check_implication(&pred("0.3 <= x <= 0.7 and 0.6 <= y <= 0.7"), &union).unwrap(), Answer::Valid);
    assert_eq!(fast.check_implication(&union, &pred("0.2 <= x <= 1 and 0.5 <= y <= 1")).unwrap(), Answer::Valid);
    assert_eq!(
        fast.check_implication(&pred("0.1 <= x <= 0.7 and 0.6 <= y <= 0.7"), &union).unwrap(),
        Answer::Unknown(Unknown::Undecided)
    );
}

/// Exact successors of random states and actions allowed by psi, for every vertex and random
/// value of the inputs, lie in the successor boxes.
#[test]
fn successor_boxes_hold_every_exact_successor() {
    for (sys, seed) in [(det_maze(), 4), (nondet_maze(), 5), (pwl_maze(), 6)] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let bounds = SuccessorBounds::new(&sys).unwrap();
        for _ in 0..200 {
            let p = random_box(&mut rng, 0.2, 0.95, 0.1);
            let post = random_post(&mut rng, &p);
            let images = bounds.images(&p, &post).unwrap();
            for _ in 0..10 {
                let s: Vec<Rational> =
                    (0..2).map(|i| rational_from_f64(p.lo[i] + (p.hi[i] - p.lo[i]) * rng.random::<f64>())).collect();
                let a: Option<Vec<Rational>> = (0..2)
                    .map(|j| {
                        let (lo, hi) = post.exact_bounds(j, &s);
                        (lo <= hi).then(|| {
                            let t = rational_from_f64(rng.random::<f64>());
                            &lo + (&hi - &lo) * t
                        })
                    })
                    .collect();
                let Some(a) = a else { continue };
                let inputs: Vec<Vec<Rational>> = match sys.nondet.first().map(|v| &v.domain) {
                    Some(NondetDomain::Interval(l, h)) => {
                        vec![vec![l.clone()], vec![h.clone()], vec![(l + h) / q("2")]]
                    }
                    _ => vec![vec![]],
                };
                for n in inputs {
                    let enabled = sim::enabled_branches(&sys, &s, &a, &n).unwrap();
                    for b in enabled {
                        let next = sim::successor(&sys, b, &s, &a, &n).unwrap();
                        let image = &images.iter().find(|(bi, _)| *bi == b).expect("an enabled branch has an image").1;
                        for i in 0..2 {
                            assert!(
                                rational_from_f64(image.lo[i]) <= next[i] && next[i] <= rational_from_f64(image.hi[i]),
                                "{}: successor {next:?} outside {image:?}",
                                sys.name
                            );
                        }
                    }
                }
            }
        }
    }
}

/// A pinned predicate (validated once, union boxes computed once, found by address) and forks
/// sharing one fast path's forms answer every query exactly as a fresh fast path does, for the
/// pinned union, for an equal predicate at another address, and for other targets interleaved
/// (the cache of the last unpinned target must follow them).
#[test]
fn pinned_predicates_and_forks_answer_as_a_fresh_fast_path() {
    for (sys, seed) in [(det_maze(), 11), (nondet_maze(), 12)] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let pinned_union = random_union(&mut rng);
        let mut prototype = FastPath::new(&sys, CheckerConfig::default().with_sampling(false)).unwrap();
        prototype.pin(&pinned_union).unwrap();
        let mut fork = prototype.fork(CheckerConfig::default().with_sampling(false));
        let copy = pinned_union.clone();
        let others = [random_union(&mut rng), random_union(&mut rng), pred("0.3 <= x <= 0.9 and 0.3 <= y <= 0.9")];
        let mut decided = 0;
        for i in 0..60 {
            let p = random_box(&mut rng, 0.2, 0.95, 0.1);
            let post = random_post(&mut rng, &p);
            let target_pred = match i % 3 {
                0 => &pinned_union,
                1 => &copy,
                _ => &others[i % others.len()],
            };
            for target in [Target::StaysIn(target_pred), Target::Leaves(target_pred)] {
                let q = BridgeQuery::new(&p, &post, target).with_extra(&pinned_union);
                let mut fresh = FastPath::new(&sys, CheckerConfig::default().with_sampling(false)).unwrap();
                let expected = fresh.check_bridge(&q).unwrap();
                assert_eq!(fork.check_bridge(&q).unwrap(), expected, "#{i} {target:?}");
                assert_eq!(prototype.check_bridge(&q).unwrap(), expected, "#{i} {target:?}");
                decided += usize::from(expected == Answer::Valid);
            }
        }
        assert!(decided > 10, "{}: only {decided} queries decided", sys.name);
    }
}

#[test]
fn pinning_validates_the_predicate() {
    let sys = det_maze();
    let mut fast = FastPath::new(&sys, CheckerConfig::default()).unwrap();
    let not_a_state_predicate = pred("x <= a0");
    assert!(fast.pin(&not_a_state_predicate).is_err());
}

/// A Z3 backend that cuts a pinned union to the boxes a query can reach (`narrowed_by`) answers
/// every query as the plain backend does, and its counterexamples replay against the whole
/// union: the cuts are the same sets on the states the queries constrain.
#[test]
fn a_narrowed_z3_backend_answers_as_the_plain_one() {
    for (sys, seed) in [(det_maze(), 21), (nondet_maze(), 22), (pwl_maze(), 23)] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut plain = Z3Backend::new(&sys, CheckerConfig::default().with_fast_path(false)).unwrap();
        let (mut valid, mut invalid) = (0, 0);
        for i in 0..12 {
            let union = random_union(&mut rng);
            let mut pinned = FastPath::new(&sys, CheckerConfig::default()).unwrap();
            pinned.pin(&union).unwrap();
            let mut narrowed =
                Z3Backend::new(&sys, CheckerConfig::default().with_fast_path(false)).unwrap().narrowed_by(&pinned);
            for _ in 0..3 {
                let p = random_box(&mut rng, 0.15, 0.95, 0.15);
                let post = random_post(&mut rng, &p);
                for target in [Target::StaysIn(&union), Target::Leaves(&union)] {
                    let mut q = BridgeQuery::new(&p, &post, target);
                    if rng.random_bool(0.7) {
                        q = q.with_extra(&union);
                    }
                    let (a, b) = (plain.check_bridge(&q).unwrap(), narrowed.check_bridge(&q).unwrap());
                    assert_eq!(a.kind(), b.kind(), "#{i} {p:?} {post:?} {target:?}: {a:?} vs {b:?}");
                    match &b {
                        Answer::Valid => valid += 1,
                        Answer::Invalid(w) => {
                            invalid += 1;
                            assert!(replay_bridge(&sys, &q, w).is_ok(), "#{i}: {w:?}");
                        }
                        Answer::Unknown(r) => panic!("#{i}: {r:?}"),
                    }
                }
            }
        }
        assert!(valid > 5 && invalid > 5, "{}: {valid} valid, {invalid} invalid", sys.name);
    }
}
