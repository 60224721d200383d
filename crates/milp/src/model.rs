//! [`MilpModel`]: good_lp problem variables and constraints, built once and solved (possibly several
//! times, with different objectives) by HiGHS.
//!
//! good_lp's own `solve` hides what a proof needs: the MIP dual bound. So a model is handed to HiGHS
//! through good_lp (`highs(..).into_inner()`) and solved here, reading the model status, the primal
//! solution, the primal objective and the dual bound (`mip_dual_bound`) from HiGHS directly.

use crate::error::MilpError;
use good_lp::solvers::highs::highs;
use good_lp::{Constraint, Expression, IntoAffineExpression, ProblemVariables, SolverModel, Variable, variable};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Optimisation direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sense {
    Maximise,
    Minimise,
}

/// HiGHS settings for one solve.
#[derive(Clone, Debug, PartialEq)]
pub struct SolveOptions {
    /// Wall-clock limit of this solve (HiGHS `time_limit`); `None` = no limit.
    pub time_limit: Option<Duration>,
    /// HiGHS `mip_feasibility_tolerance` and `primal_feasibility_tolerance`.
    pub feasibility_tolerance: f64,
    /// HiGHS `mip_abs_gap`; `mip_rel_gap` is 0 so the search closes the absolute gap.
    pub mip_abs_gap: f64,
    /// HiGHS `threads` (`None`: HiGHS's default).
    pub threads: Option<i32>,
    /// HiGHS `objective_target`: stop as soon as a solution strictly better than this is found
    /// (status [`SolveStatus::Target`]).
    pub objective_target: Option<f64>,
    /// Further HiGHS options by name (<https://ergo-code.github.io/HiGHS/dev/options/definitions/>).
    pub highs_options: Vec<(String, HighsValue)>,
}

/// The value of a HiGHS option.
#[derive(Clone, Debug, PartialEq)]
pub enum HighsValue {
    Bool(bool),
    Int(i32),
    Float(f64),
    Text(String),
}

impl Default for SolveOptions {
    fn default() -> SolveOptions {
        SolveOptions {
            time_limit: None,
            feasibility_tolerance: 1e-6,
            mip_abs_gap: 1e-7,
            threads: None,
            objective_target: None,
            highs_options: Vec::new(),
        }
    }
}

/// How a solve ended.
#[derive(Clone, Debug, PartialEq)]
pub enum SolveStatus {
    /// Solved to optimality (within the gap tolerances).
    Optimal,
    /// The constraints have no solution (HiGHS's statement, in floating point).
    Infeasible,
    /// A solution better than the objective target was found; the search stopped there.
    Target,
    /// A limit (time, iterations, nodes, memory) or an interrupt stopped the search.
    Limit(String),
    /// Anything else HiGHS reported (the model status name).
    Other(String),
}

/// What a solve found. Every number is HiGHS's floating-point value.
#[derive(Clone, Debug, PartialEq)]
pub struct SolveOutcome {
    pub status: SolveStatus,
    /// Objective at the returned solution, when there is one.
    pub primal: Option<f64>,
    /// Bound on the optimum from the search (upper bound when maximising, lower when minimising):
    /// the MIP dual bound, or the optimal value of a model without integer variables.
    pub bound: Option<f64>,
    /// Values of the variables (in creation order), when HiGHS has a feasible solution.
    pub values: Option<Vec<f64>>,
    pub time: Duration,
}

/// A MILP under construction: variables with their bounds, linear constraints.
#[derive(Clone, Default)]
pub struct MilpModel {
    vars: ProblemVariables,
    index: HashMap<Variable, usize>,
    bounds: Vec<(f64, f64)>,
    integer: Vec<bool>,
    constraints: Vec<Constraint>,
    binaries: usize,
    infeasible: Option<String>,
}

impl std::fmt::Debug for MilpModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MilpModel")
            .field("variables", &self.num_variables())
            .field("binaries", &self.binaries)
            .field("constraints", &self.constraints.len())
            .field("infeasible", &self.infeasible)
            .finish()
    }
}

