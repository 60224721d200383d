//! Taylor coefficients in time of an ODE's solution by automatic differentiation.
//!
//! The right-hand sides are compiled once into a tape of operations in topological order. The
//! solution's coefficients `y[k]` (`y(t) = sum y[k] t^k`) come from `y[k+1] = f(y)[k] / (k+1)`:
//! at each order `k` every operation computes its own coefficient `k` from the coefficients
//! `<= k` of its arguments (and `< k` of itself), the classical recurrences (Moore; Jorba and
//! Zou 2005): `(ab)[k] = sum a[j] b[k-j]`, `e = exp(a)`: `e[k] = (1/k) sum j a[j] e[k-j]`, the
//! sine and cosine together, `tanh`, `sigmoid` and `tan` through their derivatives
//! `1 - t^2`, `s - s^2`, `1 + t^2` (kept as auxiliary series), `log` and `sqrt` by division by
//! the argument's (the root's) constant term. The cost is `O(ops * order^2)` per expansion.
//!
//! Held inputs (actions, non-deterministic inputs) are extra coordinates with zero derivative
//! (the augmented state `y = (x, u, w)`), so the same expansion differentiates the flow with
//! respect to them.
//!
//! Only smooth expressions compile: `min`, `max`, `relu`, `abs`, `if` and `lookup` are refused
//! (the Taylor expansion of a flow through a switching surface is not the expansion of either
//! piece).

use num_traits::{One, Zero};
use trestle_ir::Rational;
use trestle_ir::expr::{Expr, Function, VarRef};

use crate::FlowError;
use crate::coef::Coefficient;

#[derive(Clone, Debug)]
enum Op {
    Const(Rational),
    /// A coordinate of the augmented state.
    Var(usize),
    Neg(usize),
    Add(usize, usize),
    Sub(usize, usize),
    Mul(usize, usize),
    Scale(usize, Rational),
    Func(Function, usize),
}

/// The compiled right-hand side of `dx/dt = f(x, u, w)` with `u` (actions) and `w`
/// (non-deterministic inputs) held constant.
#[derive(Clone, Debug)]
pub struct Tape {
    ops: Vec<Op>,
    outputs: Vec<usize>,
    state_dim: usize,
    action_dim: usize,
    nondet_dim: usize,
}

impl Tape {
    /// Compiles `dx_i/dt = rhs[i]` over `rhs.len()` state variables, `actions` held actions and
    /// `nondet` held non-deterministic inputs.
    pub fn new(rhs: &[Expr], actions: usize, nondet: usize) -> Result<Tape, FlowError> {
        let mut tape = Tape {
            ops: Vec::new(),
            outputs: Vec::new(),
            state_dim: rhs.len(),
            action_dim: actions,
            nondet_dim: nondet,
        };
        for e in rhs {
            let out = tape.compile(e)?;
            tape.outputs.push(out);
        }
        Ok(tape)
    }

    pub fn state_dim(&self) -> usize {
        self.state_dim
    }

    pub fn action_dim(&self) -> usize {
        self.action_dim
    }

    pub fn nondet_dim(&self) -> usize {
        self.nondet_dim
    }

    /// State, actions and non-deterministic inputs together.
    pub fn augmented_dim(&self) -> usize {
        self.state_dim + self.action_dim + self.nondet_dim
    }

    fn push(&mut self, op: Op) -> usize {
        self.ops.push(op);
        self.ops.len() - 1
    }

    fn compile(&mut self, e: &Expr) -> Result<usize, FlowError> {
        let not_smooth = |what: &str| Err(FlowError::NotSmooth(what.to_string()));
        Ok(match e {
            Expr::Const(c) => self.push(Op::Const(c.clone())),
            Expr::Var(v) => {
                let index = match *v {
                    VarRef::State(i) if i < self.state_dim => i,
                    VarRef::Action(j) if j < self.action_dim => self.state_dim + j,
                    VarRef::Nondet(k) if k < self.nondet_dim => self.state_dim + self.action_dim + k,
                    _ => return Err(FlowError::Dimension(format!("variable {v:?} outside the flow's variables"))),
                };
                self.push(Op::Var(index))
            }
            Expr::Neg(a) => {
                let a = self.compile(a)?;
                self.push(Op::Neg(a))
            }
            Expr::Add(a, b) | Expr::Sub(a, b) => {
                let (x, y) = (self.compile(a)?, self.compile(b)?);
                self.push(if matches!(e, Expr::Add(..)) { Op::Add(x, y) } else { Op::Sub(x, y) })
            }
            Expr::Mul(a, b) => match (a.as_ref(), b.as_ref()) {
                // A constant factor scales (one term per order instead of a convolution).
                (Expr::Const(c), other) | (other, Expr::Const(c)) => {
                    let x = self.compile(other)?;
                    self.push(Op::Scale(x, c.clone()))
                }
                _ => {
                    let (x, y) = (self.compile(a)?, self.compile(b)?);
                    self.push(Op::Mul(x, y))
                }
            },
            Expr::Div(a, k) => {
                let x = self.compile(a)?;
                self.push(Op::Scale(x, Rational::one() / k))
            }
            Expr::Apply(f, a) => {
                let x = self.compile(a)?;
                self.push(Op::Func(*f, x))
            }
            Expr::Pow(a, n) => {
                if *n == 0 {
                    return Ok(self.push(Op::Const(Rational::one())));
                }
                let mut base = self.compile(a)?;
                let mut result: Option<usize> = None;
                let mut k = *n;
                while k > 0 {
                    if k & 1 == 1 {
                        result = Some(match result {
                            None => base,
                            Some(r) => self.push(Op::Mul(r, base)),
                        });
                    }
                    k >>= 1;
                    if k > 0 {
                        base = self.push(Op::Mul(base, base));
                    }
                }
                result.expect("n > 0 sets the result")
            }
            Expr::Min(..) => return not_smooth("min"),
            Expr::Max(..) => return not_smooth("max"),
            Expr::Relu(..) => return not_smooth("relu"),
            Expr::Abs(..) => return not_smooth("abs"),
            Expr::Ite(..) => return not_smooth("if-then-else"),
            Expr::Lookup(..) => return not_smooth("lookup"),
        })
    }

