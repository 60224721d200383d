//! Temporal formulas over predicates on the state.
//!
//! Bounds follow the notes that define each logic (shared/notes): for bounded CTL, `EX^k`/`AX^k`
//! count exactly k transitions and `EF^k = EX^1 or .. or EX^k` (steps 1..k); for LTL, indices start
//! at 0: `F<=k p = OR_{i=0..k} X^i p`. Each engine expands bounded operators by these rules.

use crate::pred::Pred;

#[derive(Clone, Debug, PartialEq)]
pub enum Ctl {
    Atom(Pred),
    Not(Box<Ctl>),
    And(Vec<Ctl>),
    Or(Vec<Ctl>),
    /// `EX^k`: some path, after exactly k transitions.
    EX(u32, Box<Ctl>),
    /// `AX^k`: every path, after exactly k transitions.
    AX(u32, Box<Ctl>),
    /// `EF^k` (or unbounded with `None`).
    EF(Option<u32>, Box<Ctl>),
    AF(Option<u32>, Box<Ctl>),
    EG(Option<u32>, Box<Ctl>),
    AG(Option<u32>, Box<Ctl>),
    EU(Option<u32>, Box<Ctl>, Box<Ctl>),
    AU(Option<u32>, Box<Ctl>, Box<Ctl>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ltl {
    Atom(Pred),
    Not(Box<Ltl>),
    And(Vec<Ltl>),
    Or(Vec<Ltl>),
    /// `X^k`: k steps ahead.
    X(u32, Box<Ltl>),
    F(Option<u32>, Box<Ltl>),
    G(Option<u32>, Box<Ltl>),
    U(Option<u32>, Box<Ltl>, Box<Ltl>),
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

    pub fn is_bounded(&self) -> bool {
        match self {
            Ltl::Atom(_) => true,
            Ltl::Not(a) | Ltl::X(_, a) => a.is_bounded(),
            Ltl::And(xs) | Ltl::Or(xs) => xs.iter().all(Ltl::is_bounded),
            Ltl::F(k, a) | Ltl::G(k, a) => k.is_some() && a.is_bounded(),
            Ltl::U(k, a, b) | Ltl::R(k, a, b) => k.is_some() && a.is_bounded() && b.is_bounded(),
        }
    }

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
