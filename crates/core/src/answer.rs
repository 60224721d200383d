//! What one query returns: `Valid`, `Invalid` with a witness that was replayed exactly, or
//! `Unknown` with the reason. Answers are data, never strings or panics; `Unknown` is never a proof.

use std::fmt;

/// The outcome of one query, generic in its witness: by default a one-step [`crate::Witness`]
/// (a transition, or a single state for an implication between state predicates).
#[derive(Clone, Debug, PartialEq)]
pub enum Answer<W = crate::Witness> {
    /// The implication holds for everything the query ranges over.
    Valid,
    /// It does not: a concrete counterexample, re-checked in exact rational arithmetic.
    Invalid(W),
    /// Nothing is known. Never treat it as `Valid`.
    Unknown(Unknown),
}

/// The three kinds of [`Answer`], for statistics and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnswerKind {
    Valid,
    Invalid,
    Unknown,
}

impl<W> Answer<W> {
    pub fn kind(&self) -> AnswerKind {
        match self {
            Answer::Valid => AnswerKind::Valid,
            Answer::Invalid(_) => AnswerKind::Invalid,
            Answer::Unknown(_) => AnswerKind::Unknown,
        }
    }

    pub fn is_valid(&self) -> bool {
        matches!(self, Answer::Valid)
    }

    pub fn is_invalid(&self) -> bool {
        matches!(self, Answer::Invalid(_))
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self, Answer::Unknown(_))
    }

    pub fn witness(&self) -> Option<&W> {
        match self {
            Answer::Invalid(w) => Some(w),
            _ => None,
        }
    }

    /// The same answer with its witness transformed.
    pub fn map<V>(self, f: impl FnOnce(W) -> V) -> Answer<V> {
        match self {
            Answer::Valid => Answer::Valid,
            Answer::Invalid(w) => Answer::Invalid(f(w)),
            Answer::Unknown(r) => Answer::Unknown(r),
        }
    }
}

/// Why a query or a run ended without a verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unknown {
    /// A time limit was reached.
    Timeout,
    /// A solver's resource limit (`rlimit`, node limit) was reached.
    ResourceLimit,
    /// The run ran out of memory (a solver could not allocate): nothing is claimed.
    OutOfMemory,
    /// The run was interrupted (SIGINT, SIGTERM) or cancelled (a race's loser).
    Interrupted,
    /// A solver answered `unknown` for another reason (incomplete theory, ...): its reason.
    Solver(String),
    /// A solver's counterexample has irrational values (possible with nonlinear arithmetic) and no
    /// rational counterexample was found near it.
    IrrationalModel(String),
    /// A solver's counterexample failed the exact replay (an encoding disagreement): what failed.
    ReplayFailed(String),
    /// A decision procedure that is incomplete on its own (the fast path, bound propagation) could
    /// not decide.
    Undecided,
    /// An incomplete method left the question open: why (boxes it could not separate, bounds too
    /// loose at the minimum width, ...).
    Incomplete(String),
    /// A configured limit other than time (splits, boxes, depth, MILP count) was reached: which.
    Limit(String),
    /// The method cannot take this system or property (a feature it does not handle): what, and
    /// which methods can.
    Unsupported(String),
    /// Runs of the system may stop (no branch enabled, a successor outside the domains) and the
    /// method could not rule it out where it matters: why.
    RunsMayStop(String),
    /// Bounds overflowed f64 (weights or boxes too large): where.
    Overflow(String),
}

impl Unknown {
    /// A short stable name for the reason's kind (`time-limit`, `limit`, `unsupported`, ...), for
    /// JSON and the results store.
    pub fn kind(&self) -> &'static str {
        match self {
            Unknown::Timeout => "time-limit",
            Unknown::ResourceLimit => "resource-limit",
            Unknown::OutOfMemory => "out-of-memory",
            Unknown::Interrupted => "interrupted",
            Unknown::Solver(_) => "solver",
            Unknown::IrrationalModel(_) => "irrational-model",
            Unknown::ReplayFailed(_) => "replay-failed",
            Unknown::Undecided | Unknown::Incomplete(_) => "undecided",
            Unknown::Limit(_) => "limit",
            Unknown::Unsupported(_) => "unsupported",
            Unknown::RunsMayStop(_) => "runs-may-stop",
            Unknown::Overflow(_) => "overflow",
        }
    }
}

impl fmt::Display for Unknown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unknown::Timeout => write!(f, "time limit reached"),
            Unknown::ResourceLimit => write!(f, "resource limit reached"),
            Unknown::OutOfMemory => write!(f, "out of memory"),
            Unknown::Interrupted => write!(f, "interrupted"),
            Unknown::Solver(r) => write!(f, "solver answered unknown: {r}"),
            Unknown::IrrationalModel(r) => write!(f, "counterexample with irrational values: {r}"),
            Unknown::ReplayFailed(r) => write!(f, "counterexample failed exact replay: {r}"),
            Unknown::Undecided => write!(f, "undecided"),
            Unknown::Incomplete(r) => write!(f, "{r}"),
            Unknown::Limit(what) => write!(f, "limit reached: {what}"),
            Unknown::Unsupported(what) => write!(f, "unsupported: {what}"),
            Unknown::RunsMayStop(why) => write!(f, "runs may stop: {why}"),
            Unknown::Overflow(what) => write!(f, "bounds overflowed: {what}"),
        }
    }
}
