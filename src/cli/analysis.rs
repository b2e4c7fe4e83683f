//! The policy-as-code commands (docs/design.md §10): `icegate test`, `who-can`, `diff` and
//! `report`: arguments, reading files, printing, exit codes.

use super::cases::{self, Document};
use crate::cli::policy::print_errors;
use crate::core::analysis::access::{Object, Right};
use crate::core::analysis::{diff, report, who_can};
use crate::core::policy::model::ObjectType;
use crate::core::policy::{self, Snapshot};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit code for bad input: arguments, unreadable files, invalid policies or cases.
const BAD_INPUT: u8 = 2;

#[derive(Debug, clap::Args)]
pub struct TestArgs {
    /// The policy the cases run against, unless a document of a case file carries its own.
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Case files (docs/design.md §11); each may hold several YAML documents.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct WhoCanArgs {
    #[arg(long)]
    policy: PathBuf,
    /// A privilege (`SELECT_TABLE`, ...) or `OWNER`.
    privilege: String,
    /// METALAKE, CATALOG, SCHEMA, TABLE, VIEW or FUNCTION.
    #[arg(value_name = "TYPE")]
    kind: String,
    /// The object's Gravitino full name, e.g. `prod.sales.orders`.
    full_name: String,
}

#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The old policy, then the new one: `--policy OLD --policy NEW`.
    #[arg(long = "policy", num_args = 1, required = true)]
    policies: Vec<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    #[arg(long)]
    policy: PathBuf,
    /// The HTML file to write.
    #[arg(long)]
    out: PathBuf,
    /// An older policy: the report then shows what the change gains and loses.
    #[arg(long)]
    diff: Option<PathBuf>,
}

fn bad(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(BAD_INPUT)
}

fn load(path: &Path) -> Result<Snapshot, ExitCode> {
    policy::load_path(path).map(|l| l.snapshot).map_err(|e| {
        print_errors(&e);
        ExitCode::from(BAD_INPUT)
    })
}

/// Prints one JSON object per line; a closed stdout (`| head`) ends the listing quietly.
fn print_lines<T: serde::Serialize>(lines: &[T]) {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in lines {
        if serde_json::to_writer(&mut out, line).is_err() || writeln!(out).is_err() {
            return;
        }
    }
    let _ = out.flush();
}

/// `icegate test`: exit 0 when every case passed, 1 when one failed, 2 on bad input.
pub fn test(args: &TestArgs) -> ExitCode {
    let default = match args.policy.as_deref().map(load).transpose() {
        Ok(p) => p,
        Err(code) => return code,
    };
    // Everything is read and checked before anything runs, so bad input never half-runs.
    let mut files: Vec<(&Path, Vec<Loaded>)> = Vec::new();
    let mut problems = Vec::new();
    for path in &args.files {
        match read_case_file(path, default.is_some()) {
            Ok(docs) => files.push((path, docs)),
            Err(e) => problems.push(format!("{}: {e}", path.display())),
        }
    }
    if !problems.is_empty() {
        return bad(problems.join("\nerror: "));
    }
    let (mut passed, mut failed) = (0usize, 0usize);
    let mut out = std::io::stdout().lock();
    for (path, docs) in &files {
        for (doc, own) in docs {
            let Some(snapshot) = own.as_ref().or(default.as_ref()) else { continue };
            for case in &doc.cases {
                match cases::run(snapshot, case) {
                    Ok(()) => passed += 1,
                    Err(mismatch) => {
                        failed += 1;
                        let _ = writeln!(out, "FAIL {}: {}: {mismatch}", path.display(), case.name);
                    }
                }
            }
        }
    }
    let _ = writeln!(out, "{passed} passed, {failed} failed");
    if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

/// A document of a case file, with the policy it carries, loaded.
type Loaded = (Document, Option<Snapshot>);

/// A case file's documents.
fn read_case_file(path: &Path, has_default: bool) -> Result<Vec<Loaded>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let docs = cases::parse_file(&text).map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(docs.len());
    for (i, doc) in docs.into_iter().enumerate() {
        let own = match &doc.policy {
            // JSON is YAML: the document's policy goes through the loader of policy files.
            Some(p) => match policy::load_str(&format!("{}#{i}", path.display()), &p.to_string()) {
                Ok(l) => Some(l.snapshot),
                Err(e) => {
                    let messages: Vec<&str> = e.diagnostics().iter().map(|d| d.message.as_str()).collect();
                    return Err(format!("document {i}: its policy does not load: {}", messages.join("; ")));
                }
            },
            None if has_default => None,
            None => return Err(format!("document {i} has no `policy` and no `--policy` was given")),
        };
        out.push((doc, own));
    }
    Ok(out)
}

/// `icegate who-can`: exit 0 with the holders, one JSON object per line; 2 on bad input.
pub fn who_can(args: &WhoCanArgs) -> ExitCode {
    let Some(right) = Right::parse(&args.privilege) else {
        return bad(format!("unknown privilege `{}`; expected a privilege name or `OWNER`", args.privilege));
    };
    let Some(kind) = ObjectType::parse(&args.kind) else {
        return bad(format!("unknown object type `{}`", args.kind));
    };
    let snapshot = match load(&args.policy) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let object = match Object::parse(kind, &args.full_name, snapshot.metalake()) {
        Ok(o) => o,
        Err(e) => return bad(e),
    };
    print_lines(&who_can::who_can(&snapshot, right, &object));
    ExitCode::SUCCESS
}

/// Loads two policies at once (a large one takes seconds to parse).
fn load_two(old: &Path, new: &Path) -> Result<(Snapshot, Snapshot), ExitCode> {
    std::thread::scope(|s| {
        let other = s.spawn(|| load(old));
        let new = load(new);
        let old = other.join().unwrap_or(Err(ExitCode::from(BAD_INPUT)));
        Ok((old?, new?))
    })
}

/// `icegate diff`: exit 0 when nothing changes, 1 when something does, 2 on bad input.
pub fn diff(args: &DiffArgs) -> ExitCode {
    let [old, new] = args.policies.as_slice() else {
        return bad("`diff` takes two policies: `--policy OLD --policy NEW`");
    };
    let (old, new) = match load_two(old, new) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let changes = diff::diff(&old, &new);
    print_lines(&changes);
    eprintln!("{}", diff::summary(&changes));
    if changes.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

/// `icegate report`: exit 0 when the page was written, 2 on bad input or a failed write.
pub fn report(args: &ReportArgs) -> ExitCode {
    let (new, old) = match &args.diff {
        Some(old) => match load_two(old, &args.policy) {
            Ok((old, new)) => (new, Some(old)),
            Err(code) => return code,
        },
        None => match load(&args.policy) {
            Ok(new) => (new, None),
            Err(code) => return code,
        },
    };
    let (new_label, old_label) =
        (args.policy.display().to_string(), args.diff.as_ref().map(|p| p.display().to_string()));
    let page = report::render(
        report::Labelled { snapshot: &new, label: &new_label },
        old.as_ref().zip(old_label.as_deref()).map(|(snapshot, label)| report::Labelled { snapshot, label }),
    );
    if let Err(e) = std::fs::write(&args.out, page) {
        return bad(format!("cannot write `{}`: {e}", args.out.display()));
    }
    ExitCode::SUCCESS
}
