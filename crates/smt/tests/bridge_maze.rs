//! Bridge queries on the maze with answers computed by hand (see each comment). Every Invalid
//! witness is re-checked here independently of the crate's replay, with the maze formulas.

mod common;

use common::*;
use trestle_ir::expr::Env;
use trestle_ir::linear::AffineMap;
use trestle_ir::network::Matrix;
use trestle_ir::{FBox, Pred, Rational, System};
use trestle_smt::{
    Answer, BridgeQuery, Checker, CheckerConfig, EnvChecker, FastPath, LinearPost, Postcondition, Target, Witness,
    Z3Backend,
};

/// Answers of Z3 alone and of the layered checker (which must agree).
fn both(sys: &System, q: &BridgeQuery<'_>) -> (Answer, Answer) {
    let mut z3 = Z3Backend::new(sys, CheckerConfig::default()).unwrap();
    let mut layered = Checker::new(sys, CheckerConfig::default()).unwrap();
    let a = z3.check_bridge(q).unwrap();
    let b = layered.check_bridge(q).unwrap();
    assert_eq!(a.kind(), b.kind(), "z3 {a:?} vs layered {b:?}");
    (a, b)
}

fn assert_valid(sys: &System, q: &BridgeQuery<'_>) {
    let (a, _) = both(sys, q);
    assert_eq!(a, Answer::Valid);
}

/// Asserts Invalid for both backends and checks each witness by hand.
fn assert_invalid(sys: &System, q: &BridgeQuery<'_>) -> Witness {
    let (a, b) = both(sys, q);
    for ans in [&a, &b] {
        let w = ans.witness().unwrap_or_else(|| panic!("expected Invalid, got {ans:?}"));
        check_maze_witness(sys, q, w);
    }
    a.witness().unwrap().clone()
}

/// Independent exact check of a maze witness: s in p, a in psi(s), c in [1/2, 1], next by the
/// maze formula, target violated (StaysIn) or met (Leaves).
fn check_maze_witness(sys: &System, query: &BridgeQuery<'_>, w: &Witness) {
    let qq = query;
    for i in 0..2 {
        assert!(f(qq.region.lo[i]) <= w.state[i] && w.state[i] <= f(qq.region.hi[i]), "state outside p: {w}");
    }
    let b = qq.post.action_box();
    for j in 0..2 {
        assert!(f(b.lo[j]) <= w.actions[j] && w.actions[j] <= f(b.hi[j]), "action outside the box: {w}");
        if let Postcondition::Linear(l) = qq.post {
            let row = |m: &Matrix, off: &[f64]| f(off[j]) + f(m.get(j, 0)) * &w.state[0] + f(m.get(j, 1)) * &w.state[1];
            assert!(row(&l.lower.a, &l.lower.c) <= w.actions[j] && w.actions[j] <= row(&l.upper.a, &l.upper.c));
        }
    }
    let c = if sys.nondet.is_empty() {
        assert!(w.nondet.is_empty());
        q("1")
    } else {
        assert!(q("0.5") <= w.nondet[0] && w.nondet[0] <= q("1"), "c outside [0.5, 1]: {w}");
        w.nondet[0].clone()
    };
    let step = |s: &Rational, a: &Rational| s + q("1/10") * &c * a;
    let next = vec![step(&w.state[0], &w.actions[0]), step(&w.state[1], &w.actions[1])];
    assert_eq!(next, w.next, "next is not the maze step: {w}");
    let inside = qq.target.pred().eval_exact(&Env::new(&next, &[], &[])).unwrap();
    match qq.target {
        Target::StaysIn(_) => assert!(!inside, "the successor satisfies the target: {w}"),
        Target::Leaves(_) => assert!(inside, "the successor leaves the target: {w}"),
    }
}

fn boxed(lo: &[f64], hi: &[f64]) -> Postcondition {
    Postcondition::Box(fbox(lo, hi))
}

