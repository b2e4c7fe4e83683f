//! The name-parsing differential against the Java side (issue 8): tricky path segments are
//! decoded by Iceberg's own `RESTUtil.decodeNamespace` / `decodeString` (what Gravitino, Polaris
//! and Iceberg's servers use), from the same Iceberg jar as the dev catalog, and by icegate's
//! route classifier. icegate must either refuse a segment or read the same namespace levels and
//! name; and the canonical form icegate forwards must decode, in Java, to what it authorized.
//!
//! Needs `deploy/dev-catalog/build.sh` to have run (it makes `.build/classpath`) and `javac`.
//! Without them the test is skipped with a loud message, unless `ICEGATE_REQUIRE_JAVA_NAMES` is
//! set (as `tests/names/run.sh` does after building the dev catalog), when it fails instead.

use icegate::core::iceberg::routes::{Classified, RouteOptions, classify};
use serde_json::Value;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Raw path segments, as a client could send them.
fn segments() -> Vec<String> {
    let mut s: Vec<String> = [
        "sales",
        "a%1Fb",
        "a%1fb",
        "a%1F%1Fb",
        "%1Fa",
        "a%1F",
        "a%1Fb%1Fc",
        "a+b",
        "+",
        "++",
        "a%2Bb",
        "a%20b",
        "%63at",
        "%41%42",
        "caf%C3%A9",
        "%F0%9F%98%80",
        "a%2Fb",
        "a%2fb",
        "a%5Cb",
        "a%25",
        "a%252F",
        "%25",
        "a%3Bb",
        "a;b",
        "a%23b",
        "%2e%2e",
        "%2E",
        "..",
        ".",
        "...",
        "a.b",
        "a%2Eb",
        "a:b",
        "a%3Ab",
        "%",
        "a%zz",
        "a%4",
        "%FF",
        "%C0%AE",
        "%ED%A0%80",
        "%E2%80%8B",
        "%EF%BB%BFa",
        "x%C2%A0y",
        "a%00",
        "a%0A",
        "a%0D%0A",
        "a%09b",
        "a%7F",
        "%C2%85",
        "a%u0041",
        "~",
        "a~b",
        "a!$&'()*,=@",
        "a%1F.%1Fb",
        "main%7Cwarehouse",
        "a|b",
        "a%7Cb",
        "a%01b",
        "a%1Fb%1F",
        "%1F",
        "a%2B%2B",
        "A",
        "%7E",
        "a-b_c",
        "a%1E",
        "a%C3",
        "%E0%80%AF",
        "%F4%90%80%80",
        "%C2%9F",
        "a%1F%2e%2e",
        "%20",
        "a%20",
        "%20a",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    s.push("x".repeat(4096));
    s.push(vec!["l"; 200].join("%1F"));
    s
}

/// The Java program's reading of each segment.
fn java(classpath: &str, segments: &[String]) -> Vec<Value> {
    let out = crate::support::TempDir::new("java-names");
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/names/NameDecode.java");
    let javac = Command::new("javac")
        .args(["-nowarn", "-encoding", "UTF-8", "-d"])
        .arg(out.path())
        .args(["-cp", classpath])
        .arg(&source)
        .output()
        .expect("javac runs");
    assert!(javac.status.success(), "javac: {}", String::from_utf8_lossy(&javac.stderr));
    let mut child = Command::new("java")
        .args(["-cp", &format!("{}:{classpath}", out.path().display()), "NameDecode"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("java runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(segments.join("\n").as_bytes()).unwrap();
    stdin.write_all(b"\n").unwrap();
    drop(stdin);
    let done = child.wait_with_output().unwrap();
    assert!(done.status.success(), "java: {}", String::from_utf8_lossy(&done.stderr));
    let lines: Vec<Value> =
        String::from_utf8(done.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), segments.len());
    lines
}

/// A decoded value and the canonical segment icegate forwards for it.
type Reading<T> = Option<(T, String)>;

/// icegate's reading of `seg` as a namespace and as a table name, `None` when it refuses.
fn icegate(seg: &str) -> (Reading<Vec<String>>, Reading<String>) {
    let options = RouteOptions::default();
    let read = |target: String| match classify("GET", &target, &options) {
        Ok(Classified::Route(r)) => Some(r),
        _ => None,
    };
    let canonical = |path: &str, i: usize| path.split('/').nth(i).unwrap().to_owned();
    let ns = read(format!("/v1/prod/namespaces/{seg}/tables/t"))
        .and_then(|r| Some((r.namespace?.levels().to_vec(), canonical(&r.canonical_path, 4))));
    let name = read(format!("/v1/prod/namespaces/ns/tables/{seg}"))
        .and_then(|r| Some((r.name?, canonical(&r.canonical_path, 6))));
    (ns, name)
}

fn levels(v: &Value) -> Option<Vec<String>> {
    v["namespace"].as_array().map(|a| a.iter().map(|l| l.as_str().unwrap().to_owned()).collect())
}

#[test]
fn icegate_reads_names_as_icebergs_rest_util_or_refuses_them() {
    let classpath_file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/dev-catalog/.build/classpath");
    let has_javac = Command::new("javac").arg("-version").output().is_ok_and(|o| o.status.success());
    let Some(classpath) = std::fs::read_to_string(&classpath_file).ok().filter(|_| has_javac) else {
        let why = format!(
            "the Iceberg jar is not built ({} missing) or javac is absent: run deploy/dev-catalog/build.sh",
            classpath_file.display()
        );
        if std::env::var_os("ICEGATE_REQUIRE_JAVA_NAMES").is_some() {
            panic!("{why}");
        }
        eprintln!("\n!!!!!!!!!! SKIPPED java_names differential: {why} !!!!!!!!!!\n");
        return;
    };
    let classpath = classpath.trim();
    let segments = segments();
    let ours: Vec<_> = segments.iter().map(|s| icegate(s)).collect();
    // the canonical segments icegate would forward, decoded by Java too
    let mut forwarded = Vec::new();
    for (ns, name) in &ours {
        forwarded.extend(ns.iter().map(|(_, c)| c.clone()));
        forwarded.extend(name.iter().map(|(_, c)| c.clone()));
    }
    let mut all = segments.clone();
    all.extend(forwarded.iter().cloned());
    let theirs = java(classpath, &all);
    let (raw, canon) = theirs.split_at(segments.len());
    let mut canon = canon.iter();
    let (mut agreed, mut refused) = (0, 0);
    for ((seg, (ns, name)), java) in segments.iter().zip(&ours).zip(raw) {
        match ns {
            Some((ours, canonical)) => {
                assert_eq!(levels(java).as_ref(), Some(ours), "namespace {seg:?}: icegate {ours:?}, Java {java}");
                let again = canon.next().unwrap();
                assert_eq!(levels(again).as_ref(), Some(ours), "forwarded namespace {canonical:?} of {seg:?}: {again}");
                agreed += 1;
            }
            None => refused += 1,
        }
        match name {
            Some((ours, canonical)) => {
                assert_eq!(java["name"].as_str(), Some(ours.as_str()), "name {seg:?}: icegate {ours:?}, Java {java}");
                let again = canon.next().unwrap();
                assert_eq!(again["name"].as_str(), Some(ours.as_str()), "forwarded name {canonical:?} of {seg:?}");
                agreed += 1;
            }
            None => refused += 1,
        }
    }
    eprintln!(
        "java_names: {} segments, {agreed} readings agree with Iceberg's RESTUtil, {refused} refused",
        segments.len()
    );
    assert!(agreed >= 20 && refused >= 40, "the set exercises both sides: {agreed} agreed, {refused} refused");
}
