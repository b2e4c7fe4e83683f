//! deploy/: the Dockerfile and the Kubernetes manifests agree with each other and with the icegate
//! config they mount. No container engine or cluster runs here, so these checks are what stands
//! between a typo and a pod that never becomes ready: ports, probes, mounts, the security
//! context, the image's user and binary path, and the policy itself.
//!
//! Each check reports a problem instead of asserting, so that the tests at the end can break one
//! thing at a time in a copy of the manifests and see it reported.

use crate::support::TempDir;
use base64::Engine as _;
use icegate::config::{Config, Overrides};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

// ---------------------------------------------------------------------------------------------
// Loading

/// The resources of one kustomization directory, every document of every file.
#[derive(Clone, Debug)]
struct Manifests {
    dir: PathBuf,
    kustomization: Value,
    docs: Vec<Value>,
}

fn parse_yaml_docs(name: &str, text: &str) -> Vec<Value> {
    let mut options = serde_saphyr::Options::default();
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::Error;
    serde_saphyr::from_multiple_with_options::<Value>(text, options)
        .unwrap_or_else(|e| panic!("{name} does not parse as YAML: {e}"))
}

fn load_manifests(rel: &str) -> Manifests {
    let dir = Path::new(ROOT).join(rel);
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("cannot read {rel}/{name}: {e}"))
    };
    let mut kustomizations = parse_yaml_docs("kustomization.yaml", &read("kustomization.yaml"));
    assert_eq!(kustomizations.len(), 1, "{rel}/kustomization.yaml: one document");
    let kustomization = kustomizations.remove(0);
    let listed: BTreeSet<String> = strings(&kustomization["resources"]).into_iter().collect();
    let unlisted = unlisted_files(&dir, &listed);
    assert!(unlisted.is_empty(), "{rel}: kustomization.yaml `resources` lists or misses {unlisted:?}");
    let mut docs = Vec::new();
    for name in &listed {
        for doc in parse_yaml_docs(name, &read(name)) {
            for key in ["apiVersion", "kind"] {
                assert!(doc[key].is_string(), "{rel}/{name}: a document without `{key}`");
            }
            assert!(doc["metadata"]["name"].is_string(), "{rel}/{name}: a document without `metadata.name`");
            docs.push(doc);
        }
    }
    Manifests { dir, kustomization, docs }
}

/// The manifest files of `dir` that `resources` does not list, and the listed ones missing.
fn unlisted_files(dir: &Path, listed: &BTreeSet<String>) -> BTreeSet<String> {
    let present: BTreeSet<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| (n.ends_with(".yaml") || n.ends_with(".yml")) && n != "kustomization.yaml")
        .collect();
    present.symmetric_difference(listed).cloned().collect()
}

impl Manifests {
    fn of_kind(&self, kind: &str) -> Vec<&Value> {
        self.docs.iter().filter(|d| d["kind"] == kind).collect()
    }

    fn find(&self, kind: &str, name: &str) -> Option<&Value> {
        self.docs.iter().find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
    }

    fn find_mut(&mut self, kind: &str, name: &str) -> &mut Value {
        self.docs
            .iter_mut()
            .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} `{name}`"))
    }

    /// The text of `key` in a ConfigMap (`data`) or Secret (`stringData`, or base64 `data`).
    fn file(&self, kind: &str, name: &str, key: &str) -> Result<String, String> {
        let doc = self.find(kind, name).ok_or_else(|| format!("no {kind} `{name}` among the manifests"))?;
        if let Some(text) = doc["stringData"][key].as_str() {
            return Ok(text.to_owned());
        }
        let data = doc["data"][key].as_str().ok_or_else(|| format!("{kind} `{name}` has no key `{key}`"))?;
        if kind == "Secret" {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data)
                .map_err(|e| format!("Secret `{name}` key `{key}` is not base64: {e}"))?;
            String::from_utf8(bytes).map_err(|_| format!("Secret `{name}` key `{key}` is not UTF-8"))
        } else {
            Ok(data.to_owned())
        }
    }

    /// Every file of a ConfigMap, for a policy directory.
    fn files(&self, kind: &str, name: &str) -> Result<Vec<(String, String)>, String> {
        let doc = self.find(kind, name).ok_or_else(|| format!("no {kind} `{name}` among the manifests"))?;
        let mut keys: Vec<String> = Vec::new();
        for section in ["data", "stringData"] {
            if let Some(map) = doc[section].as_object() {
                keys.extend(map.keys().cloned());
            }
        }
        keys.into_iter().map(|k| self.file(kind, name, &k).map(|t| (k, t))).collect()
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect()).unwrap_or_default()
}

