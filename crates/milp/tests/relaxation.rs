//! `MilpModel::relaxation`: a bound of the LP relaxation computed from HiGHS's duals with
//! outward rounding. Checked against optima known in closed form, against the points of random
//! models (a bound below some feasible point's value would be wrong), and for the Maximise side.

use good_lp::Expression;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use trestle_milp::model::MilpModel;
use trestle_milp::{Sense, SolveOptions};

/// min x + y s.t. x + 2y >= 1, 3x + y >= 1, x, y in [0, 10]: optimum at x = 1/5, y = 2/5, value 3/5.
/// With x, y binary, the MILP's optimum is 1; the relaxation's bound stays 3/5.
#[test]
fn relaxation_bound_of_a_known_lp() {
    for binary in [false, true] {
        let mut m = MilpModel::new();
        let (x, y) = if binary {
            (m.binary(), m.binary())
        } else {
            (m.continuous(0.0, 10.0, "x").unwrap(), m.continuous(0.0, 10.0, "y").unwrap())
        };
        m.add((x + 2.0 * y).geq(1.0));
        m.add((3.0 * x + y).geq(1.0));
        let lo =
            m.relaxation(&SolveOptions::default()).unwrap().unwrap().bound(Sense::Minimise, &(x + y)).unwrap().unwrap();
        assert!(lo <= 0.6 && lo > 0.6 - 1e-9, "{lo}");
        // max x + y: 20 continuous, 2 over the 0/1 box.
        let hi = m
            .relaxation(&SolveOptions::default())
            .unwrap()
            .unwrap()
            .bound(Sense::Maximise, &(x + y + 1.0))
            .unwrap()
            .unwrap();
        let want = if binary { 3.0 } else { 21.0 };
        assert!(hi >= want && hi < want + 1e-9, "{hi}");
    }
}

/// Random bounded LPs: the bound is never above the objective at a feasible point (points drawn
/// in the box and kept when they satisfy every row), and never far below HiGHS's optimum.
#[test]
fn relaxation_bound_is_below_every_feasible_point() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut checked = 0;
    for _ in 0..60 {
        let n = rng.random_range(2..6);
        let mut m = MilpModel::new();
        let vars: Vec<_> = (0..n)
            .map(|i| {
                let lo = rng.random_range(-3.0..0.0);
                m.continuous(lo, lo + rng.random_range(0.1..4.0), &format!("x{i}")).unwrap()
            })
            .collect();
        let bounds: Vec<(f64, f64)> = vars.iter().map(|&v| m.bounds_of(v)).collect();
        let mut rows = Vec::new();
        for _ in 0..rng.random_range(1..5) {
            let k: Vec<f64> = (0..n).map(|_| rng.random_range(-2.0..2.0)).collect();
            let rhs = rng.random_range(-1.0..2.0);
            let e: Expression = vars.iter().zip(&k).map(|(&v, &c)| c * v).sum();
            m.add(e.leq(rhs));
            rows.push((k, rhs));
        }
        let c: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let obj: Expression = vars.iter().zip(&c).map(|(&v, &k)| k * v).sum();
        let mut relaxation = m.relaxation(&SolveOptions::default()).unwrap().unwrap();
        for sense in [Sense::Minimise, Sense::Maximise] {
            let Some(bound) = relaxation.bound(sense, &obj).unwrap() else { continue };
            let out = m.solve(sense, &obj, &SolveOptions::default()).unwrap();
            let opt = out.primal.expect("a bounded LP with a bound has an optimum");
            assert!((bound - opt).abs() < 1e-6, "bound {bound} against the optimum {opt}");
            for _ in 0..200 {
                let x: Vec<f64> = bounds.iter().map(|&(l, h)| rng.random_range(l..=h)).collect();
                if rows.iter().all(|(k, rhs)| k.iter().zip(&x).map(|(a, b)| a * b).sum::<f64>() <= *rhs) {
                    let value: f64 = c.iter().zip(&x).map(|(a, b)| a * b).sum();
                    match sense {
                        Sense::Minimise => assert!(bound <= value + 1e-12, "{bound} > {value}"),
                        Sense::Maximise => assert!(bound >= value - 1e-12, "{bound} < {value}"),
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 1000, "only {checked} feasible points drawn");
}
