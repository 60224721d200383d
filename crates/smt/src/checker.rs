//! The checker interface and its three implementations: [`Z3Backend`] (the reference),
//! [`FastPath`] (bounds and sampling, no solver; `Unknown(Undecided)` when not conclusive) and
//! [`Checker`], which tries the fast path and hands everything it cannot decide to Z3.
//!
//! A checker borrows one [`System`] and is meant to live on one worker thread: Z3 terms are built
//! in the thread's own Z3 context (`z3::Context` is not `Send`) and none is kept between queries.

use crate::config::CheckerConfig;
use crate::dump::Dumper;
use crate::error::CheckError;
use crate::fastpath::{Forms, PinnedUnion, boxes_imply, union_boxes_of};
use crate::inductive::InductiveQuery;
use crate::query::{BridgeQuery, Target, state_only, validate_system};
use crate::stats::Stats;
use crate::{bridge, implication, monolithic, sample};
use std::sync::Arc;
use std::time::Instant;
use trestle_core::{Answer, Unknown};
use trestle_ir::{Pred, System};

/// Queries about one step of the environment.
pub trait EnvChecker {
    /// The system the checker answers for.
    fn system(&self) -> &System;

    /// Is `(p /\ extra /\ psi /\ Next_ENV) => Target` valid?
    fn check_bridge(&mut self, query: &BridgeQuery<'_>) -> Result<Answer, CheckError>;

    /// Is `premise => conclusion` valid (both predicates over the state)?
    fn check_implication(&mut self, premise: &Pred, conclusion: &Pred) -> Result<Answer, CheckError>;

    /// `Init => inv`.
    fn check_init(&mut self, inv: &Pred) -> Result<Answer, CheckError> {
        let init = self.system().init.clone();
        self.check_implication(&init, inv)
    }

    /// `inv => Safe`.
    fn check_safe(&mut self, inv: &Pred) -> Result<Answer, CheckError> {
        let safe = self.system().safe.clone().ok_or(CheckError::NoSafe)?;
        self.check_implication(inv, &safe)
    }
}

/// The optional capability of checking `Inv /\ Next => Inv'` with the networks inside the query.
pub trait InductivenessChecker {
    /// `(p /\ Inv /\ a = f(s) /\ Next) => Inv'` for the query's box (or all of `Inv`).
    fn check_inductive_on(&mut self, q: &InductiveQuery<'_>) -> Result<Answer, CheckError>;

    /// `Inv /\ Next => Inv'`, every ReLU encoded exactly.
    fn check_inductive(&mut self, inv: &Pred) -> Result<Answer, CheckError> {
        self.check_inductive_on(&InductiveQuery::whole(inv))
    }
}

fn check_implication_input(sys: &System, premise: &Pred, conclusion: &Pred) -> Result<(), CheckError> {
    state_only(premise, "premise", sys.state.len())?;
    state_only(conclusion, "conclusion", sys.state.len())
}

/// Z3, the reference backend.
#[derive(Debug)]
pub struct Z3Backend<'s> {
    sys: &'s System,
    cfg: CheckerConfig,
    dumper: Option<Dumper>,
    narrowing: Option<Narrowing<'s>>,
}

/// A fast path's forms and pinned unions, with which a Z3 backend cuts a pinned union to the
/// boxes a bridge query can reach ([`Z3Backend::narrowed_by`]).
struct Narrowing<'s> {
    forms: Arc<Forms>,
    pinned: Vec<PinnedUnion<'s>>,
}

impl std::fmt::Debug for Narrowing<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Narrowing").field("pinned", &self.pinned.len()).finish()
    }
}

