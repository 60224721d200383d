//! The encodings against the exact semantics: networks (random and hand-set, stable neurons), argmax,
//! piecewise-linear expressions and disjunctive predicates, each optimised over a box and compared
//! with dense grid sampling and with the exact value at the solver's own optimum.

use good_lp::Expression;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use trestle_bounds::InputBox;
use trestle_ir::expr::{Env, Expr, VarRef};
use trestle_ir::network::{Activation, DenseLayer, Layer, Matrix, Network};
use trestle_ir::num::{rational_from_f64, to_f64_nearest};
use trestle_ir::parse::{SimpleScope, parse_expr, parse_pred};
use trestle_ir::{Interval, Pred};
use trestle_milp::{
    BoundOptions, Bounded, MilpModel, Sense, SolveOptions, SolveStatus, Strictness, VarMap, assert_pred, encode_argmax,
    encode_expr, encode_network, interval_gaps, score_gaps,
};

fn dense(rows: Vec<Vec<f64>>, bias: Vec<f64>, activation: Activation) -> Layer {
    Layer::Dense(DenseLayer { weights: Matrix::from_rows(&rows), bias, activation })
}

fn random_network(rng: &mut ChaCha8Rng, sizes: &[usize]) -> Network {
    let mut layers = Vec::new();
    for (k, w) in sizes.windows(2).enumerate() {
        let rows = (0..w[1]).map(|_| (0..w[0]).map(|_| rng.random_range(-1.0..1.0)).collect()).collect();
        let bias = (0..w[1]).map(|_| rng.random_range(-0.5..0.5)).collect();
        let act = if k + 2 == sizes.len() { Activation::Identity } else { Activation::Relu };
        layers.push(dense(rows, bias, act));
    }
    Network::new("inline:random", layers).unwrap()
}

fn exact_forward(net: &Network, x: &[f64]) -> Vec<f64> {
    let input: Vec<_> = x.iter().map(|&v| rational_from_f64(v)).collect();
    net.forward_exact(&input, &mut []).unwrap().iter().map(to_f64_nearest).collect()
}

/// A grid over `[lo, hi]^2`, `n` points per side.
fn grid(lo: f64, hi: f64, n: usize) -> Vec<[f64; 2]> {
    let at = |i: usize| lo + (hi - lo) * i as f64 / (n - 1) as f64;
    (0..n).flat_map(|i| (0..n).map(move |j| [at(i), at(j)])).collect()
}

fn inputs_2d(model: &mut MilpModel, lo: f64, hi: f64) -> (Vec<good_lp::Variable>, Vec<Expression>) {
    let vars: Vec<_> = (0..2).map(|i| model.continuous(lo, hi, &format!("x{i}")).unwrap()).collect();
    let exprs = vars.iter().map(|&v| Expression::from(v)).collect();
    (vars, exprs)
}

fn opts() -> SolveOptions {
    SolveOptions::default()
}

#[test]
fn network_optimum_matches_the_exact_forward_pass_and_dominates_the_grid() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let samples = grid(-1.0, 1.0, 121);
    for trial in 0..4 {
        let net = random_network(&mut rng, &[2, 6, 5, 2]);
        let sampled: Vec<Vec<f64>> = samples.iter().map(|x| net.eval(x).unwrap()).collect();
        let mut model = MilpModel::new();
        let (vars, exprs) = inputs_2d(&mut model, -1.0, 1.0);
        let enc = encode_network(&mut model, &net, &exprs, &InputBox::new(vec![-1.0; 2], vec![1.0; 2])).unwrap();
        assert_eq!(model.num_binaries(), enc.unstable, "one binary per unstable neuron");
        for k in 0..2 {
            for sense in [Sense::Maximise, Sense::Minimise] {
                let out = model.solve(sense, &enc.outputs[k], &opts()).unwrap();
                assert_eq!(out.status, SolveStatus::Optimal, "trial {trial} output {k} {sense:?}");
                let (primal, bound) = (out.primal.unwrap(), out.bound.unwrap());
                let values = out.values.as_ref().unwrap();
                let x: Vec<f64> = vars.iter().map(|&v| model.value(v, values)).collect();
                // The solver's optimum is attained by its own input, exactly.
                let exact = exact_forward(&net, &x)[k];
                assert!((exact - primal).abs() <= 1e-6, "trial {trial} output {k}: exact {exact} vs milp {primal}");
                // No sampled input does better than the bound.
                for (s, y) in samples.iter().zip(&sampled) {
                    match sense {
                        Sense::Maximise => assert!(y[k] <= bound + 1e-9, "{s:?} gives {} > max {bound}", y[k]),
                        Sense::Minimise => assert!(y[k] >= bound - 1e-9, "{s:?} gives {} < min {bound}", y[k]),
                    }
                }
                // And the grid comes close to it (the MILP is not just a loose bound).
                let best = sampled.iter().map(|y| y[k]).fold(
                    if sense == Sense::Maximise { f64::NEG_INFINITY } else { f64::INFINITY },
                    |a, b| {
                        if sense == Sense::Maximise { a.max(b) } else { a.min(b) }
                    },
                );
                assert!((best - bound).abs() <= 0.05, "trial {trial}: grid {best} vs milp {bound}");
            }
        }
    }
}

