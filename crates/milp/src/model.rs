//! [`MilpModel`]: good_lp problem variables and constraints, built once and solved (possibly several
//! times, with different objectives) by HiGHS.
//!
//! good_lp builds the affine expressions and constraints; the model goes to HiGHS directly (the
//! `highs` crate), because good_lp passes the matrix before any option can be set (so HiGHS drops
//! entries below its default `small_matrix_value` of 1e-9 on the way in) and hides the MIP dual
//! bound. See [`crate::numerics`] for how rows are prepared and which HiGHS thresholds matter.

use crate::error::MilpError;
use crate::numerics::{HIGHS_LIMIT, Prepared, SMALL_MATRIX_VALUE};
use good_lp::{Constraint, Expression, IntoAffineExpression, ProblemVariables, Variable, variable};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::time::{Duration, Instant};
use trestle_core::{Budget, Stop};
use trestle_ir::round::{add_down, mul_down, mul_up, sub_down, sub_up};

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
    /// Raised from another thread, it stops the solve (status [`SolveStatus::Limit`]) at HiGHS's
    /// next limit check or simplex iteration.
    pub cancel: Option<Cancel>,
}

pub use trestle_core::Cancel;

impl SolveOptions {
    /// These options within `budget`: a time limit of what is left of it (never more than a
    /// limit already set) and its cancellation token.
    pub fn within(mut self, budget: &Budget) -> SolveOptions {
        if let Some(left) = budget.remaining() {
            self.time_limit = Some(self.time_limit.map_or(left, |t| t.min(left)));
        }
        self.cancel = Some(budget.cancel_token().clone());
        self
    }
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
            cancel: None,
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
    /// A limit (time, iterations, solutions, memory) or an interrupt stopped the search.
    Limit(SolveLimit),
    /// Anything else HiGHS reported (the model status name).
    Other(String),
}

/// Which limit stopped a solve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolveLimit {
    /// The solve's time limit (its share of the run's budget).
    Time,
    /// The [`Cancel`] token was raised (HiGHS's interrupt callback).
    Interrupt,
    Iterations,
    Solutions,
    Memory,
}

impl SolveLimit {
    /// HiGHS's name of the model status (for records of what HiGHS said).
    pub fn highs_status(self) -> &'static str {
        match self {
            SolveLimit::Time => "ReachedTimeLimit",
            SolveLimit::Interrupt => "ReachedInterrupt",
            SolveLimit::Iterations => "ReachedIterationLimit",
            SolveLimit::Solutions => "ReachedSolutionLimit",
            SolveLimit::Memory => "ReachedMemoryLimit",
        }
    }

    /// What an engine that stopped at this limit reports.
    pub fn unknown(self) -> trestle_core::Unknown {
        match self {
            SolveLimit::Time => trestle_core::Unknown::Timeout,
            SolveLimit::Interrupt => trestle_core::Unknown::Interrupted,
            SolveLimit::Memory => trestle_core::Unknown::OutOfMemory,
            SolveLimit::Iterations => trestle_core::Unknown::Limit("HiGHS's iteration limit".into()),
            SolveLimit::Solutions => trestle_core::Unknown::Limit("HiGHS's solution limit".into()),
        }
    }
}

impl std::fmt::Display for SolveLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SolveLimit::Time => "time limit reached",
            SolveLimit::Interrupt => "interrupted",
            SolveLimit::Iterations => "iteration limit reached",
            SolveLimit::Solutions => "solution limit reached",
            SolveLimit::Memory => "memory limit reached",
        })
    }
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
    /// Coefficients below [`crate::numerics::MIN_COEFFICIENT`] moved into interval slacks.
    pub moved_coefficients: usize,
    /// Why this outcome is no evidence at all (values too large for HiGHS's tolerances); a
    /// solution may still be replayed.
    pub out_of_range: Option<String>,
}

