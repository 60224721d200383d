//! Forward-mode derivatives of a run with respect to its start state, for the gradient attack.
//!
//! [`Dual`] is a value with its gradient; it implements the IR's [`Arith`] and [`Scalar`], so the
//! one evaluator of expressions and networks and the one definition of a step (`sim::step`)
//! differentiate the controllers and the environment with no
//! second semantics to keep in sync. The systems are piecewise linear: for fixed environment
//! choices a run is piecewise affine in its start state, and the gradient is that of the piece
//! the start lies in (ReLU and `min`/`max`/`abs` take the active side, ties the first). Nothing
//! here decides a verdict: gradients only propose start states, which are simulated and
//! replayed exactly like any other.

use std::cmp::Ordering;
use std::ops::RangeInclusive;
use trestle_ir::arith::{Arith, LayerArith, affine_terms};
use trestle_ir::expr::EvalError;
use trestle_ir::network::{Activation, Matrix};
use trestle_ir::num::to_f64_nearest;
use trestle_ir::sim::Scalar;
use trestle_ir::{CmpOp, Rational};

/// A value and its gradient with respect to the start state. An empty gradient is zero (constants).
#[derive(Clone, Debug)]
pub(crate) struct Dual {
    pub v: f64,
    pub d: Vec<f64>,
}

impl PartialEq for Dual {
    fn eq(&self, other: &Dual) -> bool {
        self.v == other.v
    }
}

/// Ordered by value only: the comparisons of a step (guards, argmax) see values.
impl PartialOrd for Dual {
    fn partial_cmp(&self, other: &Dual) -> Option<Ordering> {
        self.v.partial_cmp(&other.v)
    }
}

impl Dual {
    pub fn of(v: f64) -> Dual {
        Dual { v, d: Vec::new() }
    }

    /// The start state's coordinates as the variables of differentiation.
    pub fn variables(x: &[f64]) -> Vec<Dual> {
        (0..x.len())
            .map(|i| Dual { v: x[i], d: (0..x.len()).map(|j| if i == j { 1.0 } else { 0.0 }).collect() })
            .collect()
    }

    /// `a * self + b * other`, values and gradients.
    fn combine(&self, a: f64, other: &Dual, b: f64) -> Dual {
        let n = self.d.len().max(other.d.len());
        let at = |d: &[f64], i: usize| d.get(i).copied().unwrap_or(0.0);
        Dual { v: a * self.v + b * other.v, d: (0..n).map(|i| a * at(&self.d, i) + b * at(&other.d, i)).collect() }
    }

    fn scale(&self, a: f64) -> Dual {
        Dual { v: a * self.v, d: self.d.iter().map(|g| a * g).collect() }
    }
}

/// Dual numbers in the IR's one evaluator: comparisons see values, `min`/`max`/`abs`/ReLU take the
/// active side (ties the first), `join` is never needed (conditions on values are decided).
impl Arith for Dual {
    fn constant(q: &Rational) -> Dual {
        Dual::of(to_f64_nearest(q))
    }
    fn neg(&self) -> Dual {
        self.scale(-1.0)
    }
    fn add(&self, o: &Dual) -> Dual {
        self.combine(1.0, o, 1.0)
    }
    fn sub(&self, o: &Dual) -> Dual {
        self.combine(1.0, o, -1.0)
    }
    fn mul(&self, o: &Dual) -> Dual {
        // d(uv) = v du + u dv
        let mut r = o.combine(self.v, self, o.v);
        r.v = self.v * o.v;
        r
    }
    fn of_f64(x: f64) -> Dual {
        Dual::of(x)
    }
    fn div_const(&self, k: &Rational) -> Dual {
        self.scale(1.0 / to_f64_nearest(k))
    }
    fn min(&self, o: &Dual) -> Dual {
        if o.v < self.v { o.clone() } else { self.clone() }
    }
    fn max(&self, o: &Dual) -> Dual {
        if o.v > self.v { o.clone() } else { self.clone() }
    }
    fn relu(&self) -> Dual {
        if self.v > 0.0 { self.clone() } else { Dual::of(0.0) }
    }
    fn abs(&self) -> Dual {
        if self.v < 0.0 { self.scale(-1.0) } else { self.clone() }
    }
    fn compare(&self, op: CmpOp, o: &Dual) -> Option<bool> {
        Some(op.holds(&self.v, &o.v))
    }
    fn join(&self, _: &Dual) -> Dual {
        self.clone()
    }
    fn lookup(&self, len: usize) -> Result<RangeInclusive<usize>, EvalError> {
        self.v.lookup(len)
    }
    /// The piecewise-linear activations by their pieces; tanh and sigmoid by the chain rule on
    /// their f64 values (a search heuristic, like everything in this domain).
    fn activate(&self, act: &Activation) -> Option<Dual> {
        let smooth = |y: f64, slope: f64| {
            let mut r = self.scale(slope);
            r.v = y;
            r
        };
        match act {
            Activation::Tanh => {
                let y = self.v.tanh();
                Some(smooth(y, 1.0 - y * y))
            }
            Activation::Sigmoid => {
                let y = act.apply_f64(self.v);
                Some(smooth(y, y * (1.0 - y)))
            }
            _ => trestle_ir::arith::activate_piecewise(self, act),
        }
    }
}

