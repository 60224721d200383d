//! What the MILP inductiveness check returns, how it is configured, and what it measured.

use crate::model::HighsValue;
use crate::network::BoundOptions;
use std::fmt;
use std::time::Duration;
use trestle_smt::{Answer, UnknownReason, Witness};

/// The outcome of [`crate::check_inductive_milp`]: the shape of [`trestle_smt::Answer`], with the
/// floating-point margin of a proof.
#[derive(Clone, Debug, PartialEq)]
pub enum MilpAnswer {
    /// Every MILP's maximal violation of `Inv'` is below `-threshold` (HiGHS's dual bounds, in
    /// floating point): `margin` is the smallest `-bound` over all of them (`inf` when no MILP had a
    /// feasible point). Floating-point evidence, not a certificate: see the crate documentation.
    Valid { margin: f64 },
    /// A counterexample transition, replayed in exact rational arithmetic.
    Invalid(Witness),
    /// Nothing is known (timeout, a violation within the tolerance, or a solver point that did not
    /// replay exactly). Never a proof.
    Unknown(UnknownReason),
}

impl MilpAnswer {
    pub fn is_valid(&self) -> bool {
        matches!(self, MilpAnswer::Valid { .. })
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

    /// The answer in the Z3 backend's type (the margin is dropped).
    pub fn to_answer(&self) -> Answer {
        match self {
            MilpAnswer::Valid { .. } => Answer::Valid,
            MilpAnswer::Invalid(w) => Answer::Invalid(w.clone()),
            MilpAnswer::Unknown(r) => Answer::Unknown(r.clone()),
        }
    }
}

impl fmt::Display for MilpAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MilpAnswer::Valid { margin } => write!(f, "valid (floating-point MILP evidence, margin {margin:.3e})"),
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
    /// proof: `Valid` needs every bound `< -(tolerance + feasibility_tolerance)`.
    pub tolerance: f64,
    /// HiGHS's primal and MIP feasibility tolerance.
    pub feasibility_tolerance: f64,
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
