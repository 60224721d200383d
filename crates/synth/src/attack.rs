//! The search for a run from Init that leaves Safe, when no invariant was proven.
//!
//! Floating point proposes, exact arithmetic decides. Runs are simulated in f64 from many legal
//! start states of Init (centres, corners, seeded random points, the cells of Init that had to be
//! dropped; integers for `int` variables), with the environment's choices at their extremes
//! (every vertex and the interior points of [`Choices`], greedily the one whose successor gets
//! farthest out, or each held fixed) or random; the start state is then improved by projected
//! gradient ascent on the largest distance outside Safe along the run (forward-mode derivatives
//! through the step, [`crate::dual`]), then by coordinate ascent where the gradient vanishes.
//!
//! "Farthest out" is the max-norm distance outside Safe, ties broken by the sum of the gaps to
//! every face of the nearest box, so a slow drift toward one face counts even while another face
//! is nearer. A run goes on, up to the configured number of steps, as long as it reaches a new
//! extreme toward some face within [`PATIENCE`] steps (a drift of hundreds of steps is followed to
//! the end), and a few steps past leaving Safe, so that an exact replay lagging the floats by a
//! rounding error still leaves. A run that leaves Safe in f64 (or ends within rounding noise of
//! it) is replayed through `sim::step::<Rational>` from the exact value of its start state with
//! the exact recorded choices; only if that replay starts in Init and reaches a state outside Safe
//! is it reported as a refutation. A system with values of no rational form (tanh, sin, ...) has
//! no exact replay: there the run is validated instead (`trestle_core::ValidatedTrace`: the exact
//! start, the run enclosed at 256 bits and more, the last state's enclosure strictly outside Safe).

use crate::dual::Dual;
use crate::report::{ExactRun, Trajectory};
use rayon::prelude::*;
use std::time::Instant;
use trestle_core::ValidatedTrace;
use trestle_ir::nondet::Choices;
use trestle_ir::num::{down, rational_from_f64, to_f64_nearest, up};
use trestle_ir::sim::{self, Scalar};
use trestle_ir::space::{Stream, distance_outside};
use trestle_ir::system::{NondetDomain, System};
use trestle_ir::{Env, InnerBox, OuterBox, Pred, Rational, space};

/// Steps a simulated run may go on without getting closer to any face of Safe.
const PATIENCE: usize = 40;

/// Steps simulated past the first one outside Safe (the exact replay may leave a step later).
const PAST_LEAVING: usize = 4;

/// Relative progress toward a face that counts (of Safe's extent), and the distance within which
/// a run ending inside is still replayed exactly (rounding noise).
const NOISE: f64 = 1e-9;

/// Most environment choices tried per step.
const MAX_CHOICES: usize = 256;

/// Most gradient steps per start state.
const GRADIENT_STEPS: usize = 32;

/// How the environment chooses at each step.
#[derive(Clone, Copy, Debug)]
enum Policy {
    /// Among the vertices of the inputs and the enabled branches, the successor farthest out.
    Greedy,
    /// Vertex `k` every step (branches still greedy).
    Vertex(usize),
    /// Seeded random inputs (branches still greedy).
    Random(u64),
}

/// The environment's choice at one step: the successor farthest out so far.
struct Choice {
    /// Distance outside Safe and the sum of the gaps to the faces of the nearest box.
    key: (f64, f64),
    gaps: Vec<f64>,
    next: Vec<f64>,
    nondet: Vec<Rational>,
    branch: usize,
    memory: sim::Memory<f64>,
}

/// One simulated run (f64) with its exact choices.
#[derive(Clone, Debug)]
struct Sim {
    states: Vec<Vec<f64>>,
    nondet: Vec<Vec<Rational>>,
    branches: Vec<usize>,
    /// Largest distance outside Safe along the run, and the step where it is reached.
    best: f64,
    best_at: usize,
}

pub(crate) struct Attack<'a> {
    sys: &'a System,
    safe: &'a Pred,
    safe_boxes: Vec<OuterBox>,
    init: &'a Pred,
    init_boxes: Vec<InnerBox>,
    /// The legal exact values of each Init box (`None`: it holds no state).
    init_ranges: Vec<Option<Vec<(Rational, Rational)>>>,
    vertices: Vec<(Vec<f64>, Vec<Rational>)>,
    /// Per coordinate: the progress toward a face that counts.
    tolerance: Vec<f64>,
    steps: usize,
    deadline: Option<Instant>,
    pub simulations: std::sync::atomic::AtomicUsize,
    /// Whether every value of a run is rational (exact replay), else validated replay.
    rational: bool,
}

