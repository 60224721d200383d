//! Algorithm 1: prove `Inv /\ Next => Inv'` by covering the invariant with boxes p, each with a
//! postcondition psi of the controller, such that `(p /\ psi /\ Next_ENV) => Inv'`.
//!
//! The covering loop (queue, batches, statistics, stopping) is [`crate::boxloop`]'s; this module
//! decides one box of a discrete step: bounds, the environment checks, a deterministic search,
//! the exact leaf, the split.
//!
//! A box still undecided after `Config::exact_after` halvings (per two state dimensions), any box
//! at the minimum width, and a box whose abstract counterexample leaves the invariant by a mere
//! rounding error (a near miss: no margin, or a violation below rounding) is decided exactly
//! (`crate::exact`): Z3 with the networks on the box. Those boxes are the proof's exact clauses.

use crate::boxloop::{self, BoxResult, BoxWork, Item, LeafCheck};
use crate::config::{Config, Queue, Split, per_two_dims};
use crate::error::BridgeError;
use crate::exact::{self, ExactDecision};
use crate::post::PostEngine;
use crate::stops::{StopCheck, check_stop_free};
use crate::witness::{self, Counterexample};
use std::sync::Arc;
use std::time::Instant;
use trestle_core::{Budget, Unknown, ValidatedTrace};
use trestle_ir::boxindex::BoxIndex;
use trestle_ir::interval::Interval;
use trestle_ir::{Env, FBox, Pred, System};
use trestle_smt::{
    Answer, BridgeQuery, Checker, CheckerConfig, DecidedBy, FastPath, Postcondition, Stats, SuccessorBounds, Target,
    Witness, Z3Backend,
};

/// How far outside the invariant's cover (relative to its extent) the successor boxes of a box
/// may reach for it to be decided exactly at once (see `Ctx::near_miss`).
const NEAR_MISS: f64 = 1e-9;

/// A proven bridge clause: on `region`, the controller's actions satisfy `post`, and every
/// successor of `region /\ post` lies in the invariant.
#[derive(Clone, Debug, PartialEq)]
pub struct Clause {
    pub region: FBox,
    pub post: Postcondition,
}

/// Why inductiveness was refuted.
#[derive(Clone, Debug, PartialEq)]
pub struct Refutation {
    /// Replayed exactly: state in Inv, real actions, choices, successor outside Inv.
    pub witness: Witness,
    /// The falsifying box of the paper's heuristic, when that is how it was found (every state of
    /// it leaves the invariant).
    pub region: Option<FBox>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Inductiveness {
    Proven,
    Refuted(Refutation),
    /// A state in Inv whose successor's high-precision enclosure lies strictly outside Inv (the
    /// system has values with no rational form: tanh, sin, ...).
    RefutedValidated(ValidatedTrace),
    /// A limit was reached or boxes stayed undecided: why.
    Unknown(Unknown),
}

/// Counters of one run. All but the times are deterministic.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunStats {
    pub boxes: usize,
    pub splits: usize,
    pub bound_queries: usize,
    /// Environment checks of lines 8 and 11 (however they were decided).
    pub smt_queries: usize,
    /// Of those, the ones Z3 decided.
    pub z3_queries: usize,
    pub fast_path_decided: usize,
    pub searches: usize,
    pub max_depth: usize,
    pub seconds: f64,
    pub bounds_seconds: f64,
    pub smt_seconds: f64,
    pub search_seconds: f64,
    /// Exact leaf queries (Z3 with the networks on the box) and the boxes they proved.
    pub exact_queries: usize,
    pub exact_proven: usize,
    pub exact_seconds: f64,
    /// Sampled-data systems only: time in the flow's validated enclosures (part of the boxes'
    /// time alongside `bounds_seconds` and `smt_seconds`), and the leaves proven by the box
    /// enclosure where the linear one failed.
    pub flow_seconds: f64,
    pub flow_box_leaves: usize,
}

