//! The report's plots: time vs network size per run, a cactus plot (instances solved vs time),
//! splits vs size. Drawn as SVG with plotters, then rendered to PNG by resvg with an embedded
//! font (DejaVu Sans), so both formats carry titles, axis labels and legends whatever fonts the
//! machine has.

use crate::error::{CampaignError, Result};
use crate::outcome::JobStatus;
use crate::report::write_file;
use crate::store::JobRow;
use crate::table::{median, runs};
use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

const SIZE: (u32, u32) = (800, 560);
const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

#[derive(Clone, Copy, PartialEq)]
enum Mark {
    Dot,
    Cross,
}

struct Series {
    name: String,
    points: Vec<(f64, f64)>,
    /// Joined by a line (through the per-x medians when several points share an x).
    line: bool,
    mark: Mark,
    color: RGBColor,
}

struct Chart {
    title: String,
    x_desc: String,
    y_desc: String,
    x_log: bool,
    y_log: bool,
    series: Vec<Series>,
    /// A legend-only entry explaining the crosses.
    cross_note: Option<String>,
}

/// Draws every plot the run's data supports; returns (title, svg, png) of each.
pub fn draw_all(rows: &[JobRow], out: &Path) -> Result<Vec<(String, PathBuf, PathBuf)>> {
    let mut drawn = Vec::new();
    let charts =
        [("time-vs-size", time_vs_size(rows)), ("cactus", cactus(rows)), ("splits-vs-size", splits_vs_size(rows))];
    for (name, chart) in charts {
        let Some(chart) = chart else { continue };
        let svg = render_svg(&chart)?;
        let (svg_path, png_path) = (out.join(format!("{name}.svg")), out.join(format!("{name}.png")));
        write_file(&svg_path, svg.as_bytes())?;
        write_file(&png_path, &svg_to_png(&svg)?)?;
        drawn.push((chart.title.clone(), svg_path, png_path));
    }
    Ok(drawn)
}

fn finished(r: &JobRow) -> bool {
    matches!(r.status(), JobStatus::Proven | JobStatus::Evidence | JobStatus::Refuted | JobStatus::Unknown)
}

/// Wall time against hidden neurons, one colour per run; jobs killed at the limit as crosses.
fn time_vs_size(rows: &[JobRow]) -> Option<Chart> {
    let mut series = Vec::new();
    for (k, run) in runs(rows).iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        let mine = rows.iter().filter(|r| &r.run_name == run);
        let sized: Vec<&JobRow> = mine.filter(|r| r.neurons.is_some_and(|n| n > 0)).collect();
        let at = |r: &JobRow| r.neurons.unwrap_or(0) as f64;
        let done: Vec<(f64, f64)> = sized.iter().filter(|r| finished(r)).map(|r| (at(r), r.wall_seconds)).collect();
        let killed: Vec<(f64, f64)> =
            sized.iter().filter(|r| r.status() == JobStatus::Timeout).map(|r| (at(r), r.timeout_seconds)).collect();
        series.push(Series { name: run.clone(), points: done, line: true, mark: Mark::Dot, color });
        series.push(Series { name: String::new(), points: killed, line: false, mark: Mark::Cross, color });
    }
    let any_cross = series.iter().any(|s| s.mark == Mark::Cross && !s.points.is_empty());
    chart(
        "Wall-clock time vs network size",
        "hidden neurons",
        "wall-clock time per job (s)",
        (true, true),
        series,
        any_cross.then(|| "× killed at the time limit".to_string()),
    )
}

/// Instances solved (proven, evidence or refuted) within a time, per run.
fn cactus(rows: &[JobRow]) -> Option<Chart> {
    let series = runs(rows)
        .iter()
        .enumerate()
        .map(|(k, run)| {
            let mut times: Vec<f64> =
                rows.iter().filter(|r| &r.run_name == run && r.status().solved()).map(|r| r.wall_seconds).collect();
            times.sort_by(f64::total_cmp);
            let points = times.iter().enumerate().map(|(i, t)| ((i + 1) as f64, *t)).collect();
            Series { name: run.clone(), points, line: true, mark: Mark::Dot, color: COLORS[k % COLORS.len()] }
        })
        .collect();
    chart("Cactus plot", "instances solved", "wall-clock time per job (s)", (false, true), series, None)
}

/// Splits against hidden neurons, for the `check` runs that report splits (synthesis counts its
/// cell bisections under the same name: another quantity).
fn splits_vs_size(rows: &[JobRow]) -> Option<Chart> {
    let mut series = Vec::new();
    for (k, run) in runs(rows).iter().enumerate() {
        let points: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| &r.run_name == run && r.command == "check" && finished(r))
            .filter_map(|r| Some((r.neurons.filter(|&n| n > 0)? as f64, r.splits? as f64)))
            .collect();
        // A run whose jobs never split (one query per system) says nothing here.
        if points.iter().any(|p| p.1 > 0.0) {
            series.push(Series {
                name: run.clone(),
                points,
                line: true,
                mark: Mark::Dot,
                color: COLORS[k % COLORS.len()],
            });
        }
    }
    chart("Splits vs network size", "hidden neurons", "splits", (true, false), series, None)
}

fn chart(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    (x_log, y_log): (bool, bool),
    series: Vec<Series>,
    cross_note: Option<String>,
) -> Option<Chart> {
    if series.iter().all(|s| s.points.is_empty()) {
        return None;
    }
    Some(Chart { title: title.into(), x_desc: x_desc.into(), y_desc: y_desc.into(), x_log, y_log, series, cross_note })
}

