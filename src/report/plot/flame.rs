//! Flame graphs of folded stacks (`metrics::profile`), drawn by inferno,
//! the Rust port of Brendan Gregg's flamegraph.pl: one box per function
//! on a stack, as wide as its share of the samples, callers below
//! callees. The SVG carries inferno's own script (search, zoom, the
//! frame under the pointer), so the report shows it in a frame of its
//! own; without the script it still reads.
//!
//! Colours by kind, with flamegraph.pl's "perl" palette, the one whose
//! rules fit native servers: kernel frames (folded with `_[k]`, which the
//! drawing leaves off their names) orange, C++ and Rust frames (a `::`)
//! yellow, other native code red. (The "java" palette reads a capital
//! initial as Java and would paint PostgreSQL's `ExecScan` as JIT code.)
//! Shades are hashed from the function's name: a function has the same
//! colour in every graph of a report.

use inferno::flamegraph::color::{MultiPalette, Palette};
use inferno::flamegraph::{self, Options};

/// The flame graph of `folded` (counts in nanoseconds of CPU time) as
/// SVG, titled, each frame's time in milliseconds; Err: why there is none
/// (no samples).
pub fn svg(folded: &str, title: &str, subtitle: Option<&str>) -> Result<String, String> {
    let mut o = Options::default();
    o.colors = Palette::Multi(MultiPalette::Perl);
    o.hash = true;
    o.deterministic = true;
    o.title = title.to_string();
    o.subtitle = subtitle.map(str::to_string);
    o.count_name = "ms".into();
    o.factor = 1e-6;
    let mut out = Vec::new();
    flamegraph::from_lines(&mut o, folded.lines(), &mut out)
        .map_err(|e| format!("no flame graph: {e}"))?;
    String::from_utf8(out).map_err(|e| format!("no flame graph: {e}"))
}

/// The differential flame graph of `after` against `before`, each a
/// folded text and the transactions its window ran, its stacks weighed per
/// transaction: `after`'s stacks, red where a frame takes more CPU per
/// transaction than in `before`, blue where less (inferno's differential,
/// Gregg's difffolded.pl).
pub fn diff_svg(before: (&str, u64), after: (&str, u64), title: &str) -> Result<String, String> {
    // Nanoseconds per transaction, whole, as folded counts must be (and
    // inferno's `factor` would scale the totals but not the differences).
    let per_transaction = |(folded, n): (&str, u64)| -> String {
        let lines = folded.lines().filter_map(|l| {
            let (stack, ns) = l.rsplit_once(' ')?;
            let per = ns.parse::<u64>().ok()? / n.max(1);
            Some(format!("{stack} {per}\n"))
        });
        lines.collect()
    };
    let (a, b) = (per_transaction(before), per_transaction(after));
    let mut diff = Vec::new();
    inferno::differential::from_readers(Default::default(), a.as_bytes(), b.as_bytes(), &mut diff)
        .map_err(|e| format!("no differential flame graph: {e}"))?;
    let diff = String::from_utf8_lossy(&diff);
    let mut o = Options::default();
    o.hash = true;
    o.deterministic = true;
    o.title = title.to_string();
    o.count_name = "ns per transaction".into();
    let mut out = Vec::new();
    flamegraph::from_lines(&mut o, diff.lines(), &mut out)
        .map_err(|e| format!("no differential flame graph: {e}"))?;
    String::from_utf8(out).map_err(|e| format!("no differential flame graph: {e}"))
}

/// The height in pixels an SVG of [`svg`] asks for (its root element's
/// `height`), to size the frame that shows it.
pub fn height(svg: &str) -> Option<u32> {
    let root = &svg[svg.find("<svg")?..];
    let root = &root[..root.find('>')?];
    let at = root.find(" height=\"")? + " height=\"".len();
    root[at..].split('"').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folded-stack fixture: a server spending most of its 100 ms in a
    /// scan, some in the kernel sending, one frame without a symbol.
    const FOLDED: &str =
        "postgres;main;PostgresMain;exec_simple_query;ExecScan;heap_getnext 60000000\n\
                          postgres;main;PostgresMain;pq_flush;tcp_sendmsg_[k] 30000000\n\
                          postgres;[postgres] 10000000\n";

    #[test]
    fn a_flame_graph_draws_each_function_with_its_share() {
        let svg = svg(FOLDED, "server", Some("99 Hz, fp")).unwrap();
        assert!(svg.starts_with("<?xml"), "{}", &svg[..80]);
        // One frame per function, its samples and share in its title.
        assert!(svg.contains("heap_getnext (60 ms, 60.00%)"), "{svg}");
        // A kernel frame's name without its mark, in the kernel's orange.
        assert!(svg.contains("tcp_sendmsg (30 ms, 30.00%)"), "{svg}");
        assert!(!svg.contains("_[k]"));
        assert!(svg.contains("PostgresMain (90 ms, 90.00%)"));
        assert!(svg.contains("all (100 ms, 100%)"));
        assert!(svg.contains(">server<") && svg.contains("99 Hz, fp"));
        // The same input draws the same picture.
        assert_eq!(
            svg,
            super::svg(FOLDED, "server", Some("99 Hz, fp")).unwrap()
        );
        let h = height(&svg).unwrap();
        assert!((100..1000).contains(&h), "{h}");
    }

    #[test]
    fn a_differential_flame_graph_weighs_stacks_per_transaction() {
        // Twice the transactions in the same CPU time: half as much per
        // transaction everywhere but in the scan, which stays the same.
        let before = "postgres;ExecScan 4000000\npostgres;pq_flush 4000000\n";
        let after = "postgres;ExecScan 8000000\npostgres;pq_flush 4000000\n";
        let svg = diff_svg((before, 1000), (after, 2000), "b against a").unwrap();
        // After: 4,000 + 2,000 ns per transaction, the scan unchanged
        // (0.00 %) and the flush down by 2,000 of 6,000 (-33.33 %).
        assert!(
            svg.contains("all (6,000 ns per transaction, 100%)"),
            "{svg}"
        );
        assert!(
            svg.contains("ExecScan (4,000 ns per transaction, 66.67%; 0.00%)"),
            "{svg}"
        );
        assert!(
            svg.contains("pq_flush (2,000 ns per transaction, 33.33%; -33.33%)"),
            "{svg}"
        );
    }

    #[test]
    fn no_samples_no_flame_graph() {
        let e = svg("", "server", None).unwrap_err();
        assert!(e.contains("no flame graph"), "{e}");
        assert_eq!(height("<svg width=\"1\">"), None);
    }
}
