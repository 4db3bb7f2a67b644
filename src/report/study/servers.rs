//! The servers of a study, by target: the product and release each
//! target's runs reported (`mariadb 10.2.11`, `postgres 9.6.24`), the
//! `--version` lines of the programs that served it (a managed target's,
//! kept by the study runner), and the name the report gives the target.
//!
//! A study that sets builds of one server side by side (two targets of
//! one product, or a target named after its version, `mariadb-10.2`)
//! names every server target by the release that ran, so each table,
//! legend, ranking and sentence tells the builds apart by the version the
//! server reported — not by what the study file asked for, which a newer
//! build in the cache would silently change. Other studies keep the names
//! their files give; their header lists the releases all the same.

use serde::Serialize;

use crate::store::StoredPoint;

/// One target's server, as the report names and describes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TargetServer {
    /// The target's name in the study.
    pub target: String,
    /// What the report calls it: its name, or its release when the study
    /// compares releases (`mariadb 10.2.11`, `xtradb (mariadb 10.1.23)`).
    pub label: String,
    /// The product and release its runs reported (`mariadb 10.2.11`);
    /// None when no run reported one.
    pub release: Option<String>,
    /// The version as the server reported it over the connection (its
    /// first run's), e.g. `10.2.11-MariaDB`.
    pub server_version: Option<String>,
    /// The `--version` lines of the programs that served it (a managed
    /// target's: `mysqld Ver 10.2.11-MariaDB for Linux on x86_64`), in the
    /// order they were first seen; empty for a target dbsweep did not start.
    pub version_lines: Vec<String>,
}

/// The servers of a study's `points` (every target, in the order they first
/// appear) with the `--version` lines the store kept: (target, line).
pub fn of<'a>(
    points: impl IntoIterator<Item = &'a StoredPoint>,
    builds: &[(String, String)],
) -> Vec<TargetServer> {
    // (target, kind, versions the runs reported, in order)
    let mut seen: Vec<(String, String, Vec<String>)> = Vec::new();
    for p in points {
        let i = match seen.iter().position(|s| s.0 == p.row.target) {
            Some(i) => i,
            None => {
                seen.push((p.row.target.clone(), p.row.target_kind.clone(), Vec::new()));
                seen.len() - 1
            }
        };
        if let Some(v) = p.metrics.as_ref().map(|m| &m.server_version) {
            if !v.is_empty() && !seen[i].2.contains(v) {
                seen[i].2.push(v.clone());
            }
        }
    }
    // A control's second measurement ("pg (again)") is its target's
    // server: named after it, and kept out of the naming of the others.
    let (twins, own): (Vec<_>, Vec<_>) = seen.into_iter().partition(|s| s.0.ends_with(AGAIN));
    let mut servers = named(&own, builds);
    for (target, _, versions) in twins {
        let original = target.trim_end_matches(AGAIN);
        let first = servers.iter().find(|s| s.target == original).cloned();
        servers.push(TargetServer {
            label: format!(
                "{}{AGAIN}",
                first.as_ref().map_or(original, |s| s.label.as_str())
            ),
            release: first.as_ref().and_then(|s| s.release.clone()),
            server_version: versions.first().cloned(),
            version_lines: Vec::new(),
            target,
        });
    }
    servers
}

pub use crate::study::AGAIN;

