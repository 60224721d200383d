//! Pictures of a run (the CLI's `--plot`, the Python package's `plot=`): for `check` and
//! `synth` the state plane — the invariant's partition coloured by outcome, Init, Safe, the
//! counterexample (a step of `check`, synthesis's whole unsafe run) and a few simulated runs
//! from Init, projected on two chosen state variables; for `ltl` bound propagation's enclosure
//! of every step, over time or in the state plane. SVG, or PNG by the file's extension.

use crate::error::DriverError;
use crate::simulate::{SimulateOptions, simulate};
use crate::temporal::LtlRun;
use crate::{CheckRun, SynthRun};
use std::path::Path;
use trestle_bridge::engine::Inductiveness;
use trestle_bridge::witness::approx;
use trestle_ir::num::{Rational, down, to_f64_nearest, up};
use trestle_ir::system::System;
use trestle_ir::{FBox, Pred, RBox};
use trestle_plot::{Arrow, Marker, Region, RegionStyle, StatePlot};

type Result<T> = std::result::Result<T, DriverError>;

fn input(message: impl Into<String>) -> DriverError {
    DriverError::input(message.into())
}

/// What to draw besides the system's own regions.
#[derive(Default)]
struct Layers<'a> {
    pub proven: &'a [FBox],
    pub falsified: &'a [FBox],
    pub undecided: &'a [FBox],
    pub invariant: &'a [FBox],
    /// Cells synthesis left out (not shown unsafe).
    pub dropped: &'a [FBox],
    /// A counterexample run, state by state (a step of `check`: two states).
    pub run: Vec<Vec<f64>>,
}

/// Which state variables to draw (two: the state plane; one: the variable over time, for the
/// reach sets of `ltl`), and the image size.
pub struct View {
    pub vars: Vec<usize>,
    pub size: (u32, u32),
}

impl View {
    /// `vars` as `x,y` names of state variables (default: the first two; one name where `over_time`
    /// allows it, or by default when the system has one variable), `size` as `WxH`.
    pub fn parse(sys: &System, vars: Option<&str>, size: Option<&str>, over_time: bool) -> Result<View> {
        let names: Vec<&str> = sys.state.iter().map(|v| v.name.as_str()).collect();
        let vars = match vars {
            None if names.len() >= 2 => vec![0, 1],
            None if over_time => vec![0],
            None => {
                return Err(input(format!("a picture draws two state variables; {} has {}", sys.name, names.len())));
            }
            Some(text) => {
                let picked: Vec<&str> = text.split(',').map(str::trim).collect();
                let index = |name: &str| {
                    names.iter().position(|n| *n == name).ok_or_else(|| {
                        input(format!("plot variables: '{name}' is not a state variable (state: {})", names.join(", ")))
                    })
                };
                match picked.as_slice() {
                    [x, y] if x != y => vec![index(x)?, index(y)?],
                    [x] if over_time => vec![index(x)?],
                    _ if over_time => {
                        return Err(input("plot variables: one state variable (drawn over time) or two, as x,y"));
                    }
                    _ => return Err(input("plot variables: two different state variables, as x,y")),
                }
            }
        };
        let size = match size {
            None => trestle_plot::DEFAULT_SIZE,
            Some(text) => {
                let side = |s: &str| s.trim().parse::<u32>().ok();
                let (lo, hi) = (trestle_plot::MIN_SIDE, trestle_plot::MAX_SIDE);
                match text.split_once(['x', 'X']).and_then(|(w, h)| Some((side(w)?, side(h)?))) {
                    Some((w, h)) if (lo..=hi).contains(&w) && (lo..=hi).contains(&h) => (w, h),
                    _ => {
                        return Err(input(format!(
                            "plot size: WIDTHxHEIGHT in pixels, each {lo}..={hi} (e.g. 1200x900)"
                        )));
                    }
                }
            }
        };
        Ok(View { vars, size })
    }
}

/// Draws `check`'s run: the bridge's regions by outcome over the candidate, the refuting step.
pub fn draw_check(sys: &System, run: &CheckRun, view: &View, path: &Path) -> Result<()> {
    let r = &run.report;
    let step = match &r.inductive.outcome {
        Inductiveness::Refuted(x) => vec![approx(&x.witness.state), approx(&x.witness.next)],
        _ => Vec::new(),
    };
    let regions: Vec<_> = r.inductive.clauses.iter().map(|c| c.region.clone()).collect();
    let layers = Layers {
        proven: &regions,
        falsified: &r.inductive.falsified,
        undecided: &r.inductive.undecided,
        invariant: &r.cover,
        dropped: &[],
        run: step,
    };
    draw(sys, &format!("{}: {}", sys.name, r.word()), &layers, view, path)
}