#[test]
fn stable_neurons_need_no_binary() {
    // x in [0, 1]: x + 1 is always active, -x - 1 never, x - 0.5 both.
    let net = Network::new(
        "inline:stable",
        vec![
            dense(vec![vec![1.0], vec![-1.0], vec![1.0]], vec![1.0, -1.0, -0.5], Activation::Relu),
            dense(vec![vec![1.0, 1.0, 1.0]], vec![0.0], Activation::Identity),
        ],
    )
    .unwrap();
    let mut model = MilpModel::new();
    let x = model.continuous(0.0, 1.0, "x").unwrap();
    let enc = encode_network(&mut model, &net, &[Expression::from(x)], &InputBox::new(vec![0.0], vec![1.0])).unwrap();
    assert_eq!((enc.stable_active, enc.stable_inactive, enc.unstable), (1, 1, 1));
    assert_eq!(model.num_binaries(), 1);
    // f(x) = x + 1 + relu(x - 0.5): max 2.5 at x = 1, min 1 at x = 0.
    let max = model.solve(Sense::Maximise, &enc.outputs[0], &opts()).unwrap();
    let min = model.solve(Sense::Minimise, &enc.outputs[0], &opts()).unwrap();
    assert!((max.bound.unwrap() - 2.5).abs() < 1e-7, "{max:?}");
    assert!((min.bound.unwrap() - 1.0).abs() < 1e-7, "{min:?}");
    // Fully stable on [0.6, 1]: an LP.
    let mut model = MilpModel::new();
    let x = model.continuous(0.6, 1.0, "x").unwrap();
    let enc = encode_network(&mut model, &net, &[Expression::from(x)], &InputBox::new(vec![0.6], vec![1.0])).unwrap();
    assert_eq!((enc.stable_active, enc.stable_inactive, enc.unstable), (2, 1, 0));
    assert_eq!(model.num_binaries(), 0);
    let min = model.solve(Sense::Minimise, &enc.outputs[0], &opts()).unwrap();
    assert!((min.bound.unwrap() - 1.7).abs() < 1e-7, "{min:?}");
    // Without fixing (the RMILP baseline) every ReLU has its binary and the optima are the same.
    let loose =
        BoundOptions { method: trestle_bounds::Method::Ibp, pieces: 1, fix_stable: false, ..BoundOptions::default() };
    for (lo, max_x, min_x) in [(0.0, 2.5, 1.0), (0.6, 2.5, 1.7)] {
        let mut model = MilpModel::new();
        let x = model.continuous(lo, 1.0, "x").unwrap();
        let input = InputBox::new(vec![lo], vec![1.0]);
        let enc = trestle_milp::encode_network_with(&mut model, &net, &[Expression::from(x)], &input, &loose).unwrap();
        assert_eq!(model.num_binaries(), 3, "one binary per ReLU");
        let max = model.solve(Sense::Maximise, &enc.outputs[0], &opts()).unwrap();
        let min = model.solve(Sense::Minimise, &enc.outputs[0], &opts()).unwrap();
        assert!((max.bound.unwrap() - max_x).abs() < 1e-7, "{max:?}");
        assert!((min.bound.unwrap() - min_x).abs() < 1e-7, "{min:?}");
    }
}