/// A MILP under construction: variables with their bounds, linear constraints.
#[derive(Clone, Default)]
pub struct MilpModel {
    vars: ProblemVariables,
    index: HashMap<Variable, usize>,
    bounds: Vec<(f64, f64)>,
    integer: Vec<bool>,
    constraints: Vec<Constraint>,
    /// Non-zero coefficients of the constraints so far.
    entries: usize,
    binaries: usize,
    infeasible: Option<String>,
    /// The tanh and sigmoid neurons encoded by their relaxation, in order ([`crate::smooth`]).
    relaxed: Vec<crate::smooth::RelaxedNeuron>,
    /// Kinks of the networks encoded so far: fixed active, fixed inactive, with a binary.
    kinks: [usize; 3],
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
        self.entries += c.expression().linear_coefficients().count();
        self.constraints.push(c);
    }

    /// Records that the constraints are contradictory (found while encoding, e.g. a guard that is
    /// false everywhere); solving then answers `Infeasible` without calling HiGHS.
    pub fn mark_infeasible(&mut self, reason: impl Into<String>) {
        if self.infeasible.is_none() {
            self.infeasible = Some(reason.into());
        }
    }

    /// The neurons this model relaxes rather than encodes exactly ([`crate::smooth`]): none means
    /// the model is exact, so a solution is a run (to be replayed); any means a solution is only
    /// a candidate.
    pub fn relaxed_neurons(&self) -> &[crate::smooth::RelaxedNeuron] {
        &self.relaxed
    }

    pub(crate) fn record_relaxed(&mut self, neuron: crate::smooth::RelaxedNeuron) {
        self.relaxed.push(neuron);
    }

    /// The kinks (ReLU phases) of every network encoded into this model so far
    /// ([`crate::encode_network_step`]): `[fixed active, fixed inactive, needing a binary]`, the
    /// measure of how much the bounds fixed.
    pub fn kinks(&self) -> [usize; 3] {
        self.kinks
    }

    pub(crate) fn count_kinks(&mut self, counts: [usize; 3]) {
        for (k, c) in self.kinks.iter_mut().zip(counts) {
            *k += c;
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

    /// Non-zero coefficients of the constraints: what the model's memory grows with.
    pub fn num_entries(&self) -> usize {
        self.entries
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

    /// Optimises `objective` subject to the constraints. The model reaches HiGHS through
    /// [`crate::numerics`]: no coefficient is dropped (tiny ones become interval slacks), HiGHS's
    /// `small_matrix_value` is lowered before any row is passed, and a model whose values are too
    /// large for HiGHS's absolute tolerances is marked ([`SolveOutcome::out_of_range`]) or not
    /// passed at all. The objective's coefficients are HiGHS costs (HiGHS drops no cost; only
    /// costs `>= infinite_cost` = 1e20 would be infinite, and no value reaches 1e15).
    pub fn solve(&self, sense: Sense, objective: &Expression, opts: &SolveOptions) -> Result<SolveOutcome, MilpError> {
        let start = Instant::now();
        let first = self.solve_once(sense, objective, opts)?;
        let chose_presolve = opts.highs_options.iter().any(|(name, _)| name == "presolve");
        if first.status != SolveStatus::Infeasible || self.infeasible.is_some() || chose_presolve {
            return Ok(first);
        }
        // HiGHS's presolve reduces with tolerances and has declared feasible models infeasible
        // (the bounded-CTL regression `vcas_presolve_infeasibility_is_confirmed`): an infeasibility
        // counts only when the solve without presolve agrees. Otherwise its answer is the answer.
        let mut again = opts.clone();
        again.highs_options.push(("presolve".into(), HighsValue::Text("off".into())));
        if let Some(t) = opts.time_limit {
            again.time_limit = Some(t.saturating_sub(start.elapsed()));
        }
        let mut second = self.solve_once(sense, objective, &again)?;
        second.time = start.elapsed();
        Ok(second)
    }

    fn solve_once(&self, sense: Sense, objective: &Expression, opts: &SolveOptions) -> Result<SolveOutcome, MilpError> {
        let start = Instant::now();
        let nothing = |status: SolveStatus, out_of_range: Option<String>| SolveOutcome {
            status,
            primal: None,
            bound: None,
            values: None,
            time: start.elapsed(),
            moved_coefficients: 0,
            out_of_range,
        };
        if self.infeasible.is_some() {
            return Ok(nothing(SolveStatus::Infeasible, None));
        }
        let prepared = self.prepare(objective)?;
        let out_of_range = prepared.out_of_range(opts.feasibility_tolerance);
        if prepared.largest >= HIGHS_LIMIT {
            let why = out_of_range.unwrap_or_default();
            return Ok(nothing(SolveStatus::Other(format!("not solved: {why}")), Some(why)));
        }
        let solved = run_highs(&prepared, sense, opts)?;
        // The status enum belongs to the `highs` crate: read its name.
        let status_name = format!("{:?}", solved.status());
        let has_solution = format!("{:?}", solved.primal_solution_status()) == "Feasible";
        let offset = objective.constant();
        let primal = has_solution.then(|| solved.objective_value() + offset);
        let values = has_solution.then(|| prepared.unscale(solved.get_solution().columns(), self.num_variables()));
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
            "ReachedTimeLimit" => (SolveStatus::Limit(SolveLimit::Time), dual),
            "ReachedIterationLimit" => (SolveStatus::Limit(SolveLimit::Iterations), dual),
            "ReachedSolutionLimit" => (SolveStatus::Limit(SolveLimit::Solutions), dual),
            "ReachedInterrupt" => (SolveStatus::Limit(SolveLimit::Interrupt), dual),
            "ReachedMemoryLimit" => (SolveStatus::Limit(SolveLimit::Memory), dual),
            _ => (SolveStatus::Other(status_name.clone()), None),
        };
        let infeasible = status == SolveStatus::Infeasible;
        Ok(SolveOutcome {
            status,
            primal: if infeasible { None } else { primal },
            bound,
            values: if infeasible { None } else { values },
            time: start.elapsed(),
            moved_coefficients: prepared.moved,
            out_of_range,
        })
    }

    /// The LP relaxation of the model (integrality dropped), passed to HiGHS once, to bound
    /// several objectives in turn ([`Relaxation::bound`]); `opts.time_limit` and `opts.cancel`
    /// hold for all of them together. `None` when the model is known to be
    /// infeasible or is outside the range where its answers are evidence
    /// ([`Prepared::out_of_range`]: the rounding of a row may exceed 1/16 of the feasibility
    /// tolerance).
    pub fn relaxation(&self, opts: &SolveOptions) -> Result<Option<Relaxation<'_>>, MilpError> {
        if self.infeasible.is_some() {
            return Ok(None);
        }
        let prepared = self.prepare(&Expression::default())?;
        if prepared.out_of_range(opts.feasibility_tolerance).is_some() {
            return Ok(None);
        }
        let cancel = opts.cancel.clone().map(Box::new);
        let deadline = trestle_core::deadline_after(opts.time_limit);
        let (highs, cols) = build_highs(&prepared, Sense::Minimise, opts, cancel.as_deref(), true)?;
        Ok(Some(Relaxation { model: self, prepared, highs: Some(highs), cols, costed: Vec::new(), cancel, deadline }))
    }

    /// The columns and rows HiGHS gets: the variables, the constraints as prepared rows (with their
    /// slacks), and the objective's costs.
    fn prepare(&self, objective: &Expression) -> Result<Prepared, MilpError> {
        let mut p = Prepared::new(self.bounds.clone(), self.integer.clone());
        let terms = |e: &Expression| -> Vec<(usize, f64)> {
            let mut t: Vec<(usize, f64)> = e.linear_coefficients().map(|(v, k)| (self.index[&v], k)).collect();
            // Deterministic row order (the expression's map has none).
            t.sort_by_key(|&(j, _)| j);
            t
        };
        for c in &self.constraints {
            // good_lp normalises every constraint to `e <= 0` or `e == 0`.
            let e = c.expression();
            let rhs = -e.constant();
            let lo = if c.is_equality() { rhs } else { f64::NEG_INFINITY };
            p.add_row(&terms(e), lo, rhs)?;
        }
        p.set_objective(&terms(objective), objective.constant());
        Ok(p)
    }
}

