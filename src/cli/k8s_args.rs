//! `dbsweep k8s`'s own options, as clap parses them. The run's options are
//! `run`'s: `args::command` adds them to the subcommand from `RunArgs`, so
//! they are declared once, and `args::parse_from` reads them into
//! `K8sCommand::run`, resolved as `run` resolves them into the point the
//! coordinator Pod runs.

use clap::Args;

pub const K8S_EXAMPLES: &str = "\
Examples:
  dbsweep k8s oltp_read_only --db postgres://sbtest@db.bench.svc/sbtest \\
      --threads 96 --time 60 --nodes 3 --image registry.example.com/dbsweep:0.1.0 \\
      --namespace bench --cpu 2 --memory 1Gi --out k8s/
  kubectl -n bench create secret generic dbsweep-db --from-literal=password=\"$PGPASSWORD\"
  kubectl apply -f k8s/ && kubectl -n bench logs -f pod/dbsweep-coordinator
  dbsweep k8s oltp_point_select --db mysql://sbtest@maria.bench.svc/sbtest --threads 8 \\
      --nodes 2 --image registry.example.com/dbsweep:0.1.0 | kubectl apply -f -
The manifests have not been run against a cluster by dbsweep's own tests (docs/distributed.md).";

/// Where and how the pods of a `dbsweep k8s` run run.
#[derive(Debug, Args)]
pub struct K8sArgs {
    /// The container image every pod runs; `dbsweep` must be on its PATH.
    #[arg(long, value_name = "IMAGE", help_heading = "Kubernetes")]
    pub image: Option<String>,
    /// The namespace of the Job, the Service and the Pod.
    #[arg(
        long,
        default_value = "default",
        value_name = "NS",
        help_heading = "Kubernetes"
    )]
    pub namespace: String,
    /// The port the coordinator listens on for its workers.
    #[arg(
        long,
        default_value_t = 7878,
        value_name = "PORT",
        help_heading = "Kubernetes"
    )]
    pub port: u16,
    /// CPU of each worker: REQUEST, or REQUEST:LIMIT (e.g. 2, or 500m:1).
    /// One value sets both; with --memory too, the workers get Guaranteed
    /// QoS (whole CPUs of their own under the static CPU manager policy).
    #[arg(long, value_name = "CPU", help_heading = "Kubernetes")]
    pub cpu: Option<String>,
    /// Memory of each worker: REQUEST, or REQUEST:LIMIT (e.g. 1Gi, or
    /// 512Mi:1Gi).
    #[arg(long, value_name = "MEM", help_heading = "Kubernetes")]
    pub memory: Option<String>,
    /// CPU of the coordinator, as --cpu (default: none set).
    #[arg(long, value_name = "CPU", help_heading = "Kubernetes")]
    pub coordinator_cpu: Option<String>,
    /// Memory of the coordinator, as --memory (default: none set).
    #[arg(long, value_name = "MEM", help_heading = "Kubernetes")]
    pub coordinator_memory: Option<String>,
    /// The Secret whose key `password` holds the database password; every
    /// pod reads it into PGPASSWORD or MYSQL_PWD. The manifests never hold
    /// the password itself.
    #[arg(
        long,
        default_value = "dbsweep-db",
        value_name = "NAME",
        help_heading = "Kubernetes"
    )]
    pub password_secret: String,
    /// A directory for the four manifests (created if missing), or `-`
    /// for one YAML stream on standard output.
    #[arg(
        long,
        default_value = "-",
        value_name = "DIR|-",
        help_heading = "Kubernetes"
    )]
    pub out: std::path::PathBuf,
}
