//! Runs every case of every file in `../shared/conformance/`, of every `../shared/conformance-*/`
//! folder (rules being built, each with its known-failures list) and of the project's own
//! `tests/conformance/` (DESIGN.md §11) through the code `icegate explain` uses, and fails on any
//! mismatch, naming the case.

use crate::support::shared_dir;
use serde_json::Value;

fn str_field<'a>(case: &'a Value, key: &str) -> Option<&'a str> {
    case.get(key).and_then(Value::as_str)
}

/// Runs one case through the runner `icegate test` uses; `Err` describes the mismatch.
fn run_case(snapshot: &icegate::core::policy::Snapshot, case: &Value) -> Result<(), String> {
    let case = icegate::cli::cases::Case::from_value(case)?;
    icegate::cli::cases::run(snapshot, &case).map_err(|m| m.to_string())
}

/// One YAML document of a conformance file: its policy (as JSON text, and loaded) and cases.
pub(crate) struct Document {
    pub file_name: String,
    pub policy: String,
    pub snapshot: Result<icegate::core::policy::Snapshot, String>,
    pub cases: Vec<Value>,
}

/// Every document of every YAML file in `dir` (each file may hold several documents, each a
/// `policy` with its `cases`), in file-name order.
pub(crate) fn corpus(dir: &std::path::Path) -> Vec<Document> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no conformance files in {}", dir.display());
    let mut documents = Vec::new();
    for file in &files {
        let file_name = file.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(file).unwrap();
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for (i, doc) in docs.iter().enumerate() {
            // JSON is YAML: the policy goes through the same loader as a policy file.
            let policy = serde_json::to_string(&doc["policy"]).unwrap();
            let snapshot = icegate::core::policy::load_str(&format!("{}#{i}", file.display()), &policy)
                .map(|loaded| loaded.snapshot)
                .map_err(|e| e.to_string());
            let cases = doc["cases"].as_array().unwrap().clone();
            documents.push(Document { file_name: file_name.clone(), policy, snapshot, cases });
        }
    }
    documents
}

/// Runs every case of every YAML file in `dir`; returns how many ran and the failures as
/// `FILE: NAME: why`. A document whose policy does not load fails each of its cases.
fn run_dir(dir: &std::path::Path) -> (usize, Vec<String>) {
    let (mut ran, mut failures) = (0, Vec::new());
    for doc in corpus(dir) {
        for case in &doc.cases {
            ran += 1;
            let name = str_field(case, "name").unwrap_or("<unnamed>");
            let outcome = match &doc.snapshot {
                Ok(snapshot) => run_case(snapshot, case),
                Err(e) => Err(format!("the document's policy does not load: {e}")),
            };
            if let Err(why) = outcome {
                failures.push(format!("{}: {name}: {why}", doc.file_name));
            }
        }
    }
    (ran, failures)
}

/// The folders of rules being built, each run beside `../shared/conformance` with the cases that
/// still fail listed, one `FILE: NAME` a line, in `tests/data/FOLDER.known-failures`.
pub(crate) const BEING_BUILT: [&str; 3] = ["conformance-next", "conformance-locations", "conformance-catalogs"];

/// The known failures of `../shared/FOLDER`, one `FILE: NAME` a line.
pub(crate) fn known_failures(folder: &str) -> std::collections::BTreeSet<String> {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let path = root.join(format!("tests/data/{folder}.known-failures"));
    let known_text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    known_text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_owned).collect()
}

/// `FILE: NAME` of a failure written `FILE: NAME: why`.
pub(crate) fn case_key(failure: &str) -> String {
    failure.splitn(3, ": ").take(2).collect::<Vec<_>>().join(": ")
}

/// The failures of a folder being built that are not known, and the known ones that now pass;
/// both must be empty, so the list only shrinks.
pub(crate) fn against_known(folder: &str, failures: &[String]) -> (Vec<String>, Vec<String>) {
    let known = known_failures(folder);
    let failed: std::collections::BTreeSet<String> = failures.iter().map(|f| case_key(f)).collect();
    let unexpected = failures.iter().filter(|f| !known.contains(&case_key(f))).cloned().collect();
    let now_passing = known.iter().filter(|k| !failed.contains(*k)).cloned().collect();
    (unexpected, now_passing)
}

#[test]
fn every_shared_conformance_case_passes() {
    let (ran, failures) = run_dir(&shared_dir("conformance"));
    assert!(failures.is_empty(), "{} of {ran} conformance cases failed:\n{}", failures.len(), failures.join("\n"));
    eprintln!("{ran} conformance cases passed");
}

/// The project's own cases, in the same format (tests/conformance/).
#[test]
fn every_case_of_the_projects_own_conformance_files_passes() {
    let (ran, failures) = run_dir(&std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/conformance"));
    assert!(failures.is_empty(), "{} of {ran} own conformance cases failed:\n{}", failures.len(), failures.join("\n"));
}

/// Each folder of rules being built (`../shared/conformance-next`, `-locations`, `-catalogs`)
/// fails exactly the cases its known-failures list names: a listed case that passes fails this
/// test too, so the lists only shrink.
#[test]
fn folders_being_built_fail_exactly_their_known_failures() {
    let mut problems = Vec::new();
    for folder in BEING_BUILT {
        let (ran, failures) = run_dir(&shared_dir(folder));
        let (unexpected, now_passing) = against_known(folder, &failures);
        if !unexpected.is_empty() || !now_passing.is_empty() {
            problems.push(format!(
                "{folder} ({ran} cases): {} failed that are not known failures:\n{}\n{} known failures now pass \
                 (remove them from tests/data/{folder}.known-failures):\n{}",
                unexpected.len(),
                unexpected.join("\n"),
                now_passing.len(),
                now_passing.join("\n"),
            ));
        }
        eprintln!("{folder}: {ran} cases run, {} failed as known", failures.len());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