/// Each target of `seen` — (target, kind, the versions its runs reported)
/// — named, with its `--version` lines from `builds`.
fn named(seen: &[(String, String, Vec<String>)], builds: &[(String, String)]) -> Vec<TargetServer> {
    let releases: Vec<Option<(String, String)>> = seen
        .iter()
        .map(|(_, kind, versions)| release_of(kind, versions))
        .collect();
    // Builds of one server side by side: two server targets of a product.
    let products: Vec<&str> = releases
        .iter()
        .flatten()
        .map(|(product, _)| product.as_str())
        .collect();
    let compares = products
        .iter()
        .enumerate()
        .any(|(i, p)| products[i + 1..].contains(p));
    let mut servers: Vec<TargetServer> = seen
        .iter()
        .zip(releases)
        .map(|((target, kind, versions), rel)| {
            let release = rel.as_ref().map(|(p, n)| format!("{p} {n}"));
            let label = match &rel {
                Some((product, number)) => {
                    let plain = is_plain_name(target, kind, product, number);
                    let versioned = plain && target != kind && target != product;
                    match (compares || versioned, plain) {
                        (false, _) => target.clone(),
                        (true, true) => format!("{product} {number}"),
                        (true, false) => format!("{target} ({product} {number})"),
                    }
                }
                None => target.clone(),
            };
            TargetServer {
                target: target.clone(),
                label,
                release,
                server_version: versions.first().cloned(),
                version_lines: builds
                    .iter()
                    .filter(|(t, _)| t == target)
                    .map(|(_, l)| l.clone())
                    .collect(),
            }
        })
        .collect();
    // Two targets on one release (the system's build and the registry's)
    // keep their names beside it, so no two series share a label.
    let labels: Vec<String> = servers.iter().map(|s| s.label.clone()).collect();
    for s in &mut servers {
        if labels.iter().filter(|l| **l == s.label).count() > 1 {
            if let Some(release) = &s.release {
                s.label = format!("{} ({release})", s.target);
            }
        }
    }
    servers
}

/// The product and release number of a server target's reported
/// versions (several numbers, from a study resumed on another build,
/// joined with `/`); None for SQLite (embedded in dbsweep: not a build a
/// study compares) and for runs that reported no number.
fn release_of(kind: &str, versions: &[String]) -> Option<(String, String)> {
    if matches!(kind, "sqlite" | "fake") {
        return None;
    }
    let mut product: Option<&str> = None;
    let mut numbers: Vec<String> = Vec::new();
    for v in versions {
        let lower = v.to_ascii_lowercase();
        if product.is_none() {
            product = Some(if lower.contains("mariadb") {
                "mariadb"
            } else if lower.contains("postgres") {
                "postgres"
            } else {
                kind
            });
        }
        if let Some(n) = number(v) {
            if !numbers.contains(&n) {
                numbers.push(n);
            }
        }
    }
    Some((
        product?.to_string(),
        Some(numbers.join("/")).filter(|n| !n.is_empty())?,
    ))
}

/// The release number in a reported version: `10.2.11-MariaDB` → 10.2.11,
/// `PostgreSQL 9.6.24 on x86_64…` → 9.6.24, `15.10 (Debian 15.10-1)` →
/// 15.10. MariaDB's `5.5.5-` prefix (what old MySQL clients are shown) is
/// not its release.
fn number(version: &str) -> Option<String> {
    let version = version.strip_prefix("5.5.5-").unwrap_or(version);
    let word = version
        .split_whitespace()
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()) && w.contains('.'))?;
    let n: String = word
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    Some(n.trim_end_matches('.').to_string()).filter(|n| !n.is_empty())
}

