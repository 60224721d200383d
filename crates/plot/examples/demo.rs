//! Draws a small pendulum-like picture to `demo.svg` and `demo.png` in the directory given as the
//! first argument (default: the current directory).

use std::path::PathBuf;

use trestle_plot::{Arrow, Marker, Region, RegionStyle, StatePlot, render};

fn main() -> Result<(), trestle_plot::PlotError> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| ".".into()));
    let mut plot = StatePlot::new("Bridge partition of the safe set", (-1.2, 1.2), (-1.2, 1.2));
    plot.x_label = "theta (rad)".into();
    plot.y_label = "omega (rad/s)".into();
    let n = 8;
    for i in 0..n {
        for j in 0..n {
            let lo = (-1.0 + 2.0 * f64::from(i) / f64::from(n), -1.0 + 2.0 * f64::from(j) / f64::from(n));
            let hi = (lo.0 + 2.0 / f64::from(n), lo.1 + 2.0 / f64::from(n));
            let style = match (i + j) % 11 {
                0 => RegionStyle::Falsified,
                5 => RegionStyle::Undecided,
                _ => RegionStyle::Proven,
            };
            plot.regions.push(Region::new(lo, hi, style));
        }
    }
    plot.regions.push(Region::new((-1.0, -1.0), (1.0, 1.0), RegionStyle::Safe).with_label("Safe"));
    plot.regions.push(Region::new((-0.2, -0.2), (0.2, 0.2), RegionStyle::Init).with_label("Init"));
    plot.trajectories.push(
        (0..60)
            .map(|k| f64::from(k) * 0.15)
            .map(|t| (0.9 * (-0.05 * t).exp() * t.cos(), -0.9 * (-0.05 * t).exp() * t.sin()))
            .collect(),
    );
    plot.arrows.push(Arrow::new((0.95, 0.95), (1.1, 1.15)).with_label("cex"));
    plot.points.push(Marker::new((0.95, 0.95)).with_label("x0"));
    render(&plot, &dir.join("demo.svg"))?;
    render(&plot, &dir.join("demo.png"))
}