mod dockerfile;
mod image_script;
mod tests;
use dockerfile::*;
use image_script::*;

// ---------------------------------------------------------------------------------------------
// The pod

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pattern {
    /// The catalog and icegate in one pod.
    Sidecar,
    /// icegate alone, several replicas, in front of a remote catalog.
    Gateway,
}

/// A named or numbered port of a container, as a number.
fn resolve_port(container: &Value, port: &Value) -> Option<u16> {
    if let Some(n) = port.as_u64() {
        return u16::try_from(n).ok();
    }
    let name = port.as_str()?;
    container["ports"]
        .as_array()?
        .iter()
        .find(|p| p["name"] == name)
        .and_then(|p| p["containerPort"].as_u64())
        .and_then(|n| u16::try_from(n).ok())
}

fn container_ports(container: &Value) -> BTreeSet<u16> {
    container["ports"]
        .as_array()
        .map(|ports| {
            ports.iter().filter_map(|p| p["containerPort"].as_u64()).filter_map(|n| u16::try_from(n).ok()).collect()
        })
        .unwrap_or_default()
}

/// `selector` (a map of labels) matches `labels`.
fn selects(selector: &Value, labels: &Value) -> bool {
    selector.as_object().is_some_and(|s| !s.is_empty() && s.iter().all(|(k, v)| labels[k] == *v))
}

/// The volume behind the mount at `path` in `container`: (mount, volume).
fn mount_at<'a>(pod: &'a Value, container: &'a Value, path: &Path) -> Option<(&'a Value, &'a Value)> {
    let mount =
        container["volumeMounts"].as_array()?.iter().find(|m| m["mountPath"].as_str().map(Path::new) == Some(path))?;
    let volume = pod["volumes"].as_array()?.iter().find(|v| v["name"] == mount["name"])?;
    Some((mount, volume))
}

/// (kind, name) of the ConfigMap or Secret behind a volume.
fn volume_source(volume: &Value) -> Option<(&'static str, String)> {
    if let Some(name) = volume["configMap"]["name"].as_str() {
        return Some(("ConfigMap", name.to_owned()));
    }
    volume["secret"]["secretName"].as_str().map(|name| ("Secret", name.to_owned()))
}

/// Writes a ConfigMap's files as the kubelet lays out a ConfigMap volume: the files in a
/// timestamped directory, `..data` a symlink to it, and each name a symlink through `..data`.
#[cfg(unix)]
fn write_like_kubelet(dir: &Path, files: &[(String, String)]) {
    let stamp = dir.join("..2025_01_01_00_00_00.000000001");
    std::fs::create_dir_all(&stamp).unwrap();
    for (name, text) in files {
        std::fs::write(stamp.join(name), text).unwrap();
        std::os::unix::fs::symlink(Path::new("..data").join(name), dir.join(name)).unwrap();
    }
    std::os::unix::fs::symlink(stamp.file_name().unwrap(), dir.join("..data")).unwrap();
}

#[cfg(not(unix))]
fn write_like_kubelet(dir: &Path, files: &[(String, String)]) {
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

/// Every problem of one manifest directory, checked against itself, the Dockerfile and the
/// icegate config it mounts.
fn problems(m: &Manifests, docker: &Dockerfile, pattern: Pattern) -> Vec<String> {
    let mut p = Vec::new();
    if let Err(e) = pod_problems(m, docker, pattern, &mut p) {
        p.push(e);
    }
    p
}

/// The Deployment's pod and its icegate container.
struct Pod<'a> {
    m: &'a Manifests,
    spec: &'a Value,
    labels: &'a Value,
    containers: &'a [Value],
    icegate: &'a Value,
}

