//! `dbsweep k8s`'s command line into a [`K8sRequest`]. The run's options
//! are read with `run`'s own definition and resolved by `run`'s own
//! resolution (handed in by `resolve`) into the point the coordinator Pod
//! runs from its ConfigMap: a run that `dbsweep run` would refuse is
//! refused with the same message. What a pod cannot honour — a database
//! only this machine reaches, a file written inside a pod that is gone
//! when the run ends — is refused with the fix, and the password is taken
//! out of `--db`.

use std::net::IpAddr;
use std::path::Path;

use crate::commands::k8s::{K8sRequest, Out, PasswordRef, Resources};
use crate::commands::run::RunRequest;
use crate::commands::JsonOut;
use crate::driver::{Target, TargetKind};
use crate::util::paths::dir_of;
use crate::util::secrets::without_password;
use crate::UsageError;

use super::args::{K8sCommand, RunArgs};

/// Options of `run` that `dbsweep k8s` sets itself in the coordinator's
/// command line (or, for `--shard`, that each worker takes from its pod).
const SET_BY_K8S: &[(&str, &str)] = &[
    (
        "shard",
        "each worker's shard is its pod's JOB_COMPLETION_INDEX, of --nodes",
    ),
    (
        "launcher",
        "the coordinator Pod runs with --launcher external: the Job starts the workers",
    ),
    (
        "listen",
        "the coordinator Pod listens on 0.0.0.0 and --port",
    ),
    (
        "spec",
        "the point is built from the run's options given here (the coordinator Pod runs it with --spec)",
    ),
];

/// The request of `dbsweep k8s`; `resolve_run` is `run`'s resolution.
pub fn request(
    c: &K8sCommand,
    resolve_run: impl FnOnce(&RunArgs) -> Result<RunRequest, UsageError>,
) -> Result<K8sRequest, UsageError> {
    let a = &c.k8s;
    let image = match a.image.as_deref().map(str::trim) {
        None | Some("") => {
            return Err(UsageError(
                "dbsweep k8s needs --image IMAGE: the container image every pod runs, with dbsweep on its PATH (e.g. --image registry.example.com/dbsweep:0.1.0; docs/distributed.md)".into(),
            ))
        }
        Some(i) if i.contains(char::is_whitespace) => {
            return Err(UsageError(format!(
                "invalid --image '{i}': an image reference has no spaces (e.g. registry.example.com/dbsweep:0.1.0)"
            )))
        }
        Some(i) => i.to_string(),
    };
    let run_args = c
        .run
        .as_deref()
        .expect("args::parse_from reads the run of dbsweep k8s");
    for (id, why) in SET_BY_K8S {
        if run_args.given.iter().any(|g| g == id) {
            return Err(UsageError(format!(
                "--{id} cannot be given to dbsweep k8s: {why}; drop it"
            )));
        }
    }
    // `--nodes` is `run`'s own option: the coordinator's command line
    // gives it again, with --launcher external.
    let nodes = match run_args.nodes.nodes {
        None => {
            return Err(UsageError(
                "dbsweep k8s needs --nodes N: the number of worker pods, each running one shard of the run (e.g. --nodes 3)".into(),
            ))
        }
        Some(0) => {
            return Err(UsageError(
                "invalid --nodes 0: give at least 1 worker pod (e.g. --nodes 3)".into(),
            ))
        }
        Some(n) => n,
    };
    // Checked before `run`'s resolution, which would check the path on
    // this machine: the file would be written inside the coordinator's pod.
    if let Some(r) = &run_args.report {
        return Err(UsageError(format!(
            "--report {} would be written inside the coordinator's pod, which is gone when the run ends: drop it and read the report with `kubectl logs` (docs/distributed.md)",
            r.display()
        )));
    }
    if let Some(h) = &run_args.hdr_log {
        return Err(UsageError(format!(
            "--hdr-log {} would be written inside the coordinator's pod, which is gone when the run ends: drop it, or run `dbsweep run --nodes N --hdr-log FILE` where the file stays",
            h.display()
        )));
    }
    if let Some(a) = run_args.prometheus {
        return Err(UsageError(format!(
            "--prometheus {a}: the run's clients are in the worker pods, whose intervals reach the coordinator only when they end; drop it"
        )));
    }
    if let Some(j) = run_args.json.as_deref().filter(|j| *j != "-") {
        return Err(UsageError(format!(
            "--json {j} would be written inside the coordinator's pod, which is gone when the run ends: give --json - to have the record in the coordinator's log"
        )));
    }
    if let Some(dir) = &run_args.nodes.shard_records {
        return Err(UsageError(format!(
            "--shard-records {} would be written inside the coordinator's pod, which is gone when the run ends: drop it",
            dir.display()
        )));
    }
    let run = resolve_run(run_args)?;
    let password = database(run_args, &run)?;
    split(nodes, run_args)?;
    // The point with `--db` without its password: the pods read it from
    // the Secret.
    let raw = run_args
        .target
        .db
        .as_deref()
        .expect("database() checked --db");
    let target = Target::parse_with(&without_password(raw), run_args.target.db_ps_mode)
        .map_err(UsageError)?;
    let spec = run.spec(target).map_err(|e| UsageError(format!("{e:#}")))?;
    Ok(K8sRequest {
        nodes,
        image,
        namespace: name(&a.namespace, "--namespace", 63, false)?,
        port: match a.port {
            0 => {
                return Err(UsageError(
                    "invalid --port 0: give the port the coordinator listens on (e.g. --port 7878)"
                        .into(),
                ))
            }
            p => p,
        },
        workers: resources(a.cpu.as_deref(), a.memory.as_deref(), "--cpu", "--memory")?,
        coordinator: resources(
            a.coordinator_cpu.as_deref(),
            a.coordinator_memory.as_deref(),
            "--coordinator-cpu",
            "--coordinator-memory",
        )?,
        password: PasswordRef {
            secret: name(&a.password_secret, "--password-secret", 253, true)?,
            ..password
        },
        spec,
        json: run.json == Some(JsonOut::Stdout),
        out: out(&a.out)?,
    })
}

