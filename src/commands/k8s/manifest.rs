//! The Kubernetes objects `dbsweep k8s` writes, as typed structs with the
//! API's own field names (camelCase through serde) and only the fields
//! dbsweep sets, so a field Kubernetes does not know cannot be written by
//! a typo in a template; and their YAML.
//!
//! YAML comes from `yaml_serde`, the fork of serde_yaml kept by the YAML
//! organization (serde_yaml itself is deprecated and archived; serde_yml
//! is archived too, and unsound before 0.0.13: RUSTSEC-2025-0068). It
//! writes YAML 1.2, quoting strings that YAML 1.2 would read as numbers
//! or booleans; the words only YAML 1.1 reads as booleans (`yes`, `on`, …,
//! which kubectl's parser does) never stand alone in these objects: names
//! are checked by `cli` and every argument starts with `--`.

use std::collections::BTreeMap;

use serde::Serialize;

/// A name → value map (labels, selectors, resources), in sorted order so
/// the output is the same from run to run.
pub type Map = BTreeMap<String, String>;

/// `metadata` of an object or a pod template.
#[derive(Debug, Clone, Serialize)]
pub struct Metadata {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub labels: Map,
}

/// A `v1` ConfigMap: the point the coordinator runs, as a file.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigMap {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: Metadata,
    /// File name → content, each a file of the volume that mounts it.
    pub data: Map,
}

/// A `v1` Service: the coordinator's stable DNS name.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Service {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: Metadata,
    pub spec: ServiceSpec,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceSpec {
    /// `None` makes the Service headless: its name resolves to the pod's
    /// own address, with no proxy between the workers and the coordinator.
    #[serde(rename = "clusterIP")]
    pub cluster_ip: &'static str,
    pub selector: Map,
    pub ports: Vec<ServicePort>,
    /// The name resolves as soon as the pod has an address, before it is
    /// ready: the coordinator has no readiness probe to pass.
    pub publish_not_ready_addresses: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServicePort {
    pub name: &'static str,
    pub port: u16,
    pub target_port: u16,
    pub protocol: &'static str,
}

/// A `v1` Pod: the coordinator.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pod {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: Metadata,
    pub spec: PodSpec,
}

/// A `batch/v1` Job: the workers.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: Metadata,
    pub spec: JobSpec,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobSpec {
    /// `Indexed`: pod `i` gets completion index `i`, its shard.
    pub completion_mode: &'static str,
    pub completions: usize,
    pub parallelism: usize,
    /// Retries of failed pods. 0: a shard that failed is not run again
    /// behind the coordinator's back (its run is partial, and says so).
    pub backoff_limit: u32,
    pub template: PodTemplate,
}

#[derive(Debug, Clone, Serialize)]
pub struct PodTemplate {
    pub metadata: Metadata,
    pub spec: PodSpec,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    pub restart_policy: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    pub containers: Vec<Container>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<Volume>,
}

/// A volume holding a ConfigMap's files.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Volume {
    pub name: &'static str,
    pub config_map: ConfigMapVolume,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConfigMapVolume {
    pub name: &'static str,
}

/// Where a container sees a volume.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeMount {
    pub name: &'static str,
    pub mount_path: &'static str,
    pub read_only: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    pub name: &'static str,
    pub image: String,
    pub command: Vec<String>,
    pub args: Vec<String>,
    pub env: Vec<EnvVar>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<ContainerPort>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub volume_mounts: Vec<VolumeMount>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerPort {
    pub name: &'static str,
    pub container_port: u16,
    pub protocol: &'static str,
}

/// An environment variable read from elsewhere: never a literal value
/// here, so no secret can end up in the manifests as one.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvVar {
    pub name: String,
    pub value_from: EnvVarSource,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvVarSource {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field_ref: Option<FieldRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_key_ref: Option<SecretKeyRef>,
}

/// A field of the pod itself (the downward API).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldRef {
    pub field_path: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SecretKeyRef {
    pub name: String,
    pub key: &'static str,
    /// true: the pod starts without the variable when the Secret is
    /// missing (a server that needs no password); false: it waits for it.
    pub optional: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Resources {
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub requests: Map,
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub limits: Map,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Affinity {
    pub pod_anti_affinity: PodAntiAffinity,
}

/// Workers prefer nodes without another worker: shards that share a node
/// share its CPUs, which is what running on several was meant to avoid.
/// Preferred, not required: with fewer nodes than workers the run still
/// starts (and `kubectl get pods -o wide` shows where each went).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodAntiAffinity {
    pub preferred_during_scheduling_ignored_during_execution: Vec<WeightedAffinityTerm>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WeightedAffinityTerm {
    pub weight: u32,
    pub pod_affinity_term: AffinityTerm,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AffinityTerm {
    pub label_selector: LabelSelector,
    pub topology_key: &'static str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    pub match_labels: Map,
}

/// The four objects of one run, in the order they are applied.
#[derive(Debug, Clone)]
pub struct Manifests {
    pub point: ConfigMap,
    pub service: Service,
    pub coordinator: Pod,
    pub workers: Job,
}

impl Manifests {
    /// Each object as `(file name, YAML document)`, in applying order —
    /// which the names' order is too, as `kubectl apply -f DIR` takes them.
    pub fn documents(&self) -> Result<Vec<(&'static str, String)>, yaml_serde::Error> {
        Ok(vec![
            (
                "0-point-configmap.yaml",
                yaml_serde::to_string(&self.point)?,
            ),
            (
                "1-coordinator-service.yaml",
                yaml_serde::to_string(&self.service)?,
            ),
            (
                "2-coordinator-pod.yaml",
                yaml_serde::to_string(&self.coordinator)?,
            ),
            ("3-workers-job.yaml", yaml_serde::to_string(&self.workers)?),
        ])
    }
}
