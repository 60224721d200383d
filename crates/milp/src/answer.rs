//! What the MILP inductiveness check returns, how it is configured, and what it measured.

use crate::bounds::BoundOptions;
use crate::model::HighsValue;
use std::fmt;
use std::time::Duration;
use trestle_core::Witness;

/// The outcome of [`crate::check_inductive_milp`]. Deliberately not [`trestle_core::Answer`]: a MILP
/// never proves anything exactly, so there is no conversion to `Answer::Valid`.
#[derive(Clone, Debug, PartialEq)]
pub enum MilpAnswer {
    /// Every MILP's maximal violation of `Inv'` is below `-threshold` (HiGHS's dual bounds, in
    /// floating point): `margin` is the smallest `-bound` over all of them (`inf` when no MILP had a
    /// feasible point). Floating-point **evidence, not a proof**: a caller that reports a verdict
    /// must confirm it exactly or report it as evidence (see the crate documentation).
    Evidence { margin: f64 },
    /// A counterexample transition, replayed in exact rational arithmetic.
    Invalid(Witness),
    /// Nothing is known. Never a proof.
    Unknown(MilpUnknown),
}

/// Why a check ended without evidence or counterexample.
#[derive(Clone, Debug, PartialEq)]
pub enum MilpUnknown {
    /// The time limit of one MILP or of the whole check was reached.
    Timeout,
    /// The largest violation (HiGHS's bound) is not below `-threshold`, and no solution replayed
    /// as an exact counterexample (e.g. a successor exactly on a face).
    NoMargin { bound: f64, threshold: f64 },
    /// HiGHS's solution violates the invariant in floating point but not exactly (or not under
    /// the lowest-index argmax rule): what failed.
    ReplayFailed(String),
    /// The model's values are too large for HiGHS's absolute tolerances
    /// ([`crate::numerics::Prepared::out_of_range`]): no evidence either way.
    OutOfRange(String),
    /// Any other HiGHS status, or no bound at all.
    Solver(String),
}

impl fmt::Display for MilpUnknown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MilpUnknown::Timeout => write!(f, "time limit reached"),
            MilpUnknown::NoMargin { bound, threshold } => write!(
                f,
                "the largest violation of the invariant is {bound:.3e}, not below -{threshold:.1e}, and no solution \
                 replayed as an exact counterexample"
            ),
            MilpUnknown::ReplayFailed(e) => write!(f, "the solver's violation did not replay exactly: {e}"),
            MilpUnknown::OutOfRange(e) => write!(f, "numerically out of range for HiGHS: {e}"),
            MilpUnknown::Solver(e) => write!(f, "HiGHS: {e}"),
        }
    }
}

impl MilpAnswer {
    pub fn is_evidence(&self) -> bool {
        matches!(self, MilpAnswer::Evidence { .. })
    }

    pub fn is_invalid(&self) -> bool {
        matches!(self, MilpAnswer::Invalid(_))
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self, MilpAnswer::Unknown(_))
    }

    pub fn witness(&self) -> Option<&Witness> {
        match self {
            MilpAnswer::Invalid(w) => Some(w),
            _ => None,
        }
    }
}

impl fmt::Display for MilpAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MilpAnswer::Evidence { margin } => {
                write!(f, "no violation found (floating-point MILP evidence, not a proof; margin {margin:.3e})")
            }
            MilpAnswer::Invalid(w) => write!(f, "invalid: {w}"),
            MilpAnswer::Unknown(r) => write!(f, "unknown: {r}"),
        }
    }
}

/// Configuration of the check (builder style).
#[derive(Clone, Debug, PartialEq)]
pub struct MilpOptions {
    /// Time limit of each MILP (HiGHS `time_limit`).
    pub time_limit: Option<Duration>,
    /// Time limit of the whole check; MILPs not started by then make the answer `Unknown(Timeout)`.
    pub total_time_limit: Option<Duration>,
    /// Margin required on top of the feasibility tolerance before a maximal violation counts as a
    /// proof: `Evidence` needs every bound `< -(tolerance + feasibility_tolerance)`.
    pub tolerance: f64,
    /// HiGHS's primal and MIP feasibility tolerance.
    pub feasibility_tolerance: f64,
    /// The margin by which a choice of argmax must beat a lower index when a maximum that sat on
    /// a tie did not replay and counterexamples are searched past the ties
    /// ([`crate::argmax::Strictness::Gap`]); never used for evidence.
    pub tie_gap: f64,
    /// How the pre-activation bounds (big-M constants) are computed.
    pub bounds: BoundOptions,
    /// Largest number of boxes accepted in the invariant's box union.
    pub max_boxes: usize,
    /// Largest number of MILPs one check may need (boxes x selector values x input vertices x
    /// branches x faces).
    pub max_milps: usize,
    /// HiGHS `threads` (`None`: its default).
    pub threads: Option<i32>,
    /// Further HiGHS options, passed to every solve.
    pub highs_options: Vec<(String, HighsValue)>,
}

