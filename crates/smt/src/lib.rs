//! Decides, with Z3, queries about one step of the environment of a Trestle [`System`].
//!
//! # Shape
//!
//! Four kinds of query, the first three answered with an [`Answer`] (`Valid`, `Invalid(witness)`,
//! `Unknown(reason)`):
//!
//! * the **bridge check** of the compositional method (Algorithm 1 of the paper): is
//!   `(p /\ psi /\ Next_ENV) => Target` valid, for a state box `p` (optionally intersected with a
//!   state predicate), a postcondition `psi` of the controller on `p` (a box over the actions or
//!   linear bounds in the state) and a target that every successor must satisfy
//!   ([`Target::StaysIn`]) or that no successor may satisfy ([`Target::Leaves`], the
//!   falsification check) — see [`BridgeQuery`];
//! * **implications** between state predicates (`Init => Inv`, `Inv => Safe`);
//! * the **monolithic inductiveness check** `Inv /\ Next => Inv'` with the whole ReLU network(s)
//!   in the query: the paper's baseline, slow by nature, always run with a timeout; restricted to
//!   a box `p` with the ReLUs of fixed sign encoded linearly ([`InductiveQuery`]), it is the bridge
//!   engine's exact decision of boxes its postconditions leave open;
//! * the **stop query** ([`stops`]): can a run stop at a state of `p /\ Inv` (no branch with a
//!   legal successor, a successor that is no state, a lookup out of range), under psi or the
//!   networks themselves? The safety engines' extra environment condition.
//!
//! Backends sit behind the small [`EnvChecker`] trait (the monolithic check is the optional
//! capability [`InductivenessChecker`]): [`Z3Backend`] is the reference; [`FastPath`] decides what
//! closed-form bounds and exact sampling can; [`Checker`] layers the fast path in front of Z3.
//! Configuration is a builder ([`CheckerConfig`]: timeout, rlimit, SMT-LIB dump directory, fast
//! path on/off); statistics ([`Stats`]) are shareable across threads. One checker per worker
//! thread: Z3 terms live in the thread's own Z3 context and none is kept between queries.
//!
//! The step is the IR's: every branch (enabled when its guard holds and its label matches),
//! non-deterministic inputs anywhere in their domains, piecewise-linear expressions (min, max,
//! relu, abs, ite, lookup) and products such as `c * a` (nonlinear real arithmetic for Z3).
//! A lookup whose index is not an integer inside its table has no value (the simulator fails):
//! Z3 and the fast path both leave it unconstrained, so a counterexample that needs it fails the
//! replay and the answer is `Unknown`, never `Valid`.
//! Int and bool state variables and argmax actions are Int-sorted (bools in {0, 1}). The state a
//! transition starts from is a state of the system: in the variables' domains, unless the system
//! ignores domains ([`DomainExit::Ignore`](trestle_ir::system::DomainExit)). With `Drop`
//! successors outside a domain do not exist; otherwise nothing is assumed about them.
//! Implications between state predicates assume the kinds only, so `Inv => Safe` also covers a
//! successor outside the domains that lies in the invariant (where a run stops with an error).
//!
//! # Why `Valid` can be trusted
//!
//! * **Exact inputs.** Every constant reaches Z3 as the exact rational it denotes: IR constants are
//!   exact rationals already; box ends, postcondition coefficients and network weights are f64,
//!   entered as the dyadic rationals they are (numerator and denominator digits, never a short
//!   decimal). Strict comparisons stay strict. So an `unsat` from Z3 is a statement about the
//!   exact query, not about a rounded copy of it.
//! * **Fast path under rounding.** The fast path composes the target with the updates exactly (in
//!   rationals) and bounds the result with outward-rounded f64 interval arithmetic; guards and
//!   domain drops are over-approximated, so its bounds enclose every real successor. It only says
//!   `Valid` when those enclosures prove the query; it never disagrees with Z3 (tested on random
//!   queries) but may leave queries to it.
//! * **Counterexamples are replayed.** An `Invalid` answer carries a [`Witness`] in exact rationals
//!   that has passed [`replay`]: state in `p`, actions allowed by `psi`, inputs in their domains,
//!   the branch enabled, `next` equal to the branch's update evaluated exactly
//!   ([`trestle_ir::sim`]), the target really violated — and, for the monolithic check, the
//!   actions equal to the exact forward pass of the network. When Z3's model has irrational values
//!   (algebraic numbers from nonlinear arithmetic) the offending inputs are fixed to nearby
//!   rationals and the query re-solved; if that fails, or a model fails replay, the answer is
//!   `Unknown` with the reason.
//!
//! # What `Unknown` means
//!
//! Nothing: the time or resource limit was hit, Z3 gave up (its reason string is kept), or no
//! exactly replayable counterexample was found ([`Unknown`]). It is never treated as
//! `Valid`. Input problems (dimension mismatches, inverted or non-finite boxes, predicates over the
//! wrong variables) are [`CheckError`]s, never answers. A Z3 context that cannot be created for
//! want of memory ends the run with an [`OutOfMemory`] panic (see [`memory`]), which the CLI
//! reports as such.

mod affine;
mod bridge;
pub mod checker;
pub mod config;
mod dump;
mod encode;
pub mod error;
mod fastpath;
mod implication;
pub mod inductive;
mod linearize;
pub mod memory;
mod monolithic;
pub mod paths;
pub mod query;
pub mod replay;
mod sample;
mod solve;
pub mod stats;
pub mod stops;

pub use checker::{Checker, DecidedBy, EnvChecker, FastPath, InductivenessChecker, Z3Backend};
pub use config::CheckerConfig;
pub use error::CheckError;
pub use fastpath::SuccessorBounds;
pub use inductive::{InductiveQuery, NetworkPhases, Phase};
pub use memory::OutOfMemory;
pub use paths::{PathAnswer, PathQuery};
pub use query::{BridgeQuery, LinearPost, Postcondition, Target};
pub use replay::replay_bridge;
pub use stats::{Stats, StatsSnapshot};
pub use stops::{Stop, StopActions, StopAnswer, StopQuery};
pub use trestle_core::{Answer, AnswerKind, Unknown, Witness, WitnessError, replay_implication, replay_inductive};

#[cfg(doc)]
use trestle_ir::System;