#[test]
fn argmax_is_the_closure_of_the_lowest_index_rule_pruned_by_bounds() {
    // Scores over x in [0, 1]: x, 1 - x, 0.5 (maximal only at the tie x = 0.5, where the lowest
    // index 0 wins: the closure still admits it there), -10 + 0.1 x (never).
    let net = Network::new(
        "inline:scores",
        vec![dense(
            vec![vec![1.0], vec![-1.0], vec![0.0], vec![0.1]],
            vec![0.0, 1.0, 0.5, -10.0],
            Activation::Identity,
        )],
    )
    .unwrap();
    let expected = [(0, 0.5, 1.0), (1, 0.0, 0.5), (2, 0.5, 0.5)];
    for (k, lo, hi) in expected {
        let mut model = MilpModel::new();
        let x = model.continuous(0.0, 1.0, "x").unwrap();
        let enc =
            encode_network(&mut model, &net, &[Expression::from(x)], &InputBox::new(vec![0.0], vec![1.0])).unwrap();
        let am =
            encode_argmax(&mut model, &enc.outputs, &interval_gaps(&enc.output_bounds), Strictness::Closure).unwrap();
        assert_eq!(am.candidates, vec![0, 1, 2], "index 3 is pruned");
        assert_eq!(model.num_binaries(), 3);
        model.add(am.onehot[k].clone().eq(1.0));
        let max = model.solve(Sense::Maximise, &Expression::from(x), &opts()).unwrap();
        let min = model.solve(Sense::Minimise, &Expression::from(x), &opts()).unwrap();
        assert!((max.bound.unwrap() - hi).abs() < 1e-6, "index {k}: max {max:?}");
        assert!((min.bound.unwrap() - lo).abs() < 1e-6, "index {k}: min {min:?}");
        // The index expression agrees with the one-hot choice.
        let values = max.values.unwrap();
        assert!((model.eval(&am.index, &values) - k as f64).abs() < 1e-6);
    }
    // Index 3 cannot be forced.
    let mut model = MilpModel::new();
    let x = model.continuous(0.0, 1.0, "x").unwrap();
    let enc = encode_network(&mut model, &net, &[Expression::from(x)], &InputBox::new(vec![0.0], vec![1.0])).unwrap();
    let am = encode_argmax(&mut model, &enc.outputs, &interval_gaps(&enc.output_bounds), Strictness::Closure).unwrap();
    assert!(trestle_milp::model::is_constant(&am.onehot[3]));
}

#[test]
fn argmax_score_gaps_prune_ties_and_strict_gaps_cut_them() {
    // Scores x, x (identical), 1 - x over [0, 1]: index 1 never beats index 0 strictly.
    let net = Network::new(
        "inline:ties",
        vec![dense(vec![vec![1.0], vec![1.0], vec![-1.0]], vec![0.0, 0.0, 1.0], Activation::Identity)],
    )
    .unwrap();
    let input = InputBox::new(vec![0.0], vec![1.0]);
    let setup = |strictness: Strictness| {
        let mut model = MilpModel::new();
        let x = model.continuous(0.0, 1.0, "x").unwrap();
        let enc = encode_network(&mut model, &net, &[Expression::from(x)], &input).unwrap();
        let gaps = score_gaps(&net, &input, &BoundOptions::default(), &enc.output_bounds).unwrap();
        assert_eq!((gaps[1][0].lo, gaps[1][0].hi), (0.0, 0.0), "identical outputs differ by exactly 0");
        let am = encode_argmax(&mut model, &enc.outputs, &gaps, strictness).unwrap();
        (model, x, am)
    };
    let (_, _, am) = setup(Strictness::Closure);
    assert_eq!(am.candidates, vec![0, 2]);
    assert!(am.ties_possible, "index 2 may tie with index 0 at x = 0.5");
    // Index 2 (1 - x > x): the closure reaches the tie x = 0.5; a strict gap of 0.1 stops at 0.45.
    for (strictness, hi) in [(Strictness::Closure, 0.5), (Strictness::Gap(0.1), 0.45)] {
        let (mut model, x, am) = setup(strictness);
        model.add(am.onehot[2].clone().eq(1.0));
        let max = model.solve(Sense::Maximise, &Expression::from(x), &opts()).unwrap();
        assert!((max.bound.unwrap() - hi).abs() < 1e-6, "{strictness:?}: {max:?}");
    }
}