#[derive(Clone, Debug)]
pub struct InductiveRun {
    pub outcome: Inductiveness,
    pub clauses: Vec<Clause>,
    /// Boxes proven by the exact leaf decision: every successor of every state of the box in the
    /// invariant, with the networks themselves in the query (no postcondition).
    pub exact_clauses: Vec<FBox>,
    pub undecided: Vec<FBox>,
    /// Boxes whose every state leaves the invariant (proven by the line-11 check).
    pub falsified: Vec<FBox>,
    /// The stop check on the proven invariant ([`crate::stops`]): `None` when it did not run (no
    /// proof). A proof whose check is not `Free` is `Unknown`.
    pub stops: Option<StopCheck>,
    pub stats: RunStats,
}

/// Reported after every batch.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub processed: usize,
    pub queued: usize,
    /// Fraction of the invariant's volume already proven.
    pub proven: f64,
}

/// Under [`Split::Influence`] in [`MULTI_SPLIT_DIMS`] or more state dimensions, every dimension
/// whose influence is at least this share of the largest is bisected at once. Measured against
/// bisecting the most influential one alone: in 3 to 6 dimensions boxes that stayed long in the
/// other dimensions kept failing the fast path and went to Z3 (6-D 2x128: 563 splits, 117 Z3
/// queries, 2.4 s; now 64, 5, 1.4 s; the disturbed 4-D arena 0.50 s -> 0.13 s), with every
/// verdict of the arena suite unchanged. A share of 1/4 or 3/4, or every dimension, was no better.
const INFLUENCE_SHARE: f64 = 0.5;

/// Fewest state dimensions for several bisections per split. In 2-D one side at a time stays:
/// bisecting both (measured) cut the peer mazes' splits 161 -> 93 at the same time, but made
/// a deep counterexample of the nightly suite (disturbed 4x256 `bumpy`, found after 229 splits
/// in 1.5 s) unreachable in 120 s, FIFO paying four boxes per level instead of two.
const MULTI_SPLIT_DIMS: usize = 3;

/// Everything a worker needs, shared read-only.
struct Ctx<'s> {
    sys: &'s System,
    inv: &'s Pred,
    /// An outward enclosure of the invariant (for near misses).
    cover: &'s [FBox],
    extent: Vec<f64>,
    hull: FBox,
    post: PostEngine<'s>,
    cfg: &'s Config,
    search: witness::Searcher<'s>,
    checkers_made: std::sync::atomic::AtomicUsize,
    /// The run's budget: its deadline caps every Z3 query and skips searches after it; its
    /// cancellation interrupts the queries running.
    budget: Budget,
    /// The successor boxes of a box under psi (for near misses).
    images: SuccessorBounds<'s>,
    /// The run's fast path with the invariant pinned (its forms and the invariant's indexed boxes
    /// computed once per run): every worker forks it when the fast path is enabled, and every
    /// worker's Z3 backend cuts the invariant with it to the boxes a query can reach.
    pinned: FastPath<'s>,
    fast_path: bool,
    /// The Z3 backend every worker forks (the system validated once per run), narrowed by
    /// `pinned`.
    z3: Z3Backend<'s>,
    /// The cover's boxes indexed (for near misses).
    cover_index: Arc<BoxIndex>,
}

struct Checkers<'s> {
    /// The environment checks: the worker's fork of the run's fast path, then Z3.
    env: Checker<'s>,
    /// For the exact leaf queries (their own resource limit and dump names).
    exact: Z3Backend<'s>,
}

fn checker_config(cfg: &Config, prefix: String) -> CheckerConfig {
    let mut c = CheckerConfig::default().with_timeout(cfg.smt_timeout);
    c.dump_dir = cfg.dump_smt.clone();
    c.dump_prefix = Some(prefix);
    c.stats = Stats::new();
    c
}

