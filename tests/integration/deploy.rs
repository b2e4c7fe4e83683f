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

// ---------------------------------------------------------------------------------------------
// The Dockerfile

#[derive(Clone, Debug)]
struct Stage {
    image: String,
    alias: Option<String>,
    /// (INSTRUCTION, arguments), continuation lines joined.
    instructions: Vec<(String, String)>,
}

#[derive(Clone, Debug)]
struct Dockerfile {
    stages: Vec<Stage>,
}

fn parse_dockerfile(text: &str) -> Dockerfile {
    let mut logical = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        // Comment lines are dropped, also inside a continued instruction (as Docker does).
        if trimmed.starts_with('#') || (current.is_empty() && trimmed.is_empty()) {
            continue;
        }
        if let Some(head) = trimmed.strip_suffix('\\') {
            current.push_str(head);
            current.push(' ');
        } else {
            current.push_str(trimmed);
            logical.push(std::mem::take(&mut current));
        }
    }
    let mut stages: Vec<Stage> = Vec::new();
    for line in logical {
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((&line, ""));
        let (word, rest) = (word.to_ascii_uppercase(), rest.trim().to_owned());
        if word == "FROM" {
            let parts: Vec<&str> = rest.split_whitespace().filter(|p| !p.starts_with("--")).collect();
            let alias = match parts.as_slice() {
                [_, as_, alias] if as_.eq_ignore_ascii_case("as") => Some((*alias).to_owned()),
                _ => None,
            };
            stages.push(Stage {
                image: parts.first().copied().unwrap_or_default().to_owned(),
                alias,
                instructions: vec![],
            });
        } else {
            let stage = stages.last_mut().unwrap_or_else(|| panic!("Dockerfile: `{word}` before any FROM"));
            stage.instructions.push((word, rest));
        }
    }
    Dockerfile { stages }
}

impl Stage {
    fn all(&self, word: &str) -> Vec<&str> {
        self.instructions.iter().filter(|(w, _)| w == word).map(|(_, a)| a.as_str()).collect()
    }

    /// The value an `ENV KEY=VALUE` (or `ENV KEY VALUE`) of this stage gives `key`.
    fn env(&self, key: &str) -> Option<String> {
        self.all("ENV").into_iter().rev().find_map(|args| {
            let (k, v) = args.split_once('=').or_else(|| args.split_once(char::is_whitespace))?;
            (k.trim() == key).then(|| v.trim().trim_matches('"').to_owned())
        })
    }

    fn last(&self, word: &str) -> Option<&str> {
        self.all(word).last().copied()
    }

    /// An exec-form (JSON array) instruction such as ENTRYPOINT or CMD.
    fn exec_form(&self, word: &str) -> Result<Vec<String>, String> {
        let args = self.last(word).ok_or_else(|| format!("Dockerfile: the runtime stage has no {word}"))?;
        serde_json::from_str(args)
            .map_err(|_| format!("Dockerfile: {word} must be in exec form (a JSON array): {args}"))
    }

    /// (--from, sources, destination) of each COPY.
    fn copies(&self) -> Vec<(Option<String>, Vec<String>, String)> {
        self.all("COPY")
            .into_iter()
            .map(|args| {
                let mut from = None;
                let mut paths = Vec::new();
                for part in args.split_whitespace() {
                    if let Some(f) = part.strip_prefix("--from=") {
                        from = Some(f.to_owned());
                    } else if !part.starts_with("--") {
                        paths.push(part.to_owned());
                    }
                }
                let dest = paths.pop().unwrap_or_default();
                (from, paths, dest)
            })
            .collect()
    }
}

impl Dockerfile {
    fn runtime(&self) -> &Stage {
        self.stages.last().expect("Dockerfile: no FROM")
    }

    /// The numeric user the image runs as.
    fn uid(&self) -> Result<u64, String> {
        let user = self.runtime().last("USER").ok_or("Dockerfile: the runtime stage sets no USER")?;
        let uid = user.split(':').next().unwrap_or_default();
        uid.parse().map_err(|_| format!("Dockerfile: USER `{user}` is not numeric (runAsNonRoot needs a number)"))
    }

