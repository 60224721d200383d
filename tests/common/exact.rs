//! Checks of printed witnesses and runs in exact rational arithmetic, through the IR's own step
//! (`trestle_ir::sim`), independently of the engine that found them.

use serde_json::Value;
use trestle_ir::expr::{Env, VarRef};
use trestle_ir::num::{display_rational, is_integer, parse_rational, rational_from_i64};
use trestle_ir::parse::{SimpleScope, Symbol, parse_pred};
use trestle_ir::sim;
use trestle_ir::system::{DomainExit, VarKind};
use trestle_ir::{Pred, Rational, System};

pub type Check = Result<(), String>;

/// Exact values from a JSON array of decimal or fraction strings.
pub fn rationals(v: &Value, what: &str) -> Result<Vec<Rational>, String> {
    let items = v.as_array().ok_or_else(|| format!("{what}: not an array: {v}"))?;
    items
        .iter()
        .map(|x| {
            let t = x.as_str().ok_or_else(|| format!("{what}: {x} is not a string"))?;
            parse_rational(t).ok_or_else(|| format!("{what}: '{t}' is not an exact number"))
        })
        .collect()
}

pub fn show(xs: &[Rational]) -> String {
    format!("[{}]", xs.iter().map(display_rational).collect::<Vec<_>>().join(", "))
}

/// The state has the system's dimensions, every int is an integer, every bool 0 or 1, and every
/// value is inside its declared domain (unless the system declares domains as hints only,
/// `on_domain_exit = "ignore"`).
pub fn state_in_domains(sys: &System, state: &[Rational]) -> Check {
    if state.len() != sys.state.len() {
        return Err(format!("{} values for {} state variables", state.len(), sys.state.len()));
    }
    for (v, x) in sys.state.iter().zip(state) {
        let kind_ok = match v.kind {
            VarKind::Real => true,
            VarKind::Int => is_integer(x),
            VarKind::Bool => *x == rational_from_i64(0) || *x == rational_from_i64(1),
        };
        if !kind_ok {
            return Err(format!(
                "state {}: {} = {} is not a {}",
                show(state),
                v.name,
                display_rational(x),
                v.kind.name()
            ));
        }
    }
    match sim::domain_violation(sys, state) {
        Some(e) if sys.domain_exit != DomainExit::Ignore => {
            Err(format!("state {} is outside a declared domain: {e}", show(state)))
        }
        _ => Ok(()),
    }
}

/// Whether a state predicate holds at `state` (exactly).
pub fn holds(p: &Pred, state: &[Rational]) -> Result<bool, String> {
    p.eval_exact(&Env::new(state, &[], &[])).map_err(|e| format!("evaluating a region: {e}"))
}

fn region<'a>(p: &'a Option<Pred>, what: &str) -> Result<&'a Pred, String> {
    p.as_ref().ok_or_else(|| format!("the system has no {what}"))
}

/// A predicate over the state, non-deterministic input and action names of `sys`.
pub fn parse_witness_pred(sys: &System, text: &str) -> Result<Pred, String> {
    let mut scope = SimpleScope::default();
    for (i, v) in sys.state.iter().enumerate() {
        scope.add(&v.name, Symbol::Var(VarRef::State(i)));
    }
    for (i, v) in sys.nondet.iter().enumerate() {
        scope.add(&v.name, Symbol::Var(VarRef::Nondet(i)));
    }
    for (i, v) in sys.actions.iter().enumerate() {
        scope.add(&v.name, Symbol::Var(VarRef::Action(i)));
    }
    parse_pred(text, &scope).map_err(|e| format!("witness predicate '{text}': {e}"))
}

/// A step witness as printed (`counterexample` of `check --json`), exactly.
pub struct StepWitness {
    pub state: Vec<Rational>,
    pub actions: Vec<Rational>,
    pub nondet: Vec<Rational>,
    pub next: Vec<Rational>,
    pub branch: String,
}

impl StepWitness {
    pub fn from_json(w: &Value) -> Result<StepWitness, String> {
        Ok(StepWitness {
            state: rationals(&w["state_exact"], "state_exact")?,
            actions: rationals(&w["action_exact"], "action_exact")?,
            nondet: rationals(&w["nondet_exact"], "nondet_exact")?,
            next: rationals(&w["next_exact"], "next_exact")?,
            branch: w["branch"].as_str().ok_or("no branch name")?.to_string(),
        })
    }
}

fn branch_index(sys: &System, name: &str) -> Result<usize, String> {
    sys.step.branches.iter().position(|b| b.name == name).ok_or_else(|| format!("no branch named '{name}'"))
}

/// Replays one step exactly: the actions the controllers really take at `state`, the branch
/// enabled, the successor inside every kind and domain (per the system's domain-exit rule).
pub fn replay(
    sys: &System,
    state: &[Rational],
    nondet: &[Rational],
    branch: usize,
) -> Result<sim::Transition<Rational>, String> {
    let mut memory = sim::initial_memory::<Rational>(sys);
    sim::step(sys, state, &mut memory, nondet, branch).map_err(|e| format!("exact replay of {}: {e}", show(state)))
}

