//! Issue 16, safe defaults said out loud: `serve`'s logs carry no ANSI colour when stderr is
//! not a terminal, `ICEGATE_LOG_FORMAT=json` makes them JSON lines, and the `simple` provider
//! on an address beyond loopback is a warning at start-up that names the alternatives.

use crate::support::TempDir;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const POLICY: &str = "version: 1\nmetalake: lake\ndefault_catalog: prod\nusers: [{ name: alice }]\n";

/// The stderr lines of `icegate serve` on `listen` until it says it listens (then it is killed).
fn start_up_lines(listen_ip: &str, env: &[(&str, &str)]) -> Vec<String> {
    let dir = TempDir::new("logs");
    let policy = dir.write("p.yaml", POLICY);
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut command = Command::new(env!("CARGO_BIN_EXE_icegate"));
    command
        .args(["serve", "--upstream", "http://127.0.0.1:1", "--policy", policy.to_str().unwrap()])
        .args(["--listen", &format!("{listen_ip}:{port}"), "--admin-listen", "127.0.0.1:0"])
        .env("XDG_STATE_HOME", dir.path())
        .env_remove("ICEGATE_LOG_FORMAT")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = command.spawn().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let started = Instant::now();
    let mut lines = Vec::new();
    while !lines.iter().any(|l: &String| l.contains("icegate listening")) {
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(line) => lines.push(line),
            Err(_) => break,
        }
        if started.elapsed() > Duration::from_secs(10) {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(lines.iter().any(|l| l.contains("icegate listening")), "{lines:#?}");
    lines
}

#[test]
fn logs_to_a_pipe_are_plain_text_and_simple_beyond_loopback_is_a_warning() {
    let lines = start_up_lines("0.0.0.0", &[]);
    assert!(lines.iter().all(|l| !l.contains('\x1b')), "ANSI escapes in {lines:#?}");
    let warning = lines.iter().find(|l| l.contains("`simple` identity provider")).expect("no warning");
    assert!(warning.contains("WARN"), "{warning}");
    assert!(warning.contains("without checking a password") && warning.contains("`jwt`, `mtls`"), "{warning}");
    // on loopback, `simple` is the development default and no warning is given
    let lines = start_up_lines("127.0.0.1", &[]);
    assert!(!lines.iter().any(|l| l.contains("`simple` identity provider")), "{lines:#?}");
}

#[test]
fn logs_are_json_lines_with_icegate_log_format_json() {
    let lines = start_up_lines("0.0.0.0", &[("ICEGATE_LOG_FORMAT", "json")]);
    for line in &lines {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert!(v["level"].is_string() && v["timestamp"].is_string(), "{line}");
    }
    let warning = lines.iter().find(|l| l.contains("`simple` identity provider")).expect("no warning");
    assert_eq!(serde_json::from_str::<serde_json::Value>(warning).unwrap()["level"], "WARN");
}
