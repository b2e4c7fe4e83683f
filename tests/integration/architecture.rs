//! The module graph of `src/` (DESIGN.md §12, issue 17): no import cycle of more than two
//! files, and the layers import one way only. The graph is read from the source text: every
//! `crate::`, `super::` and `self::` path (use trees included) and every path that starts with
//! the name of a child module, outside comments, string literals and test modules, is an edge
//! to the file of the longest module prefix it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The module path of each source file (`src/a/b.rs` and `src/a/b/mod.rs` are `a::b`), test
/// files left out.
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            if parts.last().is_some_and(|l| l == "mod") || parts == ["lib"] {
                parts.pop();
            }
            // the binary's entry point, and test modules kept in files of their own
            if parts == ["main"] || parts.iter().any(|p| p == "tests") || is_test_file(&path) {
                continue;
            }
            out.insert(parts, path);
        }
    }
    out
}

/// A file declared `#[cfg(test)] mod name;` by its parent.
fn is_test_file(path: &Path) -> bool {
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let dir = path.parent().unwrap();
    let parents = [dir.with_extension("rs"), dir.join("mod.rs"), dir.join("lib.rs")];
    parents.iter().filter(|p| p.is_file() && p.as_path() != path).any(|p| {
        let text = std::fs::read_to_string(p).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        lines.windows(2).any(|w| w[0] == "#[cfg(test)]" && w[1].trim_start_matches("pub ") == format!("mod {name};"))
    })
}

