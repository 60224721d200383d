//! End-to-end tests: render to files in a temporary directory and inspect what was written.

use std::path::Path;

use proptest::prelude::*;

use trestle_plot::{
    Arrow, Axis, Element, Marker, PlotError, Region, RegionStyle, StatePlot, render, render_png, render_svg,
};

const SIZE: (u32, u32) = (400, 300);

/// A 0..10 x 0..10 window with one big proven box over the centre, two small proven boxes, one
/// falsified and one undecided box, an Init box, a dashed Safe box, a box outside the window, a
/// trajectory, an arrow and a marker, all labelled where they can be.
fn small_plot() -> StatePlot {
    let mut plot = StatePlot::new("Small test plot", (0.0, 10.0), (0.0, 10.0));
    plot.x_label = "position".into();
    plot.y_label = "velocity".into();
    plot.size = SIZE;
    plot.regions = vec![
        Region::new((0.5, 0.5), (9.5, 9.5), RegionStyle::Safe).with_label("Safe"),
        Region::new((3.0, 3.0), (7.0, 7.0), RegionStyle::Proven).with_label("P"),
        Region::new((0.5, 0.5), (1.5, 1.5), RegionStyle::Proven),
        Region::new((8.5, 0.5), (9.5, 1.5), RegionStyle::Proven),
        Region::new((8.5, 8.5), (9.5, 9.5), RegionStyle::Falsified).with_label("F"),
        Region::new((0.5, 8.5), (1.5, 9.5), RegionStyle::Undecided),
        Region::new((20.0, 20.0), (30.0, 30.0), RegionStyle::Proven),
        Region::new((1.0, 4.0), (2.0, 6.0), RegionStyle::Init).with_label("Init"),
    ];
    plot.trajectories = vec![vec![(1.5, 5.0), (2.5, 8.0), (6.0, 9.0), (12.0, 9.5)], vec![(4.0, 1.0)]];
    plot.arrows = vec![Arrow::new((9.0, 9.0), (9.8, 9.8)).with_label("cex")];
    plot.points = vec![Marker::new((9.0, 9.0)).with_label("x0")];
    plot
}

fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02X}{g:02X}{b:02X}")
}

/// Counts the SVG `<rect>` elements filled with `style`'s colour.
fn filled_rects(svg: &str, style: RegionStyle) -> usize {
    let (rgb, _) = style.fill().expect("a filled style");
    let fill = format!("fill=\"{}\"", hex(rgb));
    svg.lines().filter(|line| line.starts_with("<rect") && line.contains(&fill)).count()
}

/// Decodes an 8-bit RGB or RGBA PNG into (width, height, RGB pixels).
fn decode_png(path: &Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut raw = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut raw).unwrap();
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let channels = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("unexpected colour type {other:?}"),
    };
    let pixels = raw[..info.width as usize * info.height as usize * channels]
        .chunks(channels)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    (info.width, info.height, pixels)
}

/// The plotting area of a rendered plot in pixels (left, top, width, height): the black frame
/// drawn around it last, read from the SVG, which the PNG rasterises.
fn plot_area(svg: &str) -> (f64, f64, f64, f64) {
    let frame = svg
        .lines()
        .filter(|l| l.starts_with("<rect") && l.contains("stroke=\"#000000\"") && l.contains("fill=\"none\""))
        .last()
        .expect("the frame of the plotting area");
    let attr = |name: &str| -> f64 {
        let start = frame.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        frame[start..].split('"').next().unwrap().parse().unwrap()
    };
    (attr("x"), attr("y"), attr("width"), attr("height"))
}

/// Where `small_plot`'s data point `(x, y)` lands in its image. Good to a pixel, so sample well
/// inside shapes.
fn png_pixel((left, top, width, height): (f64, f64, f64, f64), (x, y): (f64, f64)) -> (u32, u32) {
    ((left + x / 10.0 * width).round() as u32, (top + (1.0 - y / 10.0) * height).round() as u32)
}

fn pixel(pixels: &[u8], width: u32, (x, y): (u32, u32)) -> (u8, u8, u8) {
    let i = 3 * (y as usize * width as usize + x as usize);
    (pixels[i], pixels[i + 1], pixels[i + 2])
}

/// The pixels darker than mid-grey in the rectangle `cols` x `rows` (text is drawn black).
fn dark_pixels(pixels: &[u8], width: u32, cols: std::ops::Range<u32>, rows: std::ops::Range<u32>) -> usize {
    rows.flat_map(|y| cols.clone().map(move |x| (x, y)))
        .filter(|&p| {
            let (r, g, b) = pixel(pixels, width, p);
            r < 100 && g < 100 && b < 100
        })
        .count()
}

