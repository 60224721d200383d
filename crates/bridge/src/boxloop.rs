//! The covering loop of Algorithm 1, shared by the discrete step ([`crate::engine`]) and the
//! sampled-data step ([`crate::flow`]): the invariant's cover is queued, boxes are taken in
//! batches of fixed size and decided in parallel by a [`LeafCheck`] (each box a pure function of
//! its coordinates), and their results are applied in queue order, stopping at the first
//! refutation as a sequential run would. Results and statistics therefore do not depend on the
//! number of threads. The loop keeps the run's record (clauses, undecided boxes, statistics),
//! the split limit, the budget, the progress reports and the final stop check; a leaf check only
//! says what one box gave.

use crate::config::{Config, EXACT_RETRY_HALVINGS, Queue, per_two_dims};
use crate::engine::{Clause, InductiveRun, Inductiveness, Progress, Refutation, RunStats};
use crate::error::BridgeError;
use crate::witness::Counterexample;
use rayon::prelude::*;
use std::collections::{BinaryHeap, VecDeque};
use std::time::{Duration, Instant};
use trestle_core::{Budget, Unknown};
use trestle_ir::{FBox, Pred, System};
use trestle_smt::Postcondition;

const BATCH: usize = 32;

/// What one box gave.
pub(crate) enum BoxResult {
    /// The environment condition holds on the box under this psi.
    Proven(Postcondition),
    /// Decided with the networks themselves on the box (an exact clause).
    ProvenExactly,
    /// Every state of the box leaves the invariant, with a replayed witness.
    Falsified(Refutation),
    Counterexample(Counterexample),
    /// The children to queue, and their priority under [`Queue::Priority`].
    Split(Vec<FBox>, f64),
    Undecided,
}

/// One box's result with what it cost.
pub(crate) struct BoxWork {
    pub result: BoxResult,
    pub bound_queries: usize,
    pub smt_queries: usize,
    pub z3_queries: usize,
    pub fast_decided: usize,
    pub searched: bool,
    /// Whether an exact leaf query ran, and whether it left the box undecided.
    pub exact_query: bool,
    pub exact_undecided: bool,
    /// A flow leaf proven by the box enclosure where the linear one failed.
    pub flow_box_leaf: bool,
    pub bounds_time: Duration,
    pub flow_time: Duration,
    pub smt_time: Duration,
    pub search_time: Duration,
    pub exact_time: Duration,
}

impl BoxWork {
    /// An undecided box with the one bound query every box makes (its postcondition).
    pub fn new() -> BoxWork {
        BoxWork {
            result: BoxResult::Undecided,
            bound_queries: 1,
            smt_queries: 0,
            z3_queries: 0,
            fast_decided: 0,
            searched: false,
            exact_query: false,
            exact_undecided: false,
            flow_box_leaf: false,
            bounds_time: Duration::ZERO,
            flow_time: Duration::ZERO,
            smt_time: Duration::ZERO,
            search_time: Duration::ZERO,
            exact_time: Duration::ZERO,
        }
    }
}

/// A queued box.
pub(crate) struct Item {
    pub region: FBox,
    pub depth: usize,
    /// Bisections of one dimension since the invariant box (the volume is `2^-halvings` of it).
    pub halvings: usize,
    /// Fewest halvings for an exact query at all (after an undecided one up the lineage).
    pub exact_retry: usize,
    priority: f64,
    seq: usize,
}

impl PartialEq for Item {
    fn eq(&self, o: &Self) -> bool {
        self.seq == o.seq
    }
}
impl Eq for Item {}
impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Item {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.priority.total_cmp(&o.priority).then(o.seq.cmp(&self.seq))
    }
}

/// The work queue under the three disciplines.
enum WorkQueue {
    Fifo(VecDeque<Item>),
    Dfs(Vec<Item>),
    Priority(BinaryHeap<Item>),
}

impl WorkQueue {
    fn new(q: Queue) -> WorkQueue {
        match q {
            Queue::Fifo => WorkQueue::Fifo(VecDeque::new()),
            Queue::Dfs => WorkQueue::Dfs(Vec::new()),
            Queue::Priority => WorkQueue::Priority(BinaryHeap::new()),
        }
    }

