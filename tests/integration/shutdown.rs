//! The `icegate` binary's lifetime: SIGTERM with requests in flight (docs/design.md §10, issue 5)
//! stops accepting at once, lets the in-flight request finish, and exits 0; audit lines, which
//! the binary batches until its thread goes idle, reach the file without more traffic and are
//! all written by the time it exits.

use crate::fake_upstream::{FakeUpstream, Reply, basic, send};
use crate::support::TempDir;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const POLICY: &str = r#"
version: 1
metalake: lake
default_catalog: prod
users:
  - { name: ann, roles: [reader] }
roles:
  - name: reader
    securableObjects:
      - { type: CATALOG, fullName: prod, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }
      - type: SCHEMA
        fullName: prod.sales
        privileges:
          - { name: USE_SCHEMA, condition: ALLOW }
          - { name: SELECT_TABLE, condition: ALLOW }
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_in_flight_requests_finish_refuses_new_ones_and_exits_0() {
    // the slow request is answered only once the listener is seen closed (no race against a
    // delay)
    let release = Arc::new(tokio::sync::Notify::new());
    let held = Arc::clone(&release);
    let upstream = FakeUpstream::start(move |r| {
        if r.target.ends_with("/slow") {
            Reply::json(200, serde_json::json!({"metadata": {"location": "s3://b/t"}})).held(&held)
        } else {
            Reply::ok()
        }
    })
    .await;
    let dir = TempDir::new("sigterm");
    let policy = dir.write("p.yaml", POLICY);
    let (child, addr) = start_icegate(&upstream.url(""), &policy, &[]);
    let in_flight = tokio::spawn(async move {
        send(addr, "GET", "/v1/prod/namespaces/sales/tables/slow", &[("authorization", &basic("ann"))], b"").await
    });
    // in flight: the upstream has it (and answers it when released); the binary's readiness probes
    // reach the upstream too, so the request is recognized by its target, not counted
    upstream.until_received(|r| r.target.ends_with("/slow")).await;
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let signalled = Instant::now();
    while tokio::net::TcpStream::connect(addr).await.is_ok() {
        // a guard against a listener that never closes, not a measure
        assert!(signalled.elapsed() < Duration::from_secs(30), "new connections are refused after SIGTERM");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!in_flight.is_finished(), "the listener closed while the request was still in flight");
    release.notify_one();
    let answer = in_flight.await.unwrap();
    assert_eq!(answer.status, 200, "the in-flight request completes: {}", answer.text());
    assert_eq!(exit_status(child).await, Some(0));
}

/// Lines are batched until the runtime's thread has nothing left to do: one request's line must
/// not wait for the next request, and SIGTERM must not lose the last batch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_lines_reach_the_file_when_the_binary_goes_idle_and_before_it_exits() {
    audit_lines_reach_the_file(1).await;
}

/// As above, with a multi-threaded runtime: each worker flushes when it parks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_lines_reach_the_file_with_two_workers() {
    audit_lines_reach_the_file(2).await;
}

async fn audit_lines_reach_the_file(workers: usize) {
    let upstream = FakeUpstream::start(|_| Reply::json(200, serde_json::json!({"identifiers": []}))).await;
    let dir = TempDir::new(&format!("audit-batches-{workers}"));
    let policy = dir.write("p.yaml", POLICY);
    let audit = dir.path().join("log").join("audit.jsonl");
    std::fs::create_dir_all(audit.parent().unwrap()).unwrap();
    let config = dir.write(
        "icegate.toml",
        &format!("[runtime]\nworkers = {workers}\n\n[audit]\nfile = {:?}\n", audit.to_str().unwrap()),
    );
    let (child, addr) = start_icegate(&upstream.url(""), &policy, &["--config", config.to_str().unwrap()]);
    let lines = || std::fs::read_to_string(&audit).unwrap_or_default().lines().count();
    let list = "/v1/prod/namespaces/sales/tables";
    let auth = basic("ann");
    assert_eq!(send(addr, "GET", list, &[("authorization", &auth)], b"").await.status, 200);
    let deadline = Instant::now() + Duration::from_secs(5);
    while lines() < 1 {
        assert!(Instant::now() < deadline, "the only request's audit line was never written");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Concurrent requests, then SIGTERM at once: whatever is still batched is written on the way out.
    let sent: Vec<_> = (0..40)
        .map(|_| tokio::spawn(async move { send(addr, "GET", list, &[("authorization", &basic("ann"))], b"").await }))
        .collect();
    for answer in sent {
        assert_eq!(answer.await.unwrap().status, 200);
    }
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    assert_eq!(exit_status(child).await, Some(0));
    let written = std::fs::read_to_string(&audit).unwrap();
    assert_eq!(written.lines().count(), 41, "{written}");
    for line in written.lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!((record["decision"].as_str(), record["status"].as_u64()), (Some("allow"), Some(200)), "{line}");
    }
}

/// A running binary, killed if the test ends early (a failed assertion), so that a failure
/// does not leave an icegate behind.
struct Running(std::process::Child);

impl Running {
    fn id(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Starts the binary against `upstream` with `policy` (and `extra` arguments) on a free port,
/// once it says it listens.
fn start_icegate(upstream: &str, policy: &std::path::Path, extra: &[&str]) -> (Running, std::net::SocketAddr) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let listen = format!("127.0.0.1:{port}");
    let child = Command::new(env!("CARGO_BIN_EXE_icegate"))
        .args(["serve", "--upstream", upstream, "--policy", policy.to_str().unwrap()])
        .args(["--listen", &listen, "--admin-listen", "127.0.0.1:0"])
        .args(extra)
        .env("ICEGATE_LOG", "info")
        // the ownership store's default path, in the test's own directory
        .env("XDG_STATE_HOME", policy.parent().unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Running(child);
    let stderr = child.0.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let started = Instant::now();
    loop {
        let line = rx.recv_timeout(Duration::from_secs(10)).expect("icegate did not start");
        if line.contains("icegate listening") {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10));
    }
    (child, listen.parse().unwrap())
}

/// The exit code of `child`, which must exit within 10 seconds.
async fn exit_status(mut child: Running) -> Option<i32> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            return status.code();
        }
        assert!(Instant::now() < deadline, "icegate did not exit");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
