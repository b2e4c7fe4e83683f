//! Issue 9: ownership by creation. A fake catalog that keeps which objects exist, icegate in
//! front of it with an embedded ownership store, and the rules of docs/design.md §4.

use crate::fake_upstream::{Answer, FakeUpstream, Gate, Recorded, Reply, basic, gate, send};
use crate::support::TempDir;
use icegate::core::ownership::Kind;
use serde_json::json;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// alice and bob may create namespaces, tables in `s` and `s2` and views in `s`, but hold no
/// MODIFY_TABLE and no grant on any object they did not create.
pub const POLICY: &str = r"
version: 1
metalake: lake
default_catalog: prod
users:
  - { name: alice, roles: [creator] }
  - { name: bob, roles: [creator] }
roles:
  - name: creator
    securableObjects:
      - type: CATALOG
        fullName: prod
        privileges: [ { name: USE_CATALOG, condition: ALLOW }, { name: CREATE_SCHEMA, condition: ALLOW } ]
      - type: SCHEMA
        fullName: prod.s
        privileges:
          - { name: USE_SCHEMA, condition: ALLOW }
          - { name: CREATE_TABLE, condition: ALLOW }
          - { name: CREATE_VIEW, condition: ALLOW }
      - type: SCHEMA
        fullName: prod.s2
        privileges: [ { name: USE_SCHEMA, condition: ALLOW }, { name: CREATE_TABLE, condition: ALLOW } ]
";

const METADATA: &str = r#"{"format-version":2,"table-uuid":"u","location":"file:///wh/t","schemas":[{"type":"struct","schema-id":0,"fields":[]}]}"#;