impl<'s> Z3Backend<'s> {
    pub fn new(sys: &'s System, cfg: CheckerConfig) -> Result<Z3Backend<'s>, CheckError> {
        validate_system(sys)?;
        let dumper = cfg.dump_dir.as_deref().map(|d| Dumper::new(d, cfg.dump_prefix.as_deref()));
        Ok(Z3Backend { sys, cfg, dumper, narrowing: None })
    }

    /// Another backend on the same system, validated once (by the backend forked: a system whose
    /// predicates hold thousands of boxes is walked once per run, not once per worker), with its
    /// own configuration (dumps, limits, statistics) and this one's narrowing.
    pub fn fork(&self, cfg: CheckerConfig) -> Z3Backend<'s> {
        let dumper = cfg.dump_dir.as_deref().map(|d| Dumper::new(d, cfg.dump_prefix.as_deref()));
        let narrowing = self.narrowing.as_ref().map(|n| Narrowing { forms: n.forms.clone(), pinned: n.pinned.clone() });
        Z3Backend { sys: self.sys, cfg, dumper, narrowing }
    }

    /// This backend, cutting the unions `fast` pinned down to the boxes each query can reach
    /// before Z3 sees them (a union of n boxes otherwise puts all n into every query, and Z3's
    /// time grows with them): on the state, to the boxes whose outward enclosure touches `p`
    /// (the others are disjoint from `p`: the same set, exactly); on the successor, to the boxes
    /// that may meet the fast path's outward enclosure of the successors (bridge queries, and
    /// exact leaf queries that carry a postcondition). A cut target is a subset of the union, so
    /// a proof that every successor stays in it is a proof for the union whatever the
    /// enclosures; "no successor is in it" rests on the enclosures, as the fast path's `Leaves`
    /// does. Witnesses are replayed against the query's own predicates.
    pub fn narrowed_by(mut self, fast: &FastPath<'s>) -> Z3Backend<'s> {
        if std::ptr::eq(fast.sys, self.sys) {
            self.narrowing = Some(Narrowing { forms: fast.forms.clone(), pinned: fast.pinned.clone() });
        }
        self
    }

    pub fn config(&self) -> &CheckerConfig {
        &self.cfg
    }

    pub fn stats(&self) -> &Stats {
        &self.cfg.stats
    }

    /// Whether a run may stop at a state of `q.region /\ q.inv` ([`crate::stops`]), by Z3.
    pub fn check_stops(&mut self, q: &crate::stops::StopQuery<'_>) -> Result<crate::stops::StopAnswer, CheckError> {
        q.validate(self.sys)?;
        let (sys, cfg, dumper) = (self.sys, &self.cfg, self.dumper.as_mut());
        crate::memory::isolated(move || crate::stops::check_stops(sys, q, cfg, dumper))
    }

    fn bridge_unchecked(&mut self, q: &BridgeQuery<'_>) -> Result<Answer, CheckError> {
        self.bridge_on(self.sys, q)
    }

    /// The bridge query on `sys`: this backend's system, or a leaf system standing for its step on
    /// the query's box ([`crate::linearize`]) with the same variables and predicates. The unions
    /// are cut by this backend's own system: a cut target is a subset of the whole, so a proof
    /// with it is a proof whatever the leaf's successors are.
    fn bridge_on(&mut self, sys: &System, q: &BridgeQuery<'_>) -> Result<Answer, CheckError> {
        let (extra, target) = match &self.narrowing {
            Some(n) => n.forms.narrow(self.sys, q, &n.pinned),
            None => (None, None),
        };
        let mut narrowed = *q;
        if let Some(e) = &extra {
            narrowed.extra = Some(e);
        }
        if let Some(t) = &target {
            narrowed.target = match q.target {
                Target::StaysIn(_) => Target::StaysIn(t),
                Target::Leaves(_) => Target::Leaves(t),
            };
        }
        let (cfg, dumper) = (&self.cfg, self.dumper.as_mut());
        crate::memory::isolated(move || bridge::check_bridge(sys, q, &narrowed, cfg, dumper))
    }

    fn implication_unchecked(&mut self, premise: &Pred, conclusion: &Pred) -> Result<Answer, CheckError> {
        let (sys, cfg, dumper) = (self.sys, &self.cfg, self.dumper.as_mut());
        crate::memory::isolated(move || implication::check_implication(sys, premise, conclusion, cfg, dumper))
    }
}

/// Runs `f`, recording the answer and its time.
fn timed(stats: &Stats, f: impl FnOnce() -> Result<(Answer, bool), CheckError>) -> Result<Answer, CheckError> {
    let start = Instant::now();
    let (answer, by_fast_path) = f()?;
    stats.record_query(start.elapsed(), &answer, by_fast_path);
    Ok(answer)
}

impl EnvChecker for Z3Backend<'_> {
    fn system(&self) -> &System {
        self.sys
    }