fn pod_problems(m: &Manifests, docker: &Dockerfile, pattern: Pattern, p: &mut Vec<String>) -> Result<(), String> {
    let deployments = m.of_kind("Deployment");
    let [deployment] = deployments.as_slice() else {
        return Err(format!("{}: expected one Deployment, found {}", m.dir.display(), deployments.len()));
    };
    let template = &deployment["spec"]["template"];
    let labels = &template["metadata"]["labels"];
    if !selects(&deployment["spec"]["selector"]["matchLabels"], labels) {
        p.push("Deployment: spec.selector.matchLabels does not match the pod template's labels".into());
    }
    let containers = template["spec"]["containers"].as_array().ok_or("Deployment: no containers")?;
    let icegate = containers.iter().find(|c| c["name"] == "icegate").ok_or("Deployment: no container `icegate`")?;
    let pod = Pod { m, spec: &template["spec"], labels, containers, icegate };

    let config_path = pod.startup(docker, p)?;
    let (config, config_kind) = pod.config(&config_path, p)?;
    pod.ports_and_probes(&config, docker, p);
    pod.policy(&config, p)?;
    pod.security(docker, p)?;
    pod.shutdown(&config, p);
    pod.services(config.listen.port(), p);
    pod.owners(&config, deployment, docker, pattern, p);

    let upstream = icegate::config::parse_upstream(config.upstream.url.as_deref().unwrap_or_default())
        .map_err(|e| e.to_string())?;
    let (host, port) = upstream.authority.as_str().rsplit_once(':').unwrap_or((upstream.authority.as_str(), "80"));
    let loopback = host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    let replicas = deployment["spec"]["replicas"].as_u64().unwrap_or(1);
    match pattern {
        Pattern::Sidecar => {
            let others: Vec<&Value> = containers.iter().filter(|c| c["name"] != "icegate").collect();
            sidecar_problems(m, &others, labels, config.listen.port(), (loopback, port), p);
        }
        Pattern::Gateway => gateway_problems(m, labels, replicas, loopback, &config, config_kind, p),
    }
    Ok(())
}

