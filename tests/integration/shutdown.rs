//! SIGTERM with requests in flight (DESIGN.md §10, issue 5): the `icegate` binary stops
//! accepting at once, lets the in-flight request finish, and exits 0.

use crate::fake_upstream::{FakeUpstream, Reply, basic, send};
use crate::support::TempDir;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
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
    let upstream = FakeUpstream::start(|r| {
        if r.target.ends_with("/slow") {
            Reply::json(200, serde_json::json!({"metadata": {"location": "s3://b/t"}}))
                .after(Duration::from_millis(1500))
        } else {
            Reply::ok()
        }
    })
    .await;
    let dir = TempDir::new("sigterm");
    let policy = dir.write("p.yaml", POLICY);
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let listen = format!("127.0.0.1:{port}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_icegate"))
        .args(["serve", "--upstream", &upstream.url(""), "--policy", policy.to_str().unwrap()])
        .args(["--listen", &listen, "--admin-listen", "127.0.0.1:0"])
        .env("ICEGATE_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
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
    let addr: std::net::SocketAddr = listen.parse().unwrap();
    let in_flight = tokio::spawn(async move {
        send(addr, "GET", "/v1/prod/namespaces/sales/tables/slow", &[("authorization", &basic("ann"))], b"").await
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(tokio::net::TcpStream::connect(addr).await.is_err(), "new connections are refused after SIGTERM");
    let answer = in_flight.await.unwrap();
    assert_eq!(answer.status, 200, "the in-flight request completes: {}", answer.text());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "icegate did not exit");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(status.code(), Some(0));
}