    fn check_bridge(&mut self, q: &BridgeQuery<'_>) -> Result<Answer, CheckError> {
        // Predicates pinned by the fast path this backend is narrowed by were validated once.
        let pinned =
            |p: &Pred| self.narrowing.as_ref().is_some_and(|n| n.pinned.iter().any(|(q, _)| std::ptr::eq(*q, p)));
        q.validate_trusting(self.sys, pinned)?;
        let stats = self.cfg.stats.clone();
        timed(&stats, || Ok((self.bridge_unchecked(q)?, false)))
    }

    fn check_implication(&mut self, premise: &Pred, conclusion: &Pred) -> Result<Answer, CheckError> {
        check_implication_input(self.sys, premise, conclusion)?;
        let stats = self.cfg.stats.clone();
        timed(&stats, || Ok((self.implication_unchecked(premise, conclusion)?, false)))
    }
}

impl InductivenessChecker for Z3Backend<'_> {
    fn check_inductive_on(&mut self, q: &InductiveQuery<'_>) -> Result<Answer, CheckError> {
        q.validate(self.sys)?;
        let stats = self.cfg.stats.clone();
        // A pinned invariant cut to the boxes that may meet the region (premise) and, given a
        // postcondition, to those the successors may reach (conclusion); see `narrowed_by`.
        let (premise, conclusion) = match (&self.narrowing, q.region) {
            (Some(n), Some(region)) => (
                n.forms.narrow_on(region, q.inv, &n.pinned),
                q.post
                    .filter(|_| q.target.is_none())
                    .and_then(|post| n.forms.narrow_after(self.sys, region, post, q.inv, &n.pinned)),
            ),
            _ => (None, None),
        };
        // A target replaces the conclusion (the narrowing cuts only `inv`).
        let cut = (premise.as_ref().unwrap_or(q.inv), q.target.or(conclusion.as_ref()).unwrap_or(q.inv));
        let (sys, cfg, dumper) = (self.sys, &self.cfg, self.dumper.as_mut());
        timed(&stats, || {
            Ok((crate::memory::isolated(move || monolithic::check_inductive(sys, q, cut, cfg, dumper))?, false))
        })
    }
}

/// Bounds and exact sampling, no solver. Decides what it can, `Unknown(Undecided)` otherwise.
pub struct FastPath<'s> {
    sys: &'s System,
    cfg: CheckerConfig,
    /// Shared by the forks of one fast path (one per worker): computed once per run.
    forms: Arc<Forms>,
    /// Predicates the caller validated once and borrows for `'s` ([`FastPath::pin`]), with their
    /// union boxes: queries against them skip the per-query walk over the predicate.
    pinned: Vec<PinnedUnion<'s>>,
}

impl std::fmt::Debug for FastPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FastPath").field("system", &self.sys.name).finish()
    }
}

impl<'s> FastPath<'s> {
    pub fn new(sys: &'s System, cfg: CheckerConfig) -> Result<FastPath<'s>, CheckError> {
        validate_system(sys)?;
        Ok(FastPath { sys, forms: Arc::new(Forms::of(sys)), cfg, pinned: Vec::new() })
    }

    /// Another fast path on the same system sharing this one's precomputed forms and pinned
    /// predicates, with its own configuration (a worker's statistics and deadline).
    pub fn fork(&self, cfg: CheckerConfig) -> FastPath<'s> {
        FastPath { sys: self.sys, cfg, forms: self.forms.clone(), pinned: self.pinned.clone() }
    }

