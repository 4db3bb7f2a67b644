//! A point's key: the path-like name (`target=…/variant=…/…/repeat=N`)
//! the results database stores each point under, written and read back
//! exactly, so a resumed study finds the points it already has.

use std::fmt;
use std::str::FromStr;

use super::model::Level;
use crate::server::{format_cpu_list, parse_cpu_list};

/// A point's identity, stable across runs of the same study file. Its
/// string form, e.g.
/// `target=pg/variant=base/cpus=0-1/workload=0:oltp_read_only/clients=64/instances=1/repeat=2`,
/// is what the results database stores; `cpus=all` means not pinned, and
/// `%` and `/` in names are written `%25` and `%2F`. A paced point ends in
/// its level: `…/repeat=1/rate=5000`, `…/rate=50%`, `…/users=1000`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PointKey {
    pub target: String,
    pub variant: String,
    pub cpus: Option<Vec<usize>>,
    /// Position of the workload in the file, then its name.
    pub workload_index: usize,
    pub workload: String,
    pub clients: u32,
    pub instances: u32,
    pub repeat: u32,
    /// [`Level::key`] of a paced point.
    pub level: Option<String>,
}

impl fmt::Display for PointKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cpus = self
            .cpus
            .as_deref()
            .map_or("all".to_string(), format_cpu_list);
        write!(
            f,
            "target={}/variant={}/cpus={cpus}/workload={}:{}/clients={}/instances={}/repeat={}",
            escape(&self.target),
            escape(&self.variant),
            self.workload_index,
            escape(&self.workload),
            self.clients,
            self.instances,
            self.repeat
        )?;
        match &self.level {
            Some(l) => write!(f, "/{l}"),
            None => Ok(()),
        }
    }
}

impl FromStr for PointKey {
    type Err = String;

    /// Parses the string form back; anything else is an error naming it.
    fn from_str(s: &str) -> Result<PointKey, String> {
        let bad = || {
            format!("bad point key '{s}': expected target=…/variant=…/cpus=…/workload=N:NAME/clients=N/instances=N/repeat=N")
        };
        let mut parts: Vec<&str> = s.split('/').collect();
        let level = match parts.len() {
            8 => {
                let l = parts.pop().unwrap();
                Some(Level::from_key(l).ok_or_else(bad)?.key())
            }
            _ => None,
        };
        let names = [
            "target",
            "variant",
            "cpus",
            "workload",
            "clients",
            "instances",
            "repeat",
        ];
        if parts.len() != names.len() {
            return Err(bad());
        }
        let mut values = Vec::new();
        for (part, name) in parts.iter().zip(names) {
            match part.split_once('=') {
                Some((n, v)) if n == name => values.push(v),
                _ => return Err(bad()),
            }
        }
        let num = |v: &str| v.parse::<u32>().map_err(|_| bad());
        let (wi, wname) = values[3].split_once(':').ok_or_else(bad)?;
        Ok(PointKey {
            target: unescape(values[0]).ok_or_else(bad)?,
            variant: unescape(values[1]).ok_or_else(bad)?,
            cpus: match values[2] {
                "all" => None,
                list => Some(parse_cpu_list(list).map_err(|_| bad())?),
            },
            workload_index: wi.parse().map_err(|_| bad())?,
            workload: unescape(wname).ok_or_else(bad)?,
            clients: num(values[4])?,
            instances: num(values[5])?,
            repeat: num(values[6])?,
            level,
        })
    }
}

/// Makes a name safe inside a key segment (see [`PointKey`]).
fn escape(s: &str) -> String {
    s.replace('%', "%25").replace('/', "%2F")
}

/// Reverses [`escape`]; None for a `%` that is not `%25` or `%2F`.
fn unescape(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        match rest.get(i..i + 3) {
            Some("%25") => out.push('%'),
            Some("%2F") => out.push('/'),
            _ => return None,
        }
        rest = &rest[i + 3..];
    }
    out.push_str(rest);
    Some(out)
}
