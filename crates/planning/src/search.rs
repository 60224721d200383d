//! The exact explicit-state search that establishes a generated instance's verdict: every start
//! state (the states of `init`, enumerated), then breadth-first every state reachable under the
//! policy, each step executed by [`trestle_ir::sim::successors`] over exact rationals (the network
//! evaluated exactly, argmax ties to the lowest index, successors outside the domains dropped or
//! refused as the system says). The system is unsafe iff some reached state violates `safe`.
//!
//! It knows nothing of the planning domains: it reads a [`System`] (integer state variables with
//! bounded domains, no non-deterministic inputs, feed-forward controllers) and nothing else.

use crate::{PlanningError, Truth};
use num_traits::ToPrimitive;
use std::collections::HashMap;
use trestle_ir::num::rational_from_i64;
use trestle_ir::sim;
use trestle_ir::system::VarKind;
use trestle_ir::{Env, Pred, Rational, System};

/// What the search found.
#[derive(Clone, Debug, PartialEq)]
pub struct Exploration {
    pub verdict: Truth,
    /// The start states searched from.
    pub starts: usize,
    /// Every state reachable under the policy (start states included), in breadth-first order.
    pub reachable: Vec<Reached>,
    /// A shortest run from a start state to a state violating `safe` (states, first to last).
    pub counterexample: Option<Vec<Vec<Rational>>>,
}

/// One state reachable under the policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Reached {
    pub state: Vec<Rational>,
    /// The length of a shortest run from a start state.
    pub depth: usize,
    /// The controllers' actions there (argmax actions: the label's index).
    pub actions: Vec<Rational>,
    /// Its successors (indices into [`Exploration::reachable`]), in the order of the branches.
    pub next: Vec<usize>,
}

fn input(msg: impl Into<String>) -> PlanningError {
    PlanningError::Input(msg.into())
}

/// The integer range `[lo, hi]` of state variable `i` within `lo..hi` (rational ends, `None` =
/// unbounded) and its domain, or an error when it is unbounded.
fn int_range(
    sys: &System,
    i: usize,
    lo: Option<&Rational>,
    hi: Option<&Rational>,
) -> Result<(i64, i64), PlanningError> {
    let v = &sys.state[i];
    if v.kind == VarKind::Real {
        return Err(input(format!(
            "explicit search: '{}' is a real variable; only int and bool states are enumerated",
            v.name
        )));
    }
    let pick = |a: Option<&Rational>, b: Option<&Rational>, max: bool| match (a, b) {
        (Some(x), Some(y)) => Some(if (x > y) == max { x.clone() } else { y.clone() }),
        (Some(x), None) | (None, Some(x)) => Some(x.clone()),
        (None, None) => None,
    };
    let (kind_lo, kind_hi) = match v.kind {
        VarKind::Bool => (Some(rational_from_i64(0)), Some(rational_from_i64(1))),
        _ => (None, None),
    };
    let lo = pick(pick(lo, v.domain.lo.as_ref(), true).as_ref(), kind_lo.as_ref(), true);
    let hi = pick(pick(hi, v.domain.hi.as_ref(), false).as_ref(), kind_hi.as_ref(), false);
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return Err(input(format!("explicit search: '{}' has no bounded domain", v.name)));
    };
    let as_i64 = |q: Rational| {
        q.to_integer().to_i64().ok_or_else(|| input(format!("explicit search: '{}' is out of range", v.name)))
    };
    Ok((as_i64(lo.ceil())?, as_i64(hi.floor())?))
}

