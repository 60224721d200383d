//! The typed errors of [`render`](crate::render).

use std::fmt;
use std::path::PathBuf;

/// Why a plot could not be drawn or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlotError {
    #[error("cannot tell the image format of {}: expected a .svg or .png extension", path.display())]
    UnknownExtension { path: PathBuf },
    #[error("invalid {axis} range [{lo}, {hi}]: the ends must be finite, with lo < hi and a representable width")]
    InvalidRange { axis: Axis, lo: f64, hi: f64 },
    #[error("invalid image size {width}x{height}: each side must be {min}..={max} pixels", min = crate::MIN_SIDE, max = crate::MAX_SIDE)]
    InvalidSize { width: u32, height: u32 },
    #[error("{element} has a non-finite coordinate")]
    NonFinite { element: Element },
    #[error("region {index} has lo {lo:?} above hi {hi:?}")]
    InvertedRegion { index: usize, lo: (f64, f64), hi: (f64, f64) },
    #[error("region {index} has custom alpha {alpha}, outside [0, 1]")]
    InvalidAlpha { index: usize, alpha: f64 },
    /// plotters reported an error while drawing in memory (not expected for validated input).
    #[error("drawing failed: {0}")]
    Draw(String),
    #[error("PNG encoding failed: {0}")]
    Encode(String),
    #[error("cannot write {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One axis of the view window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    X,
    Y,
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Axis::X => "x",
            Axis::Y => "y",
        })
    }
}

/// Which part of a [`StatePlot`](crate::StatePlot) an error is about; indices are 0-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element {
    Region(usize),
    Trajectory { index: usize, point: usize },
    Arrow(usize),
    Marker(usize),
}

impl fmt::Display for Element {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Element::Region(i) => write!(f, "region {i}"),
            Element::Trajectory { index, point } => write!(f, "point {point} of trajectory {index}"),
            Element::Arrow(i) => write!(f, "arrow {i}"),
            Element::Marker(i) => write!(f, "marker {i}"),
        }
    }
}
