//! Turns raw command-line values into validated, typed configuration. Every
//! problem becomes a [`UsageError`] that names the option and the fix.

use std::path::Path;
use std::time::Duration;

use crate::driver::{ErrorKind, PsMode, Target};
use crate::engine::{ErrorSet, RunConfig};
use crate::rand::dist::{DistKind, DistParams};
use crate::workload::RandConfig;
use crate::UsageError;

use super::args::{RandArgs, RunArgs};

/// Default measured time when no stop condition is given (sysbench's).
pub const DEFAULT_TIME_S: f64 = 10.0;

/// The target named by `--db` (None: the caller picks the default), with
/// `--db-ps-mode` applied.
pub fn target(db: Option<&str>, ps_mode: &str) -> Result<Option<Target>, UsageError> {
    let mode = match ps_mode {
        "auto" => PsMode::Prepared,
        "disable" => PsMode::Disable,
        other => {
            return Err(UsageError(format!(
                "invalid --db-ps-mode '{other}': expected auto or disable"
            )))
        }
    };
    let mut t = db
        .map(|u| Target::parse(u).map_err(UsageError))
        .transpose()?;
    if let Some(t) = &mut t {
        // A URL's own ps_mode wins unless the option asks for text mode.
        if mode == PsMode::Disable {
            t.set_ps_mode(mode);
        }
    }
    Ok(t)
}

pub fn rand_config(a: &RandArgs) -> Result<RandConfig, UsageError> {
    let kind = DistKind::from_name(&a.rand_type).ok_or_else(|| {
        UsageError(format!(
            "invalid --rand-type '{}': expected one of {}",
            a.rand_type,
            DistKind::ALL.map(|k| k.name()).join(", ")
        ))
    })?;
    let seed = if a.rand_seed == 0 {
        crate::rand::seed_from_time()
    } else {
        a.rand_seed
    };
    let params = DistParams {
        spec_iter: a.rand_spec_iter,
        spec_pct: a.rand_spec_pct,
        spec_res: a.rand_spec_res,
        pareto_h: a.rand_pareto_h,
        zipf_exp: a.rand_zipfian_exp,
    };
    params.validate().map_err(|e| UsageError(e.to_string()))?;
    Ok(RandConfig { kind, params, seed })
}

fn seconds(name: &str, v: f64) -> Result<Duration, UsageError> {
    if !v.is_finite() || v < 0.0 {
        return Err(UsageError(format!(
            "invalid --{name} {v}: expected a number of seconds ≥ 0"
        )));
    }
    Ok(Duration::from_secs_f64(v))
}

pub fn percentiles(list: &str) -> Result<Vec<f64>, UsageError> {
    list.split(',')
        .map(|p| {
            let p = p.trim();
            match p.parse::<f64>() {
                Ok(x) if x > 0.0 && x <= 100.0 => Ok(x),
                _ => Err(UsageError(format!(
                    "invalid percentile '{p}' in --percentiles: expected numbers in (0, 100], e.g. 50,95,99.9"
                ))),
            }
        })
        .collect()
}

pub fn ignore_errors(list: Option<&str>) -> Result<ErrorSet, UsageError> {
    let Some(list) = list else {
        return Ok(ErrorSet::NONE);
    };
    let mut set = ErrorSet::NONE;
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if name == "all" {
            return Ok(ErrorSet::ALL);
        }
        let kind = ErrorKind::from_name(name).ok_or_else(|| {
            UsageError(format!(
                "unknown error kind '{name}' in --ignore-errors: expected all or a list of {}",
                ErrorKind::ALL.map(|k| k.name()).join(", ")
            ))
        })?;
        set.insert(kind);
    }
    Ok(set)
}

/// Where `--json` goes, checked before the run so a bad path fails early.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonOut {
    Stdout,
    File(std::path::PathBuf),
}

