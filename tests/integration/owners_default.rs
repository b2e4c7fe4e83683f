//! Issue 16: the ownership store is on and embedded by default (docs/design.md §10). `serve` with
//! `--upstream` and `--policy` alone records creators at the default path; a store that cannot
//! be opened stops `serve` with an error naming the setting; `/readyz` reports the store; and
//! `explain --config` decides with the owners the store recorded.

use crate::fake_upstream::{FakeUpstream, Gate, send};
use crate::owners::{POLICY, append, call, catalog, create};
use crate::support::TempDir;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

fn free_addr() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    format!("127.0.0.1:{port}")
}

/// The binary, killed when dropped.
struct Serving(Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `icegate serve ARGS` with `env`; waits until `addr` accepts.
async fn serve(args: &[&str], env: &[(&str, &Path)], addr: &str) -> Serving {
    let mut command = Command::new(env!("CARGO_BIN_EXE_icegate"));
    command.arg("serve").args(args).stdout(Stdio::null()).stderr(Stdio::null());
    for (k, v) in env {
        command.env(k, v);
    }
    let child = Serving(command.spawn().unwrap());
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(addr).await.is_ok() {
            return child;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("icegate did not start");
}

async fn readyz(admin: &str) -> serde_json::Value {
    send(admin.parse().unwrap(), "GET", "/readyz", &[], b"").await.json()
}

fn explain(args: &[&str], env: &[(&str, &Path)]) -> serde_json::Value {
    let mut command = Command::new(env!("CARGO_BIN_EXE_icegate"));
    command.arg("explain").args(args);
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test]
async fn owners_default_flags_alone_make_the_creator_the_owner_and_readyz_and_explain_see_it() {
    let dir = TempDir::new("owners-default");
    let policy = dir.write("policy.yaml", POLICY);
    let state = dir.path().join("state");
    let upstream = FakeUpstream::start(catalog(Arc::default())).await;
    let (listen, admin) = (free_addr(), free_addr());
    let url = upstream.url("");
    let args =
        ["--upstream", &url, "--policy", policy.to_str().unwrap(), "--listen", &listen, "--admin-listen", &admin];
    let env = [("XDG_STATE_HOME", state.as_path())];
    let b = serve(&args, &env, &listen).await;
    let g = Gate::at(listen.parse().unwrap());

    // alice holds CREATE_TABLE but no MODIFY_TABLE: she writes to her table, bob may not
    assert_eq!(call(&g, "alice", "POST", "/v1/namespaces/s/tables", &create("t")).await.status, 200);
    assert_eq!(call(&g, "alice", "POST", "/v1/namespaces/s/tables/t", &append()).await.status, 200);
    call(&g, "bob", "POST", "/v1/namespaces/s/tables/t", &append()).await.assert_error(403, "ForbiddenException");
    assert!(state.join("icegate/owners.db").is_file(), "the store is at $XDG_STATE_HOME/icegate/owners.db");
    let ready = readyz(&admin).await;
    assert_eq!(ready["owners"], serde_json::json!({"store": "embedded", "writable": true, "pending": 0}), "{ready}");
    assert_eq!(ready["ready"], true, "{ready}");

    // explain with the serving config decides with the store's owners; with the policy alone not
    let config =
        dir.write("icegate.toml", &format!("policy = \"{}\"\n[upstream]\nurl = \"{url}\"\n", policy.display()));
    let body = dir.write("append.json", &append().to_string());
    let request = ["--user", "alice", "--body", body.to_str().unwrap(), "POST", "/v1/namespaces/s/tables/t"];
    let with_store = explain(&[&["--config", config.to_str().unwrap()][..], &request].concat(), &env);
    assert_eq!(with_store["status"], 200, "{with_store}");
    assert!(with_store["reason"].as_str().unwrap().contains("owned by user `alice` by creation"), "{with_store}");
    let policy_only = explain(&[&["--policy", policy.to_str().unwrap()][..], &request].concat(), &env);
    assert_eq!(policy_only["status"], 403, "{policy_only}");
    drop(b);
}

/// The exit code and stderr of a process that must exit within 10 s (else it is killed and the
/// test fails, rather than hang).
fn exits_within_10_s(child: Child) -> (Option<i32>, String) {
    let mut child = Serving(child);
    let start = std::time::Instant::now();
    while child.0.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < Duration::from_secs(10), "icegate is still running: it should have refused to start");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.0.stderr.take().unwrap(), &mut stderr).unwrap();
    (child.0.try_wait().unwrap().and_then(|s| s.code()), stderr)
}

#[test]
fn owners_default_a_store_that_cannot_be_opened_stops_serve_and_names_the_setting() {
    let dir = TempDir::new("owners-unopenable");
    let policy = dir.write("policy.yaml", POLICY);
    let not_a_dir = dir.write("file", "");
    let run = |owners: &str, env: &[(&str, &Path)], clear_home: bool| {
        let config = dir.write(
            "icegate.toml",
            &format!(
                "listen = \"{}\"\nadmin_listen = \"127.0.0.1:0\"\npolicy = \"{}\"\n[upstream]\nurl = \"http://127.0.0.1:1\"\n{owners}",
                free_addr(),
                policy.display()
            ),
        );
        let mut command = Command::new(env!("CARGO_BIN_EXE_icegate"));
        command.args(["serve", "--config", config.to_str().unwrap()]);
        if clear_home {
            command.env_remove("HOME").env_remove("XDG_STATE_HOME");
        }
        for (k, v) in env {
            command.env(k, v);
        }
        exits_within_10_s(command.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap())
    };
    let bad = format!("[owners]\npath = \"{}/owners.db\"\n", not_a_dir.display());
    let (code, stderr) = run(&bad, &[], false);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("cannot open the ownership store"), "{stderr}");
    assert!(stderr.contains("set `[owners] path`") && stderr.contains("`[owners] store = \"off\"`"), "{stderr}");
    // the default path under a state directory that cannot be created
    let (code, stderr) = run("", &[("XDG_STATE_HOME", not_a_dir.as_path())], false);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("set `[owners] path`"), "{stderr}");
    // no directory to put the default in
    let (code, stderr) = run("", &[], true);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("neither `XDG_STATE_HOME` nor `HOME`"), "{stderr}");
}

#[tokio::test]
async fn owners_default_off_is_said_explicitly_and_readyz_reports_it() {
    let dir = TempDir::new("owners-off");
    let policy = dir.write("policy.yaml", POLICY);
    let upstream = FakeUpstream::start(catalog(Arc::default())).await;
    let (listen, admin) = (free_addr(), free_addr());
    let config = dir.write(
        "icegate.toml",
        &format!(
            "listen = \"{listen}\"\nadmin_listen = \"{admin}\"\npolicy = \"{}\"\n[upstream]\nurl = \"{}\"\n[owners]\nstore = \"off\"\npath = \"{}/no/such/dir/owners.db\"\n",
            policy.display(),
            upstream.url(""),
            dir.path().display()
        ),
    );
    let _b = serve(&["--config", config.to_str().unwrap()], &[], &listen).await;
    let g = Gate::at(listen.parse().unwrap());
    assert_eq!(call(&g, "alice", "POST", "/v1/namespaces/s/tables", &create("t")).await.status, 200);
    call(&g, "alice", "POST", "/v1/namespaces/s/tables/t", &append()).await.assert_error(403, "ForbiddenException");
    let ready = readyz(&admin).await;
    assert_eq!(ready["owners"], serde_json::json!({"store": "off", "writable": false, "pending": 0}), "{ready}");
}
