//! Nonlinear steps whose counterexamples Z3 may give as algebraic numbers: the answer is a
//! rational, exactly replayed witness when one exists nearby, and `Unknown` (never Valid or a
//! rounded witness) when every counterexample is irrational.

mod common;

use common::*;
use trestle_ir::parse::{SimpleScope, Symbol, parse_expr, parse_pred};
use trestle_ir::system::{Branch, Domain, DomainExit, NondetDomain, NondetVar, StateVar, Step, System, VarKind};
use trestle_ir::{Pred, expr::VarRef};
use trestle_smt::{
    Answer, BridgeQuery, Checker, CheckerConfig, EnvChecker, FastPath, Postcondition, Target, Unknown, Z3Backend,
};

/// x' = c * c with c in [0, 2]; no controller.
fn square() -> (System, SimpleScope) {
    with_update("c*c")
}

/// x' = `update` with c in [0, 2]; no controller.
fn with_update(update: &str) -> (System, SimpleScope) {
    let mut scope = SimpleScope::with_state(&["x"]);
    scope.add("c", Symbol::Var(VarRef::Nondet(0)));
    let sys = System {
        name: "square".into(),
        description: String::new(),
        state: vec![StateVar { name: "x".into(), kind: VarKind::Real, domain: Domain::default() }],
        nondet: vec![NondetVar { name: "c".into(), domain: NondetDomain::Interval(q("0"), q("2")) }],
        actions: vec![],
        constants: vec![],
        networks: vec![],
        controllers: vec![],
        step: Step {
            branches: vec![Branch {
                name: "sq".into(),
                guard: None,
                label: None,
                updates: vec![parse_expr(update, &scope).unwrap()],
            }],
        },
        init: Pred::True,
        safe: None,
        invariant: None,
        properties: vec![],
        domain_exit: DomainExit::Error,
    };
    (sys, scope)
}

#[test]
fn irrational_only_counterexamples_are_unknown() {
    // Some successor is exactly 2 (c = sqrt 2), so "no successor equals 2" is false, but every
    // counterexample is irrational: no exact witness exists, the answer must be Unknown.
    let (sys, scope) = square();
    let p = fbox(&[0.0], &[0.0]);
    let psi = Postcondition::Box(fbox(&[], &[]));
    let two = parse_pred("x == 2", &scope).unwrap();
    let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
    let a = z3.check_bridge(&BridgeQuery::new(&p, &psi, Target::Leaves(&two))).unwrap();
    assert!(matches!(a, Answer::Unknown(Unknown::IrrationalModel(_))), "{a:?}");
}

#[test]
fn nearby_rational_counterexamples_are_found() {
    // Successors in [2, 2 + 10^-9] exist for c in [sqrt 2, sqrt(2 + 10^-9)], an interval of width
    // 3.5e-10: Z3 may answer c = sqrt 2; a nudged rational c is replayed instead.
    let (sys, scope) = square();
    let p = fbox(&[0.0], &[0.0]);
    let psi = Postcondition::Box(fbox(&[], &[]));
    for text in ["2 <= x <= 2.000000001", "x >= 2 and x <= 2.000000001 and x != 2"] {
        let band = parse_pred(text, &scope).unwrap();
        let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
        let q1 = BridgeQuery::new(&p, &psi, Target::Leaves(&band));
        let a = z3.check_bridge(&q1).unwrap();
        let w = a.witness().unwrap_or_else(|| panic!("{text}: expected Invalid, got {a:?}"));
        assert_eq!(w.next[0], &w.nondet[0] * &w.nondet[0]);
        assert!(q("2") <= w.next[0] && w.next[0] <= q("2.000000001"));
        trestle_smt::replay_bridge(&sys, &q1, w).unwrap();
        eprintln!("{text}: c = {}, {} z3 checks", w.nondet[0], z3.stats().snapshot().z3_checks);
    }
    // And "every successor stays below 4" is Valid (c <= 2).
    let below = parse_pred("x <= 4", &scope).unwrap();
    let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
    assert_eq!(z3.check_bridge(&BridgeQuery::new(&p, &psi, Target::StaysIn(&below))).unwrap(), Answer::Valid);
}

