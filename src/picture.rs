//! The `--plot` picture of a check or synthesis: the invariant's partition coloured by outcome,
//! Init, Safe, the counterexample (a step of `check`, synthesis's whole unsafe run) and a few
//! simulated runs from Init, projected on two chosen state variables.

use anyhow::{Result, anyhow};
use std::path::{Path, PathBuf};
use trestle_ir::num::{Rational, down, to_f64_nearest, up};
use trestle_ir::system::System;
use trestle_ir::{FBox, Pred, RBox};
use trestle_plot::{Arrow, Marker, Region, RegionStyle, StatePlot};
use trestle_verify::simulate::{SimulateOptions, simulate};

/// What to draw besides the system's own regions.
#[derive(Default)]
pub struct Layers<'a> {
    pub proven: &'a [FBox],
    pub falsified: &'a [FBox],
    pub undecided: &'a [FBox],
    pub invariant: &'a [FBox],
    /// Cells synthesis left out (not shown unsafe).
    pub dropped: &'a [FBox],
    /// A counterexample run, state by state (a step of `check`: two states).
    pub run: Vec<Vec<f64>>,
}

/// The picture flags of `check` and `synth`.
#[derive(clap::Args, Debug)]
pub struct PlotArgs {
    /// Draw the state space (.svg or .png): the boxes by outcome, Init, Safe, the counterexample
    /// and a few runs from Init.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// The two state variables to draw, as x,y (default: the first two).
    #[arg(long, value_name = "X,Y", requires = "plot")]
    pub plot_vars: Option<String>,
    /// The image size in pixels, as WIDTHxHEIGHT (default 800x600).
    #[arg(long, value_name = "WxH", requires = "plot")]
    pub plot_size: Option<String>,
}

impl PlotArgs {
    /// Where to draw, and how, once the system is known (bad flags are input errors before any
    /// work is done); `over_time` allows one variable, drawn against the step.
    pub fn target(&self, sys: &System, over_time: bool) -> Result<Option<(&Path, View)>> {
        let Some(path) = &self.plot else { return Ok(None) };
        Ok(Some((path, View::parse(sys, self.plot_vars.as_deref(), self.plot_size.as_deref(), over_time)?)))
    }
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
            None => return Err(anyhow!("--plot draws two state variables; {} has {}", sys.name, names.len())),
            Some(text) => {
                let picked: Vec<&str> = text.split(',').map(str::trim).collect();
                let index = |name: &str| {
                    names.iter().position(|n| *n == name).ok_or_else(|| {
                        anyhow!("--plot-vars: '{name}' is not a state variable (state: {})", names.join(", "))
                    })
                };
                match picked.as_slice() {
                    [x, y] if x != y => vec![index(x)?, index(y)?],
                    [x] if over_time => vec![index(x)?],
                    _ if over_time => {
                        return Err(anyhow!("--plot-vars takes one state variable (drawn over time) or two, as x,y"));
                    }
                    _ => return Err(anyhow!("--plot-vars takes two different state variables, as x,y")),
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
                        return Err(anyhow!(
                            "--plot-size takes WIDTHxHEIGHT in pixels, each {lo}..={hi} (e.g. 1200x900)"
                        ));
                    }
                }
            }
        };
        Ok(View { vars, size })
    }
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

pub fn draw(sys: &System, title: &str, layers: &Layers<'_>, view_of: &View, path: &Path) -> Result<()> {
    let vars = view_of.vars.as_slice();
    if vars.len() != 2 {
        return Err(anyhow!("--plot draws two state variables here"));
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
    trestle_plot::render(&plot, path).map_err(|e| anyhow!("cannot draw {}: {e}", path.display()))
}

/// The reach-set picture of `ltl`: bound propagation's enclosure of every step (`enclosures[t]`,
/// one interval per state variable) with runs simulated from Init, either one variable against the
/// step or two variables in the state plane.
pub fn draw_reach(
    sys: &System,
    title: &str,
    enclosures: &[Vec<(f64, f64)>],
    view_of: &View,
    path: &Path,
) -> Result<()> {
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
        _ => return Err(anyhow!("--plot draws one or two state variables")),
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
        return Err(anyhow!("nothing finite to draw: the enclosures are unbounded"));
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
    trestle_plot::render(&plot, path).map_err(|e| anyhow!("cannot draw {}: {e}", path.display()))
}