/// Whether `target` says no more than its server: the product's or the
/// kind's name alone, or with a version its release has
/// (`mariadb-10.2` for 10.2.11, the default name of a `version` target).
fn is_plain_name(target: &str, kind: &str, product: &str, number: &str) -> bool {
    if target == kind || target == product {
        return true;
    }
    [kind, product].iter().any(|name| {
        target
            .strip_prefix(name)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|v| {
                number
                    .split('/')
                    .all(|n| n == v || n.starts_with(&format!("{v}.")))
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(name: &str, kind: &str, version: &str) -> (String, String, Vec<String>) {
        (name.into(), kind.into(), vec![version.to_string()])
    }

    fn labels(seen: &[(String, String, Vec<String>)]) -> Vec<String> {
        named(seen, &[]).into_iter().map(|s| s.label).collect()
    }

    #[test]
    fn releases_name_targets_where_builds_are_compared() {
        // Two MariaDBs: each by its release, a name of its own kept.
        let seen = [
            target("mariadb-10.2", "mariadb", "10.2.11-MariaDB"),
            target("xtradb", "mariadb", "10.1.23-MariaDB"),
            target("mariadb", "mariadb", "10.11.6-MariaDB-0+deb12u1"),
            target("pg", "postgres", "PostgreSQL 16.3"),
            target("sqlite", "sqlite", "SQLite 3.46.0"),
        ];
        assert_eq!(
            labels(&seen),
            [
                "mariadb 10.2.11",
                "xtradb (mariadb 10.1.23)",
                "mariadb 10.11.6",
                "pg (postgres 16.3)",
                "sqlite"
            ]
        );
        // One of each: the study's names, but a target named after its
        // version (the default name) says the release that ran.
        let seen = [
            target("mariadb", "mariadb", "10.11.6-MariaDB"),
            target("postgres-9.6", "postgres", "PostgreSQL 9.6.24"),
        ];
        assert_eq!(labels(&seen), ["mariadb", "postgres 9.6.24"]);
        // The system's build and the registry's on one release: told
        // apart by their names.
        let seen = [
            target("mariadb", "mariadb", "10.11.5-MariaDB"),
            target("mariadb-10.11", "mariadb", "10.11.5-MariaDB"),
        ];
        assert_eq!(
            labels(&seen),
            [
                "mariadb (mariadb 10.11.5)",
                "mariadb-10.11 (mariadb 10.11.5)"
            ]
        );
        // The --version lines go to their target; no run, no release.
        let builds = [("pg".to_string(), "postgres (PostgreSQL) 16.3".to_string())];
        let s = named(&[target("pg", "postgres", "PostgreSQL 16.3")], &builds);
        assert_eq!(s[0].version_lines, ["postgres (PostgreSQL) 16.3"]);
        let s = named(&[("pg".into(), "postgres".into(), Vec::new())], &builds);
        assert_eq!((s[0].release.as_deref(), s[0].label.as_str()), (None, "pg"));
    }

    #[test]
    fn release_numbers_as_servers_report_them() {
        assert_eq!(number("10.2.11-MariaDB").as_deref(), Some("10.2.11"));
        assert_eq!(
            number("10.11.6-MariaDB-0+deb12u1").as_deref(),
            Some("10.11.6")
        );
        assert_eq!(number("5.5.5-10.11.6-MariaDB").as_deref(), Some("10.11.6"));
        assert_eq!(
            number("PostgreSQL 9.6.24 on x86_64-pc-linux-gnu").as_deref(),
            Some("9.6.24")
        );
        assert_eq!(
            number("15.10 (Debian 15.10-0+deb12u1)").as_deref(),
            Some("15.10")
        );
        assert_eq!(number("unknown"), None);
        let v = |s: &str| vec![s.to_string()];
        assert_eq!(
            release_of("mysql", &v("10.11.6-MariaDB")),
            Some(("mariadb".into(), "10.11.6".into()))
        );
        assert_eq!(
            release_of("postgres", &v("PostgreSQL 16.3")),
            Some(("postgres".into(), "16.3".into()))
        );
        assert_eq!(
            release_of("mysql", &v("8.0.36")),
            Some(("mysql".into(), "8.0.36".into()))
        );
        assert_eq!(release_of("sqlite", &v("SQLite 3.46.0")), None);
        assert_eq!(release_of("mariadb", &[]), None);
        let two = ["10.2.11-MariaDB".to_string(), "10.2.12-MariaDB".to_string()];
        assert_eq!(
            release_of("mariadb", &two),
            Some(("mariadb".into(), "10.2.11/10.2.12".into()))
        );
    }

    #[test]
    fn names_that_say_no_more_than_the_server() {
        assert!(is_plain_name("mariadb", "mariadb", "mariadb", "10.11.6"));
        assert!(is_plain_name(
            "mariadb-10.2",
            "mariadb",
            "mariadb",
            "10.2.11"
        ));
        assert!(is_plain_name(
            "postgres-9.6",
            "postgres",
            "postgres",
            "9.6.24"
        ));
        assert!(is_plain_name(
            "postgres-15",
            "postgres",
            "postgres",
            "15.10"
        ));
        // The version asked for is not the one that ran.
        assert!(!is_plain_name(
            "mariadb-10.2",
            "mariadb",
            "mariadb",
            "10.21.1"
        ));
        assert!(!is_plain_name(
            "postgres-15",
            "postgres",
            "postgres",
            "9.6.24"
        ));
        assert!(!is_plain_name("xtradb", "mariadb", "mariadb", "10.1.23"));
    }
}
