//! What a synthesis run returns.

use trestle_bridge::{Condition, InductiveRun};
use trestle_core::{ReplayError, Trace, Verdict, Witness};
use trestle_ir::System;
use trestle_ir::{FBox, Rational};

/// A run from Init replayed exactly through the IR's step (`sim::step::<Rational>`).
#[derive(Clone, Debug, PartialEq)]
pub struct ExactRun {
    /// `s_0 .. s_k`; `s_0` satisfies Init exactly.
    pub states: Vec<Vec<Rational>>,
    /// The controllers' exact actions at `s_0 .. s_{k-1}`.
    pub actions: Vec<Vec<Rational>>,
    /// The environment's choices at each step.
    pub nondet: Vec<Vec<Rational>>,
    /// The branch taken at each step.
    pub branches: Vec<usize>,
}

impl ExactRun {
    /// The run as a [`Trace`], rebuilt by [`Trace::simulate`] from its start state and choices
    /// (the one exact replay every engine's traces go through); an error if it disagrees with the
    /// run in any state or action.
    pub fn to_trace(&self, sys: &System) -> Result<Trace, ReplayError> {
        let trace = Trace::simulate(
            sys,
            self.states[0].clone(),
            self.nondet.iter().cloned().zip(self.branches.iter().copied()),
        )?;
        let claimed = Trace {
            states: self.states.clone(),
            hidden: trace.hidden.clone(),
            steps: trace.steps.clone(),
            loop_back: None,
        };
        if trace.steps.iter().zip(&self.actions).any(|(s, a)| s.actions != *a) {
            return Err(ReplayError::Shape("the run's actions differ from the controllers' exact actions".into()));
        }
        claimed.replay(sys)?;
        Ok(trace)
    }

    /// The run's last step (the one that leaves Safe) as a one-step witness; `None` for a run of
    /// length 0 (a state of Init outside Safe).
    pub fn last_step(&self) -> Option<Witness> {
        let k = self.actions.len().checked_sub(1)?;
        Some(Witness {
            state: self.states[k].clone(),
            actions: self.actions[k].clone(),
            nondet: self.nondet[k].clone(),
            branch: self.branches[k],
            next: self.states[k + 1].clone(),
        })
    }
}

/// The best run found from Init toward leaving Safe.
#[derive(Clone, Debug, PartialEq)]
pub struct Trajectory {
    /// `s_0 .. s_k` as f64 (the nearest floats of the exact states when `exact` is given), up to
    /// the step where it gets farthest out (or closest to the border).
    pub states: Vec<Vec<f64>>,
    /// How far outside Safe the last state is, in the max norm (<= 0: still inside; then minus
    /// the distance to the border).
    pub distance: f64,
    /// Present when the run leaves Safe and the exact replay confirms it: a refutation.
    pub exact: Option<ExactRun>,
    /// Present when the run (through values of no rational form) leaves Safe by its validated
    /// enclosures: a refutation.
    pub validated: Option<trestle_core::ValidatedTrace>,
}

/// Costs of a run. All but the times are deterministic (independent of the thread count).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SynthStats {
    /// Cells of the initial grid.
    pub initial_cells: usize,
    /// Cells created in all (initial grid and halves).
    pub cells: usize,
    /// One-step image computations (each: controller bounds and successor boxes of one cell).
    pub images: usize,
    /// Rounds of the fixed-point iteration (closures in the forward search).
    pub rounds: usize,
    /// Bisections of cells.
    pub splits: usize,
    /// Cells dropped from the candidate set.
    pub dropped: usize,
    /// Cells of the invariant before merging.
    pub invariant_cells: usize,
    /// Boxes of the invariant after merging and growing.
    pub invariant_boxes: usize,
    /// A limit that stopped refinement somewhere, even when the run succeeded.
    pub budget_hit: Option<String>,
    /// Environment checks of the proof plus the checks `Init => I` and `I => Safe` (and the
    /// initial `Init => Safe`).
    pub smt_queries: usize,
    /// Of those, decided by Z3 (the others by the closed-form fast path).
    pub z3_queries: usize,
    pub fast_path_decided: usize,
    /// Controller bound computations of the proof.
    pub bound_queries: usize,
    /// Splits the bridge engine needed (0 when the cells are proven as they are).
    pub proof_splits: usize,
    /// Cells (or parts) the proof decided exactly (Z3 with the networks on the cell).
    pub exact_queries: usize,
    /// Simulated runs of the counterexample search.
    pub simulations: usize,
    pub seconds: f64,
    pub search_seconds: f64,
    pub proof_seconds: f64,
    pub attack_seconds: f64,
}

#[derive(Clone, Debug)]
pub struct SynthReport {
    /// Proven with the invariant's certificate (`trestle-bridge-certificate/1`, or `/2` with
    /// exact clauses), refuted by a run from Init that leaves Safe, or unknown.
    pub verdict: Verdict,
    /// Why the verdict is what it is, in one sentence.
    pub reason: String,
    /// The invariant: merged boxes (empty when none was found).
    pub invariant: Vec<FBox>,
    /// The boxes the proof covered the invariant with: its cells before merging, and the boxes
    /// grown along the field as a whole.
    pub cells: Vec<FBox>,
    /// The bridge engine's run on the invariant.
    pub proof: Option<InductiveRun>,
    /// `Init => I` and `I => Safe`, when checked.
    pub init_condition: Option<Condition>,
    pub safe_condition: Option<Condition>,
    /// Cells dropped from the candidate set (or, forward, those whose images leave Safe).
    pub dropped: Vec<FBox>,
    /// The dropped cells that meet Init: where Init could not be kept.
    pub dropped_init: Vec<FBox>,
    /// The best run from Init toward leaving Safe (searched when no invariant was proven).
    pub trajectory: Option<Trajectory>,
    pub stats: SynthStats,
    /// A sampled-data system's flow settings (`[flow]`), which its certificates record.
    pub flow: Option<trestle_bridge::certificate::FlowJson>,
}

impl SynthReport {
    /// The engine's word for the verdict: `safe`, `unsafe` or `unknown`.
    pub fn word(&self) -> &'static str {
        match self.verdict {
            Verdict::Proven { .. } | Verdict::Evidence { .. } => "safe",
            Verdict::Refuted { .. } | Verdict::RefutedValidated { .. } => "unsafe",
            Verdict::Unknown(_) => "unknown",
        }
    }

    /// The invariant's certificate, when proven.
    pub fn certificate(&self) -> Option<&serde_json::Value> {
        self.verdict.certificate().map(|c| &c.0)
    }

    /// The invariant's certificate as the bridge engine's proof type, when proven.
    pub fn proof(&self) -> Option<trestle_bridge::certificate::ProofJson> {
        serde_json::from_value(self.certificate()?.clone()).ok()
    }
}

/// Reported as the run goes.
#[derive(Clone, Copy, Debug)]
pub enum SynthProgress {
    Search { round: usize, cells: usize, kept: usize, images: usize },
    Proof(trestle_bridge::Progress),
    Attack { simulations: usize },
}