#[test]
fn centre_box_with_small_actions_stays_in() {
    // p = [0.5,0.6]x[0.6,0.7], a in [-0.4,0.4]^2: x' in [0.46, 0.64], y' in [0.56 - 2e-17, 0.74]
    // (fl(0.6) is 2.2e-17 below 0.6), well inside Inv = [0.25,0.95]x[0.55,0.95]. Same with c in
    // [0.5,1] since |0.1 c a| <= 0.04.
    let inv = pred(INV);
    let p = fbox(&[0.5, 0.6], &[0.6, 0.7]);
    let psi = boxed(&[-0.4, -0.4], &[0.4, 0.4]);
    for sys in [det_maze(), nondet_maze()] {
        assert_valid(&sys, &BridgeQuery::new(&p, &psi, Target::StaysIn(&inv)));
    }
}

#[test]
fn centre_box_with_half_actions_leaves_by_a_float_error() {
    // With a in [-0.5,0.5]^2 the lowest successor is y' = fl(0.6) - 0.05 = 0.5499999999999999778 <
    // 0.55: the float 0.6 lies below 6/10, so the query is Invalid, by 2.2e-17 (with c = 1 in the
    // non-deterministic maze). A checker that rounded 0.6 or 0.55 to floats would call it Valid.
    let inv = pred(INV);
    let p = fbox(&[0.5, 0.6], &[0.6, 0.7]);
    let psi = boxed(&[-0.5, -0.5], &[0.5, 0.5]);
    for sys in [det_maze(), nondet_maze()] {
        let w = assert_invalid(&sys, &BridgeQuery::new(&p, &psi, Target::StaysIn(&inv)));
        assert!(w.next[1] < q("0.55"));
        assert!(f(0.6) <= w.state[1] && w.state[1] < q("0.6"), "only y in [fl(0.6), 0.6) can leave: {w}");
    }
}

#[test]
fn east_edge_pushed_east_leaves_for_every_successor() {
    // p = [0.9,0.95]x[0.6,0.7], a0 in [1,2]: x' >= fl(0.9) + 0.1 > 0.95 (det); with c >= 0.5,
    // x' >= fl(0.9) + 0.05 = 0.95 + 2.2e-17 > 0.95 (fl(0.9) is above 9/10). Every successor leaves.
    let inv = pred(INV);
    let p = fbox(&[0.9, 0.6], &[0.95, 0.7]);
    let psi = boxed(&[1.0, -0.5], &[2.0, 0.5]);
    for sys in [det_maze(), nondet_maze()] {
        assert_valid(&sys, &BridgeQuery::new(&p, &psi, Target::Leaves(&inv)));
        // ... so StaysIn is refuted.
        assert_invalid(&sys, &BridgeQuery::new(&p, &psi, Target::StaysIn(&inv)));
    }
}

#[test]
fn straddling_box_is_neither_proven_nor_falsified() {
    // p = [0.9,0.95]x[0.6,0.7], a0 in [-0.1,0.1]: x=0.95, a0=0.1 gives x'=0.96 (leaves), x=0.9,
    // a0=-0.1 gives 0.89 (stays). Both checks are Invalid, with witnesses.
    let inv = pred(INV);
    let p = fbox(&[0.9, 0.6], &[0.95, 0.7]);
    let psi = boxed(&[-0.1, -0.1], &[0.1, 0.1]);
    for sys in [det_maze(), nondet_maze()] {
        let w = assert_invalid(&sys, &BridgeQuery::new(&p, &psi, Target::StaysIn(&inv)));
        assert!(w.next[0] > q("0.95"));
        let w = assert_invalid(&sys, &BridgeQuery::new(&p, &psi, Target::Leaves(&inv)));
        assert!(w.next[0] <= q("0.95"));
    }
}

/// a0 in [-10x + 9, -10x + 9.2] (box [-2,2]), a1 in [-0.1, 0.1].
fn steep_linear_post() -> Postcondition {
    Postcondition::Linear(LinearPost {
        lower: AffineMap { a: Matrix::from_rows(&[vec![-10.0, 0.0], vec![0.0, 0.0]]), c: vec![9.0, -0.1] },
        upper: AffineMap { a: Matrix::from_rows(&[vec![-10.0, 0.0], vec![0.0, 0.0]]), c: vec![9.2, 0.1] },
        bounds: fbox(&[-2.0, -2.0], &[2.0, 2.0]),
    })
}

