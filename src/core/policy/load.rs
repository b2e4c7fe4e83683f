//! Loading a policy: read a file or a directory of files, parse them, and hand them to the
//! builder; a broken policy is reported whole (every error with its file and line) and never
//! half-loaded.

use super::build::Builder;
pub use super::diagnostic::{Diagnostic, LoadError, Loaded};
use super::{json, raw};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// One policy file's name and contents, in load order.
#[derive(Clone, Debug)]
pub struct Source {
    pub path: PathBuf,
    pub text: String,
}

/// Loads a YAML file, or the policy files of a directory (docs/design.md §3).
pub fn load_path(path: &Path) -> Result<Loaded, LoadError> {
    load_sources(read_sources(path)?)
}

/// Loads policy text given in memory (tests, conformance files); `name` labels diagnostics.
pub fn load_str(name: &str, text: &str) -> Result<Loaded, LoadError> {
    load_sources(vec![Source { path: PathBuf::from(name), text: text.to_owned() }])
}

fn file_error(path: &Path, message: String) -> LoadError {
    LoadError::Invalid(vec![Diagnostic { file: path.to_owned(), line: 1, message }])
}

/// The files that make up a policy: the path itself, or the regular files (or symlinks to
/// them) directly in a directory named `*.yaml`/`*.yml` and not starting with `.`, in byte
/// order of their names, so a Kubernetes ConfigMap mount (`..data`) loads as intended.
pub fn read_sources(path: &Path) -> Result<Vec<Source>, LoadError> {
    let meta = std::fs::metadata(path)
        .map_err(|e| file_error(path, format!("cannot read policy `{}`: {e}", path.display())))?;
    let files = if meta.is_dir() {
        let entries = std::fs::read_dir(path)
            .map_err(|e| file_error(path, format!("cannot read directory `{}`: {e}", path.display())))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| file_error(path, format!("cannot read directory entry: {e}")))?;
            let name = entry.file_name();
            let Some(name) = name.to_str().map(str::to_owned) else { continue };
            let wanted = !name.starts_with('.') && (name.ends_with(".yaml") || name.ends_with(".yml"));
            // metadata() follows symlinks: a dangling or non-regular entry is skipped.
            if wanted && std::fs::metadata(entry.path()).is_ok_and(|m| m.is_file()) {
                names.push(name);
            }
        }
        names.sort();
        if names.is_empty() {
            return Err(file_error(
                path,
                format!("directory `{}` holds no policy file (`*.yaml` or `*.yml`)", path.display()),
            ));
        }
        names.into_iter().map(|n| path.join(n)).collect()
    } else {
        vec![path.to_owned()]
    };
    files
        .into_iter()
        .map(|file| {
            let bytes = std::fs::read(&file)
                .map_err(|e| file_error(&file, format!("cannot read `{}`: {e}", file.display())))?;
            let text =
                String::from_utf8(bytes).map_err(|_| file_error(&file, "policy file is not valid UTF-8".to_owned()))?;
            Ok(Source { path: file, text })
        })
        .collect()
}

/// `sha256:` + hex of the concatenated bytes of the files in load order (docs/design.md §9).
pub fn content_hash(sources: &[Source]) -> String {
    let mut hasher = Sha256::new();
    for s in sources {
        hasher.update(s.text.as_bytes());
    }
    let digest = hasher.finalize();
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

pub fn load_sources(sources: Vec<Source>) -> Result<Loaded, LoadError> {
    let parsed = parse(&sources)?;
    // Parsed, the text is no longer needed: for a large policy it is a fifth of the memory a
    // load takes at its peak.
    drop(sources);
    build(parsed)
}

/// Parsed policy files, not yet validated or indexed (the two halves of a load, apart so that
/// benchmarks can time them separately).
#[derive(Clone, Debug)]
pub struct Parsed {
    hash: String,
    files: Vec<(PathBuf, raw::File)>,
}

/// Parses every file, a JSON one on the JSON path (`super::json`); reports every file that
/// does not parse.
pub fn parse(sources: &[Source]) -> Result<Parsed, LoadError> {
    let mut diags = Vec::new();
    let mut files = Vec::new();
    for source in sources {
        let text = &source.text;
        let json = json::looks_like_json(text).then(|| json::parse(text)).flatten();
        match json.map_or_else(|| parse_yaml(text), Ok) {
            Ok(file) => files.push((source.path.clone(), file)),
            Err((line, message)) => diags.push(Diagnostic { file: source.path.clone(), line, message }),
        }
    }
    if diags.is_empty() { Ok(Parsed { hash: content_hash(sources), files }) } else { Err(LoadError::Invalid(diags)) }
}

/// Validates parsed files and builds the indexed snapshot.
pub fn build(parsed: Parsed) -> Result<Loaded, LoadError> {
    Builder::new(parsed.hash).build(parsed.files)
}

/// Parses one YAML file strictly: unknown keys and duplicate keys are errors.
pub(super) fn parse_yaml(text: &str) -> Result<raw::File, (u64, String)> {
    let mut options = serde_saphyr::Options::default();
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::Error;
    // The parser's default budget (250,000 nodes) refuses policies of ~20,000 grants. A policy
    // is operator input, so its size bounds the work instead: every node and event costs at
    // least a byte of text; alias and anchor limits stay as they are (no alias bombs).
    let mut budget = serde_saphyr::Budget::default();
    let scale = text.len().saturating_mul(4).saturating_add(10_000);
    budget.max_nodes = budget.max_nodes.max(scale);
    budget.max_events = budget.max_events.max(scale);
    budget.max_total_scalar_bytes = budget.max_total_scalar_bytes.max(text.len().saturating_mul(2));
    options.budget = Some(budget);
    serde_saphyr::from_str_with_options::<raw::File>(text, options).map_err(|e| {
        let line = e.location().map_or(1, |l| l.line().max(1));
        (line, yaml_message(&e.without_snippet().to_string()))
    })
}

/// The parser's message without the location it also prints, which the diagnostic carries.
fn yaml_message(message: &str) -> String {
    let mut m = message.trim();
    if let Some(rest) = m.strip_prefix("error: ") {
        m = rest;
    }
    if m.starts_with("line ")
        && let Some((_, rest)) = m.split_once(": ")
    {
        m = rest;
    }
    if let Some(idx) = m.rfind(" at line ") {
        m = m.get(..idx).unwrap_or(m);
    }
    if m.is_empty() { "invalid YAML".to_owned() } else { m.to_owned() }
}
