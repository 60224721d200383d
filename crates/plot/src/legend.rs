//! The legend: a column right of the chart, one row per region style used plus trajectories and
//! arrows, so that it never covers the data.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::draw::{DrawResult, FONT, paint_box};
use crate::style::{ARROW, Look, TEXT, TRAJECTORY};
use crate::{RegionStyle, StatePlot};

const TOP: i32 = 40;
const ROW: i32 = 22;
const LEFT: i32 = 8;
const SWATCH: (i32, i32) = (22, 12);
const CHAR_WIDTH: u32 = 7;

pub(crate) enum Swatch {
    Region(Look),
    Trajectory,
    Arrow,
}

pub(crate) struct Entry {
    name: String,
    swatch: Swatch,
}

/// One entry per distinct region style in order of first use, then trajectories and arrows. A
/// custom style is named by the label of its first labelled region.
pub(crate) fn entries(plot: &StatePlot) -> Vec<Entry> {
    let mut styles: Vec<RegionStyle> = Vec::new();
    let mut entries = Vec::new();
    for region in &plot.regions {
        if styles.contains(&region.style) {
            continue;
        }
        styles.push(region.style);
        let name = match region.style {
            RegionStyle::Custom { .. } => {
                let mut labelled = plot.regions.iter().filter(|r| r.style == region.style);
                labelled.find_map(|r| r.label.clone()).unwrap_or_else(|| region.style.name().to_owned())
            }
            style => style.name().to_owned(),
        };
        entries.push(Entry { name, swatch: Swatch::Region(region.style.look()) });
    }
    if plot.trajectories.iter().any(|t| !t.is_empty()) {
        entries.push(Entry { name: "trajectory".into(), swatch: Swatch::Trajectory });
    }
    if !plot.arrows.is_empty() {
        entries.push(Entry { name: "step".into(), swatch: Swatch::Arrow });
    }
    entries
}

/// The legend column's width for these entries in an image `image_width` wide: at most a third of
/// the image, and `None` when even the narrowest column would not fit.
pub(crate) fn width(entries: &[Entry], image_width: u32) -> Option<u32> {
    const NARROWEST: u32 = 90;
    let longest = entries.iter().map(|e| e.name.chars().count()).max().unwrap_or(0) as u32;
    let wanted = (LEFT + SWATCH.0) as u32 + 16 + CHAR_WIDTH.saturating_mul(longest);
    let widest = image_width / 3;
    (widest >= NARROWEST).then(|| wanted.clamp(NARROWEST, widest))
}

pub(crate) fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, entries: &[Entry]) -> DrawResult<DB> {
    let style = (FONT, 13).into_font().color(&TEXT).pos(Pos::new(HPos::Left, VPos::Center));
    for (row, entry) in entries.iter().enumerate() {
        let y = TOP + ROW * row as i32;
        let (x0, x1) = (LEFT, LEFT + SWATCH.0);
        let (y0, y1) = (y - SWATCH.1 / 2, y + SWATCH.1 / 2);
        match &entry.swatch {
            Swatch::Region(look) => paint_box(area, look, (x0, y0), (x1, y1), (4, 3))?,
            Swatch::Trajectory => {
                area.draw(&PathElement::new(vec![(x0, y), (x1, y)], TRAJECTORY.stroke_width(1)))?;
                area.draw(&Circle::new((x0, y), 3, TRAJECTORY.filled()))?;
            }
            Swatch::Arrow => {
                area.draw(&PathElement::new(vec![(x0, y), (x1 - 6, y)], ARROW.stroke_width(2)))?;
                area.draw(&Polygon::new(vec![(x1, y), (x1 - 8, y - 4), (x1 - 8, y + 4)], ARROW.filled()))?;
            }
        }
        area.draw(&Text::new(entry.name.clone(), (x1 + 8, y), style.clone()))?;
    }
    Ok(())
}