    fn exposed(&self) -> BTreeSet<u16> {
        self.runtime()
            .all("EXPOSE")
            .into_iter()
            .flat_map(|a| a.split_whitespace().map(|p| p.split('/').next().unwrap_or_default().parse().unwrap_or(0)))
            .collect()
    }

    /// The `--config` path of the image's default CMD.
    fn cmd_config(&self) -> Result<String, String> {
        config_flag(&self.runtime().exec_form("CMD")?).ok_or_else(|| "Dockerfile: CMD passes no `--config FILE`".into())
    }
}

fn dockerfile() -> Dockerfile {
    parse_dockerfile(&std::fs::read_to_string(Path::new(ROOT).join("deploy/Dockerfile")).unwrap())
}

fn config_flag(args: &[String]) -> Option<String> {
    let at = args.iter().position(|a| a == "--config")?;
    args.get(at + 1).cloned()
}

/// Problems with the Dockerfile on its own and with its build context.
fn dockerfile_problems(docker: &Dockerfile, dockerignore: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let cargo: toml::Value =
        toml::from_str(&std::fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).unwrap()).unwrap();
    let rust_version = cargo["package"]["rust-version"].as_str().unwrap();
    if docker.stages.len() < 2 {
        problems.push("Dockerfile: expected a build stage and a runtime stage".into());
        return problems;
    }
    let build = &docker.stages[0];
    if !build.image.starts_with(&format!("rust:{rust_version}-")) && build.image != format!("rust:{rust_version}") {
        problems.push(format!("Dockerfile: the build stage `{}` is not Rust {rust_version} (Cargo.toml)", build.image));
    }
    let runs = build.all("RUN").join("\n");
    for needle in ["cargo build", "--release", "--locked"] {
        if !runs.contains(needle) {
            problems.push(format!("Dockerfile: the build stage does not run `{needle}`"));
        }
    }
    // What cargo reads to parse the manifest: without the bench sources it refuses to build.
    let mut needed = vec!["Cargo.toml", "Cargo.lock", "src"];
    if cargo.get("bench").is_some() {
        needed.push("benches");
    }
    let copied: BTreeSet<String> = build
        .copies()
        .into_iter()
        .filter(|(from, _, _)| from.is_none())
        .flat_map(|(_, sources, _)| sources)
        .map(|s| s.trim_start_matches("./").trim_end_matches('/').to_owned())
        .collect();
    let ignore_all = dockerignore.lines().any(|l| l.trim() == "*");
    for path in needed {
        if !copied.contains(path) && !copied.contains(".") {
            problems.push(format!("Dockerfile: the build stage does not COPY `{path}`"));
        }
        if ignore_all && !dockerignore.lines().any(|l| l.trim() == format!("!{path}")) {
            problems.push(format!("Dockerfile.dockerignore: `{path}` is excluded from the build context"));
        }
    }
    let runtime = docker.runtime();
    if runtime.image.starts_with("rust:") {
        problems.push("Dockerfile: the runtime stage is the Rust toolchain image, not a small base".into());
    }
    match docker.uid() {
        Ok(0) => problems.push("Dockerfile: USER is root".into()),
        Ok(_) => {}
        Err(e) => problems.push(e),
    }
    match runtime.exec_form("ENTRYPOINT") {
        Ok(entrypoint) => {
            let aliases: Vec<String> =
                docker.stages[..docker.stages.len() - 1].iter().filter_map(|s| s.alias.clone()).collect();
            let binaries: Vec<String> = runtime
                .copies()
                .into_iter()
                .filter(|(from, _, _)| from.as_ref().is_some_and(|f| aliases.contains(f)))
                .map(|(_, _, dest)| dest)
                .collect();
            match entrypoint.first() {
                Some(bin) if binaries.contains(bin) => {}
                other => problems.push(format!(
                    "Dockerfile: ENTRYPOINT `{other:?}` is not where the binary is copied from the build ({binaries:?})"
                )),
            }
        }
        Err(e) => problems.push(e),
    }
    if let Err(e) = docker.cmd_config() {
        problems.push(e);
    }
    problems
}

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

    /// The grace period covers the preStop pause and icegate's drain (`shutdown_grace_seconds`).
    fn shutdown(&self, config: &Config, p: &mut Vec<String>) {
        let pause = self.icegate["lifecycle"]["preStop"]["sleep"]["seconds"].as_u64().unwrap_or(0);
        let grace = self.spec["terminationGracePeriodSeconds"].as_u64().unwrap_or(30);
        let drain = config.shutdown_grace_seconds;
        if grace < pause + drain {
            p.push(format!(
                "terminationGracePeriodSeconds {grace} is shorter than preStop {pause} s + `shutdown_grace_seconds` {drain} s"
            ));
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
    if !container_ports(catalog).contains(&catalog_port) {
        p.push(format!("`upstream.url` port {upstream_port} is not a port of the catalog container"));
    }
    // The fixture catalog's own port setting (its CATALOG_* variables are catalog properties).
    let env = catalog["env"].as_array().into_iter().flatten();
    for var in env.filter(|v| v["name"] == "CATALOG_REST_PORT") {
        if var["value"].as_str() != Some(upstream_port) {
            p.push(format!(
                "the catalog listens on CATALOG_REST_PORT {}, not `upstream.url`'s {upstream_port}",
                var["value"]
            ));
        }
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

// ---------------------------------------------------------------------------------------------
// The tests

fn dockerignore() -> String {
    std::fs::read_to_string(Path::new(ROOT).join("deploy/Dockerfile.dockerignore")).unwrap()
}

fn assert_clean(problems: Vec<String>) {
    assert!(problems.is_empty(), "problems:\n  {}", problems.join("\n  "));
}

fn assert_reports(problems: Vec<String>, needle: &str) {
    assert!(problems.iter().any(|p| p.contains(needle)), "expected a problem containing `{needle}`, got {problems:#?}");
}

#[test]
fn dockerfile_builds_with_the_projects_toolchain_and_runs_as_a_numeric_non_root_user() {
    assert_clean(dockerfile_problems(&dockerfile(), &dockerignore()));
}

#[test]
fn sidecar_manifests_agree_with_the_config_they_mount_and_the_image() {
    assert_clean(problems(&load_manifests("deploy/kubernetes/sidecar"), &dockerfile(), Pattern::Sidecar));
}

#[test]
fn gateway_manifests_agree_with_the_config_they_mount_and_the_image() {
    assert_clean(problems(&load_manifests("deploy/kubernetes/gateway"), &dockerfile(), Pattern::Gateway));
}

#[test]
fn both_patterns_mount_the_same_paths_the_image_expects() {
    let (s, g) = (load_manifests("deploy/kubernetes/sidecar"), load_manifests("deploy/kubernetes/gateway"));
    let args = |m: &Manifests| {
        strings(
            &m.of_kind("Deployment")[0]["spec"]["template"]["spec"]["containers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == "icegate")
                .unwrap()["args"],
        )
    };
    assert_eq!(args(&s), args(&g));
    assert_eq!(config_flag(&args(&s)), dockerfile().cmd_config().ok());
}

// Each check can fail: break one thing in a copy and see it reported.

fn sidecar() -> Manifests {
    load_manifests("deploy/kubernetes/sidecar")
}

fn gateway() -> Manifests {
    load_manifests("deploy/kubernetes/gateway")
}

fn icegate_container<'a>(m: &'a mut Manifests, deployment: &str) -> &'a mut Value {
    let containers =
        m.find_mut("Deployment", deployment)["spec"]["template"]["spec"]["containers"].as_array_mut().unwrap();
    containers.iter_mut().find(|c| c["name"] == "icegate").unwrap()
}

#[test]
fn a_sub_path_mount_of_the_policy_is_reported() {
    let mut m = sidecar();
    let mounts = icegate_container(&mut m, "iceberg-catalog")["volumeMounts"].as_array_mut().unwrap();
    for mount in mounts.iter_mut().filter(|m| m["mountPath"] == "/etc/icegate/policy") {
        mount["subPath"] = "lake.yaml".into();
    }
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "subPath");
}

#[test]
fn a_probe_on_the_wrong_port_or_path_is_reported() {
    let mut m = sidecar();
    icegate_container(&mut m, "iceberg-catalog")["readinessProbe"]["httpGet"]["port"] = "http".into();
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "readinessProbe port");
    let mut m = gateway();
    icegate_container(&mut m, "icegate")["livenessProbe"]["httpGet"]["path"] = "/readyz".into();
    assert_reports(problems(&m, &dockerfile(), Pattern::Gateway), "livenessProbe is not an httpGet of `/healthz`");
}

