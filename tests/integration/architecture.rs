//! The module graph of `src/` (docs/design.md §12, issues 17 and 47): no import cycle, and the
//! layers (and the serving layer's rooms) import one way only. The graph is read from the source
//! text: every `crate::`, `super::` and `self::` path (use trees included) and every path that
//! starts with the name of a child module, outside comments, string literals and test modules,
//! is an edge to the file of the longest module prefix it names.

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
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest.starts_with(b"//") {
            i += rest.iter().position(|b| *b == b'\n').unwrap_or(rest.len());
        } else if rest.starts_with(b"/*") {
            i += rest.windows(2).position(|w| w == b"*/").map_or(rest.len(), |e| e + 2);
        } else if let Some((open, close)) = string_start(bytes, i) {
            let mut j = i + open;
            while j < bytes.len() && !bytes[j..].starts_with(&close) {
                j += if close == b"\"" && bytes[j] == b'\\' { 2 } else { 1 };
            }
            out.extend_from_slice(b"\"\"");
            i = (j + close.len()).min(bytes.len());
        } else if let Some(len) = char_literal_len(rest) {
            out.extend_from_slice(b"' '");
            i += len;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let out = String::from_utf8_lossy(&out).into_owned();
    match out.find("#[cfg(test)]\nmod tests {") {
        Some(at) => out[..at].to_owned(),
        None => out,
    }
}

/// A string literal at `i`: `"`, or `r"`, `r#"`, ... (not inside an identifier); the length of
/// its opening and its closing.
fn string_start(bytes: &[u8], i: usize) -> Option<(usize, Vec<u8>)> {
    let rest = &bytes[i..];
    if rest.first() == Some(&b'"') {
        return Some((1, b"\"".to_vec()));
    }
    if rest.first() != Some(&b'r') || (i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_')) {
        return None;
    }
    let hashes = rest[1..].iter().take_while(|b| **b == b'#').count();
    (rest.get(1 + hashes) == Some(&b'"')).then(|| {
        let mut close = b"\"".to_vec();
        close.extend(std::iter::repeat_n(b'#', hashes));
        (2 + hashes, close)
    })
}

/// The length of a character literal at the start of `rest` (`'a'`, `'\n'`, `'\u{1F}'`, `'é'`);
/// `None` for a lifetime.
fn char_literal_len(rest: &[u8]) -> Option<usize> {
    if rest.first() != Some(&b'\'') {
        return None;
    }
    if rest.get(1) == Some(&b'\\') {
        return rest[2..].iter().position(|b| *b == b'\'').map(|close| close + 3);
    }
    // one character of one to four bytes, then the closing quote
    let width = match rest.get(1)? {
        b if *b < 0x80 => 1,
        b if *b >= 0xf0 => 4,
        b if *b >= 0xe0 => 3,
        _ => 2,
    };
    (rest.get(1 + width) == Some(&b'\'')).then_some(width + 2)
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
    let big: Vec<String> = cycles(&edges)
        .into_iter()
        .filter(|c| c.len() > 2)
        .map(|c| format!("{} files: {}", c.len(), shown(&c)))
        .collect();
    assert!(big.is_empty(), "import cycles of more than two files:\n{}", big.join("\n"));
}

/// No two files import each other (issue 47): each pair there was held a piece of one file in
/// the other (a parent module's type its child used, the STS client the credential chain
/// called), which a reader had to follow both ways.
#[test]
fn no_two_files_import_each_other() {
    let (_, edges) = graph();
    let pairs: Vec<String> = cycles(&edges).into_iter().filter(|c| c.len() == 2).map(|c| shown(&c)).collect();
    assert_none(pairs, "files that import each other");
}

/// The serving layer's rooms, top to bottom (issue 47, src/serve/mod.rs): each imports only
/// the rooms below it. `serve/cache.rs`, the one cache type, imports no room.
const ROOMS: [&str; 4] = ["listen", "pipeline", "upstream", "storage"];

/// A file's room in the serving layer: its rank in [`ROOMS`], `Some(ROOMS.len())` for a file
/// of the serving layer in no room (below them all), `None` outside the serving layer.
fn room(src: &Path, file: &Path) -> Option<usize> {
    let rel = file.strip_prefix(src).ok()?;
    let mut parts = rel.iter().map(|p| p.to_string_lossy().into_owned());
    if parts.next()? != "serve" {
        return None;
    }
    let second = parts.next()?;
    Some(ROOMS.iter().position(|r| *r == second).unwrap_or(ROOMS.len()))
}

