//! Validation of `[[workload]]`s: the registry, options, run length,
//! client counts.

use std::time::Duration;

use toml::Spanned;

use super::clients;
use super::load::{Loader, R};
use super::locate::suggest;
use super::model::*;
use super::raw::*;
use crate::driver::Dialect;
use crate::driver::ErrorKind;
use crate::driver::ErrorSet;
use crate::rand::dist::DistKind;
use crate::workload::{self, options, OptionValues};

/// Measured time of a workload that gives none of time, events or rounds
/// (the command line's default).
const DEFAULT_TIME: Duration = Duration::from_secs(10);
/// Studies sample intervals every second by default: a sweep's plots and
/// stop rules want to see throughput over time.
const DEFAULT_REPORT_INTERVAL: Duration = Duration::from_secs(1);
/// The command line's default grace.
const DEFAULT_GRACE: Duration = Duration::from_secs(1);

/// What every `[[workload]]` may take from the study as a whole.
struct StudyDefaults<'a> {
    /// The study's `clients`, for a workload that gives none.
    clients: Option<&'a [u32]>,
    /// The study's `repeats`, likewise.
    repeats: Option<&'a Spanned<RawRepeats>>,
    /// The dialects of the study's targets, each once.
    dialects: &'a [Dialect],
    /// A sweep gives the clients: a workload may then give none.
    has_sweep: bool,
}

/// What building a workload tells of it.
struct Built {
    /// Its count per client of its own (Super Smack's rounds).
    default_rounds: Option<u64>,
    /// It brings its own emulated users (TPC-C's terminals).
    own_users: bool,
}

/// When a workload's runs end.
struct RunLength {
    time: Option<Duration>,
    events: Option<u64>,
    rounds: Option<u64>,
}