impl MilpModel {
    pub fn new() -> MilpModel {
        MilpModel::default()
    }

    fn push(&mut self, def: good_lp::VariableDefinition, lo: f64, hi: f64, integer: bool) -> Variable {
        let v = self.vars.add(def);
        self.index.insert(v, self.bounds.len());
        self.bounds.push((lo, hi));
        self.integer.push(integer);
        v
    }

    fn check_bounds(lo: f64, hi: f64, what: &str) -> Result<(), MilpError> {
        if lo.is_nan() || hi.is_nan() || lo > hi || lo == f64::INFINITY || hi == f64::NEG_INFINITY {
            return Err(MilpError::Unbounded { what: what.to_string(), lo, hi });
        }
        Ok(())
    }

    /// A real variable in `[lo, hi]` (infinite ends allowed).
    pub fn continuous(&mut self, lo: f64, hi: f64, what: &str) -> Result<Variable, MilpError> {
        Self::check_bounds(lo, hi, what)?;
        Ok(self.push(variable().min(lo).max(hi), lo, hi, false))
    }

    /// An integer variable in `[lo, hi]`.
    pub fn integer(&mut self, lo: f64, hi: f64, what: &str) -> Result<Variable, MilpError> {
        Self::check_bounds(lo, hi, what)?;
        Ok(self.push(variable().integer().min(lo).max(hi), lo, hi, true))
    }

    /// A 0/1 variable.
    pub fn binary(&mut self) -> Variable {
        self.binaries += 1;
        self.push(variable().binary(), 0.0, 1.0, true)
    }

    pub fn add(&mut self, c: Constraint) {
        self.constraints.push(c);
    }

    /// Records that the constraints are contradictory (found while encoding, e.g. a guard that is
    /// false everywhere); solving then answers `Infeasible` without calling HiGHS.
    pub fn mark_infeasible(&mut self, reason: impl Into<String>) {
        if self.infeasible.is_none() {
            self.infeasible = Some(reason.into());
        }
    }

    pub fn infeasible_reason(&self) -> Option<&str> {
        self.infeasible.as_deref()
    }

    pub fn num_variables(&self) -> usize {
        self.bounds.len()
    }

    pub fn num_binaries(&self) -> usize {
        self.binaries
    }

    pub fn num_integers(&self) -> usize {
        self.integer.iter().filter(|&&b| b).count()
    }

    pub fn num_constraints(&self) -> usize {
        self.constraints.len()
    }

    /// Bounds of a variable of this model.
    pub fn bounds_of(&self, v: Variable) -> (f64, f64) {
        self.bounds[self.index[&v]]
    }

    /// Whether the expression only takes integer values: integer variables, integer coefficients and
    /// an integer constant.
    pub fn is_integral(&self, e: &Expression) -> bool {
        e.constant().fract() == 0.0
            && e.linear_coefficients()
                .into_iter()
                .all(|(v, k)| k == 0.0 || (k.fract() == 0.0 && self.integer[self.index[&v]]))
    }

    /// Value of an affine expression over this model's variables at a solution.
    pub fn eval(&self, e: &Expression, values: &[f64]) -> f64 {
        let mut acc = e.constant();
        for (v, k) in e.linear_coefficients() {
            acc += k * values[self.index[&v]];
        }
        acc
    }

    /// Value of one variable at a solution.
    pub fn value(&self, v: Variable, values: &[f64]) -> f64 {
        values[self.index[&v]]
    }

