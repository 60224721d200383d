//! Policy predicate abstraction with CEGAR.
//!
//! One iteration searches the abstraction over the current predicates P (from the abstract start
//! states, greedy best-first by the Hamming distance to the unsafety condition's forced
//! predicate values, or breadth-first) for an abstract state that meets the unsafety condition.
//! None reachable: safe, and the reachable abstract states are an inductive invariant. Otherwise
//! the abstract path's start state and operator sequence are refined as Algorithm 1 of the paper:
//!
//! 1. transition spuriousness: the shortest operator prefix that cannot reach where the next
//!    operator is enabled (its guard and its successor inside the domains) or the unsafety condition from the start abstract state and the start condition, without
//!    the network; the atoms of that guard's weakest preconditions through the prefix join P;
//! 2. policy spuriousness: the concrete path of the last query run through the network; at the
//!    first state where the policy picks another label, witness splitting (`v < w(v)` / `v >
//!    w(v)` against the abstract edge's stored witness w) or concretisation exclusion (`v <=
//!    s(v) - 1`, `v >= s(v) + 1`), pushed back through the prefix by weakest preconditions;
//! 3. otherwise the path is a real counterexample (replayed exactly before it is returned).
//!
//! Abstract transitions: for an abstract state S and a label l, one Z3 query holds one exact copy
//! of the network on a state s in S with `pi(s) = l`; for every operator with label l the
//! successor truth vectors are enumerated (each model's s kept as the edge's witness, then the
//! vector blocked). Incremental: P only grows, so a refined S lies inside an S_old of an earlier
//! iteration: an operator without an edge from S_old has none from S, the successors of S project
//! onto those of S_old (asserted), and a stored witness that lies in S gives its edge without a
//! query.

use crate::atom::{Affine, Atom, literals};
use crate::model::{Discrete, Operator};
use crate::policy::{IntBox, PolicyTheory, TheoryStats};
use crate::{CegarError, Outcome, Stats, confirm_unsafe, policy_label};
use num_bigint::BigInt;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::time::Instant;
use trestle_core::{Budget, Verdict};
use trestle_core::{Trace, Unknown};
use trestle_ir::{Pred, Rational};
use trestle_smt::{CheckerConfig, PathAnswer, PathQuery};

/// How policy spuriousness is refined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refine {
    /// `ws`: split the spurious state from the abstract edge's witness.
    WitnessSplit,
    /// `ce`: exclude the spurious state from every other state.
    ConcretisationExclusion,
}

#[derive(Clone, Debug)]
pub struct CegarOptions {
    pub refine: Refine,
    /// Greedy best-first search by the Hamming heuristic (off: breadth-first).
    pub heuristic: bool,
    /// Reuse abstract transitions and witnesses across iterations.
    pub incremental: bool,
    /// How queries about the policy's choice are decided.
    pub encoding: PolicyEncoding,
}

/// How the abstract transition queries treat the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyEncoding {
    /// Z3 decides the linear part; the network is run exactly on its proposals and boxes where the
    /// label loses are excluded by sound bounds ([`crate::policy`]).
    Lazy,
    /// The network inside every Z3 query, ReLUs as `ite` (the paper's encoding; slow).
    Z3,
}

impl Default for CegarOptions {
    fn default() -> Self {
        CegarOptions {
            refine: Refine::WitnessSplit,
            heuristic: true,
            incremental: true,
            encoding: PolicyEncoding::Lazy,
        }
    }
}

type AbsState = Vec<bool>;

/// One abstract transition with its concrete witness (a state of the source where the policy
/// picks the operator's label and the operator leads into the target).
#[derive(Clone, Debug)]
struct Edge {
    op: usize,
    to: AbsState,
    witness: Vec<Rational>,
}

/// The successor lists computed under one predicate set (its first `m` predicates).
struct Generation {
    m: usize,
    succ: HashMap<AbsState, Vec<Edge>>,
}

/// The abstract path found by a search.
struct AbstractPath {
    states: Vec<AbsState>,
    edges: Vec<Edge>,
}

enum Search {
    Safe { reached: Vec<AbsState> },
    Unsafe(AbstractPath),
    Unknown(Unknown),
}

