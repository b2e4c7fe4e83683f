//! Issue 9 with PostgreSQL: two icegate replicas (the real binary) share ownership through a
//! real PostgreSQL server started on loopback for the test, which is stopped and started again
//! mid-test. Issue 16: the store over TLS, to a server that refuses connections without it,
//! with a certificate made by a CA of the test's own (rcgen). Run by `bash tests/postgres.sh` (it installs PostgreSQL from Debian's packages when
//! missing and sets `ICEGATE_TEST_PG_BIN`); ignored otherwise.

use crate::fake_upstream::{FakeUpstream, Gate};
use crate::owners::{Binary, append, call, catalog, config_file, create, owners_cli};
use crate::support::TempDir;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The bound within which a record written through one replica decides on another: the
/// notification usually arrives within milliseconds; `poll_interval_seconds` (5) is the bound
/// even if it is lost.
const BOUND: Duration = Duration::from_secs(5);

/// A PostgreSQL server in a temporary data directory, run as the `postgres` user.
struct Server {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    _dir: TempDir,
}

fn as_postgres(bin: &Path, tool: &str, args: &[&str]) {
    let out = Command::new("runuser").args(["-u", "postgres", "--"]).arg(bin.join(tool)).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{tool} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A test CA and a server certificate for `127.0.0.1` and `pg.test` (not `localhost`), as PEM
/// files in `dir`: (CA file, certificate file, key file).
fn server_certificate(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, "icegate test CA");
    let ca_pem = ca.self_signed(&ca_key).unwrap().pem();
    let key = KeyPair::generate().unwrap();
    let mut leaf = CertificateParams::new(vec!["127.0.0.1".to_owned(), "pg.test".to_owned()]).unwrap();
    leaf.distinguished_name.push(DnType::CommonName, "pg.test");
    let cert = leaf.signed_by(&key, &Issuer::new(ca, ca_key)).unwrap();
    let files = (dir.join("ca.crt"), dir.join("server.crt"), dir.join("server.key"));
    std::fs::write(&files.0, ca_pem).unwrap();
    std::fs::write(&files.1, cert.pem()).unwrap();
    std::fs::write(&files.2, key.serialize_pem()).unwrap();
    (files.0, files.1, files.2)
}

impl Server {
    fn start(bin: PathBuf) -> Self {
        Self::start_with(bin, false)
    }