    /// Validates `p` as a state predicate once and remembers it by address: later queries whose
    /// target or extra predicate is this very object (not merely an equal one) skip the
    /// validation walk and find its union boxes without comparing predicates. Sound because `p`
    /// is borrowed immutably for `'s`, as long as this fast path and its forks live.
    pub fn pin(&mut self, p: &'s Pred) -> Result<(), CheckError> {
        state_only(p, "pinned predicate", self.sys.state.len())?;
        if !self.pinned.iter().any(|(q, _)| std::ptr::eq(*q, p)) {
            self.pinned.push((p, union_boxes_of(self.sys.state.len(), p)));
        }
        Ok(())
    }

    fn is_pinned(&self, p: &Pred) -> bool {
        self.pinned.iter().any(|(q, _)| std::ptr::eq(*q, p))
    }

    /// `Some(Valid)` when the bounds prove the query, `Some(Invalid)` when the sampler finds a
    /// (replayed) counterexample, `None` otherwise. The query must be validated.
    fn bridge_unchecked(&self, q: &BridgeQuery<'_>) -> Option<Answer> {
        if self.forms.prove(self.sys, q, &self.pinned) {
            return Some(Answer::Valid);
        }
        if self.cfg.sample_witnesses {
            // A pinned extra predicate (the run's invariant) comes with its boxes, computed once.
            let extra_union = q.extra.and_then(|e| crate::fastpath::pinned_union(&self.pinned, e));
            return sample::sample_bridge(self.sys, q, extra_union, self.cfg.sample_budget).map(Answer::Invalid);
        }
        None
    }

    fn implication_unchecked(&self, premise: &Pred, conclusion: &Pred) -> Option<Answer> {
        if boxes_imply(self.sys.state.len(), premise, conclusion) {
            return Some(Answer::Valid);
        }
        if self.cfg.sample_witnesses {
            return sample::sample_implication(self.sys, premise, conclusion).map(Answer::Invalid);
        }
        None
    }
}

impl EnvChecker for FastPath<'_> {
    fn system(&self) -> &System {
        self.sys
    }

    fn check_bridge(&mut self, q: &BridgeQuery<'_>) -> Result<Answer, CheckError> {
        q.validate_trusting(self.sys, |p| self.is_pinned(p))?;
        timed(&self.cfg.stats, || {
            Ok(match self.bridge_unchecked(q) {
                Some(a) => (a, true),
                None => (Answer::Unknown(Unknown::Undecided), false),
            })
        })
    }

    fn check_implication(&mut self, premise: &Pred, conclusion: &Pred) -> Result<Answer, CheckError> {
        check_implication_input(self.sys, premise, conclusion)?;
        timed(&self.cfg.stats, || {
            Ok(match self.implication_unchecked(premise, conclusion) {
                Some(a) => (a, true),
                None => (Answer::Unknown(Unknown::Undecided), false),
            })
        })
    }
}

/// The first elementary function (sin, exp, tanh, ...) of the environment step, which Z3's exact
/// encoding cannot take.
pub fn elementary_function(sys: &System) -> Option<trestle_ir::expr::Function> {
    sys.step.branches.iter().find_map(|b| {
        b.updates.iter().find_map(|u| u.first_function()).or_else(|| b.guard.as_ref().and_then(|g| g.first_function()))
    })
}

/// The fast path (if enabled) in front of Z3: what the fast path decides is final, everything
/// else is asked to Z3.
#[derive(Debug)]
pub struct Checker<'s> {
    fast: Option<FastPath<'s>>,
    z3: Z3Backend<'s>,
}

