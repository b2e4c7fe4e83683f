//! `icegate policy export --config FILE`: the snapshot a config's policy source gives, as a
//! policy file in §3's YAML (docs/design.md §9), and the one read of a Gravitino source that
//! `export` and `explain --config` share.

use crate::config::Config;
use crate::core::policy::Snapshot;
use crate::core::policy::gravitino;
use std::path::Path;
use std::process::ExitCode;

/// Reads the config's Gravitino metalake once, refusing an implausible read as serving does.
pub fn read_gravitino(config: &Config) -> Result<Option<gravitino::Document>, String> {
    let Some(g) = config.gravitino_source() else { return Ok(None) };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let reader = crate::ops::gravitino::Reader::new(g).map_err(|e| e.to_string())?;
    let read = runtime.block_on(reader.read()).map_err(|e| e.to_string())?;
    gravitino::check_plausible(&read.metalake, g.service_user().unwrap_or_default(), None, g.allow_no_roles)
        .map_err(|e| e.to_string())?;
    Ok(Some(read.document))
}

/// The snapshot of a Gravitino source, `None` for a file source.
pub fn gravitino_snapshot(config: &Config) -> Result<Option<Snapshot>, String> {
    let Some(document) = read_gravitino(config)? else { return Ok(None) };
    let loaded = gravitino::load(gravitino::source(&document)).map_err(|e| e.to_string())?;
    Ok(Some(loaded.snapshot))
}

/// `icegate policy export`: exit 0 with the YAML on stdout; 1 when the source cannot be read
/// or does not make a valid policy; 2 on a bad config.
pub fn export(config_file: &Path) -> ExitCode {
    let config = match super::run::load_config(Some(config_file), crate::config::Overrides::default()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let Some(g) = config.gravitino_source() else {
        let path = config.policy.as_deref().map(|p| p.display().to_string()).unwrap_or_default();
        eprintln!("error: `policy_source` is `file`: the policy is already a policy file (`{path}`)");
        return ExitCode::from(2);
    };
    let origin = format!("{} metalake `{}`", g.url, g.metalake);
    let document = match read_gravitino(&config) {
        Ok(Some(d)) => d,
        Ok(None) => return ExitCode::from(2),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    // what serving would refuse, export refuses too
    if let Err(e) = gravitino::load(gravitino::source(&document)) {
        eprintln!("error: {e}");
        return ExitCode::from(1);
    }
    print!("{}", gravitino::to_yaml(&document, &origin));
    ExitCode::SUCCESS
}