impl Pod<'_> {
    /// The ownership store (issue 9): the sidecar's embedded file (at `owners.path`, or at the
    /// default path the image's and the container's environment give) on a writable persistent
    /// volume, one pod at a time; the gateway's replicas share PostgreSQL, over TLS.
    fn owners(&self, config: &Config, deployment: &Value, docker: &Dockerfile, pattern: Pattern, p: &mut Vec<String>) {
        use icegate::ops::owners::StoreKind;
        match (pattern, config.owners.kind()) {
            (Pattern::Sidecar, StoreKind::Embedded) => {}
            (Pattern::Gateway, StoreKind::Postgres) => {
                self.postgres_tls(config, p);
                return;
            }
            (Pattern::Sidecar, kind) => {
                p.push(format!("the sidecar's ownership store is {kind:?}, not the embedded file"));
                return;
            }
            (Pattern::Gateway, kind) => {
                p.push(format!("the gateway's ownership store is {kind:?}: replicas must share PostgreSQL"));
                return;
            }
        }
        let env = |key: &str| {
            let set = self.icegate["env"].as_array().into_iter().flatten().find(|v| v["name"] == key);
            set.and_then(|v| v["value"].as_str().map(str::to_owned)).or_else(|| docker.runtime().env(key))
        };
        let default = icegate::ops::owners::default_path_in(env("XDG_STATE_HOME").as_deref(), env("HOME").as_deref());
        let Some(path) = config.owners.path.clone().or(default) else {
            p.push(
                "the ownership store has no path: neither `owners.path` nor the image's XDG_STATE_HOME or HOME".into(),
            );
            return;
        };
        let Some(dir) = path.parent() else {
            p.push("`owners.path` has no directory".into());
            return;
        };
        let Some((mount, volume)) = mount_at(self.spec, self.icegate, dir) else {
            p.push(format!("the ownership store's directory {} is not a mounted volume", dir.display()));
            return;
        };
        if mount["readOnly"] == true {
            p.push("the ownership store's mount is readOnly".into());
        }
        match volume["persistentVolumeClaim"]["claimName"].as_str() {
            Some(claim) if self.m.of_kind("PersistentVolumeClaim").iter().any(|c| c["metadata"]["name"] == claim) => {}
            Some(claim) => p.push(format!("the ownership store's claim `{claim}` is not among the manifests")),
            None => p.push(
                "the ownership store's volume is not a PersistentVolumeClaim: records would die with the pod".into(),
            ),
        }
        if self.spec["securityContext"]["fsGroup"].is_null() {
            p.push("no pod `fsGroup`: the non-root icegate may not write the ownership store's volume".into());
        }
        if deployment["spec"]["strategy"]["type"] != "Recreate" {
            p.push("the sidecar's strategy is not Recreate: two pods would share the ownership store's file".into());
        }
    }

    /// The gateway's PostgreSQL store: TLS that verifies the server (`sslmode=verify-full`),
    /// with the CA of `sslrootcert` mounted from the manifests.
    fn postgres_tls(&self, config: &Config, p: &mut Vec<String>) {
        use icegate::ops::owners::pg_tls::{SslMode, split};
        let Some(url) = config.owners.url.as_deref() else {
            p.push("the gateway's `owners.url` is not in its config".into());
            return;
        };
        let settings = match split(url) {
            Ok((_, settings)) => settings,
            Err(e) => return p.push(format!("`owners.url`: {e}")),
        };
        if settings.mode != SslMode::VerifyFull {
            p.push("the gateway's `owners.url` does not say `sslmode=verify-full`".into());
        }
        let Some(ca) = settings.root_cert else {
            return p.push("the gateway's `owners.url` names no `sslrootcert`".into());
        };
        let (Some(dir), Some(file)) = (ca.parent(), ca.file_name().and_then(|f| f.to_str())) else {
            return p.push(format!("`sslrootcert={}` is not a file path", ca.display()));
        };
        let Some((_, volume)) = mount_at(self.spec, self.icegate, dir) else {
            return p.push(format!("`sslrootcert`'s directory {} is not a mounted volume", dir.display()));
        };
        match volume_source(volume) {
            Some((kind, name)) => {
                if let Err(e) = self.m.file(kind, &name, file) {
                    p.push(format!("`sslrootcert`: {e}"));
                }
            }
            None => p.push("`sslrootcert`'s volume is neither a ConfigMap nor a Secret".into()),
        }
    }

    /// The image and how it is started; the `--config` path.
    fn startup(&self, docker: &Dockerfile, p: &mut Vec<String>) -> Result<PathBuf, String> {
        let icegate = self.icegate;
        let image = icegate["image"].as_str().unwrap_or_default();
        let image_name = image.rsplit_once(':').map_or(image, |(n, _)| n);
        if !self.m.kustomization["images"].as_array().is_some_and(|i| i.iter().any(|e| e["name"] == image_name)) {
            p.push(format!(
                "icegate image `{image_name}` has no `images` entry in kustomization.yaml to point it elsewhere"
            ));
        }
        let entrypoint = docker.runtime().exec_form("ENTRYPOINT")?;
        if !icegate["command"].is_null() && strings(&icegate["command"]) != entrypoint {
            p.push(format!("icegate `command` {:?} is not the image's ENTRYPOINT {entrypoint:?}", icegate["command"]));
        }
        let args =
            if icegate["args"].is_null() { docker.runtime().exec_form("CMD")? } else { strings(&icegate["args"]) };
        if args.first().map(String::as_str) != Some("serve") {
            p.push(format!("icegate args {args:?} do not run `serve`"));
        }
        let config_path = PathBuf::from(config_flag(&args).ok_or("icegate args pass no `--config FILE`")?);
        let image_config = docker.cmd_config()?;
        if Path::new(&image_config) != config_path {
            p.push(format!("icegate `--config {}` is not the image's default `{image_config}`", config_path.display()));
        }
        Ok(config_path)
    }

    /// The config, from the ConfigMap or Secret mounted at its directory, loaded and validated
    /// as `serve` loads it; and where it came from.
    fn config(&self, path: &Path, p: &mut Vec<String>) -> Result<(Config, &'static str), String> {
        let dir = path.parent().ok_or("`--config` has no directory")?;
        let (mount, volume) = mount_at(self.spec, self.icegate, dir)
            .ok_or_else(|| format!("no volume is mounted at `{}`, the directory of `--config`", dir.display()))?;
        if mount["readOnly"] != true {
            p.push("the config mount is not readOnly".into());
        }
        if !volume["configMap"]["items"].is_null() || !volume["secret"]["items"].is_null() {
            p.push("the config volume remaps keys with `items`".into());
        }
        let (kind, name) = volume_source(volume).ok_or("the config volume is neither a ConfigMap nor a Secret")?;
        let file_name = path.file_name().and_then(|f| f.to_str()).ok_or("`--config` names no file")?;
        let text = self.m.file(kind, &name, file_name)?;
        let tmp = TempDir::new("deploy-config");
        let config = Config::load(Some(tmp.write(file_name, &text).as_path()), Overrides::default())
            .map_err(|e| format!("{kind} `{name}` {file_name}: {e}"))?;
        Ok((config, kind))
    }

    /// What icegate listens on is what the container declares, the image exposes and the
    /// probes use.
    fn ports_and_probes(&self, config: &Config, docker: &Dockerfile, p: &mut Vec<String>) {
        let (listen, admin) = (config.listen.port(), config.admin_listen.port());
        for (key, addr) in [("listen", config.listen), ("admin_listen", config.admin_listen)] {
            if !addr.ip().is_unspecified() {
                p.push(format!("`{key} = \"{addr}\"` is not reachable from outside the pod: listen on 0.0.0.0"));
            }
        }
        let declared = container_ports(self.icegate);
        if declared != BTreeSet::from([listen, admin]) {
            p.push(format!("icegate containerPorts {declared:?} are not `listen` {listen} and `admin_listen` {admin}"));
        }
        if docker.exposed() != BTreeSet::from([listen, admin]) {
            p.push(format!(
                "Dockerfile EXPOSE {:?} is not `listen` {listen} and `admin_listen` {admin}",
                docker.exposed()
            ));
        }
        for (probe, path) in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")] {
            let get = &self.icegate[probe]["httpGet"];
            if get["path"] != path {
                p.push(format!("icegate {probe} is not an httpGet of `{path}`"));
            }
            if resolve_port(self.icegate, &get["port"]) != Some(admin) {
                p.push(format!("icegate {probe} port {} is not the admin port {admin}", get["port"]));
            }
        }
    }

    /// Whole directories, read-only, so the kubelet's updates reach icegate; the policy (and
    /// the shadow candidate) ConfigMap loads as the directory the kubelet lays out.
    fn policy(&self, config: &Config, p: &mut Vec<String>) -> Result<(), String> {
        for mount in self.icegate["volumeMounts"].as_array().into_iter().flatten() {
            if !mount["subPath"].is_null() || !mount["subPathExpr"].is_null() {
                p.push(format!(
                    "icegate mount `{}` uses subPath: it would never see ConfigMap updates",
                    mount["mountPath"]
                ));
            }
        }
        let path = config.policy.clone().ok_or("the config sets no `policy`")?;
        self.policy_dir("policy", &path, p)?;
        if let Some(shadow) = &config.shadow_policy {
            self.policy_dir("shadow_policy", shadow, p)?;
        }
        Ok(())
    }

    fn policy_dir(&self, key: &str, path: &Path, p: &mut Vec<String>) -> Result<(), String> {
        let Some((mount, volume)) = mount_at(self.spec, self.icegate, path) else {
            p.push(format!("no volume is mounted at the config's `{key} = \"{}\"`", path.display()));
            return Ok(());
        };
        if mount["readOnly"] != true {
            p.push(format!("the `{key}` mount is not readOnly"));
        }
        if !volume["configMap"]["items"].is_null() {
            p.push(format!("the `{key}` volume remaps keys with `items`"));
        }
        let Some(("ConfigMap", name)) = volume_source(volume) else {
            p.push(format!("the `{key}` is not mounted from a ConfigMap"));
            return Ok(());
        };
        let files = self.m.files("ConfigMap", &name)?;
        let dir = TempDir::new("deploy-policy");
        write_like_kubelet(dir.path(), &files);
        if let Err(e) = icegate::core::policy::load_path(dir.path()) {
            p.push(format!("ConfigMap `{name}` does not load as a policy directory:\n{e}"));
        }
        Ok(())
    }

    /// Non-root (icegate as the image's user), no privilege escalation, a read-only root, no
    /// capabilities, the runtime's seccomp profile, and resources, for every container.
    fn security(&self, docker: &Dockerfile, p: &mut Vec<String>) -> Result<(), String> {
        let pod_sc = &self.spec["securityContext"];
        let effective = |c: &Value, key: &str| {
            let own = &c["securityContext"][key];
            if own.is_null() { pod_sc[key].clone() } else { own.clone() }
        };
        for c in self.containers {
            let name = c["name"].as_str().unwrap_or_default();
            let sc = &c["securityContext"];
            if effective(c, "runAsNonRoot") != true {
                p.push(format!("container `{name}`: runAsNonRoot is not true"));
            }
            if effective(c, "runAsUser").as_u64() == Some(0) {
                p.push(format!("container `{name}`: runAsUser is 0"));
            }
            if effective(c, "seccompProfile")["type"] != "RuntimeDefault" {
                p.push(format!("container `{name}`: seccompProfile is not RuntimeDefault"));
            }
            if sc["allowPrivilegeEscalation"] != false {
                p.push(format!("container `{name}`: allowPrivilegeEscalation is not false"));
            }
            if sc["readOnlyRootFilesystem"] != true {
                p.push(format!("container `{name}`: readOnlyRootFilesystem is not true"));
            }
            if sc["privileged"] == true {
                p.push(format!("container `{name}`: privileged"));
            }
            if !strings(&sc["capabilities"]["drop"]).iter().any(|c| c == "ALL") {
                p.push(format!("container `{name}`: capabilities do not drop ALL"));
            }
            if sc["capabilities"]["add"].as_array().is_some_and(|a| !a.is_empty()) {
                p.push(format!("container `{name}`: capabilities are added"));
            }
            for (section, key) in [("requests", "cpu"), ("requests", "memory"), ("limits", "memory")] {
                if c["resources"][section][key].is_null() {
                    p.push(format!("container `{name}`: no resources.{section}.{key}"));
                }
            }
        }
        let uid = docker.uid()?;
        let icegate_uid = effective(self.icegate, "runAsUser");
        if icegate_uid.as_u64() != Some(uid) {
            p.push(format!("icegate runAsUser {icegate_uid} is not the Dockerfile's USER {uid}"));
        }
        Ok(())
    }

    /// The grace period covers the preStop pause and icegate's drain (`shutdown_grace_seconds`),
    /// and every other container of the pod (the sidecar's catalog) serves until icegate has
    /// drained: the kubelet stops them all at once, so only their own preStop pause keeps them up.
    fn shutdown(&self, config: &Config, p: &mut Vec<String>) {
        let pause_of = |c: &Value| c["lifecycle"]["preStop"]["sleep"]["seconds"].as_u64().unwrap_or(0);
        let pause = pause_of(self.icegate);
        let grace = self.spec["terminationGracePeriodSeconds"].as_u64().unwrap_or(30);
        let drain = config.shutdown_grace_seconds;
        if grace < pause + drain {
            p.push(format!(
                "terminationGracePeriodSeconds {grace} is shorter than preStop {pause} s + `shutdown_grace_seconds` {drain} s"
            ));
        }
        for other in self.containers.iter().filter(|c| c["name"] != "icegate") {
            let name = &other["name"];
            let stays = pause_of(other);
            if stays < pause + drain {
                p.push(format!(
                    "container {name} stops {stays} s into the pod's termination, before icegate's preStop {pause} s and drain {drain} s end: requests still draining would get 502"
                ));
            }
            if stays >= grace {
                p.push(format!("container {name}: its preStop pause {stays} s does not end within terminationGracePeriodSeconds {grace}"));
            }
        }
    }

    /// A Service reaches icegate's listener, never its admin port or another container.
    fn services(&self, listen: u16, p: &mut Vec<String>) {
        let services: Vec<&Value> =
            self.m.of_kind("Service").into_iter().filter(|s| selects(&s["spec"]["selector"], self.labels)).collect();
        if services.is_empty() {
            p.push("no Service selects the pod".into());
        }
        for service in services {
            for port in service["spec"]["ports"].as_array().into_iter().flatten() {
                let target = if port["targetPort"].is_null() { &port["port"] } else { &port["targetPort"] };
                if resolve_port(self.icegate, target) != Some(listen) {
                    p.push(format!(
                        "Service `{}` targetPort {target} is not icegate's listen port {listen}",
                        service["metadata"]["name"]
                    ));
                }
            }
        }
    }
}

