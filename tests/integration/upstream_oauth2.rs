//! Issue 29, `upstream.auth = "oauth2"`: icegate's client-credentials token in front of a fake
//! catalog that accepts only the tokens a fake token endpoint issued: one fetch however many
//! requests wait, a new token shortly before expiry (on a manual clock), one retry after a 401
//! and never two, the token's state in `/readyz` and the metrics.

use crate::fake_upstream::{FakeUpstream, Gate, Recorded, Reply, basic, gate_clocked, send};
use crate::support::{SALES_POLICY as POLICY, TempDir};
use icegate::core::clock::Clock;
use serde_json::json;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const LOAD_ORDERS: &str = "/v1/prod/namespaces/sales/tables/orders";
pub const SECRET: &str = "s3cr3t-client-secret";

/// A token endpoint issuing `tok-N` for `expires_in` seconds, and the tokens the catalog accepts.
pub struct Idp {
    pub server: FakeUpstream,
    pub fetches: Arc<AtomicUsize>,
    pub accepted: Arc<Mutex<HashSet<String>>>,
}

impl Idp {
    pub async fn start(expires_in: u64, delay: Duration) -> Self {
        let fetches = Arc::new(AtomicUsize::new(0));
        let accepted = Arc::new(Mutex::new(HashSet::new()));
        let (f, a) = (fetches.clone(), accepted.clone());
        let server = FakeUpstream::start(move |r: &Recorded| {
            let body = String::from_utf8_lossy(&r.body).into_owned();
            if !body.contains("grant_type=client_credentials") || !body.contains(SECRET) {
                return Reply::json(401, json!({"error": "invalid_client"}));
            }
            let n = f.fetch_add(1, Ordering::SeqCst) + 1;
            let token = format!("tok-{n}-opaque");
            a.lock().unwrap().insert(format!("Bearer {token}"));
            Reply::json(200, json!({"access_token": token, "token_type": "Bearer", "expires_in": expires_in}))
                .after(delay)
        })
        .await;
        Self { server, fetches, accepted }
    }

    pub fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }

    /// The catalog's script: only tokens issued and not revoked are accepted.
    pub fn catalog(&self) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
        let accepted = self.accepted.clone();
        move |r: &Recorded| {
            let ok = r.header("authorization").is_some_and(|a| accepted.lock().unwrap().contains(a));
            if ok {
                Reply::empty_catalog(r)
            } else {
                Reply::json(
                    401,
                    json!({"error": {"message": "bad token", "type": "NotAuthorizedException", "code": 401}}),
                )
            }
        }
    }

    pub fn revoke_all(&self) {
        self.accepted.lock().unwrap().clear();
    }
}

/// The `[upstream]` of oauth2 mode against `idp`, the secret in a file of `dir`.
pub fn oauth2_config(c: &mut icegate::config::Config, idp: &Idp, dir: &TempDir) {
    c.upstream.auth = icegate::config::UpstreamAuth::OAuth2;
    c.upstream.oauth2 = Some(icegate::config::OAuth2 {
        token_endpoint: idp.server.url("/oauth/token"),
        client_id: "icegate".into(),
        client_secret_file: Some(dir.write("secret", &format!("{SECRET}\n"))),
        scope: Some("catalog".into()),
        ..icegate::config::OAuth2::default()
    });
}

async fn setup(
    expires_in: u64,
    delay: Duration,
    clock: Clock,
) -> (Idp, FakeUpstream, Gate, Arc<icegate::serve::pipeline::state::Shared>, TempDir) {
    let idp = Idp::start(expires_in, delay).await;
    let catalog = FakeUpstream::start(idp.catalog()).await;
    let dir = TempDir::new("oauth2");
    let (gate, shared) = gate_clocked(&catalog.url(""), POLICY, |c| oauth2_config(c, &idp, &dir), clock).await;
    (idp, catalog, gate, shared, dir)
}

async fn load(g: &Gate) -> u16 {
    send(g.addr, "GET", LOAD_ORDERS, &[("authorization", &basic("alice"))], b"").await.status
}

