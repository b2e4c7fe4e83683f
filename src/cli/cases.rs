//! Decision cases in the format of docs/design.md §11: reading them strictly and running one
//! through the offline decision sequence `explain` uses ([`crate::core::offline`]). `icegate test`
//! and the project's conformance tests both run cases through [`run`].

use crate::cli::policy::Explanation;
use crate::core::decide::Settings;
use crate::core::offline::{Input, decide};
use crate::core::policy::Snapshot;
use crate::core::roles::{OwnershipMode, Principal};
use serde::Deserialize;
use serde_json::Value;
use thiserror::Error;

/// A case file or document icegate cannot run.
#[derive(Debug, Error)]
pub enum CaseError {
    #[error("not YAML: {0}")]
    Yaml(String),
    #[error("document {doc}: {message}")]
    Document { doc: usize, message: String },
    #[error("document {doc}: case `{name}` expects nothing: give `status`, `credential`, `visible` or `restrictions`")]
    NoExpectation { doc: usize, name: String },
    #[error("holds no cases")]
    Empty,
}

/// One YAML document of a case file: an optional policy and its cases.
#[derive(Debug)]
pub struct Document {
    /// A policy snapshot (docs/design.md §3); when present it replaces `--policy`.
    pub policy: Option<Value>,
    pub cases: Vec<Case>,
}

/// A document as read, its cases read one by one so that an error names the case.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDocument {
    policy: Option<Value>,
    cases: Vec<Value>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub name: String,
    pub user: String,
    #[serde(default)]
    pub groups: Vec<String>,
    pub active_roles: Option<String>,
    pub method: String,
    pub path: String,
    pub body: Option<Value>,
    #[serde(default = "yes")]
    pub exists: bool,
    pub list_response: Option<Value>,
    /// The directory of the table's namespace (explain's `--namespace-location`).
    pub namespace_location: Option<String>,
    /// The metadata of the table a commit changes (explain's `--table-metadata`).
    pub table_metadata: Option<Value>,
    #[serde(default)]
    pub ownership_mode: OwnershipMode,
    pub claim_roles: Option<Vec<String>>,
    pub expect: Expect,
}

fn yes() -> bool {
    true
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    pub status: Option<u16>,
    /// `read`, `write`, or `none` for explain's `null`.
    pub credential: Option<Credential>,
    /// The visible list entries, compared exactly and in order.
    pub visible: Option<Vec<Value>>,
    /// The read restrictions that apply (docs/design.md §8): `none`, or an object whose keys
    /// (`trusted`, `applied` — the entries' names in order —, `columns`, `row_filter`) are each
    /// compared with `explain`'s `"restrictions"` when given.
    pub restrictions: Option<Value>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Credential {
    Read,
    Write,
    None,
}

impl Credential {
    fn as_explained(self) -> Option<&'static str> {
        match self {
            Self::Read => Some("read"),
            Self::Write => Some("write"),
            Self::None => None,
        }
    }
}

impl Case {
    /// A case from its JSON form (the conformance tests read files into JSON values).
    pub fn from_value(value: &Value) -> Result<Self, String> {
        Self::deserialize(value).map_err(|e| e.to_string())
    }
}

/// Reads every document of a case file's text, strictly: unknown keys and duplicate keys are
/// errors, and so is a case that expects nothing (it could never fail).
pub fn parse_file(text: &str) -> Result<Vec<Document>, CaseError> {
    let mut options = serde_saphyr::Options::default();
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::Error;
    let values: Vec<Value> = serde_saphyr::from_multiple_with_options(text, options)
        .map_err(|e| CaseError::Yaml(e.without_snippet().to_string()))?;
    let mut docs = Vec::with_capacity(values.len());
    for (doc, value) in values.into_iter().enumerate() {
        let raw = RawDocument::deserialize(value).map_err(|e| CaseError::Document { doc, message: e.to_string() })?;
        let mut cases = Vec::with_capacity(raw.cases.len());
        for (i, case) in raw.cases.iter().enumerate() {
            let c = Case::from_value(case).map_err(|message| {
                let name = case.get("name").and_then(Value::as_str).unwrap_or("");
                CaseError::Document { doc, message: format!("case {i} `{name}`: {message}") }
            })?;
            if c.expect.is_empty() {
                return Err(CaseError::NoExpectation { doc, name: c.name });
            }
            cases.push(c);
        }
        docs.push(Document { policy: raw.policy, cases });
    }
    if docs.iter().all(|d| d.cases.is_empty()) {
        return Err(CaseError::Empty);
    }
    Ok(docs)
}

