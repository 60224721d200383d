//! Temporal formulas over predicates on the state.
//!
//! Bounds follow the notes that define each logic (shared/notes): for bounded CTL, `EX^k`/`AX^k`
//! count exactly k transitions and `EF^k = EX^1 or .. or EX^k` (steps 1..k); for LTL, indices start
//! at 0: `F<=k p = OR_{i=0..k} X^i p`. Each engine expands bounded operators by these rules.

use crate::pred::Pred;

/// A CTL formula over the system's runs; a system satisfies it when every initial state does. Path
/// quantifiers range over the non-deterministic inputs and enabled branches at every step. A bound
/// `Some(k)` counts transitions: `F` and `G` look at steps 1..k (`EF^k = EX^1 or .. or EX^k`), `U`
/// at steps 0..k; `None` is the unbounded operator.
#[derive(Clone, Debug, PartialEq)]
pub enum Ctl {
    /// A state predicate.
    Atom(Pred),
    /// Negation.
    Not(Box<Ctl>),
    /// Conjunction.
    And(Vec<Ctl>),
    /// Disjunction.
    Or(Vec<Ctl>),
    /// `EX^k`: some path, after exactly k transitions.
    EX(u32, Box<Ctl>),
    /// `AX^k`: every path, after exactly k transitions.
    AX(u32, Box<Ctl>),
    /// `EF^k` (or unbounded with `None`).
    EF(Option<u32>, Box<Ctl>),
    /// `AF^k`: on every path, within steps 1..k.
    AF(Option<u32>, Box<Ctl>),
    /// `EG^k`: some path, at every step 1..k.
    EG(Option<u32>, Box<Ctl>),
    /// `AG^k`: every path, at every step 1..k.
    AG(Option<u32>, Box<Ctl>),
    /// `E[a U^k b]`: some path reaches `b` within steps 0..k with `a` at every step before.
    EU(Option<u32>, Box<Ctl>, Box<Ctl>),
    /// `A[a U^k b]`: every path reaches `b` within steps 0..k with `a` at every step before.
    AU(Option<u32>, Box<Ctl>, Box<Ctl>),
}

/// An LTL formula over the runs of the system; a system satisfies it when every run from an initial
/// state does. Bounds index steps from 0 (the current state): `F<=k p = OR_{i=0..k} X^i p`,
/// `G<=k p = AND_{i=0..k} X^i p`; `None` is the unbounded operator.
#[derive(Clone, Debug, PartialEq)]
pub enum Ltl {
    /// A state predicate.
    Atom(Pred),
    /// Negation.
    Not(Box<Ltl>),
    /// Conjunction.
    And(Vec<Ltl>),
    /// Disjunction.
    Or(Vec<Ltl>),
    /// `X^k`: k steps ahead.
    X(u32, Box<Ltl>),
    /// `F<=k`: eventually, at one of steps 0..k.
    F(Option<u32>, Box<Ltl>),
    /// `G<=k`: always, at every step 0..k.
    G(Option<u32>, Box<Ltl>),
    /// `a U<=k b`: `b` at some step `i <= k`, and `a` at every step before `i`.
    U(Option<u32>, Box<Ltl>, Box<Ltl>),
    /// `a R<=k b` (release, the dual of until): `b` at every step 0..k, or `b` at every step up
    /// to and including one `i <= k` where `a` holds.
    R(Option<u32>, Box<Ltl>, Box<Ltl>),
}

impl Ctl {
    /// Whether every temporal operator carries a bound (decidable by bounded unrolling).
    pub fn is_bounded(&self) -> bool {
        match self {
            Ctl::Atom(_) => true,
            Ctl::Not(a) | Ctl::EX(_, a) | Ctl::AX(_, a) => a.is_bounded(),
            Ctl::And(xs) | Ctl::Or(xs) => xs.iter().all(Ctl::is_bounded),
            Ctl::EF(k, a) | Ctl::AF(k, a) | Ctl::EG(k, a) | Ctl::AG(k, a) => k.is_some() && a.is_bounded(),
            Ctl::EU(k, a, b) | Ctl::AU(k, a, b) => k.is_some() && a.is_bounded() && b.is_bounded(),
        }
    }

    /// Largest number of transitions the formula looks ahead (bounded formulas only).
    pub fn depth(&self) -> Option<u32> {
        Some(match self {
            Ctl::Atom(_) => 0,
            Ctl::Not(a) => a.depth()?,
            Ctl::And(xs) | Ctl::Or(xs) => xs.iter().map(Ctl::depth).try_fold(0, |m, d| d.map(|d| m.max(d)))?,
            Ctl::EX(k, a) | Ctl::AX(k, a) => k + a.depth()?,
            Ctl::EF(k, a) | Ctl::AF(k, a) | Ctl::EG(k, a) | Ctl::AG(k, a) => (*k)? + a.depth()?,
            Ctl::EU(k, a, b) | Ctl::AU(k, a, b) => (*k)? + a.depth()?.max(b.depth()?),
        })
    }
}

impl Ltl {
    /// The formula as a state predicate, when it has no temporal operator.
    pub fn state_pred(&self) -> Option<Pred> {
        Some(match self {
            Ltl::Atom(p) => p.clone(),
            Ltl::Not(a) => Pred::Not(Box::new(a.state_pred()?)),
            Ltl::And(xs) => Pred::And(xs.iter().map(Ltl::state_pred).collect::<Option<_>>()?),
            Ltl::Or(xs) => Pred::Or(xs.iter().map(Ltl::state_pred).collect::<Option<_>>()?),
            _ => return None,
        })
    }

    /// `p` of `G p` (unbounded, `p` a state predicate).
    pub fn always_pred(&self) -> Option<Pred> {
        match self {
            Ltl::G(None, p) => p.state_pred(),
            _ => None,
        }
    }

    /// Whether every temporal operator carries a bound (decidable on bounded unrollings).
    pub fn is_bounded(&self) -> bool {
        match self {
            Ltl::Atom(_) => true,
            Ltl::Not(a) | Ltl::X(_, a) => a.is_bounded(),
            Ltl::And(xs) | Ltl::Or(xs) => xs.iter().all(Ltl::is_bounded),
            Ltl::F(k, a) | Ltl::G(k, a) => k.is_some() && a.is_bounded(),
            Ltl::U(k, a, b) | Ltl::R(k, a, b) => k.is_some() && a.is_bounded() && b.is_bounded(),
        }
    }

    /// Largest number of steps ahead the formula reads (bounded formulas only).
    pub fn depth(&self) -> Option<u32> {
        Some(match self {
            Ltl::Atom(_) => 0,
            Ltl::Not(a) => a.depth()?,
            Ltl::And(xs) | Ltl::Or(xs) => xs.iter().map(Ltl::depth).try_fold(0, |m, d| d.map(|d| m.max(d)))?,
            Ltl::X(k, a) => k + a.depth()?,
            Ltl::F(k, a) | Ltl::G(k, a) => (*k)? + a.depth()?,
            Ltl::U(k, a, b) | Ltl::R(k, a, b) => (*k)? + a.depth()?.max(b.depth()?),
        })
    }
}