#[test]
fn a_service_that_reaches_the_catalog_directly_is_reported() {
    let mut m = sidecar();
    m.find_mut("Service", "iceberg-catalog")["spec"]["ports"][0]["targetPort"] = 8080.into();
    let found = problems(&m, &dockerfile(), Pattern::Sidecar);
    assert_reports(found.clone(), "is not icegate's listen port");
    assert_reports(found, "exposes the catalog's own port");
}

#[test]
fn a_config_that_listens_on_loopback_or_another_port_is_reported() {
    let mut m = sidecar();
    let doc = m.find_mut("ConfigMap", "iceberg-catalog-icegate-config");
    let text = doc["data"]["icegate.toml"].as_str().unwrap().replace("0.0.0.0:9181", "127.0.0.1:9191");
    doc["data"]["icegate.toml"] = text.into();
    let found = problems(&m, &dockerfile(), Pattern::Sidecar);
    assert_reports(found.clone(), "not reachable from outside the pod");
    assert_reports(found.clone(), "containerPorts");
    assert_reports(found, "admin port 9191");
}

#[test]
fn a_config_key_icegate_does_not_know_is_reported() {
    let mut m = gateway();
    let doc = m.find_mut("Secret", "icegate-config");
    let text = format!("listn = \"0.0.0.0:8181\"\n{}", doc["stringData"]["icegate.toml"].as_str().unwrap());
    doc["stringData"]["icegate.toml"] = text.into();
    assert_reports(problems(&m, &dockerfile(), Pattern::Gateway), "unknown field `listn`");
}