#[test]
fn the_serving_rooms_import_one_way() {
    let (_, edges) = graph();
    let src = src();
    let mut upward = Vec::new();
    for (from, to) in &edges {
        let Some(rank) = room(&src, from) else { continue };
        if from.ends_with("serve/mod.rs") {
            continue;
        }
        for t in to {
            if room(&src, t).is_some_and(|r| r < rank) {
                upward.push(format!("{} -> {}", shown(std::slice::from_ref(from)), shown(std::slice::from_ref(t))));
            }
        }
    }
    assert_none(upward, "imports from a room of the serving layer to a room above it");
    // every file of the serving layer but its mod.rs and the cache is in a room
    let loose: Vec<String> = edges
        .keys()
        .filter(|f| {
            room(&src, f) == Some(ROOMS.len()) && !f.ends_with("serve/mod.rs") && !f.ends_with("serve/cache.rs")
        })
        .map(|f| shown(std::slice::from_ref(f)))
        .collect();
    assert_none(loose, "files of the serving layer in no room");
}

/// No cycle in the core, of any size (issue 31): the core's modules form a hierarchy, so each
/// can be read, and tested, above what it imports.
#[test]
fn no_cycle_in_the_core() {
    let (_, edges) = graph();
    let src = src();
    let core: BTreeMap<PathBuf, BTreeSet<PathBuf>> = edges
        .iter()
        .filter(|(f, _)| layer(&src, f) == "core")
        .map(|(f, to)| (f.clone(), to.iter().filter(|t| layer(&src, t) == "core").cloned().collect()))
        .collect();
    let found: Vec<String> = cycles(&core).into_iter().map(|c| format!("{} files: {}", c.len(), shown(&c))).collect();
    assert_none(found, "import cycles in the core");
}

/// The layer of a file: the first segment of its module path.
fn layer(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.iter().next().unwrap().to_string_lossy().into_owned();
    first.trim_end_matches(".rs").to_owned()
}

/// docs/design.md §12: `core` is pure and imports no other layer; `config` is plain data and imports
/// no other layer; `ops` does not reach into the serving path. `net` (TLS configuration and the
/// HTTPS client builder) is a leaf that the serving path and the ownership store's PostgreSQL
/// connection both use, so `ops` may import it.
#[test]
fn layers_import_one_way() {
    let (_, edges) = graph();
    let src = src();
    let allowed: &[(&str, &[&str])] =
        &[("core", &["core"]), ("config", &["config"]), ("ops", &["ops", "core", "config", "error", "net"])];
    let mut wrong = Vec::new();
    for (file, to) in &edges {
        let from = layer(&src, file);
        let Some((_, may)) = allowed.iter().find(|(l, _)| *l == from) else { continue };
        for target in to {
            let target_layer = layer(&src, target);
            if target_layer != "lib" && !may.contains(&target_layer.as_str()) {
                wrong.push(format!(
                    "{} imports {}",
                    shown(std::slice::from_ref(file)),
                    shown(std::slice::from_ref(target))
                ));
            }
        }
    }
    assert_none(wrong, "imports against the layering");
}

/// `error.rs` (the refusal every layer may answer with) is a leaf over the core: the serving
/// layer's errors are answered in the serving layer (`serve/pipeline/rescue.rs`), so that a layer that
/// imports `error` reaches nothing above the core through it (issue 31).
#[test]
fn error_imports_only_core() {
    let (_, edges) = graph();
    let src = src();
    let wrong: Vec<String> = edges[&src.join("error.rs")]
        .iter()
        .filter(|target| !matches!(layer(&src, target).as_str(), "core" | "lib"))
        .map(|target| format!("error.rs imports {}", shown(std::slice::from_ref(target))))
        .collect();
    assert_none(wrong, "error.rs imports beyond the core");
}

/// `ops` (reload, audit, metrics, the ownership store, shadow decisions) never reaches the
/// serving path, directly or through another module (issue 31): each file of `ops` and every
/// file it reaches by any chain of imports.
#[test]
fn ops_never_reaches_serve_directly_or_through_another_module() {
    let (_, edges) = graph();
    let src = src();
    let mut wrong = Vec::new();
    for file in edges.keys().filter(|f| layer(&src, f) == "ops") {
        // breadth first, so that the chain shown is a shortest one
        let mut via: BTreeMap<&PathBuf, &PathBuf> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([file]);
        while let Some(at) = queue.pop_front() {
            for next in edges.get(at).into_iter().flatten() {
                if next == file || via.contains_key(next) {
                    continue;
                }
                via.insert(next, at);
                if layer(&src, next) == "serve" {
                    let mut chain = vec![next.clone()];
                    let mut back = next;
                    while let Some(prev) = via.get(back) {
                        chain.push((*prev).clone());
                        back = prev;
                    }
                    chain.reverse();
                    wrong.push(chain.iter().map(|f| shown(std::slice::from_ref(f))).collect::<Vec<_>>().join(" -> "));
                } else {
                    queue.push_back(next);
                }
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert_none(wrong, "ops reaches the serving path");
}

/// No violation is tolerated: the layering debts of issue 17 are all paid.
fn assert_none(found: Vec<String>, what: &str) {
    assert!(found.is_empty(), "{what}:\n{}", found.join("\n"));
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
                found.push(format!("{} names `{name}`", shown(std::slice::from_ref(file))));
            }
        }
    }
    assert_none(found, "the core names a runtime, server or database crate");
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
