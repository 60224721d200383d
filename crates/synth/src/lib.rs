//! Inductive-invariant synthesis: find a union of boxes `I` with `Init => I`, `I => Safe` and
//! `I /\ Next => I'`, prove it with the bridge engine, or find a run from Init that leaves Safe.
//!
//! # The algorithm
//!
//! 1. **Partition.** Safe must be a bounded union of boxes. Its hull is cut into a grid of
//!    `resolution` cells per dimension, clipped to Safe's boxes (rounded inward to f64, so every
//!    cell lies inside Safe exactly).
//! 2. **Images.** A cell's one-step image is computed as the bridge engine would: psi, the
//!    controllers' CROWN bounds on the cell (linear in the state), then for every branch that may
//!    be enabled a box enclosing `{s' : s in cell, a in psi(s), inputs in their domains}` —
//!    closed form with outward rounding when the update is affine in (state, action) for fixed
//!    inputs and multilinear in those (input vertices enumerated, each action's linear bound
//!    substituted by the sign of its coefficient, the affine result maximised over the box),
//!    interval evaluation otherwise, met with the closed form of the step's linear relaxation on
//!    the cell where an update is curved (sin, powers, products of variables:
//!    `trestle_smt::SuccessorBounds::relaxed_images`). Images are computed in
//!    parallel; each is a function of its cell alone, so results do not depend on the threads.
//!    Before gridding, two candidates go to the bridge engine in a short slice of the budget:
//!    Safe itself, and one box grown from Init along the field (`grow.rs`: the hull of Init
//!    and its one-step image, repeated until the image stays inside; on a controller whose field
//!    wobbles the grid follows every wobble where that one box is inductive).
//! 3. **Search**, one of:
//!    * the *greatest fixed point* (default): every cell starts kept; each round judges the
//!      cells Init reaches through images inside the kept set, drops those some image of which
//!      meets the kept union in no volume, and bisects those whose images are only partly covered
//!      (so a coarse grid can succeed) — unless no sample point of the cell has all its concrete
//!      successors kept, then it is dropped too. It stops when no reachable cell's image leaves
//!      the kept union (the reachable cells are the invariant), or as soon as part of Init is
//!      lost (the kept set only shrinks). With `full`, every cell of Safe is judged, which gives
//!      the largest invariant the boxes can express;
//!    * the *forward* closure (`forward`): the cells reachable from Init through images; where an
//!      image leaves Safe the cell (or, at the minimum width, the cell whose image led there) is
//!      bisected and the closure recomputed. For systems whose Safe is much larger than what
//!      Init reaches.
//!
//!    `max_boxes`, `min_width` and `timeout` bound the work; hitting one is reported. A search
//!    that loses Init (or cannot refine an escape) is run once more with *tolerant* images,
//!    shrunk by 1e-9 of Safe's extent: an invariant with no margin (`x' = -x` on `[-1, 1]`) has
//!    images that touch its boundary exactly, which outward rounding turns into escapes.
//! 4. **Merge** cells sharing a full face, repeatedly; the union is unchanged. Then **grow** it
//!    along the field (`grow.rs`): two touching boxes are replaced by their hull when the hull
//!    lies in Safe and its one-step image is covered by the union with the hull in it (a union
//!    that only grows keeps every state it had mapping inside it). On a controller whose field
//!    wobbles this turns hundreds of boxes into a few; the proof covers a grown box as one box.
//! 5. **Proof.** The bridge engine ([`trestle_bridge::engine::check_inductive`]) proves the
//!    union, as an exact predicate over the merged boxes, covered by the cells: Algorithm 1 with
//!    fresh bounds on each cell and an environment check per cell, decided by the checker's fast
//!    path (the image box covered by the union, by exact box subtraction) or by Z3. `Init => I`
//!    and `I => Safe` are checked by the checker (fast path, then Z3). A certificate in the
//!    bridge format lists the merged boxes as the invariant and one clause per cell or grown box (a cell whose
//!    postcondition cannot prove it, one with no margin, is decided at once by the engine's exact
//!    leaf, Z3 with the networks on the cell, and is an exact clause). The proof
//!    is cheap by construction: psi on a cell is the same deterministic computation as during the
//!    search, and the fast path bounds successors with the same `SuccessorBounds`, so every
//!    clause whose cell was found to map into the union is decided without Z3 and without
//!    splitting.
//! 6. **Failure.** Without a proof, the report says which cells of Init had to be dropped and
//!    searches runs from Init (f64 simulation with the environment's choices at their extremes,
//!    greedy or fixed, and random; gradient and coordinate ascent on the start state). A run
//!    that leaves Safe is replayed exactly through `sim::step::<Rational>`; only a confirmed
//!    replay gives the verdict Unsafe. A state of Init outside Safe is found by the checker up front.
//!
//! # Why a Safe verdict can be trusted
//!
//! The search is a heuristic and is trusted with nothing: its images and coverage tests only
//! decide what to propose. The verdict Safe is given only when the bridge engine has proven the
//! proposed union inductive (each clause `Valid` by the outward-rounded fast path or by Z3 on
//! exact rationals, see `trestle-bridge` and `trestle-smt`) and the checker has proven
//! `Init => I` and `I => Safe` against the system's exact predicates. The certificate lets
//! `trestle_bridge::certificate::certify` re-check all of it independently (bounds re-computed,
//! every environment condition by Z3 alone). An Unsafe verdict is a run replayed in exact rational
//! arithmetic through the IR's one definition of a step, from a start state that satisfies Init
//! exactly to a state that violates Safe exactly. Everything else is Unknown.
//!
//! The system's own candidate invariant plays no part.
//!
//! # Sampled-data systems (`[flow]`)
//!
//! [`synthesize_sampled`] with the plant's flow ([`trestle_bridge::flow::FlowStep`]): a cell's image
//! is the flow's validated enclosure over the period under psi's action box, met with the linear
//! enclosure composed with psi's linear bounds (`image.rs`); the search's sample successors are f64
//! simulations of the flow; the proof is the bridge engine's flow check
//! ([`trestle_bridge::flow::check_inductive_flow`]) and the certificate records the flow settings
//! (format `/3`, re-derived by `certify`). Runs from Init are searched by f64 simulation of the
//! closed loop and kept only when validated period by period (`flow_attack.rs`): an unsafe verdict
//! there is a [`trestle_core::ValidatedTrace`], never an exact replay.

mod attack;
mod config;
mod dual;
mod error;
mod flow_attack;
mod forward;
mod gfp;
mod grow;
mod image;
pub mod merge;
mod partition;
mod report;
mod search;
mod synthesize;

pub use config::SynthConfig;
pub use error::SynthError;
pub use report::{ExactRun, SynthProgress, SynthReport, SynthStats, Trajectory};
pub use synthesize::{synthesize, synthesize_sampled};
