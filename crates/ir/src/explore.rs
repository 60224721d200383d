//! Exact exploration of a system's states: the initial states of Init when they are finitely many,
//! the finite choices of the non-deterministic inputs, the breadth-first [`Search`] (each state
//! once, with a shortest run to it), and the reachability sweep from Init that finds where a run
//! stops. One implementation for every engine that needs them (bounded CTL's and LTL's checks
//! that no run stops, their explicit evaluation, CEGAR's explicit-state baseline, the planning
//! benchmarks' verdicts); the sweep evaluates through [`crate::sim`], the simulator every replay
//! uses, in exact rationals.

use crate::Env;
use crate::RBox;
use crate::num::{Rational, display_rational};
use crate::sim::{Memory, StepsFrom, initial_memory};
use crate::space;
use crate::system::{NondetDomain, System, VarKind};
use std::collections::{HashMap, HashSet};
use std::hash::Hash;

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

/// A breadth-first search's states: each key (a state, or a state with the controllers' memory)
/// once, in the order first reached, with how it was first reached (the parent's index and the
/// branch taken) and its depth. The caller expands the states in order ([`Search::next`]), with
/// whatever each engine needs of a state (its successors under every input, a property checked),
/// and adds what it reaches ([`Search::reach`]); [`Search::path`] is a shortest run to any state.
#[derive(Clone, Debug)]
pub struct Search<K> {
    nodes: Vec<Reached<K>>,
    index: HashMap<K, usize>,
    expanded: usize,
    max_states: usize,
}

/// A state of a [`Search`].
#[derive(Clone, Debug, PartialEq)]
pub struct Reached<K> {
    /// The state (with the memory, where the search keys on it).
    pub key: K,
    /// The parent's index and the branch taken from it; `None` for a start state.
    pub parent: Option<(usize, usize)>,
    /// The length of a shortest run from a start state.
    pub depth: usize,
}

/// A state reached when the [`Search`] already holds its most states: it is not added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooMany(
    /// The most states the search holds.
    pub usize,
);

impl std::fmt::Display for TooMany {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "more than {} reachable states", self.0)
    }
}

impl<K: Hash + Eq + Clone> Search<K> {
    /// A search from `starts` (a key given twice is kept once; starts are not limited), holding
    /// at most `max_states` states.
    pub fn new(starts: impl IntoIterator<Item = K>, max_states: usize) -> Search<K> {
        let mut search = Search { nodes: Vec::new(), index: HashMap::new(), expanded: 0, max_states };
        for key in starts {
            if !search.index.contains_key(&key) {
                search.push(key, None, 0);
            }
        }
        search
    }

    fn push(&mut self, key: K, parent: Option<(usize, usize)>, depth: usize) -> usize {
        let i = self.nodes.len();
        self.index.insert(key.clone(), i);
        self.nodes.push(Reached { key, parent, depth });
        i
    }

