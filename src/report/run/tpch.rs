//! TPC-H's figures of a run in sentences (the text report's TPC-H block
//! and the HTML and Markdown reports' paragraph). The figures are the
//! record's (`result.tpch`, derived once by `workload::tpch::figures`);
//! this only words them.

use crate::record::chbench::Chbench;
use crate::record::tpch::Tpch;
use crate::util::units::ms_us;

/// The figures in sentences, one per line.
pub fn lines(f: &Tpch) -> Vec<String> {
    let test = if f.test == "power" {
        if f.refresh {
            "power test: RF1, the 22 queries in stream 0's order, RF2 on one connection".to_string()
        } else {
            "power test: the 22 queries in stream 0's order on one connection".to_string()
        }
    } else if f.refresh {
        format!(
            "throughput test: {} query stream(s) beside the refresh stream ({} pairs of RF1 and RF2)",
            f.streams, f.streams
        )
    } else {
        format!("throughput test: {} query stream(s)", f.streams)
    };
    let mut out = vec![format!("scale factor {}, {test}", f.scale_factor)];
    match (f.power, &f.power_absent) {
        (Some(p), _) => out.push(format!(
            "Power@Size: {p:.1} (3600 × SF over the geometric mean of the {} timing intervals)",
            if f.refresh { 24 } else { 22 }
        )),
        (None, Some(why)) if f.test == "power" => out.push(format!("Power@Size: none: {why}")),
        _ => {}
    }
    match (f.throughput, &f.throughput_absent) {
        (Some(t), _) => out.push(format!(
            "Throughput@Size: {t:.1} (S × 22 × 3600 over Ts = {:.2} s, × SF)",
            f.elapsed_s
        )),
        (None, Some(why)) if f.test != "power" => out.push(format!("Throughput@Size: none: {why}")),
        _ => {}
    }
    if let Some(g) = f.query_geomean_s {
        out.push(format!("geometric mean of the 22 queries: {:.3} s", g));
    }
    if f.departures.is_empty() {
        out.push("QphH@Size: the geometric mean of a power and a throughput test at this scale (a study of --threads 1 and S+1 reports it)".into());
    } else {
        out.push(format!("not a TPC-H result: {}", f.departures.join("; ")));
    }
    out
}

/// The timing table's columns.
pub const COLUMNS: [&str; 5] = ["count", "mean", "min", "max", "failed"];

/// Each query's and refresh function's row: its name and the cells under
/// [`COLUMNS`] (times in ms, "-" where none completed).
pub fn rows(f: &Tpch) -> Vec<(String, Vec<String>)> {
    let ms = |s: Option<f64>| s.map_or("-".to_string(), |s| ms_us(s * 1e6));
    f.timings
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                vec![
                    t.count.to_string(),
                    ms(t.mean_s),
                    ms(t.min_s),
                    ms(t.max_s),
                    t.failed.to_string(),
                ],
            )
        })
        .collect()
}

/// A CH-benCHmark point's loads and figures in one sentence (the rest of
/// its page is TPC-C's, and the queries' rows are among its types).
pub fn chbench_line(c: &Chbench) -> String {
    let tpmc = c.tpmc.map_or("no tpmC (no terminals)".to_string(), |t| {
        format!("tpmC {t:.1}")
    });
    let qphh = c.qphh.map_or("no QphH (no streams)".to_string(), |q| {
        format!(
            "QphH {q:.1} ({} queries completed, {} failed)",
            c.queries, c.queries_failed
        )
    });
    let geomean = c.query_geomean_s.map_or(String::new(), |g| {
        format!(", geometric mean of the 22 queries {g:.3} s")
    });
    format!(
        "{} TPC-C terminals beside {} analytical stream(s): {tpmc}, {qphh}{geomean}",
        c.terminals, c.analytic_streams
    )
}
