//! Bounded model checking over the same IR: the closed loop unrolled k steps in one incremental
//! Z3 query, the network copied once per step (the global encoding the paper compares with).
//! Depth k asks for a start state whose run reaches an unsafe state at step k; the states of the
//! path are asserted pairwise distinct (a shortest counterexample is loop-free), which also makes
//! BMC complete: when no loop-free run of k steps exists at all, every reachable state was
//! already reached within k - 1 steps, so the system is safe.

use crate::model::Discrete;
use crate::{CegarError, Outcome, Stats, Verdict, confirm_unsafe, deadline};
use std::time::{Duration, Instant};
use trestle_core::{Trace, Unknown};
use trestle_ir::{Rational, sim};
use trestle_smt::{CheckerConfig, PathAnswer, PathQuery};

#[derive(Clone, Debug)]
pub struct BmcOptions {
    /// The deepest unrolling tried (unknown beyond it).
    pub max_depth: usize,
    pub timeout: Option<Duration>,
}

impl Default for BmcOptions {
    fn default() -> Self {
        BmcOptions { max_depth: 100, timeout: None }
    }
}

pub fn check_bmc(d: &Discrete<'_>, opts: &BmcOptions) -> Result<Outcome, CegarError> {
    let start = Instant::now();
    let deadline = deadline(opts.timeout);
    let cfg = CheckerConfig::new().without_timeout().with_deadline(deadline);
    let mut stats = Stats::default();
    let mut q = PathQuery::new(d.sys, cfg);
    let s0 = q.add_state();
    q.assert_pred(s0, &d.start, true)?;
    let mut copies = vec![s0];
    let verdict = 'depths: {
        for k in 0..=opts.max_depth {
            if k > 0 {
                let next = q.add_state();
                q.assert_step(copies[k - 1], next)?;
                for &c in &copies {
                    q.assert_distinct(c, next);
                }
                copies.push(next);
                // Is there a loop-free run of k steps at all?
                stats.smt_calls += 1;
                match q.check() {
                    PathAnswer::Unsat => break 'depths Verdict::Safe,
                    PathAnswer::Unknown(u) => break 'depths Verdict::Unknown(u),
                    PathAnswer::Sat(_) => {}
                }
            }
            stats.depth = k;
            q.push();
            q.assert_pred(copies[k], &d.unsafe_, true)?;
            stats.smt_calls += 1;
            let answer = q.check();
            q.pop();
            match answer {
                PathAnswer::Unsat => {}
                PathAnswer::Unknown(u) => break 'depths Verdict::Unknown(u),
                PathAnswer::Sat(states) => break 'depths Verdict::Unsafe(rebuild(d, &states)?),
            }
        }
        Verdict::Unknown(Unknown::Solver(format!("no counterexample up to depth {}", opts.max_depth)))
    };
    if let Verdict::Unsafe(t) = &verdict {
        confirm_unsafe(d, t)?;
    }
    if matches!(verdict, Verdict::Unknown(_)) && deadline.is_some_and(|t| Instant::now() >= t) {
        stats.seconds = start.elapsed().as_secs_f64();
        return Ok(Outcome {
            verdict: Verdict::Unknown(Unknown::Timeout),
            predicates: Vec::new(),
            invariant: None,
            stats,
        });
    }
    stats.seconds = start.elapsed().as_secs_f64();
    Ok(Outcome { verdict, predicates: Vec::new(), invariant: None, stats })
}

/// The run through Z3's states, the branch of each step found by the exact simulator.
fn rebuild(d: &Discrete<'_>, states: &[Vec<Rational>]) -> Result<Trace, CegarError> {
    let mut memory = sim::initial_memory::<Rational>(d.sys);
    let mut branches = Vec::new();
    for w in states.windows(2) {
        let succ = sim::successors(d.sys, &w[0], &mut memory, &[])
            .map_err(|e| CegarError::Internal(format!("simulating a BMC path: {e}")))?;
        let b = succ
            .next
            .iter()
            .find(|(_, next)| *next == w[1])
            .map(|(b, _)| *b)
            .ok_or_else(|| CegarError::Internal("a BMC step is not a step of the simulator".into()))?;
        branches.push(b);
    }
    Trace::simulate(d.sys, states[0].clone(), branches.into_iter().map(|b| (Vec::new(), b)))
        .map_err(|e| CegarError::Internal(format!("the BMC path does not simulate: {e}")))
}