#[test]
fn a_policy_that_does_not_load_is_reported() {
    let mut m = sidecar();
    let doc = m.find_mut("ConfigMap", "iceberg-catalog-icegate-policy");
    let text = doc["data"]["lake.yaml"].as_str().unwrap().replace("SELECT_VIEW", "SELECT_VIEWS");
    doc["data"]["lake.yaml"] = text.into();
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "unknown privilege `SELECT_VIEWS`");
    // A key without the .yaml suffix is not a policy file of the mounted directory.
    let mut m = gateway();
    let doc = m.find_mut("ConfigMap", "icegate-policy");
    let text = doc["data"]["lake.yaml"].take();
    doc["data"] = serde_json::json!({ "lake.txt": text });
    assert_reports(problems(&m, &dockerfile(), Pattern::Gateway), "holds no policy file");
}

#[test]
fn a_policy_mount_that_is_not_the_configs_policy_path_is_reported() {
    let mut m = gateway();
    let mounts = icegate_container(&mut m, "icegate")["volumeMounts"].as_array_mut().unwrap();
    for mount in mounts.iter_mut().filter(|m| m["mountPath"] == "/etc/icegate/policy") {
        mount["mountPath"] = "/etc/icegate/policies".into();
    }
    assert_reports(problems(&m, &dockerfile(), Pattern::Gateway), "no volume is mounted at the config's `policy");
}

