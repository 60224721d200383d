//! The exact side of bounded CTL: the environment's choices at a state, and an evaluator of a
//! normal-form formula in rational arithmetic through `ir::sim` (networks exact, argmax by the
//! lowest index). It is the explicit engine, and the gate every MILP counterexample passes: an
//! initial state is a counterexample only when this evaluator says so, and its traces are built
//! by [`Trace::simulate`] and replayed.

use crate::error::CtlError;
use crate::normal::{Node, NodeId, Normal};
use std::collections::HashMap;
use std::rc::Rc;
use trestle_core::{Budget, Trace};
use trestle_ir::Rational;
use trestle_ir::expr::Env;
use trestle_ir::num::{display_rational, to_f64_nearest};
use trestle_ir::sim::{Memory, StepsFrom};
use trestle_ir::system::{NondetDomain, System};

/// One way the environment can move: values of the non-deterministic inputs and a branch.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    pub nondet: Vec<Rational>,
    pub branch: usize,
}

/// Most choices per state the engines enumerate.
pub const MAX_CHOICES: usize = 4096;

/// Every choice of the environment: the product of the (finite) input domains and the branches.
/// A branch that repeats an earlier one (same guard, label and updates) is the same successor and
/// is counted once. Interval inputs are refused: `AX` over a continuum is not a finite product.
pub fn choices(sys: &System) -> Result<Vec<Choice>, CtlError> {
    let mut axes = Vec::with_capacity(sys.nondet.len());
    for v in &sys.nondet {
        let values: Vec<Rational> = match &v.domain {
            NondetDomain::Set(values) => {
                let mut vs = values.clone();
                vs.sort();
                vs.dedup();
                vs
            }
            NondetDomain::Interval(lo, hi) if lo == hi => vec![lo.clone()],
            NondetDomain::Interval(..) => {
                return Err(CtlError::Unsupported(format!(
                    "the non-deterministic input '{}' ranges over an interval; bounded CTL enumerates the \
                     environment's choices, so give it a finite set of values",
                    v.name
                )));
            }
        };
        axes.push(values);
    }
    let branches = &sys.step.branches;
    let distinct: Vec<usize> = (0..branches.len())
        .filter(|&b| {
            !(0..b).any(|a| {
                branches[a].guard == branches[b].guard
                    && branches[a].label == branches[b].label
                    && branches[a].updates == branches[b].updates
            })
        })
        .collect();
    let Some(combos) = product(&axes, MAX_CHOICES / distinct.len().max(1)) else {
        return Err(CtlError::Unsupported(format!(
            "the environment has more than {MAX_CHOICES} choices per state (inputs x branches)"
        )));
    };
    Ok(combos
        .into_iter()
        .flat_map(|nondet| distinct.iter().map(move |&branch| Choice { nondet: nondet.clone(), branch }))
        .collect())
}

pub(crate) use trestle_ir::explore::product;

/// One successor of a state: which choice, the successor and the memory after the step.
#[derive(Clone, Debug)]
pub(crate) struct Move {
    choice: usize,
    pub(crate) next: Vec<Rational>,
    pub(crate) memory: Memory<Rational>,
}

pub(crate) type Key = (Vec<Rational>, Memory<Rational>);

/// What a frame of [`Exact::holds`] waits for: its children at the same state, or its child at
/// each successor (in the order `EX` tries them).
enum Items {
    Children(Vec<NodeId>),
    Moves { child: NodeId, moves: Rc<Vec<Move>>, order: Vec<usize> },
}

/// A node being evaluated at a state: the value of the first child equal to `short` is its
/// value; when none is, the other one.
struct Frame {
    node: NodeId,
    key: Key,
    depth: usize,
    items: Items,
    next: usize,
    short: bool,
}

/// States expanded between two checks of the budget.
const CHECK_EVERY: usize = 256;

/// The exact evaluator: memoised over (node, state, hidden state).
pub struct Exact<'a> {
    sys: &'a System,
    normal: &'a Normal,
    choices: &'a [Choice],
    moves: HashMap<Key, Rc<Vec<Move>>>,
    memo: HashMap<(NodeId, Key), bool>,
    /// Largest number of distinct states whose successors may be computed.
    pub max_expanded: usize,
    /// The run's budget, checked every few expansions ([`CtlError::Stopped`]).
    pub budget: Budget,
    /// States whose successors were computed.
    pub expanded: usize,
    /// Solver states by depth (step count from the root): `EX` tries the successor nearest to
    /// one of them first, so a MILP's path is replayed before anything else is searched.
    pub hints: Vec<Vec<Vec<f64>>>,
}

