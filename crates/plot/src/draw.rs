//! Drawing a validated [`StatePlot`] as SVG with plotters. A PNG is that SVG rasterised
//! ([`crate::raster`]), so both formats carry the same title, axes, labels and legend.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::{CoordTranslate, Shift};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::clip::{Point, Window};
use crate::legend;
use crate::style::{ARROW, Look, MARKER, TEXT, TRAJECTORY};
use crate::{PlotError, StatePlot};

pub(crate) type Area<DB> = DrawingArea<DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;
pub(crate) type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

pub(crate) const FONT: &str = "sans-serif";
const MARGIN: u32 = 12;
const START_DOT: u32 = 3;
const MARKER_DOT: u32 = 4;
/// Arrowhead length in pixels.
const HEAD: f64 = 11.0;

pub(crate) fn svg(plot: &StatePlot) -> Result<String, PlotError> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, plot.size).into_drawing_area();
        chart(plot, &root).map_err(drawing)?;
        root.present().map_err(drawing)?;
    }
    Ok(out)
}

pub(crate) fn png(plot: &StatePlot) -> Result<Vec<u8>, PlotError> {
    crate::raster::svg_to_png(&svg(plot)?)
}

fn drawing<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> PlotError {
    PlotError::Draw(e.to_string())
}

fn chart<DB: DrawingBackend>(plot: &StatePlot, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let entries = legend::entries(plot);
    let (image_width, _) = root.dim_in_pixel();
    let main = match legend::width(&entries, image_width) {
        Some(width) if !entries.is_empty() => {
            let (main, side) = root.split_horizontally(image_width - width);
            legend::draw(&side, &entries)?;
            main
        }
        _ => root.clone(),
    };

    let mut builder = ChartBuilder::on(&main);
    builder.margin(MARGIN);
    if !plot.title.is_empty() {
        builder.caption(&plot.title, (FONT, 20));
    }
    builder.x_label_area_size(45).y_label_area_size(60);
    let (x, y) = (plot.x_range, plot.y_range);
    let mut chart = builder.build_cartesian_2d(x.0..x.1, y.0..y.1)?;
    let (x_tick, y_tick) = (tick_format(x.1 - x.0), tick_format(y.1 - y.0));
    let mut mesh = chart.configure_mesh();
    mesh.disable_mesh().label_style((FONT, 13)).x_label_formatter(&x_tick).y_label_formatter(&y_tick);
    if !plot.x_label.is_empty() {
        mesh.x_desc(plot.x_label.as_str());
    }
    if !plot.y_label.is_empty() {
        mesh.y_desc(plot.y_label.as_str());
    }
    mesh.draw()?;

    let window = Window { x, y };
    let area = chart.plotting_area();
    regions(area, &window, plot)?;
    trajectories(area, &window, plot)?;
    arrows(area, &window, plot)?;
    markers(area, &window, plot)?;
    labels(area, &window, plot)?;
    area.draw(&Rectangle::new([(x.0, y.1), (x.1, y.0)], BLACK.stroke_width(1)))
}

/// The tick labels of an axis `width` wide: as many decimals as ticks about a tenth of the width
/// apart need, trailing zeros dropped, and never a negative zero (`-0.0` is written `0`).
fn tick_format(width: f64) -> impl Fn(&f64) -> String {
    let decimals = (1.0 - (width / 10.0).log10().floor()).clamp(0.0, 12.0) as usize;
    move |v: &f64| {
        let text = format!("{v:.decimals$}");
        let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text };
        if text.trim_start_matches('-').chars().all(|c| c == '0') { "0".to_string() } else { text }
    }
}

/// Draws each region's fill, then its outline, clipped to the window.
fn regions<DB: DrawingBackend>(area: &Area<DB>, window: &Window, plot: &StatePlot) -> DrawResult<DB> {
    for region in &plot.regions {
        if let Some((lo, hi)) = window.clip_box(region.lo, region.hi) {
            paint_box(area, &region.style.look(), lo, hi, (6, 4))?;
        }
    }
    Ok(())
}

/// Paints the box with corners `a`, `b` (in the area's coordinates) as `look` says; `dash` is the
/// (dash, gap) length in pixels of a dashed outline.
pub(crate) fn paint_box<DB, CT, T>(
    area: &DrawingArea<DB, CT>,
    look: &Look,
    a: (T, T),
    b: (T, T),
    dash: (i32, i32),
) -> DrawResult<DB>
where
    DB: DrawingBackend,
    CT: CoordTranslate<From = (T, T)>,
    T: Copy + 'static,
{
    if let Some(fill) = look.fill_style() {
        area.draw(&Rectangle::new([a, b], fill))?;
    }
    let Some(stroke) = look.stroke_style() else { return Ok(()) };
    if look.dashed {
        let ring = [a, (b.0, a.1), b, (a.0, b.1), a];
        return area.draw(&DashedPathElement::new(ring, dash.0, dash.1, stroke));
    }
    // Backends draw rectangle outlines one pixel wide whatever the style says, and plotters' thick
    // paths leave gaps at closed corners, so a thick outline is nested one-pixel rectangles.
    for inset in 0..stroke.stroke_width.max(1) {
        let mut rectangle = Rectangle::new([a, b], stroke);
        rectangle.set_margin(inset, inset, inset, inset);
        area.draw(&rectangle)?;
    }
    Ok(())
}

