//! Bounded CTL for neural agents in branching environments (the bounded-CTL paper and its notes,
//! shared/notes/bounded-ctl.md): `EX^k`, `AX^k`, `EF^k`, `AF^k`, `EG^k`, `AG^k`, bounded
//! `E[p U q]` / `A[p U q]`, boolean combinations and linear atoms over the state.
//!
//! * [`normal`]: the negation of the property in normal form (negation at the atoms, derived
//!   operators unfolded into one-step `EX`/`AX`, a DAG).
//! * [`exact`]: the environment's choices (finite inputs x distinct branches) and the exact
//!   evaluator through `ir::sim`: the explicit engine, and the gate of every counterexample.
//! * [`encode`]: the MILP encodings over `trestle-milp` (networks with big-M constants from sound
//!   bounds, argmax one-hot pruned by bounds, selectors, guarded branches), monolithic (one model,
//!   binaries at `Or`/`EX`) and compositional (a set of models generated lazily depth first,
//!   pruned by bounds).
//! * [`engine`]: [`check_ctl`] with [`Method::Compositional`], [`Method::Monolithic`] or
//!   [`Method::Explicit`].
//!
//! # What a verdict rests on
//! * `false`: an initial state that satisfies the negation in exact arithmetic, with witness
//!   runs (the path an `EX` takes, every branch of an `AX`) replayed by `Trace::replay`. A MILP
//!   solution is only a candidate.
//! * `true` from a MILP engine: floating-point evidence (HiGHS's infeasibility, or its dual bound
//!   on the relaxation of the atoms above `tolerance + feasibility_tolerance`; the smallest is the
//!   margin), unless the outward-rounded interval bounds alone ruled out every job (exact).
//! * `true` from the explicit engine: exact, every initial state evaluated in rationals.
//!
//! Semantics: argmax by the lowest index (the MILP closure may also pick a tied higher index, a
//! superset, so ties only cost evidence); strict atoms as their closures in the MILP (exact when
//! both sides are integers). Bounded CTL's dualities need every state to have a successor: the
//! exact engine reports a state without one (or with a successor outside the declared domains)
//! as an error, never as a verdict.

pub mod auto;
pub mod encode;
pub mod engine;
pub mod error;
pub mod exact;
pub mod normal;

pub use engine::{CtlOptions, CtlResult, CtlStats, Method, Progress, check_ctl};
pub use error::CtlError;
pub use exact::{Choice, Exact, choices};
pub use normal::{Node, NodeId, Normal};
pub use trestle_core::Trace;
