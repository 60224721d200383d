//! Trestle's driver: one call per question a user asks, composing the engines.
//!
//! The engines each decide one kind of question (`trestle-bridge` a candidate invariant,
//! `trestle-synth` safety by finding one, `trestle-ctl` and `trestle-ltl` temporal formulas,
//! `trestle-cegar` safety of a discrete policy) and all answer with `trestle_core::Verdict`.
//! What makes them one verifier lives here, above them, and nowhere else:
//!
//! - the chains of engines: a candidate that fails is followed by synthesis
//!   ([`check::check`] with `synthesize_on_failure`), an invariant property is the file's candidate
//!   then synthesis ([`properties`]), an LTL `G p` on a memoryless system is followed by invariant
//!   synthesis when the temporal engines leave it open;
//! - the baselines that need a solver the engines should not link (the MILP baseline of `check`,
//!   [`milp`]), so `trestle-bridge`, `trestle-synth` and `trestle-cegar` link no HiGHS;
//! - the options of every question built once from what a front end read ([`options`]: the
//!   CLI's flags and the Python package's keyword arguments fill the same requests), and the
//!   temporal formula asked, a text or a property of the file ([`formula`]);
//! - one [`Budget`](trestle_core::Budget) per run, shared by every stage, and one [`Progress`]
//!   trait the front ends implement;
//! - one result per question, `trestle_core::RunResult` (`trestle-result/1`), and its text
//!   ([`render`]), the same for the CLI, the campaign store and the Python package;
//! - certificate files ([`write_file`]), written atomically, and their re-check ([`certify`]);
//! - concrete runs of the closed loop ([`simulate`]) and pictures of a run ([`picture`]);
//! - bounded properties `G<=k p` of sampled-data systems ([`flow_ltl`]: bound propagation with the
//!   flow's enclosure as the step, or a validated run from Init; the controllers bounded by the
//!   interval pass met with CROWN, [`flow_crown`]).
//!
//! Front ends parse their input into the options here, call one function and print its result.

pub mod cegar;
pub mod certify;
pub mod check;
pub mod describe;
mod error;
pub mod flow_crown;
pub mod flow_forever;
pub mod flow_ltl;
pub mod flow_reach;
pub mod formula;
pub mod json;
pub mod milp;
pub mod options;
pub mod picture;
mod progress;
pub mod properties;
pub mod render;
pub mod simulate;
mod stops;
pub mod synth;
pub mod temporal;

pub use check::{CheckMethod, CheckOptions, CheckRun, check, check_sampled};
pub use error::DriverError;
pub use progress::{Progress, Silent};
pub use synth::{SynthRun, synthesize, synthesize_sampled};
/// How a sampled-data system's flow is enclosed ([`CheckOptions::flow`]).
pub use trestle_flow::FlowSettings;

use std::path::Path;

/// Writes a file the run produces (a certificate, a plot) atomically: see `atomic-output` (links
/// written through, special files refused, no temporary file left behind).
pub fn write_file(path: &Path, contents: &[u8]) -> Result<(), DriverError> {
    atomic_output::write(path, contents)
        .map_err(|e| DriverError::input(format!("cannot write {}: {e}", path.display())))
}

/// Writes a JSON document pretty-printed (a certificate file).
pub fn write_json(path: &Path, doc: &serde_json::Value) -> Result<(), DriverError> {
    write_file(path, serde_json::to_string_pretty(doc).expect("JSON values serialise").as_bytes())
}