#[test]
fn a_weakened_security_context_is_reported() {
    let mut m = sidecar();
    {
        let c = icegate_container(&mut m, "iceberg-catalog");
        c["securityContext"]["runAsUser"] = 1000.into();
        c["securityContext"]["readOnlyRootFilesystem"] = false.into();
        c["securityContext"]["capabilities"]["drop"] = serde_json::json!(["NET_RAW"]);
        c["securityContext"]["allowPrivilegeEscalation"] = Value::Null;
    }
    m.find_mut("Deployment", "iceberg-catalog")["spec"]["template"]["spec"]["securityContext"]["seccompProfile"] =
        serde_json::json!({ "type": "Unconfined" });
    let found = problems(&m, &dockerfile(), Pattern::Sidecar);
    for needle in [
        "runAsUser 1000 is not the Dockerfile's USER 65532",
        "readOnlyRootFilesystem",
        "drop ALL",
        "allowPrivilegeEscalation",
        "`catalog`: seccompProfile",
    ] {
        assert_reports(found.clone(), needle);
    }
}

#[test]
fn a_single_replica_gateway_or_a_page_token_key_outside_a_secret_is_reported() {
    let mut m = gateway();
    m.find_mut("Deployment", "icegate")["spec"]["replicas"] = 1.into();
    assert_reports(problems(&m, &dockerfile(), Pattern::Gateway), "1 replica(s)");
    let mut m = gateway();
    m.find_mut("PodDisruptionBudget", "icegate")["spec"] = serde_json::json!({ "minAvailable": 3, "selector": { "matchLabels": { "app.kubernetes.io/name": "icegate" } } });
    assert_reports(problems(&m, &dockerfile(), Pattern::Gateway), "lets no replica be drained");

    // The same config, from a ConfigMap.
    let mut m = gateway();
    let mut secret = m.find("Secret", "icegate-config").unwrap().clone();
    secret["kind"] = "ConfigMap".into();
    secret["data"] = secret["stringData"].take();
    m.docs.push(secret);
    let pod = &mut m.find_mut("Deployment", "icegate")["spec"]["template"]["spec"];
    for volume in pod["volumes"].as_array_mut().unwrap().iter_mut().filter(|v| v["name"] == "icegate-config") {
        *volume = serde_json::json!({ "name": "icegate-config", "configMap": { "name": "icegate-config" } });
    }
    assert_reports(problems(&m, &dockerfile(), Pattern::Gateway), "comes from a ConfigMap, not a Secret");

    // No key at all.
    let mut m = gateway();
    let doc = m.find_mut("Secret", "icegate-config");
    let text: String = doc["stringData"]["icegate.toml"]
        .as_str()
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("page_token_key"))
        .map(|l| format!("{l}\n"))
        .collect();
    doc["stringData"]["icegate.toml"] = text.into();
    assert_reports(problems(&m, &dockerfile(), Pattern::Gateway), "sets no `lists.page_token_key`");
}

#[test]
fn a_dockerfile_that_disagrees_with_the_manifests_is_reported() {
    let text = std::fs::read_to_string(Path::new(ROOT).join("deploy/Dockerfile")).unwrap();
    let changed = |from: &str, to: &str| {
        assert!(text.contains(from), "the Dockerfile no longer contains `{from}`");
        parse_dockerfile(&text.replace(from, to))
    };
    let m = sidecar();
    assert_reports(problems(&m, &changed("USER 65532:65532", "USER 1001"), Pattern::Sidecar), "USER 1001");
    assert_reports(problems(&m, &changed("EXPOSE 8181 9181", "EXPOSE 8080"), Pattern::Sidecar), "EXPOSE");
    assert_reports(
        problems(&m, &changed("/etc/icegate/config/icegate.toml\"]", "/etc/icegate/icegate.toml\"]"), Pattern::Sidecar),
        "is not the image's default",
    );
    let ignore = dockerignore();
    assert_reports(
        dockerfile_problems(
            &changed("ENTRYPOINT [\"/usr/local/bin/icegate\"]", "ENTRYPOINT [\"/bin/icegate\"]"),
            &ignore,
        ),
        "ENTRYPOINT",
    );
    assert_reports(dockerfile_problems(&changed("USER 65532:65532", "USER nonroot"), &ignore), "not numeric");
    assert_reports(dockerfile_problems(&changed("USER 65532:65532", "USER 0"), &ignore), "USER is root");
    assert_reports(
        dockerfile_problems(&changed("FROM rust:1.95-bookworm", "FROM rust:1.80-bookworm"), &ignore),
        "not Rust",
    );
    assert_reports(dockerfile_problems(&changed("COPY benches ./benches\n", ""), &ignore), "does not COPY `benches`");
    assert_reports(dockerfile_problems(&dockerfile(), &ignore.replace("!benches", "")), "`benches` is excluded");
    assert_reports(dockerfile_problems(&changed("--release --locked", "--release"), &ignore), "`--locked`");
}