    /// Optimises `objective` subject to the constraints.
    pub fn solve(&self, sense: Sense, objective: &Expression, opts: &SolveOptions) -> Result<SolveOutcome, MilpError> {
        let start = Instant::now();
        if self.infeasible.is_some() {
            return Ok(SolveOutcome {
                status: SolveStatus::Infeasible,
                primal: None,
                bound: None,
                values: None,
                time: start.elapsed(),
            });
        }
        let offset = objective.constant();
        let problem = match sense {
            Sense::Maximise => self.vars.clone().maximise(objective.clone()),
            Sense::Minimise => self.vars.clone().minimise(objective.clone()),
        };
        let mut hp = problem.using(highs);
        for c in &self.constraints {
            hp.add_constraint(c.clone());
        }
        let mut model = hp.try_into_inner().map_err(|e| MilpError::Solver(e.to_string()))?;
        let set = |ok: bool, name: &str| {
            if ok { Ok(()) } else { Err(MilpError::Solver(format!("cannot set option {name}"))) }
        };
        if let Some(t) = opts.time_limit {
            set(model.try_set_option("time_limit", t.as_secs_f64()).is_ok(), "time_limit")?;
        }
        set(
            model.try_set_option("mip_feasibility_tolerance", opts.feasibility_tolerance).is_ok(),
            "mip_feasibility_tolerance",
        )?;
        set(
            model.try_set_option("primal_feasibility_tolerance", opts.feasibility_tolerance).is_ok(),
            "primal_feasibility_tolerance",
        )?;
        set(model.try_set_option("mip_rel_gap", 0.0).is_ok(), "mip_rel_gap")?;
        set(model.try_set_option("mip_abs_gap", opts.mip_abs_gap).is_ok(), "mip_abs_gap")?;
        if let Some(t) = opts.objective_target {
            // HiGHS compares the target with its objective, which lacks good_lp's constant.
            set(model.try_set_option("objective_target", t - offset).is_ok(), "objective_target")?;
        }
        if let Some(t) = opts.threads {
            set(model.try_set_option("threads", t).is_ok(), "threads")?;
        }
        for (name, value) in &opts.highs_options {
            let ok = match value {
                HighsValue::Bool(v) => model.try_set_option(name.as_str(), *v).is_ok(),
                HighsValue::Int(v) => model.try_set_option(name.as_str(), *v).is_ok(),
                HighsValue::Float(v) => model.try_set_option(name.as_str(), *v).is_ok(),
                HighsValue::Text(v) => model.try_set_option(name.as_str(), v.as_str()).is_ok(),
            };
            set(ok, name)?;
        }
        let solved = model.try_solve().map_err(|e| MilpError::Solver(format!("{e:?}")))?;
        // The status enum belongs to the `highs` crate (not a direct dependency): read its name.
        let status_name = format!("{:?}", solved.status());
        let has_solution = format!("{:?}", solved.primal_solution_status()) == "Feasible";
        let values = has_solution.then(|| solved.get_solution().columns().to_vec());
        let primal = has_solution.then(|| solved.objective_value() + offset);
        let has_integers = self.integer.iter().any(|&b| b);
        let dual = if has_integers {
            solved.double_info_value(c"mip_dual_bound").ok().filter(|b| b.is_finite()).map(|b| b + offset)
        } else {
            None
        };
        let all_bounded = self.bounds.iter().all(|(l, h)| l.is_finite() && h.is_finite());
        let (status, bound) = match status_name.as_str() {
            "Optimal" => (SolveStatus::Optimal, if has_integers { dual.or(primal) } else { primal }),
            "Infeasible" => (SolveStatus::Infeasible, None),
            "ObjectiveTarget" => (SolveStatus::Target, dual),
            // Every variable bounded: the model cannot be unbounded, so it is infeasible.
            "UnboundedOrInfeasible" if all_bounded => (SolveStatus::Infeasible, None),
            "ReachedTimeLimit"
            | "ReachedIterationLimit"
            | "ReachedSolutionLimit"
            | "ReachedInterrupt"
            | "ReachedMemoryLimit" => (SolveStatus::Limit(status_name.clone()), dual),
            _ => (SolveStatus::Other(status_name.clone()), None),
        };
        let values = if status == SolveStatus::Infeasible { None } else { values };
        let primal = if status == SolveStatus::Infeasible { None } else { primal };
        Ok(SolveOutcome { status, primal, bound, values, time: start.elapsed() })
    }
}

/// The affine expression `k` (no variables).
pub fn constant(k: f64) -> Expression {
    Expression::from(k)
}

/// Whether an expression has no variable with a non-zero coefficient.
pub fn is_constant(e: &Expression) -> bool {
    e.linear_coefficients().into_iter().all(|(_, k)| k == 0.0)
}
