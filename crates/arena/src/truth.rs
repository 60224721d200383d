//! Expected verdicts, established independently of the run a suite judges.
//!
//! - `not-inductive`: a grid over the candidate box (at most [`GRID_POINTS`] steps over points
//!   and vertices, every axis the same count, faces included one ulp inside) is stepped in f64 under every vertex of the
//!   disturbance to rank states by how far their successors leave the candidate; the best are
//!   replayed in exact rational arithmetic (`ir::sim`, the network run exactly). A state of the
//!   candidate with an exact successor outside it refutes inductiveness whatever any engine says.
//! - `safe`: the bridge engine's proof is turned into a certificate and re-checked by `certify`;
//!   the certificate, not the run that produced it, establishes the verdict.

use num_traits::ToPrimitive;
use trestle_ir::expr::Env;
use trestle_ir::nondet;
use trestle_ir::num::rational_from_f64;
use trestle_ir::sim;
use trestle_ir::{Pred, Rational, System};

/// Most grid points over the candidate in the search for a counterexample.
pub const GRID_POINTS: usize = 20_000;
/// Candidates replayed exactly, best first.
const REPLAYS: usize = 24;

/// How an instance's truth was established.
#[derive(Clone, Debug, PartialEq)]
pub enum Truth {
    /// A state of the candidate with an exact successor outside it.
    NotInductive { state: Vec<Rational>, next: Vec<Rational> },
    /// A certificate that `certify` accepted.
    Safe { clauses: usize },
    /// Neither: kept out of the pass/fail set.
    NotJudged(String),
}

impl Truth {
    /// The `check` verdict this truth implies, when established.
    pub fn expect(&self) -> Option<&'static str> {
        match self {
            Truth::NotInductive { .. } => Some("not-inductive"),
            Truth::Safe { .. } => Some("safe"),
            Truth::NotJudged(_) => None,
        }
    }
}

fn vertices(sys: &System) -> Vec<Vec<Rational>> {
    nondet::vertices(sys, nondet::all_inputs(sys), 1 << 16).unwrap_or_else(|| vec![Vec::new()])
}

fn inside(p: &Pred, state: &[Rational]) -> bool {
    p.eval_exact(&Env::new(state, &[], &[])).unwrap_or(false)
}

/// An exact successor of `state` outside `cand`, under some vertex of the inputs.
pub fn exact_violation(sys: &System, cand: &Pred, state: &[Rational]) -> Option<Vec<Rational>> {
    if !inside(cand, state) {
        return None;
    }
    for v in vertices(sys) {
        let mut memory = sim::initial_memory::<Rational>(sys);
        let Ok(succ) = sim::successors(sys, state, &mut memory, &v) else { continue };
        if let Some((_, next)) = succ.next.iter().find(|(_, n)| !inside(cand, n)) {
            return Some(next.clone());
        }
    }
    None
}

/// Grid points per axis for `n` axes: the most with at most `budget` points, at least 2.
pub fn grid_per_axis(n: usize, budget: usize) -> usize {
    let mut k = 2;
    while (k + 1usize).checked_pow(n as u32).is_some_and(|p| p <= budget) {
        k += 1;
    }
    k
}

/// The grid search for a one-step counterexample over the candidate box `[lo, hi]^n`.
pub fn find_counterexample(sys: &System, cand: &Pred, interval: [f64; 2]) -> Option<Truth> {
    let n = sys.state.len();
    let fverts: Vec<Vec<f64>> =
        vertices(sys).iter().map(|v| v.iter().map(|q| q.to_f64().unwrap_or(0.0)).collect()).collect();
    // Every grid point is stepped under every vertex: the budget is shared.
    let k = grid_per_axis(n, GRID_POINTS / fverts.len().max(1));
    // One ulp inside: the f64 ends may lie outside the exact decimal ends.
    let (lo, hi) = (interval[0].next_up(), interval[1].next_down());
    let at = |j: usize| (lo + (hi - lo) * j as f64 / (k - 1) as f64).clamp(lo, hi);
    let outside_by = |s: &[f64]| s.iter().map(|&x| (lo - x).max(x - hi).max(0.0)).fold(0.0, f64::max);
    let mut ranked: Vec<(f64, Vec<f64>)> = Vec::new();
    let mut index = vec![0usize; n];
    loop {
        let s: Vec<f64> = index.iter().map(|&j| at(j)).collect();
        let mut worst = f64::NEG_INFINITY;
        for v in &fverts {
            let mut memory = sim::initial_memory::<f64>(sys);
            if let Ok(succ) = sim::successors(sys, &s, &mut memory, v) {
                for (_, next) in &succ.next {
                    worst = worst.max(outside_by(next));
                }
            }
        }
        ranked.push((worst, s));
        // The next grid index, last axis fastest.
        let Some(axis) = (0..n).rev().find(|&a| index[a] + 1 < k) else { break };
        index[axis] += 1;
        index[axis + 1..].iter_mut().for_each(|j| *j = 0);
    }
    // Stable: ties keep grid order, so the result depends on the spec alone.
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (_, s) in ranked.into_iter().take(REPLAYS) {
        let state: Vec<Rational> = s.iter().map(|&x| rational_from_f64(x)).collect();
        if let Some(next) = exact_violation(sys, cand, &state) {
            return Some(Truth::NotInductive { state, next });
        }
    }
    None
}