impl<'s> Ctx<'s> {
    fn checkers(&self, worker: usize) -> Result<Checkers<'s>, BridgeError> {
        // Each checker numbers its dumps from 1: the prefix keeps every checker's files apart.
        let id = self.checkers_made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let cc = checker_config(self.cfg, format!("w{worker}-c{id}-")).with_budget(&self.budget);
        let fast = self.fast_path.then(|| self.pinned.fork(cc.clone()));
        let mut exact = checker_config(self.cfg, format!("w{worker}-c{id}-exact-")).with_budget(&self.budget);
        exact.rlimit = self.cfg.exact_rlimit;
        Ok(Checkers { env: Checker::from_parts(fast, self.z3.fork(cc)), exact: self.z3.fork(exact) })
    }

    /// One environment check: the fast path first, Z3 for what it leaves open.
    fn decide(&self, ch: &mut Checkers<'s>, q: &BridgeQuery<'_>, w: &mut BoxWork) -> Result<Answer, BridgeError> {
        let t = Instant::now();
        w.smt_queries += 1;
        let (a, by) = ch.env.decide_bridge(q)?;
        match by {
            DecidedBy::FastPath => w.fast_decided += 1,
            DecidedBy::Z3 => w.z3_queries += 1,
        }
        w.smt_time += t.elapsed();
        Ok(a)
    }

    fn process(&self, ch: &mut Checkers<'s>, item: &Item) -> Result<BoxWork, BridgeError> {
        let p = &item.region;
        let mut w = BoxWork::new();
        let t = Instant::now();
        let post = self.post.compute(p)?;
        w.bounds_time = t.elapsed();
        if trestle_ir::space::kind_hull(self.sys, p).is_none() {
            // An int variable with no integer in p (or a bool with neither 0 nor 1): p holds no
            // state, so its clause is vacuous (the solvers, with Int-sorted variables, agree).
            w.result = BoxResult::Proven(post);
            return Ok(w);
        }
        let stay = BridgeQuery::new(p, &post, Target::StaysIn(self.inv)).with_extra(self.inv);
        let hint = match self.decide(ch, &stay, &mut w)? {
            Answer::Valid => {
                w.result = BoxResult::Proven(post);
                return Ok(w);
            }
            Answer::Invalid(abstract_witness) => Some(abstract_witness),
            Answer::Unknown(_) => None,
        };
        let leave = BridgeQuery::new(p, &post, Target::Leaves(self.inv)).with_extra(self.inv);
        if let Answer::Valid = self.decide(ch, &leave, &mut w)? {
            // Every state of p /\ Inv leaves: any such state with an enabled successor refutes
            // (found and replayed at a legal state of p, never assumed).
            match self.search.at_some_state(p) {
                Some(Counterexample::Exact(wit)) => {
                    w.result = BoxResult::Falsified(Refutation { witness: wit, region: Some(p.clone()) });
                    return Ok(w);
                }
                Some(validated) => {
                    w.result = BoxResult::Counterexample(validated);
                    return Ok(w);
                }
                None => {}
            }
        }
        if self.cfg.search && !self.budget.is_over() {
            let t = Instant::now();
            w.searched = true;
            let found = self.search.search(p, Some(&post), hint.as_ref());
            w.search_time = t.elapsed();
            if let Some(wit) = found {
                w.result = BoxResult::Counterexample(wit);
                return Ok(w);
            }
        }
        let widths = p.widths();
        let small = widths.iter().zip(&self.extent).all(|(w, e)| *w <= self.cfg.min_width * e.max(f64::MIN_POSITIVE));
        if self.exact_due(item, small, &post)? {
            self.exact_leaf(ch, p, &post, &mut w)?;
            if !matches!(w.result, BoxResult::Undecided) {
                return Ok(w);
            }
        }
        w.result =
            if small { BoxResult::Undecided } else { BoxResult::Split(self.split(p, &post), self.priority(p, &post)) };
        Ok(w)
    }

    /// Whether the exact leaf decides `item` (still undecided): when enabled, not too soon after
    /// an undecided try up its lineage, and deep enough, at the minimum width (`small`) or a near
    /// miss.
    fn exact_due(&self, item: &Item, small: bool, post: &Postcondition) -> Result<bool, BridgeError> {
        let Some(after) = self.cfg.exact_after else { return Ok(false) };
        if item.halvings < item.exact_retry {
            return Ok(false);
        }
        Ok(item.halvings >= per_two_dims(after, item.region.dims()) || small || self.near_miss(&item.region, post)?)
    }

    /// Decides `p` exactly: a proof, a replayed counterexample, or `exact_undecided`.
    fn exact_leaf(
        &self,
        ch: &mut Checkers<'s>,
        p: &FBox,
        post: &Postcondition,
        w: &mut BoxWork,
    ) -> Result<(), BridgeError> {
        let t = Instant::now();
        w.exact_query = true;
        let decision = exact::decide(self.sys, &mut ch.exact, &self.post, self.inv, p, Some(post))?;
        w.exact_time = t.elapsed();
        match decision {
            ExactDecision::Proven => w.result = BoxResult::ProvenExactly,
            ExactDecision::Refuted(wit) => w.result = BoxResult::Counterexample(Counterexample::Exact(wit)),
            ExactDecision::Undecided(_) => w.exact_undecided = true,
        }
        Ok(())
    }

    /// Whether every successor box of `p` under psi (closed form, outward rounded) reaches out of
    /// some box of the invariant's cover by no more than [`NEAR_MISS`] of its extent, yet `p`
    /// was not proven: the mark of a candidate with no margin (or of a violation below rounding),
    /// which smaller boxes would not decide either.
    fn near_miss(&self, p: &FBox, post: &Postcondition) -> Result<bool, BridgeError> {
        let overshoot = |img: &FBox, b: &FBox| {
            (0..img.dims())
                .map(|i| (b.lo[i] - img.lo[i]).max(img.hi[i] - b.hi[i]) / self.extent[i].max(f64::MIN_POSITIVE))
                .fold(f64::NEG_INFINITY, f64::max)
        };
        let images = self.images.images(p, post)?;
        Ok(images.iter().all(|(_, img)| {
            if img.lo.iter().chain(&img.hi).any(|x| x.is_nan()) {
                return self.cover.iter().any(|b| overshoot(img, b) <= NEAR_MISS);
            }
            // A box within NEAR_MISS of containing img touches img widened by a few times that
            // (and by a few ulps of its ends, so the widening is never lost to rounding): only
            // the cover's boxes touching the widened box can pass, the others fail the test.
            let m = |i: usize| {
                4.0 * NEAR_MISS * self.extent[i].max(f64::MIN_POSITIVE)
                    + 4.0 * f64::EPSILON * (img.lo[i].abs() + img.hi[i].abs())
            };
            let wide = FBox::new(
                (0..img.dims()).map(|i| img.lo[i] - m(i)).collect(),
                (0..img.dims()).map(|i| img.hi[i] + m(i)).collect(),
            );
            self.cover_index.touching(&wide).into_iter().any(|k| overshoot(img, &self.cover[k]) <= NEAR_MISS)
        }))
    }

    /// Children of `p` under the configured strategy.
    fn split(&self, p: &FBox, post: &Postcondition) -> Vec<FBox> {
        let d = p.dims();
        let splittable: Vec<usize> =
            (0..d).filter(|&i| p.interval(i).mid() > p.lo[i] && p.interval(i).mid() < p.hi[i]).collect();
        if splittable.is_empty() {
            return vec![];
        }
        let bisect_all = |dims: &[usize]| {
            let mut out = vec![p.clone()];
            for &i in dims {
                out = out
                    .into_iter()
                    .flat_map(|b| {
                        let (l, r) = b.bisect(i);
                        [l, r]
                    })
                    .collect();
            }
            out
        };
        let width = |i: usize| (p.hi[i] - p.lo[i]) / self.extent[i].max(f64::MIN_POSITIVE);
        // The dimension scoring highest (the first of equals).
        let top = |score: &dyn Fn(usize) -> f64| {
            splittable.iter().copied().max_by(|&a, &b| score(a).total_cmp(&score(b)).then(b.cmp(&a))).unwrap()
        };
        match (self.cfg.split, post) {
            (Split::All, _) => bisect_all(&splittable),
            (Split::Influence, Postcondition::Linear(l)) => {
                // Gap the linear bounds leave in dimension i, relative to its extent.
                let score = |i: usize| -> f64 {
                    let coeff: f64 =
                        (0..l.lower.a.rows).map(|a| l.upper.a.get(a, i).abs() + l.lower.a.get(a, i).abs()).sum();
                    width(i) * (1.0 + coeff * self.extent[i])
                };
                let best = top(&score);
                if d < MULTI_SPLIT_DIMS {
                    return bisect_all(&[best]);
                }
                let cut = INFLUENCE_SHARE * score(best);
                let chosen: Vec<usize> = splittable.iter().copied().filter(|&i| score(i) >= cut).collect();
                bisect_all(&chosen)
            }
            (Split::Widest | Split::Influence, _) => bisect_all(&[top(&width)]),
        }
    }

    /// How far the interval image of `p` under psi's action box reaches outside the invariant's
    /// hull: boxes that overshoot most go first under the priority queue (they are where
    /// counterexamples are likeliest).
    fn priority(&self, p: &FBox, post: &Postcondition) -> f64 {
        if self.cfg.queue != Queue::Priority {
            return 0.0;
        }
        let state = p.intervals();
        let actions = post.action_box().intervals();
        let nondet: Vec<Interval> = self.sys.nondet.iter().map(trestle_ir::nondet::hull).collect();
        let env = Env::new(&state, &actions, &nondet);
        let mut worst = f64::NEG_INFINITY;
        for b in &self.sys.step.branches {
            for (i, u) in b.updates.iter().enumerate() {
                let img = u.eval_interval(&env);
                worst = worst.max(
                    (img.hi - self.hull.hi[i]).max(self.hull.lo[i] - img.lo) / self.extent[i].max(f64::MIN_POSITIVE),
                );
            }
        }
        worst
    }
}