    /// The Taylor coefficients `y[i][k]`, `k = 0..=order`, of the solution through `y0` (the
    /// augmented state: state, then actions, then non-deterministic inputs).
    pub fn series<S: Coefficient>(&self, y0: &[S], order: usize) -> Result<Vec<Vec<S>>, FlowError> {
        if y0.len() != self.augmented_dim() {
            return Err(FlowError::Dimension(format!(
                "{} initial values for {} coordinates",
                y0.len(),
                self.augmented_dim()
            )));
        }
        let template = y0.first().cloned().ok_or_else(|| FlowError::Dimension("no coordinates".into()))?;
        let zero = template.constant_like(&Rational::zero());
        let mut y: Vec<Vec<S>> = y0.iter().map(|v| vec![v.clone()]).collect();
        let mut vals: Vec<Vec<S>> = vec![Vec::with_capacity(order + 1); self.ops.len()];
        let mut aux: Vec<Vec<S>> = vec![Vec::new(); self.ops.len()];
        for k in 0..order {
            for i in 0..self.ops.len() {
                let (v, a) = self.coefficient(i, k, &y, &vals, &aux[i], &template)?;
                vals[i].push(v);
                if let Some(a) = a {
                    aux[i].push(a);
                }
            }
            for (i, yi) in y.iter_mut().enumerate() {
                yi.push(match self.outputs.get(i) {
                    Some(&out) => vals[out][k].scale_ratio(1, k as u32 + 1),
                    None => zero.clone(),
                });
            }
        }
        Ok(y)
    }