/// Checks that the pods can reach `--db`, and says where they take its
/// password from: the variable the engine's own clients read, from the
/// Secret (which must exist when the URL had a password: the user has one).
fn database(a: &RunArgs, run: &RunRequest) -> Result<PasswordRef, UsageError> {
    let (Some(raw), Some(target)) = (a.target.db.as_deref(), run.target.db.as_ref()) else {
        return Err(UsageError(
            "dbsweep k8s needs --db URL: the server every worker pod connects to, as the pods see it (e.g. --db postgres://sbtest@db.bench.svc:5432/sbtest)".into(),
        ));
    };
    let shown = &target.display;
    let (env, addr) = match &target.kind {
        TargetKind::Postgres(addr) => ("PGPASSWORD", addr),
        TargetKind::Mysql(addr) => ("MYSQL_PWD", addr),
        _ => {
            return Err(UsageError(format!(
                "--db {shown}: the worker pods share one database, which a file on one machine cannot be: give a postgres:// or mysql:// URL the pods can reach"
            )))
        }
    };
    if addr.socket.is_some() {
        return Err(UsageError(format!(
            "--db {shown}: a unix socket on this machine cannot be reached from a pod: give the server's host and port as the pods see them"
        )));
    }
    let host = addr.host.as_str();
    if host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
    {
        return Err(UsageError(format!(
            "--db {shown}: {host} is each pod's own loopback, not this machine's server: give the server's address as the pods see it (e.g. a Service's name, db.NAMESPACE.svc)"
        )));
    }
    let options_file = url::Url::parse(raw).is_ok_and(|u| {
        u.query_pairs()
            .any(|(k, _)| k == "defaults-file" || k == "defaults_file")
    });
    if options_file {
        return Err(UsageError(format!(
            "--db {shown}: ?defaults-file names a file on this machine, which the pods cannot read: drop it and put the password in the Secret that --password-secret names (key `password`)"
        )));
    }
    Ok(PasswordRef {
        secret: String::new(),
        env,
        required: without_password(raw) != raw,
    })
}

/// Every worker needs a client of its own, and users enough for its
/// clients (what `run --shard` checks for one shard, for all N).
fn split(nodes: usize, a: &RunArgs) -> Result<(), UsageError> {
    let threads = a.target.threads;
    if threads < nodes {
        return Err(UsageError(format!(
            "--nodes {nodes} needs at least {nodes} clients, one per worker pod: give --threads {nodes} or more, or fewer --nodes"
        )));
    }
    let Some(users) = a.users else { return Ok(()) };
    for i in 0..nodes {
        let shard = crate::engine::Shard::new(i, nodes).expect("i < nodes");
        let (mine, conns) = (shard.range(users).len(), shard.range(threads).len());
        if mine < conns {
            return Err(UsageError(format!(
                "--nodes {nodes}: worker {i} would get {mine} of the {users} users for its {conns} connections; give --users at least --threads ({threads})"
            )));
        }
    }
    Ok(())
}

/// A Kubernetes name: a DNS label (`--namespace`, at most 63 characters)
/// or subdomain (`dots`, a Secret's name).
fn name(v: &str, option: &str, max: usize, dots: bool) -> Result<String, UsageError> {
    let ok_char =
        |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || (dots && c == '.');
    let ends = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let valid = !v.is_empty()
        && v.len() <= max
        && v.chars().all(ok_char)
        && ends(v.chars().next())
        && ends(v.chars().last());
    if !valid {
        return Err(UsageError(format!(
            "invalid {option} '{v}': Kubernetes names are lower-case letters, digits and '-'{} (at most {max}, starting and ending with a letter or digit)",
            if dots { " or '.'" } else { "" }
        )));
    }
    // kubectl reads YAML as YAML 1.1, where these plain words are booleans.
    if ["y", "n", "yes", "no", "on", "off"].contains(&v) {
        return Err(UsageError(format!(
            "invalid {option} '{v}': kubectl reads the word as a boolean (YAML 1.1); choose another name"
        )));
    }
    Ok(v.to_string())
}