/// The LP relaxation of a [`MilpModel`] in HiGHS, re-solved for one objective after another
/// (HiGHS starts each solve from the previous basis: only the costs change).
pub struct Relaxation<'a> {
    model: &'a MilpModel,
    prepared: Prepared,
    /// `None` only while a solve runs (HiGHS's model moves into the solve and back).
    highs: Option<highs::Model>,
    cols: Vec<highs::Col>,
    /// Columns with a non-zero cost from the last objective.
    costed: Vec<usize>,
    /// The token HiGHS's interrupt callback reads, at an address that stays put while HiGHS
    /// holds it.
    cancel: Option<Box<Cancel>>,
    /// When the bounds must stop (the options' time limit from the relaxation's start).
    deadline: Option<Instant>,
}

impl Relaxation<'_> {
    /// `Err(Stopped)` once the token is raised or the deadline has passed.
    fn check(&self) -> Result<(), MilpError> {
        if self.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
            return Err(MilpError::Stopped(Stop::Cancelled));
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(MilpError::Stopped(Stop::TimeLimit));
        }
        Ok(())
    }

    /// A lower (`Minimise`) or upper (`Maximise`) bound of `objective` over the relaxation,
    /// hence over the model's solutions; `None` when HiGHS finds no optimum (infeasible, a
    /// limit).
    ///
    /// The bound does not trust HiGHS's optimum: it is the Neumaier-Shcherbina bound of the
    /// rows' duals HiGHS returns, over the prepared model ([`crate::numerics`], a relaxation of
    /// the model), evaluated with outward rounding ([`safe_dual_bound`]). Any duals give a valid
    /// bound; good ones give one close to the optimum. It is rigorous for the model's rows as f64
    /// numbers; whatever rounding went into building those rows is the model's own (the crate's
    /// contract on evidence).
    pub fn bound(&mut self, sense: Sense, objective: &Expression) -> Result<Option<f64>, MilpError> {
        // Always minimised, so the duals have one sign convention: max f = -min(-f).
        let sign = match sense {
            Sense::Minimise => 1.0,
            Sense::Maximise => -1.0,
        };
        self.check()?;
        let mut highs = self.highs.take().expect("a relaxation holds its HiGHS model between solves");
        if let Some(d) = self.deadline {
            // HiGHS's own limit stops an LP that would outlive the deadline (`None` then: sound).
            let left = d.saturating_duration_since(Instant::now()).as_secs_f64();
            highs.try_set_option("time_limit", left).map_err(|e| MilpError::Solver(format!("time_limit: {e:?}")))?;
        }
        for j in self.costed.drain(..) {
            highs.change_column_cost(self.cols[j], 0.0);
        }
        self.prepared.costs.iter_mut().for_each(|c| *c = 0.0);
        for (v, k) in objective.linear_coefficients() {
            let j = self.model.index[&v];
            self.prepared.costs[j] += sign * k * self.prepared.scale[j];
            self.costed.push(j);
        }
        for &j in &self.costed {
            highs.change_column_cost(self.cols[j], self.prepared.costs[j]);
        }
        self.prepared.offset = sign * objective.constant();
        let solved = highs.try_solve().map_err(|e| MilpError::Solver(format!("{e:?}")))?;
        self.check()?;
        let optimal = format!("{:?}", solved.status()) == "Optimal";
        let bound = optimal.then(|| safe_dual_bound(&self.prepared, solved.get_solution().dual_rows())).flatten();
        self.highs = Some(highs::Model::from(solved));
        Ok(bound.map(|b| sign * b))
    }
}