enum Refinement {
    /// New atoms (the bool: policy spuriousness).
    Spurious(Vec<Atom>, bool),
    Real(Trace),
    Unknown(Unknown),
}

struct Run<'d, 's> {
    d: &'d Discrete<'s>,
    opts: CegarOptions,
    cfg: CheckerConfig,
    budget: Budget,
    atoms: Vec<Atom>,
    preds: Vec<Pred>,
    known: HashSet<Atom>,
    /// The truth value the unsafety condition forces on each predicate, if any.
    forced: Vec<Option<bool>>,
    generations: Vec<Generation>,
    invariant: Option<AbstractInvariant>,
    theory: PolicyTheory<'d>,
    theory_stats: TheoryStats,
    stats: Stats,
}

/// Runs CEGAR on a discrete system.
///
/// A proof (no unsafe abstract state reachable) is re-checked from scratch by [`recheck`] before
/// it is returned: one that does not re-check is an internal error, never a verdict.
pub fn check_cegar(d: &Discrete<'_>, opts: &CegarOptions, budget: &Budget) -> Result<Outcome, CegarError> {
    if let Some(update) = d.non_integral_update() {
        return Err(CegarError::Unsupported(format!(
            "{update} may be non-integral (a successor that is then dropped): CEGAR's linear predicates cannot say \
             where, so it does not take this system; --method bmc and --method explicit do"
        )));
    }
    let start = Instant::now();
    let mut run = Run {
        d,
        opts: opts.clone(),
        cfg: CheckerConfig::new().without_timeout().with_budget(budget),
        budget: budget.clone(),
        atoms: Vec::new(),
        preds: Vec::new(),
        known: HashSet::new(),
        forced: Vec::new(),
        generations: Vec::new(),
        invariant: None,
        theory: PolicyTheory::new(d)?,
        theory_stats: TheoryStats::default(),
        stats: Stats::default(),
    };
    let verdict = run.main()?;
    run.stats.predicates = run.atoms.len();
    run.stats.refuted_states = run.theory_stats.refuted_states;
    run.stats.bound_calls = run.theory_stats.bound_calls;
    run.stats.smt_calls += run.theory_stats.smt_calls;
    run.stats.seconds = start.elapsed().as_secs_f64();
    if let Some(t) = verdict.trace() {
        run.stats.depth = t.len();
    }
    if verdict.is_proven() {
        let inv = run.invariant.as_ref().ok_or_else(|| CegarError::Internal("a proof without an invariant".into()))?;
        let t = Instant::now();
        recheck(d, inv, budget)?
            .map_err(|why| CegarError::Internal(format!("the abstraction's invariant does not re-check: {why}")))?;
        run.stats.recheck_seconds = t.elapsed().as_secs_f64();
    }
    let predicates = run.atoms.iter().map(|a| a.text(d.sys)).collect();
    Ok(Outcome { verdict, predicates, invariant: run.invariant, stats: run.stats })
}

/// A union of abstract states (truth vectors over `atoms`): CEGAR's proof of safety.
#[derive(Clone, Debug, PartialEq)]
pub struct AbstractInvariant {
    pub atoms: Vec<Atom>,
    pub states: Vec<Vec<bool>>,
}

impl AbstractInvariant {
    /// The union as a state predicate.
    pub fn to_pred(&self) -> Pred {
        let preds: Vec<Pred> = self.atoms.iter().map(Atom::to_pred).collect();
        Pred::Or(
            self.states
                .iter()
                .map(|s| {
                    Pred::And(
                        preds
                            .iter()
                            .zip(s)
                            .map(|(p, &v)| if v { p.clone() } else { Pred::Not(Box::new(p.clone())) })
                            .collect(),
                    )
                })
                .collect(),
        )
    }
}

