//! A run's on-CPU profiles (`run --profile`) in words and pictures: per
//! process tree the CPU time sampled, the kernel's share and the share perf could
//! not name, the functions most on the CPU, and its flame graph.

use std::fmt::Write;

use crate::record::profile::Profile;
use crate::record::Run;
use crate::report::doc::{Block, Cell, Flame, Row, Section, Table};
use crate::report::plot;

/// Above this share of samples without a symbol a profile says the build
/// is stripped rather than leave the reader with hex.
const STRIPPED: f64 = 0.5;

/// How many functions the text report names per profile.
const TEXT_TOP: usize = 5;

fn pct(share: f64) -> String {
    format!("{:.1} %", share * 100.0)
}

/// One line on how a profile was taken and what it holds.
fn headline(p: &Profile) -> String {
    format!(
        "{}: {:.2} CPU-s sampled at {} Hz ({} stacks), kernel {}, without a symbol {}",
        p.role,
        p.cpu_s,
        p.hz,
        p.call_graph,
        pct(p.kernel_share),
        pct(p.unnamed_share)
    )
}

/// Above this share of samples without a symbol a profile says which
/// code has none and how to name it.
const PART_STRIPPED: f64 = 0.1;

/// Why much of a profile is unnamed, when it is: a stripped build (most
/// of it), or one that keeps symbols for some functions only (Debian's
/// PostgreSQL keeps its exported functions' names, not its static ones'),
/// naming the code without symbols where the top functions show it.
fn stripped(p: &Profile) -> Option<String> {
    let dsos: Vec<&str> = (p.top.iter())
        .map(|t| t.function.as_str())
        .filter(|f| f.starts_with('[') && f.ends_with(']'))
        .collect();
    let within = if dsos.is_empty() {
        String::new()
    } else {
        format!(" (in {})", dsos.join(", "))
    };
    if p.unnamed_share > STRIPPED {
        Some(format!(
            "most of the {}'s samples have no symbol{within}: its build is stripped; install its debug symbols (Debian: the -dbgsym package) to name them",
            p.role
        ))
    } else if p.unnamed_share > PART_STRIPPED {
        Some(format!(
            "{} of the {}'s samples have no symbol{within}: its build names some functions only; install its debug symbols (Debian: the -dbgsym package) to name the rest",
            pct(p.unnamed_share),
            p.role
        ))
    } else {
        None
    }
}

/// The text report's part.
pub fn text_section(profiles: &[Profile]) -> String {
    let mut s = String::new();
    if profiles.is_empty() {
        return s;
    }
    let _ = writeln!(s, "On-CPU profiles (perf, the measured window):");
    for p in profiles {
        let _ = writeln!(s, "    {}", headline(p));
        for t in p.top.iter().take(TEXT_TOP) {
            let _ = writeln!(
                s,
                "        {:>7} self {:>7} total  {}",
                pct(t.self_share),
                pct(t.total_share),
                t.function
            );
        }
        if let Some(why) = stripped(p) {
            let _ = writeln!(s, "        {why}");
        }
    }
    s
}

/// Whether the run's record holds the client's profile.
pub fn client_profiled(r: &Run) -> bool {
    let profiles = r.result.metrics.iter().flat_map(|m| &m.profiles);
    profiles.into_iter().any(|p| p.role == "client")
}

/// The run report's section of `r`'s profiles, if it has any.
pub fn run_section(r: &Run) -> Option<Section> {
    let client = r.result.client_cpu.share_of_machine;
    let bound = (client > super::CPU_WARN_SHARE).then_some(client);
    doc_section(&r.result.metrics.as_ref()?.profiles, bound)
}