    /// The next state to expand, in breadth-first order (depths never decrease).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<usize> {
        (self.expanded < self.nodes.len()).then(|| {
            self.expanded += 1;
            self.expanded - 1
        })
    }

    /// The index of `key`, reached from state `from` by `branch`: a new state unless it was
    /// reached before; [`TooMany`] when it is new and the search is full.
    pub fn reach(&mut self, key: K, from: usize, branch: usize) -> Result<usize, TooMany> {
        if let Some(&i) = self.index.get(&key) {
            return Ok(i);
        }
        if self.nodes.len() >= self.max_states {
            return Err(TooMany(self.max_states));
        }
        let depth = self.nodes[from].depth + 1;
        Ok(self.push(key, Some((from, branch)), depth))
    }

    /// Whether `key` was reached.
    pub fn contains(&self, key: &K) -> bool {
        self.index.contains_key(key)
    }

    /// The states reached so far.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether no state was reached (no start state).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// State `i`, in the order first reached.
    pub fn get(&self, i: usize) -> &Reached<K> {
        &self.nodes[i]
    }

    /// Every state reached, in the order first reached.
    pub fn reached(&self) -> &[Reached<K>] {
        &self.nodes
    }

    /// A shortest run to state `i`: the indices of its states, from a start state to `i`.
    pub fn path(&self, mut i: usize) -> Vec<usize> {
        let mut run = vec![i];
        while let Some((p, _)) = self.nodes[i].parent {
            run.push(p);
            i = p;
        }
        run.reverse();
        run
    }

    /// A shortest run to state `i` as its start and the branches taken.
    pub fn run_to(&self, i: usize) -> (&K, Vec<usize>) {
        let path = self.path(i);
        let branches = path[1..].iter().map(|&k| self.nodes[k].parent.expect("not a start state").1).collect();
        (&self.nodes[path[0]].key, branches)
    }
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
    let starts: Vec<(Vec<Rational>, Memory<Rational>)> = match initial_states(sys, inits, max_states) {
        Ok(states) => states.into_iter().map(|s| (s, initial_memory::<Rational>(sys))).collect(),
        Err(why) => return Sweep::Unswept(why),
    };
    let show = |s: &[Rational]| show_state(sys, s);
    let mut search = Search::new(starts, max_states);
    while let Some(i) = search.next() {
        if depth.is_some_and(|d| search.get(i).depth >= d) {
            break; // breadth first: every later state is as deep
        }
        if let Err(stop) = keep_going() {
            return Sweep::Stopped(stop);
        }
        let (state, memory) = search.get(i).key.clone();
        let mut steps = match StepsFrom::new(sys, &state, &memory) {
            Ok(s) => s,
            Err(e) => return stop_or_unswept(&e, &show(&state)),
        };
        let mut any = false;
        for input in &inputs {
            let (succ, after) = match steps.under(input) {
                Ok(s) => s,
                Err(e) => return stop_or_unswept(&e, &show(&state)),
            };
            if let Some((b, n, e)) = succ.exits.first() {
                return Sweep::Stop(format!(
                    "at {}, branch '{}' leads to {} outside the declared domains ({e})",
                    show(&state),
                    sys.step.branches[*b].name,
                    show(n)
                ));
            }
            for (b, n) in succ.next {
                any = true;
                if let Err(too_many) = search.reach((n, after.clone()), i, b) {
                    return Sweep::Unswept(too_many.to_string());
                }
            }
        }
        if !any {
            return Sweep::Stop(format!("the state {} has no successor (a deadlock)", show(&state)));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A graph on the integers: from k, branch 0 to k + 1 and branch 1 to 2k (below 10).
    fn expand(search: &mut Search<u32>, i: usize) -> Result<(), TooMany> {
        let k = search.get(i).key;
        for (branch, next) in [k + 1, 2 * k].into_iter().enumerate().filter(|(_, n)| *n < 10) {
            search.reach(next, i, branch)?;
        }
        Ok(())
    }

    #[test]
    fn a_search_reaches_each_state_once_breadth_first_with_a_shortest_run() {
        let mut search = Search::new([1, 1, 3], 100);
        assert_eq!(search.len(), 2, "a start given twice is kept once");
        while let Some(i) = search.next() {
            expand(&mut search, i).unwrap();
        }
        let keys: Vec<u32> = search.reached().iter().map(|r| r.key).collect();
        assert_eq!(keys, vec![1, 3, 2, 4, 6, 5, 8, 7, 9]);
        let depths: Vec<usize> = search.reached().iter().map(|r| r.depth).collect();
        assert!(depths.windows(2).all(|w| w[0] <= w[1]), "{depths:?}");
        // 9 is first reached from 8, 8 from 4, and 4 from the start 3 (before 2 is expanded).
        let nine = keys.iter().position(|&k| k == 9).unwrap();
        let path: Vec<u32> = search.path(nine).into_iter().map(|i| search.get(i).key).collect();
        assert_eq!(path, vec![3, 4, 8, 9]);
        let (start, branches) = search.run_to(nine);
        assert_eq!((*start, branches), (3, vec![0, 1, 0]));
    }

    #[test]
    fn a_full_search_refuses_new_states_but_finds_old_ones() {
        let mut search = Search::new([1], 3);
        let i = search.next().unwrap();
        assert_eq!(search.reach(2, i, 0), Ok(1));
        assert_eq!(search.reach(3, i, 1), Ok(2));
        assert_eq!(search.reach(4, i, 0), Err(TooMany(3)));
        assert_eq!(search.reach(2, i, 1), Ok(1), "a state reached before is found, not added");
        assert_eq!(TooMany(3).to_string(), "more than 3 reachable states");
    }
}
