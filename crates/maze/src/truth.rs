//! Expected verdicts, established independently of the run a suite judges.
//!
//! - `not-inductive`: a grid over every candidate box (and every vertex of the noise interval) is
//!   stepped in f64 to rank states by how far their successors leave the candidate; the best are
//!   replayed in exact rational arithmetic (`ir::sim` with the network run exactly). A state in the
//!   candidate with an exact successor outside it is a counterexample to inductiveness whatever
//!   any engine says.
//! - `unsafe` (a property of the controller, reported beside the verdict): runs from a grid over
//!   Init, each vertex of the noise interval held constant, are simulated in f64 and, when one
//!   leaves Safe, replayed exactly step by step.
//! - Controllers with tanh or sigmoid layers have no exact rational values: there the replay is
//!   validated instead (`trestle_core::validate`: the exact state, the successor enclosed in MPFR
//!   interval arithmetic, strictly outside the candidate or Safe).
//! - `safe`: the bridge engine's proof is turned into a certificate and re-checked by `certify`
//!   (coverage by exact box subtraction, every postcondition re-bounded, every environment
//!   condition in Z3): the certificate, not the run that produced it, establishes the verdict.

use std::time::Duration;
use trestle_bridge::{Config, certificate};
use trestle_core::Budget;
use trestle_core::validate::{self, Bounds, Validation};
use trestle_ir::expr::Env;
use trestle_ir::nondet;
use trestle_ir::num::rational_from_f64;
use trestle_ir::sim;
use trestle_ir::{Pred, Rational, System};

/// Grid points per axis of each candidate box in the search for a counterexample.
const GRID: usize = 41;
/// Candidates replayed exactly, best first.
const REPLAYS: usize = 24;
/// Steps of each run from Init in the search for an unsafe run.
const RUN_STEPS: usize = 60;

/// How an instance's truth was established.
#[derive(Clone, Debug, PartialEq)]
pub enum Truth {
    /// A state of the candidate with an exact successor outside it.
    NotInductive { state: Vec<Rational>, next: Vec<Rational> },
    /// A state of the candidate whose successor's enclosure (a controller through irrational
    /// values) lies strictly outside it.
    NotInductiveValidated { state: Vec<Rational>, next: Vec<Bounds>, precision_bits: u32 },
    /// A certificate that `certify` accepted.
    Safe { clauses: usize },
    /// Neither: kept out of the pass/fail set.
    NotJudged(String),
}

impl Truth {
    /// The `check` verdict this truth implies, when established.
    pub fn expect(&self) -> Option<&'static str> {
        match self {
            Truth::NotInductive { .. } | Truth::NotInductiveValidated { .. } => Some("not-inductive"),
            Truth::Safe { .. } => Some("safe"),
            Truth::NotJudged(_) => None,
        }
    }

    /// One line saying what was established and how.
    pub fn describe(&self) -> String {
        match self {
            Truth::Safe { clauses } => format!("safe (certified proof, {clauses} clauses)"),
            Truth::NotInductive { .. } => "not-inductive (grid counterexample, replayed exactly)".into(),
            Truth::NotInductiveValidated { precision_bits, .. } => {
                format!("not-inductive (grid counterexample, validated at {precision_bits} bits)")
            }
            Truth::NotJudged(why) => format!("not judged: {why}"),
        }
    }
}

fn vertices(sys: &System) -> Vec<Vec<Rational>> {
    nondet::vertices(sys, nondet::all_inputs(sys), 1 << 16).unwrap_or_else(|| vec![Vec::new()])
}

/// The vertices of the inputs as floats inside their intervals, for ranking (the nearest f64 of
/// a decimal end may lie outside the interval, and the f64 step refuses it).
pub fn f64_vertices(sys: &System) -> Vec<Vec<f64>> {
    vertices(sys).iter().map(|v| nondet::f64_inputs(sys, v)).collect()
}

