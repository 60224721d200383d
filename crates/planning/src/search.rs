//! The exact explicit-state search that establishes a generated instance's verdict: every start
//! state (the states of `init`, enumerated), then breadth-first every state reachable under the
//! policy (`trestle_ir::explore`), each step executed by [`trestle_ir::sim::successors`] over exact rationals (the network
//! evaluated exactly, argmax ties to the lowest index, successors outside the domains dropped or
//! refused as the system says). The system is unsafe iff some reached state violates `safe`.
//!
//! It knows nothing of the planning domains: it reads a [`System`] (integer state variables with
//! bounded domains, no non-deterministic inputs, feed-forward controllers) and nothing else.

use crate::{PlanningError, Truth};
use trestle_ir::explore::{self, Search, TooMany};
use trestle_ir::sim;
use trestle_ir::{Env, Pred, RBox, Rational, System};

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

/// The states of `init`: the legal points of the boxes `init` is a union of (or of the domains'
/// box when it is no such union) that satisfy it, at most `limit` candidates enumerated, first
/// occurrences in enumeration order (`trestle_ir::explore::initial_states` on the boxes met with
/// the domains).
pub fn initial_states(sys: &System, limit: usize) -> Result<Vec<Vec<Rational>>, PlanningError> {
    let dims = sys.state.len();
    let domains = RBox {
        lo: sys.state.iter().map(|v| v.domain.lo.clone()).collect(),
        hi: sys.state.iter().map(|v| v.domain.hi.clone()).collect(),
    };
    let boxes = sys.init.to_box_union(dims, limit).unwrap_or_else(|| vec![RBox::unbounded(dims)]);
    let boxes: Vec<RBox> = boxes.iter().filter_map(|b| b.intersect(&domains)).collect();
    explore::initial_states(sys, &boxes, limit).map_err(|why| input(format!("explicit search: {why}")))
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
    for s in starts {
        sim::check_state(sys, s).map_err(|e| input(format!("explicit search: a start state: {e}")))?;
    }
    let mut search = Search::new(starts.iter().cloned(), limit);
    let mut reachable: Vec<Reached> = Vec::new();
    let mut first_unsafe = None;
    let mut memory = sim::initial_memory::<Rational>(sys);
    while let Some(i) = search.next() {
        let state = search.get(i).key.clone();
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
        for (branch, next) in succ.next {
            let k = search.reach(next, i, branch).map_err(|TooMany(limit)| {
                input(format!("explicit search: more than {limit} states reachable under the policy"))
            })?;
            targets.push(k);
        }
        let depth = search.get(i).depth;
        reachable.push(Reached { state, depth, actions: succ.actions, next: targets });
    }
    let counterexample =
        first_unsafe.map(|k| search.path(k).into_iter().map(|p| search.get(p).key.clone()).collect::<Vec<_>>());
    let verdict = if counterexample.is_some() { Truth::Unsafe } else { Truth::Safe };
    Ok(Exploration { verdict, starts: starts.len(), reachable, counterexample })
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_traits::ToPrimitive;
    use std::path::Path;
    use trestle_ir::num::rational_from_i64;

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
