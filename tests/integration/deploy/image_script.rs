//! scripts/image.sh builds, with podman, the image deploy/Dockerfile describes: users who build
//! with Docker must get what CI ran as a pod (tests/pod/run.sh). Both files are parsed and their
//! user, ports, entrypoint, command, environment, volumes and labels compared, with the
//! passwd entry and the ownership store's directory the script lays out.

use super::*;
use std::collections::BTreeMap;

/// `KEY=VALUE KEY2="VALUE 2"` (ENV and LABEL arguments), quotes removed.
pub(super) fn pairs(args: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut chars = args.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let key: String = std::iter::from_fn(|| chars.next_if(|c| *c != '=' && !c.is_whitespace())).collect();
        if key.is_empty() {
            return out;
        }
        let mut value = String::new();
        if chars.next_if_eq(&'=').is_some() {
            let mut quoted = false;
            while let Some(c) = chars.next_if(|c| quoted || !c.is_whitespace()) {
                match c {
                    '"' => quoted = !quoted,
                    '\\' if quoted => value.extend(chars.next()),
                    c => value.push(c),
                }
            }
        }
        out.push((key, value));
    }
}

/// What both files say the image is.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct ImageConfig {
    user: Option<String>,
    env: BTreeMap<String, String>,
    labels: BTreeMap<String, String>,
    ports: BTreeSet<u16>,
    volumes: BTreeSet<String>,
    entrypoint: Result<Vec<String>, String>,
    cmd: Result<Vec<String>, String>,
}

impl Stage {
    pub(super) fn image_config(&self) -> ImageConfig {
        let map = |word| self.all(word).into_iter().flat_map(pairs).collect::<BTreeMap<_, _>>();
        let volumes = self
            .all("VOLUME")
            .into_iter()
            .flat_map(|v| {
                serde_json::from_str::<Vec<String>>(v)
                    .unwrap_or_else(|_| v.split_whitespace().map(str::to_owned).collect())
            })
            .collect();
        ImageConfig {
            user: self.last("USER").map(str::to_owned),
            env: map("ENV"),
            labels: map("LABEL"),
            ports: self
                .all("EXPOSE")
                .into_iter()
                .flat_map(|a| {
                    a.split_whitespace().map(|p| p.split('/').next().unwrap_or_default().parse().unwrap_or(0))
                })
                .collect(),
            volumes,
            entrypoint: self.exec_form("ENTRYPOINT"),
            cmd: self.exec_form("CMD"),
        }
    }
}

/// The instructions of a `NAME=( 'INSTRUCTION' ... )` array of the script, one a line.
pub(super) fn script_array(script: &str, name: &str) -> Result<Vec<String>, String> {
    let start = format!("{name}=(");
    let mut lines = script.lines().skip_while(|l| l.trim() != start);
    if lines.next().is_none() {
        return Err(format!("scripts/image.sh: no `{start}` array"));
    }
    Ok(lines
        .take_while(|l| l.trim() != ")")
        .map(|l| l.trim().trim_start_matches('\'').trim_end_matches('\'').to_owned())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect())
}

/// Where scripts/image.sh and deploy/Dockerfile's runtime stage describe different images.
pub(super) fn image_script_problems(docker: &Dockerfile, script: &str) -> Vec<String> {
    let mut p = Vec::new();
    let instructions = match script_array(script, "ICEGATE_CONFIG") {
        Ok(i) => i,
        Err(e) => return vec![e],
    };
    let built = parse_dockerfile(&format!("FROM scratch\n{}\n", instructions.join("\n")));
    let ours = built.runtime().image_config();
    let theirs = docker.runtime().image_config();
    let mut differs = |what: &str, script: String, dockerfile: String| {
        if script != dockerfile {
            p.push(format!("scripts/image.sh {what} {script} is not deploy/Dockerfile's {dockerfile}"));
        }
    };
    differs("USER", format!("{:?}", ours.user), format!("{:?}", theirs.user));
    differs("ENV", format!("{:?}", ours.env), format!("{:?}", theirs.env));
    differs("LABEL", format!("{:?}", ours.labels), format!("{:?}", theirs.labels));
    differs("EXPOSE", format!("{:?}", ours.ports), format!("{:?}", theirs.ports));
    differs("VOLUME", format!("{:?}", ours.volumes), format!("{:?}", theirs.volumes));
    differs("ENTRYPOINT", format!("{:?}", ours.entrypoint), format!("{:?}", theirs.entrypoint));
    differs("CMD", format!("{:?}", ours.cmd), format!("{:?}", theirs.cmd));
    // `podman import --change` takes one port, one label, one variable an instruction.
    for line in &instructions {
        let (word, args) = line.split_once(' ').unwrap_or((line, ""));
        let many = match word {
            "EXPOSE" => args.split_whitespace().count(),
            "ENV" | "LABEL" => pairs(args).len(),
            _ => 1,
        };
        if many != 1 {
            p.push(format!("scripts/image.sh: `{line}` gives podman import {many} values in one instruction"));
        }
    }
    let cargo: toml::Value =
        toml::from_str(&std::fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).unwrap()).unwrap();
    let version = cargo["package"]["version"].as_str().unwrap_or_default();
    if theirs.labels.get("org.opencontainers.image.version").map(String::as_str) != Some(version) {
        p.push(format!("deploy/Dockerfile: the label org.opencontainers.image.version is not Cargo.toml's {version}"));
    }
    // The root filesystem the script lays out: the binary where the entrypoint runs it, the
    // user in /etc/passwd, the store's directory (XDG_STATE_HOME/icegate) the user's own.
    if let Ok(Some(binary)) = theirs.entrypoint.as_ref().map(|e| e.first())
        && !script.contains(&format!("\"$staging{binary}\""))
    {
        p.push(format!("scripts/image.sh does not install the binary at the ENTRYPOINT's {binary}"));
    }
    let (uid, gid) = theirs.user.as_deref().and_then(|u| u.split_once(':')).unwrap_or_default();
    if !script.lines().any(|l| l.contains(&format!(":x:{uid}:{gid}:"))) {
        p.push(format!("scripts/image.sh writes no /etc/passwd entry for USER {uid}:{gid}"));
    }
    let store = theirs.env.get("XDG_STATE_HOME").map(|s| format!("{}/icegate", s.trim_matches('/')));
    if let Some(store) = store
        && !script.contains(&format!("{store}={uid}:{gid}:0700"))
    {
        p.push(format!("scripts/image.sh does not give /{store} to {uid}:{gid} (mode 0700) as the Dockerfile does"));
    }
    p
}

pub(super) fn image_script() -> String {
    std::fs::read_to_string(Path::new(ROOT).join("scripts/image.sh")).unwrap()
}
