//! MILP (HiGHS) encodings of the closed loop, as a library: networks (feed-forward and
//! recurrent), argmax, piecewise-linear steps, one closed-loop step, and `k` steps chained. The
//! monolithic inductiveness check `--method milp` of the bridge checker is one client; the bounded
//! CTL and LTL engines are the next.
//!
//! # Shape
//!
//! * [`MilpModel`] ([`model`]): variables and constraints built with good_lp's affine expressions;
//!   passed to HiGHS directly (options before rows) and solved with the MIP dual bound read back.
//! * [`numerics`]: how a model reaches HiGHS (no coefficient dropped, tiny ones as interval
//!   slacks, small rows scaled up by powers of two) and when its answer counts as evidence. Every
//!   row of every encoding below goes through it.
//! * [`bounds`]: big-M constants from `trestle_bounds`: every layer's pre-activation bounds in
//!   one pass per sub-box of the input box (worst case over a grid of sub-boxes), recurrent
//!   networks one step at a time with their hidden-state boxes as inputs.
//! * [`network`]: [`encode_network`] / [`encode_network_step`] (one fresh copy of a network, exact
//!   big-M ReLU encoding, stable neurons without binaries, Elman layers reading and returning
//!   hidden states as model quantities).
//! * [`smooth`]: tanh and sigmoid neurons, which have no exact encoding, relaxed soundly when the
//!   options ask for it ([`BoundOptions::smooth`]): CROWN's lines and lines of further slopes from
//!   `trestle_bounds::sound_lines`, optionally sub-intervals with binaries ([`relax_neuron`],
//!   rows as plain data a test checks in exact rationals); the model records each relaxed neuron.
//! * [`argmax`]: [`encode_argmax`] (the simulator's lowest-index rule, strict comparisons as their
//!   closure, pruned and fixed by sound bounds on score differences, [`score_gaps`]).
//! * [`expr`]: the IR's piecewise-linear expressions ([`encode_expr`]: affine, constant products,
//!   `min`, `max`, `relu`, `abs`, `ite` on linear conditions, `lookup`) and predicates
//!   ([`assert_pred`], [`reify_pred`]: conjunctions, disjunctions with binaries), big-M constants from
//!   outward-rounded interval bounds.
//! * [`state`] and [`step`]: [`encode_step`], one closed-loop step (non-deterministic inputs fixed
//!   or free, controllers with network selectors, a fixed branch or any branch by binaries with
//!   guards and labels, the successor), and what it reads (state variables over a region, the
//!   successor made a state again, initial hidden states); [`controller`] holds the controllers.
//! * [`unroll()`]: `k` steps chained, fresh network copies per step, recurrent hidden states carried
//!   as model quantities; [`Unrolled::replay`] replays a solution's run exactly.
//! * [`check_inductive_milp`] ([`inductive`]): `Inv /\ Next => Inv'` as one MILP per invariant box x
//!   selector value x non-deterministic input vertex ([`nondet`]) x branch x face of the invariant box,
//!   each maximising the violation of `Inv'`; each model is one [`encode_step`].
//! * [`replay`]: the gate every counterexample passes (exact rational replay with
//!   [`trestle_ir::sim::step`]), for one step and for runs.
//!
//! # Contract (the numerical soundness rules engines built on this crate rely on)
//!
//! 1. **A counterexample is exact.** HiGHS's solution is a floating-point point of a
//!    floating-point model. Its state (or a nearby point: clamped, rounded, nudged inward) is
//!    replayed in exact rational arithmetic by the IR's own semantics ([`replay_exact`]): the state
//!    has its declared kinds (integers, 0/1) and lies in its declared domains and in the invariant;
//!    the non-deterministic inputs are values of their domains; networks run by
//!    [`trestle_ir::Network::forward_exact`], argmax by the lowest index; successors are checked
//!    against the domains by [`trestle_ir::sim::step`]; the exact successor violates the invariant
//!    exactly. Only then is it [`MilpAnswer::Invalid`]. A point that does not replay gives
//!    [`MilpAnswer::Unknown`], never a counterexample and never a proof.
//! 2. **"No violation" is floating-point evidence, never a proof** ([`MilpAnswer::Evidence`];
//!    there is deliberately no conversion to [`trestle_core::Answer::Valid`]). HiGHS works in f64
//!    with absolute tolerances (rows and bounds may be violated by the feasibility tolerance, a
//!    binary may sit that far from 0 or 1, LP duals are optimal only within
//!    `dual_feasibility_tolerance`, presolve reduces with tolerances), and its MIP dual bound is not
//!    computed rigorously. Evidence requires, for every MILP:
//!    * HiGHS's **dual bound** on the maximal violation (not its primal objective) below
//!      `-(tolerance + feasibility_tolerance)` (defaults `1e-6 + 1e-6`), or `Infeasible`; the
//!      smallest `-bound` is reported as the `margin`;
//!    * a model inside HiGHS's numeric range: the f64 rounding of every row,
//!      `gamma(n + 1) * sum |coefficient| * max |bound|`, at most 1/16 of the feasibility tolerance
//!      ([`numerics::Prepared::out_of_range`]); huge big-M constants or integer domains give
//!      `Unknown(OutOfRange)` (counterexamples are still searched and replayed).
//!
//!    A caller that prints a verdict must confirm evidence exactly (the bridge checker confirms it
//!    with the bridge engine) or print it as evidence with its margin (`safe-by-milp-evidence`,
//!    exit code 3), never as a proof.
//!    HiGHS's presolve reduces with tolerances and has declared a feasible model infeasible, so
//!    [`MilpModel::solve`] answers `Infeasible` only when a second run with presolve off agrees.
//! 3. **The model over-approximates the real step, with sound constants.** Big-M constants come
//!    from *sound* bounds (CROWN pre-activation bounds of `trestle_bounds`, the worst over
//!    sub-boxes; outward-rounded interval arithmetic for the step and for score differences), so
//!    no real behaviour is cut off by a constant. Strict comparisons are encoded as their closures
//!    (a superset), except where both sides are integer-valued (`d < 0` as `d <= -1`, exact). The
//!    argmax's strict "beats every lower index" is its closure too: at a tie the encoding may pick
//!    the higher index, a superset of the lowest-index rule, so ties can only cost a proof. Only
//!    when a maximum on a tie fails to replay is the model rebuilt with choices beating lower
//!    indices by [`MilpOptions::tie_gap`] (1e-5, a *subset*), to look for a counterexample past
//!    the tie; that model never yields evidence.
//!    [`unroll::tighten`] (an unrolling's option) narrows the enclosures of later steps with
//!    bounds of the model's own LP relaxation: [`model::Relaxation::bound`] evaluates the
//!    Neumaier-Shcherbina bound of HiGHS's duals with outward rounding, so it holds for the rows
//!    HiGHS is given whatever HiGHS's accuracy; what it cannot remove is the rounding with which
//!    the rows were built, which is why a model so tightened still yields evidence, not proofs.
//!    A model that relaxes tanh or sigmoid neurons ([`MilpModel::relaxed_neurons`] not empty)
//!    over-approximates the step too (every relaxed row holds at every true point, by the
//!    rigorous intercepts of `trestle_bounds`), so its infeasibility and bounds are evidence as
//!    above; its solutions are candidates only, which no exact replay can follow through
//!    irrational values: the caller validates them by high-precision enclosures or reports
//!    nothing.
//! 4. **No coefficient is lost on the way into HiGHS** ([`numerics`]): `small_matrix_value` is set
//!    to 1e-12 before any row is passed, coefficients below 1e-9 become interval slacks with
//!    outward-rounded bounds (a relaxation), rows of small coefficients are scaled up by powers of
//!    two, and no value at or above 1e15 (`large_matrix_value`; below `infinite_bound`) is passed.
//!    Rational constants enter as their nearest f64: the rounding budget of rule 2 covers that.
//! 5. **Non-determinism is exact or refused.** Finite sets are enumerated; intervals are replaced
//!    by their ends only when the step is multilinear in them ([`nondet`]), otherwise
//!    [`MilpError::NotMultilinear`] (an input error, never an answer).
//! 6. **Limits are never answers.** A timeout, a maximum within the threshold, or any HiGHS status
//!    other than optimal/infeasible is `Unknown` ([`SolveStatus::Limit`] names the limit,
//!    [`SolveLimit::unknown`] the reason an engine reports); HiGHS errors (a refused option or row,
//!    a failed solve) are [`MilpError`]s.
//! 7. **The caller's budget holds everywhere.** A `trestle_core::Budget` ([`SolveOptions::within`],
//!    [`UnrollOptions::budget`], [`BoundOptions::budget`]) is checked before every unrolled step,
//!    between the LP tightening's solves (each also limited by HiGHS's `time_limit`), between
//!    batches of sub-boxes of the network bounds, and by HiGHS's interrupt callback:
//!    [`MilpError::Stopped`] when it ends. Sizes are bounded before anything is allocated:
//!    sub-boxes at [`MAX_PIECES`], unrollings at [`MAX_UNROLL_ENTRIES`] estimated matrix entries
//!    ([`MilpError::TooLarge`]); a real successor whose expression grew past a few terms is named
//!    by a fresh variable, so an unrolling grows linearly with its length.
//!
//! States whose network selector picks no network, and lookups whose index is not a valid integer,
//! have no successor (the simulator stops with an error there) and are left out of the MILPs.
//!
//! Input problems (an invariant that is not a bounded union of boxes, products of two variables,
//! recurrent controllers in the inductiveness check, non-multilinear non-determinism) are
//! [`MilpError`]s, never answers.