fn table_reply() -> Reply {
    Reply::raw(200, &format!(r#"{{"metadata-location":"file:///wh/t/m.json","metadata":{METADATA},"config":{{}}}}"#))
}

/// A catalog that remembers which namespace, table and view paths exist. A table named `boom`
/// is a 500 that creates nothing; `slow` is created and answered late; `lost` is answered late
/// and not created; `slow-unchecked` is created, answered late, and sets `heads_fail`: while it is
/// set, existence checks get 503.
pub fn catalog(existing: Arc<Mutex<HashSet<String>>>) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    catalog_with(existing, Arc::default())
}

pub fn catalog_with(
    existing: Arc<Mutex<HashSet<String>>>,
    heads_fail: Arc<AtomicBool>,
) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |r: &Recorded| {
        let mut set = existing.lock().unwrap();
        let path = r.target.split('?').next().unwrap_or_default().to_owned();
        let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or(json!({}));
        let no_such = || {
            Reply::json(
                404,
                json!({"error": {"message": "no such object", "type": "NoSuchTableException", "code": 404}}),
            )
        };
        let at = |ident: &serde_json::Value, kind: &str| {
            let ns: Vec<&str> = ident["namespace"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
            format!("/v1/namespaces/{}/{kind}/{}", ns.join("%1F"), ident["name"].as_str().unwrap())
        };
        let asserts_create = |b: &serde_json::Value| {
            b["requirements"].as_array().is_some_and(|rs| rs.iter().any(|q| q["type"] == "assert-create"))
        };
        match (r.method.as_str(), path.as_str()) {
            ("HEAD", _) if heads_fail.load(Ordering::SeqCst) => Reply::raw(503, ""),
            ("HEAD", p) => Reply::raw(if set.contains(p) { 204 } else { 404 }, ""),
            ("POST", "/v1/namespaces") => {
                let ns: Vec<&str> = body["namespace"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
                set.insert(format!("/v1/namespaces/{}", ns.join("%1F")));
                Reply::json(200, json!({"namespace": ns, "properties": {}}))
            }
            ("POST", "/v1/tables/rename" | "/v1/views/rename") => {
                let kind = if path.contains("views") { "views" } else { "tables" };
                if set.remove(&at(&body["source"], kind)) {
                    set.insert(at(&body["destination"], kind));
                    Reply::raw(204, "")
                } else {
                    no_such()
                }
            }
            ("POST", "/v1/transactions/commit") => {
                for change in body["table-changes"].as_array().unwrap() {
                    if asserts_create(change) {
                        set.insert(at(&change["identifier"], "tables"));
                    }
                }
                Reply::raw(204, "")
            }
            ("POST", p) if p.ends_with("/views") => {
                set.insert(format!("{p}/{}", body["name"].as_str().unwrap_or_default()));
                Reply::ok()
            }
            ("POST", p) if p.ends_with("/tables") => {
                let name = body["name"].as_str().unwrap_or_default();
                let table = format!("{p}/{name}");
                match name {
                    "boom" => {
                        Reply::json(500, json!({"error": {"message": "boom", "type": "ServerError", "code": 500}}))
                    }
                    "lost" => Reply::ok().after(Duration::from_millis(1500)),
                    _ if set.contains(&table) => Reply::json(
                        409,
                        json!({"error": {"message": "exists", "type": "AlreadyExistsException", "code": 409}}),
                    ),
                    _ if body["stage-create"] == true => table_reply(),
                    _ => {
                        set.insert(table);
                        if name == "slow-unchecked" {
                            // from now on the upstream cannot say whether it exists
                            heads_fail.store(true, Ordering::SeqCst);
                        }
                        if name == "delayed" {
                            return table_reply().after(Duration::from_millis(300));
                        }
                        if name.starts_with("slow") {
                            table_reply().after(Duration::from_millis(1500))
                        } else {
                            table_reply()
                        }
                    }
                }
            }
            ("POST", p) if p.contains("/tables/") && !set.contains(p) && asserts_create(&body) => {
                set.insert(p.to_owned());
                table_reply()
            }
            ("POST" | "GET", p) if set.contains(p) => {
                if p.contains("/views/") {
                    Reply::ok()
                } else {
                    table_reply()
                }
            }
            ("GET", p) if p.ends_with("/tables") => {
                let prefix = format!("{p}/");
                let mut names: Vec<&str> = set.iter().filter_map(|t| t.strip_prefix(prefix.as_str())).collect();
                names.sort_unstable();
                let ns = p.trim_end_matches("/tables").rsplit('/').next().unwrap_or_default();
                let identifiers: Vec<_> = names.iter().map(|n| json!({"namespace": [ns], "name": n})).collect();
                Reply::json(200, json!({"identifiers": identifiers}))
            }
            ("DELETE", p) if set.remove(p) => Reply::raw(204, ""),
            _ => no_such(),
        }
    }
}

struct Setup {
    upstream: FakeUpstream,
    gate: Gate,
    store: PathBuf,
    _dir: TempDir,
}

async fn setup() -> Setup {
    let dir = TempDir::new("owners");
    let store = dir.path().join("owners.db");
    let upstream = FakeUpstream::start(catalog(Arc::default())).await;
    let gate = start(&upstream, &store).await;
    Setup { upstream, gate, store, _dir: dir }
}

async fn start(upstream: &FakeUpstream, store: &Path) -> Gate {
    let path = store.to_owned();
    gate(&upstream.url(""), POLICY, move |c| {
        c.owners.store = Some(icegate::ops::owners::StoreKind::Embedded);
        c.owners.path = Some(path);
        c.owners.timeout_ms = 200;
        c.upstream.response_timeout_ms = 500;
    })
    .await
}

pub async fn call(g: &Gate, user: &str, method: &str, target: &str, body: &serde_json::Value) -> Answer {
    let bytes = if body.is_null() { Vec::new() } else { body.to_string().into_bytes() };
    let mut headers = vec![("authorization", basic(user))];
    if !bytes.is_empty() {
        headers.push(("content-type", "application/json".to_owned()));
    }
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    send(g.addr, method, target, &headers, &bytes).await
}

pub fn create(name: &str) -> serde_json::Value {
    json!({"name": name, "schema": {"type": "struct", "fields": []}})
}

pub fn append() -> serde_json::Value {
    json!({"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "v"}}]})
}

/// The owner the store file holds for a table, read as a separate process would.
fn owner_in(store: &Path, name: &str) -> Option<String> {
    owner_of(store, "TABLE", name)
}

fn owner_of(store: &Path, kind: &str, name: &str) -> Option<String> {
    let conn = rusqlite::Connection::open(store).unwrap();
    let row = conn
        .query_row("SELECT owner FROM owners WHERE object_type = ?1 AND full_name = ?2", [kind, name], |r| r.get(0));
    match row {
        Ok(owner) => Some(owner),
        Err(rusqlite::Error::QueryReturnedNoRows) => None,
        Err(e) => panic!("{e}"),
    }
}

fn posts(upstream: &FakeUpstream) -> usize {
    upstream.requests().iter().filter(|r| r.method != "HEAD").count()
}

#[tokio::test]
async fn owners_the_creator_may_modify_and_drop_what_it_created_and_others_may_not() {
    let s = setup().await;
    let g = &s.gate;
    assert_eq!(call(g, "alice", "POST", "/v1/namespaces/s/tables", &create("t")).await.status, 200);
    assert_eq!(owner_in(&s.store, "prod.s.t").as_deref(), Some("alice"));
    // alice holds no MODIFY_TABLE: ownership is what lets her write
    assert_eq!(call(g, "alice", "POST", "/v1/namespaces/s/tables/t", &append()).await.status, 200);
    call(g, "bob", "POST", "/v1/namespaces/s/tables/t", &append()).await.assert_error(403, "ForbiddenException");
    call(g, "bob", "DELETE", "/v1/namespaces/s/tables/t", &json!(null)).await.assert_error(403, "ForbiddenException");
    assert_eq!(call(g, "alice", "DELETE", "/v1/namespaces/s/tables/t", &json!(null)).await.status, 204);
    assert_eq!(owner_in(&s.store, "prod.s.t"), None, "a drop removes the record");
    // bob creates a table of that name now: it is his
    assert_eq!(call(g, "bob", "POST", "/v1/namespaces/s/tables", &create("t")).await.status, 200);
    call(g, "alice", "POST", "/v1/namespaces/s/tables/t", &append()).await.assert_error(403, "ForbiddenException");
}

#[tokio::test]
async fn owners_a_failed_create_records_nothing() {
    let s = setup().await;
    let g = &s.gate;
    assert_eq!(call(g, "alice", "POST", "/v1/namespaces/s/tables", &create("t")).await.status, 200);
    // 409: bob's create of alice's table leaves alice the owner
    assert_eq!(call(g, "bob", "POST", "/v1/namespaces/s/tables", &create("t")).await.status, 409);
    assert_eq!(owner_in(&s.store, "prod.s.t").as_deref(), Some("alice"));
    // 500 that created nothing: the upstream is asked, and nothing is recorded
    assert_eq!(call(g, "bob", "POST", "/v1/namespaces/s/tables", &create("boom")).await.status, 500);
    assert_eq!(owner_in(&s.store, "prod.s.boom"), None);
}

#[tokio::test]
async fn owners_a_timed_out_create_is_reconciled_by_asking_the_upstream() {
    let s = setup().await;
    let g = &s.gate;
    // created upstream, answered after icegate gave up: the record is there
    call(g, "alice", "POST", "/v1/namespaces/s/tables", &create("slow"))
        .await
        .assert_error(504, "GatewayTimeoutException");
    assert_eq!(owner_in(&s.store, "prod.s.slow").as_deref(), Some("alice"));
    assert_eq!(call(g, "alice", "POST", "/v1/namespaces/s/tables/slow", &append()).await.status, 200);
    // timed out and not created: nothing
    call(g, "alice", "POST", "/v1/namespaces/s/tables", &create("lost"))
        .await
        .assert_error(504, "GatewayTimeoutException");
    assert_eq!(owner_in(&s.store, "prod.s.lost"), None);
}

#[tokio::test]
async fn owners_a_rename_moves_the_record_across_namespaces() {
    let s = setup().await;
    let g = &s.gate;
    assert_eq!(call(g, "alice", "POST", "/v1/namespaces/s/tables", &create("t")).await.status, 200);
    let rename =
        json!({"source": {"namespace": ["s"], "name": "t"}, "destination": {"namespace": ["s2"], "name": "t2"}});
    call(g, "bob", "POST", "/v1/tables/rename", &rename).await.assert_error(403, "ForbiddenException");
    assert_eq!(call(g, "alice", "POST", "/v1/tables/rename", &rename).await.status, 204);
    assert_eq!(owner_in(&s.store, "prod.s.t"), None);
    assert_eq!(owner_in(&s.store, "prod.s2.t2").as_deref(), Some("alice"));
    assert_eq!(call(g, "alice", "POST", "/v1/namespaces/s2/tables/t2", &append()).await.status, 200);
    call(g, "bob", "POST", "/v1/namespaces/s2/tables/t2", &append()).await.assert_error(403, "ForbiddenException");
}

#[tokio::test]
async fn owners_while_the_store_cannot_be_written_creates_drops_and_renames_are_503_and_not_forwarded() {
    let s = setup().await;
    let g = &s.gate;
    assert_eq!(call(g, "alice", "POST", "/v1/namespaces/s/tables", &create("t")).await.status, 200);
    let forwarded = posts(&s.upstream);
    // another process holds the write lock
    let lock = rusqlite::Connection::open(&s.store).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE").unwrap();
    let m = call(g, "alice", "POST", "/v1/namespaces/s/tables", &create("u"))
        .await
        .assert_error(503, "ServiceUnavailableException");
    assert!(m.contains("ownership store"), "{m}");
    call(g, "alice", "DELETE", "/v1/namespaces/s/tables/t", &json!(null))
        .await
        .assert_error(503, "ServiceUnavailableException");
    let rename =
        json!({"source": {"namespace": ["s"], "name": "t"}, "destination": {"namespace": ["s"], "name": "t3"}});
    call(g, "alice", "POST", "/v1/tables/rename", &rename).await.assert_error(503, "ServiceUnavailableException");
    assert_eq!(posts(&s.upstream), forwarded, "nothing was forwarded");
    // everything else decides from the last view
    assert_eq!(call(g, "alice", "POST", "/v1/namespaces/s/tables/t", &append()).await.status, 200);
    drop(lock);
    assert_eq!(call(g, "alice", "DELETE", "/v1/namespaces/s/tables/t", &json!(null)).await.status, 204);
}

#[tokio::test]
async fn owners_namespaces_views_staged_creates_and_transactions_are_recorded() {
    let s = setup().await;
    let g = &s.gate;
    let null = serde_json::Value::Null;
    // a namespace: its creator owns it (and may drop it, `own(schema) ∧ USE_CATALOG`)
    assert_eq!(call(g, "alice", "POST", "/v1/namespaces", &json!({"namespace": ["n1"]})).await.status, 200);
    assert_eq!(owner_of(&s.store, "SCHEMA", "prod.n1").as_deref(), Some("alice"));
    call(g, "bob", "DELETE", "/v1/namespaces/n1", &null).await.assert_error(403, "ForbiddenException");
    assert_eq!(call(g, "alice", "DELETE", "/v1/namespaces/n1", &null).await.status, 204);
    assert_eq!(owner_of(&s.store, "SCHEMA", "prod.n1"), None);
    // a view: replaced and renamed by its creator only, dropped with its record
    let view = json!({"name": "v", "schema": {"type": "struct", "fields": []}, "view-version": {}, "properties": {}});
    assert_eq!(call(g, "alice", "POST", "/v1/namespaces/s/views", &view).await.status, 200);
    assert_eq!(owner_of(&s.store, "VIEW", "prod.s.v").as_deref(), Some("alice"));
    let replace = json!({"requirements": [], "updates": []});
    call(g, "bob", "POST", "/v1/namespaces/s/views/v", &replace).await.assert_error(403, "ForbiddenException");
    assert_eq!(call(g, "alice", "POST", "/v1/namespaces/s/views/v", &replace).await.status, 200);
    let rename =
        json!({"source": {"namespace": ["s"], "name": "v"}, "destination": {"namespace": ["s"], "name": "v2"}});
    call(g, "bob", "POST", "/v1/views/rename", &rename).await.assert_error(403, "ForbiddenException");
    assert_eq!(call(g, "alice", "POST", "/v1/views/rename", &rename).await.status, 204);
    assert_eq!(owner_of(&s.store, "VIEW", "prod.s.v2").as_deref(), Some("alice"));
    assert_eq!(call(g, "alice", "DELETE", "/v1/namespaces/s/views/v2", &null).await.status, 204);
    assert_eq!(owner_of(&s.store, "VIEW", "prod.s.v2"), None);
    // a staged create owns nothing until its commit creates the table
    let staged = json!({"name": "st", "schema": {"type": "struct", "fields": []}, "stage-create": true});
    assert_eq!(call(g, "alice", "POST", "/v1/namespaces/s/tables", &staged).await.status, 200);
    assert_eq!(owner_in(&s.store, "prod.s.st"), None);
    let commit = json!({"requirements": [{"type": "assert-create"}], "updates": []});
    assert_eq!(call(g, "alice", "POST", "/v1/namespaces/s/tables/st", &commit).await.status, 200);
    assert_eq!(owner_in(&s.store, "prod.s.st").as_deref(), Some("alice"));
    call(g, "bob", "POST", "/v1/namespaces/s/tables/st", &append()).await.assert_error(403, "ForbiddenException");
    // a transaction creating a table
    let tx = json!({"table-changes": [{"identifier": {"namespace": ["s"], "name": "tx"}, "requirements": [{"type": "assert-create"}], "updates": []}]});
    assert_eq!(call(g, "bob", "POST", "/v1/transactions/commit", &tx).await.status, 204);
    assert_eq!(owner_in(&s.store, "prod.s.tx").as_deref(), Some("bob"));
    assert_eq!(call(g, "bob", "POST", "/v1/namespaces/s/tables/tx", &append()).await.status, 200);
    call(g, "alice", "POST", "/v1/namespaces/s/tables/tx", &append()).await.assert_error(403, "ForbiddenException");
}

#[tokio::test]
async fn owners_a_create_the_store_cannot_record_after_the_upstream_did_it_is_503_not_a_success() {
    let s = setup().await;
    let store = s.store.clone();
    let body = create("delayed");
    // the intent is written and the create forwarded; then another process takes the lock
    // while the upstream works (300 ms), and holds it until icegate has answered
    let upstream = &s.upstream;
    let (answer, _lock) = tokio::join!(call(&s.gate, "alice", "POST", "/v1/namespaces/s/tables", &body), async move {
        let sent = std::time::Instant::now();
        while !upstream.requests().iter().any(|r| r.method == "POST") {
            assert!(sent.elapsed() < Duration::from_secs(5), "the create never reached the upstream");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let lock = rusqlite::Connection::open(&store).unwrap();
        lock.busy_timeout(Duration::from_secs(5)).unwrap();
        lock.execute_batch("BEGIN IMMEDIATE").unwrap();
        lock
    });
    let m = answer.assert_error(503, "ServiceUnavailableException");
    assert!(m.contains("carried the request out"), "{m}");
    let conn = rusqlite::Connection::open(&s.store).unwrap();
    let pending: i64 = conn.query_row("SELECT count(*) FROM intents", [], |r| r.get(0)).unwrap();
    assert_eq!(pending, 1, "the intent stays for reconciliation");
}

#[tokio::test]
async fn owners_records_survive_a_restart() {
    let mut s = setup().await;
    assert_eq!(call(&s.gate, "alice", "POST", "/v1/namespaces/s/tables", &create("t")).await.status, 200);
    s.gate.shut_down();
    let g = start(&s.upstream, &s.store).await;
    assert_eq!(call(&g, "alice", "POST", "/v1/namespaces/s/tables/t", &append()).await.status, 200);
    call(&g, "bob", "POST", "/v1/namespaces/s/tables/t", &append()).await.assert_error(403, "ForbiddenException");
}

#[tokio::test]
async fn owners_the_audit_reason_names_the_creation() {
    let s = setup().await;
    let g = &s.gate;
    assert_eq!(call(g, "alice", "POST", "/v1/namespaces/s/tables", &create("t")).await.status, 200);
    let a = call(g, "alice", "DELETE", "/v1/namespaces/s/tables/t", &json!(null)).await;
    assert_eq!(a.status, 204);
    // the reason itself is checked through the evaluator
    let snap = crate::support::load(POLICY);
    let index = icegate::core::ownership::OwnerIndex::from_records([icegate::core::ownership::Record {
        kind: Kind::Table,
        full_name: "prod.s.t".into(),
        owner: "alice".into(),
        owner_type: icegate::core::policy::model::OwnerType::User,
        created_at: "2026-12-02T13:45:00.000Z".into(),
        source: icegate::core::ownership::Source::Creation,
    }]);
    let principal = icegate::core::roles::Principal { user: "alice".into(), ..Default::default() };
    let user = icegate::core::roles::check_user(&snap, &principal).unwrap();
    let header = icegate::core::roles::parse_header(None, icegate::core::roles::OwnershipMode::Always).unwrap();
    let narrowed =
        icegate::core::roles::narrow(&snap, &principal, user, &header, icegate::core::roles::OwnershipMode::Always)
            .unwrap();
    let subject = narrowed.subject("alice").with_owners(&index);
    let ns = icegate::core::iceberg::Namespace::new(vec!["s".into()], &[]).unwrap();
    let req = icegate::core::policy::authorize::Request {
        op: icegate::core::iceberg::OperationId::DropTable,
        catalog: "prod",
        namespace: Some(&ns),
        name: Some("t"),
        parent: None,
        purge: false,
    };
    let d = icegate::core::policy::authorize::authorize_path(&snap, &subject, &req);
    assert!(d.is_allowed());
    let reason = icegate::core::policy::explain::describe(&snap, &subject, "prod", &d);
    assert!(
        reason.contains("TABLE `prod.s.t` is owned by user `alice` by creation at 2026-12-02T13:45:00.000Z"),
        "{reason}"
    );
    // without the index (explain), the same request is denied
    let bare = narrowed.subject("alice");
    assert!(!icegate::core::policy::authorize::authorize_path(&snap, &bare, &req).is_allowed());
}

// ---- the real binary: crash safety and the operator commands ----

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub struct Binary {
    child: std::process::Child,
    pub addr: std::net::SocketAddr,
}

impl Binary {
    pub async fn start(config: &Path) -> Self {
        let text = std::fs::read_to_string(config).unwrap();
        let listen = text.lines().find_map(|l| l.strip_prefix("listen = ")).unwrap().trim_matches('"').to_owned();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_icegate"))
            .args(["serve", "--config", config.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let addr: std::net::SocketAddr = listen.parse().unwrap();
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(addr).await.is_ok() {
                return Self { child, addr };
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("icegate did not start");
    }

    /// SIGKILL: no shutdown path runs.
    pub fn kill_9(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

pub fn owners_cli(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_icegate")).arg("owners").args(args).output().unwrap()
}

fn binary_config(dir: &TempDir, upstream: &FakeUpstream) -> PathBuf {
    let store = dir.path().join("owners.db");
    config_file(dir, "icegate.toml", upstream, &format!("path = \"{}\"\npoll_interval_seconds = 1", store.display()))
}

/// A config file for the binary, with `owners` as its `[owners]` section.
pub fn config_file(dir: &TempDir, name: &str, upstream: &FakeUpstream, owners: &str) -> PathBuf {
    let policy = dir.write("policy.yaml", POLICY);
    dir.write(
        name,
        &format!(
            "listen = \"127.0.0.1:{}\"\nadmin_listen = \"127.0.0.1:{}\"\npolicy = \"{}\"\n[upstream]\nurl = \"{}\"\nresponse_timeout_ms = 1000\n[audit]\nenabled = false\n[owners]\n{owners}\n",
            free_port(),
            free_port(),
            policy.display(),
            upstream.url("")
        ),
    )
}

#[tokio::test]
async fn owners_a_create_acknowledged_just_before_a_kill_9_is_there_after_restart() {
    let dir = TempDir::new("owners-crash");
    let upstream = FakeUpstream::start(catalog(Arc::default())).await;
    let config = binary_config(&dir, &upstream);
    let b = Binary::start(&config).await;
    let g = Gate::at(b.addr);
    assert_eq!(call(&g, "alice", "POST", "/v1/namespaces/s/tables", &create("t")).await.status, 200);
    b.kill_9();
    let list = owners_cli(&["list", "--config", config.to_str().unwrap()]);
    assert!(list.status.success());
    let stdout = String::from_utf8_lossy(&list.stdout);
    assert!(stdout.starts_with("TABLE\tprod.s.t\tUSER\talice\tcreation\t"), "{stdout}");
    let b = Binary::start(&config).await;
    let g = Gate::at(b.addr);
    assert_eq!(call(&g, "alice", "POST", "/v1/namespaces/s/tables/t", &append()).await.status, 200);
    call(&g, "bob", "POST", "/v1/namespaces/s/tables/t", &append()).await.assert_error(403, "ForbiddenException");
    b.kill_9();
}

#[tokio::test]
async fn owners_operators_list_set_and_remove_and_a_running_icegate_picks_it_up() {
    let dir = TempDir::new("owners-cli");
    let upstream = FakeUpstream::start(catalog(Arc::default())).await;
    let config = binary_config(&dir, &upstream);
    let cfg = config.to_str().unwrap();
    let b = Binary::start(&config).await;
    let g = Gate::at(b.addr);
    assert_eq!(call(&g, "alice", "POST", "/v1/namespaces/s/tables", &create("t")).await.status, 200);
    // hand the table to bob
    let set = owners_cli(&["set", "--config", cfg, "--type", "table", "--name", "prod.s.t", "--user", "bob"]);
    assert!(set.status.success(), "{}", String::from_utf8_lossy(&set.stderr));
    let list = String::from_utf8_lossy(&owners_cli(&["list", "--config", cfg]).stdout).into_owned();
    assert!(list.starts_with("TABLE\tprod.s.t\tUSER\tbob\toperator\t"), "{list}");
    let mut picked_up = false;
    for _ in 0..40 {
        if call(&g, "bob", "POST", "/v1/namespaces/s/tables/t", &append()).await.status == 200 {
            picked_up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(picked_up, "the running icegate reads the change within its poll interval");
    call(&g, "alice", "POST", "/v1/namespaces/s/tables/t", &append()).await.assert_error(403, "ForbiddenException");
    let removed = owners_cli(&["remove", "--config", cfg, "--type", "TABLE", "--name", "prod.s.t"]);
    assert!(removed.status.success());
    let again = owners_cli(&["remove", "--config", cfg, "--type", "TABLE", "--name", "prod.s.t"]);
    assert_eq!(again.status.code(), Some(1));
    let bad = owners_cli(&["set", "--config", cfg, "--type", "TOPIC", "--name", "x", "--user", "bob"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown type `TOPIC`"));
    let no_store = dir.write("plain.toml", "[audit]\nenabled = false\n[owners]\nstore = \"off\"\n");
    let off = owners_cli(&["list", "--config", no_store.to_str().unwrap()]);
    assert_eq!(off.status.code(), Some(2));
    b.kill_9();
}

#[tokio::test]
async fn owners_list_shows_an_unsettled_intent_and_forget_drops_a_stray() {
    let dir = TempDir::new("owners-pending");
    let heads_fail = Arc::new(AtomicBool::new(false));
    let upstream = FakeUpstream::start(catalog_with(Arc::default(), Arc::clone(&heads_fail))).await;
    let config = binary_config(&dir, &upstream);
    let b = Binary::start(&config).await;
    let g = Gate::at(b.addr);
    // created upstream, answered too late, and the existence check fails too: pending
    let a = call(&g, "alice", "POST", "/v1/namespaces/s/tables", &create("slow-unchecked")).await;
    a.assert_error(504, "GatewayTimeoutException");
    let list = owners_cli(&["list", "--config", config.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&list.stderr);
    assert!(stderr.contains("pending: create of TABLE `prod.s.slow-unchecked` by `alice`"), "{stderr}");
    // an operator may forget an intent nothing can settle (this one is a stray, inserted by hand)
    let conn = rusqlite::Connection::open(dir.path().join("owners.db")).unwrap();
    conn.execute(
        "INSERT INTO intents (id, op, object_type, full_name, path, user_name, confirmable, started_at)
         VALUES (4242, 'drop', 'TABLE', 'prod.s.gone', '/v1/namespaces/s/tables/gone', 'eve', 0, '2000-01-01T00:00:00.000Z')",
        [],
    )
    .unwrap();
    let cfg = config.to_str().unwrap();
    assert!(owners_cli(&["forget", "--config", cfg, "--intent", "4242"]).status.success());
    assert_eq!(owners_cli(&["forget", "--config", cfg, "--intent", "4242"]).status.code(), Some(1));
    call(&g, "alice", "POST", "/v1/namespaces/s/tables/slow-unchecked", &append())
        .await
        .assert_error(403, "ForbiddenException");
    b.kill_9();
}

/// The background reconciliation (serve::pipeline::ownership::run) judges an intent's age and waits
/// for its next round on the store's clock: the test moves a manual clock past both instead of
/// waiting out the 5 s an intent must age and the poll interval (an hour here).
#[tokio::test]
async fn owners_an_intent_the_upstream_could_not_settle_is_reconciled_later_in_the_background() {
    let dir = TempDir::new("owners-reconcile");
    let heads_fail = Arc::new(AtomicBool::new(false));
    let upstream = FakeUpstream::start(catalog_with(Arc::default(), Arc::clone(&heads_fail))).await;
    let mut config = icegate::config::Config::load(
        None,
        icegate::config::Overrides {
            upstream: Some(upstream.url("")),
            policy: Some("unused.yaml".into()),
            ..Default::default()
        },
    )
    .unwrap();
    config.audit.enabled = false;
    config.owners.store = Some(icegate::ops::owners::StoreKind::Embedded);
    config.owners.path = Some(dir.path().join("owners.db"));
    config.owners.poll_interval_seconds = 3600;
    config.upstream.response_timeout_ms = 1000;
    let clock = icegate::core::clock::Clock::manual();
    let forward = icegate::serve::upstream::upstreams::Upstreams::from_config(&config, clock.clone()).unwrap();
    let shared = icegate::serve::pipeline::state::Shared::with_clock(
        config,
        crate::support::load(POLICY),
        forward,
        clock.clone(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let g = Gate::at(listener.local_addr().unwrap());
    tokio::spawn(icegate::serve::listen::server::serve(
        shared.clone(),
        listener,
        std::future::pending(),
        Duration::from_secs(1),
    ));
    tokio::spawn(icegate::serve::pipeline::ownership::run(shared.clone(), std::future::pending()));
    // created upstream, answered too late, and the existence check fails too: pending
    let a = call(&g, "alice", "POST", "/v1/namespaces/s/tables", &create("slow-unchecked")).await;
    a.assert_error(504, "GatewayTimeoutException");
    assert_eq!(shared.owners.pending(Duration::ZERO).await.unwrap().len(), 1);
    let owned = "/v1/namespaces/s/tables/slow-unchecked";
    call(&g, "alice", "POST", owned, &append()).await.assert_error(403, "ForbiddenException");
    // the upstream answers again; the clock moves past the intent's age and the next round
    heads_fail.store(false, Ordering::SeqCst);
    clock.advance(Duration::from_secs(3600));
    let moved = std::time::Instant::now();
    loop {
        let status = call(&g, "alice", "POST", owned, &append()).await.status;
        if status == 200 {
            break;
        }
        assert!(moved.elapsed() < Duration::from_secs(5), "still {status}: not reconciled");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let record = shared.owners.index().get(Kind::Table, "prod.s.slow-unchecked").cloned().unwrap();
    assert_eq!((record.owner.as_str(), record.source), ("alice", icegate::core::ownership::Source::Creation));
    assert!(shared.owners.pending(Duration::ZERO).await.unwrap().is_empty());
    assert_eq!(shared.owners.status().pending, 0);
}

#[tokio::test]
async fn owners_lists_show_what_the_caller_created_and_the_policys_owners_win() {
    let s = setup().await;
    let g = &s.gate;
    for (user, table) in [("alice", "a1"), ("bob", "b1"), ("alice", "a2")] {
        assert_eq!(call(g, user, "POST", "/v1/namespaces/s/tables", &create(table)).await.status, 200);
    }
    let names = |a: crate::fake_upstream::Answer| -> Vec<String> {
        a.json()["identifiers"].as_array().unwrap().iter().map(|i| i["name"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(names(call(g, "alice", "GET", "/v1/namespaces/s/tables", &serde_json::Value::Null).await), ["a1", "a2"]);
    assert_eq!(names(call(g, "bob", "GET", "/v1/namespaces/s/tables", &serde_json::Value::Null).await), ["b1"]);

    // the policy names bob the owner of alice's a1: the policy wins
    let policy = format!("{POLICY}owners:\n  - {{ type: TABLE, fullName: prod.s.a1, owner: bob, ownerType: USER }}\n");
    let path = s.store.clone();
    let g2 = gate(&s.upstream.url(""), &policy, move |c| {
        c.owners.store = Some(icegate::ops::owners::StoreKind::Embedded);
        c.owners.path = Some(path);
    })
    .await;
    call(&g2, "alice", "POST", "/v1/namespaces/s/tables/a1", &append()).await.assert_error(403, "ForbiddenException");
    assert_eq!(call(&g2, "bob", "POST", "/v1/namespaces/s/tables/a1", &append()).await.status, 200);
    assert_eq!(call(&g2, "alice", "POST", "/v1/namespaces/s/tables/a2", &append()).await.status, 200);
    assert_eq!(names(call(&g2, "alice", "GET", "/v1/namespaces/s/tables", &serde_json::Value::Null).await), ["a2"]);
}
