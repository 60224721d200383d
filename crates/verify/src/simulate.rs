//! `simulate`: concrete runs of the closed loop, in exact arithmetic by default (f64 on request),
//! non-determinism resolved at random from a seed or as the user fixes it. The CLI reads its
//! flags' text into [`SimulateOptions`]; the Python package passes its keyword arguments.
//!
//! Systems with values of no rational form (tanh, sin, ...) run in MPFR enclosures (the choices of
//! an f64 run replayed by `trestle_core::validate::enclose_run`; midpoints shown). A sampled plant
//! (`[flow]`) is integrated over each period by `trestle_flow`'s Taylor integrator, in 128-bit
//! MPFR (f64 with `float`): numerical runs, not bounds; domains checked at the end of each period.

use crate::error::DriverError;
use serde_json::{Value, json};
use trestle_core::{Budget, Stop};
use trestle_flow::Flow;
use trestle_ir::num::{Rational, display_rational, to_f64_nearest};
use trestle_ir::plant::SampledPlant;
use trestle_ir::random::{Ends, RunSampler};
use trestle_ir::sim::{self, Scalar, SimError, Transition};
use trestle_ir::system::System;
use trestle_ir::{Env, RBox, space};

/// What to simulate. Names are the system's; values are exact.
#[derive(Clone, Debug, Default)]
pub struct SimulateOptions {
    /// Steps per run.
    pub steps: usize,
    /// Number of runs.
    pub runs: usize,
    /// Seed of the random choices (start state, non-deterministic inputs, branches).
    pub seed: u64,
    /// Start values of some state variables; the others are drawn from Init.
    pub from: Vec<(String, Rational)>,
    /// Fixed values of non-deterministic inputs, one per step (the last one repeats).
    pub nondet: Vec<(String, Vec<Rational>)>,
    /// The branch of every step, by name or index (the last one repeats); random when `None`.
    pub branches: Option<Vec<String>>,
    /// f64 arithmetic instead of exact rationals (faster; argmax ties may differ).
    pub float: bool,
    /// The continuous-time plant of a `[flow]` system (`trestle_config::load_sampled_system`).
    pub plant: Option<SampledPlant>,
    /// The run's time limit, polled every step: what was done by then is kept, the run cut there
    /// says so ([`Run::limit`]) and runs not started are left out.
    pub budget: Budget,
}

impl SimulateOptions {
    /// These options with the start values, fixed inputs and branches of the CLI's flags:
    /// `from` "h=-129,tau=25", `nondet` "c=0.5" (every step) or "c=0.5;0.7;1" (per step),
    /// `branch` a name or index, or a comma list per step. Numbers are exact decimals or `p/q`.
    pub fn with_text(
        mut self,
        from: Option<&str>,
        nondet: Option<&str>,
        branch: Option<&str>,
    ) -> Result<Self, DriverError> {
        for (k, v) in assignments(from.unwrap_or_default(), "--from")? {
            self.from.push((k, exact(&v, "--from")?));
        }
        for (k, v) in assignments(nondet.unwrap_or_default(), "--nondet")? {
            let vals = v.split(';').map(|x| exact(x.trim(), "--nondet")).collect::<Result<Vec<_>, _>>()?;
            self.nondet.push((k, vals));
        }
        self.branches = branch.map(|text| text.split(',').map(|b| b.trim().to_string()).collect());
        Ok(self)
    }
}

fn assignments(text: &str, what: &str) -> Result<Vec<(String, String)>, DriverError> {
    text.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| DriverError::input(format!("{what} '{kv}': expected NAME=VALUE")))
        })
        .collect()
}

/// A value a user wrote (an exact decimal or `p/q`); `what` names it in the error.
pub fn exact(text: &str, what: &str) -> Result<Rational, DriverError> {
    trestle_ir::num::parse_rational(text).ok_or_else(|| DriverError::input(format!("{what}: '{text}' is not a number")))
}

/// Most states a simulation holds, runs times (steps + 1): every run is kept until it is printed,
/// so `--runs 4294967296` asked for 481 GB (an abort under any memory limit) and `--runs 2^63`
/// overflowed a vector's capacity (exit 4). A million states of exact values is already minutes
/// of arithmetic and hundreds of MiB.
pub const MAX_STATES: usize = 1_000_000;