#[tokio::test]
async fn one_token_fetch_serves_many_concurrent_requests() {
    // the endpoint answers slowly, so that every request arrives while the first fetch waits
    let (idp, catalog, g, _, _dir) = setup(3600, Duration::from_millis(300), Clock::real()).await;
    let addr = g.addr;
    let all = (0..40).map(|_| async move {
        send(addr, "GET", LOAD_ORDERS, &[("authorization", &basic("alice"))], b"").await.status
    });
    let statuses = join_all(all).await;
    assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
    assert_eq!(idp.fetches(), 1, "one fetch however many requests waited");
    let token = idp.server.only();
    let form = String::from_utf8_lossy(&token.body).into_owned();
    assert!(form.contains("grant_type=client_credentials") && form.contains("scope=catalog"), "{form}");
    assert!(form.contains("client_id=icegate"), "client_secret_post by default: {form}");
    assert!(catalog.requests().iter().all(|r| r.header("authorization") == Some("Bearer tok-1-opaque")));
}

/// Runs the futures concurrently on this task (no extra crate for `join_all`).
async fn join_all<F: Future<Output = u16> + Send + 'static>(all: impl Iterator<Item = F>) -> Vec<u16> {
    let tasks: Vec<_> = all.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

#[tokio::test]
async fn the_token_is_replaced_shortly_before_it_expires_not_after() {
    let clock = Clock::manual();
    let (idp, catalog, g, _, _dir) = setup(3600, Duration::ZERO, clock.clone()).await;
    assert_eq!(load(&g).await, 200);
    clock.advance(Duration::from_secs(3500));
    assert_eq!(load(&g).await, 200);
    assert_eq!(idp.fetches(), 1, "kept while more than a minute is left");
    clock.advance(Duration::from_secs(60));
    assert_eq!(load(&g).await, 200);
    assert_eq!(idp.fetches(), 2, "replaced within the last minute");
    let seen: Vec<_> = catalog.requests().iter().map(|r| r.header("authorization").unwrap().to_owned()).collect();
    assert_eq!(seen, ["Bearer tok-1-opaque", "Bearer tok-1-opaque", "Bearer tok-2-opaque"]);
}

#[tokio::test]
async fn a_401_is_retried_once_with_a_new_token_and_the_same_body() {
    let idp = Idp::start(3600, Duration::ZERO).await;
    // the catalog revokes the token the first POST carries (a token revoked before its expiry)
    let accepted = idp.accepted.clone();
    let first_post = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let inner = idp.catalog();
    let catalog = FakeUpstream::start(move |r: &Recorded| {
        if r.method == "POST" && first_post.swap(false, Ordering::SeqCst) {
            accepted.lock().unwrap().clear();
        }
        inner(r)
    })
    .await;
    let dir = TempDir::new("oauth2");
    let (g, shared) = gate_clocked(&catalog.url(""), POLICY, |c| oauth2_config(c, &idp, &dir), Clock::real()).await;
    // an inspected body, held by icegate, is sent again as it was
    let body = br#"{"name":"t2","schema":{"type":"struct","fields":[]}}"#;
    let auth = basic("bob");
    let headers = [("authorization", auth.as_str()), ("content-type", "application/json")];
    let a = send(g.addr, "POST", "/v1/prod/namespaces/sales/tables", &headers, body).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(idp.fetches(), 2);
    let posts: Vec<_> = catalog.requests().into_iter().filter(|r| r.method == "POST").collect();
    assert_eq!(posts.len(), 2, "{posts:#?}");
    assert_eq!(posts[0].header("authorization"), Some("Bearer tok-1-opaque"));
    assert_eq!(posts[1].header("authorization"), Some("Bearer tok-2-opaque"));
    assert_eq!(posts[0].body, posts[1].body);
    assert_eq!(&posts[1].body[..], body);
    assert!(shared.metrics.render().contains("icegate_upstream_auth_retries_total{upstream=\"default\"} 1"));
}

