//! `dbsweep k8s`: the manifests of one run on N worker pods, written as
//! YAML and applied by the user (`kubectl apply -f`); dbsweep talks to no
//! cluster. Four objects (docs/distributed.md):
//!
//! - a **ConfigMap** `dbsweep-point` holding `point.json`, the run's
//!   point as `dbsweep run` resolved it here (an
//!   [`crate::engine::spec::PointSpec`], the same the coordinator sends its
//!   workers), without the database password;
//! - an **Indexed Job** of N workers (`completionMode: Indexed`,
//!   `completions` = `parallelism` = N), each running exactly `dbsweep
//!   worker --coordinator dbsweep-coordinator.NS.svc:PORT` and taking its
//!   shard from `JOB_COMPLETION_INDEX`, the index Kubernetes gives each
//!   pod of an Indexed Job;
//! - a **headless Service** `dbsweep-coordinator`, the coordinator's
//!   name in the cluster's DNS;
//! - the **coordinator Pod**, running `dbsweep run --spec
//!   /etc/dbsweep/point.json --nodes N --launcher external --listen
//!   0.0.0.0:PORT` with the ConfigMap mounted there: it waits for the
//!   workers, starts them together, merges their records and prints the
//!   report in its log.
//!
//! The database password is never in them: every pod reads it from a
//! Secret into the variable the engine's own clients read (PGPASSWORD,
//! MYSQL_PWD). [`manifest`] holds the typed objects and their YAML.

pub mod manifest;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;

use manifest::{
    Affinity, AffinityTerm, ConfigMap, ConfigMapVolume, Container, ContainerPort, EnvVar,
    EnvVarSource, FieldRef, Job, JobSpec, LabelSelector, Manifests, Map, Metadata, Pod,
    PodAntiAffinity, PodSpec, PodTemplate, SecretKeyRef, Service, ServicePort, ServiceSpec, Volume,
    VolumeMount, WeightedAffinityTerm,
};

use crate::engine::spec::PointSpec;

/// The name of the coordinator's Pod and Service.
pub const COORDINATOR: &str = "dbsweep-coordinator";
/// The name of the ConfigMap holding the point.
pub const POINT: &str = "dbsweep-point";
/// Where the coordinator's container sees the ConfigMap, and its file.
pub const POINT_DIR: &str = "/etc/dbsweep";
pub const POINT_FILE: &str = "point.json";
/// The name of the workers' Job.
pub const WORKERS: &str = "dbsweep-workers";
/// The variable Kubernetes sets to a pod's index in an Indexed Job; the
/// worker takes its shard from it.
pub const INDEX_ENV: &str = "JOB_COMPLETION_INDEX";
/// Where that index comes from (the downward API): what Kubernetes itself
/// sets the variable to, written out so the manifest says it.
const INDEX_FIELD: &str = "metadata.annotations['batch.kubernetes.io/job-completion-index']";

/// `dbsweep k8s`, resolved.
pub struct K8sRequest {
    /// Worker pods; the run is split into this many shards.
    pub nodes: usize,
    /// The image every pod runs (`dbsweep` on its PATH).
    pub image: String,
    pub namespace: String,
    /// The port the coordinator listens on.
    pub port: u16,
    /// Requests and limits of each worker, and of the coordinator.
    pub workers: Resources,
    pub coordinator: Resources,
    /// Where the pods take the database password from.
    pub password: PasswordRef,
    /// The point every worker runs its shard of, resolved as `dbsweep run`
    /// resolves it, its target without a password.
    pub spec: PointSpec,
    /// `--json -`: the coordinator prints the merged record in its log.
    pub json: bool,
    pub out: Out,
}

/// Requests and limits by resource (`cpu`, `memory`) as quantities.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resources {
    pub requests: BTreeMap<&'static str, String>,
    pub limits: BTreeMap<&'static str, String>,
}

