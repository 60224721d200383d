//! Checker configuration, builder style: `CheckerConfig::default().with_timeout(..).with_dump_dir(..)`.

use crate::stats::Stats;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use trestle_core::{Budget, Cancel};

/// How a checker runs its queries.
#[derive(Clone, Debug)]
pub struct CheckerConfig {
    /// Per-query wall-clock limit for Z3 (`None`: no limit). Hitting it gives `Unknown(Timeout)`.
    pub timeout: Option<Duration>,
    /// The end of the whole run's time budget: each query's limit is capped by the time left, and
    /// a query after it answers `Unknown(Timeout)` without running.
    pub deadline: Option<Instant>,
    /// The run's cancellation token: a query running when it is raised is interrupted (within
    /// [`CANCEL_POLL`]), and a query after it answers `Unknown(Interrupted)` without running.
    pub cancel: Option<Cancel>,
    /// Per-query Z3 resource limit (`rlimit`), a deterministic alternative to the timeout.
    pub rlimit: Option<u32>,
    /// Write every Z3 query as an SMT-LIB 2 file into this directory.
    pub dump_dir: Option<PathBuf>,
    /// File-name prefix of the dumps, to keep the files of different checkers (threads) apart.
    /// Without one a process-wide checker number is used (`c0-`, `c1-`, ...), which depends on the
    /// order checkers are created in; set it (e.g. to the worker index) for reproducible names.
    pub dump_prefix: Option<String>,
    /// Try the sound closed-form / interval fast path before Z3.
    pub fast_path: bool,
    /// When the fast path cannot prove a query, evaluate a few concrete transitions exactly
    /// (centre and corners of `p`, extreme actions and inputs) looking for a counterexample.
    pub sample_witnesses: bool,
    /// Successor evaluations the witness sampler may spend per query.
    pub sample_budget: usize,
    /// Where query statistics go; clone one [`Stats`] into several configs to share it.
    pub stats: Stats,
}

/// How often a running query looks at its cancellation token.
pub const CANCEL_POLL: Duration = Duration::from_millis(50);

impl Default for CheckerConfig {
    fn default() -> Self {
        CheckerConfig {
            timeout: Some(Duration::from_secs(60)),
            deadline: None,
            cancel: None,
            rlimit: None,
            dump_dir: None,
            dump_prefix: None,
            fast_path: true,
            sample_witnesses: true,
            sample_budget: 64,
            stats: Stats::new(),
        }
    }
}

impl CheckerConfig {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    pub fn without_timeout(mut self) -> Self {
        self.timeout = None;
        self
    }

    pub fn with_deadline(mut self, deadline: Option<Instant>) -> Self {
        self.deadline = deadline;
        self
    }

    /// The run's deadline and cancellation token: queries stop when either ends the run.
    pub fn with_budget(mut self, budget: &Budget) -> Self {
        self.deadline = budget.deadline();
        self.cancel = Some(budget.cancel_token().clone());
        self
    }

    /// Whether the run was called off.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(Cancel::is_cancelled)
    }

    /// The limit of a query starting now: the per-query timeout capped by the time left before
    /// the deadline (`Some(ZERO)` once it has passed).
    pub fn query_limit(&self) -> Option<Duration> {
        let left = self.deadline.map(|d| d.saturating_duration_since(Instant::now()));
        match (self.timeout, left) {
            (Some(t), Some(l)) => Some(t.min(l)),
            (t, l) => t.or(l),
        }
    }

    pub fn with_rlimit(mut self, rlimit: u32) -> Self {
        self.rlimit = Some(rlimit);
        self
    }

    pub fn with_dump_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dump_dir = Some(dir.into());
        self
    }

    pub fn with_dump_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.dump_prefix = Some(prefix.into());
        self
    }

    pub fn with_fast_path(mut self, on: bool) -> Self {
        self.fast_path = on;
        self
    }

    pub fn with_sampling(mut self, on: bool) -> Self {
        self.sample_witnesses = on;
        self
    }

    pub fn with_sample_budget(mut self, budget: usize) -> Self {
        self.sample_budget = budget;
        self
    }

    pub fn with_stats(mut self, stats: Stats) -> Self {
        self.stats = stats;
        self
    }
}