    fn len(&self) -> usize {
        match self {
            WorkQueue::Fifo(q) => q.len(),
            WorkQueue::Dfs(q) => q.len(),
            WorkQueue::Priority(q) => q.len(),
        }
    }

    fn push_children(&mut self, items: Vec<Item>) {
        match self {
            WorkQueue::Fifo(q) => q.extend(items),
            // Reversed, so the first child is processed first.
            WorkQueue::Dfs(q) => q.extend(items.into_iter().rev()),
            WorkQueue::Priority(q) => q.extend(items),
        }
    }

    fn pop(&mut self) -> Option<Item> {
        match self {
            WorkQueue::Fifo(q) => q.pop_front(),
            WorkQueue::Dfs(q) => q.pop(),
            WorkQueue::Priority(q) => q.pop(),
        }
    }

    fn drain(&mut self) -> Vec<FBox> {
        let mut out = Vec::new();
        while let Some(i) = self.pop() {
            out.push(i.region);
        }
        out
    }
}

/// How one kind of step decides a box.
pub(crate) trait LeafCheck: Sync {
    /// What a worker thread keeps between the boxes of a batch (its solvers).
    type Worker;
    /// Why boxes at the minimum width may stay undecided, after "N boxes below the minimum
    /// width stayed undecided" (empty, or a parenthesis with a leading space).
    const UNDECIDED_WHY: &'static str;
    fn worker(&self, index: usize) -> Result<Self::Worker, BridgeError>;
    fn decide(&self, worker: &mut Self::Worker, item: &Item) -> Result<BoxWork, BridgeError>;
}

/// The bounding box of the cover's boxes (`d` dimensions).
pub(crate) fn hull(cover: &[FBox], d: usize) -> FBox {
    FBox::new(
        (0..d).map(|i| cover.iter().map(|b| b.lo[i]).fold(f64::INFINITY, f64::min)).collect(),
        (0..d).map(|i| cover.iter().map(|b| b.hi[i]).fold(f64::NEG_INFINITY, f64::max)).collect(),
    )
}

