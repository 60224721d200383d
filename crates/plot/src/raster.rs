//! SVG to PNG with resvg and an embedded font: the one rasteriser of every picture the tool writes
//! (state plots here, the campaign reports' charts), so a PNG never loses the text of its SVG.

use crate::PlotError;
use resvg::{tiny_skia, usvg};

/// Renders an SVG document to PNG bytes on a white background, with the embedded DejaVu Sans as
/// every font family (no system fonts are read, so the image is the same on every machine).
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>, PlotError> {
    let mut opt = usvg::Options { font_family: "DejaVu Sans".into(), ..usvg::Options::default() };
    let db = opt.fontdb_mut();
    db.load_font_data(dejavu::sans::regular().to_vec());
    db.set_sans_serif_family("DejaVu Sans");
    db.set_serif_family("DejaVu Sans");
    db.set_monospace_family("DejaVu Sans");
    let tree = usvg::Tree::from_str(svg, &opt).map_err(|e| PlotError::Draw(format!("SVG to PNG: {e}")))?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| PlotError::Draw("SVG to PNG: empty image".into()))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| PlotError::Encode(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_rasterised() {
        let with_text = r#"<svg xmlns="http://www.w3.org/2000/svg" width="200" height="60"><text x="10" y="40" font-family="sans-serif" font-size="30">Trestle</text></svg>"#;
        let without = r#"<svg xmlns="http://www.w3.org/2000/svg" width="200" height="60"></svg>"#;
        let a = svg_to_png(with_text).unwrap();
        let b = svg_to_png(without).unwrap();
        assert_eq!(&a[1..4], b"PNG");
        assert_ne!(a, b, "the embedded font drew glyphs");
    }
}
