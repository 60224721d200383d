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
    /// Killed at the time limit.
    Cross,
    /// Ended without an answer of its own: an error, out of memory, interrupted.
    Triangle,
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
    /// Legend-only entries explaining the marks other than dots.
    notes: Vec<(Mark, String)>,
    /// A dashed horizontal line at the jobs' time limit (the y axis reaches it).
    time_limit: Option<f64>,
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

/// Wall time against hidden neurons, one colour per run; jobs killed at the limit as crosses at
/// the limit, jobs that ended in an error or out of memory as triangles at their time.
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
        let failed: Vec<(f64, f64)> = sized
            .iter()
            .filter(|r| !finished(r) && r.status() != JobStatus::Timeout)
            .map(|r| (at(r), r.wall_seconds))
            .collect();
        let name = if shares_x(&done) { format!("{run} (line: median per size)") } else { run.clone() };
        series.push(Series { name, points: done, line: true, mark: Mark::Dot, color });
        series.push(Series { name: String::new(), points: killed, line: false, mark: Mark::Cross, color });
        series.push(Series { name: String::new(), points: failed, line: false, mark: Mark::Triangle, color });
    }
    let mut c = chart(
        "Wall-clock time vs network size",
        "hidden neurons",
        "wall-clock time per job (s)",
        (true, true),
        series,
    )?;
    c.notes = mark_notes(&c.series);
    c.time_limit = time_limit(rows);
    Some(c)
}

/// Whether two points share an x (repetitions, or several instances of one size): the line then
/// runs through medians, and the legend says so.
fn shares_x(points: &[(f64, f64)]) -> bool {
    let mut xs: Vec<f64> = points.iter().map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.windows(2).any(|w| w[0] == w[1])
}

/// The legend notes of the crosses and triangles drawn.
fn mark_notes(series: &[Series]) -> Vec<(Mark, String)> {
    let used = |m: Mark| series.iter().any(|s| s.mark == m && !s.points.is_empty());
    let mut notes = Vec::new();
    if used(Mark::Cross) {
        notes.push((Mark::Cross, "killed at the time limit".to_string()));
    }
    if used(Mark::Triangle) {
        notes.push((Mark::Triangle, "error, out of memory or interrupted".to_string()));
    }
    notes
}

/// The jobs' time limit, when they share one (else none is drawn).
fn time_limit(rows: &[JobRow]) -> Option<f64> {
    let first = rows.first()?.timeout_seconds;
    (first > 0.0 && rows.iter().all(|r| r.timeout_seconds == first)).then_some(first)
}

/// Instances solved (proven, evidence or refuted) within a time, per run. An instance counts once
/// (not once per repetition): solved when every repetition was, at the median of their times.
fn cactus(rows: &[JobRow]) -> Option<Chart> {
    let series = runs(rows)
        .iter()
        .enumerate()
        .map(|(k, run)| {
            let mut by_instance: Vec<(&str, Vec<&JobRow>)> = Vec::new();
            for r in rows.iter().filter(|r| &r.run_name == run) {
                match by_instance.iter_mut().find(|(i, _)| *i == r.instance) {
                    Some((_, reps)) => reps.push(r),
                    None => by_instance.push((&r.instance, vec![r])),
                }
            }
            let mut times: Vec<f64> = by_instance
                .iter()
                .filter(|(_, reps)| reps.iter().all(|r| r.status().solved()))
                .filter_map(|(_, reps)| median(reps.iter().map(|r| r.wall_seconds).collect()))
                .collect();
            times.sort_by(f64::total_cmp);
            let points = times.iter().enumerate().map(|(i, t)| ((i + 1) as f64, *t)).collect();
            let repeated = by_instance.iter().any(|(_, reps)| reps.len() > 1);
            let name = if repeated { format!("{run} (median of the repetitions)") } else { run.clone() };
            Series { name, points, line: true, mark: Mark::Dot, color: COLORS[k % COLORS.len()] }
        })
        .collect();
    let mut c = chart("Cactus plot", "instances solved", "wall-clock time per instance (s)", (false, true), series)?;
    c.time_limit = time_limit(rows);
    Some(c)
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
    chart("Splits vs network size", "hidden neurons", "splits", (true, false), series)
}

