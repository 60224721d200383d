//! The `--plot` picture of a check or synthesis: the invariant's partition coloured by outcome,
//! Init, Safe, the counterexample step and a few simulated runs from Init.

use anyhow::{Result, anyhow};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use trestle_ir::num::{down, to_f64_nearest, up};
use trestle_ir::sim;
use trestle_ir::system::{NondetDomain, System};
use trestle_ir::{FBox, Pred, RBox};
use trestle_plot::{Arrow, Marker, Region, RegionStyle, StatePlot};

/// What to draw besides the system's own regions.
#[derive(Default)]
pub struct Layers<'a> {
    pub proven: &'a [FBox],
    pub falsified: &'a [FBox],
    pub undecided: &'a [FBox],
    pub invariant: &'a [FBox],
    /// A counterexample step: state -> successor.
    pub step: Option<(Vec<f64>, Vec<f64>)>,
}

fn boxes(p: &Pred, dims: usize) -> Vec<RBox> {
    p.to_box_union(dims, 64).unwrap_or_default()
}

/// f64 ends of a rational box, unbounded sides clipped to `view`.
fn flat(b: &RBox, view: &FBox) -> Option<FBox> {
    let lo = (0..2).map(|i| b.lo[i].as_ref().map_or(view.lo[i], down)).collect();
    let hi = (0..2).map(|i| b.hi[i].as_ref().map_or(view.hi[i], up)).collect();
    Some(FBox::new(lo, hi))
}

/// Simulated runs from Init (f64, random choices from a fixed seed).
fn runs(sys: &System, init: &[RBox], count: usize, steps: usize) -> Vec<Vec<(f64, f64)>> {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut out = Vec::new();
    for k in 0..count {
        let Some(b) = init.get(k % init.len().max(1)) else { break };
        let Some(mut state) = (0..sys.state.len())
            .map(|i| {
                let (lo, hi) = (to_f64_nearest(b.lo[i].as_ref()?), to_f64_nearest(b.hi[i].as_ref()?));
                Some(lo + (hi - lo) * rng.random::<f64>())
            })
            .collect::<Option<Vec<f64>>>()
        else {
            break;
        };
        let mut memory = sim::initial_memory::<f64>(sys);
        let mut path = vec![(state[0], state[1])];
        for _ in 0..steps {
            let nondet: Vec<f64> = sys
                .nondet
                .iter()
                .map(|v| match &v.domain {
                    NondetDomain::Interval(l, h) => {
                        let (l, h) = (to_f64_nearest(l), to_f64_nearest(h));
                        (l + (h - l) * rng.random::<f64>()).clamp(l, h)
                    }
                    NondetDomain::Set(s) => to_f64_nearest(&s[rng.random_range(0..s.len())]),
                })
                .collect();
            let pick = |enabled: &[usize]| Ok(enabled[rng.random_range(0..enabled.len())]);
            match sim::step_choosing(sys, &state, &mut memory, &nondet, pick) {
                Ok(t) => state = t.next,
                Err(_) => break,
            }
            path.push((state[0], state[1]));
        }
        out.push(path);
    }
    out
}

pub fn draw(sys: &System, title: &str, layers: &Layers<'_>, path: &std::path::Path) -> Result<()> {
    if sys.state.len() < 2 {
        return Err(anyhow!("--plot draws two state variables; {} has {}", sys.name, sys.state.len()));
    }
    let d = sys.state.len();
    let init = boxes(&sys.init, d);
    let safe = sys.safe.as_ref().map(|s| boxes(s, d)).unwrap_or_default();
    // The view: everything drawn, with a margin.
    let mut view = FBox::new(vec![f64::INFINITY; 2], vec![f64::NEG_INFINITY; 2]);
    let mut grow = |b: &FBox| {
        for i in 0..2 {
            view.lo[i] = view.lo[i].min(b.lo[i]);
            view.hi[i] = view.hi[i].max(b.hi[i]);
        }
    };
    let unit = FBox::new(vec![0.0, 0.0], vec![1.0, 1.0]);
    for b in layers.invariant.iter().chain(layers.proven).chain(layers.falsified).chain(layers.undecided) {
        grow(b);
    }
    for b in init.iter().chain(&safe).filter(|b| b.is_bounded()) {
        grow(&flat(b, &unit).expect("bounded"));
    }
    if let Some((s, n)) = &layers.step {
        grow(&FBox::new(s[..2].to_vec(), s[..2].to_vec()));
        grow(&FBox::new(n[..2].to_vec(), n[..2].to_vec()));
    }
    if !view.lo[0].is_finite() {
        view = unit;
    }
    for i in 0..2 {
        let m = 0.05 * (view.hi[i] - view.lo[i]).max(1e-9);
        view.lo[i] -= m;
        view.hi[i] += m;
    }
    let mut plot = StatePlot::new(title, (view.lo[0], view.hi[0]), (view.lo[1], view.hi[1]));
    plot.x_label = sys.state[0].name.clone();
    plot.y_label = sys.state[1].name.clone();
    let region = |b: &FBox, style| Region::new((b.lo[0], b.lo[1]), (b.hi[0], b.hi[1]), style);
    for b in &safe {
        plot.regions.push(region(&flat(b, &view).expect("clipped"), RegionStyle::Safe));
    }
    for b in layers.invariant {
        plot.regions.push(region(b, RegionStyle::Invariant));
    }
    plot.regions.extend(layers.proven.iter().map(|b| region(b, RegionStyle::Proven)));
    plot.regions.extend(layers.undecided.iter().map(|b| region(b, RegionStyle::Undecided)));
    plot.regions.extend(layers.falsified.iter().map(|b| region(b, RegionStyle::Falsified)));
    for b in &init {
        plot.regions.push(region(&flat(b, &view).expect("clipped"), RegionStyle::Init));
    }
    plot.trajectories = runs(sys, &init, 5, 40);
    if let Some((s, n)) = &layers.step {
        plot.arrows.push(Arrow::new((s[0], s[1]), (n[0], n[1])).with_label("counterexample"));
        plot.points.push(Marker::new((s[0], s[1])));
    }
    trestle_plot::render(&plot, path).map_err(|e| anyhow!("cannot draw {}: {e}", path.display()))
}