/// Which backend decided a query of a [`Checker`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecidedBy {
    FastPath,
    Z3,
}

impl<'s> Checker<'s> {
    pub fn new(sys: &'s System, cfg: CheckerConfig) -> Result<Checker<'s>, CheckError> {
        let fast = if cfg.fast_path { Some(FastPath::new(sys, cfg.clone())?) } else { None };
        Ok(Checker { fast, z3: Z3Backend::new(sys, cfg)? })
    }

    /// A checker from its parts: a fast path made elsewhere (a worker's fork of a run's pinned
    /// fast path) and a Z3 backend with its own configuration.
    pub fn from_parts(fast: Option<FastPath<'s>>, z3: Z3Backend<'s>) -> Checker<'s> {
        Checker { fast, z3 }
    }

    /// The bridge query, fast path first and Z3 for what it leaves open, with which of them
    /// decided. Predicates the fast path pinned are not validated again.
    pub fn decide_bridge(&mut self, q: &BridgeQuery<'_>) -> Result<(Answer, DecidedBy), CheckError> {
        match &self.fast {
            Some(f) => q.validate_trusting(self.z3.sys, |p| f.is_pinned(p))?,
            None => q.validate(self.z3.sys)?,
        }
        let stats = self.stats().clone();
        let mut by = DecidedBy::Z3;
        let answer = timed(&stats, || {
            if let Some(a) = self.fast.as_ref().and_then(|f| f.bridge_unchecked(q)) {
                by = DecidedBy::FastPath;
                return Ok((a, true));
            }
            if elementary_function(self.z3.sys).is_some() {
                // Z3 decides polynomial arithmetic only: it gets the step's linear relaxation on
                // this box, whose proof is a proof; what that leaves open stays open (the engine
                // splits the box), never an error and never a counterexample.
                if let Some(leaf) = crate::linearize::leaf(self.z3.sys, q) {
                    // The leaf is affine in the state and actions: the bounds often prove it
                    // without Z3 (psi's linear bounds substituted, as for any affine step).
                    let pinned = self.fast.as_ref().map_or(&[][..], |f| &f.pinned[..]);
                    if crate::fastpath::Forms::of(&leaf).prove(&leaf, q, pinned) {
                        by = DecidedBy::FastPath;
                        return Ok((Answer::Valid, true));
                    }
                    if self.z3.bridge_on(&leaf, q)? == Answer::Valid {
                        return Ok((Answer::Valid, false));
                    }
                }
                by = DecidedBy::FastPath;
                return Ok((Answer::Unknown(Unknown::Undecided), true));
            }
            Ok((self.z3.bridge_unchecked(q)?, false))
        })?;
        Ok((answer, by))
    }

    pub fn config(&self) -> &CheckerConfig {
        self.z3.config()
    }

    pub fn stats(&self) -> &Stats {
        self.z3.stats()
    }
}

impl EnvChecker for Checker<'_> {
    fn system(&self) -> &System {
        self.z3.sys
    }

    fn check_bridge(&mut self, q: &BridgeQuery<'_>) -> Result<Answer, CheckError> {
        self.decide_bridge(q).map(|(a, _)| a)
    }

    fn check_implication(&mut self, premise: &Pred, conclusion: &Pred) -> Result<Answer, CheckError> {
        check_implication_input(self.z3.sys, premise, conclusion)?;
        let stats = self.stats().clone();
        timed(&stats, || {
            if let Some(a) = self.fast.as_ref().and_then(|f| f.implication_unchecked(premise, conclusion)) {
                return Ok((a, true));
            }
            Ok((self.z3.implication_unchecked(premise, conclusion)?, false))
        })
    }
}

impl InductivenessChecker for Checker<'_> {
    fn check_inductive_on(&mut self, q: &InductiveQuery<'_>) -> Result<Answer, CheckError> {
        self.z3.check_inductive_on(q)
    }
}