/// Covers the invariant `inv` (covered by `cover`) with boxes decided by `leaf`, taken from a
/// queue of discipline `queue`; `started` is when the run began (its time in the statistics).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run<L: LeafCheck>(
    leaf: &L,
    sys: &System,
    inv: &Pred,
    cover: &[FBox],
    queue: Queue,
    cfg: &Config,
    budget: &Budget,
    progress: &(dyn Fn(Progress) + Sync),
    started: Instant,
) -> Result<InductiveRun, BridgeError> {
    let total_volume: f64 = cover.iter().map(|b| b.widths().iter().product::<f64>()).sum();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.threads.max(1))
        .build()
        .unwrap_or_else(|e| trestle_smt::memory::threads_unavailable(e));
    let mut queue = WorkQueue::new(queue);
    let mut seq = 0;
    queue.push_children(
        cover
            .iter()
            .map(|b| {
                seq += 1;
                Item { region: b.clone(), depth: 0, halvings: 0, exact_retry: 0, priority: f64::INFINITY, seq }
            })
            .collect(),
    );
    let mut run = InductiveRun {
        outcome: Inductiveness::Proven,
        clauses: Vec::new(),
        exact_clauses: Vec::new(),
        undecided: Vec::new(),
        falsified: Vec::new(),
        stops: None,
        stats: RunStats::default(),
    };
    let mut proven_volume = 0.0;
    while queue.len() > 0 {
        if let Err(stop) = budget.check() {
            run.outcome = Inductiveness::Unknown(stop.into());
            run.undecided.extend(queue.drain());
            break;
        }
        let batch: Vec<Item> = (0..BATCH).map_while(|_| queue.pop()).collect();
        let results: Vec<Result<BoxWork, BridgeError>> = pool.install(|| {
            batch
                .par_iter()
                .map_init(
                    || leaf.worker(rayon::current_thread_index().unwrap_or(0)),
                    |worker, item| match worker {
                        Ok(worker) => leaf.decide(worker, item),
                        Err(e) => Err(BridgeError::Internal(e.to_string())),
                    },
                )
                .collect()
        });
        let mut stop = false;
        for (item, res) in batch.into_iter().zip(results) {
            let w = res?;
            let s = &mut run.stats;
            s.boxes += 1;
            s.bound_queries += w.bound_queries;
            s.smt_queries += w.smt_queries;
            s.z3_queries += w.z3_queries;
            s.fast_path_decided += w.fast_decided;
            s.searches += w.searched as usize;
            s.max_depth = s.max_depth.max(item.depth);
            s.bounds_seconds += w.bounds_time.as_secs_f64();
            s.flow_seconds += w.flow_time.as_secs_f64();
            s.smt_seconds += w.smt_time.as_secs_f64();
            s.search_seconds += w.search_time.as_secs_f64();
            s.exact_queries += w.exact_query as usize;
            s.exact_seconds += w.exact_time.as_secs_f64();
            s.flow_box_leaves += w.flow_box_leaf as usize;
            match w.result {
                BoxResult::Proven(post) => {
                    proven_volume += item.region.widths().iter().product::<f64>();
                    run.clauses.push(Clause { region: item.region, post });
                }
                BoxResult::ProvenExactly => {
                    s.exact_proven += 1;
                    proven_volume += item.region.widths().iter().product::<f64>();
                    run.exact_clauses.push(item.region);
                }
                BoxResult::Falsified(r) => {
                    run.falsified.push(item.region);
                    run.outcome = Inductiveness::Refuted(r);
                    stop = true;
                }
                BoxResult::Counterexample(Counterexample::Exact(wit)) => {
                    run.outcome = Inductiveness::Refuted(Refutation { witness: wit, region: None });
                    stop = true;
                }
                BoxResult::Counterexample(Counterexample::Validated(trace)) => {
                    run.outcome = Inductiveness::RefutedValidated(trace);
                    stop = true;
                }
                BoxResult::Split(children, priority) if !children.is_empty() && s.splits < cfg.max_splits => {
                    s.splits += 1;
                    // 2^k children: k dimensions were halved.
                    let halvings = item.halvings + children.len().trailing_zeros() as usize;
                    let exact_retry = if w.exact_undecided {
                        item.halvings.saturating_add(per_two_dims(EXACT_RETRY_HALVINGS, item.region.dims()))
                    } else {
                        item.exact_retry
                    };
                    let items = children
                        .into_iter()
                        .map(|region| {
                            seq += 1;
                            Item { region, depth: item.depth + 1, halvings, exact_retry, priority, seq }
                        })
                        .collect();
                    queue.push_children(items);
                }
                BoxResult::Split(..) | BoxResult::Undecided => run.undecided.push(item.region),
            }
            if stop {
                break;
            }
        }
        progress(Progress {
            processed: run.stats.boxes,
            queued: queue.len(),
            proven: proven_volume / total_volume.max(f64::MIN_POSITIVE),
        });
        if stop {
            break;
        }
    }
    if matches!(run.outcome, Inductiveness::Proven) && !run.undecided.is_empty() {
        let n = run.undecided.len();
        run.outcome = Inductiveness::Unknown(if run.stats.splits >= cfg.max_splits {
            Unknown::Limit(format!("{} splits, {n} undecided boxes", cfg.max_splits))
        } else {
            Unknown::Incomplete(format!("{n} boxes below the minimum width stayed undecided{}", L::UNDECIDED_WHY))
        });
    }
    if matches!(run.outcome, Inductiveness::Proven) {
        // For a sampled system the discrete step is the identity: the check then says that the
        // invariant's states are legal states (domains, kinds), so the successors the flow keeps
        // inside it are.
        let pieces: Vec<(FBox, Option<Postcondition>)> = run
            .clauses
            .iter()
            .map(|c| (c.region.clone(), Some(c.post.clone())))
            .chain(run.exact_clauses.iter().map(|b| (b.clone(), None)))
            .collect();
        crate::engine::require_stop_free(sys, inv, &pieces, cfg, budget, &mut run)?;
    }
    run.stats.seconds = started.elapsed().as_secs_f64();
    Ok(run)
}