#[test]
fn algebraic_values_are_fixed_to_rationals_and_resolved() {
    // x' = 0 needs c = sqrt(2x) (first system) or x = sqrt(2c) (second). Z3 picks one variable
    // rational and the other algebraic; the algebraic one is fixed to a rational near it, after
    // which the other is rational again. The witness is exact either way.
    for (update, lo, hi) in [("c*c - 2*x", 0.9, 1.1), ("x*x - 2*c", 1.3, 1.5)] {
        let (sys, scope) = with_update(update);
        let p = fbox(&[lo], &[hi]);
        let psi = Postcondition::Box(fbox(&[], &[]));
        let zero = parse_pred("x == 0", &scope).unwrap();
        let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
        let q1 = BridgeQuery::new(&p, &psi, Target::Leaves(&zero));
        let a = z3.check_bridge(&q1).unwrap();
        let w = a.witness().unwrap_or_else(|| panic!("{update}: expected Invalid, got {a:?}"));
        assert_eq!(w.next[0], q("0"));
        trestle_smt::replay_bridge(&sys, &q1, w).unwrap();
        eprintln!("{update}: c = {}, x = {}, {} z3 checks", w.nondet[0], w.state[0], z3.stats().snapshot().z3_checks);
    }
}

/// x' = x + c - c^2 with c in [0, 2] peaks at the interval's inside (c = 1/2: x + 1/4), while
/// both ends give less (x and x - 2). The fast path evaluates updates at the ends of an input's
/// interval only when they are affine in it; here it must not prove "x' <= 0.2" from x = 0 (false:
/// 1/4 > 0.2), and neither must the layered checker. The true "x' <= 1/4" is proven by Z3.
#[test]
fn a_quadratic_input_is_never_proven_from_the_ends_of_its_interval() {
    let (sys, scope) = with_update("x + c - c*c");
    let p = fbox(&[0.0], &[0.0]);
    let psi = Postcondition::Box(fbox(&[], &[]));
    let low = parse_pred("x <= 0.2", &scope).unwrap();
    let q_low = BridgeQuery::new(&p, &psi, Target::StaysIn(&low));
    let mut fast = FastPath::new(&sys, CheckerConfig::default()).unwrap();
    assert!(!fast.check_bridge(&q_low).unwrap().is_valid());
    let mut layered = Checker::new(&sys, CheckerConfig::default()).unwrap();
    let a = layered.check_bridge(&q_low).unwrap();
    let w = a.witness().unwrap_or_else(|| panic!("expected Invalid, got {a:?}"));
    assert!(w.nondet[0] > q("0") && w.nondet[0] < q("2") && w.next[0] > q("0.2"), "{w}");
    trestle_smt::replay_bridge(&sys, &q_low, w).unwrap();
    let quarter = parse_pred("x <= 0.25", &scope).unwrap();
    let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
    assert_eq!(z3.check_bridge(&BridgeQuery::new(&p, &psi, Target::StaysIn(&quarter))).unwrap(), Answer::Valid);
    // The successor box synthesis uses encloses the peak too.
    let images = trestle_smt::SuccessorBounds::new(&sys).unwrap().images(&p, &psi).unwrap();
    assert!(images.iter().all(|(_, b)| b.hi[0] >= 0.25 && b.lo[0] <= -2.0), "{images:?}");
}

