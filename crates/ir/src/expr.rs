//! Expressions over state, action and non-deterministic input variables: piecewise-linear
//! operations, products, integer powers and the elementary functions of plant dynamics.
//!
//! The same tree is evaluated four ways — f64 (simulation), exact rationals (replay of every
//! counterexample), outward-rounded intervals (sound images) and high-precision enclosures
//! ([`crate::enclosed`], validated replay) — and is handed as-is to the solver encoders, so all of
//! them agree on what a step means. An elementary function ([`Function`]) has no exact rational
//! value: the exact evaluation reports it ([`EvalError::Irrational`]) and a run through one is
//! replayed by validation instead. Integer powers of rationals are rational and stay exact.
//! Evaluating `sqrt`, `log` (or `tan` at a pole) outside its domain is an
//! [`EvalError::OutsideDomain`]: the system's error, like a run leaving a variable's domain.

use crate::interval::Interval;
use crate::num::{Rational, rational_from_f64};
use crate::pred::Pred;
use num_traits::Zero;
use std::collections::BTreeMap;

/// A variable of a system. Indices point into `System::state`, `System::actions`, `System::nondet`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VarRef {
    /// `System::state[i]`: the value at the start of the step.
    State(usize),
    /// `System::actions[i]`: set by a controller during the step (updates and guards only).
    Action(usize),
    /// `System::nondet[i]`: the environment's choice for this step.
    Nondet(usize),
}

/// An expression of the step: updates, guards, observations, `let` definitions and the sides of
/// every comparison. Constants are exact; see the module docs for how each evaluator reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// An exact constant.
    Const(Rational),
    /// A variable's value.
    Var(VarRef),
    /// `-a`.
    Neg(Box<Expr>),
    /// `a + b`.
    Add(Box<Expr>, Box<Expr>),
    /// `a - b`.
    Sub(Box<Expr>, Box<Expr>),
    /// A general product. Engines classify it: a constant factor makes it linear; a
    /// non-deterministic input times a term (the non-deterministic maze's `c * a`) is bilinear.
    Mul(Box<Expr>, Box<Expr>),
    /// Division by a non-zero constant.
    Div(Box<Expr>, Rational),
    /// `min(a, b)`.
    Min(Box<Expr>, Box<Expr>),
    /// `max(a, b)`.
    Max(Box<Expr>, Box<Expr>),
    /// `max(a, 0)`.
    Relu(Box<Expr>),
    /// `|a|`.
    Abs(Box<Expr>),
    /// `if cond then a else b`; `cond` is a boolean combination of linear comparisons.
    Ite(Box<Pred>, Box<Expr>, Box<Expr>),
    /// `lookup(i, [e0, e1, ...])`: the entry selected by an integer-valued index (0-based).
    Lookup(Box<Expr>, Vec<Expr>),
    /// An elementary function of one argument (`sin(x)`, `exp(x)`, ...).
    Apply(Function, Box<Expr>),
    /// `e^n` for an integer `0 <= n <=` [`MAX_POWER`]: exact over rationals.
    Pow(Box<Expr>, u32),
}

/// Largest exponent of [`Expr::Pow`]: `x^64` of a rational with a 20-digit denominator already
/// has a 1280-digit one.
pub const MAX_POWER: u32 = 64;

/// The elementary functions an expression may apply. None has an exact rational value at a
/// rational argument in general, so every engine that needs exact values refuses them or
/// encloses them ([`crate::Interval`], [`crate::enclosed::Enclosed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Function {
    /// Sine (radians).
    Sin,
    /// Cosine (radians).
    Cos,
    /// Defined away from the odd multiples of pi/2.
    Tan,
    /// The exponential `e^x`.
    Exp,
    /// Natural logarithm, defined for x > 0.
    Log,
    /// Defined for x >= 0.
    Sqrt,
    /// Hyperbolic tangent, in `(-1, 1)`.
    Tanh,
    /// The logistic function 1 / (1 + e^-x).
    Sigmoid,
}

impl Function {
    /// Every function, in the order messages list them.
    pub const ALL: [Function; 8] = [
        Function::Sin,
        Function::Cos,
        Function::Tan,
        Function::Exp,
        Function::Log,
        Function::Sqrt,
        Function::Tanh,
        Function::Sigmoid,
    ];

