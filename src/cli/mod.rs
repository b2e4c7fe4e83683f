//! The command line (docs/design.md §10): `icegate check` and `icegate explain` here; `serve`,
//! `owners` and the policy-as-code commands (`test`, `who-can`, `diff`, `report`) dispatched.

pub mod analysis;
pub mod cases;
pub mod owners;
pub mod policy;
pub mod run;
pub mod source;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

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
        /// A serving config: also warn about policy catalogs no upstream serves, and upstreams
        /// naming catalogs the policy does not have.
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Decide one request offline and print the decision as JSON.
    Explain(policy::ExplainArgs),
    /// Run the proxy in front of an Iceberg REST catalog.
    Serve(ServeArgs),
    /// The policy a config's source gives: `export --config FILE` prints it as a policy file.
    #[command(subcommand)]
    Policy(PolicyCommand),
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

#[derive(Debug, Subcommand)]
enum PolicyCommand {
    /// Print the snapshot the config's policy source (`policy_source = "gravitino"`) gives, as a
    /// policy file in the YAML format every other command reads.
    Export {
        #[arg(long)]
        config: PathBuf,
    },
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
        Command::Check { policy, config } => policy::check(&policy, config.as_deref()),
        Command::Explain(args) => policy::explain(&args),
        Command::Serve(args) => serve(args),
        Command::Policy(PolicyCommand::Export { config }) => source::export(&config),
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
    let config = match run::load_config(args.config.as_deref(), overrides) {
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
