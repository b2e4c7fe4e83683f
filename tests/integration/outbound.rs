//! The side calls' client (`net::outbound`, issue 49) against a recording stand-in for a forward
//! proxy and an origin: which calls go through the proxy, with its credentials, which go
//! directly, and what a refusal says (the proxy named, its password never). tests/upstream_auth
//! runs the same against Debian's tinyproxy.

use icegate::config::Outbound as Config;
use icegate::net::outbound::Outbound;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A server that records each request head and answers every one with `answer`.
struct Recorder {
    port: u16,
    heads: Arc<Mutex<Vec<String>>>,
}

async fn recorder(answer: &'static str) -> Recorder {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&heads);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let seen = Arc::clone(&seen);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                seen.lock().unwrap().push(String::from_utf8_lossy(&head).into_owned());
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    Recorder { port, heads }
}

impl Recorder {
    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

const OK: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\nconnection: close\r\n\r\n{\"keys\":[]}";
const REFUSED: &str = "HTTP/1.1 407 Proxy Authentication Required\r\nproxy-authenticate: Basic\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";

fn no_env(_: &str) -> Option<String> {
    None
}

async fn get(outbound: &Outbound, url: &str) -> Result<reqwest::Response, String> {
    let request = outbound.client().get(url).build().unwrap();
    outbound.send(request).await.map_err(|e| e.to_string())
}

#[tokio::test]
async fn a_configured_proxy_carries_the_side_calls_with_its_credentials_but_not_those_it_excludes() {
    let proxy = recorder(OK).await;
    let origin = recorder(OK).await;
    let config = Config {
        proxy: Some(format!("http://icegate:pr0xy-pw@127.0.0.1:{}", proxy.port)),
        no_proxy: vec!["localhost".into()],
        ca_file: None,
    };
    let outbound = Outbound::with_env(&config, &no_env).unwrap();
    let answer = get(&outbound, "http://idp.invalid/jwks").await.unwrap();
    assert_eq!(answer.status(), 200);
    let heads = proxy.heads();
    assert_eq!(heads.len(), 1, "{heads:?}");
    assert!(heads[0].starts_with("GET http://idp.invalid/jwks HTTP/1.1\r\n"), "{}", heads[0]);
    // base64("icegate:pr0xy-pw")
    assert!(
        heads[0].to_ascii_lowercase().contains("proxy-authorization: basic awnlz2f0ztpwcjb4es1wdw=="),
        "{}",
        heads[0]
    );
    // a host of `no_proxy` is reached directly, and so are the AWS credential endpoints
    let direct = get(&outbound, &format!("http://localhost:{}/direct", origin.port)).await.unwrap();
    assert_eq!(direct.status(), 200);
    assert_eq!(proxy.heads().len(), 1);
    assert!(origin.heads()[0].starts_with("GET /direct HTTP/1.1\r\n"));
    assert_eq!(outbound.via(&"http://169.254.169.254/latest/api/token".parse().unwrap()), None);
    assert!(!format!("{outbound:?}").contains("pr0xy-pw"), "{outbound:?}");
    let shown = outbound.describe().unwrap();
    assert!(shown.contains(&format!("http://127.0.0.1:{}", proxy.port)) && !shown.contains("pr0xy-pw"), "{shown}");
}

#[tokio::test]
async fn the_environments_proxies_apply_by_scheme_as_curl_reads_them() {
    let env = |name: &str| match name {
        "https_proxy" => Some("127.0.0.1:3128".to_owned()),
        "NO_PROXY" => Some("idp.internal,10.0.0.0/8".to_owned()),
        _ => None,
    };
    let outbound =
        Outbound::with_env(&Config { no_proxy: vec!["sts.local".into()], ..Config::default() }, &env).unwrap();
    let via = |url: &str| outbound.via(&url.parse().unwrap());
    assert_eq!(via("https://login.example/jwks").as_deref(), Some("http://127.0.0.1:3128"));
    assert_eq!(via("http://login.example/jwks"), None, "HTTPS_PROXY alone leaves http:// calls direct");
    assert_eq!(via("https://keys.idp.internal/jwks"), None);
    assert_eq!(via("https://10.1.2.3/token"), None);
    assert_eq!(via("https://sts.local/"), None, "`[outbound] no_proxy` adds to NO_PROXY");
    // `[outbound] proxy` replaces the environment's
    let configured = Config { proxy: Some("http://p.internal:8080".into()), ..Config::default() };
    let outbound = Outbound::with_env(&configured, &env).unwrap();
    assert_eq!(outbound.via(&"http://login.example/".parse().unwrap()).as_deref(), Some("http://p.internal:8080"));
    assert_eq!(outbound.via(&"https://keys.idp.internal/".parse().unwrap()).as_deref(), Some("http://p.internal:8080"));
}

#[tokio::test]
async fn a_refusing_or_absent_proxy_is_an_error_naming_it_without_its_password() {
    let proxy = recorder(REFUSED).await;
    let config =
        Config { proxy: Some(format!("http://icegate:wr0ng-pw@127.0.0.1:{}", proxy.port)), ..Config::default() };
    let outbound = Outbound::with_env(&config, &no_env).unwrap();
    let e = get(&outbound, "http://idp.invalid/token").await.unwrap_err();
    let named = format!("(through the proxy `http://127.0.0.1:{}`)", proxy.port);
    assert!(e.contains("407") && e.ends_with(&named) && !e.contains("wr0ng-pw"), "{e}");
    // an https:// call is tunnelled (CONNECT), and the tunnel's refusal is an error too
    let e = get(&outbound, "https://idp.invalid/token").await.unwrap_err();
    assert!(proxy.heads().last().unwrap().starts_with("CONNECT idp.invalid:443 HTTP/1.1\r\n"));
    assert!(e.ends_with(&named) && !e.contains("wr0ng-pw"), "{e}");
    // nothing listens: unreachable, through the proxy named
    let down = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = down.local_addr().unwrap().port();
    drop(down);
    let config = Config { proxy: Some(format!("http://icegate:wr0ng-pw@127.0.0.1:{port}")), ..Config::default() };
    let e = get(&Outbound::with_env(&config, &no_env).unwrap(), "http://idp.invalid/token").await.unwrap_err();
    assert!(e.ends_with(&format!("(through the proxy `http://127.0.0.1:{port}`)")) && !e.contains("wr0ng-pw"), "{e}");
}

#[tokio::test]
async fn redirects_are_answers_not_followed() {
    let origin = recorder(
        "HTTP/1.1 302 Found\r\nlocation: http://elsewhere.invalid/\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
    )
    .await;
    let outbound = Outbound::with_env(&Config::default(), &no_env).unwrap();
    let answer = get(&outbound, &format!("http://127.0.0.1:{}/jwks", origin.port)).await.unwrap();
    assert_eq!(answer.status(), 302);
    assert_eq!(origin.heads().len(), 1);
}
