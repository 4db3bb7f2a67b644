//! `dbsweep k8s`: the manifests' structure, read back from the YAML it
//! writes (the workers' Indexed Job, command line and shard index, the
//! headless Service, the point in a ConfigMap equal to the run asked for,
//! the coordinator Pod's and the workers' command lines run here against
//! the fake driver, no password anywhere); bad input refused with one line and exit status 2;
//! and the manifests validated by `kubernetes-validate --strict` (PyPI)
//! against the oldest and the newest Kubernetes schema it bundles. No
//! cluster runs here: what a cluster would add is in docs/distributed.md.

mod util;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use dbsweep::cli;
use dbsweep::commands::k8s::{self, K8sRequest};
use dbsweep::commands::Request;
use serde_json::{json, Value};
use util::{dbsweep_env, Dir, Run};

const PASSWORD: &str = "s3cret-Pa55";

/// A run that exercises many kinds of option: positional, aliases, a
/// workload option given bare, values with colons and commas, a password.
fn run_options() -> Vec<String> {
    let db = format!("postgres://sbtest:{PASSWORD}@db.bench.svc:5432/sbtest");
    [
        "oltp_read_only",
        "--db",
        &db,
        "--threads",
        "96",
        "--time",
        "60",
        "--warmup-time",
        "5",
        "--rand-seed",
        "7",
        "--table-size",
        "1000",
        "--skip-trx",
        "--think-time",
        "exp:7.2s:cap=72s",
        "--eus",
        "300",
        "--percentiles",
        "50,99",
        "--metrics",
        "off",
        "--json",
        "-",
    ]
    .map(String::from)
    .to_vec()
}

const K8S_OPTIONS: &[&str] = &[
    "--nodes",
    "3",
    "--image",
    "registry.example.com/dbsweep:0.1.0",
    "--namespace",
    "bench",
    "--cpu",
    "2",
    "--memory",
    "512Mi:1Gi",
    "--coordinator-cpu",
    "500m",
];

/// The request of `dbsweep <verb> <options>`, resolved in process.
fn resolve(verb: &str, options: &[String]) -> Request {
    let mut argv = vec!["dbsweep".to_string(), verb.to_string()];
    argv.extend(options.iter().cloned());
    cli::request(cli::args::parse_from(argv)).unwrap_or_else(|e| panic!("{e}"))
}

/// The request of `dbsweep k8s RUN… K8S_OPTIONS`.
fn k8s_of(run: &[&str]) -> K8sRequest {
    let mut options: Vec<String> = run.iter().map(|s| s.to_string()).collect();
    options.extend(K8S_OPTIONS.iter().map(|s| s.to_string()));
    match resolve("k8s", &options) {
        Request::K8s(k) => *k,
        _ => panic!("not a k8s request"),
    }
}

fn k8s_request(extra: &[&str]) -> K8sRequest {
    let mut options = run_options();
    options.extend(K8S_OPTIONS.iter().chain(extra).map(|s| s.to_string()));
    match resolve("k8s", &options) {
        Request::K8s(k) => *k,
        _ => panic!("not a k8s request"),
    }
}

/// The point's ConfigMap, the service, the coordinator and the job, read
/// back from their YAML.
fn documents(r: &K8sRequest) -> (Vec<String>, [Value; 4]) {
    let docs = k8s::manifests(r).expect("JSON").documents().expect("YAML");
    let parse = |i: usize| -> Value { yaml_serde::from_str(&docs[i].1).expect("YAML reads back") };
    let values = [parse(0), parse(1), parse(2), parse(3)];
    (docs.into_iter().map(|(_, y)| y).collect(), values)
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("a list")
        .iter()
        .map(|s| s.as_str().expect("a string").to_string())
        .collect()
}