/// The database password, as the pods get it: variable `env` from the
/// Secret `secret`'s key `password`.
#[derive(Debug, Clone, PartialEq)]
pub struct PasswordRef {
    pub secret: String,
    /// PGPASSWORD (PostgreSQL) or MYSQL_PWD (MySQL/MariaDB).
    pub env: &'static str,
    /// The URL given had a password: the pods need the Secret and wait for
    /// it. Otherwise it is optional (a server that needs none).
    pub required: bool,
}

/// Where the manifests go.
#[derive(Debug, Clone, PartialEq)]
pub enum Out {
    /// One YAML stream of four documents.
    Stdout,
    /// A directory (created if missing), one file per object.
    Dir(PathBuf),
}

/// The address the workers dial: the Service's name in the namespace.
pub fn coordinator_address(r: &K8sRequest) -> String {
    format!("{COORDINATOR}.{}.svc:{}", r.namespace, r.port)
}

/// The coordinator's command line after `dbsweep`: the point from the
/// ConfigMap, and the options that make it coordinate the Job's workers.
pub fn coordinator_args(r: &K8sRequest) -> Vec<String> {
    let mut args = vec![
        "run".to_string(),
        "--spec".to_string(),
        format!("{POINT_DIR}/{POINT_FILE}"),
    ];
    if r.json {
        args.extend(["--json".to_string(), "-".to_string()]);
    }
    args.extend([
        "--nodes".to_string(),
        r.nodes.to_string(),
        "--launcher".to_string(),
        "external".to_string(),
        "--listen".to_string(),
        format!("0.0.0.0:{}", r.port),
    ]);
    args
}

/// The four objects of the run `r` describes.
pub fn manifests(r: &K8sRequest) -> serde_json::Result<Manifests> {
    let labels = |component: &str| -> Map {
        Map::from([
            ("app.kubernetes.io/name".into(), "dbsweep".into()),
            ("app.kubernetes.io/component".into(), component.into()),
        ])
    };
    let metadata = |name: &str, component: &str| Metadata {
        name: Some(name.to_string()),
        namespace: Some(r.namespace.clone()),
        labels: labels(component),
    };
    let password = EnvVar {
        name: r.password.env.to_string(),
        value_from: EnvVarSource {
            field_ref: None,
            secret_key_ref: Some(SecretKeyRef {
                name: r.password.secret.clone(),
                key: "password",
                optional: !r.password.required,
            }),
        },
    };
    let index = EnvVar {
        name: INDEX_ENV.to_string(),
        value_from: EnvVarSource {
            field_ref: Some(FieldRef {
                field_path: INDEX_FIELD.to_string(),
            }),
            secret_key_ref: None,
        },
    };
    let point = ConfigMap {
        api_version: "v1",
        kind: "ConfigMap",
        metadata: metadata(POINT, "coordinator"),
        data: Map::from([(
            POINT_FILE.to_string(),
            serde_json::to_string_pretty(&r.spec)? + "\n",
        )]),
    };
    let service = Service {
        api_version: "v1",
        kind: "Service",
        metadata: metadata(COORDINATOR, "coordinator"),
        spec: ServiceSpec {
            cluster_ip: "None",
            selector: labels("coordinator"),
            ports: vec![ServicePort {
                name: "coordinator",
                port: r.port,
                target_port: r.port,
                protocol: "TCP",
            }],
            publish_not_ready_addresses: true,
        },
    };
    let coordinator = Pod {
        api_version: "v1",
        kind: "Pod",
        metadata: metadata(COORDINATOR, "coordinator"),
        spec: PodSpec {
            // The run happens once: a coordinator restarted mid-run would
            // wait for workers that already ran.
            restart_policy: "Never",
            affinity: None,
            containers: vec![Container {
                name: "coordinator",
                image: r.image.clone(),
                command: vec!["dbsweep".into()],
                args: coordinator_args(r),
                env: vec![password.clone()],
                ports: vec![ContainerPort {
                    name: "coordinator",
                    container_port: r.port,
                    protocol: "TCP",
                }],
                resources: resources(&r.coordinator),
                volume_mounts: vec![VolumeMount {
                    name: "point",
                    mount_path: POINT_DIR,
                    read_only: true,
                }],
            }],
            volumes: vec![Volume {
                name: "point",
                config_map: ConfigMapVolume { name: POINT },
            }],
        },
    };
    let workers = Job {
        api_version: "batch/v1",
        kind: "Job",
        metadata: metadata(WORKERS, "worker"),
        spec: JobSpec {
            completion_mode: "Indexed",
            completions: r.nodes,
            parallelism: r.nodes,
            backoff_limit: 0,
            template: PodTemplate {
                metadata: Metadata {
                    name: None,
                    namespace: None,
                    labels: labels("worker"),
                },
                spec: PodSpec {
                    restart_policy: "Never",
                    affinity: Some(Affinity {
                        pod_anti_affinity: PodAntiAffinity {
                            preferred_during_scheduling_ignored_during_execution: vec![
                                WeightedAffinityTerm {
                                    weight: 100,
                                    pod_affinity_term: AffinityTerm {
                                        label_selector: LabelSelector {
                                            match_labels: labels("worker"),
                                        },
                                        topology_key: "kubernetes.io/hostname",
                                    },
                                },
                            ],
                        },
                    }),
                    containers: vec![Container {
                        name: "worker",
                        image: r.image.clone(),
                        command: vec!["dbsweep".into()],
                        args: vec![
                            "worker".into(),
                            "--coordinator".into(),
                            coordinator_address(r),
                        ],
                        env: vec![index, password],
                        ports: Vec::new(),
                        resources: resources(&r.workers),
                        volume_mounts: Vec::new(),
                    }],
                    volumes: Vec::new(),
                },
            },
        },
    };
    Ok(Manifests {
        point,
        service,
        coordinator,
        workers,
    })
}