/// One run: its transitions (exact values of what the arithmetic computed), the last state, why
/// it stopped early (a branch disabled, no branch enabled, a domain left), and whether its start
/// lies in Init.
#[derive(Clone, Debug)]
pub struct Run {
    pub steps: Vec<Transition<Rational>>,
    pub last: Vec<Rational>,
    pub stopped: Option<String>,
    pub start_in_init: bool,
    /// The environment's choices, exact (inputs as drawn, not as the arithmetic holds them).
    pub choices: Vec<(Vec<Rational>, usize)>,
    /// For an enclosed run: the precision of its enclosures (its values are their midpoints).
    pub precision_bits: Option<u32>,
    /// Why the run was cut before its steps (the time limit, or cancelled).
    pub limit: Option<Stop>,
}

/// What the text output says of an enclosed run.
pub const ENCLOSED_NOTE: &str = "note: the system has values with no rational form; the run is evaluated in MPFR \
     interval arithmetic (every branch, guard and domain decided by the enclosures) and shows their midpoints";

/// Whether the runs of `opts` on `sys` are enclosed (values of no rational form, not `float`; a
/// sampled plant's runs are numerical integrations either way).
pub fn is_enclosed(sys: &System, opts: &SimulateOptions) -> bool {
    !opts.float && opts.plant.is_none() && !trestle_core::validate::is_rational_valued(sys)
}

/// Runs the simulation.
pub fn simulate(sys: &System, opts: &SimulateOptions) -> Result<Vec<Run>, DriverError> {
    let states = opts.steps.checked_add(1).and_then(|s| s.checked_mul(opts.runs));
    if states.is_none_or(|n| n > MAX_STATES) {
        return Err(DriverError::input(format!(
            "{} steps times {} runs: at most {MAX_STATES} states in all (every run is kept to be printed)",
            opts.steps, opts.runs
        )));
    }
    let plan = Plan::new(sys, opts)?;
    let plant = opts.plant.clone().map(|p| Plant::new(sys, p, opts.float)).transpose()?;
    let enclosed = is_enclosed(sys, opts);
    let mut rng = RunSampler::new(opts.seed);
    let mut runs = Vec::with_capacity(opts.runs);
    for _ in 0..opts.runs {
        if opts.budget.is_over() {
            break;
        }
        let start = plan.start_state(sys, &mut rng)?;
        runs.push(if opts.float {
            run::<f64>(sys, &plan, plant.as_ref(), &start, opts.steps, &opts.budget, &mut rng)
        } else if enclosed {
            let choices = run::<f64>(sys, &plan, None, &start, opts.steps, &opts.budget, &mut rng);
            enclose(sys, &start, choices)
        } else {
            run::<Rational>(sys, &plan, plant.as_ref(), &start, opts.steps, &opts.budget, &mut rng)
        });
    }
    Ok(runs)
}

/// Why the simulation did less than it was asked (a run cut, or runs not started), if it did.
pub fn limit(opts: &SimulateOptions, runs: &[Run]) -> Option<Stop> {
    let cut = runs.iter().find_map(|r| r.limit);
    cut.or_else(|| (runs.len() < opts.runs).then(|| opts.budget.check().err().unwrap_or(Stop::TimeLimit)))
}

/// What a simulation cut by its limit did, in words: "2 of 3 runs, 410 of 999999 steps in the
/// last one".
pub fn done(opts: &SimulateOptions, runs: &[Run]) -> String {
    let steps = runs.last().map_or(0, |r| r.steps.len());
    format!("{} of {} runs, {steps} of {} steps in the last one", runs.len(), opts.runs, opts.steps)
}

/// The simulation as one JSON object (the CLI's `simulate --json`). One cut by its limit also
/// has `status` `unknown`, the `reason` and `reason_kind` of every result, and `done`.
pub fn to_json(sys: &System, opts: &SimulateOptions, runs: &[Run]) -> Value {
    let enclosed = is_enclosed(sys, opts);
    let arithmetic = match (opts.float, enclosed) {
        (true, _) => "f64",
        (false, true) => "enclosed",
        (false, false) => "exact",
    };
    let mut out = json!({
        "system": sys.name,
        "arithmetic": arithmetic,
        "note": enclosed.then_some(ENCLOSED_NOTE),
        "seed": opts.seed,
        "period": opts.plant.as_ref().map(|p| display_rational(&p.period)),
        "runs": runs.iter().map(|r| r.to_json(sys)).collect::<Vec<_>>(),
    });
    if let Some(stop) = limit(opts, runs) {
        let why = trestle_core::Unknown::from(stop);
        out["status"] = json!("unknown");
        out["reason"] = json!(why.to_string());
        out["reason_kind"] = json!(why.kind());
        out["done"] = json!(done(opts, runs));
    }
    out
}