    /// Coefficient `k` of operation `i` (and of its auxiliary series).
    fn coefficient<S: Coefficient>(
        &self,
        i: usize,
        k: usize,
        y: &[Vec<S>],
        vals: &[Vec<S>],
        aux: &[S],
        template: &S,
    ) -> Result<(S, Option<S>), FlowError> {
        let zero = || template.constant_like(&Rational::zero());
        // sum_{j=lo..=k} a[j] b[k-j]
        let conv = |a: &[S], b: &[S], lo: usize| -> S {
            (lo..=k).map(|j| a[j].mul(&b[k - j])).reduce(|s, t| s.add(&t)).unwrap_or_else(zero)
        };
        // (1/k) sum_{j=1..=k} j a[j] b[k-j], the derivative recurrence.
        let weighted = |a: &[S], b: &[S]| -> S {
            (1..=k)
                .map(|j| a[j].mul(&b[k - j]).scale_ratio(j as u32, k as u32))
                .reduce(|s, t| s.add(&t))
                .unwrap_or_else(zero)
        };
        Ok(match &self.ops[i] {
            Op::Const(c) => (if k == 0 { template.constant_like(c) } else { zero() }, None),
            Op::Var(v) => (y[*v][k].clone(), None),
            Op::Neg(a) => (vals[*a][k].neg(), None),
            Op::Add(a, b) => (vals[*a][k].add(&vals[*b][k]), None),
            Op::Sub(a, b) => (vals[*a][k].sub(&vals[*b][k]), None),
            Op::Mul(a, b) => (conv(&vals[*a], &vals[*b], 0), None),
            Op::Scale(a, c) => (vals[*a][k].scale(c), None),
            Op::Func(f, a) => {
                let a = &vals[*a];
                let own = &vals[i];
                if k == 0 {
                    let v = a[0].apply(*f)?;
                    let one = template.constant_like(&Rational::one());
                    let aux = match f {
                        Function::Sin => Some(a[0].apply(Function::Cos)?),
                        Function::Cos => Some(a[0].apply(Function::Sin)?),
                        Function::Tanh => Some(one.sub(&v.mul(&v))),
                        Function::Sigmoid => Some(v.sub(&v.mul(&v))),
                        Function::Tan => Some(one.add(&v.mul(&v))),
                        Function::Exp | Function::Log | Function::Sqrt => None,
                    };
                    return Ok((v, aux));
                }
                match f {
                    Function::Exp => (weighted(a, own), None),
                    // s' = c a', c' = -s a': the own series is sine, the auxiliary cosine.
                    Function::Sin => {
                        let s = weighted(a, aux);
                        let mut with_s = own.to_vec();
                        with_s.push(s.clone());
                        let c = weighted(a, &with_s).neg();
                        (s, Some(c))
                    }
                    Function::Cos => {
                        let c = weighted(a, aux).neg();
                        let mut with_c = own.to_vec();
                        with_c.push(c.clone());
                        let s = weighted(a, &with_c);
                        (c, Some(s))
                    }
                    // t' = w a' with w = 1 - t^2, s - s^2 or 1 + t^2.
                    Function::Tanh | Function::Sigmoid | Function::Tan => {
                        let t = weighted(a, aux);
                        let mut with_t = own.to_vec();
                        with_t.push(t.clone());
                        let square = conv(&with_t, &with_t, 0);
                        let w = match f {
                            Function::Tanh => square.neg(),
                            Function::Sigmoid => t.sub(&square),
                            _ => square,
                        };
                        (t, Some(w))
                    }
                    // a = e^l: l[k] = (a[k] - (1/k) sum_{j=1}^{k-1} j l[j] a[k-j]) / a[0].
                    Function::Log => {
                        let partial = (1..k)
                            .map(|j| own[j].mul(&a[k - j]).scale_ratio(j as u32, k as u32))
                            .reduce(|s, t| s.add(&t))
                            .unwrap_or_else(zero);
                        (a[k].sub(&partial).div(&a[0])?, None)
                    }
                    // a = r^2: r[k] = (a[k] - sum_{j=1}^{k-1} r[j] r[k-j]) / (2 r[0]).
                    Function::Sqrt => {
                        let partial =
                            (1..k).map(|j| own[j].mul(&own[k - j])).reduce(|s, t| s.add(&t)).unwrap_or_else(zero);
                        (a[k].sub(&partial).div(&own[0].add(&own[0]))?, None)
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_ir::parse::{SimpleScope, parse_expr};

    fn tape(rhs: &[&str], names: &[&str]) -> Tape {
        let scope = SimpleScope::with_state(names);
        let exprs: Vec<Expr> = rhs.iter().map(|t| parse_expr(t, &scope).unwrap()).collect();
        Tape::new(&exprs, 0, 0).unwrap()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-13 * (1.0 + b.abs())
    }

    #[test]
    fn coefficients_match_known_series() {
        // x' = x: e^t, coefficients 1/k!.
        let s = tape(&["x"], &["x"]).series(&[1.0f64], 8).unwrap();
        let mut fact = 1.0;
        for (k, c) in s[0].iter().enumerate() {
            if k > 0 {
                fact *= k as f64;
            }
            assert!(close(*c, 1.0 / fact), "k={k}: {c}");
        }
        // x' = x^2 from 1: 1/(1-t), every coefficient 1.
        let s = tape(&["x^2"], &["x"]).series(&[1.0f64], 10).unwrap();
        assert!(s[0].iter().all(|c| close(*c, 1.0)), "{:?}", s[0]);
        // th' = w, w' = -sin(th) near 0.3: compare with the derivative of the first terms.
        let s = tape(&["w", "-sin(th)"], &["th", "w"]).series(&[0.3f64, 0.0], 4).unwrap();
        assert!(close(s[0][2], -0.3f64.sin() / 2.0));
        assert!(close(s[1][3], 0.3f64.cos() * 0.3f64.sin() / 6.0), "{}", s[1][3]);
    }

    #[test]
    fn function_recurrences_match_their_closed_forms() {
        // t' = 1, y' = g(t): y(t0 + h) - y(t0) = G(t0 + h) - G(t0) for an antiderivative G.
        type Antiderivative = fn(f64) -> f64;
        let cases: [(&str, Antiderivative); 8] = [
            ("sin(t)", |t| -t.cos()),
            ("cos(t)", f64::sin),
            ("exp(t)", f64::exp),
            ("tanh(t)", |t| t.cosh().ln()),
            ("sigmoid(t)", |t| t.exp().ln_1p()),
            ("log(t)", |t| t * t.ln() - t),
            ("sqrt(t)", |t| 2.0 / 3.0 * t.powf(1.5)),
            ("tan(t)", |t| -t.cos().ln()),
        ];
        let scope = SimpleScope::with_state(&["t", "y"]);
        for (rhs, antiderivative) in cases {
            let tape = Tape::new(&[Expr::Const(Rational::one()), parse_expr(rhs, &scope).unwrap()], 0, 0).unwrap();
            let (t0, h) = (0.4, 0.05);
            let s = tape.series(&[t0, 0.0], 14).unwrap();
            let approx: f64 = s[1].iter().rev().fold(0.0, |acc, c| acc * h + c);
            let exact = antiderivative(t0 + h) - antiderivative(t0);
            assert!((approx - exact).abs() < 1e-15, "{rhs}: {approx} vs {exact}");
        }
    }
}