impl Loader<'_> {
    /// Every `[[workload]]`, with defaults filled in; each is built once per
    /// dialect of the study's targets so the workload's own checks run too.
    pub(super) fn workloads(
        &self,
        raw: &RawStudy,
        targets: &[TargetSpec],
        has_sweep: bool,
    ) -> R<Vec<WorkloadSpec>> {
        if raw.workloads.is_empty() {
            return Err(self.src.error(None, "workload", "the study has no [[workload]]: add at least one, e.g.\n  [[workload]]\n  name = \"oltp_read_only\""));
        }
        let study_clients = match &raw.clients {
            Some(c) => Some(self.clients(c, "clients")?),
            None => None,
        };
        let mut dialects = Vec::new();
        for d in targets.iter().map(|t| t.dialect()) {
            if !dialects.contains(&d) {
                dialects.push(d);
            }
        }
        let study = StudyDefaults {
            clients: study_clients.as_deref(),
            repeats: raw.repeats.as_ref(),
            dialects: &dialects,
            has_sweep,
        };
        raw.workloads
            .iter()
            .enumerate()
            .map(|(i, sw)| self.workload(sw, &format!("workload[{i}]"), &study))
            .collect()
    }

    /// One `[[workload]]` (at `field`), checked in the order of its keys'
    /// dependencies: the registry's name and options, the build, then the
    /// run's clients, length, repeats and pacing.
    fn workload(
        &self,
        sw: &Spanned<RawWorkload>,
        field: &str,
        study: &StudyDefaults,
    ) -> R<WorkloadSpec> {
        let w = sw.get_ref();
        let f = |key: &str| format!("{field}.{key}");
        let name = w.name.get_ref();
        let info = self.registered(w, &f("name"))?;
        let (options, values) = self.options(w, info, field)?;
        let rand_type = self.rand_type(w, &f("rand_type"))?;
        let built = self.build(w, info, &values, rand_type, study.dialects, &f("options"))?;
        // As the command line: users started one after another need
        // users (TPC-C's terminals are its own).
        if let (Some(r), None, false) = (&w.ramp_up, &w.users, built.own_users) {
            return Err(self.src.at(
                r,
                &f("ramp_up"),
                "ramp_up starts emulated users one after another, and this workload has none: add a users axis (users = [100, 1000], or eus = … for DBT-1), or drop ramp_up",
            ));
        }
        let clients = match (&w.clients, study.clients) {
            (Some(c), _) => self.clients(c, &f("clients"))?,
            (None, Some(c)) => c.to_vec(),
            (None, None) if study.has_sweep => Vec::new(),
            (None, None) => return Err(self.src.at(sw, field, "no client counts: set clients = [1, 2, 4] (or an expression such as \"pow2 1..64\") at the top of the study or in this workload")),
        };
        let length = self.run_length(sw, field, built.default_rounds)?;
        let repeats = match (&w.repeats, study.repeats) {
            (Some(r), _) => self.repeats(r, &f("repeats"))?,
            (None, Some(r)) => self.repeats(r, "repeats")?,
            (None, None) => Repeats::fixed(1),
        };
        let instances = match &w.instances {
            Some(n) if *n.get_ref() == 0 => {
                return Err(self
                    .src
                    .at(n, &f("instances"), "0 instances: run at least one"))
            }
            Some(n) => *n.get_ref(),
            None => 1,
        };
        let ignore_errors = match &w.ignore_errors {
            Some(l) => self.error_kinds(l, &f("ignore_errors"))?,
            None => ErrorSet::NONE,
        };
        let pacing = self.pacing(w, field, &clients)?;
        if !pacing.levels.is_empty() && instances > 1 {
            let at = w
                .rates
                .as_ref()
                .map_or_else(|| w.users.as_ref().unwrap().span(), |r| r.span());
            return Err(self.src.error(
                Some(at),
                field,
                "rates and users pace one instance of a workload: give instances = 1",
            ));
        }
        let label = self.label(w, &f("label"))?;
        let client_threads = self.client_threads(w, study.dialects, &f("client_threads"))?;
        let pipeline = self.pipeline(w, study.dialects, &f("pipeline"))?;
        let nodes = self.nodes_spec(w.nodes.as_ref(), w.launcher.as_ref(), &format!("{field}."))?;
        Ok(WorkloadSpec {
            name: name.clone(),
            label,
            options,
            values,
            time: length.time,
            events: length.events,
            rounds: length.rounds,
            warmup: w.warmup.map_or(Duration::ZERO, |d| d.0),
            repeats,
            clients,
            rand_type,
            rand_seed: w.rand_seed.filter(|&s| s != 0),
            report_interval: Some(w.report_interval.map_or(DEFAULT_REPORT_INTERVAL, |d| d.0))
                .filter(|d| !d.is_zero()),
            max_retries: w.max_retries,
            ignore_errors,
            grace: w.grace.map_or(DEFAULT_GRACE, |d| d.0),
            instances,
            reprepare: w.reprepare.unwrap_or_else(|| Reprepare::default_for(name)),
            check: w.check.unwrap_or(false),
            pacing,
            nodes,
            client_threads,
            pipeline,
            profile: w.profile,
        })
    }

    /// `pipeline = K`: at least one statement, on PostgreSQL targets only.
    fn pipeline(&self, w: &RawWorkload, dialects: &[Dialect], field: &str) -> R<Option<usize>> {
        let Some(k) = &w.pipeline else {
            return Ok(None);
        };
        if *k.get_ref() < 1 {
            return Err(self.src.at(
                k,
                field,
                format!(
                    "pipeline = {}: give at least 1 statement in flight (or leave it out)",
                    k.get_ref()
                ),
            ));
        }
        if dialects.iter().any(|d| *d != Dialect::Postgres) {
            return Err(self.src.at(
                k,
                field,
                "pipeline sends statements ahead on PostgreSQL connections only (pgbench's pipeline mode): leave it out, or run the other targets in a study of their own",
            ));
        }
        Ok(Some(*k.get_ref() as usize))
    }

    /// `client_threads = N`: at least one loop, on targets with sockets.
    fn client_threads(
        &self,
        w: &RawWorkload,
        dialects: &[Dialect],
        field: &str,
    ) -> R<Option<usize>> {
        let Some(n) = &w.client_threads else {
            return Ok(None);
        };
        if *n.get_ref() < 1 {
            return Err(self.src.at(
                n,
                field,
                format!("client_threads = {}: give at least one event-loop thread (or leave it out: a thread per client)", n.get_ref()),
            ));
        }
        if dialects.contains(&Dialect::Sqlite) {
            return Err(self.src.at(
                n,
                field,
                "client_threads runs network connections on event loops, and a SQLite target has no socket to wait on: leave client_threads out, or run the SQLite target in a study of its own",
            ));
        }
        Ok(Some(*n.get_ref() as usize))
    }

    /// The built-in workload the name gives, or what it may have meant.
    fn registered(&self, w: &RawWorkload, field: &str) -> R<&'static workload::WorkloadInfo> {
        let name = w.name.get_ref();
        workload::find(name).ok_or_else(|| {
            let names: Vec<&str> = workload::registry().iter().map(|w| w.name).collect();
            let hint = suggest(name, &names, "built-in workloads are");
            self.src.at(
                &w.name,
                field,
                format!("unknown workload '{name}'{hint} (see `dbsweep workloads`)"),
            )
        })
    }

    /// The distribution of the workload's random values (uniform unless
    /// given).
    fn rand_type(&self, w: &RawWorkload, field: &str) -> R<DistKind> {
        match &w.rand_type {
            Some(r) => DistKind::from_name(r.get_ref()).ok_or_else(|| {
                self.src.at(
                    r,
                    field,
                    format!(
                        "unknown distribution '{}': expected one of {}",
                        r.get_ref(),
                        DistKind::ALL.map(|k| k.name()).join(", ")
                    ),
                )
            }),
            None => Ok(DistKind::Uniform),
        }
    }

    /// Builds the workload once per dialect the study's targets speak:
    /// building checks what only the workload knows (e.g. --tables ≥ 1),
    /// and tells what it brings of its own.
    fn build(
        &self,
        w: &RawWorkload,
        info: &workload::WorkloadInfo,
        values: &OptionValues,
        rand_type: DistKind,
        dialects: &[Dialect],
        field: &str,
    ) -> R<Built> {
        let spec_rand = crate::rand::RandConfig {
            kind: rand_type,
            params: Default::default(),
            seed: 1,
        };
        let mut built = Built {
            default_rounds: None,
            own_users: false,
        };
        for &dialect in dialects {
            match (info.build)(info.name, values, dialect, spec_rand) {
                Ok(b) => {
                    built.default_rounds = b.default_rounds();
                    built.own_users = b.default_users().is_some();
                }
                Err(e) => {
                    let at = w.options.as_ref().map_or(w.name.span(), |o| o.span());
                    return Err(self
                        .src
                        .error(Some(at), field, e.to_string().replace("--", "")));
                }
            }
        }
        Ok(built)
    }

    /// When the workload's runs end: its time, events or rounds, with the
    /// defaults filled in; a run with no end is refused.
    fn run_length(
        &self,
        sw: &Spanned<RawWorkload>,
        field: &str,
        default_rounds: Option<u64>,
    ) -> R<RunLength> {
        let w = sw.get_ref();
        let events = w.events.filter(|&e| e > 0);
        // A workload with a count per client of its own (Super Smack's)
        // runs it when the study gives no end.
        let rounds = match default_rounds {
            Some(r) if w.time.is_none() && w.events.is_none() && w.rounds.is_none() => Some(r),
            _ => w.rounds,
        }
        .filter(|&r| r > 0);
        let time = match w.time {
            Some(t) => Some(t.0).filter(|t| !t.is_zero()),
            None if events.is_some() || rounds.is_some() => None,
            None => Some(DEFAULT_TIME),
        };
        if time.is_none() && events.is_none() && rounds.is_none() {
            return Err(self.src.at(
                sw,
                field,
                "the run has no end: give time (seconds, or e.g. \"1m\"), events or rounds",
            ));
        }
        Ok(RunLength {
            time,
            events,
            rounds,
        })
    }

    /// The workload's label in reports: its name unless given.
    fn label(&self, w: &RawWorkload, field: &str) -> R<String> {
        match &w.label {
            Some(l)
                if l.get_ref().trim().is_empty() || l.get_ref().chars().any(char::is_control) =>
            {
                Err(self.src.at(l, field, "a label must be printable text"))
            }
            Some(l) => Ok(l.get_ref().clone()),
            None => Ok(w.name.get_ref().clone()),
        }
    }

    /// The workload's options, validated by the registry exactly as the
    /// command line's are; each problem points at its option.
    pub(super) fn options(
        &self,
        w: &RawWorkload,
        info: &workload::WorkloadInfo,
        field: &str,
    ) -> R<(Vec<(String, String)>, OptionValues)> {
        let field = format!("{field}.options");
        let mut given = Vec::new();
        if let Some(opts) = &w.options {
            for (k, v) in &opts.get_ref().0 {
                let name = k.get_ref();
                if !info.options.contains(&name.as_str()) {
                    let msg = if options::spec(name).is_some() {
                        format!(
                            "option '{name}' does not apply to {}; its options are: {}",
                            info.name,
                            info.options.join(", ")
                        )
                    } else {
                        let hint = suggest(name, info.options, "its options are");
                        format!("unknown option '{name}' for {}{hint}", info.name)
                    };
                    return Err(self.src.at(k, &field, msg));
                }
                if given.iter().any(|(n, _): &(String, String)| n == name) {
                    return Err(self
                        .src
                        .at(k, &field, format!("option '{name}' is given twice")));
                }
                let pair = (name.clone(), v.get_ref().0.clone());
                OptionValues::resolve(info, std::slice::from_ref(&pair))
                    .map_err(|e| self.src.at(v, &field, e.0.replace("'--", "'")))?;
                given.push(pair);
            }
        }
        let values =
            OptionValues::resolve(info, &given).map_err(|e| self.src.error(None, &field, e.0))?;
        Ok((given, values))
    }

    /// A client list: counts ≥ 1 and expressions, merged, sorted, distinct.
    pub(super) fn clients(&self, c: &Spanned<ClientList>, field: &str) -> R<Vec<u32>> {
        let mut counts = Vec::new();
        for (i, (span, term)) in c.get_ref().0.iter().enumerate() {
            let at = span.clone().unwrap_or(c.span());
            let f = if span.is_some() {
                format!("{field}[{i}]")
            } else {
                field.to_string()
            };
            match term {
                ClientTerm::Count(n) => match u32::try_from(*n) {
                    Ok(n) if n > 0 => counts.push(n),
                    _ => {
                        return Err(self.src.error(
                            Some(at),
                            &f,
                            format!("{n} is not a client count: expected an integer ≥ 1"),
                        ))
                    }
                },
                ClientTerm::Expr(e) => {
                    counts.extend(clients::parse(e).map_err(|m| self.src.error(Some(at), &f, m))?)
                }
            }
        }
        clients::normalize(counts).map_err(|m| self.src.at(c, field, m))
    }

    /// `ignore_errors`: `all` or known error kinds.
    pub(super) fn error_kinds(&self, l: &Spanned<NameList>, field: &str) -> R<ErrorSet> {
        let mut set = ErrorSet::NONE;
        for name in &l.get_ref().0 {
            if name == "all" {
                return Ok(ErrorSet::ALL);
            }
            let kind = ErrorKind::from_name(name).ok_or_else(|| {
                self.src.at(
                    l,
                    field,
                    format!(
                        "unknown error kind '{name}': expected all or a list of {}",
                        ErrorKind::ALL.map(|k| k.name()).join(", ")
                    ),
                )
            })?;
            set.insert(kind);
        }
        Ok(set)
    }
}