impl LayerArith for Dual {
    type Values = Vec<Dual>;
    fn load(xs: &[Dual]) -> Vec<Dual> {
        xs.to_vec()
    }
    fn unload(v: &Vec<Dual>) -> Vec<Dual> {
        v.clone()
    }
    fn affine(
        w: &Matrix,
        x: &Vec<Dual>,
        b: &[f64],
        act: Activation,
        rec: Option<(&Matrix, &Vec<Dual>)>,
    ) -> Option<Vec<Dual>> {
        affine_terms(w, x, b, act, rec.map(|(r, h)| (r, &h[..])))
    }
}

impl Scalar for Dual {
    fn to_rational(&self) -> Rational {
        self.v.to_rational()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_ir::Env;
    use trestle_ir::network::{DenseLayer, Layer, Network};
    use trestle_ir::parse::{SimpleScope, parse_expr};

    fn dense(rows: &[Vec<f64>], bias: Vec<f64>, activation: Activation) -> Layer {
        Layer::Dense(DenseLayer { weights: Matrix::from_rows(rows), bias, activation })
    }

    /// Forward-mode gradients equal central differences away from kinks.
    #[test]
    fn gradients_match_finite_differences() {
        let scope = SimpleScope::with_state(&["x", "y"]);
        let e = parse_expr("max(2*x - y, relu(y) * x) + abs(x - 0.3) + min(x, 0.1*y) / 4", &scope).unwrap();
        let net = Network::new(
            "inline:test",
            vec![
                dense(&[vec![1.0, -2.0], vec![0.5, 0.25], vec![-1.0, 1.0]], vec![0.1, -0.2, 0.3], Activation::Relu),
                dense(&[vec![1.0, 2.0, -3.0]], vec![0.0], Activation::Identity),
            ],
        )
        .unwrap();
        let f = |x: &[f64]| -> f64 {
            let env = Env::new(x, &[], &[]);
            e.eval_f64(&env).unwrap() + net.eval(x).unwrap()[0]
        };
        for x in [[0.7, 0.2], [0.1, 0.9], [-0.4, 0.35], [0.45, -0.6]] {
            let vars = Dual::variables(&x);
            let env = Env::new(&vars[..], &[], &[]);
            let mut hidden = Dual::zero_hidden(&net);
            let g = e.eval(&env).unwrap().combine(1.0, &Dual::forward(&net, &vars, &mut hidden).unwrap()[0], 1.0);
            assert!((g.v - f(&x)).abs() < 1e-12);
            for i in 0..2 {
                let h = 1e-6;
                let (mut a, mut b) = (x, x);
                a[i] += h;
                b[i] -= h;
                let numeric = (f(&a) - f(&b)) / (2.0 * h);
                assert!((g.d[i] - numeric).abs() < 1e-6, "d/dx{i} at {x:?}: {} vs {numeric}", g.d[i]);
            }
        }
    }
}