#[tokio::test]
async fn a_second_401_goes_to_the_caller_without_a_third_try() {
    let idp = Idp::start(3600, Duration::ZERO).await;
    // a catalog that refuses every token
    let catalog = FakeUpstream::start(|_: &Recorded| {
        Reply::json(401, json!({"error": {"message": "no", "type": "NotAuthorizedException", "code": 401}}))
    })
    .await;
    let dir = TempDir::new("oauth2");
    let (g, _) = gate_clocked(&catalog.url(""), POLICY, |c| oauth2_config(c, &idp, &dir), Clock::real()).await;
    let a = send(g.addr, "GET", LOAD_ORDERS, &[("authorization", &basic("alice"))], b"").await;
    assert_eq!(a.status, 401, "{}", a.text());
    assert_eq!(catalog.requests().len(), 2, "the request and one retry: {:#?}", catalog.requests());
    assert_eq!(idp.fetches(), 2);
}

#[tokio::test]
async fn a_streamed_body_is_not_sent_again_but_its_401_drops_the_token() {
    let (idp, catalog, g, _, _dir) = setup(3600, Duration::ZERO, Clock::real()).await;
    assert_eq!(load(&g).await, 200);
    idp.revoke_all();
    // reportMetrics streams its body upstream: it cannot be sent twice
    let metrics = "/v1/prod/namespaces/sales/tables/orders/metrics";
    let a =
        send(g.addr, "POST", metrics, &[("authorization", &basic("alice"))], br#"{"report-type":"scan-report"}"#).await;
    assert_eq!(a.status, 401, "{}", a.text());
    assert_eq!(catalog.requests().iter().filter(|r| r.method == "POST").count(), 1);
    assert_eq!(idp.fetches(), 1);
    // the next request gets a new token
    assert_eq!(load(&g).await, 200);
    assert_eq!(idp.fetches(), 2);
}

#[tokio::test]
async fn readyz_and_metrics_say_whether_a_token_is_held() {
    let (idp, _catalog, g, shared, _dir) = setup(600, Duration::ZERO, Clock::real()).await;
    let (ready, body) = icegate::serve::listen::admin::readiness(&shared);
    assert!(!ready, "no token yet: {body}");
    assert_eq!(body["upstream"]["auth"]["mode"], "oauth2");
    assert_eq!(body["upstream"]["auth"]["held"], false);
    // the readiness probe goes with the upstream's credential, and so fetches the first token
    icegate::serve::listen::admin::probe_all(&shared).await;
    let (ready, body) = icegate::serve::listen::admin::readiness(&shared);
    assert!(ready, "{body}");
    assert_eq!(body["upstream"]["auth"]["held"], true);
    let left = body["upstream"]["auth"]["expires_in_seconds"].as_u64().unwrap();
    assert!((590..=600).contains(&left), "{body}");
    assert_eq!(idp.fetches(), 1);
    let metrics = shared.metrics.render();
    for line in [
        "icegate_upstream_auth_refreshes_total{upstream=\"default\",result=\"ok\"} 1",
        "icegate_upstream_auth_held{upstream=\"default\"} 1",
        "icegate_upstream_auth_retries_total{upstream=\"default\"} 0",
    ] {
        assert!(metrics.contains(line), "{line} not in\n{metrics}");
    }
    assert!(!metrics.contains("tok-1") && !body.to_string().contains("tok-1"));
    drop(g);
}

#[tokio::test]
async fn a_token_endpoint_that_refuses_is_503_unready_and_never_quoted() {
    // the endpoint refuses the client, with a description that quotes what it got
    let idp = FakeUpstream::start(|_: &Recorded| {
        Reply::json(401, json!({"error": "invalid_client", "error_description": format!("secret {SECRET} unknown")}))
    })
    .await;
    let catalog = FakeUpstream::start(Reply::empty_catalog).await;
    let dir = TempDir::new("oauth2");
    let tweak = |c: &mut icegate::config::Config| {
        c.upstream.auth = icegate::config::UpstreamAuth::OAuth2;
        c.upstream.oauth2 = Some(icegate::config::OAuth2 {
            token_endpoint: idp.url("/token"),
            client_id: "icegate".into(),
            client_secret_file: Some(dir.write("secret", SECRET)),
            client_auth: icegate::config::ClientAuth::Basic,
            ..icegate::config::OAuth2::default()
        });
    };
    let (g, shared) = gate_clocked(&catalog.url(""), POLICY, tweak, Clock::real()).await;
    let a = send(g.addr, "GET", LOAD_ORDERS, &[("authorization", &basic("alice"))], b"").await;
    let message = a.assert_error(503, "ServiceUnavailableException");
    assert_eq!(message, "cannot get a token for the upstream: token endpoint answered 401 `invalid_client`");
    catalog.assert_untouched();
    // client_secret_basic: the id and secret in the header, not the form
    let sent = idp.only();
    assert!(sent.header("authorization").unwrap().starts_with("Basic "));
    assert!(!String::from_utf8_lossy(&sent.body).contains(SECRET));
    // within the back-off, a second request does not ask again
    let _ = send(g.addr, "GET", LOAD_ORDERS, &[("authorization", &basic("alice"))], b"").await;
    assert_eq!(idp.requests().len(), 1);
    let (ready, body) = icegate::serve::listen::admin::readiness(&shared);
    assert!(!ready);
    assert_eq!(body["upstream"]["auth"]["last_error"], "token endpoint answered 401 `invalid_client`");
    let metrics = shared.metrics.render();
    assert!(
        metrics.contains("icegate_upstream_auth_refreshes_total{upstream=\"default\",result=\"failure\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("icegate_upstream_auth_held{upstream=\"default\"} 0"), "{metrics}");
}

/// The served binary at `trace` level, through fetches, a 401 and its retry, and a token that
/// expires: neither the client secret nor any token it held is in what it logged.
#[tokio::test]
async fn neither_the_secret_nor_a_token_reaches_the_logs() {
    use std::io::Read;
    let idp = Idp::start(2, Duration::ZERO).await;
    let catalog = FakeUpstream::start(idp.catalog()).await;
    let dir = TempDir::new("oauth2-logs");
    let secret = dir.write("secret", SECRET);
    let policy = dir.write("p.yaml", POLICY);
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let config = format!(
        "listen = \"127.0.0.1:{port}\"\nadmin_listen = \"127.0.0.1:0\"\npolicy = \"{}\"\n\
         [upstream]\nurl = \"{}\"\nauth = \"oauth2\"\n\
         [upstream.oauth2]\ntoken_endpoint = \"{}\"\nclient_id = \"icegate\"\nclient_secret_file = \"{}\"\n\
         [owners]\nstore = \"off\"\n",
        policy.display(),
        catalog.url(""),
        idp.server.url("/token"),
        secret.display()
    );
    let config = dir.write("icegate.toml", &config);
    let log = std::fs::File::create(dir.path().join("stderr")).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_icegate"))
        .args(["serve", "--config", config.to_str().unwrap()])
        .env("ICEGATE_LOG", "trace")
        .env("XDG_STATE_HOME", dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while tokio::net::TcpStream::connect(addr).await.is_err() {
        assert!(std::time::Instant::now() < deadline, "icegate did not listen");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let g = Gate::at(addr);
    assert_eq!(load(&g).await, 200);
    idp.revoke_all();
    assert_eq!(load(&g).await, 200, "a 401 and its retry");
    // past the two-second expiry: a new token
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_eq!(load(&g).await, 200);
    assert!(idp.fetches() >= 3, "{}", idp.fetches());
    let _ = child.kill();
    let _ = child.wait();
    let mut logged = String::new();
    std::fs::File::open(dir.path().join("stderr")).unwrap().read_to_string(&mut logged).unwrap();
    assert!(logged.contains("obtained an upstream token"), "trace logs were written: {logged}");
    assert!(!logged.contains(SECRET), "the client secret was logged");
    assert!(!logged.contains("opaque"), "a token was logged");
    assert!(!logged.contains("Bearer"), "an Authorization value was logged");
}