/// Replaces `from` with `to` in the TOML config of the sidecar's ConfigMap.
fn edit_sidecar_config(m: &mut Manifests, from: &str, to: &str) {
    let doc = m.find_mut("ConfigMap", "iceberg-catalog-icegate-config");
    let text = doc["data"]["icegate.toml"].as_str().unwrap().to_owned();
    assert!(text.contains(from), "the sidecar config no longer contains `{from}`");
    doc["data"]["icegate.toml"] = text.replacen(from, to, 1).into();
}

#[test]
fn an_upstream_that_is_not_the_catalog_container_is_reported() {
    let mut m = sidecar();
    edit_sidecar_config(&mut m, "http://127.0.0.1:8080", "http://127.0.0.1:8081");
    let found = problems(&m, &dockerfile(), Pattern::Sidecar);
    assert_reports(found.clone(), "port 8081 is not a port of the catalog container");
    assert_reports(found, "CATALOG_REST_PORT");
    let mut m = sidecar();
    edit_sidecar_config(&mut m, "http://127.0.0.1:8080", "http://catalog.example:8080");
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "not the catalog in the same pod");
}

#[test]
fn a_network_policy_that_admits_the_catalog_port_is_reported() {
    let mut m = sidecar();
    let ingress = &mut m.find_mut("NetworkPolicy", "iceberg-catalog")["spec"]["ingress"];
    ingress.as_array_mut().unwrap().push(serde_json::json!({ "ports": [{ "protocol": "TCP", "port": 8080 }] }));
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "admits the catalog's port 8080");
    let mut m = sidecar();
    m.find_mut("NetworkPolicy", "iceberg-catalog")["spec"]["ingress"] = serde_json::json!([{}]);
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "open on every port");
}

#[test]
fn a_shadow_policy_that_is_not_mounted_is_reported() {
    let mut m = sidecar();
    edit_sidecar_config(
        &mut m,
        "policy = \"/etc/icegate/policy\"",
        "policy = \"/etc/icegate/policy\"\nshadow_policy = \"/etc/icegate/shadow\"",
    );
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "`shadow_policy = \"/etc/icegate/shadow\"`");
    // Mounted from the live policy's ConfigMap, it loads.
    let c = icegate_container(&mut m, "iceberg-catalog");
    c["volumeMounts"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({ "name": "icegate-policy", "mountPath": "/etc/icegate/shadow", "readOnly": true }));
    assert_clean(problems(&m, &dockerfile(), Pattern::Sidecar));
}

#[test]
fn a_grace_period_shorter_than_the_drain_is_reported() {
    let mut m = sidecar();
    edit_sidecar_config(&mut m, "shutdown_grace_seconds = 20", "shutdown_grace_seconds = 60");
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "terminationGracePeriodSeconds 30 is shorter");
}

#[test]
fn the_kustomization_lists_every_manifest_file() {
    // load_manifests asserts it for both directories; here, that the check sees a file left out
    // and a listed file that is not there.
    let m = sidecar();
    let mut listed: BTreeSet<String> = strings(&m.kustomization["resources"]).into_iter().collect();
    assert!(unlisted_files(&m.dir, &listed).is_empty());
    assert!(listed.remove("networkpolicy.yaml"));
    listed.insert("ingress.yaml".into());
    assert_eq!(
        unlisted_files(&m.dir, &listed),
        BTreeSet::from(["ingress.yaml".to_owned(), "networkpolicy.yaml".to_owned()])
    );
}

