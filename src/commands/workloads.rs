//! `dbsweep workloads`: every built-in workload with its options and their
//! defaults.

use std::io::Write;

use crate::workload::{self, options};

pub fn list() -> anyhow::Result<()> {
    let mut out = String::new();
    for w in workload::registry() {
        out.push_str(&format!("{:<24}{}\n", w.name, w.description));
        for name in w.options {
            let s = options::spec(name).expect("declared option");
            let default = if s.states_default() {
                String::new()
            } else if s.default.is_empty() {
                " [\"\"]".to_string()
            } else {
                format!(" [{}]", s.default)
            };
            out.push_str(&format!(
                "    --{:<24} {}{}\n",
                format!("{}=", s.name),
                s.help,
                default
            ));
        }
        out.push('\n');
    }
    out.push_str("Run options (all workloads): --threads --time --events --rounds --warmup --report-interval --percentile --percentiles --max-retries --ignore-errors --grace --json --report --metrics --metrics-interval --rand-type --rand-seed (see `dbsweep run --help`)\n");
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(())
}
