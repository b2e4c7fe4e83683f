//! `icegate check` and `icegate explain` (docs/design.md §10): a policy validated, and one request
//! decided offline, printed as the JSON the contract fixes.

use crate::core::decide::Settings;
use crate::core::offline::{self, Input};
use crate::core::ownership::OwnerIndex;
use crate::core::policy::snapshot::Snapshot;
use crate::core::policy::{self, LoadError, Loaded};
use crate::core::roles::{OwnershipMode, Principal};
use clap::ValueEnum;
use serde::Serialize;
use serde_json::value::RawValue;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Ownership {
    Always,
    Narrowed,
    Caller,
}

#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// The policy file or directory (with `--config`: instead of the config's `policy`).
    #[arg(long, required_unless_present = "config")]
    policy: Option<PathBuf>,
    /// A serving config file: its policy, its settings and the owners its ownership store
    /// has recorded, so the decision is the one `icegate serve --config FILE` enforces.
    #[arg(long)]
    config: Option<PathBuf>,
    #[arg(long)]
    user: String,
    /// An identity-provided group (repeatable).
    #[arg(long = "group")]
    groups: Vec<String>,
    /// The raw `X-Gravitino-Active-Roles` value; use `--active-roles=VALUE` for values
    /// starting with `-`.
    #[arg(long, allow_hyphen_values = true)]
    active_roles: Option<String>,
    /// Whether the named object exists upstream.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    exists: bool,
    /// A JSON request body.
    #[arg(long)]
    body: Option<PathBuf>,
    /// The upstream's JSON list response.
    #[arg(long)]
    list_response: Option<PathBuf>,
    /// The directory of the table's namespace, as the upstream reports it (its `location`
    /// property): a location chosen by a caller who does not own the catalog must lie inside
    /// it; without it such a location is refused.
    #[arg(long, value_name = "LOCATION")]
    namespace_location: Option<String>,
    /// The metadata of the table a commit changes, as the upstream's loadTable reports it (a
    /// JSON file holding its `metadata`): decides whether the commit moves a restricted column
    /// onto another field; without it, explain says that the upstream's metadata decides.
    #[arg(long, value_name = "FILE")]
    table_metadata: Option<PathBuf>,
    /// `narrowing.ownership` [default: the config's, else always].
    #[arg(long, value_enum)]
    ownership: Option<Ownership>,
    /// An identity-bound active-roles claim, comma-separated; `--claim-roles=` is an empty claim.
    #[arg(long)]
    claim_roles: Option<String>,
    /// The HTTP method.
    method: String,
    /// The raw request target (path and optional query), taken literally.
    target: String,
}

/// The JSON `explain` prints (docs/design.md §10).
#[derive(Debug, Serialize)]
pub struct Explanation {
    pub status: u16,
    pub operation: Option<&'static str>,
    pub credential: Option<&'static str>,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visible: Option<Vec<Box<RawValue>>>,
    /// The read restrictions that apply (docs/design.md §8), absent when none does: added to
    /// the §10 output without changing its other keys.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restrictions: Option<serde_json::Value>,
}

impl From<offline::Outcome> for Explanation {
    fn from(o: offline::Outcome) -> Self {
        let forwarded = o.status == 200;
        Self {
            status: o.status,
            operation: o.operation.map(|op| op.as_str()),
            credential: o.credential.filter(|_| forwarded).map(|s| s.as_str()),
            reason: o.reason,
            visible: o.visible.filter(|_| forwarded),
            restrictions: o.restrictions.as_ref().map(crate::core::restrictions::Applied::to_json),
        }
    }
}

/// Every diagnostic of a policy that did not load, one `FILE:LINE: message` per line.
pub(crate) fn print_errors(e: &LoadError) {
    let mut err = std::io::stderr().lock();
    for d in e.diagnostics() {
        let _ = writeln!(err, "{d}");
    }
}

pub fn check(path: &Path, config: Option<&Path>) -> ExitCode {
    let config = match config.map(|file| {
        let overrides = crate::config::Overrides { policy: Some(path.to_owned()), ..Default::default() };
        super::run::load_config(Some(file), overrides)
    }) {
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
        Some(Ok(c)) => Some(c),
        None => None,
    };
    match policy::load_path(path) {
        Ok(Loaded { snapshot, warnings }) => {
            let mut err = std::io::stderr().lock();
            for w in &warnings {
                let _ = writeln!(err, "warning: {w}");
            }
            for w in config.as_ref().map(|c| serving_warnings(&snapshot, c)).unwrap_or_default() {
                let _ = writeln!(err, "warning: {w}");
            }
            println!("{}", snapshot.stats());
            ExitCode::SUCCESS
        }
        Err(e) => {
            print_errors(&e);
            ExitCode::from(1)
        }
    }
}