/// Re-checks a proof of safety from scratch, without the run that found it: the start condition
/// implies the invariant, no state of the invariant is unsafe, and for every label and operator
/// with that label, no state of the invariant where the policy picks the label (run exactly,
/// excluded by sound bounds: [`crate::policy`]) has a successor outside the invariant. `Ok(Err(why))` when a check fails or
/// Z3 cannot decide it.
pub fn recheck(d: &Discrete<'_>, inv: &AbstractInvariant, budget: &Budget) -> Result<Result<(), String>, CegarError> {
    let cfg = CheckerConfig::new().without_timeout().with_budget(budget);
    let set = inv.to_pred();
    let unsat = |q: &mut PathQuery<'_>, what: &str| match q.check() {
        PathAnswer::Unsat => Ok(()),
        PathAnswer::Sat(v) => Err(format!("{what}: fails at {:?}", v[0])),
        PathAnswer::Unknown(u) => Err(format!("{what}: Z3 cannot decide it ({u})")),
    };
    let mut q = PathQuery::new(d.sys, cfg.clone());
    let s = q.add_state();
    q.push();
    q.assert_pred(s, &d.start, true)?;
    q.assert_pred(s, &set, false)?;
    if let Err(e) = unsat(&mut q, "start => invariant") {
        return Ok(Err(e));
    }
    q.pop();
    q.assert_pred(s, &set, true)?;
    q.push();
    q.assert_pred(s, &d.unsafe_, true)?;
    if let Err(e) = unsat(&mut q, "invariant => not unsafe") {
        return Ok(Err(e));
    }
    q.pop();
    let t = q.add_state();
    q.assert_pred(t, &set, false)?;
    let theory = PolicyTheory::new(d)?;
    let mut stats = TheoryStats::default();
    for (label, name) in d.labels.iter().enumerate() {
        let mut learned = Vec::new();
        q.push();
        for op in d.operators.iter().filter(|o| o.label == label) {
            let mut hull = theory.domain.clone();
            if !hull.narrow(&literals(&op.enabled, d.sys.state.len()).unwrap_or_default()) {
                continue;
            }
            if theory.rules_out(&hull, label, &mut stats) {
                continue;
            }
            q.push();
            q.assert_branch(s, op.branch, t)?;
            let answer = theory.solve(&mut q, s, label, &hull, &mut learned, &mut stats)?;
            let what = format!("invariant closed under '{}' (label {name})", op.name);
            match answer {
                PathAnswer::Unsat => {}
                PathAnswer::Sat(v) => return Ok(Err(format!("{what}: fails at {:?}", v[0]))),
                PathAnswer::Unknown(u) => return Ok(Err(format!("{what}: Z3 cannot decide it ({u})"))),
            }
            q.pop();
            PolicyTheory::reassert(&mut q, s, &learned)?;
        }
        q.pop();
    }
    Ok(Ok(()))
}