/// The colour of `style`'s fill over a white background.
fn over_white(style: RegionStyle) -> (u8, u8, u8) {
    let ((r, g, b), alpha) = style.fill().unwrap();
    let blend = |c: u8| (255.0 - alpha * (255.0 - f64::from(c))).round() as u8;
    (blend(r), blend(g), blend(b))
}

fn close(a: (u8, u8, u8), b: (u8, u8, u8)) -> bool {
    a.0.abs_diff(b.0) <= 3 && a.1.abs_diff(b.1) <= 3 && a.2.abs_diff(b.2) <= 3
}

fn leftovers(dir: &Path) -> Vec<String> {
    let names = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap());
    // Temporary files are hidden siblings of the target (`.NAME.PID-N.tmp`).
    names.filter(|n| n.starts_with('.')).collect()
}

#[test]
fn svg_has_the_title_labels_and_one_rectangle_per_visible_region() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.svg");
    render(&small_plot(), &path).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains(&format!("width=\"{}\" height=\"{}\"", SIZE.0, SIZE.1)));
    for text in ["Small test plot", "position", "velocity", "Init", "cex", "x0", "proven", "falsified", "trajectory"] {
        assert!(svg.contains(text), "{text} missing from the SVG");
    }
    // Three visible proven boxes (the fourth lies outside the window), plus each legend swatch.
    assert_eq!(filled_rects(&svg, RegionStyle::Proven), 3 + 1);
    assert_eq!(filled_rects(&svg, RegionStyle::Falsified), 1 + 1);
    assert_eq!(filled_rects(&svg, RegionStyle::Undecided), 1 + 1);
    // Outlines: one rectangle per visible proven box and one for its swatch.
    assert_eq!(svg.matches("stroke=\"#2C8C2C\"").count(), 3 + 1);
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn svg_text_is_escaped() {
    let mut plot = small_plot();
    plot.title = "x < 3 & y > \"2\"".into();
    let svg = render_svg(&plot).unwrap();
    assert!(svg.contains("x &lt; 3 &amp; y &gt; &quot;2&quot;"));
}

#[test]
fn png_has_the_requested_size_and_the_proven_colour_inside_a_proven_box() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.png");
    render(&small_plot(), &path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
    let (width, height, pixels) = decode_png(&path);
    assert_eq!((width, height), SIZE);
    let area = plot_area(&render_svg(&small_plot()).unwrap());
    // Inside the big proven box, away from every other shape.
    let proven = pixel(&pixels, width, png_pixel(area, (5.0, 5.0)));
    assert!(close(proven, over_white(RegionStyle::Proven)), "{proven:?}");
    let falsified = pixel(&pixels, width, png_pixel(area, (8.7, 8.7)));
    assert!(close(falsified, over_white(RegionStyle::Falsified)), "{falsified:?}");
    // Below the Safe box's label, which is written in the undecided box's corner.
    let undecided = pixel(&pixels, width, png_pixel(area, (1.0, 8.65)));
    assert!(close(undecided, over_white(RegionStyle::Undecided)), "{undecided:?}");
    assert_eq!(pixel(&pixels, width, png_pixel(area, (5.0, 8.0))), (255, 255, 255));
    assert_eq!(pixel(&pixels, width, (3, 3)), (255, 255, 255));
    assert!(leftovers(dir.path()).is_empty());
}

/// A PNG carries the SVG's text: the title above the plotting area, the axis description below
/// it and the legend right of it are drawn, and vanish when the plot has none.
#[test]
fn png_has_the_title_axis_labels_and_legend() {
    let dir = tempfile::tempdir().unwrap();
    let with = dir.path().join("with.png");
    render(&small_plot(), &with).unwrap();
    let mut bare = small_plot();
    bare.title.clear();
    bare.x_label.clear();
    let without = dir.path().join("without.png");
    render(&bare, &without).unwrap();
    let (width, height, text) = decode_png(&with);
    let (_, _, no_text) = decode_png(&without);
    let (left, top, area_width, area_height) = plot_area(&render_svg(&small_plot()).unwrap());
    let above = 0..top as u32 - 2;
    let (title, no_title) =
        (dark_pixels(&text, width, 0..width, above.clone()), dark_pixels(&no_text, width, 0..width, above));
    assert!(title > no_title + 30, "the title is drawn ({title} dark pixels above the plot, {no_title} without it)");
    let below = (top + area_height) as u32 + 22..height;
    assert!(
        dark_pixels(&text, width, 0..width, below.clone()) > dark_pixels(&no_text, width, 0..width, below),
        "the x axis description is drawn"
    );
    let legend = (left + area_width) as u32 + 8..width;
    let legend_dark = dark_pixels(&text, width, legend, 0..height);
    assert!(legend_dark > 30, "the legend's text is drawn ({legend_dark} dark pixels)");
}

