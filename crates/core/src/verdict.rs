//! The one verdict every engine returns.
//!
//! Engines differ in what they decide (a candidate invariant, a CTL or LTL formula, safety of a
//! discrete policy) and keep their own word for it (`safe`, `not-inductive`, `true`), but what a
//! verdict *rests on* is one of four things, and only that decides the exit code and what a
//! reader may rely on:
//!
//! - [`Verdict::Proven`]: an exact argument (Z3 over exact rationals, outward-rounded bounds,
//!   exact enumeration), with a certificate `trestle certify` re-checks when the method writes one;
//! - [`Verdict::Evidence`]: a floating-point solver's answer (a MILP found infeasible) with its
//!   margin: never called proven;
//! - [`Verdict::Refuted`]: a trace replayed exactly, or [`Verdict::RefutedValidated`]: a run
//!   through irrational values (tanh, sin, ...) from an exact start whose last state's
//!   high-precision enclosure lies strictly on the wrong side;
//! - [`Verdict::Unknown`]: nothing, with a typed reason.

use crate::answer::Unknown;
use crate::result::Status;
use crate::trace::Trace;
use crate::validated::ValidatedTrace;
use serde_json::Value;

/// A proof that `trestle certify` re-checks from the system alone: the JSON document the method
/// wrote (its `format` field names the checker).
#[derive(Clone, Debug, PartialEq)]
pub struct Certificate(pub Value);

impl Certificate {
    /// The document's `format` (`trestle-certificate/1`, ...), when it has one.
    pub fn format(&self) -> Option<&str> {
        self.0.get("format").and_then(Value::as_str)
    }

    /// The document, pretty-printed (what certificate files hold).
    pub fn to_pretty_json(&self) -> String {
        serde_json::to_string_pretty(&self.0).expect("JSON values always serialise")
    }
}

/// What a run decided.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Holds, by an exact argument; `certificate` when the method writes one.
    Proven { certificate: Option<Certificate> },
    /// Holds according to floating-point evidence: `margin` is how far below the violation
    /// threshold the solver's bound stayed. Not a proof.
    Evidence { margin: f64 },
    /// Fails: `trace` was replayed exactly. Branching-time refutations may need more than one run
    /// from the refuting state (every successor of `EX p`'s state violates `p`): `others`.
    Refuted { trace: Trace, others: Vec<Trace> },
    /// Fails: a run from an exact start through values with no rational form, its violation
    /// established by enclosures ([`crate::validate`]); `certify` re-validates it.
    RefutedValidated { trace: ValidatedTrace },
    /// Nothing is claimed.
    Unknown(Unknown),
}

impl Verdict {
    /// Proven without a certificate file.
    pub fn proven() -> Verdict {
        Verdict::Proven { certificate: None }
    }

    /// Proven, with its certificate.
    pub fn certified(certificate: Value) -> Verdict {
        Verdict::Proven { certificate: Some(Certificate(certificate)) }
    }

    /// Refuted by one replayed trace.
    pub fn refuted(trace: Trace) -> Verdict {
        Verdict::Refuted { trace, others: Vec::new() }
    }

    pub fn status(&self) -> Status {
        match self {
            Verdict::Proven { .. } => Status::Proven,
            Verdict::Evidence { .. } => Status::Evidence,
            Verdict::Refuted { .. } | Verdict::RefutedValidated { .. } => Status::Refuted,
            Verdict::Unknown(_) => Status::Unknown,
        }
    }

    /// `Some(true)` when it holds (proven or on evidence), `Some(false)` when refuted.
    pub fn holds(&self) -> Option<bool> {
        match self {
            Verdict::Proven { .. } | Verdict::Evidence { .. } => Some(true),
            Verdict::Refuted { .. } | Verdict::RefutedValidated { .. } => Some(false),
            Verdict::Unknown(_) => None,
        }
    }

    pub fn is_proven(&self) -> bool {
        matches!(self, Verdict::Proven { .. })
    }

    pub fn trace(&self) -> Option<&Trace> {
        match self {
            Verdict::Refuted { trace, .. } => Some(trace),
            _ => None,
        }
    }

    /// The validated run of a refutation through irrational values.
    pub fn validated(&self) -> Option<&ValidatedTrace> {
        match self {
            Verdict::RefutedValidated { trace } => Some(trace),
            _ => None,
        }
    }

    pub fn is_refuted(&self) -> bool {
        self.holds() == Some(false)
    }

    pub fn certificate(&self) -> Option<&Certificate> {
        match self {
            Verdict::Proven { certificate } => certificate.as_ref(),
            _ => None,
        }
    }

    pub fn margin(&self) -> Option<f64> {
        match self {
            Verdict::Evidence { margin } => Some(*margin),
            _ => None,
        }
    }

    pub fn unknown(&self) -> Option<&Unknown> {
        match self {
            Verdict::Unknown(u) => Some(u),
            _ => None,
        }
    }
}

impl From<Unknown> for Verdict {
    fn from(u: Unknown) -> Verdict {
        Verdict::Unknown(u)
    }
}