    /// The name the text syntax uses.
    pub fn name(self) -> &'static str {
        match self {
            Function::Sin => "sin",
            Function::Cos => "cos",
            Function::Tan => "tan",
            Function::Exp => "exp",
            Function::Log => "log",
            Function::Sqrt => "sqrt",
            Function::Tanh => "tanh",
            Function::Sigmoid => "sigmoid",
        }
    }

    /// Whether the function is defined on the whole real line (not `log`, `sqrt`, `tan`).
    pub fn is_total(self) -> bool {
        !matches!(self, Function::Log | Function::Sqrt | Function::Tan)
    }

    /// The function the text syntax calls `name`, if any.
    pub fn from_name(name: &str) -> Option<Function> {
        Function::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The value at an f64 (round to nearest, for simulation; never a bound). `None` outside the
    /// function's domain (a NaN or an infinite value of a partial function).
    pub fn eval_f64(self, x: f64) -> Option<f64> {
        let y = match self {
            Function::Sin => x.sin(),
            Function::Cos => x.cos(),
            Function::Tan => x.tan(),
            Function::Exp => x.exp(),
            Function::Log if x > 0.0 => x.ln(),
            Function::Sqrt if x >= 0.0 => x.sqrt(),
            Function::Log | Function::Sqrt => return None,
            Function::Tanh => x.tanh(),
            Function::Sigmoid => 1.0 / (1.0 + (-x).exp()),
        };
        (!y.is_nan()).then_some(y)
    }
}

impl std::fmt::Display for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Values of the variables an expression may read.
#[derive(Clone, Copy, Debug)]
pub struct Env<'a, T> {
    /// `System::state` order.
    pub state: &'a [T],
    /// `System::actions` order; empty where actions are not defined yet (observations).
    pub action: &'a [T],
    /// `System::nondet` order.
    pub nondet: &'a [T],
}

impl<'a, T> Env<'a, T> {
    /// The values of the three kinds of variables.
    pub fn new(state: &'a [T], action: &'a [T], nondet: &'a [T]) -> Self {
        Env { state, action, nondet }
    }

    /// The value of `v`. Panics on an index past its slice (an expression reading actions where
    /// none are given, or an unvalidated system).
    pub fn get(&self, v: VarRef) -> &T {
        match v {
            VarRef::State(i) => &self.state[i],
            VarRef::Action(i) => &self.action[i],
            VarRef::Nondet(i) => &self.nondet[i],
        }
    }
}

/// Why an expression has no value (of the requested kind) at a point: an error of the model or of
/// its input, never a verdict.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    /// A `lookup` index that selects no entry of its table: not an integer, or out of range.
    #[error("lookup index {index} is not an integer in 0..{len}")]
    LookupIndex {
        /// The index's value as text (an interval's `[lo, hi]` for an empty table).
        index: String,
        /// The table's number of entries.
        len: usize,
    },
    /// An elementary function in exact rational evaluation.
    #[error("{function} has no exact rational value: validated replay needed")]
    Irrational {
        /// The function met.
        function: Function,
    },
    /// A function evaluated where it is undefined (`sqrt` below 0, `log` at or below 0, `tan` at
    /// a pole): the system's error, like a run leaving a variable's domain.
    #[error("{function}({argument}) is undefined: {reason}")]
    OutsideDomain {
        /// The function.
        function: Function,
        /// The argument's value as text (a number, or an interval).
        argument: String,
        /// The function's domain in words (`log is defined for x > 0`).
        reason: String,
    },
    /// An arithmetic that has no version of the function (the gradient attack's dual numbers).
    #[error("{function} is not evaluated in {arithmetic}")]
    Unsupported {
        /// The function.
        function: Function,
        /// The arithmetic's type name.
        arithmetic: &'static str,
    },
}

/// `sum coeffs[v] * v + constant`, exact.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct LinearExpr {
    /// The non-zero coefficients (zeros are removed by every operation).
    pub coeffs: BTreeMap<VarRef, Rational>,
    /// The constant term.
    pub constant: Rational,
}