/// Passes the prepared model to HiGHS (options first, then the rows) and solves it.
fn run_highs(p: &Prepared, sense: Sense, opts: &SolveOptions) -> Result<highs::SolvedModel, MilpError> {
    // `opts` outlives the solve, so its token stays where the callback finds it.
    let (model, _) = build_highs(p, sense, opts, opts.cancel.as_ref(), false)?;
    model.try_solve().map_err(|e| MilpError::Solver(format!("{e:?}")))
}

/// The prepared model in HiGHS (options first, then the rows) and its columns. `relax`: every
/// column continuous (the LP relaxation). `cancel` (the caller keeps it alive, at the same
/// address, as long as the model lives): HiGHS stops when it is raised.
fn build_highs(
    p: &Prepared,
    sense: Sense,
    opts: &SolveOptions,
    cancel: Option<&Cancel>,
    relax: bool,
) -> Result<(highs::Model, Vec<highs::Col>), MilpError> {
    let mut problem = highs::RowProblem::default();
    let cols: Vec<highs::Col> = p
        .columns
        .iter()
        .zip(&p.integer)
        .zip(&p.costs)
        .map(|((&(lo, hi), &int), &cost)| problem.add_column_with_integrality(cost, lo..=hi, int && !relax))
        .collect();
    let sense = match sense {
        Sense::Maximise => highs::Sense::Maximise,
        Sense::Minimise => highs::Sense::Minimise,
    };
    let mut model =
        problem.try_optimise(sense).map_err(|e| MilpError::Solver(format!("passing the columns: {e:?}")))?;
    let mut set = |name: &str, value: HighsValue| {
        let ok = match &value {
            HighsValue::Bool(v) => model.try_set_option(name, *v).is_ok(),
            HighsValue::Int(v) => model.try_set_option(name, *v).is_ok(),
            HighsValue::Float(v) => model.try_set_option(name, *v).is_ok(),
            HighsValue::Text(v) => model.try_set_option(name, v.as_str()).is_ok(),
        };
        if ok { Ok(()) } else { Err(MilpError::Solver(format!("cannot set option {name} to {value:?}"))) }
    };
    // Before any row: HiGHS assesses (and drops from) each row when it is added.
    set("small_matrix_value", HighsValue::Float(SMALL_MATRIX_VALUE))?;
    set("mip_feasibility_tolerance", HighsValue::Float(opts.feasibility_tolerance))?;
    set("primal_feasibility_tolerance", HighsValue::Float(opts.feasibility_tolerance))?;
    set("mip_rel_gap", HighsValue::Float(0.0))?;
    set("mip_abs_gap", HighsValue::Float(opts.mip_abs_gap))?;
    if let Some(t) = opts.time_limit {
        set("time_limit", HighsValue::Float(t.as_secs_f64()))?;
    }
    if let Some(t) = opts.objective_target {
        // HiGHS compares the target with its objective, which lacks the constant.
        set("objective_target", HighsValue::Float(t - p.offset))?;
    }
    if let Some(t) = opts.threads {
        set("threads", HighsValue::Int(t))?;
    }
    for (name, value) in &opts.highs_options {
        set(name, value.clone())?;
    }
    if let Some(cancel) = cancel {
        let highs = model.as_mut_ptr();
        let data = (cancel as *const Cancel).cast_mut().cast::<c_void>();
        // SAFETY: `highs` is the live model's HiGHS instance; `data` points to a `Cancel` the
        // caller keeps alive and in place while the model lives (see the parameter), and
        // `interrupt` only reads it.
        let ok = unsafe {
            highs_sys::Highs_setCallback(highs, Some(interrupt), data) == highs_sys::kHighsStatusOk
                && highs_sys::Highs_startCallback(highs, highs_sys::kHighsCallbackMipInterrupt)
                    == highs_sys::kHighsStatusOk
                && highs_sys::Highs_startCallback(highs, highs_sys::kHighsCallbackSimplexInterrupt)
                    == highs_sys::kHighsStatusOk
        };
        if !ok {
            return Err(MilpError::Solver("cannot install the interrupt callback".into()));
        }
    }
    for (i, r) in p.rows.iter().enumerate() {
        let factors = r.terms.iter().map(|&(j, k)| (cols[j], k));
        model
            .try_add_row(r.lo..=r.hi, factors)
            .map_err(|e| MilpError::Solver(format!("HiGHS refused row {i}: {e:?}")))?;
    }
    Ok((model, cols))
}

