//! The HTML report in a real browser: a realistic study report (wrapped
//! tables, missing points, marks, a log-x chart with error bars, a log-y
//! chart, a percentile step chart and a time series) is rendered by headless
//! Chromium to a screenshot and to its DOM, and both are checked: the charts'
//! colours and the tables' shading are on the screenshot, one block per
//! chart and table; the DOM holds every chart with non-empty lines and every
//! table row. `dbsweep run --report` is checked the same way end to end.
//!
//! Needs Debian's `chromium` (scripts/install-servers installs it). Without
//! it the browser tests are skipped with a message, unless
//! DBSWEEP_REQUIRE_BROWSER is set (scripts/test sets it), when they fail.
//! DBSWEEP_SCREENSHOT_OUT=FILE.png keeps the sample report's screenshot
//! (and the page, as FILE.html).

mod util;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use dbsweep::report::doc::{
    Axis, Block, Cell, Chart, ChartKind, Doc, Mark, Row, Section, Series, Table,
};
use dbsweep::report::{doc::html, plot};
use util::{dbsweep_in, Dir};

const WIDTH: u32 = 1280;
const HEIGHT: u32 = 7000;

/// The browser, or None (after saying so) when the test may be skipped.
fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(
            ["chromium", "chromium-browser", "google-chrome"]
                .iter()
                .flat_map(|name| {
                    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                        .map(move |dir| dir.join(name))
                        .collect::<Vec<_>>()
                }),
        )
        .find(|p| p.is_file());
    if found.is_none() {
        if std::env::var_os("DBSWEEP_REQUIRE_BROWSER").is_some() {
            panic!(
                "chromium not found but DBSWEEP_REQUIRE_BROWSER is set: \
                 install it with `apt-get install chromium` (scripts/install-servers does)"
            );
        }
        eprintln!(
            "SKIPPED: chromium not found (apt-get install chromium, or set CHROMIUM=PATH); \
             set DBSWEEP_REQUIRE_BROWSER=1 to make this a failure"
        );
    }
    found
}

