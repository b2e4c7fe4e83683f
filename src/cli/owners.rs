//! `icegate owners list|set|remove`: inspect and correct the configured ownership store. A
//! running icegate picks up the change within `owners.poll_interval_seconds`.

use crate::core::ownership::{Kind, Record, Source};
use crate::core::policy::model::OwnerType;
use crate::ops::owners::{Change, Config, Owners};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct OwnersArgs {
    #[command(subcommand)]
    command: OwnersCommand,
}

#[derive(Debug, clap::Subcommand)]
enum OwnersCommand {
    /// Print every record (type, full name, owner type, owner, source, created at), tab-separated.
    List {
        /// The config file whose `[owners]` section names the store.
        #[arg(long)]
        config: PathBuf,
    },
    /// Make a user (or group) the owner of an object.
    Set {
        #[arg(long)]
        config: PathBuf,
        /// SCHEMA, TABLE or VIEW.
        #[arg(long = "type")]
        kind: String,
        /// The Gravitino full name, e.g. `prod.sales.orders`.
        #[arg(long)]
        name: String,
        #[arg(long, conflicts_with = "group", required_unless_present = "group")]
        user: Option<String>,
        #[arg(long)]
        group: Option<String>,
    },
    /// Remove an object's record (exit 1 when there was none).
    Remove {
        #[arg(long)]
        config: PathBuf,
        #[arg(long = "type")]
        kind: String,
        #[arg(long)]
        name: String,
    },
    /// Forget a pending intent (`list` shows them) the running icegate cannot settle, e.g. when
    /// the upstream refuses its existence checks; set the record by hand if it happened.
    Forget {
        #[arg(long)]
        config: PathBuf,
        /// The intent's id, as `list` prints it.
        #[arg(long)]
        intent: i64,
    },
}

/// The `[owners]` section of a config file; other sections are not read. Without one, the
/// embedded store at its default path, as `icegate serve` would use it.
fn owners_config(path: &Path) -> Result<Config, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("cannot read config file `{}`: {e}", path.display()))?;
    let mut file: toml::Table =
        toml::from_str(&text).map_err(|e| format!("invalid config file `{}`: {e}", path.display()))?;
    let section = file.remove("owners").unwrap_or_else(|| toml::Value::Table(toml::Table::new()));
    let config: Config = section.try_into().map_err(|e| format!("invalid `[owners]` in `{}`: {e}", path.display()))?;
    config.validate().map_err(|e| e.to_string())?;
    if config.kind() == crate::ops::owners::StoreKind::Off {
        return Err(format!("`{}` turns the ownership store off (`[owners] store = \"off\"`)", path.display()));
    }
    Ok(config)
}

fn kind(s: &str) -> Result<Kind, String> {
    Kind::parse(s).ok_or_else(|| format!("unknown type `{s}`; expected `SCHEMA`, `TABLE` or `VIEW`"))
}

pub fn main(args: &OwnersArgs) -> ExitCode {
    match run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// The store `config` names, read once (for `icegate explain --config`): an empty index when
/// it is off.
pub fn read_index(config: &Config) -> Result<std::sync::Arc<crate::core::ownership::OwnerIndex>, String> {
    let owners = Owners::new(config).map_err(|e| e.to_string())?;
    if !owners.is_on() {
        return Ok(owners.index());
    }
    runtime()?.block_on(owners.refresh()).map_err(|e| e.to_string())?;
    Ok(owners.index())
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))
}

fn run(args: &OwnersArgs) -> Result<ExitCode, String> {
    let config = match &args.command {
        OwnersCommand::List { config }
        | OwnersCommand::Set { config, .. }
        | OwnersCommand::Remove { config, .. }
        | OwnersCommand::Forget { config, .. } => owners_config(config)?,
    };
    runtime()?.block_on(command(args, &config))
}

async fn command(args: &OwnersArgs, config: &Config) -> Result<ExitCode, String> {
    let owners = Owners::new(config).map_err(|e| e.to_string())?;
    owners.refresh().await.map_err(|e| e.to_string())?;
    match &args.command {
        OwnersCommand::List { .. } => {
            for r in owners.index().records() {
                let owner_type = if r.owner_type == OwnerType::User { "USER" } else { "GROUP" };
                println!(
                    "{}\t{}\t{owner_type}\t{}\t{}\t{}",
                    r.kind.as_str(),
                    r.full_name,
                    r.owner,
                    r.source.as_str(),
                    r.created_at
                );
            }
            for (id, intent) in owners.pending(std::time::Duration::ZERO).await.map_err(|e| e.to_string())? {
                let what = match &intent.change {
                    Change::Create(o) => format!("create of {} `{}`", o.kind.as_str(), o.full_name),
                    Change::Drop(o) => format!("drop of {} `{}`", o.kind.as_str(), o.full_name),
                    Change::Rename { from, to } => {
                        format!("rename of {} `{}` to `{}`", from.kind.as_str(), from.full_name, to.full_name)
                    }
                };
                eprintln!("pending: {what} by `{}` (intent {id}; reconciled by the running icegate)", intent.user);
            }
            Ok(ExitCode::SUCCESS)
        }
        OwnersCommand::Set { kind: k, name, user, group, .. } => {
            let (owner, owner_type) = match (user, group) {
                (Some(u), _) => (u.clone(), OwnerType::User),
                (None, Some(g)) => (g.clone(), OwnerType::Group),
                (None, None) => return Err("`--user` or `--group` is required".into()),
            };
            if owner.is_empty() || name.is_empty() {
                return Err("the owner and `--name` must not be empty".into());
            }
            let record = Record {
                kind: kind(k)?,
                full_name: name.clone(),
                owner,
                owner_type,
                created_at: crate::core::text::rfc3339_now(),
                source: Source::Operator,
            };
            owners.set(record).await.map_err(|e| e.to_string())?;
            Ok(ExitCode::SUCCESS)
        }
        OwnersCommand::Forget { intent, .. } => {
            if owners.forget(*intent).await.map_err(|e| e.to_string())? {
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("no pending intent {intent}");
                Ok(ExitCode::from(1))
            }
        }
        OwnersCommand::Remove { kind: k, name, .. } => {
            if owners.remove(kind(k)?, name.clone()).await.map_err(|e| e.to_string())? {
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("no record for {} `{name}`", k.to_uppercase());
                Ok(ExitCode::from(1))
            }
        }
    }
}
