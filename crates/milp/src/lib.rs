//! MILP (HiGHS, through good_lp) encodings of ReLU networks, argmax and piecewise-linear steps, and the
//! monolithic inductiveness check built on them: the baseline `--method milp` of the bridge checker,
//! and the encoding layer later bounded-CTL and LTL engines build on.
//!
//! # Shape
//!
//! * [`MilpModel`] ([`model`]): good_lp problem variables and constraints; solved by HiGHS with the
//!   MIP dual bound read back (good_lp alone does not expose it).
//! * [`network`]: [`encode_network`] (exact big-M ReLU encoding with sound pre-activation bounds:
//!   CROWN on prefix networks, over a grid of sub-boxes of the input box, worst case kept; stable
//!   neurons without binaries) and [`encode_argmax`] (one-hot, non-strict, pruned by bounds).
//! * [`expr`]: the IR's piecewise-linear expressions ([`encode_expr`]: affine, constant products,
//!   `min`, `max`, `relu`, `abs`, `ite` on linear conditions, `lookup`) and predicates
//!   ([`assert_pred`], [`reify_pred`]: conjunctions, disjunctions with binaries), big-M constants from
//!   outward-rounded interval bounds.
//! * [`check_inductive_milp`] ([`inductive`]): `Inv /\ Next => Inv'` as one MILP per invariant box x
//!   selector value x non-deterministic input vertex ([`nondet`]) x branch x face of the invariant box,
//!   each maximising the violation of `Inv'`.
//! * [`replay`]: the gate every counterexample passes (exact rational replay with
//!   [`trestle_ir::sim::step`]).
//!
//! # Soundness stance
//!
//! **`Invalid` is exact.** HiGHS's solution is a floating-point point; its state (or a nearby point:
//! clamped, rounded, nudged inward) is replayed in exact rational arithmetic by the IR's own step
//! semantics, networks run by [`trestle_ir::Network::forward_exact`], and reported only when the
//! exact successor violates the invariant exactly. A point that does not replay gives
//! `Unknown(ReplayFailed)`, never `Invalid`.
//!
//! **`Valid` is floating-point evidence, not a certificate.** It is what the paper's MILP baseline
//! proves, and no more: HiGHS works in floating point with feasibility tolerances (a big-M binary may
//! sit `1e-6` away from 0 or 1, constraints may be violated by the feasibility tolerance), network
//! weights and rational constants enter as (nearest) f64. What keeps it honest:
//! * the encodings are exact over the reals: the big-M constants come from *sound* bounds (CROWN
//!   pre-activation bounds of `trestle_bounds`, the worst over sub-boxes covering the input box;
//!   outward-rounded interval arithmetic for the step), so no real behaviour is cut off by a
//!   constant;
//! * the answer is `Valid { margin }` only when, for every MILP, HiGHS's **dual bound** on the maximal
//!   violation (not its primal objective) is below `-(tolerance + feasibility_tolerance)` (defaults
//!   `1e-6 + 1e-6`); `margin` is the smallest such `-bound` and is reported;
//! * non-determinism is handled exactly (input vertices; refused with [`MilpError::NotMultilinear`]
//!   when the step is not multilinear in an interval input), strict comparisons are relaxed to their
//!   closures (an over-approximation), and ties in argmax may pick any maximal index (a superset of
//!   the simulator's lowest-index rule);
//! * a timeout, a maximum within the tolerance, or any HiGHS status other than optimal/infeasible is
//!   `Unknown`, never `Valid`; HiGHS errors (a refused option, a failed solve) are [`MilpError`]s.
//!
//! States whose network selector picks no network, and lookups whose index is not a valid integer,
//! have no successor (the simulator stops with an error there) and are left out of the MILPs.
//!
//! Engines that need a certificate must re-check a MILP `Valid` with the exact (Z3) backend or the
//! sound bridge checker.
//!
//! Input problems (an invariant that is not a bounded union of boxes, products of two variables,
//! recurrent controllers, non-multilinear non-determinism) are [`MilpError`]s, never answers.

pub mod answer;
pub mod error;
pub mod expr;
pub mod inductive;
pub mod model;
pub mod network;
pub mod nondet;
pub mod replay;

pub use answer::{MilpAnswer, MilpCheck, MilpOptions, MilpRecord, MilpStats};
pub use error::MilpError;
pub use expr::{Bounded, Lit, VarMap, assert_pred, assert_pred_if, encode_expr, reify_pred};
pub use inductive::check_inductive_milp;
pub use model::{HighsValue, MilpModel, Sense, SolveOptions, SolveOutcome, SolveStatus};
pub use network::{
    BoundOptions, EncodedArgmax, EncodedNetwork, LayerBounds, encode_argmax, encode_network, encode_network_with,
    layer_bounds, split_box,
};
pub use replay::{replay_candidate, replay_exact};
