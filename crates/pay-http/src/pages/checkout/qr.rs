//! The deposit QR code as inline SVG, drawn on the server: no image request, no script, and
//! nothing the Content-Security-Policy has to allow. The `qrcode` crate encodes; the drawing
//! is one `<path>` of horizontal runs, a few kilobytes for an address, in a template.

use std::fmt::Write;

use qrcode::{Color, EcLevel, QrCode};

/// Quiet zone around the symbol, in modules (the standard asks for 4).
const QUIET: usize = 4;

/// An inline `<svg>` of `data` (medium error correction), labelled for assistive technology,
/// or `None` when `data` is too long for a QR code.
pub fn svg(data: &str, label: &str) -> Option<String> {
    let code = QrCode::with_error_correction_level(data.as_bytes(), EcLevel::M).ok()?;
    let width = code.width();
    let colors = code.to_colors();
    let size = width + 2 * QUIET;
    let mut path = String::with_capacity(width * width);
    for y in 0..width {
        let row = &colors[y * width..(y + 1) * width];
        let mut x = 0;
        while x < width {
            if row[x] != Color::Dark {
                x += 1;
                continue;
            }
            let start = x;
            while x < width && row[x] == Color::Dark {
                x += 1;
            }
            let _ = write!(
                path,
                "M{} {}h{}v1h-{}z",
                start + QUIET,
                y + QUIET,
                x - start,
                x - start
            );
        }
    }
    Some(crate::pages::layout::html(&QrSvg {
        label,
        size,
        path: &path,
    }))
}

/// The drawing (`templates/checkout/qr.html`).
#[derive(askama::Template)]
#[template(path = "checkout/qr.html")]
struct QrSvg<'a> {
    label: &'a str,
    size: usize,
    path: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_every_dark_module_once() {
        let data = "0x52908400098527886E0F7030069857D2E4169EE7";
        let svg = svg(data, "QR code").unwrap();
        let code = QrCode::with_error_correction_level(data, EcLevel::M).unwrap();
        let dark = code
            .to_colors()
            .iter()
            .filter(|c| **c == Color::Dark)
            .count();
        // The run lengths add up to the dark modules.
        let drawn: usize = svg
            .split('h')
            .skip(1)
            .filter_map(|s| s.split('v').next()?.parse::<usize>().ok())
            .sum();
        assert_eq!(drawn, dark);
        let size = code.width() + 8;
        assert!(svg.starts_with("<svg class=\"qr\" role=\"img\" aria-label=\"QR code\""));
        assert!(svg.contains(&format!("viewBox=\"0 0 {size} {size}\"")));
        assert!(
            !svg.contains("http"),
            "no namespace URL or reference: {svg}"
        );
        assert!(svg.len() < 8_000, "{}", svg.len());
    }

    #[test]
    fn labels_are_escaped_and_overlong_data_is_refused() {
        let svg = svg("bc1q", "<b>\"x\"</b>").unwrap();
        assert!(svg.contains("aria-label=\"&lt;b&gt;&quot;x&quot;&lt;/b&gt;\""));
        assert!(super::svg(&"x".repeat(5000), "QR").is_none());
    }
}
