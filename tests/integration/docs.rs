//! Issue 16: the README a newcomer reads, and the docs it sends them to, are complete in a clone:
//! every relative link resolves to a file or folder inside the repository, nothing points beside
//! it (`../shared`), the README stays short, and its policy example loads. Issue 29: every test a
//! catalog page cites exists, so a page's "What was tested" cannot outlive its tests.

use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The Markdown files of `dir`.
fn markdown_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect()
}

/// README.md, every docs/*.md and every catalog page (docs/catalogs/*.md).
fn documents() -> Vec<PathBuf> {
    let mut docs = markdown_in(&Path::new(ROOT).join("docs"));
    docs.extend(markdown_in(&Path::new(ROOT).join("docs/catalogs")));
    docs.sort();
    docs.insert(0, Path::new(ROOT).join("README.md"));
    docs
}

/// The targets of the Markdown links and images of `text` (`[..](target)`), outside code.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].trim().to_owned());
            rest = &after[end..];
        }
    }
    out
}

/// The problems of one document's links.
fn link_problems(doc: &Path, text: &str) -> Vec<String> {
    let root = Path::new(ROOT).canonicalize().unwrap();
    let mut problems = Vec::new();
    for target in links(text) {
        if target.starts_with("http://") || target.starts_with("https://") || target.starts_with('#') {
            continue;
        }
        let path = target.split('#').next().unwrap_or_default();
        let resolved = doc.parent().unwrap().join(path);
        match resolved.canonicalize() {
            Ok(p) if p.starts_with(&root) => {}
            Ok(p) => {
                problems.push(format!("{}: `{target}` leads outside the repository ({})", doc.display(), p.display()))
            }
            Err(_) => problems.push(format!("{}: `{target}` does not exist", doc.display())),
        }
    }
    if text.contains("../shared") {
        problems.push(format!("{}: mentions `../shared`, which a clone does not have", doc.display()));
    }
    problems
}

#[test]
fn every_link_of_the_readme_and_the_docs_resolves_inside_the_repository() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        checked += links(&text).len();
        problems.extend(link_problems(&doc, &text));
    }
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(checked > 30, "only {checked} links found: is the link scanner broken?");
}

#[test]
fn the_link_check_sees_broken_and_outside_links() {
    let doc = Path::new(ROOT).join("docs/x.md");
    let text = "[a](design.md) [b](nope.md) [c](../..) [d](https://example.com) ![e](../benches/results/growth.svg)\n```\n[f](in-code.md)\n```\n../shared";
    let problems = link_problems(&doc, text);
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(problems[0].contains("`nope.md` does not exist"));
    assert!(problems[1].contains("`../..` leads outside the repository"));
    assert!(problems[2].contains("`../shared`"));
}

#[test]
fn the_readme_is_short_and_its_policy_example_loads() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 250, "README.md has {lines} lines: move detail into docs/");
    let yaml = readme.split("```yaml\n").nth(1).unwrap().split("```").next().unwrap();
    if let Err(e) = icegate::core::policy::load_str("README.md", yaml) {
        panic!("the README's policy does not load: {e}");
    }
}

/// The tests a document cites: `` `tests/PATH::NAME` `` (a Rust `fn` or Python `def` in that file).
fn cited_tests(text: &str) -> Vec<(String, String)> {
    // a fence's three backticks would flip which spans are code
    let text = text.replace("```", "");
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|code| code.starts_with("tests/"))
        .filter_map(|code| code.split_once("::").map(|(path, name)| (path.to_owned(), name.to_owned())))
        .collect()
}

/// The problems of one document's cited tests: a file that is gone, or a name it no longer defines.
fn citation_problems(doc: &Path, text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for (path, name) in cited_tests(text) {
        let Ok(source) = std::fs::read_to_string(Path::new(ROOT).join(&path)) else {
            problems.push(format!("{}: cites `{path}`, which does not exist", doc.display()));
            continue;
        };
        let defined = [format!("fn {name}("), format!("def {name}(")].iter().any(|d| source.contains(d.as_str()));
        if !defined {
            problems.push(format!("{}: cites `{path}::{name}`, which that file does not define", doc.display()));
        }
    }
    problems
}

#[test]
fn every_test_a_catalog_page_cites_exists() {
    let pages = markdown_in(&Path::new(ROOT).join("docs/catalogs"));
    assert!(pages.len() >= 9, "the index and a page per catalog (Polaris with Open Catalog): {pages:?}");
    let mut problems = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let cited = cited_tests(&text);
        let is_index = page.file_name().is_some_and(|n| n == "README.md");
        assert!(is_index || !cited.is_empty(), "{} cites no tests: {cited:?}", page.display());
        assert!(is_index || text.contains("## What was tested"), "{} has no \"What was tested\"", page.display());
        problems.extend(citation_problems(page, &text));
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_citation_check_sees_a_missing_file_and_a_missing_test() {
    let doc = Path::new(ROOT).join("docs/catalogs/x.md");
    let text = "`tests/integration/docs.rs::every_test_a_catalog_page_cites_exists` \
                `tests/integration/docs.rs::no_such_test` `tests/nope.rs::a` `tests/e2e/clients.py::duck` `not/a::test`";
    assert_eq!(cited_tests(text).len(), 4);
    let problems = citation_problems(&doc, text);
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(problems[0].contains("`tests/integration/docs.rs::no_such_test`, which that file does not define"));
    assert!(problems[1].contains("`tests/nope.rs`, which does not exist"));
}

/// docs/catalogs/README.md's two catalogs behind one icegate: its `[[upstreams]]` config loads
/// and `icegate check --config` finds nothing the config and its policy disagree on.
#[test]
fn the_catalogs_index_example_of_two_catalogs_checks_clean() {
    use crate::cli::{icegate, stderr};
    let page = std::fs::read_to_string(Path::new(ROOT).join("docs/catalogs/README.md")).unwrap();
    let block = |lang: &str| page.split(&format!("```{lang}\n")).nth(1).unwrap().split("```").next().unwrap();
    let dir = crate::support::TempDir::new("docs-catalogs-many");
    let secret = dir.write("secret", "s3cr3t\n");
    let config = block("toml").replace("/etc/icegate/secret/polaris-client-secret", secret.to_str().unwrap());
    let config = dir.write("icegate.toml", &config);
    let policy = dir.write("policy.yaml", block("yaml"));
    let out = icegate(&["check", "--config", config.to_str().unwrap(), "--policy", policy.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    let overrides = icegate::config::Overrides { policy: Some(policy), ..Default::default() };
    let loaded = icegate::config::Config::load(Some(&config), overrides).unwrap();
    let served: Vec<(String, Vec<String>)> =
        loaded.upstreams.iter().map(|u| (u.name.clone().unwrap_or_default(), u.catalogs.clone())).collect();
    assert_eq!(served, [("polaris".into(), vec!["analytics".into()]), ("glue".into(), vec!["glue".into()])]);
}
