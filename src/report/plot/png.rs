//! The chart as PNG: its SVG rasterised with resvg, text in the system's
//! fonts.

use super::chart::Chart;
use super::svg;

/// The chart as a PNG, rasterised at twice the SVG's size. Text is drawn
/// with the system's fonts (DejaVu Sans on Debian).
pub fn png(chart: &Chart) -> anyhow::Result<Vec<u8>> {
    use resvg::{tiny_skia, usvg};
    use std::sync::{Arc, OnceLock};
    // Scanning the system's fonts takes a while; once per process.
    static FONTS: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    let fonts = FONTS.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        db.load_system_fonts();
        db.set_sans_serif_family("DejaVu Sans");
        Arc::new(db)
    });
    if fonts.is_empty() {
        anyhow::bail!(
            "cannot draw '{}' as PNG: no fonts found on this system for its text \
             (install one, e.g. `apt-get install fonts-dejavu-core`), or use the SVG",
            chart.title
        );
    }
    let opt = usvg::Options {
        fontdb: fonts.clone(),
        ..Default::default()
    };
    let tree = usvg::Tree::from_str(&svg(chart), &opt)?;
    let scale = 2.0;
    let size =
        tree.size().to_int_size().scale_by(scale).ok_or_else(|| {
            anyhow::anyhow!("cannot draw '{}' as PNG: size overflow", chart.title)
        })?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| anyhow::anyhow!("cannot allocate a {size:?} image"))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    Ok(pixmap.encode_png()?)
}
