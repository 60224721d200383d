//! `trestle simulate`: concrete runs of the closed loop, in exact arithmetic by default.
//!
//! A continuous-time system (`[flow]`, see `trestle_ir::plant`): at each step the controllers
//! act on the state, the actions and the non-deterministic inputs are held, and the plant is
//! integrated over the period by `trestle_flow`'s Taylor integrators — in MPFR at 128 bits in
//! the exact mode (the state recorded is the exact value of that 128-bit result), in f64 with
//! `--float`. Numerical runs, not bounds. Domains are checked at the end of each period.

use crate::args::SimulateArgs;
use crate::output::{print_json, table};
use crate::{CliError, CliResult, Outcome};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use trestle_ir::num::{Rational, display_rational, parse_rational, to_f64_nearest};
use trestle_ir::sim::{self, Scalar, SimError, Transition};
use trestle_flow::Flow;
use trestle_ir::plant::SampledPlant;
use trestle_ir::system::{NondetDomain, System, VarKind};
use trestle_ir::{Env, RBox, space};
use trestle_verify::render::decimal as fmt_f64;

pub fn run(a: &SimulateArgs) -> CliResult {
    let (sys, plant) = super::load_sampled(&a.system)?;
    let plant = plant.map(|p| Plant::new(&sys, p, a.float)).transpose()?;
    let plan = Plan::new(&sys, a)?;
    let mut rng = ChaCha8Rng::seed_from_u64(a.seed);
    let mut runs = Vec::new();
    // Values with no rational form (tanh, sin, ...): the exact arithmetic cannot run them.
    // (A sampled plant's runs are numerical integrations either way.)
    let enclosed = !a.float && plant.is_none() && !trestle_core::validate::is_rational_valued(&sys);
    for _ in 0..a.runs {
        let start = plan.start_state(&sys, &mut rng)?;
        runs.push(if a.float {
            simulate::<f64>(&sys, &plan, plant.as_ref(), &start, a.steps, &mut rng)
        } else if enclosed {
            let choices = simulate::<f64>(&sys, &plan, None, &start, a.steps, &mut rng);
            enclose(&sys, &start, choices)
        } else {
            simulate::<Rational>(&sys, &plan, plant.as_ref(), &start, a.steps, &mut rng)
        });
    }
    let arithmetic = match (a.float, enclosed) {
        (true, _) => "f64",
        (false, true) => "enclosed",
        (false, false) => "exact",
    };
    if enclosed && !a.system.json {
        println!("{ENCLOSED_NOTE}");
    }
    if a.system.json {
        print_json(&json!({
            "system": sys.name,
            "arithmetic": arithmetic,
            "note": enclosed.then_some(ENCLOSED_NOTE),
            "seed": a.seed,
            "period": plant.as_ref().map(|p| display_rational(&p.period)),
            "runs": runs.iter().map(|r| r.to_json(&sys)).collect::<Vec<_>>(),
        }));
    } else {
        for (i, r) in runs.iter().enumerate() {
            if a.runs > 1 {
                println!("run {i}:");
            }
            print!("{}", r.to_table(&sys));
            if let Some(reason) = &r.stopped {
                println!("stopped after {} steps: {reason}", r.steps.len());
            }
        }
    }
    Ok(Outcome::Done)
}

/// A continuous-time plant, compiled for integration.
struct Plant {
    flow: Flow,
    period: Rational,
    float: bool,
}

impl Plant {
    fn new(sys: &System, plant: SampledPlant, float: bool) -> Result<Plant, CliError> {
        let flow = Flow::new(&plant.rates, sys.actions.len(), sys.nondet.len())
            .map_err(|e| CliError::input(format!("[flow]: {e}")))?;
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

/// The user's choices, resolved against the system.
struct Plan {
    from: Vec<Option<Rational>>,
    /// Per non-deterministic input: fixed values per step (the last one repeats), or random.
    nondet: Vec<Option<Vec<Rational>>>,
    /// Branch per step (the last one repeats), or random.
    branches: Option<Vec<usize>>,
    init_boxes: Option<Vec<RBox>>,
}

fn assignments(text: &str, what: &str) -> Result<Vec<(String, String)>, CliError> {
    text.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| CliError::input(format!("{what} '{kv}': expected NAME=VALUE")))
        })
        .collect()
}