/// HiGHS's callback for its MIP limit checks and simplex iterations: asks it to stop once the
/// [`Cancel`] behind `data` is raised.
unsafe extern "C" fn interrupt(
    _kind: c_int,
    _message: *const c_char,
    _out: *const highs_sys::HighsCallbackDataOut,
    input: *mut highs_sys::HighsCallbackDataIn,
    data: *mut c_void,
) {
    // SAFETY: `data` is the `Cancel` installed by `build_highs`, alive while its model is;
    // `input`, when not null, is HiGHS's struct for this call.
    unsafe {
        if !input.is_null() && (*data.cast::<Cancel>()).is_cancelled() {
            (*input).user_interrupt = 1;
        }
    }
}

/// A lower bound of `costs . x + offset` over `lo_r <= a_r . x <= hi_r`, `l <= x <= u` (the
/// prepared model), from any row multipliers `y` (Neumaier and Shcherbina, "Safe bounds in linear
/// and mixed-integer linear programming", Math. Program. 2004): for every feasible `x`,
/// `c.x = sum_r y_r (a_r.x) + (c - A^T y).x`, where `y_r (a_r.x) >= y_r lo_r` for `y_r >= 0` and
/// `>= y_r hi_r` for `y_r < 0` (a multiplier whose side is infinite is taken as 0), and
/// `(c - A^T y).x` is bounded below over the columns' box with `c - A^T y` enclosed in intervals.
/// Every operation rounds outward, so the result is a bound whatever the multipliers' accuracy.
/// `None` when the bound is not finite (a column with an infinite end and a reduced cost that
/// may be of either sign).
pub(crate) fn safe_dual_bound(p: &Prepared, duals: &[f64]) -> Option<f64> {
    let mut d_lo = p.costs.clone();
    let mut d_hi = p.costs.clone();
    let mut total = p.offset;
    for (row, &y) in p.rows.iter().zip(duals) {
        let side = if y > 0.0 {
            row.lo
        } else if y < 0.0 {
            row.hi
        } else {
            continue;
        };
        if !side.is_finite() || !y.is_finite() {
            continue;
        }
        total = add_down(total, mul_down(y, side));
        for &(j, k) in &row.terms {
            d_lo[j] = sub_down(d_lo[j], mul_up(y, k));
            d_hi[j] = sub_up(d_hi[j], mul_down(y, k));
        }
    }
    for (j, &(l, u)) in p.columns.iter().enumerate() {
        let (a, b) = (d_lo[j], d_hi[j]);
        if a == 0.0 && b == 0.0 {
            continue;
        }
        // min over x in [l, u], d in [a, b] of d x: attained at a corner.
        let corners = [(a, l), (a, u), (b, l), (b, u)];
        let mut least = f64::INFINITY;
        for (d, x) in corners {
            let v = if d == 0.0 || x == 0.0 { 0.0 } else { mul_down(d, x) };
            if v.is_nan() {
                return None;
            }
            least = least.min(v);
        }
        total = add_down(total, least);
    }
    total.is_finite().then_some(total)
}

/// The affine expression `k` (no variables).
pub fn constant(k: f64) -> Expression {
    Expression::from(k)
}

/// Whether an expression has no variable with a non-zero coefficient.
pub fn is_constant(e: &Expression) -> bool {
    e.linear_coefficients().into_iter().all(|(_, k)| k == 0.0)
}