#[test]
fn workers_are_an_indexed_job_of_n_pods_each_dialling_the_coordinator() {
    let (_, [_, _, _, job]) = documents(&k8s_request(&[]));
    assert_eq!(job["apiVersion"], "batch/v1");
    assert_eq!(job["kind"], "Job");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(spec["completions"], 3);
    assert_eq!(spec["parallelism"], 3);
    assert_eq!(spec["backoffLimit"], 0);
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    let c = &pod["containers"][0];
    assert_eq!(c["image"], "registry.example.com/dbsweep:0.1.0");
    assert_eq!(strings(&c["command"]), ["dbsweep"]);
    assert_eq!(
        strings(&c["args"]),
        [
            "worker",
            "--coordinator",
            "dbsweep-coordinator.bench.svc:7878"
        ]
    );
    let index = c["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "JOB_COMPLETION_INDEX");
    assert_eq!(
        index.expect("the shard index variable")["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    );
    // Quantities are strings: a bare 2 would be an integer.
    assert_eq!(
        c["resources"]["requests"],
        json!({"cpu": "2", "memory": "512Mi"})
    );
    assert_eq!(
        c["resources"]["limits"],
        json!({"cpu": "2", "memory": "1Gi"})
    );
    let term =
        &pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0];
    assert_eq!(
        term["podAffinityTerm"]["topologyKey"],
        "kubernetes.io/hostname"
    );
    assert_eq!(
        term["podAffinityTerm"]["labelSelector"]["matchLabels"],
        spec["template"]["metadata"]["labels"]
    );
}

#[test]
fn the_headless_service_names_the_coordinator_pod() {
    let (_, [_, service, pod, _]) = documents(&k8s_request(&["--port", "9000"]));
    assert_eq!(service["spec"]["clusterIP"], "None");
    assert_eq!(service["metadata"]["name"], "dbsweep-coordinator");
    assert_eq!(service["metadata"]["namespace"], "bench");
    // The selector picks the coordinator's pod by its labels.
    let labels = pod["metadata"]["labels"].as_object().unwrap();
    for (k, v) in service["spec"]["selector"].as_object().unwrap() {
        assert_eq!(labels.get(k), Some(v), "selector {k}");
    }
    assert_eq!(service["spec"]["ports"][0]["port"], 9000);
    let c = &pod["spec"]["containers"][0];
    assert_eq!(c["ports"][0]["containerPort"], 9000);
    assert_eq!(pod["spec"]["restartPolicy"], "Never");
    assert_eq!(
        c["resources"],
        json!({"requests": {"cpu": "500m"}, "limits": {"cpu": "500m"}})
    );
}

/// The point the coordinator Pod runs, from the ConfigMap's file, written
/// where `dir` says.
fn point_file(configmap: &Value, dir: &Dir) -> PathBuf {
    let file = dir.join("point.json");
    let text = configmap["data"]["point.json"]
        .as_str()
        .expect("point.json");
    std::fs::write(&file, text).unwrap();
    file
}

#[test]
fn the_coordinators_run_is_the_run_asked_for() {
    let r = k8s_request(&[]);
    let (_, [configmap, _, pod, _]) = documents(&r);
    assert_eq!(configmap["kind"], "ConfigMap");
    assert_eq!(configmap["metadata"]["name"], "dbsweep-point");
    let args = strings(&pod["spec"]["containers"][0]["args"]);
    assert_eq!(
        args,
        [
            "run",
            "--spec",
            "/etc/dbsweep/point.json",
            "--json",
            "-",
            "--nodes",
            "3",
            "--launcher",
            "external",
            "--listen",
            "0.0.0.0:7878"
        ]
    );
    // The pod sees the ConfigMap's file where --spec names it.
    let mount = &pod["spec"]["containers"][0]["volumeMounts"][0];
    assert_eq!(mount["mountPath"], "/etc/dbsweep");
    assert_eq!(mount["readOnly"], true);
    let volume = &pod["spec"]["volumes"][0];
    assert_eq!(volume["name"], mount["name"]);
    assert_eq!(volume["configMap"]["name"], "dbsweep-point");
    // Resolved as the pod resolves it (`run --spec FILE`, without --nodes,
    // which only adds the coordination), the point is the run asked for.
    let dir = Dir::new();
    let file = point_file(&configmap, &dir);
    let spec = ["--spec".to_string(), file.to_str().unwrap().to_string()];
    let spec = [&spec[..], &["--json".into(), "-".into()]].concat();
    let (Request::Run(mine), Request::Run(asked)) =
        (resolve("run", &spec), resolve("run", &run_options()))
    else {
        panic!("not run requests")
    };
    assert_eq!(format!("{:?}", mine.config), format!("{:?}", asked.config));
    assert_eq!(mine.target.workload, asked.target.workload);
    assert_eq!(mine.target.options, asked.target.options);
    assert_eq!(mine.target.threads, 96);
    assert_eq!(
        format!("{:?}", mine.target.rand),
        format!("{:?}", asked.target.rand)
    );
    assert_eq!(mine.percentiles, asked.percentiles);
    assert_eq!((mine.metrics, mine.check), (asked.metrics, asked.check));
    assert_eq!(mine.json, asked.json);
    let (m, a) = (mine.target.db.unwrap(), asked.target.db.unwrap());
    assert_eq!(m.display, a.display.replace(":***@", "@"));
    assert_eq!(m.display, "postgres://sbtest@db.bench.svc:5432/sbtest");
}

#[test]
fn a_seed_from_the_clock_and_a_workloads_own_rounds_are_fixed_in_the_point() {
    // No --rand-seed, no stop condition, a Super Smack workload: the pod
    // must run the seed and the rounds `dbsweep run` would have chosen
    // here, the same on every `kubectl apply`.
    let r = k8s_of(&[
        "smack_select",
        "--db",
        "mysql://sbtest@maria.bench.svc/sbtest",
        "--threads",
        "4",
    ]);
    assert_ne!(r.spec.rand.seed, 0);
    assert_eq!(r.spec.config.seed, r.spec.rand.seed);
    assert_eq!(r.spec.config.time, None);
    assert_eq!(r.spec.config.rounds, Some(1000), "smack_select's own");
    let (_, [_, _, pod, _]) = documents(&r);
    assert!(!strings(&pod["spec"]["containers"][0]["args"]).contains(&"--json".to_string()));
}

#[test]
fn the_pods_command_runs_the_point_with_workers_joining_by_index() {
    // The coordinator Pod's command line and the workers' as the manifests
    // give them, run here: the ConfigMap's point with its database swapped
    // for the fake driver (no cluster, no server), on a local port.
    let r = k8s_of(&[
        "oltp_point_select",
        "--db",
        "postgres://sbtest@db.bench.svc/sbtest",
        "--threads",
        "4",
        "--rounds",
        "50",
        "--metrics",
        "off",
        "--json",
        "-",
    ]);
    let (_, [configmap, _, pod, job]) = documents(&r);
    let dir = Dir::new();
    let mut point: Value =
        serde_json::from_str(configmap["data"]["point.json"].as_str().unwrap()).unwrap();
    let fake = dbsweep::driver::Target::parse("fake://?latency=200us").unwrap();
    point["target"] = serde_json::to_value(&fake).unwrap();
    let file = dir.join("point.json");
    std::fs::write(&file, serde_json::to_string(&point).unwrap()).unwrap();
    let listen = format!("127.0.0.1:{}", util::servers::free_port());
    let args: Vec<String> = strings(&pod["spec"]["containers"][0]["args"])
        .into_iter()
        .map(|a| match a.as_str() {
            "/etc/dbsweep/point.json" => file.to_str().unwrap().to_string(),
            "0.0.0.0:7878" => listen.clone(),
            _ => a,
        })
        .collect();
    let coordinator = util::nodes::spawn(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    let worker_args: Vec<String> =
        strings(&job["spec"]["template"]["spec"]["containers"][0]["args"])
            .into_iter()
            .map(|a| {
                if a.ends_with(".svc:7878") {
                    listen.clone()
                } else {
                    a
                }
            })
            .collect();
    let worker_args: Vec<&str> = worker_args.iter().map(String::as_str).collect();
    let workers: Vec<_> = ["2", "0", "1"]
        .iter()
        .map(|i| util::nodes::spawn(&worker_args, &[("JOB_COMPLETION_INDEX", i)]))
        .collect();
    let run = util::nodes::finish(coordinator);
    run.expect_status(0);
    for w in workers {
        util::nodes::finish(w).expect_status(0);
    }
    // --json -: the merged record after the report, in the pod's log.
    let record: Value = serde_json::from_str(&run.stdout[run.stdout.find("\n{").unwrap()..])
        .expect("the record after the report");
    util::nodes::check_merged(&record, 3, "external");
    assert_eq!(
        record["result"]["transactions"], 200,
        "4 clients × 50 rounds"
    );
}

#[test]
fn no_password_is_written_the_pods_read_it_from_the_secret() {
    let r = k8s_request(&["--password-secret", "bench-db"]);
    let (texts, [_, _, pod, job]) = documents(&r);
    for t in &texts {
        assert!(!t.contains(PASSWORD), "the password is in:\n{t}");
    }
    for c in [
        &pod["spec"]["containers"][0],
        &job["spec"]["template"]["spec"]["containers"][0],
    ] {
        let env = c["env"].as_array().unwrap();
        let pw = env
            .iter()
            .find(|e| e["name"] == "PGPASSWORD")
            .expect("PGPASSWORD");
        assert_eq!(
            pw["valueFrom"]["secretKeyRef"],
            json!({"name": "bench-db", "key": "password", "optional": false})
        );
        assert!(
            env.iter().all(|e| e.get("value").is_none()),
            "a literal value: {env:?}"
        );
    }
    // MySQL, no password in the URL: MYSQL_PWD, from a Secret that may be absent.
    let r = k8s_of(&[
        "oltp_point_select",
        "--db",
        "mysql://sbtest@maria.bench.svc/sbtest",
        "--threads",
        "4",
    ]);
    let (_, [_, _, pod, _]) = documents(&r);
    let env = &pod["spec"]["containers"][0]["env"][0];
    assert_eq!(env["name"], "MYSQL_PWD");
    assert_eq!(env["valueFrom"]["secretKeyRef"]["optional"], true);
}

/// Runs `dbsweep k8s` with `args`, no password variables around.
fn k8s_cli(args: &[&str]) -> Run {
    let mut all = vec!["k8s"];
    all.extend_from_slice(args);
    dbsweep_env(&all, &[])
}

#[test]
fn bad_input_is_one_line_naming_the_fix_and_exit_2() {
    // Command lines as words; DB and IMAGE stand for a good --db and --image.
    let ok = "oltp_read_only --db DB --threads 4 --nodes 2 --image IMAGE";
    let cases: &[(String, &[&str])] = &[
        (
            ok.replace("--nodes 2", "--nodes 0"),
            &["--nodes 0", "at least 1"],
        ),
        (ok.replace("--nodes 2 ", ""), &["--nodes N"]),
        (ok.replace(" --image IMAGE", ""), &["--image IMAGE"]),
        (ok.replace("--db DB ", ""), &["--db URL"]),
        (ok.replace("DB", "sqlite://x.db"), &["postgres://"]),
        (ok.replace("DB", "postgres://u@127.0.0.1/db"), &["loopback"]),
        (
            ok.replace("--threads 4 --nodes 2", "--threads 2 --nodes 3"),
            &["--threads 3"],
        ),
        (format!("{ok} --cpu 2:1"), &["--cpu", "below the request"]),
        (format!("{ok} --memory 1GB"), &["--memory", "1Gi"]),
        (format!("{ok} --namespace Bench"), &["--namespace"]),
        (
            format!("{ok} --shard 0/2"),
            &["--shard", "JOB_COMPLETION_INDEX"],
        ),
        (format!("{ok} --report r.html"), &["kubectl logs"]),
        (format!("{ok} --json out.json"), &["--json -"]),
        (format!("{ok} --shard-records recs"), &["--shard-records"]),
        (
            format!("{ok} --spec p.json"),
            &["--spec", "options given here"],
        ),
        (
            ok.replace("oltp_read_only", "oltp_read_only --table-size=x"),
            &["table-size"],
        ),
        (format!("{ok} --time=-1"), &["--time"]),
    ];
    let cases = cases.iter().map(|(line, says)| {
        let args: Vec<String> = line
            .split_whitespace()
            .map(|w| match w {
                "DB" => "postgres://sbtest@db.bench.svc/sbtest".to_string(),
                "IMAGE" => "registry.example.com/dbsweep:0.1.0".to_string(),
                w => w.to_string(),
            })
            .collect();
        (args, *says)
    });
    for (args, says) in cases {
        let r = k8s_cli(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(r.status, 2, "{args:?}: exit {}\n{}", r.status, r.stderr);
        assert!(r.stdout.is_empty(), "{args:?} printed: {}", r.stdout);
        let lines: Vec<&str> = r.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{args:?}: not one line:\n{}", r.stderr);
        for s in says {
            assert!(lines[0].contains(s), "{args:?}: '{s}' not in: {}", lines[0]);
        }
    }
    let help = k8s_cli(&["--help"]);
    assert_eq!(help.status, 0);
    assert!(help.stdout.contains("Examples:") && help.stdout.contains("--image <IMAGE>"));
    // Its own description, not the one of `run`'s options it takes.
    assert!(
        help.stdout.starts_with("Write Kubernetes manifests"),
        "{}",
        help.stdout
    );
}

/// Writes the manifests of the test run with the binary: into `dir`, or
/// as one stream on stdout (returned).
fn write_manifests(out: &str) -> Run {
    let mut args = run_options();
    args.extend(K8S_OPTIONS.iter().map(|s| s.to_string()));
    args.extend(["--out".to_string(), out.to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = k8s_cli(&args);
    r.ok();
    r
}

#[test]
fn writes_four_files_or_one_stream() {
    let dir = Dir::new();
    let out = dir.join("manifests");
    let r = write_manifests(out.to_str().unwrap());
    assert!(
        r.stderr.contains("kubectl apply -f")
            && r.stderr.contains("create secret generic dbsweep-db"),
        "{}",
        r.stderr
    );
    let mut files: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "0-point-configmap.yaml",
            "1-coordinator-service.yaml",
            "2-coordinator-pod.yaml",
            "3-workers-job.yaml"
        ]
    );
    for f in &files {
        let text = std::fs::read_to_string(out.join(f)).unwrap();
        assert!(text.starts_with("# Written by dbsweep"), "{f}");
        assert!(!text.contains(PASSWORD), "{f} holds the password");
    }
    let stream = write_manifests("-").stdout;
    // The header comment, then four documents each opened by `---`.
    assert_eq!(stream.matches("\n---\n").count(), 4, "{stream}");
    assert!(!stream.contains(PASSWORD));
}

// ---------------------------------------------------------------------------
// kubernetes-validate --strict

/// Python of a venv under target/ holding kubernetes-validate, installed
/// with pip on first use and kept for later runs. Installed into a staging
/// directory first, so an interrupted install is never taken for one.
fn validator() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kubernetes-validate-venv");
        let python = venv.join("bin/python");
        let imports = |py: &Path| {
            Command::new(py)
                .args(["-c", "import kubernetes_validate"])
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if imports(&python) {
            return python;
        }
        let staging = venv.with_extension(format!("tmp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&staging);
        let step = |cmd: &mut Command, what: &str| {
            let o = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
            let err = String::from_utf8_lossy(&o.stderr);
            let last = err
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            assert!(
                o.status.success(),
                "{what} failed (is PyPI reachable?): {last}"
            );
        };
        step(
            Command::new("python3").args(["-m", "venv"]).arg(&staging),
            "python3 -m venv",
        );
        step(
            Command::new(staging.join("bin/python")).args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "kubernetes-validate",
            ]),
            "pip install kubernetes-validate",
        );
        let _ = std::fs::remove_dir_all(&venv);
        std::fs::rename(&staging, &venv).expect("move the venv into place");
        // Scripts name the staging path; `python -m` does not care.
        assert!(
            imports(&python),
            "kubernetes-validate does not import from {}",
            venv.display()
        );
        python
    })
}

/// `python -m kubernetes_validate ARGS`: exit status and stdout.
fn kubernetes_validate(args: &[&str]) -> (i32, String) {
    let o = Command::new(validator())
        .args(["-m", "kubernetes_validate"])
        .args(args)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    (o.status.code().unwrap_or(-1), text)
}

/// The oldest and the newest Kubernetes whose schemas it bundles: its own
/// listing, the newest checked against the default its --help names.
fn schema_versions() -> (String, String) {
    let o = Command::new(validator())
        .args([
            "-c",
            "from kubernetes_validate.utils import all_versions; print(' '.join(all_versions()))",
        ])
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&o.stdout).into_owned();
    let versions: Vec<&str> = listing.split_whitespace().collect();
    assert!(versions.len() >= 2, "no version listing: {listing}");
    let (oldest, newest) = (
        versions[0].to_string(),
        versions[versions.len() - 1].to_string(),
    );
    let (_, help) = kubernetes_validate(&["--help"]);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains(&format!("Defaults to {newest}")),
        "--help does not default to {newest}: {help}"
    );
    (oldest, newest)
}