impl Loader<'_> {
    /// `repeats = N`, or `{ min, max, precision }`: at least one repeat,
    /// `max` not below `min`, a precision above 0.
    pub(super) fn repeats(&self, r: &Spanned<RawRepeats>, field: &str) -> R<Repeats> {
        let count = |n: i64, what: &str| -> R<u32> {
            match u32::try_from(n) {
                Ok(0) | Err(_) => Err(self.src.at(
                    r,
                    field,
                    format!("{what} {n}: each point runs at least once (give 1 or more)"),
                )),
                Ok(n) => Ok(n),
            }
        };
        match r.get_ref() {
            RawRepeats::Count(n) => Ok(Repeats::fixed(count(*n, "repeats =")?)),
            RawRepeats::Adaptive(a) => {
                let max = count(a.max, "max =")?;
                let min = match a.min {
                    Some(m) => count(m, "min =")?,
                    // Two blocks make the first interval.
                    None => 2.min(max),
                };
                if max < min {
                    return Err(self.src.at(
                        r,
                        field,
                        format!("max = {max} is below min = {min}: give max ≥ min (e.g. {{ min = {min}, max = {} }})", min.max(10)),
                    ));
                }
                let p = a.precision.0;
                if p <= 0.0 {
                    return Err(self.src.at(
                        r,
                        field,
                        "a precision of 0 is never reached: give the interval's half-width to stop at, e.g. precision = \"3%\"",
                    ));
                }
                Ok(Repeats {
                    min,
                    max,
                    precision: Some(p),
                })
            }
        }
    }
}