/// Ranks `points` (states, f64) by how far their successors under `fverts` leave the candidate
/// (`outside_by`, f64: ranking only) and replays the best [`REPLAYS`] exactly: the first with an
/// exact successor outside `cand` refutes inductiveness. The sort is stable, so ties keep the
/// points' order and the result depends on the spec alone.
pub fn rank_and_replay(
    sys: &System,
    cand: &Pred,
    points: impl IntoIterator<Item = Vec<f64>>,
    fverts: &[Vec<f64>],
    outside_by: impl Fn(&[f64]) -> f64,
) -> Option<Truth> {
    let mut ranked: Vec<(f64, Vec<f64>)> = points
        .into_iter()
        .map(|s| {
            let mut worst = f64::NEG_INFINITY;
            for v in fverts {
                let mut memory = sim::initial_memory::<f64>(sys);
                if let Ok(succ) = sim::successors(sys, &s, &mut memory, v) {
                    for (_, n) in &succ.next {
                        worst = worst.max(outside_by(n));
                    }
                }
            }
            (worst, s)
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (_, s) in ranked.into_iter().take(REPLAYS) {
        let state: Vec<Rational> = s.iter().map(|&x| rational_from_f64(x)).collect();
        if !validate::is_rational_valued(sys) {
            if let Some((next, precision_bits)) = validated_violation(sys, cand, &state) {
                return Some(Truth::NotInductiveValidated { state, next, precision_bits });
            }
            continue;
        }
        if let Some(next) = exact_violation(sys, cand, &state) {
            return Some(Truth::NotInductive { state, next });
        }
    }
    None
}

/// The truth of a candidate no grid point refutes: the bridge engine's proof (at most
/// `proof_timeout` seconds), certified by `certify` when it has at most `max_clauses` clauses
/// (certifying is much slower than proving on big proofs); anything else is not judged.
pub fn judge_by_proof(sys: &System, proof_timeout: f64, max_clauses: usize) -> Result<Truth, String> {
    // A timeout past what a Duration holds (1e308 s) is no limit; from_secs_f64 panicked on it.
    let timeout = Duration::try_from_secs_f64(proof_timeout).unwrap_or(Duration::MAX);
    let mut bridge = Config { threads: 1, ..Config::default() };
    bridge.smt_timeout = bridge.smt_timeout.min(timeout);
    let opts = trestle_verify::CheckOptions { bridge, ..Default::default() };
    let run = trestle_verify::check(sys, &opts, &Budget::new(Some(timeout)), &trestle_verify::Silent)
        .map_err(|e| e.to_string())?;
    let report = run.report;
    let clauses = report.inductive.clauses.len();
    Ok(match report.word() {
        "safe" if clauses > max_clauses => Truth::NotJudged(format!(
            "check proved it with {clauses} clauses; certify is not run above {max_clauses} clauses"
        )),
        "safe" => {
            let cert = certificate::from_report(sys, &report);
            let c = certificate::certify(&cert, sys).map_err(|e| e.to_string())?;
            if c.valid {
                Truth::Safe { clauses }
            } else {
                Truth::NotJudged("the proof's certificate was refused".into())
            }
        }
        "not-inductive" => {
            Truth::NotJudged("check refuted it, but the grid search found no counterexample of its own".into())
        }
        word => Truth::NotJudged(format!("check: {word}")),
    })
}

fn inside(p: &Pred, state: &[Rational]) -> bool {
    p.eval_exact(&Env::new(state, &[], &[])).unwrap_or(false)
}

/// Distance of `s` outside the boxes (0 inside one), in f64: ranking only.
fn outside_by(boxes: &[[[f64; 2]; 2]], s: &[f64]) -> f64 {
    boxes
        .iter()
        .map(|b| (0..2).map(|i| (b[i][0] - s[i]).max(s[i] - b[i][1]).max(0.0)).fold(0.0, f64::max))
        .fold(f64::INFINITY, f64::min)
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

/// A successor of `state` (in `cand`) whose enclosure lies strictly outside `cand`, under some
/// vertex of the inputs and some branch, with the precision that decided it.
pub fn validated_violation(sys: &System, cand: &Pred, state: &[Rational]) -> Option<(Vec<Bounds>, u32)> {
    if !inside(cand, state) {
        return None;
    }
    for v in vertices(sys) {
        for branch in 0..sys.step.branches.len() {
            let choices = [(v.clone(), branch)];
            if let Ok(Validation::Validated { precision_bits, run }) =
                validate::validate_violation(sys, state, &choices, cand)
            {
                return Some((run.states.last()?.clone(), precision_bits));
            }
        }
    }
    None
}

/// The grid search for a one-step counterexample (see the module documentation).
pub fn find_counterexample(sys: &System, cand: &Pred, boxes: &[[[f64; 2]; 2]]) -> Option<Truth> {
    let points = boxes.iter().flat_map(|b| {
        (0..GRID).flat_map(move |i| {
            (0..GRID).map(move |j| {
                // The box's ends are the f64 nearest the spec's decimals, which may lie an ulp
                // outside the exact candidate: grid points stay one ulp inside them.
                let t = |k: usize, axis: usize| {
                    let (lo, hi) = (b[axis][0].next_up(), b[axis][1].next_down());
                    (lo + (hi - lo) * k as f64 / (GRID - 1) as f64).clamp(lo, hi)
                };
                vec![t(i, 0), t(j, 1)]
            })
        })
    });
    rank_and_replay(sys, cand, points, &f64_vertices(sys), |s| outside_by(boxes, s))
}

/// A run from Init that leaves Safe, replayed exactly: its length in steps.
pub fn find_unsafe_run(sys: &System, init: &[[f64; 2]; 2], safe: &Pred) -> Option<usize> {
    const N: usize = 7;
    let verts = vertices(sys);
    for i in 0..N {
        for j in 0..N {
            let t = |k: usize, axis: usize| {
                let (lo, hi) = (init[axis][0].next_up(), init[axis][1].next_down());
                (lo + (hi - lo) * k as f64 / (N - 1) as f64).clamp(lo, hi)
            };
            let start = [t(i, 0), t(j, 1)];
            for v in &verts {
                let fv = nondet::f64_inputs(sys, v);
                let Some(k) = leaves_in_f64(sys, &start, &fv, safe) else { continue };
                if let Some(steps) = leaves_exactly(sys, &start, v, safe, k) {
                    return Some(steps);
                }
            }
        }
    }
    None
}

fn leaves_in_f64(sys: &System, start: &[f64], v: &[f64], safe: &Pred) -> Option<usize> {
    let mut s = start.to_vec();
    for k in 1..=RUN_STEPS {
        let mut memory = sim::initial_memory::<f64>(sys);
        let succ = sim::successors(sys, &s, &mut memory, v).ok()?;
        s = succ.next.first()?.1.clone();
        if !safe.eval_f64(&Env::new(&s, &[], &[])).unwrap_or(true) {
            return Some(k);
        }
    }
    None
}

/// Replays the run exactly (validated, for a controller through irrational values) for up to
/// `around + 2` steps; the step count at which it leaves Safe.
fn leaves_exactly(sys: &System, start: &[f64], v: &[Rational], safe: &Pred, around: usize) -> Option<usize> {
    let mut s: Vec<Rational> = start.iter().map(|&x| rational_from_f64(x)).collect();
    if !inside(&sys.init, &s) {
        return None; // a run from Init only
    }
    if !validate::is_rational_valued(sys) {
        // The generated mazes have one branch; the run leaves Safe at the first step whose
        // enclosure lies strictly outside it.
        return (1..=around + 2).find(|&k| {
            let choices = vec![(v.to_vec(), 0); k];
            matches!(validate::validate_violation(sys, &s, &choices, safe), Ok(Validation::Validated { .. }))
        });
    }
    for k in 1..=around + 2 {
        let mut memory = sim::initial_memory::<Rational>(sys);
        let succ = sim::successors(sys, &s, &mut memory, v).ok()?;
        s = succ.next.first()?.1.clone();
        if !inside(safe, &s) {
            return Some(k);
        }
    }
    None
}