/// Runs headless Chromium on `page` with `args` and returns its stdout.
fn browse(browser: &Path, profile: &Path, args: &[&str], page: &Path) -> String {
    // stdout to a file: a large DOM would fill a pipe nobody reads yet.
    let out_path = profile.with_extension("out");
    let err_path = profile.with_extension("err");
    let out_file = std::fs::File::create(&out_path).expect("browser output file");
    let err_file = std::fs::File::create(&err_path).expect("browser log file");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdout(out_file)
        .stderr(err_file)
        .spawn()
        .expect("start chromium");
    let started = Instant::now();
    loop {
        if child.try_wait().expect("wait for chromium").is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(180) {
            let _ = child.kill();
            panic!("chromium did not finish within 180 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = child.wait().expect("chromium status");
    assert!(
        status.success(),
        "chromium failed: {status}\n{}",
        std::fs::read_to_string(&err_path).unwrap_or_default()
    );
    std::fs::read_to_string(&out_path).expect("browser output")
}

/// An RGB screenshot.
struct Image {
    w: usize,
    h: usize,
    rgb: Vec<[u8; 3]>,
}

fn decode(path: &Path) -> Image {
    let file = std::fs::File::open(path).expect("screenshot written");
    let mut dec = png::Decoder::new(std::io::BufReader::new(file));
    dec.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = dec.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("PNG frame");
    let channels = info.color_type.samples();
    let rgb = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|p| match channels {
            1 | 2 => [p[0], p[0], p[0]],
            _ => [p[0], p[1], p[2]],
        })
        .collect();
    Image {
        w: info.width as usize,
        h: info.height as usize,
        rgb,
    }
}

fn hex(c: &str) -> [u8; 3] {
    let v = u32::from_str_radix(c.trim_start_matches('#'), 16).unwrap();
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// Same colour, give or take rounding in the browser's blending.
fn near(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 3)
}

impl Image {
    /// Rows holding at least `min` pixels of colour `c`.
    fn rows_with(&self, c: [u8; 3], min: usize) -> Vec<usize> {
        (0..self.h)
            .filter(|&y| {
                self.rgb[y * self.w..(y + 1) * self.w]
                    .iter()
                    .filter(|&&p| near(p, c))
                    .count()
                    >= min
            })
            .collect()
    }

    fn count(&self, c: [u8; 3]) -> usize {
        self.count_in(c, 0, self.h)
    }

    /// Pixels of colour `c` in rows `top..bottom`.
    fn count_in(&self, c: [u8; 3], top: usize, bottom: usize) -> usize {
        self.rgb[top * self.w..bottom * self.w]
            .iter()
            .filter(|&&p| near(p, c))
            .count()
    }

    /// Rows crossed by a long mid-grey line: the charts' frames (#888,
    /// blended over at most two rows). Grid lines, table borders and text
    /// are lighter, darker or shorter.
    fn frame_rows(&self) -> Vec<usize> {
        (0..self.h)
            .filter(|&y| {
                self.rgb[y * self.w..(y + 1) * self.w]
                    .iter()
                    .filter(|p| {
                        let (lo, hi) = (*p.iter().min().unwrap(), *p.iter().max().unwrap());
                        hi - lo <= 8 && (100..=200).contains(&lo)
                    })
                    .count()
                    >= 500
            })
            .collect()
    }

    fn non_white(&self) -> usize {
        self.rgb
            .iter()
            .filter(|p| p.iter().any(|&v| v < 235))
            .count()
    }
}

/// Runs of row numbers with gaps above `gap`: separate blocks on the page.
fn blocks(rows: &[usize], gap: usize) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &y in rows {
        match out.last_mut() {
            Some(b) if y <= b.1 + gap => b.1 = y,
            _ => out.push((y, y)),
        }
    }
    out
}

fn cell(text: &str, detail: Option<String>, mark: Mark) -> Cell {
    Cell {
        text: text.into(),
        detail,
        mark,
    }
}

/// A study report as the study exporter builds it, with made-up but
/// plausible numbers: the shapes, not the values, are under test.
fn sample_doc() -> Doc {
    let clients: Vec<f64> = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
        .iter()
        .map(|&c| c as f64)
        .collect();
    let variants = [
        ("MariaDB 10.11 / default", 2400.0, 64.0),
        ("MariaDB 10.11 / big buffer pool", 2600.0, 128.0),
        ("PostgreSQL 15 / default", 2100.0, 32.0),
        ("PostgreSQL 15 / synchronous_commit=off", 2900.0, 64.0),
    ];
    // Throughput rises to a peak at `knee` clients, then sags.
    let tps = |base: f64, knee: f64, c: f64| {
        if c <= knee {
            base * c.sqrt()
        } else {
            base * knee.sqrt() * (knee / c).powf(0.3)
        }
    };
    let mut rows = Vec::new();
    let mut series = Vec::new();
    let mut p95 = Vec::new();
    for (vi, &(name, base, knee)) in variants.iter().enumerate() {
        let values: Vec<f64> = clients.iter().map(|&c| tps(base, knee, c)).collect();
        let peak = values.iter().cloned().fold(0.0, f64::max);
        let mut cells: Vec<Cell> = values
            .iter()
            .map(|&v| {
                cell(
                    &format!("{v:.1}"),
                    Some(format!("± {:.1} (sd, 3 repeats)", v * 0.02)),
                    if v == peak { Mark::Best } else { Mark::None },
                )
            })
            .collect();
        let mut points: Vec<(f64, f64)> = clients.iter().cloned().zip(values.clone()).collect();
        if vi == 2 {
            // Stopped by the study's stop rule after collapsing.
            for c in cells.iter_mut().skip(8) {
                *c = cell("stopped: below 20 % of peak", None, Mark::Missing);
            }
            points.truncate(8);
        }
        rows.push(Row {
            label: name.into(),
            cells,
        });
        series.push(Series {
            name: name.into(),
            spread: Some(points.iter().map(|p| (p.1 * 0.97, p.1 * 1.03)).collect()),
            points: points.clone(),
            reference: false,
        });
        p95.push(Series {
            name: name.into(),
            points: points
                .iter()
                .map(|&(c, t)| (c, 1000.0 * c / t * 1.8))
                .collect(),
            spread: None,
            reference: false,
        });
    }
    let columns: Vec<String> = clients.iter().map(|c| c.to_string()).collect();
    let throughput = Table {
        caption: "Transactions per second by clients (mean of 3 repeats)".into(),
        corner: "target / variant".into(),
        columns: columns.clone(),
        rows,
        wrap: Some(5),
        prose: false,
    };
    let scal = Table {
        caption: "Sag at 512 clients and change vs the baseline".into(),
        corner: "variant".into(),
        columns: vec![
            "peak".into(),
            "at clients".into(),
            "sag %".into(),
            "vs default".into(),
        ],
        rows: vec![
            Row {
                label: "MariaDB 10.11 / big buffer pool".into(),
                cells: vec![
                    cell("29415.0", None, Mark::Best),
                    cell("128", None, Mark::None),
                    cell("18.8", None, Mark::None),
                    cell("+8.3 %", Some("noise ± 2.1 %".into()), Mark::Better),
                ],
            },
            Row {
                label: "PostgreSQL 15 / default".into(),
                cells: vec![
                    cell("11879.4", None, Mark::None),
                    cell("32", None, Mark::None),
                    cell("—", None, Mark::Missing),
                    cell("-12.5 %", Some("noise ± 2.4 %".into()), Mark::Worse),
                ],
            },
        ],
        wrap: None,
        prose: false,
    };
    // A latency distribution: latency by percentile, per target.
    let dist = |scale: f64| -> Vec<(f64, f64)> {
        let ps = [
            0.0, 10.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 100.0,
        ];
        ps.iter()
            .map(|&p: &f64| {
                (
                    p,
                    scale * (0.4 + (1.0 / (1.0 - p.min(99.995) / 100.0)).ln()),
                )
            })
            .collect()
    };
    // Throughput every second of a 120 s point, with a dip at a checkpoint.
    let time_series: Vec<(f64, f64)> = (1..=120)
        .map(|t| {
            let t = t as f64;
            let dip = if (60.0..70.0).contains(&t) { 0.6 } else { 1.0 };
            (t, dip * (9000.0 + 400.0 * (t * 0.7).sin()))
        })
        .collect();
    Doc {
        title: "Study \"oltp-rw-scaling\": MariaDB vs PostgreSQL".into(),
        facts: vec![
            ("study".into(), "oltp-rw-scaling (studies/oltp-rw.toml), 3 repeats".into()),
            ("machine".into(), "bench01: AMD EPYC 7543, 32 CPUs, 125.8 GiB, Debian 12".into()),
            ("servers".into(), "MariaDB 10.11.6; PostgreSQL 15.8".into()),
            ("differing settings".into(), "innodb_buffer_pool_size 128M / 8G; synchronous_commit on / off".into()),
        ],
        sections: vec![
            Section {
                title: "Throughput".into(),
                blocks: vec![
                    Block::Paragraph("PostgreSQL 15 / synchronous_commit=off has the highest peak, 32806.5 tps at 64 clients.".into()),
                    Block::Table(throughput),
                    Block::Note("Cells are the mean of 3 repeats; hover for the standard deviation.".into()),
                    Block::Chart(Chart {
                        id: "tps-by-clients".into(),
                        title: "Throughput by clients".into(),
                        x: Axis::log("clients"),
                        y: Axis::linear("transactions/s"),
                        kind: ChartKind::Line,
                        series,
                    }),
                ],
            },
            Section {
                title: "Latency".into(),
                blocks: vec![
                    Block::Chart(Chart {
                        id: "p95-by-clients".into(),
                        title: "95th percentile latency by clients".into(),
                        x: Axis::log("clients"),
                        y: Axis::log("latency (ms)"),
                        kind: ChartKind::Line,
                        series: p95,
                    }),
                    Block::Chart(Chart {
                        id: "latency-distribution".into(),
                        title: "Latency by percentile at 64 clients".into(),
                        x: Axis::percentile("percentile (%)"),
                        y: Axis::log("latency (ms)"),
                        kind: ChartKind::Step,
                        series: vec![
                            Series { name: "MariaDB 10.11".into(), points: dist(2.0), spread: None, reference: false },
                            Series { name: "PostgreSQL 15".into(), points: dist(3.0), spread: None, reference: false },
                        ],
                    }),
                ],
            },
            Section {
                title: "Over time".into(),
                blocks: vec![Block::Chart(Chart {
                    id: "tps-over-time".into(),
                    title: "Throughput over time, MariaDB 10.11 at 64 clients".into(),
                    x: Axis::linear("time (s)"),
                    y: Axis::linear("transactions/s"),
                    kind: ChartKind::Line,
                    series: vec![Series {
                        name: "transactions/s".into(),
                        spread: Some(time_series.iter().map(|p| (p.1 * 0.95, p.1 * 1.05)).collect()),
                        points: time_series,
                        reference: false,
                    }],
                })],
            },
            Section {
                title: "Conclusions".into(),
                blocks: vec![
                    Block::Table(scal),
                    Block::Paragraph("PostgreSQL 15 / default is slower than the best by 63.8 %.".into()),
                    Block::Note("Differences within the repeat noise are not marked.".into()),
                ],
            },
        ],
    }
}

const CHARTS: usize = 4;
/// Table parts: the throughput table wraps into two halves, plus one.
const TABLES: usize = 3;
/// Body rows over all table parts: 4 + 4 + 2.
const BODY_ROWS: usize = 10;

#[test]
fn sample_report_renders_in_chromium() {
    let Some(browser) = chromium() else { return };
    let dir = Dir::new();
    let page = dir.join("report.html");
    let doc = sample_doc();
    std::fs::write(&page, html::render(&doc)).unwrap();
    let shot = dir.join("report.png");

    browse(
        &browser,
        &dir.join("profile-shot"),
        &[
            &format!("--screenshot={}", shot.display()),
            &format!("--window-size={WIDTH},{HEIGHT}"),
        ],
        &page,
    );
    let img = decode(&shot);
    assert_eq!((img.w, img.h), (WIDTH as usize, HEIGHT as usize));
    if let Some(out) = std::env::var_os("DBSWEEP_SCREENSHOT_OUT") {
        let out = PathBuf::from(out);
        std::fs::copy(&shot, &out).unwrap();
        std::fs::copy(&page, out.with_extension("html")).unwrap();
    }
    assert!(img.non_white() > 100_000, "the page looks blank");

    // Charts: found by their frames (long grey horizontal edges), each
    // with its series drawn inside: the first colour on every chart, the
    // second on the three with more than one series.
    let edges = blocks(&img.frame_rows(), 3);
    assert_eq!(edges.len(), 2 * CHARTS, "frame edges {edges:?}");
    let charts: Vec<(usize, usize)> = edges.chunks(2).map(|e| (e[0].1, e[1].0)).collect();
    for (i, &(top, bottom)) in charts.iter().enumerate() {
        assert!(bottom - top > 250, "chart {i} is {top}..{bottom}");
        let blue = img.count_in(hex(plot::PALETTE[0]), top, bottom);
        assert!(blue > 300, "chart {i}: {blue} px of the first series");
        let red = img.count_in(hex(plot::PALETTE[1]), top, bottom);
        if i < CHARTS - 1 {
            assert!(red > 300, "chart {i}: {red} px of the second series");
        } else {
            assert_eq!(red, 0, "the time series has one series");
        }
    }
    // The 4th series (dashed, pink) is drawn on both client charts.
    assert!(img.count_in(hex(plot::PALETTE[3]), charts[0].0, charts[1].1) > 500);

    // Tables: their header shading forms one block per table part, each
    // followed by rows of text.
    // (A band of at least 15 rows: blended grid lines are one or two.)
    let heads: Vec<(usize, usize)> = blocks(&img.rows_with(hex("#f6f8fa"), 200), 1)
        .into_iter()
        .filter(|b| b.1 - b.0 >= 15)
        .collect();
    assert_eq!(heads.len(), TABLES, "table headers {heads:?}");
    for &(_, end) in &heads {
        let text = (end + 5..end + 60)
            .flat_map(|y| &img.rgb[y * img.w..(y + 1) * img.w])
            .filter(|p| p.iter().all(|&v| v < 120))
            .count();
        assert!(text > 200, "no text under the table header at {end}");
    }
    // Best cells are shaded green, and missing cells are hatched grey.
    assert!(img.count(hex("#dafbe1")) > 4 * 500);
    assert!(img.count(hex("#f3f4f6")) > 200);
    // Document order: the throughput table, its chart, later the last table.
    assert!(heads[1].1 < charts[0].0 && charts[3].1 < heads[2].0);

    // The DOM: every chart with its lines, every table with its rows.
    let dom = browse(&browser, &dir.join("profile-dom"), &["--dump-dom"], &page);
    assert_eq!(dom.matches("<svg").count(), CHARTS);
    let series_paths: Vec<&str> = dom
        .split("<path class=\"series\"")
        .skip(1)
        .map(|rest| {
            let s = rest.find(" d=\"").unwrap() + 4;
            &rest[s..s + rest[s..].find('"').unwrap()]
        })
        .collect();
    assert_eq!(series_paths.len(), 4 + 4 + 2 + 1);
    assert!(
        series_paths.iter().all(|d| d.len() > 20),
        "{series_paths:?}"
    );
    assert_eq!(dom.matches("<table>").count(), TABLES);
    assert_eq!(dom.matches("<tr>").count(), BODY_ROWS + TABLES);
    assert_eq!(dom.matches("class=\"marker\"").count(), 38 + 38);
    assert_eq!(dom.matches("<section").count(), 4);
    assert!(dom.contains("stopped: below 20 % of peak"));
}

#[test]
fn run_report_is_written_and_renders() {
    let dir = Dir::new();
    let page = dir.join("run.html");
    let r = dbsweep_in(
        dir.path(),
        &[
            "run",
            "oltp_read_only",
            "--table-size",
            "2000",
            "--threads",
            "2",
            "--time",
            "3",
            "--metrics",
            "off",
            "--report",
            page.to_str().unwrap(),
        ],
    );
    r.ok();
    // Intervals are collected for the report, not printed.
    assert!(!r.stdout.contains("] thds:"), "{}", r.stdout);
    assert!(r.stderr.contains("Report written to"), "{}", r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    // Latency by percentile, throughput and latency over time.
    assert_eq!(html.matches("<svg").count(), 3);
    assert!(html.contains("<th scope=\"row\">point_select</th>"));
    assert!(html.contains("<dt>workload</dt><dd>oltp_read_only</dd>"));
    let ticks = html.matches("class=\"tick x\"").count();
    assert!(ticks >= 9, "{ticks} x ticks");

    let Some(browser) = chromium() else { return };
    let dom = browse(&browser, &dir.join("profile"), &["--dump-dom"], &page);
    assert_eq!(dom.matches("<svg").count(), 3);
    // The over-time charts have a line of ~3 s / 0.1 s points each.
    let over_time = dom
        .split("id=\"chart-throughput-over-time\"")
        .nth(1)
        .unwrap();
    let d = over_time.split("class=\"series\"").nth(1).unwrap();
    let d = &d[d.find(" d=\"").unwrap() + 4..];
    let d = &d[..d.find('"').unwrap()];
    assert!(d.matches('L').count() >= 20, "{d}");
}

/// With the machine and server sampled (the default), the run's report
/// adds their section: its table of figures, CPU and disk over time.
#[test]
fn run_report_shows_the_machine_and_server() {
    let dir = Dir::new();
    let page = dir.join("run.html");
    dbsweep_in(
        dir.path(),
        &[
            "run",
            "oltp_read_only",
            "--table-size",
            "2000",
            "--threads",
            "2",
            "--time",
            "3",
            "--metrics-interval",
            "0.5",
            "--report",
            page.to_str().unwrap(),
        ],
    )
    .ok();
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<svg").count(), 5);
    assert!(html.contains("<h2>Machine and server</h2>"), "no section");
    assert!(html.contains("id=\"chart-cpu-over-time\""));
    assert!(html.contains("<th scope=\"row\">machine CPU busy</th>"));
    assert!(html.contains("SQLite runs in the client"));

    let Some(browser) = chromium() else { return };
    let dom = browse(&browser, &dir.join("profile"), &["--dump-dom"], &page);
    assert_eq!(dom.matches("<svg").count(), 5);
    // Busy, user, system, iowait and the client over ~3 s of 0.5 s samples
    // (no server line: SQLite's work is the client's).
    let cpu = dom.split("id=\"chart-cpu-over-time\"").nth(1).unwrap();
    let cpu = &cpu[..cpu.find("</svg>").unwrap()];
    assert_eq!(cpu.matches("class=\"series\"").count(), 5, "{cpu}");
}

#[test]
fn run_report_into_a_missing_directory_is_refused_before_running() {
    let dir = Dir::new();
    let r = dbsweep_in(
        dir.path(),
        &[
            "run",
            "oltp_read_only",
            "--time",
            "1",
            "--report",
            "no/such/dir/r.html",
        ],
    );
    r.expect_status(2);
    assert!(r.stderr.contains("no/such/dir"), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
}

/// A study's report draws its CPU set's utilisation against clients as
/// stacked areas (user, system, iowait, idle adding up to 100 %), and the
/// browser paints them.
#[test]
fn study_report_draws_cpu_utilisation_by_clients() {
    let dir = Dir::new();
    std::fs::write(
        dir.join("cpu.toml"),
        "name = \"cpu\"\nclients = [1, 2]\n\
         [[workload]]\nname = \"oltp_point_select\"\noptions = { table-size = 1000 }\nwarmup = 0\ntime = 1\n",
    )
    .unwrap();
    dbsweep_in(dir.path(), &["study", "cpu.toml", "--out", "out"]).ok();
    let html = std::fs::read_to_string(dir.join("out/report.html")).unwrap();
    assert!(html.contains("CPU utilisation</text>"), "no CPU chart");
    let chart = html.split("-cpu-utilisation-0\"").nth(1).unwrap();
    let chart = &chart[..chart.find("</svg>").unwrap()];
    assert_eq!(chart.matches("class=\"area\"").count(), 4, "{chart}");
    for layer in ["user", "system", "iowait", "idle"] {
        assert!(
            chart.contains(&format!("data-series=\"{layer}\"")),
            "{layer}"
        );
    }
    // The conclusion says what bounded the peak.
    assert!(html.contains("at its peak ("), "no bound sentence");

    // The chart alone, as the Markdown report writes it, in the browser.
    dbsweep_in(
        dir.path(),
        &["report", "out", "--format", "md", "--out", "md.md"],
    )
    .ok();
    let svg = dir.join("md-oltp-point-select-cpu-utilisation-0.svg");
    assert!(
        svg.is_file(),
        "{:?}",
        std::fs::read_dir(dir.path()).unwrap().collect::<Vec<_>>()
    );
    let Some(browser) = chromium() else { return };
    let shot = dir.join("cpu.png");
    browse(
        &browser,
        &dir.join("profile"),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=740,420",
        ],
        &svg,
    );
    let img = decode(&shot);
    // The areas are their series' colour at 55 % over white; at least one
    // of the layers covers a good part of the plot.
    let blend = |c: &str| hex(c).map(|v| (0.55 * v as f64 + 0.45 * 255.0).round() as u8);
    let painted: usize = (0..4).map(|i| img.count(blend(plot::PALETTE[i]))).sum();
    assert!(painted > 40_000, "{painted} px of stacked areas");
}

#[test]
fn study_report_draws_published_series_dashed_and_labelled() {
    let dir = Dir::new();
    std::fs::write(
        dir.join("paper.csv"),
        "series,clients,metric,value\nOld DB,1,tps,100\nOld DB,2,tps,180\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("ref.toml"),
        "name = \"ref\"\nclients = [1, 2]\n\
         [[target]]\nname = \"lite\"\nurl = \"sqlite://ref.db\"\n\
         [[workload]]\nname = \"oltp_point_select\"\noptions = { table-size = 1000 }\nwarmup = 0\ntime = 1\n\
         [[reference]]\nfile = \"paper.csv\"\nlabel = \"the paper\"\nmap = { \"lite/base\" = \"Old DB\" }\n",
    )
    .unwrap();
    dbsweep_in(dir.path(), &["study", "ref.toml", "--out", "out"]).ok();
    let page = dir.join("out/report.html");
    let Some(browser) = chromium() else { return };
    let dom = browse(&browser, &dir.join("profile"), &["--dump-dom"], &page);
    let chart = dom
        .split("<svg")
        .map(|c| &c[..c.find("</svg>").unwrap_or(c.len())])
        .find(|c| c.contains("shape, each series over its own peak"))
        .expect("the shape chart");
    // The published series: dashed, named as published; ours solid.
    let published = chart
        .split("<path class=\"series reference\" data-series=\"Old DB (published)\"")
        .nth(1)
        .expect("the published series is drawn as a reference");
    assert!(published[..published.find(">").unwrap()].contains("stroke-dasharray=\"5 5\""));
    let ours = chart
        .split("<path class=\"series\" data-series=\"lite/base (here)\"")
        .nth(1)
        .expect("the measured series is drawn");
    assert!(!ours[..ours.find(">").unwrap()].contains("stroke-dasharray"));
    assert!(
        chart.contains(">Old DB (published)</text>"),
        "not in the legend"
    );
}
