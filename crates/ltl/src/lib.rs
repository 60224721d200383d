//! LTL for memoryful (recurrent) neural agents over the IR.
//!
//! A bounded formula is unfolded over one path ([`path`]: the notes' corrected expansions,
//! negation pushed to the comparisons). [`bpt`] pushes boxes of (state, hidden state) through time
//! (intervals, or intervals met with CROWN) and decides what the enclosures decide, exactly; [`rmilp`] unrolls the closed loop in one MILP
//! and asserts the negation over that one path (floating-point evidence when no path violates
//! the formula, a replayed path when one does); [`sample`] tries random runs, exactly replayed,
//! before the MILP. [`check_ltl`] runs them cheapest first and says which decided at which depth.
//!
//! Unbounded `F p`, `G p` and `p U q` are decided as the notes' Table 1 allows: [`lasso`] refutes
//! `F` / `U` with one looping path replayed exactly (state and hidden state), bounded instances
//! prove them; [`bpt::invariant`] proves `G` with an inductive box of the full state,
//! [`synthesis`] with a union of boxes over the state and the hidden states (the recurrent
//! controllers lifted into memoryless ones, proven by the bridge engine); finite paths refute it.
//! Other unbounded shapes (nested, or over temporal sub-formulas) are refused.
//!
//! tanh and sigmoid controllers go through bound propagation (their rigorous relaxations), the
//! invariants and synthesis, and through RMILP and the lasso search on a sound MILP relaxation
//! of their neurons (`trestle_milp::smooth`: "holds" stays evidence; a MILP path is a candidate,
//! refined where it used the relaxation's slack). Their refutations are validated runs
//! ([`sample::search_validated`], and RMILP's candidates the same way: exact start and choices,
//! MPFR enclosures, one state strictly outside one predicate), so only formulas one state's
//! violation refutes ([`path::state_obligations`]) are refuted through them; the others'
//! violations (and lassos, which through irrational values cannot be shown to close: the lasso
//! search only says that none exists in the relaxation) leave them unknown. Steps with elementary
//! functions have no MILP encoding: RMILP and the lasso search refuse them.
//!
//! Verdicts are `trestle_core::Verdict`s: `Proven` (bound propagation, invariants, synthesis;
//! with the certificate `trestle certify` re-checks when the method writes one), `Evidence` (the
//! MILP's infeasibility, with its margin), `Refuted` (a path from Init, a lasso for `F` and `U`,
//! replayed exactly), `RefutedValidated` (a validated run through irrational values), `Unknown`
//! with a typed reason. Every method runs within the caller's
//! `trestle_core::Budget`, polled by every loop that can run long (bound propagation's steps and
//! widening rounds, simulated runs, the unrolling and its LP tightening, lassos of each length,
//! the sweeps, HiGHS through its time limit and interrupt callback); the RMILP race gives each
//! encoding a child of it. A budget that ends, enclosures that overflow f64 and unrollings
//! estimated past `trestle_milp::MAX_UNROLL_ENTRIES` (refused before anything is built) are
//! `unknown` answers with that reason, never errors of the tool.

pub mod bpt;
pub mod certificate;
mod engine;
mod error;
pub mod lasso;
pub mod path;
pub mod rmilp;
pub mod sample;
pub mod synthesis;

pub use engine::{LtlCertificate, LtlOptions, LtlResult, LtlStats, Method, StageReport, check_ltl, state_pred};
pub use error::LtlError;
pub use path::PathFormula;
pub use rmilp::Tightening;