/// The states of `init`: the integer points of the boxes `init` is a union of (or of the domains'
/// box when it is no such union) that satisfy it, at most `limit` points enumerated, first
/// occurrences in enumeration order.
pub fn initial_states(sys: &System, limit: usize) -> Result<Vec<Vec<Rational>>, PlanningError> {
    let dims = sys.state.len();
    let boxes = sys.init.to_box_union(dims, limit).unwrap_or_else(|| vec![trestle_ir::RBox::unbounded(dims)]);
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut enumerated = 0usize;
    for b in &boxes {
        let ranges =
            (0..dims).map(|i| int_range(sys, i, b.lo[i].as_ref(), b.hi[i].as_ref())).collect::<Result<Vec<_>, _>>()?;
        if ranges.iter().any(|&(lo, hi)| lo > hi) {
            continue;
        }
        let count = ranges.iter().try_fold(1usize, |acc, &(lo, hi)| acc.checked_mul((hi - lo + 1) as usize));
        enumerated = count
            .and_then(|c| c.checked_add(enumerated))
            .filter(|&c| c <= limit)
            .ok_or_else(|| input(format!("explicit search: init covers more than {limit} candidate states")))?;
        let mut point: Vec<i64> = ranges.iter().map(|r| r.0).collect();
        'points: loop {
            let state: Vec<Rational> = point.iter().map(|&x| rational_from_i64(x)).collect();
            if sim::check_state(sys, &state).is_ok() && holds(&sys.init, &state)? && seen.insert(state.clone()) {
                out.push(state);
            }
            // The next point of the box (an odometer, the last variable fastest).
            let mut k = dims;
            loop {
                if k == 0 {
                    break 'points;
                }
                k -= 1;
                if point[k] < ranges[k].1 {
                    point[k] += 1;
                    continue 'points;
                }
                point[k] = ranges[k].0;
            }
        }
    }
    Ok(out)
}

fn holds(p: &Pred, state: &[Rational]) -> Result<bool, PlanningError> {
    p.eval_exact(&Env::new(state, &[], &[])).map_err(|e| input(format!("explicit search: {e}")))
}