fn chart(title: &str, x_desc: &str, y_desc: &str, (x_log, y_log): (bool, bool), series: Vec<Series>) -> Option<Chart> {
    if series.iter().all(|s| s.points.is_empty()) {
        return None;
    }
    Some(Chart {
        title: title.into(),
        x_desc: x_desc.into(),
        y_desc: y_desc.into(),
        x_log,
        y_log,
        series,
        notes: Vec::new(),
        time_limit: None,
    })
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
        let ys =
            axis_range(c.series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).chain(c.time_limit), c.y_log, true);
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
    let (x_range, y_range) = (chart.x_range(), chart.y_range());
    // A log axis spanning less than a decade writes every tick (1, 2, 5 alone could be none).
    let x_all = !c.x_log || x_range.end / x_range.start < 10.0;
    let y_all = !c.y_log || y_range.end / y_range.start < 10.0;
    chart
        .configure_mesh()
        .x_label_formatter(&|x| if x_all { tick(*x) } else { log_tick(*x) })
        .y_label_formatter(&|y| if y_all { tick(*y) } else { log_tick(*y) })
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
                Mark::Triangle => TriangleMarker::new(p, 6, color.filled()).into_dyn(),
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
    if let Some(limit) = c.time_limit {
        let dashed = DashedLineSeries::new([(x_range.start, limit), (x_range.end, limit)], 6, 4, BLACK.stroke_width(1));
        chart
            .draw_series(dashed)
            .map_err(plot_err)?
            .label(format!("time limit ({} s)", tick(limit)))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(1)));
    }
    for (mark, note) in &c.notes {
        let mark = *mark;
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
            .map_err(plot_err)?
            .label(note.as_str())
            .legend(move |(x, y)| -> DynElement<'static, SVGBackend, (i32, i32)> {
                match mark {
                    Mark::Triangle => TriangleMarker::new((x + 10, y), 6, BLACK.filled()).into_dyn(),
                    _ => Cross::new((x + 10, y), 6, BLACK.stroke_width(2)).into_dyn(),
                }
            });
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

    fn rep(instance: &str, run: &str, status: &str, wall: f64, repetition: i64) -> JobRow {
        let mut r = crate::store::test_row(instance, run, status, Some("safe"), wall);
        r.repetition = repetition;
        r.neurons = Some(64);
        r
    }

    #[test]
    fn cactus_counts_instances_not_repetitions() {
        // Two instances with three repetitions each; b fails once, so only a is solved.
        let rows = [
            rep("a", "ours", "proven", 1.0, 0),
            rep("a", "ours", "proven", 3.0, 1),
            rep("a", "ours", "proven", 2.0, 2),
            rep("b", "ours", "proven", 1.0, 0),
            rep("b", "ours", "timeout", 10.0, 1),
            rep("b", "ours", "proven", 1.0, 2),
        ];
        let c = cactus(&rows).unwrap();
        assert_eq!(c.series[0].points, vec![(1.0, 2.0)], "one instance, at its median time");
        assert!(c.series[0].name.contains("median of the repetitions"), "{}", c.series[0].name);
        assert_eq!(c.time_limit, Some(10.0));
    }

    #[test]
    fn time_plot_shows_killed_and_failed_jobs_and_reaches_the_limit() {
        let rows = [
            rep("a", "ours", "proven", 1.0, 0),
            rep("b", "ours", "timeout", 10.0, 0),
            rep("c", "ours", "error", 0.5, 0),
            rep("d", "ours", "memout", 2.0, 0),
        ];
        let c = time_vs_size(&rows).unwrap();
        let marks = |m: Mark| c.series.iter().filter(|s| s.mark == m).map(|s| s.points.len()).sum::<usize>();
        assert_eq!((marks(Mark::Dot), marks(Mark::Cross), marks(Mark::Triangle)), (1, 1, 2));
        assert_eq!(c.notes.len(), 2, "the legend explains crosses and triangles");
        assert_eq!(c.time_limit, Some(10.0));
        let svg = render_svg(&c).unwrap();
        for text in ["time limit (10 s)", "killed at the time limit", "error, out of memory or interrupted"] {
            assert!(svg.contains(text), "{text} missing");
        }
    }

    #[test]
    fn log_axes_within_a_decade_still_have_tick_labels() {
        let rows = [rep("a", "ours", "proven", 1.5, 0), rep("b", "ours", "proven", 3.0, 0)];
        let mut c = cactus(&rows).unwrap();
        c.time_limit = None;
        let svg = render_svg(&c).unwrap();
        let labels = svg.matches("<text").count();
        // Title, two axis descriptions, the legend entry, and tick labels on both axes.
        assert!(labels >= 8, "{labels} text elements");
    }
}
