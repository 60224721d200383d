//! Colours and strokes: how each [`RegionStyle`] and the other elements look.

use plotters::style::{RGBAColor, RGBColor, ShapeStyle};

use crate::RegionStyle;

pub(crate) const TRAJECTORY: RGBColor = RGBColor(105, 105, 105);
pub(crate) const ARROW: RGBColor = RGBColor(20, 20, 20);
pub(crate) const MARKER: RGBColor = RGBColor(0, 0, 0);
pub(crate) const TEXT: RGBColor = RGBColor(25, 25, 25);

/// How a region is painted: an optional translucent fill and an optional outline.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Look {
    pub fill: Option<RGBAColor>,
    pub stroke: Option<(RGBColor, u32)>,
    pub dashed: bool,
}

impl Look {
    pub fn fill_style(&self) -> Option<ShapeStyle> {
        self.fill.map(|c| ShapeStyle { color: c, filled: true, stroke_width: 0 })
    }

    pub fn stroke_style(&self) -> Option<ShapeStyle> {
        self.stroke.map(|(c, width)| ShapeStyle { color: c.into(), filled: false, stroke_width: width })
    }
}

impl RegionStyle {
    /// The fill colour and its opacity, or `None` for outline-only styles.
    pub fn fill(&self) -> Option<((u8, u8, u8), f64)> {
        let (rgb, alpha) = match *self {
            RegionStyle::Proven => ((152, 223, 138), 0.6),
            RegionStyle::Falsified => ((214, 39, 40), 0.6),
            RegionStyle::Undecided => ((255, 170, 40), 0.6),
            RegionStyle::Invariant => ((148, 103, 189), 0.12),
            RegionStyle::Dropped => ((150, 150, 150), 0.35),
            RegionStyle::Init | RegionStyle::Safe => return None,
            RegionStyle::Custom { fill, alpha, .. } => (fill, alpha),
        };
        (alpha > 0.0).then_some((rgb, alpha))
    }

    /// The name the legend gives this style.
    pub fn name(&self) -> &'static str {
        match self {
            RegionStyle::Proven => "proven",
            RegionStyle::Falsified => "falsified",
            RegionStyle::Undecided => "undecided",
            RegionStyle::Init => "init",
            RegionStyle::Safe => "safe",
            RegionStyle::Invariant => "invariant",
            RegionStyle::Dropped => "dropped",
            RegionStyle::Custom { .. } => "custom",
        }
    }

    pub(crate) fn look(&self) -> Look {
        let fill = self.fill().map(|((r, g, b), alpha)| RGBAColor(r, g, b, alpha));
        let (stroke, dashed) = match *self {
            RegionStyle::Proven => (Some((RGBColor(44, 140, 44), 1)), false),
            RegionStyle::Falsified => (Some((RGBColor(150, 20, 20), 1)), false),
            RegionStyle::Undecided => (Some((RGBColor(200, 115, 0), 1)), false),
            RegionStyle::Init => (Some((RGBColor(31, 90, 200), 2)), false),
            RegionStyle::Safe => (Some((RGBColor(0, 0, 0), 1)), true),
            RegionStyle::Invariant => (Some((RGBColor(118, 60, 170), 1)), false),
            RegionStyle::Dropped => (Some((RGBColor(110, 110, 110), 1)), true),
            RegionStyle::Custom { fill, outline, .. } => (outline.then_some((darker(fill), 1)), false),
        };
        Look { fill, stroke, dashed }
    }
}

fn darker((r, g, b): (u8, u8, u8)) -> RGBColor {
    let scale = |c: u8| (u16::from(c) * 2 / 3) as u8;
    RGBColor(scale(r), scale(g), scale(b))
}