#[test]
fn extensions_are_case_insensitive_and_files_are_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("UPPER.SVG");
    std::fs::write(&path, "old").unwrap();
    render(&small_plot(), &path).unwrap();
    assert!(std::fs::read_to_string(&path).unwrap().starts_with("<svg"));
    render(&small_plot(), &dir.path().join("upper.Png")).unwrap();
}

#[test]
fn unknown_extensions_are_errors_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["plot.jpg", "plot", "plot.svg.txt"] {
        let path = dir.path().join(name);
        let err = render(&small_plot(), &path).unwrap_err();
        assert!(matches!(err, PlotError::UnknownExtension { .. }), "{name}: {err}");
        assert!(!path.exists());
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn unwritable_paths_are_io_errors() {
    let dir = tempfile::tempdir().unwrap();
    // A missing directory is created; a regular file where a directory should be is an error.
    render(&small_plot(), &dir.path().join("missing").join("plot.svg")).unwrap();
    std::fs::write(dir.path().join("file"), b"").unwrap();
    let err = render(&small_plot(), &dir.path().join("file").join("plot.svg")).unwrap_err();
    assert!(matches!(err, PlotError::Io { .. }), "{err}");
    // A directory in the way of the rename.
    std::fs::create_dir(dir.path().join("taken.png")).unwrap();
    let err = render(&small_plot(), &dir.path().join("taken.png")).unwrap_err();
    assert!(matches!(err, PlotError::Io { .. }), "{err}");
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn invalid_input_is_an_error_and_leaves_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kept.svg");
    std::fs::write(&path, "old").unwrap();
    type Break = fn(&mut StatePlot);
    type Expect = fn(&PlotError) -> bool;
    let cases: Vec<(Break, Expect)> = vec![
        (|p| p.x_range = (1.0, 1.0), |e| matches!(e, PlotError::InvalidRange { axis: Axis::X, .. })),
        (|p| p.x_range = (2.0, 1.0), |e| matches!(e, PlotError::InvalidRange { axis: Axis::X, .. })),
        (|p| p.y_range = (0.0, f64::NAN), |e| matches!(e, PlotError::InvalidRange { axis: Axis::Y, .. })),
        (|p| p.y_range = (f64::NEG_INFINITY, 0.0), |e| matches!(e, PlotError::InvalidRange { axis: Axis::Y, .. })),
        (|p| p.x_range = (-f64::MAX, f64::MAX), |e| matches!(e, PlotError::InvalidRange { axis: Axis::X, .. })),
        (|p| p.x_range = (1e15, 1e15 + 1.0), |e| matches!(e, PlotError::InvalidRange { axis: Axis::X, .. })),
        (|p| p.size = (0, 300), |e| matches!(e, PlotError::InvalidSize { .. })),
        (|p| p.size = (400, 100_000), |e| matches!(e, PlotError::InvalidSize { .. })),
        (|p| p.regions[2].hi.0 = f64::NAN, |e| matches!(e, PlotError::NonFinite { element: Element::Region(2) })),
        (
            |p| p.trajectories[0][1] = (f64::INFINITY, 0.0),
            |e| matches!(e, PlotError::NonFinite { element: Element::Trajectory { index: 0, point: 1 } }),
        ),
        (|p| p.arrows[0].to.1 = f64::NAN, |e| matches!(e, PlotError::NonFinite { element: Element::Arrow(0) })),
        (|p| p.points[0].at.0 = f64::NAN, |e| matches!(e, PlotError::NonFinite { element: Element::Marker(0) })),
        (|p| p.regions[1].lo.1 = 8.0, |e| matches!(e, PlotError::InvertedRegion { index: 1, .. })),
        (
            |p| p.regions[0].style = RegionStyle::Custom { fill: (1, 2, 3), alpha: 1.5, outline: true },
            |e| matches!(e, PlotError::InvalidAlpha { index: 0, .. }),
        ),
        (
            |p| p.regions[0].style = RegionStyle::Custom { fill: (1, 2, 3), alpha: f64::NAN, outline: true },
            |e| matches!(e, PlotError::InvalidAlpha { index: 0, .. }),
        ),
    ];
    for (i, (break_it, expected)) in cases.into_iter().enumerate() {
        let mut plot = small_plot();
        break_it(&mut plot);
        let err = render(&plot, &path).unwrap_err();
        assert!(expected(&err), "case {i}: unexpected {err:?}");
        assert!(!err.to_string().is_empty());
        assert!(render_png(&plot).is_err(), "case {i}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old", "case {i}");
    }
}

#[test]
fn odd_but_valid_input_renders() {
    let mut cases = Vec::new();
    for (x_range, y_range) in
        [((0.0, 1e-300), (0.0, 1.0)), ((-1e300, 1e300), (1e6, 1e6 + 1e-3)), ((-3.0, -2.0), (5.0, 7.0))]
    {
        let mut plot = StatePlot::new("", x_range, y_range);
        let (x, y) = (x_range.0 + (x_range.1 - x_range.0) / 3.0, y_range.0 + (y_range.1 - y_range.0) / 3.0);
        plot.regions.push(Region::new((x, y), (x_range.1, y_range.1), RegionStyle::Invariant));
        plot.regions.push(Region::new(
            (x, y),
            (x, y),
            RegionStyle::Custom { fill: (9, 9, 9), alpha: 0.0, outline: true },
        ));
        plot.trajectories.push(vec![(x, y)]);
        plot.trajectories.push(Vec::new());
        plot.arrows.push(Arrow::new((x, y), (x, y)));
        plot.arrows.push(Arrow::new((-f64::MAX, y), (f64::MAX, y)));
        cases.push(plot);
    }
    let mut tiny = small_plot();
    tiny.size = (trestle_plot::MIN_SIDE, trestle_plot::MIN_SIDE);
    cases.push(tiny);
    for plot in cases {
        render_svg(&plot).unwrap();
        render_png(&plot).unwrap();
    }
}

#[test]
fn five_thousand_boxes_render() {
    let mut plot = StatePlot::new("5000 boxes", (-1.0, 1.0), (-1.0, 1.0));
    let (nx, ny) = (100, 50);
    for i in 0..nx {
        for j in 0..ny {
            let lo = (-1.0 + 2.0 * f64::from(i) / f64::from(nx), -1.0 + 2.0 * f64::from(j) / f64::from(ny));
            let hi = (lo.0 + 2.0 / f64::from(nx), lo.1 + 2.0 / f64::from(ny));
            let style = if (i * j) % 7 == 3 { RegionStyle::Undecided } else { RegionStyle::Proven };
            plot.regions.push(Region::new(lo, hi, style));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    render(&plot, &dir.path().join("many.svg")).unwrap();
    render(&plot, &dir.path().join("many.png")).unwrap();
    let svg = std::fs::read_to_string(dir.path().join("many.svg")).unwrap();
    let filled = filled_rects(&svg, RegionStyle::Proven) + filled_rects(&svg, RegionStyle::Undecided);
    assert_eq!(filled, nx as usize * ny as usize + 2);
    assert_eq!(decode_png(&dir.path().join("many.png")).0, trestle_plot::DEFAULT_SIZE.0);
}

fn coordinate() -> impl Strategy<Value = f64> {
    prop_oneof![4 => -20.0..20.0_f64, 1 => any::<f64>(), 1 => Just(0.0)]
}

fn point() -> impl Strategy<Value = (f64, f64)> {
    (coordinate(), coordinate())
}

/// Mostly valid view windows, sometimes arbitrary pairs.
fn range() -> impl Strategy<Value = (f64, f64)> {
    prop_oneof![3 => (-20.0..20.0_f64, 1e-3..40.0_f64).prop_map(|(lo, width)| (lo, lo + width)), 1 => point()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Whatever the numbers, rendering returns (never panics), and both formats agree on whether
    /// the input is valid.
    #[test]
    fn rendering_never_panics(
        x_range in range(),
        y_range in range(),
        boxes in prop::collection::vec((point(), point(), 0..7_u8), 0..12),
        trajectory in prop::collection::vec(point(), 0..10),
        arrows in prop::collection::vec((point(), point()), 0..4),
        markers in prop::collection::vec(point(), 0..4),
    ) {
        let mut plot = StatePlot::new("fuzz", x_range, y_range);
        plot.size = (200, 150);
        let styles = [
            RegionStyle::Proven,
            RegionStyle::Falsified,
            RegionStyle::Undecided,
            RegionStyle::Init,
            RegionStyle::Safe,
            RegionStyle::Invariant,
            RegionStyle::Custom { fill: (10, 200, 30), alpha: 0.3, outline: true },
        ];
        for (a, b, style) in boxes {
            let (lo, hi) = ((a.0.min(b.0), a.1.min(b.1)), (a.0.max(b.0), a.1.max(b.1)));
            plot.regions.push(Region::new(lo, hi, styles[usize::from(style)]).with_label("r"));
        }
        plot.trajectories.push(trajectory);
        plot.arrows = arrows.into_iter().map(|(a, b)| Arrow::new(a, b).with_label("a")).collect();
        plot.points = markers.into_iter().map(|m| Marker::new(m).with_label("m")).collect();
        let svg = render_svg(&plot);
        let png = render_png(&plot);
        prop_assert_eq!(svg.is_ok(), png.is_ok());
        if let (Err(e), _) = (&svg, &png) {
            prop_assert!(!matches!(e, PlotError::Draw(_) | PlotError::Encode(_)), "{}", e);
        }
    }
}