/// Draws synthesis's run: its invariant (proven or not), the cells it dropped, the whole unsafe
/// run when one was replayed.
pub fn draw_synth(sys: &System, run: &SynthRun, view: &View, path: &Path) -> Result<()> {
    let r = &run.report;
    let unsafe_run = r.trajectory.as_ref().filter(|t| t.exact.is_some()).map(|t| t.states.clone());
    let proven = r.verdict.is_proven();
    let none: &[FBox] = &[];
    let layers = Layers {
        proven: if proven { &r.invariant } else { none },
        undecided: if proven { none } else { &r.invariant },
        dropped: &r.dropped,
        run: unsafe_run.unwrap_or_default(),
        ..Default::default()
    };
    draw(sys, &format!("{}: synthesis {}", sys.name, r.word()), &layers, view, path)
}

/// Draws `ltl`'s reach sets (bound propagation's enclosure of every step) with runs from Init;
/// `Ok(false)` when no enclosures were computed (a method other than bound propagation decided).
pub fn draw_ltl(sys: &System, run: &LtlRun, title: &str, view: &View, path: &Path) -> Result<bool> {
    let enclosures = &run.ltl.stats.bpt_enclosures;
    if enclosures.is_empty() {
        return Ok(false);
    }
    draw_reach(sys, title, enclosures, view, path)?;
    Ok(true)
}

fn boxes(p: &Pred, dims: usize) -> Vec<RBox> {
    p.to_box_union(dims, 64).unwrap_or_default()
}

/// The f64 ends of a rational box on the two drawn variables, unbounded sides clipped to `view`
/// (a 2-D box).
fn flat(b: &RBox, vars: &[usize], view: &FBox) -> FBox {
    let lo = (0..2).map(|k| b.lo[vars[k]].as_ref().map_or(view.lo[k], down)).collect();
    let hi = (0..2).map(|k| b.hi[vars[k]].as_ref().map_or(view.hi[k], up)).collect();
    FBox::new(lo, hi)
}

/// An n-dimensional f64 box's projection on the two drawn variables.
fn project(b: &FBox, vars: &[usize]) -> FBox {
    FBox::new(vec![b.lo[vars[0]], b.lo[vars[1]]], vec![b.hi[vars[0]], b.hi[vars[1]]])
}

/// A few runs from Init (the driver's simulator in f64, a fixed seed), state by state; a run that
/// stops early ends there, and none are drawn when Init gives no start state.
fn runs(sys: &System, count: usize, steps: usize) -> Vec<Vec<Vec<f64>>> {
    let opts = SimulateOptions { steps, runs: count, seed: 7, float: true, ..SimulateOptions::default() };
    let f64s = |v: &[Rational]| v.iter().map(to_f64_nearest).collect::<Vec<f64>>();
    simulate(sys, &opts)
        .unwrap_or_default()
        .iter()
        .map(|run| {
            let mut states: Vec<Vec<f64>> = run.steps.iter().map(|t| f64s(&t.state)).collect();
            states.push(f64s(&run.last));
            states
        })
        .collect()
}

fn draw(sys: &System, title: &str, layers: &Layers<'_>, view_of: &View, path: &Path) -> Result<()> {
    let vars = view_of.vars.as_slice();
    if vars.len() != 2 {
        return Err(input("a picture of the state plane draws two state variables"));
    }
    let d = sys.state.len();
    let init = boxes(&sys.init, d);
    let safe = sys.safe.as_ref().map(|s| boxes(s, d)).unwrap_or_default();
    let cells = |bs: &[FBox]| bs.iter().map(|b| project(b, vars)).collect::<Vec<_>>();
    let (proven, falsified, undecided) = (cells(layers.proven), cells(layers.falsified), cells(layers.undecided));
    let (invariant, dropped) = (cells(layers.invariant), cells(layers.dropped));
    let run: Vec<(f64, f64)> = layers.run.iter().map(|s| (s[vars[0]], s[vars[1]])).collect();
    // The view: everything drawn, with a margin.
    let mut view = FBox::new(vec![f64::INFINITY; 2], vec![f64::NEG_INFINITY; 2]);
    let mut grow = |b: &FBox| {
        for i in 0..2 {
            view.lo[i] = view.lo[i].min(b.lo[i]);
            view.hi[i] = view.hi[i].max(b.hi[i]);
        }
    };
    let unit = FBox::new(vec![0.0, 0.0], vec![1.0, 1.0]);
    for b in invariant.iter().chain(&proven).chain(&falsified).chain(&undecided).chain(&dropped) {
        grow(b);
    }
    for b in init.iter().chain(&safe).filter(|b| vars.iter().all(|&v| b.lo[v].is_some() && b.hi[v].is_some())) {
        grow(&flat(b, vars, &unit));
    }
    for &(x, y) in &run {
        grow(&FBox::new(vec![x, y], vec![x, y]));
    }
    if !view.lo[0].is_finite() || !view.lo[1].is_finite() {
        view = unit;
    }
    for i in 0..2 {
        let m = 0.05 * (view.hi[i] - view.lo[i]).max(1e-9);
        view.lo[i] -= m;
        view.hi[i] += m;
    }
    let mut plot = StatePlot::new(title, (view.lo[0], view.hi[0]), (view.lo[1], view.hi[1]));
    plot.size = view_of.size;
    plot.x_label = sys.state[vars[0]].name.clone();
    plot.y_label = sys.state[vars[1]].name.clone();
    let region = |b: &FBox, style| Region::new((b.lo[0], b.lo[1]), (b.hi[0], b.hi[1]), style);
    for b in &safe {
        plot.regions.push(region(&flat(b, vars, &view), RegionStyle::Safe));
    }
    plot.regions.extend(invariant.iter().map(|b| region(b, RegionStyle::Invariant)));
    plot.regions.extend(proven.iter().map(|b| region(b, RegionStyle::Proven)));
    plot.regions.extend(undecided.iter().map(|b| region(b, RegionStyle::Undecided)));
    plot.regions.extend(dropped.iter().map(|b| region(b, RegionStyle::Dropped)));
    plot.regions.extend(falsified.iter().map(|b| region(b, RegionStyle::Falsified)));
    for b in &init {
        plot.regions.push(region(&flat(b, vars, &view), RegionStyle::Init));
    }
    plot.trajectories = runs(sys, 5, 40).iter().map(|r| r.iter().map(|s| (s[vars[0]], s[vars[1]])).collect()).collect();
    for pair in run.windows(2) {
        plot.arrows.push(Arrow::new(pair[0], pair[1]));
    }
    if let (Some(&start), Some(last)) = (run.first(), plot.arrows.last_mut()) {
        last.label = Some("counterexample".into());
        plot.points.push(Marker::new(start));
    }
    trestle_plot::render(&plot, path).map_err(|e| input(format!("cannot draw {}: {e}", path.display())))
}