/// The text without comments, with string and character literals emptied, and without the
/// inline test module.
fn code_of(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |e| e + 2);
        } else if rest.starts_with('"') || raw_string_start(text, i).is_some() {
            let (open, close) = match raw_string_start(text, i) {
                Some(hashes) => (2 + hashes, format!("\"{}", "#".repeat(hashes))),
                None => (1, "\"".to_owned()),
            };
            let mut j = i + open;
            while j < bytes.len() && !text[j..].starts_with(&close) {
                j += if close == "\"" && bytes[j] == b'\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i = (j + close.len()).min(bytes.len());
        } else if bytes[i] == b'\'' && char_literal_len(rest).is_some() {
            out.push_str("' '");
            i += char_literal_len(rest).unwrap();
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    match out.find("#[cfg(test)]\nmod tests {") {
        Some(at) => out[..at].to_owned(),
        None => out,
    }
}

/// `r"`, `r#"`, ... at `i` (not inside an identifier): the number of `#`.
fn raw_string_start(text: &str, i: usize) -> Option<usize> {
    let rest = &text[i..];
    let after_r = rest.strip_prefix('r')?;
    if i > 0 && text[..i].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let hashes = after_r.len() - after_r.trim_start_matches('#').len();
    after_r[hashes..].starts_with('"').then_some(hashes)
}

/// The length of a character literal at the start of `rest` (`'a'`, `'\n'`, `'\u{1F}'`); `None`
/// for a lifetime.
fn char_literal_len(rest: &str) -> Option<usize> {
    let mut chars = rest.char_indices().skip(1);
    let (_, first) = chars.next()?;
    if first == '\\' {
        let close = rest[2..].find('\'')?;
        return Some(close + 3);
    }
    let (at, next) = chars.next()?;
    (next == '\'').then_some(at + 1)
}

struct Graph {
    modules: BTreeMap<Vec<String>, PathBuf>,
}

impl Graph {
    /// The file of the longest prefix of `path` that is a module (the crate root for none).
    fn resolve(&self, path: &[String]) -> Option<&PathBuf> {
        (0..=path.len()).rev().find_map(|n| self.modules.get(&path[..n]))
    }

    /// Reads a path or use tree at `at` (just after `prefix::`), adding the file of every path
    /// it names to `edges`; returns where it ended.
    fn tree(&self, code: &str, at: usize, mut path: Vec<String>, edges: &mut BTreeSet<PathBuf>) -> usize {
        let skip = |at: usize| code.len() - code[at..].trim_start().len();
        let mut at = skip(at);
        if code[at..].starts_with('{') {
            at += 1;
            loop {
                at = skip(at);
                if code[at..].starts_with('}') {
                    return at + 1;
                }
                at = skip(self.tree(code, at, path.clone(), edges));
                if code[at..].starts_with(',') {
                    at += 1;
                    continue;
                }
                return if code[at..].starts_with('}') { at + 1 } else { at };
            }
        }
        let ident: String = code[at..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if ident.is_empty() || ident == "self" {
            if let Some(file) = self.resolve(&path) {
                edges.insert(file.clone());
            }
            return at + ident.len();
        }
        at += ident.len();
        path.push(ident);
        if code[at..].starts_with("::") {
            return self.tree(code, at + 2, path, edges);
        }
        if let Some(file) = self.resolve(&path) {
            edges.insert(file.clone());
        }
        at
    }

    /// The files `module`'s file imports.
    fn edges(&self, module: &[String], file: &Path) -> BTreeSet<PathBuf> {
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        let mut edges = BTreeSet::new();
        let bytes = code.as_bytes();
        let mut i = 0;
        while let Some(found) = code[i..].find("::") {
            let end = i + found;
            let start = code[..end]
                .char_indices()
                .rev()
                .take_while(|(_, c)| c.is_alphanumeric() || *c == '_')
                .last()
                .map_or(end, |(at, _)| at);
            i = end + 2;
            let word = &code[start..end];
            if word.is_empty() || (start >= 2 && &bytes[start - 2..start] == b"::") {
                continue;
            }
            let base: Option<Vec<String>> = match word {
                "crate" => Some(Vec::new()),
                "self" => Some(module.to_vec()),
                "super" => {
                    // `super::super::...`
                    let mut up = 1;
                    let mut j = i;
                    while code[j..].starts_with("super::") {
                        up += 1;
                        j += "super::".len();
                    }
                    i = j;
                    Some(module[..module.len().saturating_sub(up)].to_vec())
                }
                child => {
                    let mut path = module.to_vec();
                    path.push(child.to_owned());
                    self.modules.contains_key(&path).then_some(path)
                }
            };
            if let Some(base) = base {
                i = self.tree(&code, i, base, &mut edges);
            }
        }
        edges.remove(file);
        edges
    }
}

/// The strongly connected components of more than one file (Tarjan's algorithm).
fn cycles(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct State<'a> {
        edges: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on_stack: BTreeSet<&'a PathBuf>,
        found: Vec<Vec<PathBuf>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a PathBuf) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            let Some((w, _)) = s.edges.get_key_value(w) else { continue };
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.found
}

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn graph() -> (Graph, BTreeMap<PathBuf, BTreeSet<PathBuf>>) {
    let graph = Graph { modules: modules(&src()) };
    let edges = graph.modules.iter().map(|(m, f)| (f.clone(), graph.edges(m, f))).collect();
    (graph, edges)
}

fn shown(files: &[PathBuf]) -> String {
    let src = src();
    files.iter().map(|f| f.strip_prefix(&src).unwrap_or(f).display().to_string()).collect::<Vec<_>>().join(", ")
}

#[test]
fn no_import_cycle_has_more_than_two_files() {
    let (_, edges) = graph();
    let big: Vec<String> =
        cycles(&edges).into_iter().filter(|c| c.len() > 2).map(|c| format!("{} files: {}", c.len(), shown(&c))).collect();
    assert!(big.is_empty(), "import cycles of more than two files:\n{}", big.join("\n"));
}

/// The layer of a file: the first segment of its module path.
fn layer(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.iter().next().unwrap().to_string_lossy().into_owned();
    first.trim_end_matches(".rs").to_owned()
}

/// DESIGN.md §12: `core` is pure and imports no other layer; `config` is plain data and imports
/// no other layer; `ops` does not reach into the serving path.
#[test]
fn layers_import_one_way() {
    let (_, edges) = graph();
    let src = src();
    let allowed: &[(&str, &[&str])] =
        &[("core", &["core"]), ("config", &["config"]), ("ops", &["ops", "core", "config", "error"])];
    let mut wrong = Vec::new();
    for (file, to) in &edges {
        let from = layer(&src, file);
        let Some((_, may)) = allowed.iter().find(|(l, _)| *l == from) else { continue };
        for target in to {
            let target_layer = layer(&src, target);
            if target_layer != "lib" && !may.contains(&target_layer.as_str()) {
                wrong.push(format!("{} imports {}", shown(&[file.clone()]), shown(&[target.clone()])));
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layering:\n{}", wrong.join("\n"));
}

/// The core stays pure: no runtime, HTTP server or database crate in it.
#[test]
fn the_core_names_no_runtime_server_or_database() {
    let src = src();
    let mut found = Vec::new();
    for file in modules(&src).values().filter(|f| layer(&src, f) == "core") {
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        for name in ["tokio::", "hyper::", "hyper_util::", "rusqlite::", "tokio_postgres::", "notify::"] {
            if code.contains(name) {
                found.push(format!("{} names `{name}`", shown(&[file.clone()])));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The reader itself: a cycle written into a scratch tree is found, and comments, strings and
/// test modules are not read as imports.
#[test]
fn the_reader_finds_a_three_file_cycle_and_ignores_comments_and_tests() {
    let dir = std::env::temp_dir().join(format!("icegate-architecture-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("x")).unwrap();
    std::fs::write(dir.join("lib.rs"), "pub mod a;\npub mod b;\npub mod x;\n").unwrap();
    std::fs::write(dir.join("a.rs"), "use crate::{b::{self, B}, x::C};\n// crate::x::nothing\n").unwrap();
    std::fs::write(dir.join("b.rs"), "pub struct B;\nfn f() -> &'static str { \"crate::a\" }\n").unwrap();
    std::fs::write(dir.join("x/mod.rs"), "mod c;\npub use c::C;\n#[cfg(test)]\nmod tests {\n use crate::b::B;\n}\n")
        .unwrap();
    std::fs::write(dir.join("x/c.rs"), "pub struct C(crate::a::A);\nimpl super::super::b::B {}\n").unwrap();
    let graph = Graph { modules: modules(&dir) };
    let edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> =
        graph.modules.iter().map(|(m, f)| (f.clone(), graph.edges(m, f))).collect();
    let names = |f: &PathBuf| f.strip_prefix(&dir).unwrap().display().to_string();
    let of = |f: &str| edges[&dir.join(f)].iter().map(names).collect::<Vec<_>>();
    assert_eq!(of("a.rs"), ["b.rs", "x/mod.rs"]);
    assert!(of("b.rs").is_empty(), "a string is not an import");
    assert_eq!(of("x/mod.rs"), ["x/c.rs"], "a test module is not read");
    assert_eq!(of("x/c.rs"), ["a.rs", "b.rs"]);
    let found = cycles(&edges);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].iter().map(names).collect::<Vec<_>>(), ["a.rs", "x/c.rs", "x/mod.rs"]);
    let _ = std::fs::remove_dir_all(&dir);
}