#[test]
fn linear_postcondition_proves_what_its_box_cannot() {
    // On p = [0.85,0.95]x[0.6,0.7]: x' = x + 0.1 a0 lies in [0.9, 0.92] (the x terms cancel), y'
    // within y +- 0.01: Valid. The box hull of the same psi, a0 in [-0.5, 0.7], allows x = 0.95,
    // a0 = 0.7, x' = 1.02: Invalid. Non-deterministic: with c = 1/2, x' = x + 0.05 a0 lies in
    // [0.5x + 0.45, 0.5x + 0.46] within [0.875, 0.935]; x' is affine in c, so every c in [1/2, 1]
    // gives a value between the c = 1/2 and c = 1 ranges: Valid too.
    let inv = pred(INV);
    let p = fbox(&[0.85, 0.6], &[0.95, 0.7]);
    let lin = steep_linear_post();
    let hull = boxed(&[-0.5, -0.1], &[0.7, 0.1]);
    for sys in [det_maze(), nondet_maze()] {
        assert_valid(&sys, &BridgeQuery::new(&p, &lin, Target::StaysIn(&inv)));
        assert_invalid(&sys, &BridgeQuery::new(&p, &hull, Target::StaysIn(&inv)));
        // The fast path proves the linear case on its own.
        let mut fast = FastPath::new(&sys, CheckerConfig::default()).unwrap();
        assert_eq!(fast.check_bridge(&BridgeQuery::new(&p, &lin, Target::StaysIn(&inv))).unwrap(), Answer::Valid);
    }
}

#[test]
fn linear_postcondition_witness_respects_the_bounds() {
    // Wider p = [0.75, 0.95] (a0 within the box [-2, 2] throughout: [1.5, 1.7] at x = 0.75,
    // [-0.5, -0.3] at x = 0.95). Deterministic: x' in [0.9, 0.92] for every x, so
    // StaysIn(x <= 0.91) is Invalid and Leaves(x <= 0.89) Valid.
    let p = fbox(&[0.75, 0.6], &[0.95, 0.7]);
    let lin = steep_linear_post();
    let t1 = pred("x <= 0.91");
    let t2 = pred("x <= 0.89");
    for sys in [det_maze(), nondet_maze()] {
        if sys.nondet.is_empty() {
            let w = assert_invalid(&sys, &BridgeQuery::new(&p, &lin, Target::StaysIn(&t1)));
            assert!(w.next[0] > q("0.91"));
            assert_valid(&sys, &BridgeQuery::new(&p, &lin, Target::Leaves(&t2)));
        } else {
            // With c = 1/2: x' = x + 0.05 a0 in [0.5x + 0.45, 0.5x + 0.46], as low as 0.825 at
            // x = 0.75: some successor has x' <= 0.89.
            let w = assert_invalid(&sys, &BridgeQuery::new(&p, &lin, Target::Leaves(&t2)));
            assert!(w.next[0] <= q("0.89"));
        }
    }
}

#[test]
fn nonlinear_witness_is_exact() {
    // Non-deterministic maze, p = [0.9,0.95]x[0.6,0.7], a0 in [0.5, 1]: x' = x + 0.1 c a0 reaches
    // 0.95 + 0.1 > 0.95. Z3 (nonlinear) must return a rational c, a0 replayed exactly.
    let sys = nondet_maze();
    let inv = pred(INV);
    let p = fbox(&[0.9, 0.6], &[0.95, 0.7]);
    let psi = boxed(&[0.5, -0.1], &[1.0, 0.1]);
    let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
    let q1 = BridgeQuery::new(&p, &psi, Target::StaysIn(&inv));
    let a = z3.check_bridge(&q1).unwrap();
    check_maze_witness(&sys, &q1, a.witness().expect("Invalid"));
    // Restricting the state with a predicate forces c*a0 to a narrow band: still exact.
    let extra = pred("x >= 0.949");
    let t = pred("x <= 0.9999");
    let q2 = BridgeQuery::new(&p, &psi, Target::StaysIn(&t)).with_extra(&extra);
    let a = z3.check_bridge(&q2).unwrap();
    let w = a.witness().expect("Invalid");
    check_maze_witness(&sys, &q2, w);
    assert!(w.state[0] >= q("0.949") && w.nondet[0].clone() * &w.actions[0] > q("0.499"));
}