impl<'s> LeafCheck for Ctx<'s> {
    type Worker = Checkers<'s>;
    const UNDECIDED_WHY: &'static str = "";

    fn worker(&self, index: usize) -> Result<Checkers<'s>, BridgeError> {
        self.checkers(index)
    }

    fn decide(&self, ch: &mut Checkers<'s>, item: &Item) -> Result<BoxWork, BridgeError> {
        self.process(ch, item)
    }
}

/// Runs Algorithm 1 on the invariant `inv`, covered by `cover` (an outward enclosure of it).
pub fn check_inductive(
    sys: &System,
    inv: &Pred,
    cover: &[FBox],
    cfg: &Config,
    budget: &Budget,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<InductiveRun, BridgeError> {
    let start = Instant::now();
    let post = PostEngine::new(sys, cfg.post, cfg.linear_bridge)?;
    let hull = boxloop::hull(cover, sys.state.len());
    let extent = hull.widths();
    let mut pinned = FastPath::new(sys, CheckerConfig::default())?;
    pinned.pin(inv)?;
    let cover_index = Arc::new(BoxIndex::new(cover.to_vec()));
    let ctx = Ctx {
        sys,
        inv,
        extent,
        hull,
        post,
        cfg,
        cover,
        search: witness::Searcher::new(sys, inv, cover_index.clone())?,
        images: SuccessorBounds::new(sys)?,
        checkers_made: Default::default(),
        budget: budget.clone(),
        z3: Z3Backend::new(sys, CheckerConfig::default())?.narrowed_by(&pinned),
        pinned,
        fast_path: cfg.fast_path,
        cover_index,
    };
    boxloop::run(&ctx, sys, inv, cover, cfg.queue, cfg, budget, progress, start)
}

/// Runs the stop check on a proven invariant's pieces; the proof becomes `Unknown` unless no run stops in the invariant.
pub fn require_stop_free(
    sys: &System,
    inv: &Pred,
    pieces: &[(FBox, Option<Postcondition>)],
    cfg: &Config,
    budget: &Budget,
    run: &mut InductiveRun,
) -> Result<(), BridgeError> {
    if !matches!(run.outcome, Inductiveness::Proven) {
        return Ok(());
    }
    let check = check_stop_free(sys, inv, pieces, cfg, budget)?;
    if let Some(u) = check.unknown(sys) {
        run.outcome = Inductiveness::Unknown(u);
    }
    run.stops = Some(check);
    Ok(())
}
