//! Trestle's experiment runner: campaigns (a matrix of systems × commands × overrides ×
//! repetitions, for a paper's tables and plots), suites (instances with expected verdicts, for
//! nightly regression), one results store, reports, shards and Slurm.
//!
//! Why it is shaped so:
//! - **Every job is a child process** of the trestle binary ([`exec`]), in its own process group
//!   with a hard wall-clock limit and an address-space limit: a hung or crashing solver costs one
//!   job, recorded as `timeout`, `memout` or `error`, never the run.
//! - **The child's one JSON object is the interface.** The runner reads the
//!   [`trestle_core::RunResult`] a command prints with `--json` (or, until every command prints
//!   one, the command's own JSON, read in one function of [`outcome`]) and checks its status
//!   against the exit code (0 proven, 1 refuted, 3 unknown or floating-point evidence); a verdict
//!   that contradicts its exit code is recorded as an error, never as a verdict. Evidence is a
//!   status of its own, stored, reported (`true (evidence)`) and judged as such.
//! - **One store, committed per job** ([`store`]): SQLite in each results directory, one
//!   transaction per finished job, so a killed run loses nothing and `--resume` reruns exactly the
//!   missing jobs. Runs accumulate, so the store is the history of nightly runs. One process
//!   writes a store at a time (an advisory lock beside it); a second is refused at once.
//! - **Every file through the one atomic writer** (`atomic_output`): reports, exports, Slurm
//!   scripts; every input file (campaign, suite and system files) read as a bounded regular file.
//! - **Deterministic plans** ([`plan`]): the same files expand to the same job list with the same
//!   ids (a hash of the system file's content, the command, options, overrides, repetition and
//!   tool version), so shards are slices of one list and merging them is exact.
//! - **No dependency on the engines**: the runner learns a system's name and network size from
//!   `trestle info --json` (a child too), and checks command lines through a callback the CLI
//!   passes in, so the CLI stays the one place that knows its flags.

mod clock;
mod error;
mod exec;
mod export;
mod job;
mod merge;
mod options;
mod outcome;
mod plan;
mod plots;
mod regress;
mod report;
mod runner;
mod shard;
mod slurm;
mod spec;
mod store;
mod suite;
mod summary;
mod table;

pub use error::{CampaignError, Result};
pub use exec::{probe_system, run_child, run_child_until};
pub use export::{ExportFormat, export};
pub use job::{DEFAULT_TIMEOUT, Job, Limits, VERDICT_COMMANDS, shell_quote};
pub use merge::{MergedRun, merge};
pub use options::memory_text;
pub use outcome::{JobStatus, Outcome, classify};
pub use plan::{Plan, PlanKind, Tolerance};
pub use plots::svg_to_png;
pub use regress::{InstanceCheck, SuiteJudgement, baseline, judge};
pub use report::{ReportSpec, write_file, write_report};
pub use runner::{RunOptions, RunSummary, count_statuses, run_plan};
pub use shard::Shard;
pub use slurm::{SlurmOptions, SlurmScripts, write_scripts};
pub use spec::load_campaign;
pub use store::{JobRow, RunRow, STORE_FILE, Store, SystemFacts};
pub use suite::{Suite, SuiteInstance, Validate, load_suite};
pub use summary::{JOBS_PER_CORE, default_out, jobs_cap, resume_command};
