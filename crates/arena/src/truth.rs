//! Expected verdicts, established independently of the run a suite judges.
//!
//! As for the mazes (`trestle_maze::truth`, whose ranking, exact replay and proof judging are
//! used here): `not-inductive` by a grid over the candidate box (at most [`GRID_POINTS`] steps over
//! points and vertices, every axis the same count, faces one ulp inside) ranked in f64 under every
//! vertex of the disturbance, the best replayed exactly; `safe` by a certified proof.

use trestle_ir::{Pred, System};
use trestle_maze::truth::{Truth, f64_vertices, rank_and_replay};

/// Most grid points over the candidate in the search for a counterexample.
pub const GRID_POINTS: usize = 20_000;

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
    let fverts = f64_vertices(sys);
    // Every grid point is stepped under every vertex: the budget is shared.
    let k = grid_per_axis(n, GRID_POINTS / fverts.len().max(1));
    // One ulp inside: the f64 ends may lie outside the exact decimal ends.
    let (lo, hi) = (interval[0].next_up(), interval[1].next_down());
    let at = |j: usize| (lo + (hi - lo) * j as f64 / (k - 1) as f64).clamp(lo, hi);
    let outside_by = |s: &[f64]| s.iter().map(|&x| (lo - x).max(x - hi).max(0.0)).fold(0.0, f64::max);
    // The grid in order, last axis fastest.
    let points = (0..k.pow(n as u32)).map(|mut code| {
        let mut s = vec![0.0; n];
        for axis in (0..n).rev() {
            s[axis] = at(code % k);
            code /= k;
        }
        s
    });
    rank_and_replay(sys, cand, points, &fverts, outside_by)
}