/// A counterexample to inductiveness is real: the state is a state of the system inside the
/// invariant, the printed actions and successor are the exact step's, the successor is outside
/// the invariant, and the truth's witness predicate holds.
pub fn check_step_witness(sys: &System, w: &StepWitness, truth: Option<&Pred>) -> Check {
    let inv = region(&sys.invariant, "invariant")?;
    state_in_domains(sys, &w.state)?;
    if !holds(inv, &w.state)? {
        return Err(format!("the witness state {} is outside the invariant", show(&w.state)));
    }
    let t = replay(sys, &w.state, &w.nondet, branch_index(sys, &w.branch)?)?;
    if t.actions != w.actions {
        return Err(format!(
            "printed actions {} differ from the network's exact actions {} at {}",
            show(&w.actions),
            show(&t.actions),
            show(&w.state)
        ));
    }
    if t.next != w.next {
        return Err(format!("printed successor {} differs from the exact step's {}", show(&w.next), show(&t.next)));
    }
    if holds(inv, &t.next)? {
        return Err(format!("the successor {} is inside the invariant", show(&t.next)));
    }
    if let Some(p) = truth {
        let ok = p
            .eval_exact(&Env::new(&w.state, &w.actions, &w.nondet))
            .map_err(|e| format!("evaluating the witness predicate: {e}"))?;
        if !ok {
            return Err(format!(
                "the witness (state {}, nondet {}, actions {}) contradicts the planted truth",
                show(&w.state),
                show(&w.nondet),
                show(&w.actions)
            ));
        }
    }
    Ok(())
}

/// A witness of a failed side condition: a state of the system in `premise` and not in
/// `conclusion`.
pub fn check_side_witness(sys: &System, state: &[Rational], premise: &Pred, conclusion: &Pred) -> Check {
    state_in_domains(sys, state)?;
    if !holds(premise, state)? {
        return Err(format!("the witness state {} violates the premise", show(state)));
    }
    if holds(conclusion, state)? {
        return Err(format!("the witness state {} satisfies the conclusion", show(state)));
    }
    Ok(())
}

/// The witness of the side condition `check` reports as failing (`init_implies_inv` or
/// `inv_implies_safe`); returns which one failed.
pub fn check_side_conditions(sys: &System, j: &Value) -> Result<&'static str, String> {
    let init = &j["details"]["conditions"]["init_implies_inv"];
    let safe = &j["details"]["conditions"]["inv_implies_safe"];
    let inv = region(&sys.invariant, "invariant")?;
    if init["result"] == "fails" {
        let state = rationals(&init["witness"]["state_exact"], "init witness")?;
        check_side_witness(sys, &state, &sys.init, inv)?;
        return Ok("init_implies_inv");
    }
    if safe["result"] == "fails" {
        let state = rationals(&safe["witness"]["state_exact"], "safe witness")?;
        check_side_witness(sys, &state, inv, region(&sys.safe, "safe region")?)?;
        return Ok("inv_implies_safe");
    }
    Err("verdict unsafe-candidate without a failing side condition".into())
}

/// A run printed by `synth` (`trajectory`) is real: it starts in Init, every step is the exact
/// step with the printed inputs and branch, every state is a state of the system, and the last
/// state is outside Safe.
pub fn check_run(sys: &System, t: &Value) -> Check {
    let states = t["states_exact"].as_array().ok_or("no states_exact")?;
    let actions = t["actions_exact"].as_array().ok_or("no actions_exact")?;
    let nondet = t["nondet_exact"].as_array().ok_or("no nondet_exact")?;
    let branches = t["branches"].as_array().ok_or("no branches")?;
    let states = states.iter().map(|s| rationals(s, "states_exact")).collect::<Result<Vec<_>, _>>()?;
    let first = states.first().ok_or("an empty run")?;
    state_in_domains(sys, first)?;
    if !holds(&sys.init, first)? {
        return Err(format!("the run starts at {}, outside Init", show(first)));
    }
    let steps = states.len() - 1;
    if actions.len() != steps || nondet.len() != steps || branches.len() != steps {
        return Err(format!(
            "{steps} steps but {} actions, {} inputs, {} branches",
            actions.len(),
            nondet.len(),
            branches.len()
        ));
    }
    let mut memory = sim::initial_memory::<Rational>(sys);
    for k in 0..steps {
        let inputs = rationals(&nondet[k], "nondet_exact")?;
        let branch = branch_index(sys, branches[k].as_str().ok_or("a branch is not a name")?)?;
        let t = sim::step(sys, &states[k], &mut memory, &inputs, branch)
            .map_err(|e| format!("step {k} from {} does not replay: {e}", show(&states[k])))?;
        if t.actions != rationals(&actions[k], "actions_exact")? {
            return Err(format!("step {k}: printed actions differ from the exact ones {}", show(&t.actions)));
        }
        if t.next != states[k + 1] {
            return Err(format!(
                "step {k}: printed state {} is not the exact successor {}",
                show(&states[k + 1]),
                show(&t.next)
            ));
        }
        state_in_domains(sys, &t.next)?;
    }
    let last = states.last().expect("non-empty");
    if holds(region(&sys.safe, "safe region")?, last)? {
        return Err(format!("the run ends at {}, inside Safe", show(last)));
    }
    Ok(())
}
