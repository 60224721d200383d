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
//!   pruned by bounds, whole subtrees dropped by a bounds-only look-ahead or decided by one model
//!   of the subtree).
//! * [`engine`]: [`check_ctl`] with [`Method::Compositional`], [`Method::Monolithic`] or
//!   [`Method::Explicit`], or [`Method::Auto`] (the default, [`auto`]): the explicit engine when
//!   the states the formula looks at are few and finite, otherwise the two MILP engines raced.
//!
//! # What a verdict rests on (`trestle_core::Verdict`)
//! * `Refuted`: an initial state that satisfies the negation in exact arithmetic, with witness
//!   runs (the path an `EX` takes, every branch of an `AX`) replayed by `Trace::replay`: the first
//!   is the trace, the others ride along (a state refuted by its atoms alone is a run of no
//!   steps). A MILP solution is only a candidate.
//! * `Evidence` from a MILP engine: HiGHS's infeasibility, or its dual bound on the relaxation of
//!   the atoms above `tolerance + feasibility_tolerance`; the smallest is the margin.
//! * `Proven`: the explicit engine (every initial state evaluated in rationals), or a MILP engine
//!   whose outward-rounded interval bounds alone ruled out every job. No certificate is written.
//! * `Unknown` with a typed reason: the budget ended (`Timeout`, `Interrupted`), a limit of what
//!   can be built (`Limit`: a normal form past `normal::MAX_NODES` nodes is refused before it is
//!   built, a MILP past `encode::MAX_JOB_ENTRIES` matrix entries or a compositional job nesting
//!   past `encode::MAX_NESTING` choices stops there), bounds that overflowed (`Overflow`), runs
//!   that may stop (`RunsMayStop`), a MILP without margin (`Incomplete`) or a solver status
//!   (`Solver`).
//!
//! Every loop that can run long polls the caller's `trestle_core::Budget` (building the normal
//! form, expanding jobs, bounding networks over sub-boxes, every HiGHS solve through its time limit
//! and interrupt callback, the explicit engine's expansions), so a check ends within a solver's
//! reaction time of its limit. Formulas a hundred thousand steps deep are evaluated without
//! recursion (the explicit engine's stack is explicit; the compositional expansion, which recurses
//! once per choice, runs on threads with a large stack and a nesting cap).
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
