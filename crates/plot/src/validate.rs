//! Checks a [`StatePlot`] before drawing, so that plotters only ever sees finite, ordered input.

use crate::{Axis, Element, MAX_SIDE, MIN_SIDE, PlotError, RegionStyle, StatePlot};

/// Views narrower than this fraction of their magnitude cannot be given distinct tick values.
const MIN_RELATIVE_WIDTH: f64 = 1e-12;

pub(crate) fn check(plot: &StatePlot) -> Result<(), PlotError> {
    check_range(Axis::X, plot.x_range)?;
    check_range(Axis::Y, plot.y_range)?;
    let (width, height) = plot.size;
    if !(MIN_SIDE..=MAX_SIDE).contains(&width) || !(MIN_SIDE..=MAX_SIDE).contains(&height) {
        return Err(PlotError::InvalidSize { width, height });
    }
    for (index, region) in plot.regions.iter().enumerate() {
        finite(Element::Region(index), &[region.lo, region.hi])?;
        if region.lo.0 > region.hi.0 || region.lo.1 > region.hi.1 {
            return Err(PlotError::InvertedRegion { index, lo: region.lo, hi: region.hi });
        }
        if let RegionStyle::Custom { alpha, .. } = region.style
            && !(0.0..=1.0).contains(&alpha)
        {
            return Err(PlotError::InvalidAlpha { index, alpha });
        }
    }
    for (index, trajectory) in plot.trajectories.iter().enumerate() {
        for (point, &p) in trajectory.iter().enumerate() {
            finite(Element::Trajectory { index, point }, &[p])?;
        }
    }
    for (index, arrow) in plot.arrows.iter().enumerate() {
        finite(Element::Arrow(index), &[arrow.from, arrow.to])?;
    }
    for (index, marker) in plot.points.iter().enumerate() {
        finite(Element::Marker(index), &[marker.at])?;
    }
    Ok(())
}

fn check_range(axis: Axis, (lo, hi): (f64, f64)) -> Result<(), PlotError> {
    let width = hi - lo;
    let ok = lo.is_finite()
        && hi.is_finite()
        && width.is_finite()
        && width > 0.0
        && width >= MIN_RELATIVE_WIDTH * lo.abs().max(hi.abs());
    if ok { Ok(()) } else { Err(PlotError::InvalidRange { axis, lo, hi }) }
}

fn finite(element: Element, points: &[(f64, f64)]) -> Result<(), PlotError> {
    if points.iter().all(|p| p.0.is_finite() && p.1.is_finite()) {
        Ok(())
    } else {
        Err(PlotError::NonFinite { element })
    }
}