impl<'a> Exact<'a> {
    pub fn new(sys: &'a System, normal: &'a Normal, choices: &'a [Choice]) -> Exact<'a> {
        Exact {
            sys,
            normal,
            choices,
            moves: HashMap::new(),
            memo: HashMap::new(),
            max_expanded: usize::MAX,
            budget: Budget::unlimited(),
            expanded: 0,
            hints: Vec::new(),
        }
    }

    /// The successors of a state, in the order `EX` tries them at `depth`.
    pub(crate) fn moves(&mut self, state: &[Rational], memory: &Memory<Rational>) -> Result<Rc<Vec<Move>>, CtlError> {
        let key = (state.to_vec(), memory.clone());
        if let Some(m) = self.moves.get(&key) {
            return Ok(m.clone());
        }
        if self.expanded >= self.max_expanded {
            return Err(CtlError::Limit(format!("more than {} states to expand exactly", self.max_expanded)));
        }
        if self.expanded.is_multiple_of(CHECK_EVERY) {
            self.budget.check()?;
        }
        self.expanded += 1;
        let show = |s: &[Rational]| {
            let parts: Vec<String> =
                self.sys.state.iter().zip(s).map(|(v, x)| format!("{} = {}", v.name, display_rational(x))).collect();
            parts.join(", ")
        };
        let mut steps = StepsFrom::new(self.sys, state, memory)
            .map_err(|e| CtlError::Semantics(format!("at {}: {e}", show(state))))?;
        let mut out = Vec::new();
        let mut last: Option<(Vec<Rational>, trestle_ir::sim::Successors<Rational>, Memory<Rational>)> = None;
        for (i, c) in self.choices.iter().enumerate() {
            if last.as_ref().is_none_or(|(n, _, _)| *n != c.nondet) {
                let (succ, after) =
                    steps.under(&c.nondet).map_err(|e| CtlError::Semantics(format!("at {}: {e}", show(state))))?;
                if let Some((b, next, e)) = succ.exits.first() {
                    return Err(CtlError::Semantics(format!(
                        "at {}, branch '{}' leads to {} outside the declared domains ({e}); bounded CTL needs \
                         every successor to be a state",
                        show(state),
                        self.sys.step.branches[*b].name,
                        show(next)
                    )));
                }
                last = Some((c.nondet.clone(), succ, after));
            }
            let (_, succ, after) = last.as_ref().expect("set above");
            if let Some((_, next)) = succ.next.iter().find(|(b, _)| *b == c.branch) {
                out.push(Move { choice: i, next: next.clone(), memory: after.clone() });
            }
        }
        if out.is_empty() {
            return Err(CtlError::Semantics(format!(
                "the state {} has no successor; bounded CTL needs every state to have one",
                show(state)
            )));
        }
        let out = Rc::new(out);
        self.moves.insert(key, out.clone());
        Ok(out)
    }

    /// The successors of `EX` in the order to try: nearest to a solver state at `depth` first.
    fn ordered(&self, moves: &[Move], depth: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..moves.len()).collect();
        if let Some(hints) = self.hints.get(depth).filter(|h| !h.is_empty()) {
            let distance = |m: &Move| {
                hints
                    .iter()
                    .map(|h| h.iter().zip(&m.next).map(|(a, b)| (a - to_f64_nearest(b)).abs()).sum::<f64>())
                    .fold(f64::INFINITY, f64::min)
            };
            order.sort_by(|&a, &b| distance(&moves[a]).total_cmp(&distance(&moves[b])));
        }
        order
    }

    fn atom(&self, p: &trestle_ir::Pred, state: &[Rational]) -> Result<bool, CtlError> {
        p.eval_exact(&Env::new(state, &[], &[])).map_err(|e| CtlError::Semantics(format!("evaluating {p:?}: {e}")))
    }

    /// Whether `node` holds at `state` (with the controllers' hidden state `memory`); `depth` is
    /// the number of steps from the root, for the hints. Evaluated with an explicit stack (a
    /// formula may look a hundred thousand steps ahead), memoised over (node, state, memory).
    pub fn holds(
        &mut self,
        node: NodeId,
        state: &[Rational],
        memory: &Memory<Rational>,
        depth: usize,
    ) -> Result<bool, CtlError> {
        let mut stack: Vec<Frame> = Vec::new();
        let mut value = self.enter(node, state.to_vec(), memory.clone(), depth, &mut stack)?;
        while let Some(top) = stack.last_mut() {
            if let Some(v) = value.take() {
                if v == top.short {
                    let done = stack.pop().expect("the top frame");
                    self.memo.insert((done.node, done.key), v);
                    value = Some(v);
                    continue;
                }
                top.next += 1;
            }
            let (child, key, child_depth) = match &top.items {
                Items::Children(xs) => match xs.get(top.next) {
                    Some(&x) => (x, top.key.clone(), top.depth),
                    None => {
                        let done = stack.pop().expect("the top frame");
                        let v = !done.short;
                        self.memo.insert((done.node, done.key), v);
                        value = Some(v);
                        continue;
                    }
                },
                Items::Moves { child, moves, order } => match order.get(top.next) {
                    Some(&i) => (*child, (moves[i].next.clone(), moves[i].memory.clone()), top.depth + 1),
                    None => {
                        let done = stack.pop().expect("the top frame");
                        let v = !done.short;
                        self.memo.insert((done.node, done.key), v);
                        value = Some(v);
                        continue;
                    }
                },
            };
            value = self.enter(child, key.0, key.1, child_depth, &mut stack)?;
        }
        Ok(value.expect("the root's value"))
    }