#[test]
fn argmax_regions_agree_with_sampling() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let samples = grid(-1.0, 1.0, 81);
    let net = random_network(&mut rng, &[2, 8, 3]);
    for k in 0..3 {
        let mut model = MilpModel::new();
        let (vars, exprs) = inputs_2d(&mut model, -1.0, 1.0);
        let enc = encode_network(&mut model, &net, &exprs, &InputBox::new(vec![-1.0; 2], vec![1.0; 2])).unwrap();
        let am =
            encode_argmax(&mut model, &enc.outputs, &interval_gaps(&enc.output_bounds), Strictness::Closure).unwrap();
        model.add(am.onehot[k].clone().eq(1.0));
        // Largest x0 among the inputs where k is a maximal score.
        let out = model.solve(Sense::Maximise, &Expression::from(vars[0]), &opts()).unwrap();
        let grid_best = samples
            .iter()
            .filter(|x| {
                let s = net.eval(&x[..]).unwrap();
                s.iter().all(|v| s[k] >= *v)
            })
            .map(|x| x[0])
            .fold(f64::NEG_INFINITY, f64::max);
        if out.status == SolveStatus::Infeasible {
            assert_eq!(grid_best, f64::NEG_INFINITY, "index {k} is maximal somewhere on the grid");
            continue;
        }
        assert!(out.bound.unwrap() >= grid_best - 1e-9, "index {k}: milp {:?} < grid {grid_best}", out.bound);
        let values = out.values.unwrap();
        let x: Vec<f64> = vars.iter().map(|&v| model.value(v, &values)).collect();
        let s = exact_forward(&net, &x);
        assert!(s.iter().all(|v| s[k] >= v - 1e-6), "index {k} is not maximal at the solver's point: {s:?}");
    }
}

fn scope() -> SimpleScope {
    let mut s = SimpleScope::with_state(&["x", "y", "i"]);
    s.add("a", trestle_ir::parse::Symbol::Var(VarRef::Action(0)));
    s
}

/// x, y in [-1, 2] x [-0.5, 1.5] (real), i in {0, 1, 2} (integer), a = 2x - y (an "action").
fn expression_model() -> (MilpModel, VarMap, [good_lp::Variable; 3]) {
    let mut model = MilpModel::new();
    let x = model.continuous(-1.0, 2.0, "x").unwrap();
    let y = model.continuous(-0.5, 1.5, "y").unwrap();
    let i = model.integer(0.0, 2.0, "i").unwrap();
    let state = vec![
        Bounded::new(Expression::from(x), Interval::new(-1.0, 2.0)),
        Bounded::new(Expression::from(y), Interval::new(-0.5, 1.5)),
        Bounded::new(Expression::from(i), Interval::new(0.0, 2.0)),
    ];
    let a = Bounded::new(2.0 * x - y, Interval::new(-3.5, 4.5));
    (model, VarMap { state, action: vec![a], nondet: vec![] }, [x, y, i])
}

fn eval_at(e: &Expr, x: f64, y: f64, i: f64) -> Option<f64> {
    let state = [x, y, i];
    let action = [2.0 * x - y];
    e.eval_f64(&Env::new(&state, &action, &[])).ok()
}