#[test]
fn an_ownership_store_on_a_volume_that_dies_with_the_pod_is_reported() {
    let docker = dockerfile();
    let mut m = sidecar();
    let volumes = m.docs.iter_mut().find(|d| d["kind"] == "Deployment").unwrap()["spec"]["template"]["spec"]["volumes"]
        .as_array_mut()
        .unwrap();
    let owners = volumes.iter_mut().find(|v| v["name"] == "icegate-owners").unwrap();
    *owners = serde_json::json!({ "name": "icegate-owners", "emptyDir": {} });
    assert_reports(problems(&m, &docker, Pattern::Sidecar), "not a PersistentVolumeClaim");
    let mut m = sidecar();
    icegate_container(&mut m, "iceberg-catalog")["volumeMounts"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|v| v["name"] == "icegate-owners")
        .unwrap()["readOnly"] = true.into();
    assert_reports(problems(&m, &docker, Pattern::Sidecar), "mount is readOnly");
    let mut m = sidecar();
    edit_sidecar_config(&mut m, "[identity]", "[owners]\npath = \"/tmp/owners.db\"\n[identity]");
    assert_reports(problems(&m, &docker, Pattern::Sidecar), "/tmp is not a mounted volume");
    // the default path is the image's: without its XDG_STATE_HOME, HOME's, not on the volume
    let mut bare = docker.clone();
    bare.stages.last_mut().unwrap().instructions.retain(|(w, a)| !(w == "ENV" && a.starts_with("XDG_STATE_HOME")));
    assert_reports(problems(&sidecar(), &bare, Pattern::Sidecar), "the ownership store has no path");
    bare.stages.last_mut().unwrap().instructions.push(("ENV".into(), "HOME=/home/nonroot".into()));
    assert_reports(
        problems(&sidecar(), &bare, Pattern::Sidecar),
        "/home/nonroot/.local/state/icegate is not a mounted volume",
    );
}

#[test]
fn a_gateway_without_a_shared_ownership_store_is_reported() {
    let docker = dockerfile();
    let mut m = gateway();
    let secret = m.docs.iter_mut().find(|d| d["kind"] == "Secret").unwrap();
    let text = secret["stringData"]["icegate.toml"].as_str().unwrap().to_owned();
    let cut = text.split("[owners]").next().unwrap().to_owned();
    secret["stringData"]["icegate.toml"] = (cut + "[owners]\npath = \"/var/lib/icegate/owners.db\"\n").into();
    assert_reports(problems(&m, &docker, Pattern::Gateway), "replicas must share PostgreSQL");
}

#[test]
fn a_gateway_store_without_verified_tls_is_reported() {
    let docker = dockerfile();
    let edit = |from: &str, to: &str| {
        let mut m = gateway();
        let secret = m.docs.iter_mut().find(|d| d["kind"] == "Secret").unwrap();
        let text = secret["stringData"]["icegate.toml"].as_str().unwrap().to_owned();
        assert!(text.contains(from), "the gateway config no longer contains `{from}`");
        secret["stringData"]["icegate.toml"] = text.replacen(from, to, 1).into();
        problems(&m, &docker, Pattern::Gateway)
    };
    assert_reports(edit("sslmode=verify-full", "sslmode=require"), "does not say `sslmode=verify-full`");
    assert_reports(edit("sslmode=verify-full", "sslmode=disable"), "does not say `sslmode=verify-full`");
    assert_reports(
        edit("sslrootcert=/etc/icegate/postgres/", "sslrootcert=/etc/other/"),
        "/etc/other is not a mounted volume",
    );
    assert_reports(edit("postgres/ca.crt", "postgres/other.crt"), "has no key `other.crt`");
}