/// What a policy and a serving config disagree on (docs/design.md §7): a policy catalog no
/// upstream serves is 403 on every request, an upstream's catalog the policy does not name
/// serves nobody, and a default upstream that does not serve the default catalog answers
/// getConfig for clients whose requests may go elsewhere; warnings, since any may be on purpose
/// while a policy or a config changes.
fn serving_warnings(snapshot: &Snapshot, config: &crate::config::Config) -> Vec<String> {
    let Some(served) = crate::serve::upstream::upstreams::served_catalogs(config) else { return Vec::new() };
    let named = snapshot.catalog_names();
    let mut warnings: Vec<String> = named
        .iter()
        .filter(|c| !served.contains(c))
        .map(|c| format!("catalog `{c}` is served by no upstream: every request to it is refused (403)"))
        .collect();
    // getConfig without `warehouse` goes to the default upstream; an answer without a `prefix`
    // sends its clients' unprefixed requests to the default catalog's upstream
    let entries = config.upstream_entries();
    if let (Some(default), Some(catalog)) = (entries.iter().find(|e| e.default), snapshot.catalog_for_prefix(None))
        && !default.catalogs.unwrap_or_default().iter().any(|c| c == catalog)
    {
        warnings.push(format!(
            "the default upstream `{}` does not serve the default catalog `{catalog}`: a getConfig without \
             `warehouse` is answered by `{}`, and when that answer has no `prefix`, its clients' requests \
             go to the upstream of `{catalog}`",
            default.name, default.name
        ));
    }
    for entry in &entries {
        for c in entry.catalogs.unwrap_or_default() {
            if !named.contains(c) {
                warnings
                    .push(format!("upstream `{}` serves catalog `{c}`, which the policy does not name", entry.name));
            }
        }
    }
    warnings
}

fn read_file(what: &str, path: &Path) -> Result<Vec<u8>, ExitCode> {
    std::fs::read(path).map_err(|e| {
        eprintln!("error: cannot read {what} `{}`: {e}", path.display());
        ExitCode::from(2)
    })
}

/// A JSON object read from `path`.
fn read_json(what: &str, path: &Path) -> Result<serde_json::Value, ExitCode> {
    let bytes = read_file(what, path)?;
    match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(value @ serde_json::Value::Object(_)) => Ok(value),
        Ok(_) => {
            eprintln!("error: {what} `{}` is not a JSON object", path.display());
            Err(ExitCode::from(2))
        }
        Err(e) => {
            eprintln!("error: {what} `{}` is not JSON: {e}", path.display());
            Err(ExitCode::from(2))
        }
    }
}

/// What `explain` decides with: the policy, the settings and the ownership store's owners
/// (none without `--config`).
fn explain_context(args: &ExplainArgs) -> Result<(Snapshot, Settings, Arc<OwnerIndex>), ExitCode> {
    let (policy, settings, owners) = match &args.config {
        None => (args.policy.clone().unwrap_or_default(), Settings::default(), Arc::default()),
        Some(file) => {
            let overrides = crate::config::Overrides { policy: args.policy.clone(), ..Default::default() };
            let config = super::run::load_config(Some(file), overrides).map_err(|e| {
                eprintln!("error: {e}");
                ExitCode::from(2)
            })?;
            let owners = crate::cli::owners::read_index(&config.owners).map_err(|e| {
                eprintln!("error: {e}");
                ExitCode::from(2)
            })?;
            // explain decides without upstreams: a catalog is decided whichever upstream serves it
            let settings = Settings { served_catalogs: None, ..crate::serve::pipeline::state::settings(&config) };
            // a Gravitino source is read once, as serving reads it
            match super::source::gravitino_snapshot(&config) {
                Ok(Some(snapshot)) => return Ok(with_ownership(args, snapshot, settings, owners)),
                Ok(None) => {}
                Err(e) => {
                    eprintln!("error: {e}");
                    return Err(ExitCode::from(2));
                }
            }
            (config.policy.clone().unwrap_or_default(), settings, owners)
        }
    };
    let snapshot = policy::load_path(&policy).map_err(|e| {
        print_errors(&e);
        ExitCode::from(2)
    })?;
    Ok(with_ownership(args, snapshot.snapshot, settings, owners))
}

/// The context with `--ownership` applied.
fn with_ownership(
    args: &ExplainArgs,
    snapshot: Snapshot,
    mut settings: Settings,
    owners: Arc<OwnerIndex>,
) -> (Snapshot, Settings, Arc<OwnerIndex>) {
    if let Some(mode) = args.ownership {
        settings.ownership = match mode {
            Ownership::Always => OwnershipMode::Always,
            Ownership::Narrowed => OwnershipMode::Narrowed,
            Ownership::Caller => OwnershipMode::Caller,
        };
    }
    (snapshot, settings, owners)
}

pub fn explain(args: &ExplainArgs) -> ExitCode {
    let (snapshot, settings, owners) = match explain_context(args) {
        Ok(context) => context,
        Err(code) => return code,
    };
    let body = match args.body.as_deref().map(|p| read_file("body", p)).transpose() {
        Ok(b) => b,
        Err(code) => return code,
    };
    let list_response = match args.list_response.as_deref().map(|p| read_file("list response", p)).transpose() {
        Ok(b) => b,
        Err(code) => return code,
    };
    let table_metadata = match args.table_metadata.as_deref().map(|p| read_json("table metadata", p)).transpose() {
        Ok(m) => m,
        Err(code) => return code,
    };
    let claim_roles = args.claim_roles.as_ref().map(|c| {
        c.split(',').map(|r| r.trim_matches([' ', '\t'])).filter(|r| !r.is_empty()).map(str::to_owned).collect()
    });
    let input = Input {
        method: &args.method,
        target: &args.target,
        principal: Principal { user: args.user.clone(), groups: args.groups.clone(), claim_roles },
        active_roles: args.active_roles.as_deref().map(str::as_bytes),
        body: body.as_deref(),
        exists: args.exists,
        list_response: list_response.as_deref(),
        namespace_location: args.namespace_location.as_deref(),
        table_metadata: table_metadata.as_ref(),
    };
    let explanation = Explanation::from(offline::decide_with_owners(&snapshot, &owners, &settings, &input));
    match serde_json::to_string(&explanation) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: cannot render the decision: {e}");
            ExitCode::from(2)
        }
    }
}