impl<'s> Run<'_, 's> {
    fn main(&mut self) -> Result<Verdict, CegarError> {
        loop {
            if let Some(why) = self.stopped() {
                return Ok(Verdict::Unknown(why));
            }
            self.stats.iterations += 1;
            let mut current = Generation { m: self.atoms.len(), succ: HashMap::new() };
            let search = self.search(&mut current)?;
            if self.opts.incremental {
                self.generations.push(current);
            }
            let path = match search {
                Search::Safe { mut reached } => {
                    self.stats.states = reached.len();
                    reached.sort();
                    self.invariant = Some(AbstractInvariant { atoms: self.atoms.clone(), states: reached });
                    return Ok(Verdict::proven());
                }
                Search::Unknown(u) => return Ok(Verdict::Unknown(u)),
                Search::Unsafe(path) => path,
            };
            match self.refine(&path)? {
                Refinement::Real(trace) => {
                    confirm_unsafe(self.d, &trace)?;
                    return Ok(Verdict::refuted(trace));
                }
                Refinement::Unknown(u) => return Ok(Verdict::Unknown(u)),
                Refinement::Spurious(atoms, policy) => {
                    if policy {
                        self.stats.policy_refinements += 1;
                    }
                    let mut added = 0;
                    for a in atoms {
                        added += self.add_atom(a)? as usize;
                    }
                    if added == 0 {
                        return Err(CegarError::Internal(format!(
                            "a refinement for {} spuriousness added no predicate (the abstract path of {} steps would be found again)",
                            if policy { "policy" } else { "transition" },
                            path.edges.len()
                        )));
                    }
                }
            }
        }
    }

    /// Why the run must stop now (its time limit, or it was called off), if it must.
    fn stopped(&self) -> Option<Unknown> {
        self.budget.check().err().map(Unknown::from)
    }

    fn query(&self) -> PathQuery<'s> {
        PathQuery::new(self.d.sys, self.cfg.clone())
    }

    fn check(&mut self, q: &mut PathQuery<'_>) -> PathAnswer {
        self.stats.smt_calls += 1;
        q.check()
    }

    /// A query over copy `x` together with "the policy picks `label` at x": lazily (the network
    /// consulted outside Z3, see [`crate::policy`]) or by the network's Z3 encoding, which the
    /// caller has asserted.
    fn with_label(
        &mut self,
        q: &mut PathQuery<'_>,
        x: usize,
        label: usize,
        hull: &IntBox,
        learned: &mut Vec<IntBox>,
    ) -> Result<PathAnswer, CegarError> {
        match self.opts.encoding {
            PolicyEncoding::Z3 => Ok(self.check(q)),
            PolicyEncoding::Lazy => self.theory.solve(q, x, label, hull, learned, &mut self.theory_stats),
        }
    }

    /// The box of the domains narrowed by an abstract state's literals and `extra` ones (interval
    /// propagation); `None` when that shows the conjunction has no integer state.
    fn hull(&self, s: &AbsState, extra: &[(Atom, bool)]) -> Option<IntBox> {
        let mut lits: Vec<(Atom, bool)> = self.atoms.iter().cloned().zip(s.iter().copied()).collect();
        lits.extend_from_slice(extra);
        let mut b = self.theory.domain.clone();
        b.narrow(&lits).then_some(b)
    }

    /// The abstraction of a concrete state.
    fn abstract_of(&self, s: &[Rational]) -> AbsState {
        self.atoms.iter().map(|a| a.holds(s)).collect()
    }

    /// Adds a predicate unless it is known; computes what the unsafety condition forces on it.
    fn add_atom(&mut self, a: Atom) -> Result<bool, CegarError> {
        if !self.known.insert(a.clone()) {
            return Ok(false);
        }
        let p = a.to_pred();
        let forced = if self.opts.heuristic {
            let mut q = self.query();
            let s = q.add_state();
            q.assert_pred(s, &self.d.unsafe_, true)?;
            let mut sat = [false; 2];
            for (i, value) in [true, false].into_iter().enumerate() {
                q.push();
                q.assert_pred(s, &p, value)?;
                self.stats.smt_calls += 1;
                sat[i] = !matches!(q.check(), PathAnswer::Unsat);
                q.pop();
            }
            match sat {
                [true, false] => Some(true),
                [false, true] => Some(false),
                _ => None,
            }
        } else {
            None
        };
        self.atoms.push(a);
        self.preds.push(p);
        self.forced.push(forced);
        Ok(true)
    }

    fn hamming(&self, s: &AbsState) -> usize {
        s.iter().zip(&self.forced).filter(|(v, f)| f.is_some_and(|f| f != **v)).count()
    }

    /// The abstract start states: every truth vector of the start condition.
    fn starts(&mut self) -> Result<Result<Vec<AbsState>, Unknown>, CegarError> {
        let d = self.d;
        let preds = self.preds.clone();
        let mut q = self.query();
        let s = q.add_state();
        q.assert_pred(s, &d.start, true)?;
        let mut out = Vec::new();
        loop {
            match self.check(&mut q) {
                PathAnswer::Unsat => return Ok(Ok(out)),
                PathAnswer::Unknown(u) => return Ok(Err(u)),
                PathAnswer::Sat(v) => {
                    let a = self.abstract_of(&v[0]);
                    q.block(s, &preds, &a)?;
                    out.push(a);
                }
            }
        }
    }

    /// Whether an abstract state holds an unsafe state.
    fn is_unsafe(&mut self, a: &AbsState) -> Result<Result<bool, Unknown>, CegarError> {
        let mut q = self.query();
        let s = q.add_state();
        for (p, &v) in self.preds.iter().zip(a) {
            q.assert_pred(s, p, v)?;
        }
        q.assert_pred(s, &self.d.unsafe_, true)?;
        self.stats.smt_calls += 1;
        Ok(match q.check() {
            PathAnswer::Sat(_) => Ok(true),
            PathAnswer::Unsat => Ok(false),
            PathAnswer::Unknown(u) => Err(u),
        })
    }

    fn search(&mut self, current: &mut Generation) -> Result<Search, CegarError> {
        let starts = match self.starts()? {
            Ok(s) => s,
            Err(u) => return Ok(Search::Unknown(u)),
        };
        // parent[S] = the state and edge it was first reached by (None for start states).
        let mut parent: HashMap<AbsState, Option<(AbsState, Edge)>> = HashMap::new();
        let mut frontier = Frontier::new(self.opts.heuristic);
        let mut seq = 0usize;
        for s in starts {
            if parent.contains_key(&s) {
                continue;
            }
            parent.insert(s.clone(), None);
            match self.is_unsafe(&s)? {
                Err(u) => return Ok(Search::Unknown(u)),
                Ok(true) => return Ok(Search::Unsafe(path_to(&parent, s))),
                Ok(false) => {}
            }
            frontier.push(self.hamming(&s), seq, s);
            seq += 1;
        }
        while let Some(s) = frontier.pop() {
            if let Some(why) = self.stopped() {
                return Ok(Search::Unknown(why));
            }
            let edges = match self.successors(&s)? {
                Ok(e) => e,
                Err(u) => return Ok(Search::Unknown(u)),
            };
            current.succ.insert(s.clone(), edges.clone());
            for e in edges {
                if parent.contains_key(&e.to) {
                    continue;
                }
                let to = e.to.clone();
                parent.insert(to.clone(), Some((s.clone(), e)));
                match self.is_unsafe(&to)? {
                    Err(u) => return Ok(Search::Unknown(u)),
                    Ok(true) => return Ok(Search::Unsafe(path_to(&parent, to))),
                    Ok(false) => {}
                }
                frontier.push(self.hamming(&to), seq, to);
                seq += 1;
            }
        }
        Ok(Search::Safe { reached: parent.into_keys().collect() })
    }

    /// Every abstract transition from `s`.
    fn successors(&mut self, s: &AbsState) -> Result<Result<Vec<Edge>, Unknown>, CegarError> {
        let d = self.d;
        // The newest earlier generation that expanded the state containing s.
        let old: Option<(usize, Vec<Edge>)> =
            self.generations.iter().rev().find_map(|g| g.succ.get(&s[..g.m]).map(|e| (g.m, e.clone())));
        let preds = self.preds.clone();
        let mut q = self.query();
        let (x, y) = (q.add_state(), q.add_state());
        for (p, &v) in preds.iter().zip(s) {
            q.assert_pred(x, p, v)?;
        }
        let mut out: Vec<Edge> = Vec::new();
        let mut encoded = false;
        let Some(hull) = self.hull(s, &[]) else { return Ok(Ok(Vec::new())) };
        for label in 0..d.labels.len() {
            let ops: Vec<usize> = (0..d.operators.len()).filter(|&o| d.operators[o].label == label).collect();
            // Per operator: the successor projections allowed by the earlier generation.
            let mut allowed: Vec<Option<Vec<AbsState>>> = Vec::with_capacity(ops.len());
            let mut known: Vec<Vec<Edge>> = Vec::with_capacity(ops.len());
            for &o in &ops {
                match &old {
                    None => {
                        allowed.push(None);
                        known.push(Vec::new());
                    }
                    Some((m, edges)) => {
                        let mut proj: Vec<AbsState> = Vec::new();
                        let mut reuse: Vec<Edge> = Vec::new();
                        for e in edges.iter().filter(|e| e.op == o) {
                            if !proj.contains(&e.to) {
                                proj.push(e.to.clone());
                            }
                            // A witness inside s proves its edge under the refined predicates.
                            if self.abstract_of(&e.witness) == *s {
                                let to = self.abstract_of(&d.apply(&d.operators[o], &e.witness));
                                if !reuse.iter().any(|r| r.to == to) {
                                    reuse.push(Edge { op: o, to, witness: e.witness.clone() });
                                }
                            }
                        }
                        debug_assert!(proj.iter().all(|p| p.len() == *m));
                        allowed.push(Some(proj));
                        known.push(reuse);
                    }
                }
            }
            if allowed.iter().all(|a| a.as_ref().is_some_and(Vec::is_empty)) {
                continue;
            }
            let has_known = known.iter().any(|k| !k.is_empty());
            if self.opts.encoding == PolicyEncoding::Z3 && !encoded {
                q.encode_policy(x)?;
                encoded = true;
            }
            q.push();
            if self.opts.encoding == PolicyEncoding::Z3 {
                q.assert_policy_picks(x, d.action, label)?;
            }
            // Boxes where the label provably loses, learned by the lazy theory.
            let mut learned: Vec<IntBox> = Vec::new();
            // Under Z3's encoding one query with the network says whether the label is picked
            // in s at all; the lazy theory asks per operator, over the operator's smaller hull.
            if !has_known && self.opts.encoding == PolicyEncoding::Z3 {
                match self.with_label(&mut q, x, label, &hull, &mut learned)? {
                    PathAnswer::Unsat => {
                        q.pop();
                        continue;
                    }
                    PathAnswer::Unknown(u) => return Ok(Err(u)),
                    PathAnswer::Sat(_) => {}
                }
            }
            for (k, &o) in ops.iter().enumerate() {
                if allowed[k].as_ref().is_some_and(Vec::is_empty) {
                    continue;
                }
                self.stats.reused_edges += known[k].len() as u64;
                // Where the operator has a successor, within s: a smaller box for the theory.
                let guard = literals(&d.operators[o].enabled, d.sys.state.len()).unwrap_or_default();
                let Some(op_hull) = self.hull(s, &guard) else {
                    out.extend(known[k].iter().cloned());
                    continue;
                };
                if self.opts.encoding == PolicyEncoding::Lazy
                    && self.theory.rules_out(&op_hull, label, &mut self.theory_stats)
                {
                    out.extend(known[k].iter().cloned());
                    continue;
                }
                q.push();
                q.assert_branch(x, d.operators[o].branch, y)?;
                if let (Some(proj), Some((m, _))) = (&allowed[k], &old) {
                    q.assert_one_of(y, &preds[..*m], proj)?;
                }
                for e in &known[k] {
                    q.block(y, &preds, &e.to)?;
                }
                out.extend(known[k].iter().cloned());
                let mark = learned.len();
                loop {
                    match self.with_label(&mut q, x, label, &op_hull, &mut learned)? {
                        PathAnswer::Unsat => break,
                        PathAnswer::Unknown(u) => return Ok(Err(u)),
                        PathAnswer::Sat(v) => {
                            let to = self.abstract_of(&v[1]);
                            q.block(y, &preds, &to)?;
                            out.push(Edge { op: o, to, witness: v[0].clone() });
                        }
                    }
                }
                q.pop();
                PolicyTheory::reassert(&mut q, x, &learned[mark..])?;
            }
            q.pop();
        }
        Ok(Ok(out))
    }

    /// Algorithm 1: refines by the start abstract state and the operator sequence of `path`.
    fn refine(&mut self, path: &AbstractPath) -> Result<Refinement, CegarError> {
        let d = self.d;
        let ops: Vec<&Operator> = path.edges.iter().map(|e| &d.operators[e.op]).collect();
        let n = ops.len();
        let mut q = self.query();
        let mut copies = vec![q.add_state()];
        for (p, &v) in self.preds.iter().zip(&path.states[0]) {
            q.assert_pred(copies[0], p, v)?;
        }
        q.assert_pred(copies[0], &d.start, true)?;
        let mut concrete = Vec::new();
        for i in 0..=n {
            let goal = if i < n { &ops[i].enabled } else { &d.unsafe_ };
            q.push();
            q.assert_pred(copies[i], goal, true)?;
            let answer = self.check(&mut q);
            q.pop();
            match answer {
                PathAnswer::Unknown(u) => return Ok(Refinement::Unknown(u)),
                PathAnswer::Unsat => {
                    let atoms = d.atoms(goal);
                    return Ok(Refinement::Spurious(wp_closure(atoms, &ops[..i]), false));
                }
                PathAnswer::Sat(v) if i == n => concrete = v,
                PathAnswer::Sat(_) => {
                    let next = q.add_state();
                    q.assert_branch(copies[i], ops[i].branch, next)?;
                    copies.push(next);
                }
            }
        }
        for i in 0..n {
            if policy_label(d, &concrete[i])? == ops[i].label {
                continue;
            }
            let s = &concrete[i];
            let atoms = match self.opts.refine {
                Refine::WitnessSplit => {
                    let w = &path.edges[i].witness;
                    let mut atoms = Vec::new();
                    for (v, (sv, wv)) in s.iter().zip(w).enumerate() {
                        if sv < wv {
                            atoms.extend(bound_atom(v, s.len(), wv, -1)); // v <= w(v) - 1
                        } else if sv > wv {
                            atoms.extend(bound_atom(v, s.len(), wv, 1)); // v >= w(v) + 1
                        }
                    }
                    atoms
                }
                Refine::ConcretisationExclusion => (0..s.len())
                    .flat_map(|v| [bound_atom(v, s.len(), &s[v], -1), bound_atom(v, s.len(), &s[v], 1)])
                    .flatten()
                    .collect(),
            };
            return Ok(Refinement::Spurious(wp_closure(atoms, &ops[..i]), true));
        }
        let choices = ops.iter().map(|o| (Vec::new(), o.branch));
        let trace = Trace::simulate(d.sys, concrete[0].clone(), choices)
            .map_err(|e| CegarError::Internal(format!("the concrete path does not simulate: {e}")))?;
        if trace.states != concrete {
            return Err(CegarError::Internal("the simulated path differs from Z3's".into()));
        }
        Ok(Refinement::Real(trace))
    }
}