impl Default for MilpOptions {
    fn default() -> MilpOptions {
        MilpOptions {
            time_limit: None,
            total_time_limit: None,
            tolerance: 1e-6,
            feasibility_tolerance: 1e-6,
            tie_gap: 1e-5,
            bounds: BoundOptions::default(),
            max_boxes: 64,
            max_milps: 10_000,
            threads: None,
            highs_options: Vec::new(),
        }
    }
}

impl MilpOptions {
    pub fn with_time_limit(mut self, t: Duration) -> MilpOptions {
        self.time_limit = Some(t);
        self
    }

    pub fn with_total_time_limit(mut self, t: Duration) -> MilpOptions {
        self.total_time_limit = Some(t);
        self
    }

    pub fn with_tolerance(mut self, t: f64) -> MilpOptions {
        self.tolerance = t;
        self
    }

    pub fn with_feasibility_tolerance(mut self, t: f64) -> MilpOptions {
        self.feasibility_tolerance = t;
        self
    }

    pub fn with_bounds(mut self, b: BoundOptions) -> MilpOptions {
        self.bounds = b;
        self
    }

    /// The violation a bound must stay below (negated) to count as a proof.
    pub fn threshold(&self) -> f64 {
        self.tolerance + self.feasibility_tolerance
    }
}

/// One MILP (or one objective decided by interval bounds without a solver call).
#[derive(Clone, Debug, PartialEq)]
pub struct MilpRecord {
    /// Which box, selector values, input vertex, branch and objective it was.
    pub label: String,
    pub variables: usize,
    pub binaries: usize,
    pub constraints: usize,
    /// `Optimal`, `Infeasible`, `Limit(..)`, `bounds` (decided without HiGHS), ...
    pub status: String,
    /// Upper bound of the maximal violation (HiGHS's dual bound, or the interval bound).
    pub bound: Option<f64>,
    /// Violation at HiGHS's solution.
    pub primal: Option<f64>,
    pub time: Duration,
    /// Coefficients moved into interval slacks for this solve.
    pub moved_coefficients: usize,
}

/// What a check measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MilpStats {
    /// MILPs handed to HiGHS.
    pub milps: usize,
    /// Objectives decided by interval bounds alone.
    pub decided_by_bounds: usize,
    /// Binaries / constraints: the sum over the MILPs solved, and the largest single MILP.
    pub binaries: usize,
    pub constraints: usize,
    pub max_binaries: usize,
    pub max_constraints: usize,
    /// Time in HiGHS, and in building the models (bounds and encoding).
    pub solve_time: Duration,
    pub build_time: Duration,
    /// Candidate counterexamples replayed exactly, and how many replayed successfully.
    pub replays: usize,
    pub replayed: usize,
    /// MILPs re-solved with argmax ties excluded by [`MilpOptions::tie_gap`] to find a
    /// counterexample past a tie.
    pub tie_searches: usize,
    /// Coefficients below [`crate::numerics::MIN_COEFFICIENT`] moved into interval slacks (summed
    /// over the solves).
    pub moved_coefficients: usize,
    pub records: Vec<MilpRecord>,
}

impl MilpStats {
    pub(crate) fn record(&mut self, r: MilpRecord, solved: bool) {
        if solved {
            self.milps += 1;
            self.binaries += r.binaries;
            self.constraints += r.constraints;
            self.max_binaries = self.max_binaries.max(r.binaries);
            self.max_constraints = self.max_constraints.max(r.constraints);
            self.solve_time += r.time;
            self.moved_coefficients += r.moved_coefficients;
        } else {
            self.decided_by_bounds += 1;
        }
        self.records.push(r);
    }
}

/// The answer and the statistics of one check.
#[derive(Clone, Debug, PartialEq)]
pub struct MilpCheck {
    pub answer: MilpAnswer,
    pub stats: MilpStats,
}