fn trajectories<DB: DrawingBackend>(area: &Area<DB>, window: &Window, plot: &StatePlot) -> DrawResult<DB> {
    for trajectory in &plot.trajectories {
        for piece in window.clip_polyline(trajectory) {
            area.draw(&PathElement::new(piece, TRAJECTORY.stroke_width(1)))?;
        }
        if let Some(&start) = trajectory.first()
            && window.contains(start)
        {
            area.draw(&Circle::new(start, START_DOT, TRAJECTORY.filled()))?;
        }
    }
    Ok(())
}

/// Draws each arrow's visible part; the head only if the tip is visible.
fn arrows<DB: DrawingBackend>(area: &Area<DB>, window: &Window, plot: &StatePlot) -> DrawResult<DB> {
    for arrow in &plot.arrows {
        let Some((from, to)) = window.clip_segment(arrow.from, arrow.to) else { continue };
        let (p, q) = (area.map_coordinate(&from), area.map_coordinate(&to));
        // Both ends are in the window, so these differences are bounded by the image size.
        let tail = (p.0 - q.0, p.1 - q.1);
        let length = f64::from(tail.0).hypot(f64::from(tail.1));
        if length < 1.0 {
            area.draw(&Circle::new(to, 2, ARROW.filled()))?;
            continue;
        }
        // Unit vector along the arrow, in pixels (y grows downwards, as in the image).
        let (ux, uy) = (-f64::from(tail.0) / length, -f64::from(tail.1) / length);
        let head = if to == arrow.to { HEAD.min(0.6 * length) } else { 0.0 };
        let offset = |along: f64, across: f64| {
            ((-ux * along - uy * across).round() as i32, (-uy * along + ux * across).round() as i32)
        };
        let shaft = PathElement::new(vec![tail, offset(0.7 * head, 0.0)], ARROW.stroke_width(2));
        area.draw(&(EmptyElement::at(to) + shaft))?;
        if head > 0.0 {
            let tip = vec![(0, 0), offset(head, 0.4 * head), offset(head, -0.4 * head)];
            area.draw(&(EmptyElement::at(to) + Polygon::new(tip, ARROW.filled())))?;
        }
    }
    Ok(())
}

fn markers<DB: DrawingBackend>(area: &Area<DB>, window: &Window, plot: &StatePlot) -> DrawResult<DB> {
    for marker in plot.points.iter().filter(|m| window.contains(m.at)) {
        area.draw(&Circle::new(marker.at, MARKER_DOT, MARKER.filled()))?;
    }
    Ok(())
}

/// Region, arrow and marker labels, drawn last so that no shape covers them. Text backends only.
fn labels<DB: DrawingBackend>(area: &Area<DB>, window: &Window, plot: &StatePlot) -> DrawResult<DB> {
    let put = |at: Point, offset: (i32, i32), anchor: Pos, label: &str| {
        let style = (FONT, 12).into_font().color(&TEXT).pos(anchor);
        area.draw(&(EmptyElement::at(at) + Text::new(label.to_owned(), offset, style)))
    };
    for region in &plot.regions {
        if let (Some(label), Some((lo, hi))) = (&region.label, window.clip_box(region.lo, region.hi)) {
            put((lo.0, hi.1), (4, 4), Pos::new(HPos::Left, VPos::Top), label)?;
        }
    }
    for arrow in &plot.arrows {
        if let (Some(label), Some((a, b))) = (&arrow.label, window.clip_segment(arrow.from, arrow.to)) {
            let middle = ((a.0 + b.0) / 2.0, (a.1 + b.1) / 2.0);
            put(middle, (6, -4), Pos::new(HPos::Left, VPos::Bottom), label)?;
        }
    }
    for marker in plot.points.iter().filter(|m| window.contains(m.at)) {
        if let Some(label) = &marker.label {
            put(marker.at, (7, -3), Pos::new(HPos::Left, VPos::Bottom), label)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::tick_format;

    #[test]
    fn ticks_have_no_negative_zero_and_no_trailing_zeros() {
        let unit = tick_format(1.0);
        assert_eq!([unit(&-0.0), unit(&-1e-17), unit(&0.5), unit(&-0.25), unit(&1.0)], ["0", "0", "0.5", "-0.25", "1"]);
        let wide = tick_format(400.0);
        assert_eq!([wide(&-100.0), wide(&0.0), wide(&250.0)], ["-100", "0", "250"]);
        let narrow = tick_format(0.002);
        assert_eq!([narrow(&0.0015), narrow(&-0.0005)], ["0.0015", "-0.0005"]);
    }
}
