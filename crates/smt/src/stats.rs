//! Query statistics, shareable across threads: a [`Stats`] handle is an `Arc` of atomics; clone it
//! into every worker's config and read a [`StatsSnapshot`] at the end (snapshots merge too).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;
use trestle_core::{Answer, Unknown};

#[derive(Default, Debug)]
struct Counters {
    queries: AtomicU64,
    valid: AtomicU64,
    invalid: AtomicU64,
    unknown: AtomicU64,
    timeouts: AtomicU64,
    total_ns: AtomicU64,
    max_ns: AtomicU64,
    fast_decided: AtomicU64,
    z3_checks: AtomicU64,
    z3_total_ns: AtomicU64,
    z3_max_ns: AtomicU64,
}

/// A shared statistics sink.
#[derive(Clone, Default, Debug)]
pub struct Stats(Arc<Counters>);

/// A plain copy of the counters at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatsSnapshot {
    /// Queries answered (bridge, implication, inductiveness), whoever decided them.
    pub queries: u64,
    pub valid: u64,
    pub invalid: u64,
    pub unknown: u64,
    /// Of the unknown answers, those that hit the time or resource limit.
    pub timeouts: u64,
    /// Wall-clock time over all queries, and the slowest query.
    pub total: Duration,
    pub max: Duration,
    /// Queries the fast path decided without Z3.
    pub fast_decided: u64,
    /// Z3 `check-sat` calls (a query may need more than one: rational re-solves) and their time.
    pub z3_checks: u64,
    pub z3_total: Duration,
    pub z3_max: Duration,
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

impl Stats {
    pub fn new() -> Stats {
        Stats::default()
    }

    pub(crate) fn record_query(&self, elapsed: Duration, answer: &Answer, by_fast_path: bool) {
        let c = &self.0;
        c.queries.fetch_add(1, Relaxed);
        match answer {
            Answer::Valid => c.valid.fetch_add(1, Relaxed),
            Answer::Invalid(_) => c.invalid.fetch_add(1, Relaxed),
            Answer::Unknown(r) => {
                if matches!(r, Unknown::Timeout | Unknown::ResourceLimit) {
                    c.timeouts.fetch_add(1, Relaxed);
                }
                c.unknown.fetch_add(1, Relaxed)
            }
        };
        if by_fast_path {
            c.fast_decided.fetch_add(1, Relaxed);
        }
        c.total_ns.fetch_add(nanos(elapsed), Relaxed);
        c.max_ns.fetch_max(nanos(elapsed), Relaxed);
    }

    pub(crate) fn record_z3(&self, elapsed: Duration) {
        let c = &self.0;
        c.z3_checks.fetch_add(1, Relaxed);
        c.z3_total_ns.fetch_add(nanos(elapsed), Relaxed);
        c.z3_max_ns.fetch_max(nanos(elapsed), Relaxed);
    }

    pub fn snapshot(&self) -> StatsSnapshot {
        let c = &self.0;
        let d = |a: &AtomicU64| Duration::from_nanos(a.load(Relaxed));
        StatsSnapshot {
            queries: c.queries.load(Relaxed),
            valid: c.valid.load(Relaxed),
            invalid: c.invalid.load(Relaxed),
            unknown: c.unknown.load(Relaxed),
            timeouts: c.timeouts.load(Relaxed),
            total: d(&c.total_ns),
            max: d(&c.max_ns),
            fast_decided: c.fast_decided.load(Relaxed),
            z3_checks: c.z3_checks.load(Relaxed),
            z3_total: d(&c.z3_total_ns),
            z3_max: d(&c.z3_max_ns),
        }
    }
}

impl StatsSnapshot {
    /// Adds another snapshot (e.g. from a checker that used its own `Stats`).
    pub fn merge(&mut self, o: &StatsSnapshot) {
        self.queries += o.queries;
        self.valid += o.valid;
        self.invalid += o.invalid;
        self.unknown += o.unknown;
        self.timeouts += o.timeouts;
        self.total += o.total;
        self.max = self.max.max(o.max);
        self.fast_decided += o.fast_decided;
        self.z3_checks += o.z3_checks;
        self.z3_total += o.z3_total;
        self.z3_max = self.z3_max.max(o.z3_max);
    }

    /// Mean time per query (zero when there were none).
    pub fn mean(&self) -> Duration {
        if self.queries == 0 {
            Duration::ZERO
        } else {
            Duration::from_nanos((self.total.as_nanos() / self.queries as u128) as u64)
        }
    }
}