/// The distance outside the union and, per coordinate, the signed gap to the nearer face of the
/// box that attains it (> 0 beyond the face).
fn gaps(boxes: &[OuterBox], x: &[f64]) -> (f64, Vec<f64>) {
    let mut best = (f64::INFINITY, Vec::new());
    for b in boxes {
        let g: Vec<f64> = x.iter().enumerate().map(|(i, &xi)| (b.lo[i] - xi).max(xi - b.hi[i])).collect();
        let d = g.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if d < best.0 {
            best = (d, g);
        }
    }
    best
}

fn farther(a: (f64, f64), b: (f64, f64)) -> bool {
    a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)).is_gt()
}

/// The distance with the term that attains it: the coordinate and its sign (`+1` when the
/// distance grows with the coordinate, `-1` when it shrinks).
fn distance_term(boxes: &[OuterBox], x: &[f64]) -> (f64, usize, f64) {
    let mut best = (f64::INFINITY, 0, 0.0);
    for b in boxes {
        let mut worst = (f64::NEG_INFINITY, 0, 0.0);
        for (i, &xi) in x.iter().enumerate() {
            for (gap, sign) in [(b.lo[i] - xi, -1.0), (xi - b.hi[i], 1.0)] {
                if gap > worst.0 {
                    worst = (gap, i, sign);
                }
            }
        }
        if worst.0 < best.0 {
            best = worst;
        }
    }
    best
}

