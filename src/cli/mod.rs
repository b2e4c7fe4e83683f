//! The command line (DESIGN.md §10): `icegate check` and `icegate explain` here; `serve`,
//! `owners` and the policy-as-code commands (`test`, `who-can`, `diff`, `report`) dispatched.

pub mod analysis;
pub mod cases;
pub mod owners;
pub mod run;

use crate::core::decide::{self, Input, Settings};
use crate::core::ownership::OwnerIndex;
use crate::core::policy::snapshot::Snapshot;
use crate::core::policy::{self, LoadError, Loaded};
use crate::core::roles::{OwnershipMode, Principal};
use clap::{Parser, Subcommand, ValueEnum};
use serde::Serialize;
use serde_json::value::RawValue;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Debug, Parser)]
#[command(name = "icegate", version, about = "An authorizing reverse proxy for Apache Iceberg REST catalogs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate a policy file or directory and print its counts.
    Check {
        #[arg(long)]
        policy: PathBuf,
    },
    /// Decide one request offline and print the decision as JSON.
    Explain(ExplainArgs),
    /// Run the proxy in front of an Iceberg REST catalog.
    Serve(ServeArgs),
    /// Inspect and correct the ownership store: `list`, `set`, `remove`.
    Owners(crate::cli::owners::OwnersArgs),
    /// Run decision cases against a policy; print each failure and `N passed, M failed`.
    Test(crate::cli::analysis::TestArgs),
    /// List every user and group that has a privilege on an object (or owns it: `OWNER`).
    WhoCan(crate::cli::analysis::WhoCanArgs),
    /// List every change in effective access between two policies: `--policy OLD --policy NEW`.
    Diff(crate::cli::analysis::DiffArgs),
    /// Write a self-contained HTML page of who has what, optionally against an older policy.
    Report(crate::cli::analysis::ReportArgs),
}

#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// A TOML config file (every key optional; flags override it).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1:8181].
    #[arg(long)]
    listen: Option<std::net::SocketAddr>,
    /// Address of the admin listener [default: 127.0.0.1:9181].
    #[arg(long)]
    admin_listen: Option<std::net::SocketAddr>,
    /// The upstream catalog, e.g. `http://127.0.0.1:8080` (with its base path, if any).
    #[arg(long)]
    upstream: Option<String>,
    /// The policy file or directory.
    #[arg(long)]
    policy: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Ownership {
    Always,
    Narrowed,
    Caller,
}

#[derive(Debug, clap::Args)]
struct ExplainArgs {
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

/// The JSON `explain` prints (DESIGN.md §10).
#[derive(Debug, Serialize)]
pub struct Explanation {
    pub status: u16,
    pub operation: Option<&'static str>,
    pub credential: Option<&'static str>,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visible: Option<Vec<Box<RawValue>>>,
}

impl From<decide::Outcome> for Explanation {
    fn from(o: decide::Outcome) -> Self {
        let forwarded = o.status == 200;
        Self {
            status: o.status,
            operation: o.operation.map(|op| op.as_str()),
            credential: o.credential.filter(|_| forwarded).map(|s| s.as_str()),
            reason: o.reason,
            visible: o.visible.filter(|_| forwarded),
        }
    }
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli.command {
        Command::Check { policy } => check(&policy),
        Command::Explain(args) => explain(&args),
        Command::Serve(args) => serve(args),
        Command::Owners(args) => crate::cli::owners::main(&args),
        Command::Test(args) => crate::cli::analysis::test(&args),
        Command::WhoCan(args) => crate::cli::analysis::who_can(&args),
        Command::Diff(args) => crate::cli::analysis::diff(&args),
        Command::Report(args) => crate::cli::analysis::report(&args),
    }
}

fn serve(args: ServeArgs) -> ExitCode {
    let overrides = crate::config::Overrides {
        listen: args.listen,
        admin_listen: args.admin_listen,
        upstream: args.upstream,
        policy: args.policy,
    };
    let config = match crate::config::Config::load(args.config.as_deref(), overrides) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    init_logs();
    match crate::cli::run::run(config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// Logs on stderr: `ICEGATE_LOG` filters them (default `info`); `ICEGATE_LOG_FORMAT=json` writes
/// one JSON object per line (for Kubernetes' log collectors), otherwise text, coloured only
/// when stderr is a terminal.
fn init_logs() {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_env("ICEGATE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_writer(std::io::stderr).with_env_filter(filter);
    let _ = if std::env::var("ICEGATE_LOG_FORMAT").is_ok_and(|f| f == "json") {
        builder.json().with_current_span(false).try_init()
    } else {
        builder.with_ansi(std::io::stderr().is_terminal()).try_init()
    };
}

/// Every diagnostic of a policy that did not load, one `FILE:LINE: message` per line.
pub(crate) fn print_errors(e: &LoadError) {
    let mut err = std::io::stderr().lock();
    for d in e.diagnostics() {
        let _ = writeln!(err, "{d}");
    }
}

fn check(path: &Path) -> ExitCode {
    match policy::load_path(path) {
        Ok(Loaded { snapshot, warnings }) => {
            let mut err = std::io::stderr().lock();
            for w in &warnings {
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

fn read_file(what: &str, path: &Path) -> Result<Vec<u8>, ExitCode> {
    std::fs::read(path).map_err(|e| {
        eprintln!("error: cannot read {what} `{}`: {e}", path.display());
        ExitCode::from(2)
    })
}

/// What `explain` decides with: the policy, the settings and the ownership store's owners
/// (none without `--config`).
fn explain_context(args: &ExplainArgs) -> Result<(Snapshot, Settings, Arc<OwnerIndex>), ExitCode> {
    let (policy, mut settings, owners) = match &args.config {
        None => (args.policy.clone().unwrap_or_default(), Settings::default(), Arc::default()),
        Some(file) => {
            let overrides = crate::config::Overrides { policy: args.policy.clone(), ..Default::default() };
            let config = crate::config::Config::load(Some(file), overrides).map_err(|e| {
                eprintln!("error: {e}");
                ExitCode::from(2)
            })?;
            let owners = crate::cli::owners::read_index(&config.owners).map_err(|e| {
                eprintln!("error: {e}");
                ExitCode::from(2)
            })?;
            (config.policy.clone().unwrap_or_default(), config.decide_settings(), owners)
        }
    };
    if let Some(mode) = args.ownership {
        settings.ownership = match mode {
            Ownership::Always => OwnershipMode::Always,
            Ownership::Narrowed => OwnershipMode::Narrowed,
            Ownership::Caller => OwnershipMode::Caller,
        };
    }
    let snapshot = policy::load_path(&policy).map_err(|e| {
        print_errors(&e);
        ExitCode::from(2)
    })?;
    Ok((snapshot.snapshot, settings, owners))
}

fn explain(args: &ExplainArgs) -> ExitCode {
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
    };
    let explanation = Explanation::from(decide::decide_with_owners(&snapshot, &owners, &settings, &input));
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