/// `--cpu` and `--memory` (or the coordinator's) as requests and limits.
fn resources(
    cpu: Option<&str>,
    memory: Option<&str>,
    cpu_option: &str,
    memory_option: &str,
) -> Result<Resources, UsageError> {
    let mut r = Resources::default();
    for (what, value, option) in [("cpu", cpu, cpu_option), ("memory", memory, memory_option)] {
        let Some(value) = value else { continue };
        let (request, limit) = value.split_once(':').unwrap_or((value, value));
        let (req, lim) = (quantity(option, request)?, quantity(option, limit)?);
        if lim < req {
            return Err(UsageError(format!(
                "invalid {option} {value}: the limit {limit} is below the request {request}, which Kubernetes refuses; give REQUEST:LIMIT with LIMIT ≥ REQUEST"
            )));
        }
        r.requests.insert(what, request.to_string());
        r.limits.insert(what, limit.to_string());
    }
    Ok(r)
}

/// The value of a Kubernetes quantity (`2`, `500m`, `1.5`, `1Gi`, `512M`),
/// to compare a limit with its request.
fn quantity(option: &str, s: &str) -> Result<f64, UsageError> {
    let bad = || {
        UsageError(format!(
            "invalid {option} '{s}': expected a Kubernetes quantity above 0, e.g. 2 or 500m (CPU), 1Gi or 512Mi (memory), or REQUEST:LIMIT"
        ))
    };
    let at = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(at);
    let number: f64 = number.parse().map_err(|_| bad())?;
    let scale = match suffix {
        // Milli as a division below: 500m is exactly 0.5.
        "" | "m" => 1.0,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        _ => return Err(bad()),
    };
    if !(number.is_finite() && number > 0.0) {
        return Err(bad());
    }
    Ok(if suffix == "m" {
        number / 1000.0
    } else {
        number * scale
    })
}

/// `--out`: `-`, or a directory that exists or can be created in one that does.
fn out(p: &Path) -> Result<Out, UsageError> {
    if p.as_os_str() == "-" {
        return Ok(Out::Stdout);
    }
    if p.exists() && !p.is_dir() {
        return Err(UsageError(format!(
            "--out {} is a file: name a directory for the four manifests (created if missing), or - for standard output",
            p.display()
        )));
    }
    let parent = dir_of(p);
    if !p.exists() && !parent.is_dir() {
        return Err(UsageError(format!(
            "cannot write --out {}: directory '{}' does not exist (create it, or fix the path)",
            p.display(),
            parent.display()
        )));
    }
    Ok(Out::Dir(p.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_compare_across_units() {
        assert_eq!(quantity("--cpu", "500m").unwrap(), 0.5);
        assert_eq!(quantity("--memory", "1Gi").unwrap(), 1024f64.powi(3));
        assert!(quantity("--memory", "1Gi").unwrap() > quantity("--memory", "1G").unwrap());
        for bad in ["", "0", "two", "1GB", "-1", "1.2.3", "m"] {
            let e = quantity("--cpu", bad).unwrap_err().0;
            assert!(e.contains("--cpu") && e.contains("500m"), "{bad}: {e}");
        }
    }

    #[test]
    fn one_value_sets_request_and_limit() {
        let r = resources(Some("2"), Some("512Mi:1Gi"), "--cpu", "--memory").unwrap();
        assert_eq!(r.requests["cpu"], "2");
        assert_eq!(r.limits["cpu"], "2");
        assert_eq!(r.requests["memory"], "512Mi");
        assert_eq!(r.limits["memory"], "1Gi");
        let e = resources(Some("1:500m"), None, "--cpu", "--memory")
            .unwrap_err()
            .0;
        assert!(e.contains("below the request"), "{e}");
        assert!(resources(None, None, "--cpu", "--memory")
            .unwrap()
            .requests
            .is_empty());
    }

    #[test]
    fn names_are_kubernetes_names() {
        assert_eq!(
            name("bench-1", "--namespace", 63, false).unwrap(),
            "bench-1"
        );
        assert!(name("db.secret", "--password-secret", 253, true).is_ok());
        let long = "a".repeat(64);
        for bad in ["", "Bench", "-a", "a-", "a.b", "no", long.as_str()] {
            let e = name(bad, "--namespace", 63, false).unwrap_err().0;
            assert!(e.contains("--namespace"), "{bad}: {e}");
        }
    }
}