impl<'a> Attack<'a> {
    /// `safe_boxes`: Safe's boxes rounded outward; `init_boxes`: bounded f64 boxes inside Init.
    pub fn new(
        sys: &'a System,
        safe: &'a Pred,
        safe_boxes: Vec<OuterBox>,
        init_boxes: Vec<InnerBox>,
        steps: usize,
        deadline: Option<Instant>,
    ) -> Attack<'a> {
        let vertices = Choices::new(sys, MAX_CHOICES)
            .fixed()
            .iter()
            .map(|v| (trestle_bridge::witness::f64_inputs(sys, v), v.clone()))
            .collect();
        let d = sys.state.len();
        let tolerance = (0..d)
            .map(|i| {
                let lo = safe_boxes.iter().map(|b| b.lo[i]).fold(f64::INFINITY, f64::min);
                let hi = safe_boxes.iter().map(|b| b.hi[i]).fold(f64::NEG_INFINITY, f64::max);
                NOISE * (hi - lo).max(f64::MIN_POSITIVE)
            })
            .collect();
        let init_ranges = init_boxes.iter().map(|b| space::legal_box(sys, b)).collect();
        Attack {
            sys,
            safe,
            safe_boxes,
            init: &sys.init,
            init_boxes,
            init_ranges,
            vertices,
            tolerance,
            steps,
            deadline,
            simulations: Default::default(),
            rational: trestle_core::validate::is_rational_valued(sys),
        }
    }

    fn late(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() > d)
    }

    fn distance(&self, x: &[f64]) -> f64 {
        distance_outside(&self.safe_boxes, x)
    }

    fn random_choice(&self, rng: &mut Stream) -> (Vec<f64>, Vec<Rational>) {
        self.sys
            .nondet
            .iter()
            .map(|v| match &v.domain {
                NondetDomain::Interval(l, h) => {
                    let (lo, hi) = (up(l), down(h));
                    if lo > hi {
                        (to_f64_nearest(l), l.clone())
                    } else {
                        let x = (lo + (hi - lo) * rng.unit()).clamp(lo, hi);
                        (x, rational_from_f64(x))
                    }
                }
                NondetDomain::Set(s) => {
                    let q = &s[((rng.unit() * s.len() as f64) as usize).min(s.len() - 1)];
                    (to_f64_nearest(q), q.clone())
                }
            })
            .unzip()
    }

    /// The farthest-out successor over the choices of one step (none: every step fails, e.g. a
    /// deadlock, or a successor outside the domains that the system calls an error).
    fn choose(&self, state: &[f64], memory: &sim::Memory<f64>, policy: Policy, rng: &mut Stream) -> Option<Choice> {
        let choices: Vec<(Vec<f64>, Vec<Rational>)> = match policy {
            Policy::Greedy => self.vertices.clone(),
            Policy::Vertex(i) => vec![self.vertices[i % self.vertices.len()].clone()],
            Policy::Random(_) => vec![self.random_choice(rng)],
        };
        let mut steps = sim::StepsFrom::new(self.sys, state, memory).ok()?;
        let mut best: Option<Choice> = None;
        for (nf, nq) in choices {
            let Ok((s, mem)) = steps.under(&nf) else { continue };
            if !s.exits.is_empty() {
                continue;
            }
            for (b, next) in s.next {
                let (dist, g) = gaps(&self.safe_boxes, &next);
                let key = (dist, g.iter().sum());
                if best.as_ref().is_none_or(|c| farther(key, c.key)) {
                    best = Some(Choice { key, gaps: g, next, nondet: nq.clone(), branch: b, memory: mem.clone() });
                }
            }
        }
        best
    }

    /// Simulates from `start` in f64 (see the module documentation for when it stops).
    fn simulate(&self, start: &[f64], policy: Policy) -> Sim {
        self.simulations.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (d0, mut frontier) = gaps(&self.safe_boxes, start);
        let mut run =
            Sim { states: vec![start.to_vec()], nondet: Vec::new(), branches: Vec::new(), best: d0, best_at: 0 };
        let mut rng = Stream::new(match policy {
            Policy::Random(seed) => seed,
            _ => 1,
        });
        let mut state = start.to_vec();
        let mut memory = sim::initial_memory::<f64>(self.sys);
        let (mut progress_at, mut left_at) = (0, None);
        for k in 0..self.steps {
            let Some(c) = self.choose(&state, &memory, policy, &mut rng) else { break };
            let stalled = c.next == state && !matches!(policy, Policy::Random(_));
            run.nondet.push(c.nondet);
            run.branches.push(c.branch);
            run.states.push(c.next.clone());
            if c.key.0 > run.best {
                run.best = c.key.0;
                run.best_at = k + 1;
            }
            for (i, g) in c.gaps.iter().enumerate() {
                if *g > frontier[i] + self.tolerance[i] {
                    progress_at = k + 1;
                }
                frontier[i] = frontier[i].max(*g);
            }
            if c.key.0 > 0.0 && left_at.is_none() {
                left_at = Some(k + 1);
            }
            state = c.next;
            memory = c.memory;
            let done = match left_at {
                Some(at) => k + 1 >= at + PAST_LEAVING,
                None => k + 1 >= progress_at + PATIENCE,
            };
            if stalled || done {
                break;
            }
        }
        run
    }

    /// Replays the recorded steps exactly; `Some` (cut at the first exact state outside Safe) when
    /// the exact start is in Init and some exact state leaves Safe.
    fn replay(&self, run: &Sim) -> Option<ExactRun> {
        let start: Vec<Rational> = run.states[0].iter().map(|&x| rational_from_f64(x)).collect();
        if !self.init.eval_exact(&Env::new(&start, &[], &[])).unwrap_or(false) {
            return None;
        }
        let mut out = ExactRun { states: vec![start], actions: Vec::new(), nondet: Vec::new(), branches: Vec::new() };
        let mut memory = sim::initial_memory::<Rational>(self.sys);
        for k in 0..run.branches.len() {
            if self.late() {
                return None;
            }
            let state = out.states.last().expect("non-empty").clone();
            let t = sim::step::<Rational>(self.sys, &state, &mut memory, &run.nondet[k], run.branches[k]).ok()?;
            let outside = !self.safe.eval_exact(&Env::new(&t.next, &[], &[])).unwrap_or(true);
            out.actions.push(t.actions);
            out.nondet.push(t.nondet);
            out.branches.push(t.branch);
            out.states.push(t.next);
            if outside {
                return Some(out);
            }
        }
        None
    }

    /// `y` moved to the nearest legal f64 state of Init box `k` (integers for `int`, ...).
    fn legal(&self, k: usize, y: &[f64]) -> Option<Vec<f64>> {
        space::nearest_f64(self.sys, self.init_ranges[k].as_ref()?, y)
    }

    /// Start states: centre, corners and seeded random points of each Init box, plus `extra`
    /// (e.g. centres of dropped cells), each with the index of the Init box it lies in.
    fn starts(&self, extra: &[Vec<f64>]) -> Vec<(Vec<f64>, usize)> {
        let mut raw = Vec::new();
        let mut rng = Stream::new(7);
        for (k, b) in self.init_boxes.iter().enumerate() {
            let d = b.dims();
            raw.push((b.center(), k));
            if d <= 8 {
                for mask in 0..(1usize << d) {
                    raw.push(((0..d).map(|i| if mask >> i & 1 == 1 { b.hi[i] } else { b.lo[i] }).collect(), k));
                }
            }
            for _ in 0..16 {
                raw.push(((0..d).map(|i| b.lo[i] + (b.hi[i] - b.lo[i]) * rng.unit()).collect(), k));
            }
        }
        for x in extra {
            if let Some(k) = self.init_boxes.iter().position(|b| b.contains(x)) {
                raw.push((x.clone(), k));
            }
        }
        let mut out: Vec<(Vec<f64>, usize)> = Vec::new();
        for (x, k) in raw {
            if let Some(y) = self.legal(k, &x)
                && !out.iter().any(|(z, _)| *z == y)
            {
                out.push((y, k));
            }
        }
        out
    }

    /// The gradient, with respect to the start state, of the distance outside Safe at the run's
    /// best step, the environment's choices held as recorded (forward mode through `sim::step`).
    fn gradient(&self, run: &Sim) -> Option<Vec<f64>> {
        let n = run.states[0].len();
        let mut state = Dual::variables(&run.states[0]);
        let mut memory = sim::initial_memory::<Dual>(self.sys);
        for k in 0..run.best_at {
            let nondet: Vec<Dual> = run.nondet[k].iter().map(Dual::from_rational).collect();
            state = sim::step::<Dual>(self.sys, &state, &mut memory, &nondet, run.branches[k]).ok()?.next;
        }
        let (_, i, sign) = distance_term(&self.safe_boxes, &state.iter().map(|s| s.v).collect::<Vec<_>>());
        Some((0..n).map(|j| sign * state[i].d.get(j).copied().unwrap_or(0.0)).collect())
    }

    /// Projected sign-gradient ascent of the distance outside Safe over the start state in the
    /// Init box `b`, from the run `first`: each step moves every coordinate by its step size in
    /// the gradient's direction, is kept when the re-simulated run (greedy choices) gets farther
    /// out, and halves the step sizes otherwise.
    fn ascend_gradient(&self, first: &Sim, k: usize) -> Sim {
        let b = &self.init_boxes[k];
        let mut best = first.clone();
        let mut step: Vec<f64> = b.widths().iter().map(|w| w * 0.125).collect();
        for _ in 0..GRADIENT_STEPS {
            if self.late() || best.best > 0.0 || step.iter().all(|&h| h == 0.0) {
                break;
            }
            let Some(g) = self.gradient(&best) else { break };
            if g.iter().all(|&gi| gi == 0.0) {
                break;
            }
            let x = &best.states[0];
            // sign(g) with sign(0) = 0 (f64::signum(0.0) is 1).
            let direction = |gi: f64| {
                if gi > 0.0 {
                    1.0
                } else if gi < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            };
            let y: Vec<f64> =
                (0..x.len()).map(|i| (x[i] + step[i] * direction(g[i])).clamp(b.lo[i], b.hi[i])).collect();
            let Some(y) = self.legal(k, &y) else { break };
            let run = self.simulate(&y, Policy::Greedy);
            if run.best > best.best {
                best = run;
            } else {
                step.iter_mut().for_each(|h| *h *= 0.5);
            }
        }
        best
    }

    fn trajectory(&self, run: &Sim, exact: Option<ExactRun>) -> Trajectory {
        let states = match &exact {
            Some(e) => e.states.iter().map(|s| s.iter().map(to_f64_nearest).collect()).collect(),
            None => run.states[..=run.best_at].to_vec(),
        };
        let distance = states.last().map_or(run.best, |s: &Vec<f64>| self.distance(s));
        Trajectory { states, distance, exact, validated: None }
    }

    /// Searches; returns the best run found (a refutation when its `exact` is set).
    pub fn run(&self, pool: &rayon::ThreadPool, extra: &[Vec<f64>]) -> Option<Trajectory> {
        let starts = self.starts(extra);
        if starts.is_empty() {
            return None;
        }
        let mut policies = vec![Policy::Greedy];
        policies.extend((0..self.vertices.len().min(8)).map(Policy::Vertex));
        policies.extend((0..4).map(|s| Policy::Random(s + 11)));
        if self.sys.nondet.is_empty() {
            policies.truncate(1);
        }
        // Every start under greedy choices, then the best few under every policy.
        let greedy: Vec<Sim> =
            pool.install(|| starts.par_iter().map(|(x, _)| self.simulate(x, Policy::Greedy)).collect());
        let mut ranked: Vec<usize> = (0..starts.len()).collect();
        ranked.sort_by(|&a, &b| greedy[b].best.total_cmp(&greedy[a].best).then(a.cmp(&b)));
        let mut best: Sim = greedy[ranked[0]].clone();
        if let Some(t) = self.confirm(&best) {
            return Some(t);
        }
        let top: Vec<usize> = ranked.iter().copied().take(4).collect();
        let jobs: Vec<(usize, Policy)> =
            top.iter().flat_map(|&s| policies.iter().skip(1).map(move |&p| (s, p))).collect();
        let more: Vec<Sim> = pool.install(|| jobs.par_iter().map(|&(s, p)| self.simulate(&starts[s].0, p)).collect());
        for run in more {
            if run.best > best.best {
                best = run;
            }
        }
        if let Some(t) = self.confirm(&best) {
            return Some(t);
        }
        // Gradient ascent on the start state (greedy choices), from the best few starts.
        let ascended: Vec<Sim> =
            pool.install(|| top.par_iter().map(|&s| self.ascend_gradient(&greedy[s], starts[s].1)).collect());
        for run in ascended {
            if run.best > best.best {
                best = run;
            }
        }
        if let Some(t) = self.confirm(&best) {
            return Some(t);
        }
        // Coordinate ascent (no gradient needed: flat pieces, saturated controllers), likewise.
        for &s in &top {
            if self.late() {
                break;
            }
            let (mut x, k) = starts[s].clone();
            let b = &self.init_boxes[k];
            let mut value = greedy[s].clone();
            let mut step: Vec<f64> = b.widths().iter().map(|w| w * 0.25).collect();
            for _ in 0..24 {
                if self.late() || step.iter().all(|&h| h == 0.0) {
                    break;
                }
                let moves: Vec<Vec<f64>> = (0..x.len())
                    .flat_map(|i| [1.0, -1.0].map(|dir| (i, dir)))
                    .filter_map(|(i, dir)| {
                        let mut y = x.clone();
                        y[i] = (y[i] + dir * step[i]).clamp(b.lo[i], b.hi[i]);
                        self.legal(k, &y)
                    })
                    .collect();
                let runs: Vec<Sim> =
                    pool.install(|| moves.par_iter().map(|y| self.simulate(y, Policy::Greedy)).collect());
                let winner = (0..runs.len()).max_by(|&a, &c| runs[a].best.total_cmp(&runs[c].best).then(c.cmp(&a)));
                match winner {
                    Some(w) if runs[w].best > value.best => {
                        value = runs[w].clone();
                        x = moves[w].clone();
                    }
                    _ => step.iter_mut().for_each(|h| *h *= 0.5),
                }
                if value.best > 0.0 {
                    break;
                }
            }
            if value.best > best.best {
                best = value;
            }
            if let Some(t) = self.confirm(&best) {
                return Some(t);
            }
        }
        Some(self.trajectory(&best, None))
    }

    /// The trajectory with its exact replay when the f64 run leaves Safe (or comes within
    /// rounding noise of leaving) and the exact replay leaves.
    fn confirm(&self, run: &Sim) -> Option<Trajectory> {
        let noise = self.tolerance.iter().copied().fold(0.0, f64::max);
        if run.best <= -noise {
            return None;
        }
        if !self.rational {
            let validated = self.validate(run)?;
            let mut t = self.trajectory(run, None);
            t.validated = Some(validated);
            return Some(t);
        }
        let exact = self.replay(run)?;
        Some(self.trajectory(run, Some(exact)))
    }

    /// For a system with values of no rational form: the run from the exact start (in Init)
    /// under the recorded choices, validated to end outside Safe (the enclosure of its last
    /// state strictly outside) at the first step from the farthest-out one on that establishes it.
    fn validate(&self, run: &Sim) -> Option<ValidatedTrace> {
        let start: Vec<Rational> = run.states[0].iter().map(|&x| rational_from_f64(x)).collect();
        if !self.init.eval_exact(&Env::new(&start, &[], &[])).unwrap_or(false) {
            return None;
        }
        let choices: Vec<(Vec<Rational>, usize)> =
            run.nondet.iter().cloned().zip(run.branches.iter().copied()).collect();
        let first = run.best_at.max(1).min(choices.len());
        (first..=(first + PAST_LEAVING).min(choices.len())).find_map(|k| {
            if self.late() {
                return None;
            }
            ValidatedTrace::establish(self.sys, &start, &choices[..k], self.safe).ok()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_config::{Overrides, load_system_from_str};
    use trestle_ir::RBox;

    /// `x' = x + 0.1 x^2` (a ReLU controller's push times `relu(x)`); `y` is pushed by a second
    /// ReLU and a choice `c in [-1, 1]`. Safe is `x <= 0.9` (and a wide band in `y`): within 5
    /// steps no run leaves Safe, and the farthest-out runs start at `x = 0.5`, the top of Init.
    const GROWING: &str = r#"
init = "0.1 <= x <= 0.5 and 0 <= y <= 1"
safe = "-10 <= x <= 0.9 and -5 <= y <= 5"
[state]
x = { type = "real" }
y = { type = "real" }
[nondet]
c = { interval = [-1, 1] }
[networks.push]
layers = [
  { weights = [[1.0, 0.0], [0.0, 1.0]], bias = [0.0, -0.5] },
  { weights = [[0.1, 0.0], [0.0, 0.2]], bias = [0.0, 0.0], activation = "identity" },
]
[controller]
network = "push"
inputs = ["x", "y"]
actions = ["a0", "a1"]
[step]
x = "x + relu(x) * a0"
y = "max(y + a1 + 0.1*c, -4)"
"#;

    fn attack(sys: &System) -> Attack<'_> {
        let safe = sys.safe.as_ref().unwrap();
        let boxes = |p: &Pred| p.to_box_union(2, 100).unwrap();
        let outer = boxes(safe).iter().map(RBox::outer_fbox).collect();
        let init = boxes(&sys.init).iter().filter_map(RBox::inner_fbox).collect();
        Attack::new(sys, safe, outer, init, 5, None)
    }

    fn system() -> System {
        load_system_from_str(GROWING, std::path::Path::new("growing.toml"), &Overrides::default()).unwrap()
    }

    /// The distance at the run's best step with the recorded choices, re-simulated in f64.
    fn replayed_distance(a: &Attack<'_>, run: &Sim, start: &[f64]) -> f64 {
        let mut state = start.to_vec();
        let mut memory = sim::initial_memory::<f64>(a.sys);
        for k in 0..run.best_at {
            let nondet: Vec<f64> = run.nondet[k].iter().map(to_f64_nearest).collect();
            state = sim::step::<f64>(a.sys, &state, &mut memory, &nondet, run.branches[k]).unwrap().next;
        }
        a.distance(&state)
    }

    #[test]
    fn the_gradient_of_a_run_matches_finite_differences() {
        let sys = system();
        let a = attack(&sys);
        for start in [[0.3, 0.2], [0.45, 0.8], [0.15, 0.55]] {
            let run = a.simulate(&start, Policy::Greedy);
            assert!(run.best_at > 0, "the run moves");
            let g = a.gradient(&run).unwrap();
            for i in 0..2 {
                let h = 1e-7;
                let (mut p, mut m) = (start, start);
                p[i] += h;
                m[i] -= h;
                let numeric = (replayed_distance(&a, &run, &p) - replayed_distance(&a, &run, &m)) / (2.0 * h);
                assert!((g[i] - numeric).abs() < 1e-5, "start {start:?}, d/dx{i}: {} vs {numeric}", g[i]);
            }
        }
    }

    #[test]
    fn gradient_ascent_moves_the_start_to_the_farthest_out_run() {
        let sys = system();
        let a = attack(&sys);
        let first = a.simulate(&[0.2, 0.5], Policy::Greedy);
        let best = a.ascend_gradient(&first, 0);
        assert!(best.best > first.best, "{} vs {}", best.best, first.best);
        assert_eq!(best.states[0][0], 0.5, "x at the top of Init: {:?}", best.states[0]);
        assert!(best.best <= 0.0, "no run leaves Safe within 5 steps");
    }
}
