//! Trestle's 2-D state-space pictures.
//!
//! A [`StatePlot`] is plain data: a view window, boxes ([`Region`]) styled by what the verifier
//! concluded about them, trajectories, counterexample steps ([`Arrow`]) and labelled points
//! ([`Marker`]). [`render`] draws it to an `.svg` or `.png` file, chosen by the extension, in the
//! style of the compositional-invariant paper's figures: proven boxes light green with a thin
//! outline (the bridge partition), falsified red, undecided orange, `Init` a blue outline, `Safe` a
//! dashed black outline, trajectories grey polylines with a dot at the start.
//!
//! Why it is shaped so:
//! - **No dependency on other Trestle crates.** Callers convert their boxes to `(f64, f64)` corners;
//!   the picture code never needs the IR, and the IR never needs plotters.
//! - **No system fonts, no C libraries.** plotters is used without its default features (which pull
//!   in font-kit, fontconfig and freetype) and draws SVG only; text is emitted as `<text>` elements.
//!   A PNG is that SVG rendered by resvg with an embedded font (DejaVu Sans, [`svg_to_png`]), so
//!   both formats carry the same title, axes, ticks, legend and labels on any machine.
//! - **Invalid input is an error, never a panic.** Ranges, coordinates, sizes and alphas are checked
//!   before drawing ([`PlotError`]).
//! - **Everything is clipped to the view window** before it reaches plotters, so a zoomed view of a
//!   large invariant draws only what is visible, and no shape spills into the margins.
//! - **Files appear atomically**: the image is rendered in memory, then written by the small
//!   `atomic-output` crate (a temporary file in the target directory, flushed and renamed over the
//!   target; symbolic links written through, special files such as FIFOs and devices refused).
//!
//! ```no_run
//! use trestle_plot::{Arrow, Region, RegionStyle, StatePlot, render};
//!
//! let mut plot = StatePlot::new("Pendulum", (-1.0, 1.0), (-2.0, 2.0));
//! plot.x_label = "theta".into();
//! plot.y_label = "omega".into();
//! plot.regions.push(Region::new((-0.5, -1.0), (0.5, 1.0), RegionStyle::Proven));
//! plot.regions.push(Region::new((-0.1, -0.1), (0.1, 0.1), RegionStyle::Init).with_label("Init"));
//! plot.arrows.push(Arrow::new((0.6, 1.2), (0.8, 1.6)).with_label("cex"));
//! render(&plot, std::path::Path::new("pendulum.svg"))?;
//! # Ok::<(), trestle_plot::PlotError>(())
//! ```

mod clip;
mod draw;
mod error;
mod legend;
mod raster;
mod style;
mod validate;
mod write;

use std::path::Path;

pub use error::{Axis, Element, PlotError};
pub use raster::svg_to_png;

/// The default image size in pixels, `(width, height)`.
pub const DEFAULT_SIZE: (u32, u32) = (800, 600);
/// The smallest accepted image side in pixels.
pub const MIN_SIDE: u32 = 100;
/// The largest accepted image side in pixels.
pub const MAX_SIDE: u32 = 8192;

/// A 2-D picture of a state space. All coordinates are in data units.
#[derive(Debug, Clone, PartialEq)]
pub struct StatePlot {
    /// Drawn above the chart.
    pub title: String,
    /// The horizontal axis name; empty for none.
    pub x_label: String,
    /// The vertical axis name; empty for none.
    pub y_label: String,
    /// The view window on the horizontal axis: finite, `lo < hi`.
    pub x_range: (f64, f64),
    /// The view window on the vertical axis: finite, `lo < hi`.
    pub y_range: (f64, f64),
    /// Image size in pixels, `(width, height)`, each side in `MIN_SIDE..=MAX_SIDE`.
    pub size: (u32, u32),
    /// Boxes, drawn in order (later ones on top).
    pub regions: Vec<Region>,
    /// Polylines, drawn grey with a dot at the first point.
    pub trajectories: Vec<Vec<(f64, f64)>>,
    /// Steps such as counterexample state -> next state.
    pub arrows: Vec<Arrow>,
    /// Labelled points.
    pub points: Vec<Marker>,
}

