//! Exact exploration of a system's states: the initial states of Init when they are finitely many,
//! the finite choices of the non-deterministic inputs, and the reachability sweep from Init that
//! finds where a run stops. One implementation for every engine that needs them (bounded CTL's
//! and LTL's checks that no run stops, their explicit evaluation); the sweep evaluates through
//! [`crate::sim`], the simulator every replay uses, in exact rationals.

use crate::Env;
use crate::RBox;
use crate::num::{Rational, display_rational};
use crate::sim::{Memory, StepsFrom, initial_memory};
use crate::space;
use crate::system::{NondetDomain, System, VarKind};
use std::collections::HashSet;

/// Every combination of one value per axis, in order (the last axis fastest), or `None` when there
/// would be more than `limit`.
pub fn product(axes: &[Vec<Rational>], limit: usize) -> Option<Vec<Vec<Rational>>> {
    if axes.iter().try_fold(1usize, |n, a| n.checked_mul(a.len()))? > limit {
        return None;
    }
    let mut out: Vec<Vec<Rational>> = vec![Vec::new()];
    for axis in axes {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                axis.iter().map(move |x| {
                    let mut v = prefix.clone();
                    v.push(x.clone());
                    v
                })
            })
            .collect();
    }
    Some(out)
}

/// The states of Init inside the boxes (each bounded on every variable), when they are finitely
/// many: integer and boolean variables over their legal range within the box, real variables only
/// at a single value. First occurrences in order, at most `limit` candidates enumerated in all;
/// otherwise why not (a real variable over an interval, an unbounded side, too many states).
pub fn initial_states(sys: &System, boxes: &[RBox], limit: usize) -> Result<Vec<Vec<Rational>>, String> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut enumerated = 0usize;
    for b in boxes {
        let mut axes = Vec::with_capacity(sys.state.len());
        for (i, v) in sys.state.iter().enumerate() {
            let (Some(lo), Some(hi)) = (&b.lo[i], &b.hi[i]) else {
                return Err(format!("Init does not bound '{}'", v.name));
            };
            let Some((lo, hi)) = space::legal_range(sys, i, lo, hi) else {
                axes.clear();
                break;
            };
            if lo == hi {
                axes.push(vec![lo]);
            } else if v.kind == VarKind::Real {
                return Err(format!("'{}' ranges over an interval at the start", v.name));
            } else {
                let n: usize = (&hi - &lo).to_integer().try_into().unwrap_or(usize::MAX);
                if n >= limit {
                    return Err(format!("more than {limit} initial states"));
                }
                axes.push((0..=n).map(|k| &lo + Rational::from_integer(k.into())).collect());
            }
        }
        if axes.len() < sys.state.len() {
            continue; // the box holds no legal state
        }
        let states =
            product(&axes, limit.saturating_sub(enumerated)).ok_or(format!("more than {limit} initial states"))?;
        enumerated += states.len();
        for s in states {
            if sys.init.eval_exact(&Env::new(&s, &[], &[])).unwrap_or(false) && seen.insert(s.clone()) {
                out.push(s);
            }
        }
    }
    Ok(out)
}

/// Every combination of the non-deterministic inputs' values (in `System::nondet` order), when
/// each takes finitely many (a set, or an interval of one point); otherwise why not.
pub fn input_choices(sys: &System, limit: usize) -> Result<Vec<Vec<Rational>>, String> {
    let mut axes = Vec::with_capacity(sys.nondet.len());
    for v in &sys.nondet {
        axes.push(match &v.domain {
            NondetDomain::Set(values) => values.clone(),
            NondetDomain::Interval(lo, hi) if lo == hi => vec![lo.clone()],
            NondetDomain::Interval(..) => return Err(format!("the input '{}' ranges over an interval", v.name)),
        });
    }
    product(&axes, limit).ok_or(format!("more than {limit} combinations of the inputs"))
}

/// What the sweep found.
#[derive(Clone, Debug, PartialEq)]
pub enum Sweep<S> {
    /// Every reached state has a successor, and every successor is a state.
    NoStop,
    /// A reached state where a run stops, and why (the state, the branch, the reason).
    Stop(String),
    /// The states could not be expanded (not finitely many, too many, inputs over intervals).
    Unswept(String),
    /// `keep_going` said stop first.
    Stopped(S),
}

/// The state as `x = 1, y = 1/2`.
pub fn show_state(sys: &System, s: &[Rational]) -> String {
    let parts: Vec<String> =
        sys.state.iter().zip(s).map(|(v, x)| format!("{} = {}", v.name, display_rational(x))).collect();
    parts.join(", ")
}

/// Expands the states reachable from the Init boxes in fewer than `depth` steps (`None`: all of
/// them), at most `max_states` (state and hidden state pairs), under every input and enabled
/// branch, exactly; `keep_going` is asked before each state is expanded (a deadline).
pub fn sweep<S>(
    sys: &System,
    inits: &[RBox],
    depth: Option<usize>,
    max_states: usize,
    mut keep_going: impl FnMut() -> Result<(), S>,
) -> Sweep<S> {
    let inputs = match input_choices(sys, max_states) {
        Ok(inputs) => inputs,
        Err(why) => return Sweep::Unswept(why),
    };
    let mut frontier: Vec<(Vec<Rational>, Memory<Rational>)> = match initial_states(sys, inits, max_states) {
        Ok(states) => states.into_iter().map(|s| (s, initial_memory::<Rational>(sys))).collect(),
        Err(why) => return Sweep::Unswept(why),
    };
    let show = |s: &[Rational]| show_state(sys, s);
    let mut seen: HashSet<(Vec<Rational>, Memory<Rational>)> = frontier.iter().cloned().collect();
    let mut step = 0;
    while !frontier.is_empty() && depth.is_none_or(|d| step < d) {
        let mut next = Vec::new();
        for (state, memory) in &frontier {
            if let Err(stop) = keep_going() {
                return Sweep::Stopped(stop);
            }
            let mut steps = match StepsFrom::new(sys, state, memory) {
                Ok(s) => s,
                Err(e) => return stop_or_unswept(&e, &show(state)),
            };
            let mut any = false;
            for input in &inputs {
                let (succ, after) = match steps.under(input) {
                    Ok(s) => s,
                    Err(e) => return stop_or_unswept(&e, &show(state)),
                };
                if let Some((b, n, e)) = succ.exits.first() {
                    return Sweep::Stop(format!(
                        "at {}, branch '{}' leads to {} outside the declared domains ({e})",
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

/// A step that fails at `state`: a stop of the run, except a value with no rational form
/// (`sqrt(2)`, a tanh layer), which exact arithmetic cannot follow: the sweep ends unswept there
/// rather than calling a run that goes on a stop.
fn stop_or_unswept<S>(e: &crate::sim::SimError, state: &str) -> Sweep<S> {
    if e.is_irrational() {
        Sweep::Unswept(format!("at {state}: {e}; the exact sweep follows rational values only"))
    } else {
        Sweep::Stop(format!("at {state}: {e}"))
    }
}