impl LinearExpr {
    /// The constant `c`.
    pub fn constant(c: Rational) -> LinearExpr {
        LinearExpr { coeffs: BTreeMap::new(), constant: c }
    }

    /// The variable `v` (coefficient 1).
    pub fn var(v: VarRef) -> LinearExpr {
        let mut coeffs = BTreeMap::new();
        coeffs.insert(v, Rational::from_integer(1.into()));
        LinearExpr { coeffs, constant: Rational::zero() }
    }

    /// Whether no variable has a non-zero coefficient.
    pub fn is_constant(&self) -> bool {
        self.coeffs.is_empty()
    }

    /// `self + other` when `sign >= 0`, `self - other` otherwise.
    pub fn add(mut self, other: &LinearExpr, sign: i32) -> LinearExpr {
        for (v, c) in &other.coeffs {
            let e = self.coeffs.entry(*v).or_insert_with(Rational::zero);
            if sign >= 0 { *e += c } else { *e -= c }
        }
        if sign >= 0 {
            self.constant += &other.constant
        } else {
            self.constant -= &other.constant
        }
        self.coeffs.retain(|_, c| !c.is_zero());
        self
    }

    /// `k * self` (zero when `k` is 0).
    pub fn scale(mut self, k: &Rational) -> LinearExpr {
        if k.is_zero() {
            return LinearExpr::default();
        }
        for c in self.coeffs.values_mut() {
            *c *= k;
        }
        self.constant *= k;
        self
    }

    /// The coefficient of `v` (0 when absent).
    pub fn coeff(&self, v: VarRef) -> Rational {
        self.coeffs.get(&v).cloned().unwrap_or_else(Rational::zero)
    }

    /// The exact value at `env`.
    pub fn eval_exact(&self, env: &Env<'_, Rational>) -> Rational {
        let mut acc = self.constant.clone();
        for (v, c) in &self.coeffs {
            acc += c * env.get(*v);
        }
        acc
    }
}

impl Expr {
    /// The constant `c`.
    pub fn constant(c: Rational) -> Expr {
        Expr::Const(c)
    }

    /// The variable `v`.
    pub fn var(v: VarRef) -> Expr {
        Expr::Var(v)
    }

    /// The value when the expression is a literal constant (no folding: `1 + 1` is `None`).
    pub fn as_const(&self) -> Option<&Rational> {
        match self {
            Expr::Const(c) => Some(c),
            _ => None,
        }
    }

    /// Calls `f` on every variable occurrence.
    pub fn visit_vars(&self, f: &mut dyn FnMut(VarRef)) {
        match self {
            Expr::Const(_) => {}
            Expr::Var(v) => f(*v),
            Expr::Neg(a) | Expr::Relu(a) | Expr::Abs(a) | Expr::Div(a, _) | Expr::Apply(_, a) | Expr::Pow(a, _) => {
                a.visit_vars(f)
            }
            Expr::Add(a, b) | Expr::Sub(a, b) | Expr::Mul(a, b) | Expr::Min(a, b) | Expr::Max(a, b) => {
                a.visit_vars(f);
                b.visit_vars(f);
            }
            Expr::Ite(c, a, b) => {
                c.visit_vars(f);
                a.visit_vars(f);
                b.visit_vars(f);
            }
            Expr::Lookup(i, items) => {
                i.visit_vars(f);
                items.iter().for_each(|e| e.visit_vars(f));
            }
        }
    }

