//! What a check returns: `Valid`, `Invalid` with an exactly replayed witness, or `Unknown` with the
//! reason. Answers are data, never strings or panics; `Unknown` is never a proof.

use std::fmt;
use trestle_ir::Rational;
use trestle_ir::num::display_rational;

/// The outcome of one query.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// The implication holds (for every state, action, input and branch the query ranges over).
    Valid,
    /// It does not: a concrete counterexample, re-checked in exact rational arithmetic.
    Invalid(Witness),
    /// Nothing is known. Never treat it as `Valid`.
    Unknown(UnknownReason),
}

/// The three kinds of [`Answer`], for statistics and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnswerKind {
    Valid,
    Invalid,
    Unknown,
}

impl Answer {
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

    pub fn witness(&self) -> Option<&Witness> {
        match self {
            Answer::Invalid(w) => Some(w),
            _ => None,
        }
    }
}

/// A counterexample in exact rationals.
///
/// For a bridge or inductiveness query it is one transition: `state`, the `actions` (in
/// `System::actions` order), the non-deterministic inputs (`System::nondet` order), the branch
/// taken and the successor `next` (computed exactly from the branch's updates). For an
/// implication between state predicates only `state` is meaningful; `actions`, `nondet` and
/// `next` are empty and `branch` is 0.
#[derive(Clone, Debug, PartialEq)]
pub struct Witness {
    pub state: Vec<Rational>,
    pub actions: Vec<Rational>,
    pub nondet: Vec<Rational>,
    pub branch: usize,
    pub next: Vec<Rational>,
}

impl Witness {
    /// A witness of an implication between state predicates: a single state.
    pub fn state_only(state: Vec<Rational>) -> Witness {
        Witness { state, actions: Vec::new(), nondet: Vec::new(), branch: 0, next: Vec::new() }
    }
}

impl fmt::Display for Witness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |xs: &[Rational]| xs.iter().map(display_rational).collect::<Vec<_>>().join(", ");
        write!(f, "state [{}]", list(&self.state))?;
        if !self.next.is_empty() {
            write!(
                f,
                ", actions [{}], nondet [{}], branch {}, next [{}]",
                list(&self.actions),
                list(&self.nondet),
                self.branch,
                list(&self.next)
            )?;
        }
        Ok(())
    }
}

/// Why a query ended without a verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnknownReason {
    /// The per-query time limit was reached.
    Timeout,
    /// The per-query resource limit (`rlimit`) was reached.
    ResourceLimit,
    /// Z3 answered `unknown` for another reason (incomplete theory, interrupted, ...): its reason.
    Solver(String),
    /// Z3 found a counterexample whose values are irrational (algebraic numbers, possible with
    /// nonlinear arithmetic) and no rational counterexample was found near it.
    IrrationalModel(String),
    /// Z3's counterexample failed the exact replay (an encoding disagreement): what failed.
    ReplayFailed(String),
    /// The fast path on its own could not decide the query (only from [`crate::FastPath`]).
    Undecided,
}

impl fmt::Display for UnknownReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnknownReason::Timeout => write!(f, "timeout"),
            UnknownReason::ResourceLimit => write!(f, "resource limit reached"),
            UnknownReason::Solver(r) => write!(f, "z3 answered unknown: {r}"),
            UnknownReason::IrrationalModel(r) => write!(f, "counterexample with irrational values: {r}"),
            UnknownReason::ReplayFailed(r) => write!(f, "counterexample failed exact replay: {r}"),
            UnknownReason::Undecided => write!(f, "fast path undecided"),
        }
    }
}
