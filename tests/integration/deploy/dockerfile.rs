//! The Dockerfile: its stages, and what a pod relies on it for.

use super::*;

// ---------------------------------------------------------------------------------------------
// The Dockerfile

#[derive(Clone, Debug)]
pub(super) struct Stage {
    pub(super) image: String,
    pub(super) alias: Option<String>,
    /// (INSTRUCTION, arguments), continuation lines joined.
    pub(super) instructions: Vec<(String, String)>,
}

#[derive(Clone, Debug)]
pub(super) struct Dockerfile {
    pub(super) stages: Vec<Stage>,
}

pub(super) fn parse_dockerfile(text: &str) -> Dockerfile {
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
    pub(super) fn all(&self, word: &str) -> Vec<&str> {
        self.instructions.iter().filter(|(w, _)| w == word).map(|(_, a)| a.as_str()).collect()
    }

    /// The value an `ENV KEY=VALUE` (or `ENV KEY VALUE`) of this stage gives `key`.
    pub(super) fn env(&self, key: &str) -> Option<String> {
        self.all("ENV").into_iter().rev().find_map(|args| {
            let (k, v) = args.split_once('=').or_else(|| args.split_once(char::is_whitespace))?;
            (k.trim() == key).then(|| v.trim().trim_matches('"').to_owned())
        })
    }

    pub(super) fn last(&self, word: &str) -> Option<&str> {
        self.all(word).last().copied()
    }

    /// An exec-form (JSON array) instruction such as ENTRYPOINT or CMD.
    pub(super) fn exec_form(&self, word: &str) -> Result<Vec<String>, String> {
        let args = self.last(word).ok_or_else(|| format!("Dockerfile: the runtime stage has no {word}"))?;
        serde_json::from_str(args)
            .map_err(|_| format!("Dockerfile: {word} must be in exec form (a JSON array): {args}"))
    }

    /// (--from, sources, destination) of each COPY.
    pub(super) fn copies(&self) -> Vec<(Option<String>, Vec<String>, String)> {
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
    pub(super) fn runtime(&self) -> &Stage {
        self.stages.last().expect("Dockerfile: no FROM")
    }

    /// The numeric user the image runs as.
    pub(super) fn uid(&self) -> Result<u64, String> {
        let user = self.runtime().last("USER").ok_or("Dockerfile: the runtime stage sets no USER")?;
        let uid = user.split(':').next().unwrap_or_default();
        uid.parse().map_err(|_| format!("Dockerfile: USER `{user}` is not numeric (runAsNonRoot needs a number)"))
    }

    pub(super) fn exposed(&self) -> BTreeSet<u16> {
        self.runtime()
            .all("EXPOSE")
            .into_iter()
            .flat_map(|a| a.split_whitespace().map(|p| p.split('/').next().unwrap_or_default().parse().unwrap_or(0)))
            .collect()
    }

    /// The `--config` path of the image's default CMD.
    pub(super) fn cmd_config(&self) -> Result<String, String> {
        config_flag(&self.runtime().exec_form("CMD")?).ok_or_else(|| "Dockerfile: CMD passes no `--config FILE`".into())
    }
}

pub(super) fn dockerfile() -> Dockerfile {
    parse_dockerfile(&std::fs::read_to_string(Path::new(ROOT).join("deploy/Dockerfile")).unwrap())
}

pub(super) fn config_flag(args: &[String]) -> Option<String> {
    let at = args.iter().position(|a| a == "--config")?;
    args.get(at + 1).cloned()
}

/// Problems with the Dockerfile on its own and with its build context.
pub(super) fn dockerfile_problems(docker: &Dockerfile, dockerignore: &str) -> Vec<String> {
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