/// A continuous-time plant, compiled for integration.
struct Plant {
    flow: Flow,
    period: Rational,
    float: bool,
}

impl Plant {
    fn new(sys: &System, plant: SampledPlant, float: bool) -> Result<Plant, DriverError> {
        let flow = Flow::new(&plant.rates, sys.actions.len(), sys.nondet.len())
            .map_err(|e| DriverError::input(format!("[flow]: {e}")))?;
        Ok(Plant { flow, period: plant.period, float })
    }

    /// The state at the end of the period from `state`, with `actions` and `nondet` held.
    fn advance(&self, state: &[Rational], actions: &[Rational], nondet: &[Rational]) -> Result<Vec<Rational>, String> {
        let error = |e: trestle_flow::FlowError| format!("the flow over the period failed: {e}");
        if self.float {
            let f = |xs: &[Rational]| xs.iter().map(to_f64_nearest).collect::<Vec<f64>>();
            let period = to_f64_nearest(&self.period);
            let next = self.flow.simulate(&f(state), &f(actions), &f(nondet), period, 1e-14).map_err(error)?;
            next.iter()
                .map(|&x| trestle_ir::num::try_rational_from_f64(x).ok_or_else(|| format!("the flow reached {x}")))
                .collect()
        } else {
            let next = self.flow.simulate_big(state, actions, nondet, &self.period, 128, 30).map_err(error)?;
            next.iter()
                .map(|x| {
                    x.to_rational()
                        .map(|q| trestle_real::big::rational_from_rug(&q))
                        .ok_or_else(|| format!("the flow reached {x}"))
                })
                .collect()
        }
    }
}

/// The run of the same start and choices as `choices_from` (an f64 run), in high-precision
/// enclosures; where a decision stays undecided at every precision, the run stops there, saying so.
fn enclose(sys: &System, start: &[Rational], choices_from: Run) -> Run {
    use trestle_core::validate::{NotValidated, enclose_run};
    let mut n = choices_from.choices.len();
    let mut stopped = choices_from.stopped.clone();
    let (bits, run) = loop {
        match enclose_run(sys, start, &choices_from.choices[..n]) {
            Ok(found) => break found,
            Err(e) => {
                let at = match &e {
                    NotValidated::Undecided { step: Some(k), .. } => Some(*k),
                    NotValidated::Replay(trestle_core::ReplayError::Step { step, .. }) => Some(*step),
                    _ => None,
                };
                stopped = Some(format!("{e}"));
                match at.filter(|&k| k < n) {
                    Some(k) => n = k,
                    None => {
                        return Run {
                            steps: Vec::new(),
                            last: start.to_vec(),
                            stopped,
                            choices: Vec::new(),
                            precision_bits: None,
                            ..choices_from
                        };
                    }
                }
            }
        }
    };
    let two = Rational::from_integer(2.into());
    let mids = |xs: &[trestle_core::validate::Bounds]| xs.iter().map(|b| (&b.lo + &b.hi) / &two).collect::<Vec<_>>();
    let steps = (0..n)
        .map(|i| Transition {
            state: mids(&run.states[i]),
            nondet: run.choices[i].0.clone(),
            actions: mids(&run.actions[i]),
            branch: run.choices[i].1,
            next: mids(&run.states[i + 1]),
        })
        .collect();
    Run {
        steps,
        last: mids(&run.states[n]),
        stopped,
        start_in_init: choices_from.start_in_init,
        choices: run.choices,
        precision_bits: Some(bits),
        limit: choices_from.limit,
    }
}

/// The user's choices, resolved against the system.
struct Plan {
    from: Vec<Option<Rational>>,
    /// Per non-deterministic input: fixed values per step (the last one repeats), or random.
    nondet: Vec<Option<Vec<Rational>>>,
    /// Branch per step (the last one repeats), or random.
    branches: Option<Vec<usize>>,
    init_boxes: Option<Vec<RBox>>,
}