impl Expect {
    fn is_empty(&self) -> bool {
        self.status.is_none() && self.credential.is_none() && self.visible.is_none() && self.restrictions.is_none()
    }
}

/// How a case's outcome differed from what it expects.
#[derive(Debug)]
pub struct Mismatch {
    /// `(what, expected, got)` per expectation that failed.
    pub problems: Vec<(&'static str, String, String)>,
    /// The decision's reason, as `explain` gives it.
    pub reason: String,
}

impl std::fmt::Display for Mismatch {
    /// `expected status 403, got 200; expected credential read, got none (reason: ...)`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (what, expected, got)) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "expected {what} {expected}, got {got}")?;
        }
        write!(f, " (reason: {})", self.reason)
    }
}

fn json_text(values: Option<&[Value]>) -> String {
    values.map_or_else(|| "nothing".to_owned(), |v| Value::from(v.to_vec()).to_string())
}

/// Runs `case` against `snapshot` as `explain` would decide it.
pub fn run(snapshot: &Snapshot, case: &Case) -> Result<(), Mismatch> {
    let body = case.body.as_ref().map(|b| b.to_string().into_bytes());
    let list = case.list_response.as_ref().map(|b| b.to_string().into_bytes());
    let settings = Settings { ownership: case.ownership_mode, ..Settings::default() };
    let input = Input {
        method: &case.method,
        target: &case.path,
        principal: Principal {
            user: case.user.clone(),
            groups: case.groups.clone(),
            claim_roles: case.claim_roles.clone(),
        },
        active_roles: case.active_roles.as_deref().map(str::as_bytes),
        body: body.as_deref(),
        exists: case.exists,
        list_response: list.as_deref(),
        namespace_location: case.namespace_location.as_deref(),
        table_metadata: case.table_metadata.as_ref(),
    };
    let got = Explanation::from(decide(snapshot, &settings, &input));
    let mut problems = Vec::new();
    if let Some(status) = case.expect.status
        && got.status != status
    {
        problems.push(("status", status.to_string(), got.status.to_string()));
    }
    if let Some(credential) = case.expect.credential
        && got.credential != credential.as_explained()
    {
        let want = credential.as_explained().unwrap_or("none");
        problems.push(("credential", want.to_owned(), got.credential.unwrap_or("none").to_owned()));
    }
    if let Some(visible) = &case.expect.visible {
        let got_visible: Option<Vec<Value>> = got
            .visible
            .as_ref()
            .map(|v| v.iter().map(|raw| serde_json::from_str(raw.get()).unwrap_or(Value::Null)).collect());
        if got_visible.as_ref() != Some(visible) {
            problems.push(("visible", json_text(Some(visible)), json_text(got_visible.as_deref())));
        }
    }
    if let Some(want) = &case.expect.restrictions {
        restrictions_problems(want, got.restrictions.as_ref(), &mut problems);
    }
    if problems.is_empty() { Ok(()) } else { Err(Mismatch { problems, reason: got.reason }) }
}

/// `expect.restrictions` against `explain`'s `"restrictions"`: `none`, or each key given.
fn restrictions_problems(want: &Value, got: Option<&Value>, problems: &mut Vec<(&'static str, String, String)>) {
    let shown = |v: Option<&Value>| v.map_or_else(|| "none".to_owned(), Value::to_string);
    match (want, got) {
        (Value::String(s), None) if s == "none" => {}
        (Value::String(s), Some(got)) if s == "none" => problems.push(("restrictions", "none".into(), got.to_string())),
        (Value::Object(keys), got) => {
            for (key, expected) in keys {
                let found = match (key.as_str(), got) {
                    ("applied", Some(g)) => g.get("applied").and_then(Value::as_array).map(|entries| {
                        Value::from(entries.iter().filter_map(|e| e.get("name").cloned()).collect::<Vec<_>>())
                    }),
                    (_, Some(g)) => g.get(key).cloned(),
                    (_, None) => None,
                };
                if found.as_ref() != Some(expected) {
                    problems.push(("restrictions", format!("{key} {expected}"), shown(found.as_ref())));
                }
            }
        }
        (other, got) => problems.push(("restrictions", other.to_string(), shown(got))),
    }
}