pub fn json_out(arg: Option<&str>) -> Result<Option<JsonOut>, UsageError> {
    match arg {
        None => Ok(None),
        Some("-") => Ok(Some(JsonOut::Stdout)),
        Some(p) => {
            let path = Path::new(p);
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if !dir.is_dir() {
                return Err(UsageError(format!(
                    "cannot write --json '{p}': directory '{}' does not exist (create it first)",
                    dir.display()
                )));
            }
            if path.is_dir() {
                return Err(UsageError(format!(
                    "cannot write --json '{p}': it is a directory; name a file"
                )));
            }
            Ok(Some(JsonOut::File(path.to_path_buf())))
        }
    }
}

pub fn run_config(a: &RunArgs, seed: u64) -> Result<RunConfig, UsageError> {
    run_config_for(a, seed, None)
}

/// [`run_config`] for a workload with a count of transactions per client
/// of its own ([`crate::workload::Workload::default_rounds`]): used instead
/// of the default time when none of --time, --events and --rounds is given.
pub fn run_config_for(
    a: &RunArgs,
    seed: u64,
    default_rounds: Option<u64>,
) -> Result<RunConfig, UsageError> {
    let open = a.time.is_none() && a.events.is_none() && a.rounds.is_none();
    let rounds = match default_rounds {
        Some(r) if open => Some(r),
        _ => a.rounds,
    };
    if a.target.threads == 0 {
        return Err(UsageError(
            "invalid --threads 0: expected at least 1 client".into(),
        ));
    }
    let time = match a.time {
        Some(t) => seconds("time", t)?,
        None if a.events.is_some() || rounds.is_some() => Duration::ZERO,
        None => Duration::from_secs_f64(DEFAULT_TIME_S),
    };
    let time = (!time.is_zero()).then_some(time);
    let events = a.events.filter(|&e| e > 0);
    let rounds = rounds.filter(|&r| r > 0);
    if time.is_none() && events.is_none() && rounds.is_none() {
        return Err(UsageError(
            "the run has no end: give --time SECONDS, --events N or --rounds N".into(),
        ));
    }
    if !(a.percentile > 0.0 && a.percentile <= 100.0) {
        return Err(UsageError(format!(
            "invalid --percentile {}: expected a number in (0, 100]",
            a.percentile
        )));
    }
    let interval = seconds("report-interval", a.report_interval)?;
    Ok(RunConfig {
        threads: a.target.threads,
        time,
        events,
        rounds,
        warmup: seconds("warmup", a.warmup)?,
        report_interval: (!interval.is_zero()).then_some(interval),
        interval_percentile: a.percentile,
        max_retries: a.max_retries,
        ignore_errors: ignore_errors(a.ignore_errors.as_deref())?,
        grace: seconds("grace", a.grace)?,
        seed,
        reconnect_every: (a.reconnect > 0).then_some(a.reconnect),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_percentile_lists() {
        assert_eq!(percentiles("50, 99.9").unwrap(), vec![50.0, 99.9]);
        assert!(percentiles("0").is_err());
        assert!(percentiles("101").is_err());
        assert!(percentiles("p95").unwrap_err().0.contains("'p95'"));
    }

    #[test]
    fn parses_error_kind_sets() {
        let s = ignore_errors(Some("duplicate_key,deadlock")).unwrap();
        assert!(s.contains(ErrorKind::DuplicateKey) && s.contains(ErrorKind::Deadlock));
        assert!(!s.contains(ErrorKind::Other));
        assert_eq!(ignore_errors(Some("all")).unwrap(), ErrorSet::ALL);
        assert!(ignore_errors(Some("oops"))
            .unwrap_err()
            .0
            .contains("unknown error kind 'oops'"));
    }

    #[test]
    fn json_path_must_be_writable() {
        assert_eq!(json_out(Some("-")).unwrap(), Some(JsonOut::Stdout));
        assert!(json_out(Some("/no/such/dir/out.json"))
            .unwrap_err()
            .0
            .contains("does not exist"));
    }
}
