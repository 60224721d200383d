//! Forward-mode derivatives of a run with respect to its start state, for the gradient attack.
//!
//! [`Dual`] is a value with its gradient; it implements the IR's [`Scalar`], so the one
//! definition of a step (`sim::step`) differentiates the controllers and the environment with no
//! second semantics to keep in sync. The systems are piecewise linear: for fixed environment
//! choices a run is piecewise affine in its start state, and the gradient is that of the piece
//! the start lies in (ReLU and `min`/`max`/`abs` take the active side, ties the first). Nothing
//! here decides a verdict: gradients only propose start states, which are simulated and
//! replayed exactly like any other.

use std::cmp::Ordering;
use trestle_ir::expr::EvalError;
use trestle_ir::network::{Activation, Layer, Matrix, Network, NetworkError};
use trestle_ir::num::to_f64_nearest;
use trestle_ir::sim::Scalar;
use trestle_ir::{Env, Expr, Pred, Rational};

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
    pub fn constant(v: f64) -> Dual {
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

    fn mul(&self, other: &Dual) -> Dual {
        // d(uv) = v du + u dv
        let mut r = other.combine(self.v, self, other.v);
        r.v = self.v * other.v;
        r
    }

    fn relu(self) -> Dual {
        if self.v > 0.0 { self } else { Dual::constant(0.0) }
    }
}

fn values<'a>(xs: &'a [Dual], buf: &'a mut Vec<f64>) -> &'a [f64] {
    buf.clear();
    buf.extend(xs.iter().map(|x| x.v));
    buf
}

/// The values of an environment, for the parts of a step that only compare.
fn with_values<R>(env: &Env<'_, Dual>, f: impl FnOnce(&Env<'_, f64>) -> R) -> R {
    let (mut s, mut a, mut n) = (Vec::new(), Vec::new(), Vec::new());
    let env = Env::new(values(env.state, &mut s), values(env.action, &mut a), values(env.nondet, &mut n));
    f(&env)
}

fn eval(e: &Expr, env: &Env<'_, Dual>) -> Result<Dual, EvalError> {
    Ok(match e {
        Expr::Const(c) => Dual::constant(to_f64_nearest(c)),
        Expr::Var(v) => env.get(*v).clone(),
        Expr::Neg(a) => eval(a, env)?.scale(-1.0),
        Expr::Add(a, b) => eval(a, env)?.combine(1.0, &eval(b, env)?, 1.0),
        Expr::Sub(a, b) => eval(a, env)?.combine(1.0, &eval(b, env)?, -1.0),
        Expr::Mul(a, b) => eval(a, env)?.mul(&eval(b, env)?),
        Expr::Div(a, k) => eval(a, env)?.scale(1.0 / to_f64_nearest(k)),
        Expr::Min(a, b) => {
            let (x, y) = (eval(a, env)?, eval(b, env)?);
            if y.v < x.v { y } else { x }
        }
        Expr::Max(a, b) => {
            let (x, y) = (eval(a, env)?, eval(b, env)?);
            if y.v > x.v { y } else { x }
        }
        Expr::Relu(a) => eval(a, env)?.relu(),
        Expr::Abs(a) => {
            let x = eval(a, env)?;
            if x.v < 0.0 { x.scale(-1.0) } else { x }
        }
        Expr::Ite(c, a, b) => {
            if with_values(env, |env| c.eval_f64(env))? {
                eval(a, env)?
            } else {
                eval(b, env)?
            }
        }
        Expr::Lookup(i, items) => {
            let idx = with_values(env, |env| i.eval_f64(env))?;
            let r = idx.round();
            if r != idx || r < 0.0 || r as usize >= items.len() {
                return Err(EvalError::LookupIndex { index: idx.to_string(), len: items.len() });
            }
            eval(&items[r as usize], env)?
        }
    })
}

fn affine(w: &Matrix, x: &[Dual], bias: &[f64]) -> Vec<Dual> {
    (0..w.rows)
        .map(|r| w.row(r).iter().zip(x).fold(Dual::constant(bias[r]), |acc, (&wij, xj)| acc.combine(1.0, xj, wij)))
        .collect()
}

fn activate(z: Vec<Dual>, activation: Activation) -> Vec<Dual> {
    match activation {
        Activation::Relu => z.into_iter().map(Dual::relu).collect(),
        Activation::Identity => z,
    }
}

impl Scalar for Dual {
    fn eval(e: &Expr, env: &Env<'_, Dual>) -> Result<Dual, EvalError> {
        eval(e, env)
    }

    fn holds(p: &Pred, env: &Env<'_, Dual>) -> Result<bool, EvalError> {
        with_values(env, |env| p.eval_f64(env))
    }

    fn forward(net: &Network, input: &[Dual], hidden: &mut [Vec<Dual>]) -> Result<Vec<Dual>, NetworkError> {
        // The f64 pass checks the dimensions and gives the errors; the dual pass follows it.
        let mut plain: Vec<Vec<f64>> = hidden.iter().map(|h| h.iter().map(|x| x.v).collect()).collect();
        net.forward(&input.iter().map(|x| x.v).collect::<Vec<_>>(), &mut plain)?;
        let mut x = input.to_vec();
        let mut h_index = 0;
        for layer in &net.layers {
            x = match layer {
                Layer::Dense(d) => activate(affine(&d.weights, &x, &d.bias), d.activation),
                Layer::Recurrent(r) => {
                    let from_input = affine(&r.input_weights, &x, &r.bias);
                    let zero = vec![0.0; r.recurrent_weights.rows];
                    let from_hidden = affine(&r.recurrent_weights, &hidden[h_index], &zero);
                    let z: Vec<Dual> =
                        from_input.iter().zip(&from_hidden).map(|(a, b)| a.combine(1.0, b, 1.0)).collect();
                    let z = activate(z, r.activation);
                    hidden[h_index] = z.clone();
                    h_index += 1;
                    z
                }
            };
        }
        Ok(x)
    }

    fn zero_hidden(net: &Network) -> Vec<Vec<Dual>> {
        net.initial_hidden().into_iter().map(|h| h.into_iter().map(Dual::constant).collect()).collect()
    }

    fn from_rational(q: &Rational) -> Dual {
        Dual::constant(to_f64_nearest(q))
    }

    fn to_rational(&self) -> Rational {
        self.v.to_rational()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_ir::network::DenseLayer;
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
            let g = eval(&e, &env).unwrap().combine(1.0, &Dual::forward(&net, &vars, &mut hidden).unwrap()[0], 1.0);
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