impl StatePlot {
    /// An empty plot of the given window, [`DEFAULT_SIZE`], with no axis names.
    pub fn new(title: impl Into<String>, x_range: (f64, f64), y_range: (f64, f64)) -> Self {
        StatePlot {
            title: title.into(),
            x_label: String::new(),
            y_label: String::new(),
            x_range,
            y_range,
            size: DEFAULT_SIZE,
            regions: Vec::new(),
            trajectories: Vec::new(),
            arrows: Vec::new(),
            points: Vec::new(),
        }
    }
}

/// An axis-aligned box `[lo.0, hi.0] x [lo.1, hi.1]`; `lo <= hi` componentwise (a side may be
/// degenerate).
#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    pub lo: (f64, f64),
    pub hi: (f64, f64),
    pub style: RegionStyle,
    /// Written inside the box's upper-left corner.
    pub label: Option<String>,
}

impl Region {
    pub fn new(lo: (f64, f64), hi: (f64, f64), style: RegionStyle) -> Self {
        Region { lo, hi, style, label: None }
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }
}

/// What a region means, and so how it is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RegionStyle {
    /// Proven safe: light green fill, thin green outline.
    Proven,
    /// Holds a real counterexample: red fill.
    Falsified,
    /// Neither proven nor falsified: orange fill.
    Undecided,
    /// Initial states: blue outline, no fill.
    Init,
    /// Safe set: dashed black outline, no fill.
    Safe,
    /// A synthesised invariant: faint purple fill, purple outline.
    Invariant,
    /// Left out by synthesis (no invariant through it was found; not shown to be unsafe): grey
    /// fill, dashed grey outline.
    Dropped,
    /// Any other colour; `alpha` in `[0, 1]` (0 draws no fill); `outline` adds a darker outline.
    Custom { fill: (u8, u8, u8), alpha: f64, outline: bool },
}

/// A straight arrow from `from` to `to`, e.g. a counterexample state to its successor.
#[derive(Debug, Clone, PartialEq)]
pub struct Arrow {
    pub from: (f64, f64),
    pub to: (f64, f64),
    /// Written at the arrow's midpoint.
    pub label: Option<String>,
}

impl Arrow {
    pub fn new(from: (f64, f64), to: (f64, f64)) -> Self {
        Arrow { from, to, label: None }
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }
}

/// A dot, optionally labelled.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub at: (f64, f64),
    /// Written beside the dot.
    pub label: Option<String>,
}

impl Marker {
    pub fn new(at: (f64, f64)) -> Self {
        Marker { at, label: None }
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }
}

/// The image formats [`render`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Svg,
    Png,
}

impl Format {
    fn of(path: &Path) -> Result<Format, PlotError> {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("svg") => Ok(Format::Svg),
            Some("png") => Ok(Format::Png),
            _ => Err(PlotError::UnknownExtension { path: path.to_path_buf() }),
        }
    }
}

/// Draws `plot` to `path`: SVG for a `.svg` extension, PNG for `.png` (case-insensitive).
///
/// The plot is validated first, rendered in memory, then written to a temporary file beside
/// `path` and renamed over it, so `path` is either untouched or complete. PNGs carry no text (see
/// the crate docs).
pub fn render(plot: &StatePlot, path: &Path) -> Result<(), PlotError> {
    let format = Format::of(path)?;
    validate::check(plot)?;
    let bytes = match format {
        Format::Svg => draw::svg(plot)?.into_bytes(),
        Format::Png => draw::png(plot)?,
    };
    write::atomically(path, &bytes)
}

/// Draws `plot` as an SVG document, without touching the file system.
pub fn render_svg(plot: &StatePlot) -> Result<String, PlotError> {
    validate::check(plot)?;
    draw::svg(plot)
}

/// Draws `plot` as PNG file bytes (no text), without touching the file system.
pub fn render_png(plot: &StatePlot) -> Result<Vec<u8>, PlotError> {
    validate::check(plot)?;
    draw::png(plot)
}