    /// Starts evaluating `node` at a state: its value when known at once (memoised, a constant,
    /// an atom), otherwise a frame pushed for its children.
    fn enter(
        &mut self,
        node: NodeId,
        state: Vec<Rational>,
        memory: Memory<Rational>,
        depth: usize,
        stack: &mut Vec<Frame>,
    ) -> Result<Option<bool>, CtlError> {
        let key = (state, memory);
        let memo_key = (node, key);
        if let Some(&b) = self.memo.get(&memo_key) {
            return Ok(Some(b));
        }
        let (node, key) = memo_key;
        let (items, short) = match &self.normal.nodes[node] {
            Node::True => return Ok(Some(true)),
            Node::False => return Ok(Some(false)),
            Node::Atom(p) => {
                let v = self.atom(p, &key.0)?;
                self.memo.insert((node, key), v);
                return Ok(Some(v));
            }
            // A child of the short-circuit value decides: false for And, true for Or.
            Node::And(xs) => (Items::Children(xs.clone()), false),
            Node::Or(xs) => (Items::Children(xs.clone()), true),
            Node::Ex(a) | Node::Ax(a) => {
                let exists = matches!(self.normal.nodes[node], Node::Ex(_));
                let child = *a;
                let moves = self.moves(&key.0, &key.1)?;
                let order = self.ordered(&moves, depth + 1);
                (Items::Moves { child, moves, order }, exists)
            }
        };
        stack.push(Frame { node, key, depth, items, next: 0, short });
        Ok(None)
    }

    /// The runs that show `node` holds at `state` (it must hold): the path to each atom an `EX`
    /// picked and every branch of an `AX`, at most `limit` runs. Each is built by
    /// [`Trace::simulate`] and replayed.
    pub fn witness(&mut self, node: NodeId, state: &[Rational], limit: usize) -> Result<Vec<Trace>, CtlError> {
        let memory = trestle_ir::sim::initial_memory::<Rational>(self.sys);
        let paths = self.collect(node, state, &memory, limit)?;
        let mut traces: Vec<Trace> = Vec::new();
        for path in paths {
            let trace = Trace::simulate(
                self.sys,
                state.to_vec(),
                path.iter().map(|&c| (self.choices[c].nondet.clone(), self.choices[c].branch)),
            )
            .map_err(|e| CtlError::Internal(format!("a witness run does not replay: {e}")))?;
            trace.replay(self.sys).map_err(|e| CtlError::Internal(format!("a witness run does not replay: {e}")))?;
            if !traces.contains(&trace) {
                traces.push(trace);
            }
        }
        Ok(traces)
    }

    /// The choice sequences of [`Exact::witness`], depth first with an explicit stack.
    fn collect(
        &mut self,
        node: NodeId,
        state: &[Rational],
        memory: &Memory<Rational>,
        limit: usize,
    ) -> Result<Vec<Vec<usize>>, CtlError> {
        enum Task {
            Visit { node: NodeId, state: Vec<Rational>, memory: Memory<Rational>, depth: usize, choice: Option<usize> },
            Leave,
        }
        let mut out: Vec<Vec<usize>> = Vec::new();
        let mut prefix = Vec::new();
        let mut tasks =
            vec![Task::Visit { node, state: state.to_vec(), memory: memory.clone(), depth: 0, choice: None }];
        while let Some(task) = tasks.pop() {
            if out.len() >= limit {
                break;
            }
            let Task::Visit { node, state, memory, depth, choice } = task else {
                prefix.pop();
                continue;
            };
            if let Some(c) = choice {
                prefix.push(c);
                tasks.push(Task::Leave);
            }
            match self.normal.nodes[node].clone() {
                Node::True | Node::False | Node::Atom(_) => {
                    if !out.contains(&prefix) {
                        out.push(prefix.clone());
                    }
                }
                Node::And(xs) => {
                    for &x in xs.iter().rev() {
                        let (state, memory) = (state.clone(), memory.clone());
                        tasks.push(Task::Visit { node: x, state, memory, depth, choice: None });
                    }
                }
                Node::Or(xs) => {
                    for x in xs {
                        if self.holds(x, &state, &memory, depth)? {
                            tasks.push(Task::Visit { node: x, state, memory, depth, choice: None });
                            break;
                        }
                    }
                }
                Node::Ex(a) | Node::Ax(a) => {
                    let exists = matches!(self.normal.nodes[node], Node::Ex(_));
                    let moves = self.moves(&state, &memory)?;
                    let mut next = Vec::new();
                    for i in self.ordered(&moves, depth + 1) {
                        let m = &moves[i];
                        if exists && !self.holds(a, &m.next, &m.memory, depth + 1)? {
                            continue;
                        }
                        next.push(Task::Visit {
                            node: a,
                            state: m.next.clone(),
                            memory: m.memory.clone(),
                            depth: depth + 1,
                            choice: Some(m.choice),
                        });
                        if exists {
                            break;
                        }
                    }
                    tasks.extend(next.into_iter().rev());
                }
            }
        }
        Ok(out)
    }
}