    /// With `tls`, the server accepts TCP connections only over TLS (`hostssl`; `hostnossl`
    /// rejected) with the certificate of [`server_certificate`], in `ca.crt` beside `data`.
    fn start_with(bin: PathBuf, tls: bool) -> Self {
        let dir = TempDir::new("pg");
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        let certs = tls.then(|| server_certificate(dir.path()));
        let status = Command::new("chown").args(["-R", "postgres:postgres"]).arg(dir.path()).status().unwrap();
        assert!(status.success());
        as_postgres(&bin, "initdb", &["-D", data.to_str().unwrap(), "-U", "postgres", "-A", "trust", "--no-sync"]);
        if let Some((_, cert, key)) = &certs {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(key, std::fs::Permissions::from_mode(0o600)).unwrap();
            let conf = format!("ssl = on\nssl_cert_file = '{}'\nssl_key_file = '{}'\n", cert.display(), key.display());
            let mut text = std::fs::read_to_string(data.join("postgresql.conf")).unwrap();
            text.push_str(&conf);
            std::fs::write(data.join("postgresql.conf"), text).unwrap();
            let hba =
                "local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostnossl all all 127.0.0.1/32 reject\n";
            std::fs::write(data.join("pg_hba.conf"), hba).unwrap();
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let server = Self { bin, data, port, _dir: dir };
        server.pg_ctl("start");
        server
    }

    fn pg_ctl(&self, action: &str) {
        let options = format!("-p {} -k {} -c listen_addresses=127.0.0.1", self.port, self.data.display());
        let log = self.data.join("server.log");
        let data = self.data.to_str().unwrap();
        match action {
            "start" => as_postgres(
                &self.bin,
                "pg_ctl",
                &["-D", data, "-o", &options, "-l", log.to_str().unwrap(), "-w", "start"],
            ),
            _ => as_postgres(&self.bin, "pg_ctl", &["-D", data, "-m", "fast", "-w", action]),
        }
    }

    fn url(&self) -> String {
        format!("host=127.0.0.1 port={} user=postgres dbname=postgres", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join("pg_ctl"))
            .args(["-D", self.data.to_str().unwrap(), "-m", "immediate", "stop"])
            .output();
    }
}

/// Waits until `probe` answers `want`, at most `within`; how long it took.
async fn until(within: Duration, want: u16, mut probe: impl AsyncFnMut() -> u16) -> Duration {
    let start = Instant::now();
    loop {
        let got = probe().await;
        if got == want {
            return start.elapsed();
        }
        assert!(start.elapsed() < within, "still {got} (not {want}) after {within:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run `bash tests/postgres.sh`"]
async fn owners_pg_two_replicas_share_ownership_and_survive_a_postgres_restart() {
    let bin =
        PathBuf::from(std::env::var("ICEGATE_TEST_PG_BIN").expect("ICEGATE_TEST_PG_BIN: PostgreSQL's bin directory"));
    let pg = Server::start(bin);
    let dir = TempDir::new("owners-pg");
    let upstream = FakeUpstream::start(catalog(Arc::default())).await;
    let owners = format!("url = \"{}\"\ntimeout_ms = 1000", pg.url());
    let config_a = config_file(&dir, "a.toml", &upstream, &owners);
    let config_b = config_file(&dir, "b.toml", &upstream, &owners);
    let (a, b) = (Binary::start(&config_a).await, Binary::start(&config_b).await);
    let (ga, gb) = (Gate::at(a.addr), Gate::at(b.addr));

    // created through A, decided on B within the bound, dropped by its creator through B
    assert_eq!(call(&ga, "alice", "POST", "/v1/namespaces/s/tables", &create("t1")).await.status, 200);
    let took =
        until(BOUND, 200, async || call(&gb, "alice", "POST", "/v1/namespaces/s/tables/t1", &append()).await.status)
            .await;
    eprintln!("a record written through replica A decided on replica B after {took:?}");
    call(&gb, "bob", "DELETE", "/v1/namespaces/s/tables/t1", &serde_json::Value::Null)
        .await
        .assert_error(403, "ForbiddenException");
    assert_eq!(call(&gb, "alice", "DELETE", "/v1/namespaces/s/tables/t1", &serde_json::Value::Null).await.status, 204);

    // a confirmed create, then PostgreSQL goes away
    assert_eq!(call(&ga, "alice", "POST", "/v1/namespaces/s/tables", &create("t2")).await.status, 200);
    until(BOUND, 200, async || call(&gb, "alice", "POST", "/v1/namespaces/s/tables/t2", &append()).await.status).await;
    pg.pg_ctl("stop");
    // both replicas decide from their last view; creates wait (503, not forwarded)
    assert_eq!(call(&ga, "alice", "POST", "/v1/namespaces/s/tables/t2", &append()).await.status, 200);
    assert_eq!(call(&gb, "alice", "POST", "/v1/namespaces/s/tables/t2", &append()).await.status, 200);
    call(&gb, "bob", "POST", "/v1/namespaces/s/tables/t2", &append()).await.assert_error(403, "ForbiddenException");
    let creates = upstream.requests().iter().filter(|r| r.method == "POST" && r.target.ends_with("/tables")).count();
    call(&ga, "alice", "POST", "/v1/namespaces/s/tables", &create("t3"))
        .await
        .assert_error(503, "ServiceUnavailableException");
    let after = upstream.requests().iter().filter(|r| r.method == "POST" && r.target.ends_with("/tables")).count();
    assert_eq!(after, creates, "a create is not forwarded while the store cannot be written");

    // PostgreSQL is back: the replicas catch up and nothing confirmed was lost
    pg.pg_ctl("start");
    until(BOUND, 200, async || call(&ga, "alice", "POST", "/v1/namespaces/s/tables", &create("t3")).await.status).await;
    until(BOUND, 200, async || call(&gb, "alice", "POST", "/v1/namespaces/s/tables/t3", &append()).await.status).await;
    let list = owners_cli(&["list", "--config", config_a.to_str().unwrap()]);
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    assert!(list.contains("TABLE\tprod.s.t2\tUSER\talice\tcreation"), "{list}");
    assert!(list.contains("TABLE\tprod.s.t3\tUSER\talice\tcreation"), "{list}");
    assert!(!list.contains("prod.s.t1"), "{list}");
    // an operator's change through the CLI reaches both replicas
    let set = owners_cli(&[
        "set",
        "--config",
        config_b.to_str().unwrap(),
        "--type",
        "TABLE",
        "--name",
        "prod.s.t3",
        "--user",
        "bob",
    ]);
    assert!(set.status.success(), "{}", String::from_utf8_lossy(&set.stderr));
    until(BOUND, 200, async || call(&ga, "bob", "POST", "/v1/namespaces/s/tables/t3", &append()).await.status).await;
    a.kill_9();
    b.kill_9();
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run `bash tests/postgres.sh`"]
async fn owners_pg_the_store_connects_over_tls_and_verifies_the_server() {
    let bin =
        PathBuf::from(std::env::var("ICEGATE_TEST_PG_BIN").expect("ICEGATE_TEST_PG_BIN: PostgreSQL's bin directory"));
    let pg = Server::start_with(bin, true);
    let ca = pg.data.parent().unwrap().join("ca.crt");
    let dir = TempDir::new("owners-pg-tls");
    let upstream = FakeUpstream::start(catalog(Arc::default())).await;
    let base = format!("port={} user=postgres dbname=postgres", pg.port);
    let config =
        |name: &str, url: &str| config_file(&dir, name, &upstream, &format!("url = \"{url}\"\ntimeout_ms = 2000"));
    let list = |config: &Path| {
        let out = owners_cli(&["list", "--config", config.to_str().unwrap()]);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };

    // verify-full with the CA: a replica records a create over TLS
    let full = config("full.toml", &format!("host=127.0.0.1 {base} sslmode=verify-full sslrootcert={}", ca.display()));
    let replica = Binary::start(&full).await;
    let g = Gate::at(replica.addr);
    assert_eq!(call(&g, "alice", "POST", "/v1/namespaces/s/tables", &create("t")).await.status, 200);
    assert_eq!(call(&g, "alice", "POST", "/v1/namespaces/s/tables/t", &append()).await.status, 200);
    replica.kill_9();
    let (code, stdout, stderr) = list(&full);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("TABLE\tprod.s.t\tUSER\talice\tcreation"), "{stdout}");

    // the same server without TLS is refused by it: what connected above was TLS
    let plain = config("plain.toml", &format!("host=127.0.0.1 {base} sslmode=disable"));
    let (code, _, stderr) = list(&plain);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("no encryption"), "{stderr}");

    // `localhost` is not a name of the certificate: verify-full refuses, require (the chain
    // only) accepts, in the URL form too
    let by_name = format!("host=localhost {base} sslrootcert={}", ca.display());
    let (code, _, stderr) = list(&config("name.toml", &format!("{by_name} sslmode=verify-full")));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("certificate not valid for name"), "{stderr}");
    let url =
        format!("postgresql://postgres@localhost:{}/postgres?sslmode=require&sslrootcert={}", pg.port, ca.display());
    let (code, stdout, stderr) = list(&config("require.toml", &url));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("prod.s.t"), "{stdout}");

    // a CA that did not sign the server's certificate: refused, whatever the mode
    let other = TempDir::new("owners-pg-other-ca");
    let (other_ca, _, _) = server_certificate(other.path());
    for mode in ["require", "verify-full"] {
        let url = format!("host=127.0.0.1 {base} sslmode={mode} sslrootcert={}", other_ca.display());
        let (code, _, stderr) = list(&config("other.toml", &url));
        assert_eq!(code, Some(2), "{mode}: {stderr}");
        assert!(stderr.contains("invalid peer certificate"), "{mode}: {stderr}");
    }
}