/// The relaxed successor boxes synthesis and BPT use (`SuccessorBounds::relaxed_images`): on
/// random boxes and random linear postconditions, for steps with sin, cos, exp, tanh, powers and
/// products of variables, every sampled successor (a state of the box, an action allowed by psi
/// there, an input of its domain; the update enclosed rigorously at that point) lies in the
/// relaxed box, the relaxed box lies in the interval one, and it is strictly tighter on many.
#[test]
fn relaxed_images_hold_every_sampled_successor_and_lie_in_the_interval_images() {
    use rand::{Rng, SeedableRng};
    use trestle_ir::linear::AffineMap;
    use trestle_ir::{Env, Interval, Matrix};
    use trestle_smt::{LinearPost, SuccessorBounds};
    let steps = [
        ["x + 0.1*sin(3*y)*a0 + 0.05*c", "y - 0.1*cos(x)*a1"],
        ["x*exp(0.2*y) + 0.1*a0", "y - 0.1*tanh(a1 + x*y) + 0.02*c"],
        ["x - 0.1*x^3 + 0.1*a0", "y + 0.1*x*a1 - 0.2*y^2"],
        ["x + 0.05*(9.8*sin(y) - a0*cos(y))", "y + 0.1*sigmoid(2*a1 - x)"],
    ];
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(36);
    let (mut tighter, mut samples) = (0, 0);
    for step in steps {
        let mut sys = nondet_maze();
        sys.step.branches[0].updates = step.iter().map(|u| expr(u)).collect();
        let bounds = SuccessorBounds::new(&sys).unwrap();
        assert!(bounds.is_curved(), "{step:?}");
        for _ in 0..100 {
            let (lo, hi): (Vec<f64>, Vec<f64>) = (0..2)
                .map(|_| {
                    let (c, r) = (rng.random_range(-1.5..1.5), rng.random_range(0.0..0.5));
                    (c - r, c + r)
                })
                .unzip();
            let region = fbox(&lo, &hi);
            // Actions within 0.3 of a random affine function of the state, and inside [-2, 2].
            let rows: Vec<f64> = (0..4).map(|_| rng.random_range(-1.0..1.0)).collect();
            let off: Vec<f64> = (0..2).map(|_| rng.random_range(-0.5..0.5)).collect();
            let lower = AffineMap { a: Matrix::new(2, 2, rows.clone()), c: off.iter().map(|o| o - 0.3).collect() };
            let upper = AffineMap { a: Matrix::new(2, 2, rows.clone()), c: off.iter().map(|o| o + 0.3).collect() };
            let post = Postcondition::Linear(LinearPost { lower, upper, bounds: fbox(&[-2.0, -2.0], &[2.0, 2.0]) });
            let plain = bounds.images(&region, &post).unwrap();
            let relaxed = bounds.relaxed_images(&region, &post).unwrap();
            assert_eq!(plain.len(), relaxed.len());
            for ((_, p), (_, r)) in plain.iter().zip(&relaxed) {
                for i in 0..2 {
                    assert!(p.lo[i] <= r.lo[i] && r.hi[i] <= p.hi[i], "{step:?} on {region:?}: {r:?} not in {p:?}");
                    tighter += usize::from(r.hi[i] - r.lo[i] < 0.9 * (p.hi[i] - p.lo[i]));
                }
            }
            for _ in 0..30 {
                let s: Vec<f64> = (0..2).map(|i| lo[i] + rng.random::<f64>() * (hi[i] - lo[i])).collect();
                let a: Vec<f64> = (0..2)
                    .map(|j| {
                        let centre = rows[2 * j] * s[0] + rows[2 * j + 1] * s[1] + off[j];
                        (centre + rng.random_range(-0.29..0.29)).clamp(-1.99, 1.99)
                    })
                    .collect();
                if (0..2).any(|j| {
                    let centre = rows[2 * j] * s[0] + rows[2 * j + 1] * s[1] + off[j];
                    (a[j] - centre).abs() > 0.29
                }) {
                    continue; // the clamp left psi: not an allowed action
                }
                let c = [0.5 + 0.5 * rng.random::<f64>()];
                let point = |v: &[f64]| v.iter().map(|&x| Interval::point(x)).collect::<Vec<_>>();
                let (sv, av, cv) = (point(&s), point(&a), point(&c));
                let env = Env::new(&sv[..], &av[..], &cv[..]);
                for (i, u) in sys.step.branches[0].updates.iter().enumerate() {
                    let v = u.eval_interval(&env);
                    let r = &relaxed[0].1;
                    assert!(
                        v.hi >= r.lo[i] && v.lo <= r.hi[i],
                        "{step:?}: successor {i} at s = {s:?}, a = {a:?}, c = {c:?} is {v}, outside {r:?}"
                    );
                }
                samples += 1;
            }
        }
    }
    assert!(samples > 5000, "only {samples} samples");
    assert!(tighter > 100, "the relaxation was tighter (by 10%) on only {tighter} of 800 sides");
}
