//! Engine configuration. The defaults are the best configuration measured on the maze suite
//! (see the README's figures); `Config::paper()` is the original tool's configuration.

use std::path::PathBuf;
use std::time::Duration;
use trestle_bounds::Method;

/// How an undecided box is split. Both halves of a bisection share one computed midpoint, so the
/// children cover the parent exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Bisect every dimension at once (2^d children), as the paper.
    All,
    /// Bisect the widest dimension (relative to the invariant's extent).
    Widest,
    /// Bisect the dimension with the largest influence: linear-bound coefficients times width (the
    /// widest dimension when there are no linear bounds); from 3 state dimensions on, every
    /// dimension within half of the largest influence at once.
    Influence,
}

/// Which undecided box is processed next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// Breadth first (paper).
    Fifo,
    /// Depth first: finishes one region before the next; finds deep counterexamples sooner.
    Dfs,
    /// Largest estimated violation first (interval image beyond the invariant).
    Priority,
}

impl Split {
    pub fn name(self) -> &'static str {
        match self {
            Split::All => "all",
            Split::Widest => "widest",
            Split::Influence => "influence",
        }
    }
}

impl Queue {
    pub fn name(self) -> &'static str {
        match self {
            Queue::Fifo => "fifo",
            Queue::Dfs => "dfs",
            Queue::Priority => "priority",
        }
    }
}

pub fn method_name(m: &Method) -> &'static str {
    match m {
        Method::Ibp => "ibp",
        Method::Crown => "crown",
        Method::AlphaCrown(_) => "alpha-crown",
        Method::Forward => "forward",
    }
}

#[derive(Clone, Debug)]
pub struct Config {
    pub post: Method,
    /// Use the linear bounds in psi (a generalised bridge over state and action), not only the box.
    pub linear_bridge: bool,
    pub split: Split,
    pub queue: Queue,
    /// Worker threads (results do not depend on it).
    pub threads: usize,
    /// Stop with Unknown after this many splits.
    pub max_splits: usize,
    /// Do not split boxes narrower than this fraction of the invariant's extent (in every dimension).
    pub min_width: f64,
    /// Per-query Z3 limit.
    pub smt_timeout: Duration,
    /// Try the sound closed-form fast path before Z3.
    pub fast_path: bool,
    /// Search undecided boxes for concrete counterexamples (sampling and gradient steps).
    pub search: bool,
    /// Write every Z3 query as SMT-LIB 2 into this directory.
    pub dump_smt: Option<PathBuf>,
    /// The exact leaf decision: a box still undecided after this many halvings of its invariant
    /// box per two state dimensions (bisections of one dimension; a split of `k` dimensions at once
    /// counts `k`; see [`per_two_dims`]), any box at the minimum width, and any box whose abstract
    /// counterexample misses the invariant by a rounding error, is decided by Z3 with the networks
    /// encoded exactly on it (`crate::exact`). After an undecided exact query its parts try again
    /// [`EXACT_RETRY_HALVINGS`] halvings further down. `None`: never (boxes the postconditions
    /// cannot decide are split down to the minimum width and stay undecided).
    pub exact_after: Option<usize>,
    /// Z3's resource limit (`rlimit`) for each exact leaf query, besides `smt_timeout`: unlike
    /// the time limit, where it stops does not depend on the machine.
    pub exact_rlimit: Option<u32>,
}

/// Halvings (per two state dimensions, [`per_two_dims`]) between two exact queries on the same
/// part of the invariant, after the first was undecided (in 2-D a sixteenth of the volume later,
/// with more ReLUs of fixed sign).
pub const EXACT_RETRY_HALVINGS: usize = 4;

/// Halvings of a box of a `dims`-dimensional invariant that count as `halvings` do in 2-D: the
/// exact leaf's thresholds ([`Config::exact_after`], [`EXACT_RETRY_HALVINGS`]) are per two state
/// dimensions (12 halvings in 2-D, 36 in 6-D: six per side either way), so the exact query comes
/// at the same size per side, where its cost lies (the networks' unstable ReLUs on the box).
/// Counted in plain halvings, a 6-D box reached its exact query at a quarter of each side, and
/// two such Z3 queries took 90 of the 93 s of a 6-D proof that splitting finishes in 2 s.
pub fn per_two_dims(halvings: usize, dims: usize) -> usize {
    halvings.saturating_mul(dims.max(2)) / 2
}

impl Default for Config {
    fn default() -> Self {
        Config {
            post: Method::Crown,
            linear_bridge: true,
            split: Split::Influence,
            queue: Queue::Fifo,
            threads: rayon::current_num_threads(),
            max_splits: 100_000,
            min_width: 1e-6,
            smt_timeout: Duration::from_secs(30),
            fast_path: true,
            search: true,
            dump_smt: None,
            exact_after: Some(12),
            exact_rlimit: None,
        }
    }
}

impl Config {
    /// The published tool's configuration: forward-mode bounds, box psi, all-dimension bisection,
    /// FIFO, no counterexample search, every query to Z3, 1000 splits at most, no exact leaf.
    pub fn paper() -> Config {
        Config {
            post: Method::Forward,
            linear_bridge: false,
            split: Split::All,
            queue: Queue::Fifo,
            max_splits: 1000,
            fast_path: false,
            search: false,
            exact_after: None,
            ..Config::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_leaf_thresholds_are_per_two_dimensions() {
        // 2-D (the mazes) keeps the plain count; higher dimensions reach the same side length.
        assert_eq!(per_two_dims(12, 2), 12);
        assert_eq!(per_two_dims(12, 1), 12);
        assert_eq!(per_two_dims(12, 3), 18);
        assert_eq!(per_two_dims(12, 6), 36);
        assert_eq!(per_two_dims(0, 6), 0, "0 stays 'at once'");
        assert_eq!(per_two_dims(usize::MAX, 6), usize::MAX / 2, "saturates instead of overflowing");
    }
}
