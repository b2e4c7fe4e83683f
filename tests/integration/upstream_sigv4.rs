//! Issue 29, `upstream.auth = "sigv4"`: every request icegate sends a Glue-like upstream is
//! signed, the body's SHA-256 included (a streamed body is held for it), the caller's own
//! signature headers never pass, and no AWS credentials is a 503 before anything is sent.
//! (tests/upstream_auth checks the signatures with botocore's own signer.)

use crate::fake_upstream::{FakeUpstream, Recorded, Reply, basic, gate_then, send};
use crate::support::SALES_POLICY as POLICY;
use icegate::serve::storage::aws_chain::{Chain, Env};
use icegate::serve::upstream::upstream_auth::ServiceAuth;
use sha2::Digest;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn sigv4(c: &mut icegate::config::Config) {
    c.upstream.auth = icegate::config::UpstreamAuth::SigV4;
    c.upstream.sigv4 =
        Some(icegate::config::SigV4 { service: "glue".into(), region: "eu-west-1".into(), sts_endpoint: None });
}

pub fn chain(pairs: &[(&str, &str)]) -> impl FnOnce(&icegate::serve::pipeline::state::Shared) {
    let env = Env::from_pairs(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    move |shared| match shared.upstreams.lanes()[0].client.auth() {
        ServiceAuth::SigV4(signer) => signer.use_chain(Chain::new(env)),
        other => panic!("not sigv4: {other:?}"),
    }
}

pub const KEYS: [(&str, &str); 3] =
    [("AWS_ACCESS_KEY_ID", "AKIDTEST"), ("AWS_SECRET_ACCESS_KEY", "secret-key"), ("AWS_SESSION_TOKEN", "session-tok")];

/// `20261205T053921Z` as a time.
pub fn amz_date(text: &str) -> SystemTime {
    let n = |r: std::ops::Range<usize>| text[r].parse::<i64>().unwrap();
    let (y, m, d) = (n(0..4), n(4..6), n(6..8));
    // days from civil (Howard Hinnant's algorithm)
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + n(9..11) * 3600 + n(11..13) * 60 + n(13..15);
    UNIX_EPOCH + Duration::from_secs(u64::try_from(secs).unwrap())
}

/// Signs what arrived again, with the headers it says it signed and the time it carries, and
/// compares: the signature covers what the upstream received.
fn assert_verifies(r: &Recorded) {
    let auth = r.header("authorization").unwrap();
    assert!(auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDTEST/"), "{auth}");
    assert!(auth.contains("/eu-west-1/glue/aws4_request"), "{auth}");
    let signed: Vec<&str> =
        auth.split("SignedHeaders=").nth(1).unwrap().split(',').next().unwrap().split(';').collect();
    for must in ["host", "x-amz-content-sha256", "x-amz-date", "x-amz-security-token"] {
        assert!(signed.contains(&must), "{must} unsigned in {auth}");
    }
    let hash: String = sha2::Sha256::digest(&r.body).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(r.header("x-amz-content-sha256"), Some(hash.as_str()), "the body's hash");
    let uri: http::Uri = format!("http://{}{}", r.header("host").unwrap(), r.target).parse().unwrap();
    let mut request = http::Request::builder().method(r.method.as_str()).uri(uri).body(()).unwrap();
    for name in &signed {
        if *name != "x-amz-date" && *name != "x-amz-security-token" && *name != "x-amz-content-sha256" {
            let name = http::HeaderName::from_bytes(name.as_bytes()).unwrap();
            let value = r.headers.get(&name).unwrap().clone();
            request.headers_mut().insert(name, value);
        }
    }
    let (mut parts, ()) = request.into_parts();
    let credentials =
        aws_credential_types::Credentials::new("AKIDTEST", "secret-key", Some("session-tok".into()), None, "t");
    let time = amz_date(r.header("x-amz-date").unwrap());
    icegate::serve::upstream::upstream_auth::sigv4::sign_parts(
        &mut parts,
        &r.body,
        &credentials,
        ("glue", "eu-west-1"),
        time,
    )
    .unwrap();
    assert_eq!(parts.headers.get("authorization").unwrap().to_str().unwrap(), auth, "{r:#?}");
}

#[tokio::test]
async fn every_request_is_signed_with_its_body_hash_and_the_callers_signature_headers_never_pass() {
    let upstream = FakeUpstream::start(Reply::empty_catalog).await;
    let g = gate_then(&upstream.url("/iceberg"), POLICY, sigv4, chain(&KEYS)).await;
    let alice = basic("alice");
    let forged = [
        ("authorization", alice.as_str()),
        ("x-amz-date", "20000101T000000Z"),
        ("x-amz-security-token", "forged"),
        ("x-amz-content-sha256", "UNSIGNED-PAYLOAD"),
    ];
    let load = "/v1/prod/namespaces/sales/tables/orders";
    assert_eq!(send(g.addr, "GET", load, &forged, b"").await.status, 200);
    // an inspected body (a commit), and a streamed one (reportMetrics), held to be hashed
    let commit = br#"{"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}"#;
    let json = [("authorization", alice.as_str()), ("content-type", "application/json")];
    let a = send(g.addr, "POST", load, &json, commit).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let metrics = br#"{"report-type":"commit-report","table-name":"prod.sales.orders"}"#;
    let a = send(g.addr, "POST", &format!("{load}/metrics"), &json, metrics).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let all = upstream.requests();
    assert!(all.len() >= 3, "{all:#?}");
    for r in &all {
        assert_verifies(r);
        assert_eq!(r.header("x-amz-security-token"), Some("session-tok"));
        assert_ne!(r.header("x-amz-date"), Some("20000101T000000Z"));
    }
    assert!(all.iter().any(|r| r.body.as_ref() == commit));
    assert!(all.iter().any(|r| r.body.as_ref() == metrics));
    // a namespace level's %1F is signed double-encoded, as AWS services other than S3 expect
    let nested = "/v1/prod/namespaces/sales%1Fq1";
    let _ = send(g.addr, "GET", nested, &[("authorization", alice.as_str())], b"").await;
    if let Some(r) = upstream.requests().iter().find(|r| r.target.contains("%1F")) {
        assert_verifies(r);
    }
}

#[tokio::test]
async fn without_aws_credentials_nothing_is_sent_and_the_answer_is_503() {
    let upstream = FakeUpstream::start(Reply::empty_catalog).await;
    let g = gate_then(
        &upstream.url(""),
        POLICY,
        sigv4,
        chain(&[("HOME", "/nonexistent"), ("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:1")]),
    )
    .await;
    let a = send(g.addr, "GET", "/v1/prod/namespaces/sales/tables/orders", &[("authorization", &basic("alice"))], b"")
        .await;
    let message = a.assert_error(503, "ServiceUnavailableException");
    assert!(
        message.starts_with("cannot get AWS credentials to sign upstream requests: no AWS credentials found"),
        "{message}"
    );
    upstream.assert_untouched();
}

#[tokio::test]
async fn credentials_are_read_again_as_they_age_and_readyz_says_they_are_held() {
    let dir = crate::support::TempDir::new("sigv4-profile");
    let file = dir.write("credentials", "[default]\naws_access_key_id = AKIDONE\naws_secret_access_key = s1\n");
    let clock = icegate::core::clock::Clock::manual();
    let upstream = FakeUpstream::start(Reply::empty_catalog).await;
    let (g, shared) = crate::fake_upstream::gate_clocked(&upstream.url(""), POLICY, sigv4, clock.clone()).await;
    chain(&[
        ("AWS_SHARED_CREDENTIALS_FILE", file.to_str().unwrap()),
        ("AWS_CONFIG_FILE", "/nonexistent/config"),
        ("HOME", "/nonexistent"),
    ])(&shared);
    let (ready, body) = icegate::serve::listen::admin::readiness(&shared);
    assert!(!ready && body["upstream"]["auth"]["held"] == false, "{body}");
    let key = |r: &Recorded| r.header("authorization").unwrap().split('/').next().unwrap().to_owned();
    let load = "/v1/prod/namespaces/sales/tables/orders";
    let alice = basic("alice");
    assert_eq!(send(g.addr, "GET", load, &[("authorization", &alice)], b"").await.status, 200);
    // the profile file is rotated: read again once the credentials are five minutes old
    dir.write("credentials", "[default]\naws_access_key_id = AKIDTWO\naws_secret_access_key = s2\n");
    clock.advance(Duration::from_secs(240));
    assert_eq!(send(g.addr, "GET", load, &[("authorization", &alice)], b"").await.status, 200);
    clock.advance(Duration::from_secs(61));
    assert_eq!(send(g.addr, "GET", load, &[("authorization", &alice)], b"").await.status, 200);
    let keys: Vec<String> = upstream.requests().iter().map(key).collect();
    let credential = "AWS4-HMAC-SHA256 Credential=";
    assert_eq!(keys, [format!("{credential}AKIDONE"), format!("{credential}AKIDONE"), format!("{credential}AKIDTWO")]);
    shared.upstreams.lanes()[0].probed(true);
    let (ready, body) = icegate::serve::listen::admin::readiness(&shared);
    assert!(ready, "{body}");
    assert_eq!(
        body["upstream"]["auth"],
        serde_json::json!({"mode": "sigv4", "held": true, "expires_in_seconds": null, "last_error": null})
    );
    let metrics = shared.metrics.render();
    assert!(
        metrics.contains("icegate_upstream_auth_refreshes_total{upstream=\"default\",result=\"ok\"} 2"),
        "{metrics}"
    );
    assert!(metrics.contains("icegate_upstream_auth_expiry_timestamp_seconds{upstream=\"default\"} 0"), "{metrics}");
}

#[tokio::test]
async fn the_container_provider_and_the_instance_role_serve_credentials_too() {
    let answer = |key: &str| {
        serde_json::json!({"Code": "Success", "AccessKeyId": key, "SecretAccessKey": "s", "Token": "t",
            "Expiration": "2099-01-01T00:00:00Z"})
    };
    let (container, instance) = (answer("AKIDCONTAINER"), answer("AKIDINSTANCE"));
    // the container agent (ECS, EKS Pod Identity) wants its authorization token
    let agent = FakeUpstream::start(move |r: &Recorded| match r.header("authorization") {
        Some("agent-token") => Reply::json(200, container.clone()),
        _ => Reply::raw(401, ""),
    })
    .await;
    let dir = crate::support::TempDir::new("sigv4-container");
    let token = dir.write("token", "agent-token\n");
    let catalog = FakeUpstream::start(Reply::empty_catalog).await;
    let full_uri = agent.url("/v1/credentials");
    let pairs = [
        ("AWS_CONTAINER_CREDENTIALS_FULL_URI", full_uri.as_str()),
        ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", token.to_str().unwrap()),
        ("HOME", "/nonexistent"),
    ];
    let g = gate_then(&catalog.url(""), POLICY, sigv4, chain(&pairs)).await;
    let load = "/v1/prod/namespaces/sales/tables/orders";
    assert_eq!(send(g.addr, "GET", load, &[("authorization", &basic("alice"))], b"").await.status, 200);
    let auth = catalog.only().header("authorization").unwrap().to_owned();
    assert!(auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDCONTAINER/"), "{auth}");

    // IMDSv2: a session token first, then the role, then its credentials
    let imds = FakeUpstream::start(move |r: &Recorded| {
        let session = r.header("x-aws-ec2-metadata-token") == Some("imds-session");
        match (r.method.as_str(), r.target.as_str()) {
            ("PUT", "/latest/api/token") if r.header("x-aws-ec2-metadata-token-ttl-seconds").is_some() => {
                Reply::raw(200, "imds-session")
            }
            ("GET", "/latest/meta-data/iam/security-credentials/") if session => Reply::raw(200, "icegate-role"),
            ("GET", "/latest/meta-data/iam/security-credentials/icegate-role") if session => {
                Reply::json(200, instance.clone())
            }
            _ => Reply::raw(401, ""),
        }
    })
    .await;
    let catalog = FakeUpstream::start(Reply::empty_catalog).await;
    let endpoint = imds.url("");
    let pairs = [("AWS_EC2_METADATA_SERVICE_ENDPOINT", endpoint.as_str()), ("HOME", "/nonexistent")];
    let g = gate_then(&catalog.url(""), POLICY, sigv4, chain(&pairs)).await;
    assert_eq!(send(g.addr, "GET", load, &[("authorization", &basic("alice"))], b"").await.status, 200);
    let auth = catalog.only().header("authorization").unwrap().to_owned();
    assert!(auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDINSTANCE/"), "{auth}");
    assert_eq!(imds.requests().len(), 3);
}