/// The atom `v <= c - 1` (side -1) or `v >= c + 1` (side 1) over `n` variables.
fn bound_atom(v: usize, n: usize, c: &Rational, side: i64) -> Option<Atom> {
    let one = Rational::from_integer(BigInt::from(1));
    let mut coeffs = vec![Rational::from_integer(BigInt::from(0)); n];
    // side -1: v - (c - 1) <= 0; side 1: (c + 1) - v <= 0.
    let constant = if side < 0 {
        coeffs[v] = one.clone();
        -(c - &one)
    } else {
        coeffs[v] = -one.clone();
        c + &one
    };
    Atom::le_zero(&Affine { coeffs, constant }).map(|(a, _)| a)
}

/// Every atom with its weakest preconditions through `ops[j..]` for j = i - 1 down to 0.
fn wp_closure(atoms: Vec<Atom>, ops: &[&Operator]) -> Vec<Atom> {
    let mut out = Vec::new();
    for a in atoms {
        let mut cur = Some(a);
        let mut j = ops.len();
        while let Some(c) = cur {
            out.push(c.clone());
            if j == 0 {
                break;
            }
            j -= 1;
            cur = c.wp(&ops[j].update);
        }
    }
    out
}

fn path_to(parent: &HashMap<AbsState, Option<(AbsState, Edge)>>, mut s: AbsState) -> AbstractPath {
    let mut states = vec![s.clone()];
    let mut edges = Vec::new();
    while let Some(Some((p, e))) = parent.get(&s) {
        edges.push(e.clone());
        states.push(p.clone());
        s = p.clone();
    }
    states.reverse();
    edges.reverse();
    AbstractPath { states, edges }
}

/// The open abstract states: by heuristic value then insertion order, or first in first out.
enum Frontier {
    Best(BinaryHeap<std::cmp::Reverse<(usize, usize, AbsState)>>),
    Breadth(VecDeque<AbsState>),
}

impl Frontier {
    fn new(heuristic: bool) -> Frontier {
        if heuristic { Frontier::Best(BinaryHeap::new()) } else { Frontier::Breadth(VecDeque::new()) }
    }

    fn push(&mut self, h: usize, seq: usize, s: AbsState) {
        match self {
            Frontier::Best(heap) => heap.push(std::cmp::Reverse((h, seq, s))),
            Frontier::Breadth(queue) => queue.push_back(s),
        }
    }

    fn pop(&mut self) -> Option<AbsState> {
        match self {
            Frontier::Best(heap) => heap.pop().map(|std::cmp::Reverse((_, _, s))| s),
            Frontier::Breadth(queue) => queue.pop_front(),
        }
    }
}