impl Plan {
    fn new(sys: &System, opts: &SimulateOptions) -> Result<Plan, DriverError> {
        let mut from = vec![None; sys.state.len()];
        for (k, v) in &opts.from {
            let i = sys.state_index(k).ok_or_else(|| {
                DriverError::input(format!(
                    "start state: unknown state variable '{k}' (state: {})",
                    sys.state_names().join(", ")
                ))
            })?;
            from[i] = Some(v.clone());
        }
        let mut nondet = vec![None; sys.nondet.len()];
        for (k, vals) in &opts.nondet {
            let i = sys.nondet.iter().position(|n| n.name == *k).ok_or_else(|| {
                DriverError::input(format!(
                    "non-deterministic inputs: unknown input '{k}' (inputs: {})",
                    sys.nondet_names().join(", ")
                ))
            })?;
            if vals.is_empty() {
                return Err(DriverError::input(format!("non-deterministic input '{k}': no value given")));
            }
            nondet[i] = Some(vals.clone());
        }
        let branches = match &opts.branches {
            None => None,
            Some(bs) if bs.is_empty() => return Err(DriverError::input("branches: no branch given")),
            Some(bs) => Some(bs.iter().map(|b| branch_index(sys, b)).collect::<Result<Vec<_>, _>>()?),
        };
        let init_boxes = sys.init.to_box_union(sys.state.len(), 4096);
        Ok(Plan { from, nondet, branches, init_boxes })
    }

    /// The start state: the given values, the rest drawn from Init's boxes. Every start is a state
    /// of the system (kinds and domains): a given value that is not is an input error, and drawn
    /// values are taken inside the domains.
    fn start_state(&self, sys: &System, rng: &mut RunSampler) -> Result<Vec<Rational>, DriverError> {
        let state = self.draw_start(sys, rng)?;
        sim::check_state(sys, &state).map_err(|e| DriverError::input(format!("start state: {e}")))?;
        Ok(state)
    }

    fn draw_start(&self, sys: &System, rng: &mut RunSampler) -> Result<Vec<Rational>, DriverError> {
        if self.from.iter().all(Option::is_some) {
            return Ok(self.from.iter().map(|v| v.clone().expect("all given")).collect());
        }
        let boxes = self.init_boxes.as_ref().filter(|b| !b.is_empty()).ok_or_else(|| {
            DriverError::input(
                "Init is not a union of boxes, so a start state cannot be drawn from it: give every variable's start value",
            )
        })?;
        let b = &boxes[rng.index(boxes.len())];
        let mut state = Vec::new();
        for (i, v) in sys.state.iter().enumerate() {
            if let Some(x) = &self.from[i] {
                state.push(x.clone());
                continue;
            }
            let (Some(lo), Some(hi)) = (&b.lo[i], &b.hi[i]) else {
                return Err(DriverError::input(format!("Init does not bound '{}': give its start value", v.name)));
            };
            let no_value =
                || DriverError::input(format!("Init has no {} value for '{}' in its domain", v.kind.name(), v.name));
            let (lo, hi) = space::legal_range(sys, i, lo, hi).ok_or_else(no_value)?;
            state.push(rng.value(v.kind, &lo, &hi).ok_or_else(no_value)?);
        }
        Ok(state)
    }

    fn nondet_at(&self, sys: &System, t: usize, rng: &mut RunSampler) -> Vec<Rational> {
        sys.nondet
            .iter()
            .enumerate()
            .map(|(i, n)| match &self.nondet[i] {
                Some(vals) => vals[t.min(vals.len() - 1)].clone(),
                None => rng.input(n, Ends::Uniform),
            })
            .collect()
    }
}

/// A branch by name, or by index when no branch has that name.
fn branch_index(sys: &System, b: &str) -> Result<usize, DriverError> {
    let b = b.trim();
    sys.step
        .branches
        .iter()
        .position(|x| x.name == b)
        .or_else(|| b.parse::<usize>().ok().filter(|&i| i < sys.step.branches.len()))
        .ok_or_else(|| {
            let names: Vec<_> = sys.step.branches.iter().map(|x| x.name.as_str()).collect();
            DriverError::input(format!("unknown branch '{b}' (branches: {})", names.join(", ")))
        })
}

