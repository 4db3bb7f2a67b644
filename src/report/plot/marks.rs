//! What of a series can be drawn, and how a series looks: markers, dash
//! patterns, colours, text widths.

use std::fmt::Write;

use super::chart::Series;
use super::scale::Kind;
use super::*;

/// A marker of shape `shape` centred on (x, y), as path data.
pub(super) fn marker_path(shape: usize, x: f64, y: f64) -> String {
    let r = 4.0;
    match shape % MARKERS {
        0 => format!(
            "M{:.1} {y:.1}a{r} {r} 0 1 0 {:.1} 0a{r} {r} 0 1 0 {:.1} 0z",
            x - r,
            2.0 * r,
            -2.0 * r
        ),
        1 => {
            let s = r * 0.85;
            format!(
                "M{:.1} {:.1}h{:.1}v{:.1}h{:.1}z",
                x - s,
                y - s,
                2.0 * s,
                2.0 * s,
                -2.0 * s
            )
        }
        2 => format!(
            "M{x:.1} {:.1}L{:.1} {:.1}L{:.1} {:.1}z",
            y - r * 1.15,
            x + r * 1.1,
            y + r * 0.8,
            x - r * 1.1,
            y + r * 0.8
        ),
        3 => format!(
            "M{x:.1} {:.1}L{:.1} {y:.1}L{x:.1} {:.1}L{:.1} {y:.1}z",
            y - r * 1.2,
            x + r * 1.2,
            y + r * 1.2,
            x - r * 1.2
        ),
        4 => format!(
            "M{x:.1} {:.1}L{:.1} {:.1}L{:.1} {:.1}z",
            y + r * 1.15,
            x + r * 1.1,
            y - r * 0.8,
            x - r * 1.1,
            y - r * 0.8
        ),
        _ => {
            // A plus, thick enough to read as a shape.
            let (a, b) = (r * 1.1, r * 0.4);
            format!(
                "M{:.1} {:.1}h{:.1}v{:.1}h{:.1}v{:.1}h{:.1}v{:.1}h{:.1}v{:.1}h{:.1}v{:.1}z",
                x - b,
                y - a,
                2.0 * b,
                a - b,
                a - b,
                2.0 * b,
                b - a,
                a - b,
                -2.0 * b,
                b - a,
                b - a,
                -2.0 * b
            )
        }
    }
}

/// The drawable points of a series: (index, x, y) in scale space.
pub(super) fn drawable(s: &Series, xk: Kind, yk: Kind) -> Vec<(usize, f64, f64)> {
    s.points
        .iter()
        .enumerate()
        .filter_map(|(i, &(x, y))| Some((i, xk.transform(x)?, yk.transform(y)?)))
        .collect()
}

/// The spread of point `i`, in scale space, when both ends are drawable.
pub(super) fn spread_at(s: &Series, i: usize, yk: Kind) -> Option<(f64, f64)> {
    let &(lo, hi) = s.spread.as_ref()?.get(i)?;
    Some((yk.transform(lo)?, yk.transform(hi)?))
}

#[cfg(test)]
pub(super) fn style_attrs(i: usize) -> String {
    style_attrs_of(i, false)
}

/// [`style_attrs`]; a reference series (published figures) is always
/// dashed, so it is never mistaken for a measurement.
pub(super) fn style_attrs_of(i: usize, reference: bool) -> String {
    let dash = if reference {
        REFERENCE_DASH
    } else {
        DASHES[(i / PALETTE.len()) % DASHES.len()]
    };
    let mut s = format!("stroke=\"{}\"", colour(i));
    if !dash.is_empty() {
        let _ = write!(s, " stroke-dasharray=\"{dash}\"");
    }
    s
}

pub(super) fn text_width(s: &str, font: f64) -> f64 {
    s.chars().count() as f64 * CHAR_W * font / TICK_FONT
}

/// The width of `s` in the bold sans of the titles at `font` px: each
/// character's advance in DejaVu Sans Bold (the font the PNG rasteriser
/// finds, and one of the widest of the stack) by its class, in em.
pub(super) fn bold_width(s: &str, font: f64) -> f64 {
    let em = |c: char| match c {
        ' ' => 0.348,
        'i' | 'l' | 'j' | 'I' | '|' | '.' | ',' | ':' | ';' | '!' | '\'' => 0.343,
        'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '-' => 0.47,
        'm' => 1.042,
        'w' => 0.924,
        'M' => 1.0,
        'W' => 1.1,
        '%' => 1.0,
        '_' => 0.5,
        '=' | '+' | '<' | '>' | '×' => 0.838,
        c if c.is_ascii_digit() => 0.696,
        c if c.is_uppercase() => 0.77,
        c if c.is_lowercase() => 0.67,
        _ => 0.75,
    };
    s.chars().map(em).sum::<f64>() * font
}

/// `s` in lines no wider than `width` in the title's bold at `font` (with
/// 3 % to spare for other fonts of the stack), broken between words; a
/// word wider than a line on its own is broken where the line ends.
/// Nothing is left out.
pub(super) fn wrap(s: &str, font: f64, width: f64) -> Vec<String> {
    let fits = |t: &str| bold_width(t, font) * 1.03 <= width;
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in s.split_whitespace() {
        let joined = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if fits(&joined) {
            line = joined;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        // The word alone, cut where a line is full.
        for c in word.chars() {
            line.push(c);
            if !fits(&line) && line.chars().count() > 1 {
                let c = line.pop().expect("pushed");
                lines.push(std::mem::take(&mut line));
                line.push(c);
            }
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}