#[test]
fn constants_are_exact_not_floats() {
    let sys = det_maze();
    let zero = boxed(&[0.0, 0.0], &[0.0, 0.0]);
    // The state is the float nearest 0.95, which is 0.94999999999999995559 < 19/20: with a = 0 it
    // stays put, so "x < 0.95" holds (Valid) and "x >= 0.95" fails (Invalid). Were 0.95 turned into
    // that same float, the strict target would fail.
    let p = fbox(&[0.95, 0.6], &[0.95, 0.6]);
    let strict = pred("x < 0.95");
    assert_valid(&sys, &BridgeQuery::new(&p, &zero, Target::StaysIn(&strict)));
    let ge = pred("x >= 0.95");
    let w = assert_invalid(&sys, &BridgeQuery::new(&p, &zero, Target::StaysIn(&ge)));
    assert_eq!(w.state[0], f(0.95));
    // x = fl(0.85) (0.8499999999999999778) with a0 = 1: x' = 0.9499999999999999778 <= 0.95: Valid.
    // One ulp higher, x' = 0.95 + 8.9e-17: Invalid.
    let one = boxed(&[1.0, 0.0], &[1.0, 0.0]);
    let le = pred("x <= 0.95");
    let p = fbox(&[0.85, 0.6], &[0.85, 0.6]);
    assert_valid(&sys, &BridgeQuery::new(&p, &one, Target::StaysIn(&le)));
    let up = 0.85f64.next_up();
    let p = fbox(&[up, 0.6], &[up, 0.6]);
    let w = assert_invalid(&sys, &BridgeQuery::new(&p, &one, Target::StaysIn(&le)));
    assert!(w.next[0] > q("0.95"));
}

#[test]
fn empty_postcondition_makes_everything_vacuous() {
    // The linear bounds force a0 >= 3 but the box caps a0 at 2: no action, no successor.
    let sys = det_maze();
    let mut lin = steep_linear_post();
    if let Postcondition::Linear(l) = &mut lin {
        l.lower.a = Matrix::from_rows(&[vec![0.0, 0.0], vec![0.0, 0.0]]);
        l.lower.c = vec![3.0, -0.1];
    }
    let inv = pred(INV);
    let p = fbox(&[0.5, 0.6], &[0.6, 0.7]);
    assert_valid(&sys, &BridgeQuery::new(&p, &lin, Target::StaysIn(&inv)));
    assert_valid(&sys, &BridgeQuery::new(&p, &lin, Target::Leaves(&inv)));
}

#[test]
fn extra_predicate_restricts_the_box() {
    // p = [0.9, 0.95] x [0.6, 0.7] with a0 in [0, 0.09] leaves Inv from x > 0.941; intersected
    // with x <= 0.94 (exact 47/50) every successor stays (x' <= 0.94 + 0.009 = 0.949). (With a0 up
    // to the float 0.1, which exceeds 1/10, x = 0.94 would reach 0.95 + 5.5e-19 and leave.)
    let sys = det_maze();
    let inv = pred(INV);
    let extra = pred("x <= 0.94");
    let p = fbox(&[0.9, 0.6], &[0.95, 0.7]);
    let psi = boxed(&[0.0, -0.1], &[0.09, 0.1]);
    assert_invalid(&sys, &BridgeQuery::new(&p, &psi, Target::StaysIn(&inv)));
    assert_valid(&sys, &BridgeQuery::new(&p, &psi, Target::StaysIn(&inv)).with_extra(&extra));
}