fn major_minor(v: &str) -> String {
    v.split('.').take(2).collect::<Vec<_>>().join(".")
}

#[test]
fn manifests_pass_kubernetes_validate_strict_oldest_and_newest() {
    let (oldest, newest) = schema_versions();
    eprintln!("kubernetes-validate schemas: {oldest} … {newest}");
    let dir = Dir::new();
    let out = dir.join("manifests");
    write_manifests(out.to_str().unwrap());
    let stream = dir.join("stream.yaml");
    std::fs::write(&stream, write_manifests("-").stdout).unwrap();
    let files: Vec<PathBuf> = [
        "0-point-configmap.yaml",
        "1-coordinator-service.yaml",
        "2-coordinator-pod.yaml",
        "3-workers-job.yaml",
    ]
    .iter()
    .map(|f| out.join(f))
    .chain([stream.clone()])
    .collect();
    let mut args = vec!["--strict", "-k", oldest.as_str(), "-k", newest.as_str()];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    let (status, text) = kubernetes_validate(&args);
    assert_eq!(status, 0, "kubernetes-validate --strict failed:\n{text}");
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("WARN") || l.starts_with("ERROR") || l.starts_with("FATAL")),
        "{text}"
    );
    let resources = [
        (0, "configmap/dbsweep-point"),
        (1, "service/dbsweep-coordinator"),
        (2, "pod/dbsweep-coordinator"),
        (3, "job/dbsweep-workers"),
    ];
    for v in [&oldest, &newest] {
        for (i, resource) in resources {
            for file in [&files[i], &stream] {
                let line = format!(
                    "{} passed for resource {resource} against version {}",
                    file.display(),
                    major_minor(v)
                );
                assert!(text.contains(&line), "missing: {line}\n{text}");
            }
        }
    }
}

#[test]
fn strict_validation_catches_a_field_kubernetes_does_not_know() {
    // The control: the check above would catch a wrong manifest.
    let (_, newest) = schema_versions();
    let (_, [_, _, _, mut job]) = documents(&k8s_request(&[]));
    job["spec"]["template"]["spec"]["containers"][0]["cpuLimit"] = json!("2");
    let dir = Dir::new();
    let file = dir.join("job.yaml");
    std::fs::write(&file, serde_json::to_string_pretty(&job).unwrap()).unwrap();
    let (status, text) = kubernetes_validate(&["--strict", "-k", &newest, file.to_str().unwrap()]);
    assert_ne!(status, 0, "{text}");
    assert!(
        text.contains("ERROR") && text.contains("cpuLimit"),
        "{text}"
    );
}