fn resources(r: &Resources) -> Option<manifest::Resources> {
    let map = |m: &BTreeMap<&'static str, String>| -> Map {
        m.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    };
    (!r.requests.is_empty() || !r.limits.is_empty()).then(|| manifest::Resources {
        requests: map(&r.requests),
        limits: map(&r.limits),
    })
}

/// The first line of every file: what wrote it, and what it has not been.
fn header() -> String {
    format!(
        "# Written by dbsweep {} (`dbsweep k8s`); not run against a cluster by dbsweep's tests: see docs/distributed.md.\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// Writes the manifests where `r.out` says, and on stderr what to do next.
pub fn write(r: &K8sRequest) -> anyhow::Result<()> {
    let docs = manifests(r)
        .context("Could not render the point as JSON")?
        .documents()
        .context("Could not render the manifests as YAML")?;
    let header = header();
    let target = match &r.out {
        Out::Stdout => {
            let stream: Vec<String> = docs
                .iter()
                .map(|(_, yaml)| format!("---\n{yaml}"))
                .collect();
            let mut out = std::io::stdout().lock();
            out.write_all(format!("{header}{}", stream.concat()).as_bytes())?;
            out.flush()?;
            "-".to_string()
        }
        Out::Dir(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("Could not create '{}'", dir.display()))?;
            for (file, yaml) in &docs {
                super::write_atomically(&dir.join(file), format!("{header}{yaml}").as_bytes())?;
            }
            eprintln!(
                "Wrote {} to {}: the point's ConfigMap, the coordinator's Service and Pod, and an Indexed Job of {} workers.",
                docs.iter().map(|(f, _)| *f).collect::<Vec<_>>().join(", "),
                dir.display(),
                r.nodes
            );
            dir.display().to_string()
        }
    };
    let ns = &r.namespace;
    let secret = &r.password.secret;
    let need = if r.password.required {
        "the pods wait for it"
    } else {
        "optional: without it the pods connect with no password"
    };
    eprintln!(
        "The pods read the database password into {} from Secret '{secret}' (key 'password'; {need}):\n  \
         kubectl -n {ns} create secret generic {secret} --from-literal=password='…'\n\
         Then: kubectl apply -f {target}    and read the report: kubectl -n {ns} logs -f pod/{COORDINATOR}",
        r.password.env
    );
    Ok(())
}