/// Runs `steps` steps in arithmetic `T`; the record is kept as exact values of what `T` computed.
/// With a plant, the step's successor (the identity) is replaced by the flow over the period.
fn run<T: Scalar>(
    sys: &System,
    plan: &Plan,
    plant: Option<&Plant>,
    start: &[Rational],
    steps: usize,
    budget: &Budget,
    rng: &mut RunSampler,
) -> Run {
    let start_in_init = sys.init.eval_exact(&Env::new(start, &[], &[])).unwrap_or(false);
    let mut state: Vec<T> = start.iter().map(T::from_rational).collect();
    let mut memory = sim::initial_memory::<T>(sys);
    let mut out = Vec::new();
    let mut choices = Vec::new();
    let mut stopped = None;
    let mut limit = None;
    for t in 0..steps {
        if let Err(stop) = budget.check() {
            stopped = Some(format!("{stop} after {t} of {steps} steps"));
            limit = Some(stop);
            break;
        }
        let exact_nondet = plan.nondet_at(sys, t, rng);
        let nondet: Vec<T> = exact_nondet.iter().map(T::from_rational).collect();
        let pick = |enabled: &[usize]| -> Result<usize, SimError> {
            match &plan.branches {
                Some(bs) => {
                    let b = bs[t.min(bs.len() - 1)];
                    if enabled.contains(&b) {
                        Ok(b)
                    } else {
                        Err(SimError::BranchDisabled { name: sys.step.branches[b].name.clone() })
                    }
                }
                None => Ok(enabled[rng.index(enabled.len())]),
            }
        };
        match sim::step_choosing(sys, &state, &mut memory, &nondet, pick) {
            Ok(tr) => {
                choices.push((exact_nondet, tr.branch));
                let (current, nondet, actions) = (exact_of(&tr.state), exact_of(&tr.nondet), exact_of(&tr.actions));
                let next = match plant.map(|p| p.advance(&current, &actions, &nondet)) {
                    None => exact_of(&tr.next),
                    Some(Ok(next)) => next,
                    Some(Err(e)) => {
                        stopped = Some(e);
                        break;
                    }
                };
                state = next.iter().map(T::from_rational).collect();
                out.push(Transition { state: current, nondet, actions, branch: tr.branch, next });
                if plant.is_some()
                    && let Err(e) = sim::check_state(sys, &state)
                {
                    stopped = Some(format!("at the end of the period: {e}"));
                    break;
                }
            }
            Err(e) => {
                stopped = Some(e.to_string());
                break;
            }
        }
    }
    Run { steps: out, last: exact_of(&state), stopped, start_in_init, choices, precision_bits: None, limit }
}

fn exact_of<T: Scalar>(xs: &[T]) -> Vec<Rational> {
    xs.iter().map(Scalar::to_rational).collect()
}

fn value_json(x: &Rational) -> Value {
    json!(to_f64_nearest(x))
}

impl Run {
    /// The run as JSON: named decimals (the nearest f64, for reading) and the exact states.
    pub fn to_json(&self, sys: &System) -> Value {
        let named = |names: Vec<String>, vals: &[Rational]| -> Value {
            Value::Object(names.into_iter().zip(vals).map(|(n, v)| (n, value_json(v))).collect())
        };
        // An enclosed run's values are midpoints, not exact values: no exact form is printed.
        let exact = |vals: &[Rational]| -> Value {
            match self.precision_bits {
                Some(_) => Value::Null,
                None => Value::Array(vals.iter().map(|v| json!(display_rational(v))).collect()),
            }
        };
        let actions = |tr: &Transition<Rational>| -> Value {
            Value::Object(
                sys.actions
                    .iter()
                    .enumerate()
                    .map(|(i, a)| {
                        let q = &tr.actions[i];
                        let v = match sim::action_label(sys, i, q) {
                            Some(label) => json!({ "index": to_f64_nearest(q), "label": label }),
                            None => value_json(q),
                        };
                        (a.name.clone(), v)
                    })
                    .collect(),
            )
        };
        json!({
            "start_in_init": self.start_in_init,
            "steps": self.steps.iter().enumerate().map(|(t, tr)| json!({
                "t": t,
                "state": named(sys.state_names(), &tr.state),
                "state_exact": exact(&tr.state),
                "nondet": named(sys.nondet_names(), &tr.nondet),
                "actions": actions(tr),
                "branch": sys.step.branches[tr.branch].name,
            })).collect::<Vec<_>>(),
            "final": named(sys.state_names(), &self.last),
            "final_exact": exact(&self.last),
            "precision_bits": self.precision_bits,
            "stopped": self.stopped,
        })
    }
}