/// Breadth-first search under the policy from `starts` (at most `limit` states): the verdict, the
/// reachable states and a shortest counterexample. The system needs `safe`, no non-deterministic
/// inputs and no recurrent controller.
pub fn explore(sys: &System, starts: &[Vec<Rational>], limit: usize) -> Result<Exploration, PlanningError> {
    let safe = sys.safe.as_ref().ok_or_else(|| input("explicit search: the system has no `safe` condition"))?;
    if !sys.nondet.is_empty() {
        return Err(input("explicit search: non-deterministic inputs are not enumerated"));
    }
    if sys.networks.iter().any(|n| n.network.is_recurrent()) {
        return Err(input("explicit search: recurrent controllers carry memory; only feed-forward ones are searched"));
    }
    let mut index: HashMap<Vec<Rational>, usize> = HashMap::new();
    let mut reachable: Vec<Reached> = Vec::new();
    let mut parent: Vec<Option<usize>> = Vec::new();
    for s in starts {
        sim::check_state(sys, s).map_err(|e| input(format!("explicit search: a start state: {e}")))?;
        if !index.contains_key(s) {
            index.insert(s.clone(), reachable.len());
            reachable.push(Reached { state: s.clone(), depth: 0, actions: Vec::new(), next: Vec::new() });
            parent.push(None);
        }
    }
    let mut first_unsafe = None;
    let mut memory = sim::initial_memory::<Rational>(sys);
    let mut i = 0;
    while i < reachable.len() {
        let (state, depth) = (reachable[i].state.clone(), reachable[i].depth);
        if first_unsafe.is_none() && !holds(safe, &state)? {
            first_unsafe = Some(i);
        }
        let succ = sim::successors(sys, &state, &mut memory, &[])
            .map_err(|e| PlanningError::Internal(format!("explicit search: {e}")))?;
        if let Some((_, next, e)) = succ.exits.first() {
            let show: Vec<String> = next.iter().map(trestle_ir::num::display_rational).collect();
            return Err(input(format!("explicit search: a run ends in an error at ({}): {e}", show.join(", "))));
        }
        let mut targets = Vec::with_capacity(succ.next.len());
        for (_, next) in succ.next {
            let k = match index.get(&next) {
                Some(&k) => k,
                None => {
                    if reachable.len() >= limit {
                        return Err(input(format!(
                            "explicit search: more than {limit} states reachable under the policy"
                        )));
                    }
                    index.insert(next.clone(), reachable.len());
                    reachable.push(Reached { state: next, depth: depth + 1, actions: Vec::new(), next: Vec::new() });
                    parent.push(Some(i));
                    reachable.len() - 1
                }
            };
            targets.push(k);
        }
        reachable[i].actions = succ.actions;
        reachable[i].next = targets;
        i += 1;
    }
    let counterexample = first_unsafe.map(|mut k| {
        let mut run = vec![reachable[k].state.clone()];
        while let Some(p) = parent[k] {
            run.push(reachable[p].state.clone());
            k = p;
        }
        run.reverse();
        run
    });
    let verdict = if counterexample.is_some() { Truth::Unsafe } else { Truth::Safe };
    Ok(Exploration { verdict, starts: starts.len(), reachable, counterexample })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// A counter x in [0, 5] with labels [inc, dec]; the inline network scores [5/2 - x, x], so
    /// inc wins (ties to inc) exactly for x <= 5/4: x in {0, 1} increments, x >= 2 decrements.
    /// `inc` at x = 5 would leave the domain (dropped).
    fn counter(init: &str, safe: &str) -> System {
        let text = format!(
            r#"
init = "{init}"
safe = "{safe}"

[system]
name = "counter"
on_domain_exit = "drop"

[state]
x = {{ type = "int", domain = [0, 5] }}

[networks.pi]
layers = [
  {{ weights = [[1.0]], bias = [0.0], activation = "relu" }},
  {{ weights = [[-1.0], [1.0]], bias = [2.5, 0.0], activation = "identity" }},
]

[controller]
network = "pi"
inputs = ["x"]
argmax = "a"
labels = ["inc", "dec"]

[[command]]
label = "inc"
update = {{ x = "x + 1" }}

[[command]]
label = "dec"
guard = "x >= 1"
update = {{ x = "x - 1" }}
"#
        );
        trestle_config::load_system_from_str(&text, Path::new("counter.toml"), &Default::default()).unwrap()
    }

    fn ints(states: &[Reached]) -> Vec<(i64, usize)> {
        states.iter().map(|r| (r.state[0].to_integer().to_i64().unwrap(), r.depth)).collect()
    }

    #[test]
    fn a_policy_that_stays_low_is_safe() {
        // From 0: 0 -> 1 -> 2 -> 1 -> ...; from 4: 4 -> 3 -> 2. Never above 4, and 5 only by inc
        // at 4, which the policy does not pick.
        let sys = counter("x == 0 or x == 4", "x <= 4");
        let starts = initial_states(&sys, 100).unwrap();
        assert_eq!(starts, vec![vec![rational_from_i64(0)], vec![rational_from_i64(4)]]);
        let e = explore(&sys, &starts, 100).unwrap();
        assert_eq!(e.verdict, Truth::Safe);
        assert_eq!(ints(&e.reachable), vec![(0, 0), (4, 0), (1, 1), (3, 1), (2, 2)]);
        assert_eq!(e.counterexample, None);
    }

    #[test]
    fn a_reachable_violation_is_unsafe_with_a_shortest_run() {
        let sys = counter("0 <= x <= 1", "not (x >= 2)");
        let starts = initial_states(&sys, 100).unwrap();
        assert_eq!(starts.len(), 2);
        let e = explore(&sys, &starts, 100).unwrap();
        assert_eq!(e.verdict, Truth::Unsafe);
        let run: Vec<i64> = e.counterexample.unwrap().iter().map(|s| s[0].to_integer().to_i64().unwrap()).collect();
        assert_eq!(run, vec![1, 2]);
        assert_eq!(e.reachable.len(), 3);
    }

    #[test]
    fn a_start_state_may_itself_be_unsafe_and_limits_are_errors() {
        let sys = counter("x == 5", "x <= 4");
        let starts = initial_states(&sys, 100).unwrap();
        let e = explore(&sys, &starts, 100).unwrap();
        assert_eq!(e.verdict, Truth::Unsafe);
        assert_eq!(e.counterexample.unwrap().len(), 1);
        // 5 -> 4 -> 3 -> 2 -> 1 -> 2: five states.
        assert_eq!(e.reachable.len(), 5);
        assert!(matches!(explore(&sys, &starts, 3), Err(PlanningError::Input(_))));
        // A predicate that is no union of boxes is enumerated over the domains.
        let sys = counter("x == 1 or not (x <= 3 and x >= 2)", "true");
        let starts = initial_states(&sys, 100).unwrap();
        let xs: Vec<i64> = starts.iter().map(|s| s[0].to_integer().to_i64().unwrap()).collect();
        assert_eq!(xs, vec![0, 1, 4, 5]);
        assert!(initial_states(&sys, 2).is_err());
    }
}