    /// Calls `f` on this expression and every sub-expression (those inside an `ite`'s condition
    /// included), outermost first.
    pub fn visit_exprs(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Const(_) | Expr::Var(_) => {}
            Expr::Neg(a) | Expr::Relu(a) | Expr::Abs(a) | Expr::Div(a, _) | Expr::Apply(_, a) | Expr::Pow(a, _) => {
                a.visit_exprs(f)
            }
            Expr::Add(a, b) | Expr::Sub(a, b) | Expr::Mul(a, b) | Expr::Min(a, b) | Expr::Max(a, b) => {
                a.visit_exprs(f);
                b.visit_exprs(f);
            }
            Expr::Ite(c, a, b) => {
                c.visit_exprs(f);
                a.visit_exprs(f);
                b.visit_exprs(f);
            }
            Expr::Lookup(i, items) => {
                i.visit_exprs(f);
                items.iter().for_each(|e| e.visit_exprs(f));
            }
        }
    }

    /// The distinct variables read, sorted.
    pub fn vars(&self) -> Vec<VarRef> {
        let mut out = Vec::new();
        self.visit_vars(&mut |v| {
            if !out.contains(&v) {
                out.push(v)
            }
        });
        out.sort();
        out
    }

    /// Whether some variable read satisfies `pred` (e.g. "reads an action").
    pub fn mentions(&self, pred: impl Fn(VarRef) -> bool) -> bool {
        let mut found = false;
        self.visit_vars(&mut |v| found |= pred(v));
        found
    }

    /// Replaces variables by expressions (`None` keeps the variable).
    pub fn substitute(&self, f: &dyn Fn(VarRef) -> Option<Expr>) -> Expr {
        let s = |e: &Expr| Box::new(e.substitute(f));
        match self {
            Expr::Const(_) => self.clone(),
            Expr::Var(v) => f(*v).unwrap_or_else(|| self.clone()),
            Expr::Neg(a) => Expr::Neg(s(a)),
            Expr::Relu(a) => Expr::Relu(s(a)),
            Expr::Abs(a) => Expr::Abs(s(a)),
            Expr::Div(a, k) => Expr::Div(s(a), k.clone()),
            Expr::Add(a, b) => Expr::Add(s(a), s(b)),
            Expr::Sub(a, b) => Expr::Sub(s(a), s(b)),
            Expr::Mul(a, b) => Expr::Mul(s(a), s(b)),
            Expr::Min(a, b) => Expr::Min(s(a), s(b)),
            Expr::Max(a, b) => Expr::Max(s(a), s(b)),
            Expr::Ite(c, a, b) => Expr::Ite(Box::new(c.substitute(f)), s(a), s(b)),
            Expr::Lookup(i, items) => Expr::Lookup(s(i), items.iter().map(|e| e.substitute(f)).collect()),
            Expr::Apply(g, a) => Expr::Apply(*g, s(a)),
            Expr::Pow(a, n) => Expr::Pow(s(a), *n),
        }
    }

    /// The expression as an exact affine form, when it is one (constant products only).
    pub fn as_linear(&self) -> Option<LinearExpr> {
        Some(match self {
            Expr::Const(c) => LinearExpr::constant(c.clone()),
            Expr::Var(v) => LinearExpr::var(*v),
            Expr::Neg(a) => a.as_linear()?.scale(&Rational::from_integer((-1).into())),
            Expr::Add(a, b) => a.as_linear()?.add(&b.as_linear()?, 1),
            Expr::Sub(a, b) => a.as_linear()?.add(&b.as_linear()?, -1),
            Expr::Mul(a, b) => {
                let (la, lb) = (a.as_linear()?, b.as_linear()?);
                if la.is_constant() {
                    lb.scale(&la.constant)
                } else if lb.is_constant() {
                    la.scale(&lb.constant)
                } else {
                    return None;
                }
            }
            Expr::Div(a, k) => a.as_linear()?.scale(&(Rational::from_integer(1.into()) / k)),
            Expr::Pow(a, 0) if a.as_linear().is_some() => LinearExpr::constant(Rational::from_integer(1.into())),
            Expr::Pow(a, 1) => a.as_linear()?,
            Expr::Pow(a, n) => {
                let l = a.as_linear()?;
                if !l.is_constant() {
                    return None;
                }
                LinearExpr::constant(num_traits::pow(l.constant, *n as usize))
            }
            _ => return None,
        })
    }

    /// Whether the expression is piecewise linear (every product has a constant factor).
    pub fn is_piecewise_linear(&self) -> bool {
        match self {
            Expr::Const(_) | Expr::Var(_) => true,
            Expr::Mul(a, b) => {
                (a.as_linear().is_some_and(|l| l.is_constant()) || b.as_linear().is_some_and(|l| l.is_constant()))
                    && a.is_piecewise_linear()
                    && b.is_piecewise_linear()
            }
            Expr::Neg(a) | Expr::Relu(a) | Expr::Abs(a) | Expr::Div(a, _) => a.is_piecewise_linear(),
            Expr::Add(a, b) | Expr::Sub(a, b) | Expr::Min(a, b) | Expr::Max(a, b) => {
                a.is_piecewise_linear() && b.is_piecewise_linear()
            }
            Expr::Ite(c, a, b) => c.is_linear() && a.is_piecewise_linear() && b.is_piecewise_linear(),
            Expr::Lookup(i, items) => i.is_piecewise_linear() && items.iter().all(Expr::is_piecewise_linear),
            Expr::Pow(a, n) => a.is_piecewise_linear() && (*n <= 1 || a.as_linear().is_some_and(|l| l.is_constant())),
            Expr::Apply(..) => false,
        }
    }

    /// The first elementary function the expression applies (those inside an `ite`'s condition
    /// included): what engines that need exact values name when they refuse it.
    pub fn first_function(&self) -> Option<Function> {
        let mut found = None;
        self.visit_exprs(&mut |e| {
            if let (None, Expr::Apply(f, _)) = (found, e) {
                found = Some(*f);
            }
        });
        found
    }

    /// Whether the expression's value at rational arguments is rational (no elementary function):
    /// then it is evaluated exactly, otherwise by enclosures.
    pub fn is_rational_valued(&self) -> bool {
        self.first_function().is_none()
    }

    /// The value at `env`, in any [`Arith`](crate::Arith): the one evaluator of expressions.
    pub fn eval<A: crate::arith::Arith>(&self, env: &Env<'_, A>) -> Result<A, EvalError> {
        Ok(match self {
            Expr::Const(c) => A::constant(c),
            Expr::Var(v) => env.get(*v).clone(),
            Expr::Neg(a) => a.eval(env)?.neg(),
            Expr::Add(a, b) => a.eval(env)?.add(&b.eval(env)?),
            Expr::Sub(a, b) => a.eval(env)?.sub(&b.eval(env)?),
            Expr::Mul(a, b) => a.eval(env)?.mul(&b.eval(env)?),
            Expr::Div(a, k) => a.eval(env)?.div_const(k),
            Expr::Min(a, b) => a.eval(env)?.min(&b.eval(env)?),
            Expr::Max(a, b) => a.eval(env)?.max(&b.eval(env)?),
            Expr::Relu(a) => a.eval(env)?.relu(),
            Expr::Abs(a) => a.eval(env)?.abs(),
            Expr::Ite(c, a, b) => match c.eval(env)? {
                Some(true) => a.eval(env)?,
                Some(false) => b.eval(env)?,
                None => a.eval(env)?.join(&b.eval(env)?),
            },
            Expr::Lookup(i, items) => {
                let mut values = i.eval(env)?.lookup(items.len())?.map(|k| items[k].eval(env));
                let first = values.next().expect("lookup ranges are non-empty")?;
                values.try_fold(first, |acc, v| Ok::<A, EvalError>(acc.join(&v?)))?
            }
            Expr::Apply(f, a) => a.eval(env)?.apply(*f)?,
            Expr::Pow(a, n) => a.eval(env)?.pow(*n),
        })
    }

    /// The exact value: what verdicts and replays rest on.
    pub fn eval_exact(&self, env: &Env<'_, Rational>) -> Result<Rational, EvalError> {
        self.eval(env)
    }

    /// Round-to-nearest evaluation, for simulation and sampling (never for verdicts).
    pub fn eval_f64(&self, env: &Env<'_, f64>) -> Result<f64, EvalError> {
        self.eval(env)
    }

    /// A sound enclosure of the expression's range over a box of variable values.
    pub fn eval_interval(&self, env: &Env<'_, Interval>) -> Interval {
        // An empty lookup table, or a function whose argument's enclosure reaches outside its
        // domain, fails on intervals; the whole line encloses every value where evaluation
        // succeeds, and proves nothing about the box (the exact evaluators report the error).
        self.eval(env).unwrap_or(Interval::ENTIRE)
    }
}

/// Exact value of an f64 slice.
pub fn exact_values(xs: &[f64]) -> Vec<Rational> {
    xs.iter().map(|&x| rational_from_f64(x)).collect()
}
