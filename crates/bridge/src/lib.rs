//! Compositional inductive-invariant checking (the paper's Algorithm 1 and what goes beyond it).
//!
//! Given a system with a candidate invariant `Inv`, `Init` and `Safe`, [`check`] proves
//! `Init => Inv`, `Inv => Safe` and `Inv /\ Next => Inv'`. The last one is split compositionally:
//! the invariant is covered by boxes p, the controller is bounded on each (`trestle-bounds`:
//! the postcondition psi, a box or linear bounds in the state), and only the environment step is
//! given to the checker (`trestle-smt`: `(p /\ psi /\ Next_ENV) => Inv'`). A box that fails is
//! tested for "every state leaves" (a falsifying box), searched for a concrete counterexample, and
//! otherwise split. A box still undecided deep down is decided exactly ([`exact`]: Z3 with the
//! networks encoded on the box), which settles zero-margin candidates and counterexamples smaller
//! than floating-point rounding.
//!
//! Soundness: a clause is only kept when its query is `Valid` (Z3 on exact rationals, or the
//! outward-rounded fast path; for an exact clause, Z3 with the networks themselves); `Unknown` answers lead to splitting or to an `Unknown` verdict,
//! never to a proof. A refutation is always a concrete step replayed in exact arithmetic through
//! the IR's definition of a step. A proof comes with a certificate ([`certificate`]) that
//! [`certificate::certify`] re-checks without trusting the run.
//!
//! A sampled-data system (`[flow]`: the plant's flow over the control period is the step) is
//! checked by [`flow::check_flow`]: the same covering (one loop, `boxloop`, with a leaf check per
//! kind of step), each box's environment step being the
//! flow's validated enclosure written as an exact discrete *leaf system*, refutations validated by
//! the flow's enclosure from an exact point ([`flow_refute`]), certificates of format `/3`
//! ([`certificate::certify_sampled`] re-derives every enclosure). The plant is passed beside the
//! [`trestle_ir::System`] rather than inside it: only `check`, `certify`, `simulate` and `ltl` load
//! it (`trestle_config::load_sampled_system`), and every other command refuses a `[flow]` file when
//! loading it, with exit 2 naming those four. Bounded properties of such systems are refuted by
//! validated multi-step runs from an exact start ([`flow_run`]), found by f64 falsification
//! ([`flow_falsify`]); their certificates (unsafe runs of format `/3`) are re-derived by
//! [`flow_run::certify_run`].

mod aim;
pub mod argmax;
mod boxloop;
pub mod certificate;
mod check;
pub mod config;
pub mod engine;
mod error;
pub mod exact;
pub mod flow;
pub mod flow_falsify;
pub mod flow_refute;
pub mod flow_run;
pub mod post;
mod post_check;
mod proof_check;
mod rows;
pub mod stops;
pub mod witness;

pub use check::{Condition, Report, SideConditions, check, check_monolithic, invariant_cover, side_conditions};
pub use config::{Config, Queue, Split};
pub use engine::{Clause, InductiveRun, Inductiveness, Progress, Refutation, RunStats};
pub use error::BridgeError;
pub use stops::{StopCheck, check_stop_free};