#[test]
fn guarded_piecewise_linear_step() {
    // pwl maze: left branch (x <= 0.6): x' = min(x + 0.1 a0, 0.9); right branch (x >= 0.6):
    // x' = x - 0.02 + 0.1 a0. On p = [0.55, 0.65] x [0.6, 0.65], a in [-0.1, 0.1]^2 (x' within
    // [0.52, 0.64], y' within [0.59, 0.66]): Valid for Inv. Target "x <= 0.6" fails through the left
    // branch (x = 0.6, a0 = 0.1 gives 0.61) — the witness must be a real transition.
    let sys = pwl_maze();
    let inv = pred(INV);
    let p = fbox(&[0.55, 0.6], &[0.65, 0.65]);
    let psi = boxed(&[-0.1, -0.1], &[0.1, 0.1]);
    let mut checker = Checker::new(&sys, CheckerConfig::default()).unwrap();
    let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
    let q1 = BridgeQuery::new(&p, &psi, Target::StaysIn(&inv));
    assert_eq!(checker.check_bridge(&q1).unwrap(), Answer::Valid);
    assert_eq!(z3.check_bridge(&q1).unwrap(), Answer::Valid);
    let t = pred("x <= 0.6");
    let q2 = BridgeQuery::new(&p, &psi, Target::StaysIn(&t));
    for a in [checker.check_bridge(&q2).unwrap(), z3.check_bridge(&q2).unwrap()] {
        let w = a.witness().expect("Invalid");
        trestle_smt::replay_bridge(&sys, &q2, w).unwrap();
        assert!(w.next[0] > q("0.6"));
    }
}

#[test]
fn metamorphic_subsets_and_supersets() {
    // A sub-box of a proven box is proven; a super-box of a refuted box is refuted.
    let sys = det_maze();
    let inv = pred(INV);
    let psi = boxed(&[-0.4, -0.4], &[0.4, 0.4]);
    let mut z3 = Z3Backend::new(&sys, CheckerConfig::default().with_fast_path(false)).unwrap();
    let big = fbox(&[0.5, 0.6], &[0.6, 0.7]);
    assert_eq!(z3.check_bridge(&BridgeQuery::new(&big, &psi, Target::StaysIn(&inv))).unwrap(), Answer::Valid);
    let small = fbox(&[0.52, 0.61], &[0.55, 0.64]);
    assert_eq!(z3.check_bridge(&BridgeQuery::new(&small, &psi, Target::StaysIn(&inv))).unwrap(), Answer::Valid);
    let refuted = fbox(&[0.93, 0.6], &[0.95, 0.7]);
    assert!(z3.check_bridge(&BridgeQuery::new(&refuted, &psi, Target::StaysIn(&inv))).unwrap().is_invalid());
    let wider = fbox(&[0.9, 0.6], &[0.97, 0.8]);
    assert!(z3.check_bridge(&BridgeQuery::new(&wider, &psi, Target::StaysIn(&inv))).unwrap().is_invalid());
    // A disjunctive target split into its disjuncts: the union proves what each part cannot.
    let left = pred("x <= 0.55");
    let right = pred("x >= 0.55");
    let union = Pred::Or(vec![left.clone(), right.clone()]);
    let all = FBox::new(vec![0.5, 0.6], vec![0.6, 0.7]);
    assert_eq!(z3.check_bridge(&BridgeQuery::new(&all, &psi, Target::StaysIn(&union))).unwrap(), Answer::Valid);
    assert!(z3.check_bridge(&BridgeQuery::new(&all, &psi, Target::StaysIn(&left))).unwrap().is_invalid());
}

#[test]
fn sampler_finds_witnesses_at_the_corners_inside_the_candidate() {
    // The engine's boxes are the candidate cut into f64 boxes rounded outward: p's upper ends are
    // the float above 0.95, outside Inv. With a0 in [0, 0.01], only states with x near 0.95 and
    // a0 > 0 leave, so the witness is at the corner of p /\ Inv, not of p; the fast path's sampler
    // must find it there (no Z3 here), and the witness replays exactly.
    let sys = det_maze();
    let inv = pred(INV);
    let above = 0.95f64.next_up();
    let p = fbox(&[0.9, 0.9], &[above, above]);
    let psi = boxed(&[0.0, -0.01], &[0.01, 0.0]);
    let query = BridgeQuery::new(&p, &psi, Target::StaysIn(&inv)).with_extra(&inv);
    let mut fast = FastPath::new(&sys, CheckerConfig::default()).unwrap();
    let a = fast.check_bridge(&query).unwrap();
    let w = a.witness().expect("the sampler refutes the query");
    trestle_smt::replay_bridge(&sys, &query, w).unwrap();
    assert_eq!(w.state[0], q("0.95"));
}