fn sidecar_problems(
    m: &Manifests,
    others: &[&Value],
    labels: &Value,
    listen: u16,
    (loopback, upstream_port): (bool, &str),
    p: &mut Vec<String>,
) {
    let [catalog] = others else {
        p.push(format!("the sidecar pod should hold the catalog and icegate, found {} other containers", others.len()));
        return;
    };
    if !loopback {
        p.push("`upstream.url` is not the catalog in the same pod (127.0.0.1)".into());
    }
    let catalog_port = upstream_port.parse::<u16>().unwrap_or(0);
    // Where the catalog listens: the fixture's own port setting (its CATALOG_* variables are
    // catalog properties) and its liveness probe's port.
    let env = catalog["env"].as_array().into_iter().flatten();
    let mut listens: BTreeSet<u16> =
        env.filter(|v| v["name"] == "CATALOG_REST_PORT").filter_map(|v| v["value"].as_str()?.parse().ok()).collect();
    listens.extend(resolve_port(catalog, &catalog["livenessProbe"]["tcpSocket"]["port"]));
    if listens != BTreeSet::from([catalog_port]) {
        p.push(format!(
            "`upstream.url` port {upstream_port} is not the catalog container's port (CATALOG_REST_PORT and its liveness probe: {listens:?})"
        ));
    }
    // A declared port is informational to Kubernetes, but `podman kube play` publishes it on
    // the host, where it would reach the catalog around icegate.
    if !container_ports(catalog).is_empty() {
        p.push(format!(
            "the catalog declares containerPorts {:?}: podman kube play publishes them on the host, around icegate",
            container_ports(catalog)
        ));
    }
    for service in m.of_kind("Service") {
        for port in service["spec"]["ports"].as_array().into_iter().flatten() {
            if resolve_port(catalog, &port["targetPort"]) == Some(catalog_port) {
                p.push(format!("Service `{}` exposes the catalog's own port", service["metadata"]["name"]));
            }
        }
    }
    // Nothing but icegate's ports admitted into the pod.
    let policies: Vec<&Value> = m
        .of_kind("NetworkPolicy")
        .into_iter()
        .filter(|n| selects(&n["spec"]["podSelector"]["matchLabels"], labels))
        .collect();
    if policies.is_empty() {
        p.push("no NetworkPolicy keeps other pods from reaching the catalog directly".into());
    }
    for policy in policies {
        let name = &policy["metadata"]["name"];
        if !strings(&policy["spec"]["policyTypes"]).iter().any(|t| t == "Ingress") {
            p.push(format!("NetworkPolicy {name} does not restrict Ingress"));
        }
        let mut admitted = BTreeSet::new();
        for rule in policy["spec"]["ingress"].as_array().into_iter().flatten() {
            match rule["ports"].as_array() {
                Some(ports) if !ports.is_empty() => {
                    admitted.extend(ports.iter().filter_map(|port| port["port"].as_u64()));
                }
                _ => p.push(format!("NetworkPolicy {name} has an ingress rule open on every port")),
            }
        }
        if admitted.contains(&u64::from(catalog_port)) {
            p.push(format!("NetworkPolicy {name} admits the catalog's port {catalog_port}"));
        }
        if !admitted.contains(&u64::from(listen)) {
            p.push(format!("NetworkPolicy {name} does not admit icegate's listen port {listen}"));
        }
    }
}