fn exact(text: &str, what: &str) -> Result<Rational, CliError> {
    parse_rational(text).ok_or_else(|| CliError::input(format!("{what}: '{text}' is not a number")))
}

impl Plan {
    fn new(sys: &System, a: &SimulateArgs) -> Result<Plan, CliError> {
        let mut from = vec![None; sys.state.len()];
        if let Some(text) = &a.from {
            for (k, v) in assignments(text, "--from")? {
                let i = sys.state_index(&k).ok_or_else(|| {
                    CliError::input(format!(
                        "--from: unknown state variable '{k}' (state: {})",
                        sys.state_names().join(", ")
                    ))
                })?;
                from[i] = Some(exact(&v, "--from")?);
            }
        }
        let mut nondet = vec![None; sys.nondet.len()];
        if let Some(text) = &a.nondet {
            for (k, v) in assignments(text, "--nondet")? {
                let i = sys
                    .nondet
                    .iter()
                    .position(|n| n.name == k)
                    .ok_or_else(|| CliError::input(format!("--nondet: unknown input '{k}'")))?;
                nondet[i] = Some(v.split(';').map(|x| exact(x.trim(), "--nondet")).collect::<Result<Vec<_>, _>>()?);
            }
        }
        let branches = match &a.branch {
            None => None,
            Some(text) => Some(
                text.split(',')
                    .map(|b| {
                        let b = b.trim();
                        sys.step
                            .branches
                            .iter()
                            .position(|x| x.name == b)
                            .or_else(|| b.parse::<usize>().ok().filter(|&i| i < sys.step.branches.len()))
                            .ok_or_else(|| {
                                let names: Vec<_> = sys.step.branches.iter().map(|x| x.name.as_str()).collect();
                                CliError::input(format!(
                                    "--branch: unknown branch '{b}' (branches: {})",
                                    names.join(", ")
                                ))
                            })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        let init_boxes = sys.init.to_box_union(sys.state.len(), 4096);
        Ok(Plan { from, nondet, branches, init_boxes })
    }

    /// The start state: `--from` values, the rest drawn from Init's boxes.
    /// Every start is a state of the system (kinds and domains): a `--from` value that is not is
    /// an input error, and drawn values are taken inside the domains.
    fn start_state(&self, sys: &System, rng: &mut ChaCha8Rng) -> Result<Vec<Rational>, CliError> {
        let state = self.draw_start(sys, rng)?;
        sim::check_state(sys, &state).map_err(|e| CliError::input(format!("--from: {e}")))?;
        Ok(state)
    }

    fn draw_start(&self, sys: &System, rng: &mut ChaCha8Rng) -> Result<Vec<Rational>, CliError> {
        if self.from.iter().all(Option::is_some) {
            return Ok(self.from.iter().map(|v| v.clone().unwrap()).collect());
        }
        let boxes = self.init_boxes.as_ref().filter(|b| !b.is_empty()).ok_or_else(|| {
            CliError::input("Init is not a union of boxes, so a start state cannot be drawn from it: give every variable with --from")
        })?;
        let b = &boxes[rng.random_range(0..boxes.len())];
        let mut state = Vec::new();
        for (i, v) in sys.state.iter().enumerate() {
            if let Some(x) = &self.from[i] {
                state.push(x.clone());
                continue;
            }
            let (Some(lo), Some(hi)) = (&b.lo[i], &b.hi[i]) else {
                return Err(CliError::input(format!("Init does not bound '{}': give it with --from", v.name)));
            };
            let no_value =
                || CliError::input(format!("Init has no {} value for '{}' in its domain", v.kind.name(), v.name));
            let (lo, hi) = space::legal_range(sys, i, lo, hi).ok_or_else(no_value)?;
            state.push(space::draw(v.kind, &lo, &hi, rng).ok_or_else(no_value)?);
        }
        Ok(state)
    }

    fn nondet_at(&self, sys: &System, t: usize, rng: &mut ChaCha8Rng) -> Vec<Rational> {
        sys.nondet
            .iter()
            .enumerate()
            .map(|(i, n)| match &self.nondet[i] {
                Some(vals) => vals[t.min(vals.len() - 1)].clone(),
                None => match &n.domain {
                    NondetDomain::Interval(lo, hi) => {
                        space::draw(VarKind::Real, lo, hi, rng).expect("non-empty interval")
                    }
                    NondetDomain::Set(s) => s[rng.random_range(0..s.len())].clone(),
                },
            })
            .collect()
    }
}

struct Run {
    steps: Vec<Transition<Rational>>,
    last: Vec<Rational>,
    stopped: Option<String>,
    start_in_init: bool,
    /// The environment's choices, exact (inputs as drawn, not as `T` holds them).
    choices: Vec<(Vec<Rational>, usize)>,
    /// For an enclosed run: the precision of its enclosures.
    precision_bits: Option<u32>,
}

const ENCLOSED_NOTE: &str = "note: the system has values with no rational form; the run is evaluated in MPFR interval \
     arithmetic (every branch, guard and domain decided by the enclosures) and shows their midpoints";

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
                        let last = start.to_vec();
                        let precision_bits = None;
                        return Run {
                            steps: Vec::new(),
                            last,
                            stopped,
                            choices: Vec::new(),
                            precision_bits,
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
    }
}

/// Runs `steps` steps in arithmetic `T`; the record is kept as exact values of what `T` computed.
/// With a plant, the step's successor (the identity) is replaced by the flow over the period.
fn simulate<T: Scalar>(
    sys: &System,
    plan: &Plan,
    plant: Option<&Plant>,
    start: &[Rational],
    steps: usize,
    rng: &mut ChaCha8Rng,
) -> Run {
    let start_in_init = sys.init.eval_exact(&Env::new(start, &[], &[])).unwrap_or(false);
    let mut state: Vec<T> = start.iter().map(T::from_rational).collect();
    let mut memory = sim::initial_memory::<T>(sys);
    let mut out = Vec::new();
    let mut choices = Vec::new();
    let mut stopped = None;
    for t in 0..steps {
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
                None => Ok(enabled[rng.random_range(0..enabled.len())]),
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
    Run { steps: out, last: exact_of(&state), stopped, start_in_init, choices, precision_bits: None }
}

fn exact_of<T: Scalar>(xs: &[T]) -> Vec<Rational> {
    xs.iter().map(Scalar::to_rational).collect()
}

fn value_json(x: &Rational) -> Value {
    json!(to_f64_nearest(x))
}

impl Run {
    fn to_json(&self, sys: &System) -> Value {
        let named = |names: Vec<String>, vals: &[Rational]| -> Value {
            Value::Object(names.into_iter().zip(vals).map(|(n, v)| (n, value_json(v))).collect())
        };
        // An enclosed run's values are midpoints, not exact values: no exact form is printed.
        let exact = |vals: &[Rational]| -> Value {
            match self.precision_bits {
                Some(_) => Value::Null,
                None => Value::Array(vals.iter().map(|v| json!(display_rational(&v.to_rational()))).collect()),
            }
        };
        let actions = |tr: &Transition<Rational>| -> Value {
            Value::Object(
                sys.actions
                    .iter()
                    .enumerate()
                    .map(|(i, a)| {
                        let q = tr.actions[i].to_rational();
                        let v = match sim::action_label(sys, i, &q) {
                            Some(label) => json!({ "index": to_f64_nearest(&q), "label": label }),
                            None => value_json(&tr.actions[i]),
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

    fn to_table(&self, sys: &System) -> String {
        let mut header = vec!["t".to_string()];
        header.extend(sys.state_names());
        header.extend(sys.nondet_names());
        header.extend(sys.action_names());
        if sys.step.branches.len() > 1 {
            header.push("branch".into());
        }
        let show = |x: &Rational| fmt_f64(to_f64_nearest(&x.to_rational()));
        let mut rows = Vec::new();
        for (t, tr) in self.steps.iter().enumerate() {
            let mut r = vec![t.to_string()];
            r.extend(tr.state.iter().map(show));
            r.extend(tr.nondet.iter().map(show));
            r.extend(
                tr.actions
                    .iter()
                    .enumerate()
                    .map(|(i, v)| sim::action_label(sys, i, &v.to_rational()).unwrap_or_else(|| show(v))),
            );
            if sys.step.branches.len() > 1 {
                r.push(sys.step.branches[tr.branch].name.clone());
            }
            rows.push(r);
        }
        let mut last = vec![self.steps.len().to_string()];
        last.extend(self.last.iter().map(show));
        last.resize(header.len(), String::new());
        rows.push(last);
        let mut out = String::new();
        if !self.start_in_init {
            out.push_str("note: the start state is outside Init\n");
        }
        out.push_str(&table(&header, &rows));
        out
    }
}
