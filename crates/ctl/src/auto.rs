//! [`Method::Auto`], the default: the explicit engine where the states a formula looks at are few
//! and finite, otherwise the compositional and monolithic engines raced on two threads.
//!
//! Neither MILP engine is faster everywhere (the figures: `AF^30` on a 2-neuron double
//! integrator takes the compositional engine past 60 s and the monolithic one 0.84 s; `AG^10` on a
//! 2x16 network 30 s against 0.02 s; deep disjunctions favour the compositional one's pruning), and
//! both are slow on small finite systems the explicit engine decides in milliseconds.
//!
//! * **Explicit** when a cheap count bounds what it would expand by [`EXPLICIT_STATES`]: Init has
//!   finitely many states (integer and boolean variables over bounded ranges, reals fixed to one
//!   value), and either the tree of runs (initial states times the environment's choices to the
//!   formula's depth) or the state space (every variable an integer or boolean with a bounded
//!   domain, no hidden state) is that small. Its answers are exact. Should it still meet more
//!   states (it stops at the bound), the race runs.
//! * **Race** otherwise: each engine on its own thread with a child of the run's budget; the first
//!   decisive answer (proven, evidence, refuted) cancels the other (HiGHS through its interrupt
//!   callback, the expansions at their next check). Both answers are sound, so the race changes
//!   how long a check takes, never what a verdict means; the result names the engine that decided.

use crate::engine::{CtlStats, ENGINE_STACK, Method, Run};
use crate::error::CtlError;
use std::sync::mpsc;
use trestle_core::Verdict;
use trestle_ir::space::legal_range;
use trestle_ir::system::{DomainExit, VarKind};
use trestle_ir::{RBox, Rational};

/// Most states the explicit engine is chosen for (and expands before the race takes over).
pub const EXPLICIT_STATES: u128 = 20_000;

impl Run<'_> {
    /// Decides with the engine [`Method::Auto`] picks; returns the engine that decided.
    pub(crate) fn auto(&mut self, boxes: &[RBox]) -> Result<(Verdict, Method), CtlError> {
        if self.explicit_states(boxes).is_some_and(|n| n <= EXPLICIT_STATES) {
            match self.explicit_within(boxes, EXPLICIT_STATES as usize) {
                Err(CtlError::Limit(_)) => {}
                other => return other.map(|v| (v, Method::Explicit)),
            }
        }
        self.race(boxes)
    }

    /// An upper bound of the states the explicit engine would expand, or `None` when Init has
    /// infinitely many states (a real variable over an interval) or too many to count.
    pub(crate) fn explicit_states(&self, boxes: &[RBox]) -> Option<u128> {
        let sys = self.sys;
        let mut initial = 0u128;
        for b in boxes {
            let mut n = 1u128;
            for (i, v) in sys.state.iter().enumerate() {
                let (lo, hi) = (b.lo[i].as_ref()?, b.hi[i].as_ref()?);
                let Some((lo, hi)) = legal_range(sys, i, lo, hi) else {
                    n = 0;
                    break;
                };
                if lo != hi {
                    n = n.saturating_mul(values(v.kind, &lo, &hi)?);
                }
            }
            initial = initial.saturating_add(n);
        }
        let choices = self.choices.len() as u128;
        let depth = self.normal.depth(self.normal.root);
        let mut tree = 0u128;
        let mut level = initial;
        for _ in 0..=depth {
            tree = tree.saturating_add(level);
            level = level.saturating_mul(choices);
            if tree > EXPLICIT_STATES {
                break;
            }
        }
        let memoryless = sys.is_memoryless();
        let space = sys.state.iter().try_fold(1u128, |n, v| {
            let (Some(lo), Some(hi)) = (&v.domain.lo, &v.domain.hi) else { return None };
            let bounded = memoryless && sys.domain_exit != DomainExit::Ignore;
            bounded.then(|| values(v.kind, lo, hi).map(|k| n.saturating_mul(k))).flatten()
        });
        Some(space.map_or(tree, |s| s.min(tree)))
    }

    /// The compositional and monolithic engines raced on two threads (module docs).
    fn race(&mut self, boxes: &[RBox]) -> Result<(Verdict, Method), CtlError> {
        let race = self.budget.child();
        let (tx, rx) = mpsc::channel();
        let mut results = std::thread::scope(|scope| {
            for method in [Method::Compositional, Method::Monolithic] {
                let mut run = Run {
                    sys: self.sys,
                    normal: self.normal,
                    choices: self.choices,
                    opts: self.opts,
                    start: self.start,
                    budget: race.clone(),
                    stats: CtlStats::default(),
                };
                let tx = tx.clone();
                let work = move || {
                    let r = match method {
                        Method::Monolithic => run.monolithic(boxes),
                        _ => run.compositional(boxes),
                    };
                    // The receiver outlives the scope: sending cannot fail.
                    let _ = tx.send((method, r, run.stats));
                };
                std::thread::Builder::new()
                    .name(format!("ctl-{}", method.name()))
                    .stack_size(ENGINE_STACK)
                    .spawn_scoped(scope, work)
                    .map_err(|e| CtlError::Internal(format!("cannot start a racing engine: {e}")))?;
            }
            drop(tx);
            let mut results = Vec::with_capacity(2);
            for (method, r, stats) in rx.iter() {
                let decisive = r.as_ref().is_ok_and(|v| v.holds().is_some());
                results.push((method, r, stats));
                if decisive {
                    race.cancel();
                    break;
                }
            }
            Ok::<_, CtlError>(results)
        })?;
        let decided = results.last().is_some_and(|(_, r, _)| r.as_ref().is_ok_and(|v| v.holds().is_some()));
        if decided {
            let (method, verdict, stats) = results.pop().expect("the decisive answer");
            // A stop the other engine met exactly outranks a "true" that leaves such states out.
            let stop = results.into_iter().find_map(|(_, r, _)| match r {
                Err(e @ CtlError::Semantics(_)) => Some(e),
                _ => None,
            });
            let verdict = verdict?;
            if let (Some(stop), Some(true)) = (stop, verdict.holds()) {
                return Err(stop);
            }
            self.stats = stats;
            return Ok((verdict, method));
        }
        // Neither decided: a stop met exactly (the system's error), then an answer (the
        // compositional engine's first), then a limit (an unknown: one engine took the input),
        // then a refusal.
        let rank = |r: &Result<Verdict, CtlError>| match r {
            Err(CtlError::Semantics(_)) => 0,
            Ok(_) => 1,
            Err(e) if e.unknown().is_some() => 2,
            Err(_) => 3,
        };
        results.sort_by_key(|(m, r, _)| (rank(r), *m != Method::Compositional));
        let (method, verdict, stats) =
            results.into_iter().next().ok_or_else(|| CtlError::Internal("no racing engine answered".into()))?;
        self.stats = stats;
        verdict.map(|v| (v, method))
    }
}

/// The values of a variable's kind in `[lo, hi]` (ends legal), when finitely many (`None` for
/// a real interval or a count past u128).
fn values(kind: VarKind, lo: &Rational, hi: &Rational) -> Option<u128> {
    if lo == hi {
        return Some(1);
    }
    if kind == VarKind::Real {
        return None;
    }
    u128::try_from((hi - lo).to_integer()).ok()?.checked_add(1)
}