#[test]
fn piecewise_linear_expressions_are_exact() {
    let texts = [
        "0.5*x + y/4 - 3*a",
        "min(x, y)",
        "max(x - y, 0.3)",
        "relu(x - 0.2) - relu(0.5 - y)",
        "abs(x - y) + abs(a)",
        "if x <= y then 2*x else y - 1",
        "if x + y >= 1 or y < 0 then a else -x",
        "lookup(i, [x, -y, x + y])",
        "lookup(i, [1, 2, 3]) - 2*x + 3*lookup(1, [y, 0.5])",
        "max(min(x, 1), if i == 1 then y else 0)",
    ];
    let xs: Vec<f64> = (0..61).map(|k| -1.0 + 3.0 * k as f64 / 60.0).collect();
    let ys: Vec<f64> = (0..41).map(|k| -0.5 + 2.0 * k as f64 / 40.0).collect();
    for text in texts {
        let e = parse_expr(text, &scope()).unwrap();
        let (mut model, vars, [x, y, i]) = expression_model();
        let enc = encode_expr(&mut model, &e, &vars).unwrap();
        for sense in [Sense::Maximise, Sense::Minimise] {
            let out = model.solve(sense, &enc.expr, &opts()).unwrap();
            assert_eq!(out.status, SolveStatus::Optimal, "{text}");
            let bound = out.bound.unwrap();
            let values = out.values.unwrap();
            let (vx, vy, vi) = (model.value(x, &values), model.value(y, &values), model.value(i, &values).round());
            let at_opt = eval_at(&e, vx, vy, vi).unwrap();
            // On a condition's boundary either branch may be chosen (closure, and the solver's
            // feasibility tolerance of 1e-6): compare with the value at points a hair away as well.
            let close = (at_opt - bound).abs() <= 1e-6
                || [(2e-6, 0.0), (-2e-6, 0.0), (0.0, 2e-6), (0.0, -2e-6)]
                    .iter()
                    .any(|(dx, dy)| eval_at(&e, vx + dx, vy + dy, vi).is_some_and(|v| (v - bound).abs() <= 1e-5));
            assert!(close, "{text} {sense:?}: milp {bound} but the expression is {at_opt} at its point");
            for &gx in &xs {
                for &gy in &ys {
                    for gi in [0.0, 1.0, 2.0] {
                        let v = eval_at(&e, gx, gy, gi).unwrap();
                        match sense {
                            Sense::Maximise => {
                                assert!(v <= bound + 1e-9, "{text}: {v} at ({gx}, {gy}, {gi}) > {bound}")
                            }
                            Sense::Minimise => {
                                assert!(v >= bound - 1e-9, "{text}: {v} at ({gx}, {gy}, {gi}) < {bound}")
                            }
                        }
                    }
                }
            }
            assert!(enc.iv.lo <= bound + 1e-9 && bound <= enc.iv.hi + 1e-9, "{text}: {bound} outside {:?}", enc.iv);
        }
    }
}

#[test]
fn products_of_two_variables_are_refused() {
    let e = parse_expr("x * y", &scope()).unwrap();
    let (mut model, vars, _) = expression_model();
    let err = encode_expr(&mut model, &e, &vars).unwrap_err();
    assert!(matches!(err, trestle_milp::MilpError::NotPiecewiseLinear { .. }), "{err}");
}

#[test]
fn disjunctive_predicates_cut_out_the_right_set() {
    // Outside the box [0, 1] x [0, 1] (closure): the maximum of -(x + y) over it and over x, y
    // grid points must agree; so must the maximum of x + y with the box removed from [-1,2]x[-0.5,1.5].
    let cases: [(&str, &str); 4] = [
        ("x < 0 or x > 1 or y < 0 or y > 1", "x + y"),
        ("not (0 <= x <= 1 and 0 <= y <= 1)", "-x - 2*y"),
        ("(x >= 1.5 and y <= 0) or (x <= -0.5 and y >= 1)", "y - x"),
        ("abs(x - y) >= 1 and i != 0", "x - 3*i"),
    ];
    for (p_text, obj_text) in cases {
        let p: Pred = parse_pred(p_text, &scope()).unwrap();
        let obj = parse_expr(obj_text, &scope()).unwrap();
        let (mut model, vars, _) = expression_model();
        assert_pred(&mut model, &p, &vars).unwrap();
        let enc = encode_expr(&mut model, &obj, &vars).unwrap();
        for sense in [Sense::Maximise, Sense::Minimise] {
            let out = model.solve(sense, &enc.expr, &opts()).unwrap();
            let bound = out.bound.unwrap();
            let mut best = if sense == Sense::Maximise { f64::NEG_INFINITY } else { f64::INFINITY };
            for k in 0..=60 {
                for l in 0..=40 {
                    for gi in [0.0, 1.0, 2.0] {
                        let (gx, gy) = (-1.0 + 3.0 * k as f64 / 60.0, -0.5 + 2.0 * l as f64 / 40.0);
                        let state = [gx, gy, gi];
                        if p.eval_f64(&Env::new(&state, &[2.0 * gx - gy], &[])).unwrap() {
                            let v = eval_at(&obj, gx, gy, gi).unwrap();
                            best = if sense == Sense::Maximise { best.max(v) } else { best.min(v) };
                        }
                    }
                }
            }
            // Closures of strict sets attain their optimum on the grid here (box corners).
            assert!((best - bound).abs() <= 1e-6, "{p_text} / {obj_text} {sense:?}: grid {best} vs milp {bound}");
        }
    }
}