/// The HTML and Markdown report's section: per profile, its top functions
/// and its flame graph (drawn from the folded stacks this process holds;
/// a record read back names their file instead). `client_bound`: the
/// client's share of the machine's CPU when it was high enough that the
/// client may have limited the result (said above the client's graph).
pub fn doc_section(profiles: &[Profile], client_bound: Option<f64>) -> Option<Section> {
    if profiles.is_empty() {
        return None;
    }
    let cell = |text: String| Cell {
        text,
        ..Cell::default()
    };
    let mut blocks = Vec::new();
    for p in profiles {
        if let Some(share) = client_bound.filter(|_| p.role == "client") {
            blocks.push(Block::Paragraph(format!(
                "The client used {:.0} % of the machine's CPU: the measurement may be bound by the client, and its flame graph below shows where that time went.",
                share * 100.0
            )));
        }
        blocks.push(Block::Paragraph(headline(p)));
        if let Some(why) = stripped(p) {
            blocks.push(Block::Note(why));
        }
        blocks.push(Block::Table(Table {
            caption: format!("The {}'s functions most on the CPU", p.role),
            corner: "function".into(),
            columns: vec!["self".into(), "total".into()],
            rows: (p.top.iter())
                .map(|t| Row {
                    label: t.function.clone(),
                    cells: vec![cell(pct(t.self_share)), cell(pct(t.total_share))],
                })
                .collect(),
            ..Table::default()
        }));
        let subtitle = format!(
            "{:.2} CPU-s sampled at {} Hz, {} stacks",
            p.cpu_s, p.hz, p.call_graph
        );
        let title = format!("The {}'s on-CPU flame graph", p.role);
        match p.folded.as_deref().map(|f| plot::flame::svg(f, &title, Some(&subtitle))) {
            Some(Ok(svg)) => blocks.push(Block::Flame(Flame {
                id: p.role.clone(),
                title,
                svg,
            })),
            Some(Err(why)) => blocks.push(Block::Note(format!("The {}'s {why}", p.role))),
            None => blocks.push(Block::Note(match &p.file {
                Some(file) => format!(
                    "The {}'s folded stacks are in {file}, beside the run's JSON (e.g. `zcat {file} | inferno-flamegraph > {}.svg`).",
                    p.role, p.role
                ),
                None => format!("The {}'s folded stacks were not kept with this record.", p.role),
            })),
        }
    }
    Some(Section {
        title: "Profiles".into(),
        blocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::profile::TopFunction;

    fn server() -> Profile {
        Profile {
            role: "server".into(),
            hz: 99,
            call_graph: "fp".into(),
            cpu_s: 10.0,
            kernel_share: 0.3,
            unnamed_share: 0.6,
            top: vec![TopFunction {
                function: "heap_getnext".into(),
                self_share: 0.25,
                total_share: 0.5,
            }],
            file: None,
            folded: Some(
                "postgres;main;heap_getnext 60000000\npostgres;[postgres] 40000000\n".into(),
            ),
        }
    }

    #[test]
    fn the_text_names_the_top_functions_and_a_stripped_build() {
        let t = text_section(&[server()]);
        assert!(
            t.contains("server: 10.00 CPU-s sampled at 99 Hz (fp stacks), kernel 30.0 %, without a symbol 60.0 %"),
            "{t}"
        );
        assert!(t.contains("25.0 % self  50.0 % total  heap_getnext"), "{t}");
        assert!(t.contains("its build is stripped"), "{t}");
        assert_eq!(text_section(&[]), "");
        // Part of it named: which code has no symbols, and how to name it.
        let mut part = server();
        part.unnamed_share = 0.126;
        part.top.push(TopFunction {
            function: "[postgres]".into(),
            self_share: 0.126,
            total_share: 0.996,
        });
        let t = text_section(&[part]);
        assert!(
            t.contains("12.6 % of the server's samples have no symbol (in [postgres]): its build names some functions only"),
            "{t}"
        );
        let mut named = server();
        named.unnamed_share = 0.02;
        assert!(!text_section(&[named]).contains("no symbol"));
    }

    #[test]
    fn the_section_draws_the_flame_graph_or_names_the_file() {
        let s = doc_section(&[server()], None).unwrap();
        let flame = s.blocks.iter().find_map(|b| match b {
            Block::Flame(f) => Some(f),
            _ => None,
        });
        let flame = flame.expect("a flame graph");
        assert_eq!(flame.id, "server");
        assert!(flame.svg.contains("heap_getnext (60 ms, 60.00%)"));
        let mut read_back = server();
        read_back.folded = None;
        read_back.file = Some("run.server.folded.gz".into());
        let s = doc_section(&[read_back], None).unwrap();
        assert!(s
            .blocks
            .iter()
            .any(|b| matches!(b, Block::Note(n) if n.contains("run.server.folded.gz"))));
        assert!(doc_section(&[], Some(0.9)).is_none());
        let mut client = server();
        client.role = "client".into();
        let s = doc_section(&[server(), client], Some(0.8)).unwrap();
        let said =
            |b: &Block| matches!(b, Block::Paragraph(p) if p.contains("The client used 80 %"));
        assert_eq!(
            s.blocks.iter().filter(|b| said(b)).count(),
            1,
            "once, before the client's"
        );
    }
}