fn gateway_problems(
    m: &Manifests,
    labels: &Value,
    replicas: u64,
    loopback: bool,
    config: &Config,
    config_kind: &str,
    p: &mut Vec<String>,
) {
    if replicas < 2 {
        p.push(format!("the gateway runs {replicas} replica(s): expected several"));
    }
    if loopback {
        p.push("the gateway's `upstream.url` is a loopback address, not the remote catalog".into());
    }
    // Shared by every replica, and secret: the config file holding it comes from a Secret.
    if config.lists.page_token_key.is_none() {
        p.push("the gateway sets no `lists.page_token_key`: page tokens would not cross replicas".into());
    }
    if config_kind != "Secret" {
        p.push(format!("the gateway's config (with the page-token key) comes from a {config_kind}, not a Secret"));
    }
    let budgets: Vec<&Value> = m
        .of_kind("PodDisruptionBudget")
        .into_iter()
        .filter(|b| selects(&b["spec"]["selector"]["matchLabels"], labels))
        .collect();
    if budgets.is_empty() {
        p.push("no PodDisruptionBudget selects the gateway's pods".into());
    }
    for budget in budgets {
        let spec = &budget["spec"];
        let allows_one = spec["maxUnavailable"].as_u64().is_some_and(|n| n >= 1)
            || spec["minAvailable"].as_u64().is_some_and(|n| n < replicas);
        if !allows_one {
            p.push(format!("PodDisruptionBudget {} lets no replica be drained", budget["metadata"]["name"]));
        }
    }
}