/// The data range of an axis, padded; positive for log axes.
fn axis_range(values: impl Iterator<Item = f64>, log: bool, headroom: bool) -> (f64, f64) {
    let vals: Vec<f64> = values.filter(|v| v.is_finite() && (!log || *v > 0.0)).collect();
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return if log { (0.1, 10.0) } else { (0.0, 1.0) };
    }
    // Headroom above the data (the y axis) for the legend in the upper left: a third of the height.
    let room = if headroom { 0.5 } else { 0.0 };
    if log {
        let decades = (hi / lo).log10().max(1.0);
        (lo / 1.6, hi * 1.6 * 10f64.powf(room * decades))
    } else {
        let pad = ((hi - lo) * 0.08).max(hi.abs() * 0.05).max(0.5);
        (if lo >= 0.0 { 0.0 } else { lo - pad }, hi + pad + room * (hi - lo).max(1.0))
    }
}

fn render_svg(c: &Chart) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let xs = axis_range(c.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)), c.x_log, false);
        let ys = axis_range(c.series.iter().flat_map(|s| s.points.iter().map(|p| p.1)), c.y_log, true);
        let mut b = ChartBuilder::on(&root);
        b.caption(&c.title, ("sans-serif", 22)).margin(16).x_label_area_size(48).y_label_area_size(72);
        match (c.x_log, c.y_log) {
            (true, true) => draw(b.build_cartesian_2d((xs.0..xs.1).log_scale(), (ys.0..ys.1).log_scale()), c),
            (true, false) => draw(b.build_cartesian_2d((xs.0..xs.1).log_scale(), ys.0..ys.1), c),
            (false, true) => draw(b.build_cartesian_2d(xs.0..xs.1, (ys.0..ys.1).log_scale()), c),
            (false, false) => draw(b.build_cartesian_2d(xs.0..xs.1, ys.0..ys.1), c),
        }?;
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

type Built<'a, X, Y> = std::result::Result<
    ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    DrawingAreaErrorKind<<SVGBackend<'a> as DrawingBackend>::ErrorType>,
>;

fn draw<'a, X, Y>(built: Built<'a, X, Y>, c: &Chart) -> Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut chart = built.map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_label_formatter(&|x| if c.x_log { log_tick(*x) } else { tick(*x) })
        .y_label_formatter(&|y| if c.y_log { log_tick(*y) } else { tick(*y) })
        .x_desc(c.x_desc.as_str())
        .y_desc(c.y_desc.as_str())
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(plot_err)?;
    for s in &c.series {
        let color = s.color;
        if s.line && s.points.len() > 1 {
            chart.draw_series(LineSeries::new(median_line(&s.points), color.stroke_width(2))).map_err(plot_err)?;
        }
        let marks = s.points.iter().map(move |&p| -> DynElement<'static, SVGBackend, (f64, f64)> {
            match s.mark {
                Mark::Dot => Circle::new(p, 4, color.filled()).into_dyn(),
                Mark::Cross => Cross::new(p, 6, color.stroke_width(2)).into_dyn(),
            }
        });
        let drawn = chart.draw_series(marks).map_err(plot_err)?;
        if !s.name.is_empty() {
            drawn.label(s.name.as_str()).legend(move |(x, y)| {
                EmptyElement::at((x, y))
                    + PathElement::new(vec![(0, 0), (20, 0)], color.stroke_width(2))
                    + Circle::new((10, 0), 4, color.filled())
            });
        }
    }
    if let Some(note) = &c.cross_note {
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
            .map_err(plot_err)?
            .label(note.as_str())
            .legend(|(x, y)| Cross::new((x + 10, y), 6, BLACK.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(plot_err)
}

/// A tick label: `100`, `0.5`, `0.02` (three significant digits at most).
fn tick(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let digits = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
}

/// A tick label of a log axis: only 1, 2 and 5 times a power of ten are written (the others
/// crowd into each other near the top of a decade).
fn log_tick(x: f64) -> String {
    let mantissa = x / 10f64.powf(x.log10().floor());
    if [1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-6) { tick(x) } else { String::new() }
}

/// The line of a series: through the median y of each x, in x order.
fn median_line(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut xs: Vec<f64> = points.iter().map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    xs.into_iter()
        .filter_map(|x| median(points.iter().filter(|p| p.0 == x).map(|p| p.1).collect()).map(|y| (x, y)))
        .collect()
}

/// Renders an SVG to PNG with the plot crate's rasteriser (an embedded font: titles, axis labels
/// and legends survive).
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>> {
    trestle_plot::svg_to_png(svg).map_err(|e| CampaignError::internal(format!("plot: {e}")))
}

fn plot_err(e: impl std::fmt::Display) -> CampaignError {
    CampaignError::internal(format!("plot: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_lines_and_ranges() {
        let pts = [(64.0, 1.0), (64.0, 3.0), (32.0, 0.5), (64.0, 2.0)];
        assert_eq!(median_line(&pts), vec![(32.0, 0.5), (64.0, 2.0)]);
        let (lo, hi) = axis_range([1.0, 10.0].into_iter(), true, false);
        assert!(lo > 0.0 && lo < 1.0 && hi > 10.0);
        assert_eq!([log_tick(200.0), log_tick(800.0), log_tick(1000.0), log_tick(0.05)], ["200", "", "1000", "0.05"]);
        assert_eq!(
            [tick(100.0), tick(0.5), tick(0.0234), tick(1234.0), tick(2.5)],
            ["100", "0.5", "0.0234", "1234", "2.5"]
        );
        let (lo, hi) = axis_range([0.0, 10.0].into_iter(), false, false);
        assert!(lo == 0.0 && hi > 10.0);
    }
}