pub mod answer;
pub mod argmax;
pub mod bounds;
pub mod controller;
pub mod error;
pub mod expr;
pub mod inductive;
pub mod model;
pub mod network;
pub mod nondet;
pub mod numerics;
pub mod replay;
pub mod smooth;
pub mod state;
pub mod step;
pub mod unroll;

pub use answer::{MilpAnswer, MilpCheck, MilpOptions, MilpRecord, MilpStats, MilpUnknown};
pub use argmax::{EncodedArgmax, Strictness, encode_argmax, interval_gaps, score_gaps, score_gaps_step};
pub use bounds::{BoundOptions, MAX_PIECES, layer_bounds, layer_bounds_step, output_bounds_step, split_box};
pub use controller::{Controllers, encode_controllers};
pub use error::MilpError;
pub use expr::{
    Bounded, Lit, VarMap, assert_cmp_relaxed, assert_pred, assert_pred_if, encode_expr, encode_expr_if, forbid,
    reify_pred, select,
};
pub use inductive::check_inductive_milp;
pub use model::{Cancel, HighsValue, MilpModel, Sense, SolveLimit, SolveOptions, SolveOutcome, SolveStatus};
pub use network::{EncodedNetwork, encode_layers, encode_network, encode_network_step, encode_network_with};
pub use replay::{replay_candidate, replay_exact};
pub use smooth::{Refinement, RelaxedNeuron, SmoothEncoding, loose_neurons, relax_neuron};
pub use state::{
    Hidden, NondetChoice, StateVariables, initial_hidden, nondet_values, state_variables, successor_as_state,
};
pub use step::{BranchChoice, EncodedStep, StepOptions, encode_step, label_lit};
pub use trestle_bounds::LayerBounds;
pub use unroll::{MAX_UNROLL_ENTRIES, RunPoint, UnrollOptions, Unrolled, step_size, unroll, unroll_size};
