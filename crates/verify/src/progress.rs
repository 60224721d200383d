//! Progress of a long run, reported through one trait the front ends implement: the CLI draws a
//! spinner or a bar on a terminal (nothing under `--json`/`--quiet`), Python may forward it, tests
//! ignore it. Engines report in their own terms; the driver translates them into stages and
//! messages here, so no engine knows about terminals.

/// Receives a run's progress. Every method has a default that does nothing.
pub trait Progress: Sync {
    /// A new stage begins (`proof`, `search`, `synthesis`, ...).
    fn stage(&self, _name: &str) {}
    /// How far the current stage is: a fraction in [0, 1] when known, and a short message.
    fn update(&self, _fraction: Option<f64>, _message: &str) {}
    /// One part of the run is decided before the run ends (a property of `verify`): its result as
    /// it will be printed, so that a front end that must stop the run early keeps it.
    fn decided(&self, _result: &trestle_core::RunResult) {}
}

/// Reports nothing.
pub struct Silent;

impl Progress for Silent {}