/// The reach-set picture of `ltl`: bound propagation's enclosure of every step (`enclosures[t]`,
/// one interval per state variable) with runs simulated from Init, either one variable against the
/// step or two variables in the state plane.
fn draw_reach(sys: &System, title: &str, enclosures: &[Vec<(f64, f64)>], view_of: &View, path: &Path) -> Result<()> {
    let vars = view_of.vars.as_slice();
    let steps = enclosures.len().saturating_sub(1).max(1);
    let sampled = runs(sys, 8, steps);
    let reach = RegionStyle::Custom { fill: (31, 119, 180), alpha: 0.18, outline: true };
    let (regions, trajectories): (Vec<Region>, Vec<Vec<(f64, f64)>>) = match vars {
        [v] => (
            enclosures
                .iter()
                .enumerate()
                .map(|(t, e)| Region::new((t as f64 - 0.3, e[*v].0), (t as f64 + 0.3, e[*v].1), reach))
                .collect(),
            sampled.iter().map(|r| r.iter().enumerate().map(|(t, s)| (t as f64, s[*v])).collect()).collect(),
        ),
        [a, b] => (
            enclosures.iter().map(|e| Region::new((e[*a].0, e[*b].0), (e[*a].1, e[*b].1), reach)).collect(),
            sampled.iter().map(|r| r.iter().map(|s| (s[*a], s[*b])).collect()).collect(),
        ),
        _ => return Err(input("a picture of reach sets draws one or two state variables")),
    };
    let points = regions
        .iter()
        .flat_map(|r| [r.lo, r.hi])
        .chain(trajectories.iter().flatten().copied())
        .filter(|p| p.0.is_finite() && p.1.is_finite());
    let (mut lo, mut hi) = ((f64::INFINITY, f64::INFINITY), (f64::NEG_INFINITY, f64::NEG_INFINITY));
    for (x, y) in points {
        (lo.0, lo.1, hi.0, hi.1) = (lo.0.min(x), lo.1.min(y), hi.0.max(x), hi.1.max(y));
    }
    if !(lo.0.is_finite() && lo.1.is_finite()) {
        return Err(input("nothing finite to draw: the enclosures are unbounded"));
    }
    let margin = |l: f64, h: f64| 0.05 * (h - l).max(1e-9);
    let (mx, my) = (margin(lo.0, hi.0), margin(lo.1, hi.1));
    let mut plot = StatePlot::new(title, (lo.0 - mx, hi.0 + mx), (lo.1 - my, hi.1 + my));
    plot.size = view_of.size;
    (plot.x_label, plot.y_label) = match vars {
        [v] => ("step".to_string(), sys.state[*v].name.clone()),
        _ => (sys.state[vars[0]].name.clone(), sys.state[vars[1]].name.clone()),
    };
    // Unbounded sides of an enclosure are clipped to the view.
    let (x_view, y_view) = (plot.x_range, plot.y_range);
    let clip = |v: f64, (l, h): (f64, f64)| v.clamp(l, h);
    plot.regions = regions
        .into_iter()
        .enumerate()
        .map(|(t, r)| {
            let r = Region::new(
                (clip(r.lo.0, x_view), clip(r.lo.1, y_view)),
                (clip(r.hi.0, x_view), clip(r.hi.1, y_view)),
                r.style,
            );
            if t == 0 { r.with_label("enclosures") } else { r }
        })
        .collect();
    plot.trajectories = trajectories;
    trestle_plot::render(&plot, path).map_err(|e| input(format!("cannot draw {}: {e}", path.display())))
}
