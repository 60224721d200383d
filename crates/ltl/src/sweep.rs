//! Runs never end in these semantics (`path`): a run that stops is an error of the system. The
//! methods speak of the runs that go on (enclosures, unrollings, one-step queries), so where the
//! system's text lets a run stop (`trestle_ir::stops`), a "true" stands only once the states runs
//! reach are expanded exactly and none stops.

use std::collections::HashSet;
use trestle_core::{Budget, Stop};
use trestle_ir::num::display_rational;
use trestle_ir::sim::{Memory, StepsFrom, initial_memory};
use trestle_ir::system::{NondetDomain, System, VarKind};
use trestle_ir::{Env, RBox, Rational, space};

/// What the expansion found.
#[derive(Clone, Debug, PartialEq)]
pub enum Sweep {
    /// Every reached state has a successor, and every successor is a state.
    NoStop,
    /// A reached state where a run stops, and why.
    Stop(String),
    /// The states could not be expanded (not finitely many, too many, inputs over intervals).
    Unswept(String),
    /// The budget ran out first.
    Stopped(Stop),
}

/// Expands the states reachable from the Init boxes in fewer than `depth` steps (`None`: all of
/// them), at most `max_states`, under every input and branch, exactly (`ir::sim`), while
/// `budget` lasts.
pub fn sweep(sys: &System, inits: &[RBox], depth: Option<usize>, max_states: usize, budget: &Budget) -> Sweep {
    let mut inputs: Vec<Vec<Rational>> = vec![Vec::new()];
    for v in &sys.nondet {
        let values = match &v.domain {
            NondetDomain::Set(values) => values.clone(),
            NondetDomain::Interval(lo, hi) if lo == hi => vec![lo.clone()],
            NondetDomain::Interval(..) => {
                return Sweep::Unswept(format!("the input '{}' ranges over an interval", v.name));
            }
        };
        inputs = inputs
            .iter()
            .flat_map(|p| values.iter().map(move |x| p.iter().cloned().chain([x.clone()]).collect()))
            .collect();
    }
    let mut frontier: Vec<(Vec<Rational>, Memory<Rational>)> = Vec::new();
    for b in inits {
        match box_states(sys, b, max_states) {
            Ok(states) => frontier.extend(states.into_iter().map(|s| (s, initial_memory::<Rational>(sys)))),
            Err(why) => return Sweep::Unswept(why),
        }
    }
    let show = |s: &[Rational]| {
        let parts: Vec<String> =
            sys.state.iter().zip(s).map(|(v, x)| format!("{} = {}", v.name, display_rational(x))).collect();
        parts.join(", ")
    };
    let mut seen: HashSet<(Vec<Rational>, Memory<Rational>)> = frontier.iter().cloned().collect();
    let mut step = 0;
    while !frontier.is_empty() && depth.is_none_or(|d| step < d) {
        let mut next = Vec::new();
        for (state, memory) in &frontier {
            if let Err(stop) = budget.check() {
                return Sweep::Stopped(stop);
            }
            let mut steps = match StepsFrom::new(sys, state, memory) {
                Ok(s) => s,
                Err(e) => return Sweep::Stop(format!("at {}: {e}", show(state))),
            };
            let mut any = false;
            for input in &inputs {
                let (succ, after) = match steps.under(input) {
                    Ok(s) => s,
                    Err(e) => return Sweep::Stop(format!("at {}: {e}", show(state))),
                };
                if let Some((b, n, e)) = succ.exits.first() {
                    return Sweep::Stop(format!(
                        "at {}, branch '{}' leads to {} ({e})",
                        show(state),
                        sys.step.branches[*b].name,
                        show(n)
                    ));
                }
                for (_, n) in succ.next {
                    any = true;
                    let key = (n, after.clone());
                    if !seen.contains(&key) {
                        if seen.len() >= max_states {
                            return Sweep::Unswept(format!("more than {max_states} reachable states"));
                        }
                        seen.insert(key.clone());
                        next.push(key);
                    }
                }
            }
            if !any {
                return Sweep::Stop(format!("the state {} has no successor (a deadlock)", show(state)));
            }
        }
        frontier = next;
        step += 1;
    }
    Sweep::NoStop
}

/// The states of Init in the box, when finitely many (at most `max_states`).
fn box_states(sys: &System, b: &RBox, max_states: usize) -> Result<Vec<Vec<Rational>>, String> {
    let mut states: Vec<Vec<Rational>> = vec![Vec::new()];
    for (i, v) in sys.state.iter().enumerate() {
        let (Some(lo), Some(hi)) = (&b.lo[i], &b.hi[i]) else {
            return Err(format!("Init does not bound '{}'", v.name));
        };
        let Some((lo, hi)) = space::legal_range(sys, i, lo, hi) else { return Ok(Vec::new()) };
        let values: Vec<Rational> = if lo == hi {
            vec![lo]
        } else if v.kind == VarKind::Real {
            return Err(format!("'{}' ranges over an interval at the start", v.name));
        } else {
            let n: usize = (&hi - &lo).to_integer().try_into().unwrap_or(usize::MAX);
            if n >= max_states {
                return Err(format!("more than {max_states} initial states"));
            }
            (0..=n).map(|k| &lo + Rational::from_integer(k.into())).collect()
        };
        if states.len().saturating_mul(values.len()) > max_states {
            return Err(format!("more than {max_states} initial states"));
        }
        states = states
            .iter()
            .flat_map(|p| values.iter().map(move |x| p.iter().cloned().chain([x.clone()]).collect()))
            .collect();
    }
    Ok(states.into_iter().filter(|s| sys.init.eval_exact(&Env::new(s, &[], &[])).unwrap_or(false)).collect())
}
