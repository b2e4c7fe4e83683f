//! icegate as the signer (`credentials.signing.signer = "local"`, docs/design.md §8 "Signing
//! without a catalog signer"): authorized requests signed with icegate's own credentials, each
//! signature verified here by recomputing SigV4 independently, and no sign request ever reaching
//! the catalog.

use super::*;
use hmac::{Hmac, Mac};
use icegate::serve::storage::aws_chain::{Chain, Env};
use sha2::{Digest, Sha256};

pub(super) const KEY_ID: &str = "AKIDLOCALSIGNER";
pub(super) const SECRET: &str = "local-signer-secret";
const TOKEN: &str = "local-signer-session";

/// icegate signing locally with session credentials given to its chain.
async fn local_gate(upstream: &FakeUpstream) -> Gate {
    local_gate_with(upstream, POLICY, |_| {}).await
}

/// As [`local_gate`], on `policy`, with `tweak` applied to the configuration.
pub(super) async fn local_gate_with(
    upstream: &FakeUpstream,
    policy: &str,
    tweak: impl FnOnce(&mut icegate::config::Config),
) -> Gate {
    let local = |c: &mut icegate::config::Config| {
        c.credentials.signing.signer = icegate::config::credentials::Signer::Local;
        tweak(c);
    };
    crate::fake_upstream::gate_then(&upstream.url(""), policy, local, |shared| {
        let env = Env::from_pairs([
            ("AWS_ACCESS_KEY_ID", KEY_ID),
            ("AWS_SECRET_ACCESS_KEY", SECRET),
            ("AWS_SESSION_TOKEN", TOKEN),
        ]);
        shared.upstreams.lanes()[0].vending.local_signer().unwrap().use_chain(Chain::new(env));
    })
    .await
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hmac(key: &[u8], data: &str) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
    mac.update(data.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

/// The one value of `name` (any case) in a sign answer's headers.
pub(super) fn header<'a>(headers: &'a Value, name: &str) -> &'a str {
    let (_, values) = headers.as_object().unwrap().iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).unwrap();
    values[0].as_str().unwrap()
}

/// Recomputes the SigV4 signature of a sign answer from the AWS documentation's algorithm (not
/// the crate icegate signs with) and asserts the answer's `Authorization` carries it; returns the
/// signed header names.
fn assert_verifies(method: &str, answer: &Value) -> Vec<String> {
    assert_verifies_with(method, answer, (KEY_ID, SECRET))
}

/// As [`assert_verifies`], for a signature made with the key `key_id` whose secret is `secret`.
pub(super) fn assert_verifies_with(method: &str, answer: &Value, (key_id, secret): (&str, &str)) -> Vec<String> {
    let uri: http::Uri = answer["uri"].as_str().unwrap().parse().unwrap();
    let headers = &answer["headers"];
    let authorization = header(headers, "authorization");
    let date = header(headers, "x-amz-date");
    let scope = format!("{}/us-east-1/s3/aws4_request", &date[..8]);
    let signed: Vec<String> = authorization
        .split("SignedHeaders=")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .split(';')
        .map(str::to_owned)
        .collect();
    let canonical_headers: String = signed
        .iter()
        .map(|name| {
            let value = if name == "host" { uri.authority().unwrap().as_str() } else { header(headers, name) };
            format!("{name}:{}\n", value.trim())
        })
        .collect();
    let mut query: Vec<String> = uri
        .query()
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| if p.contains('=') { p.to_owned() } else { format!("{p}=") })
        .collect();
    query.sort();
    let canonical = format!(
        "{method}\n{}\n{}\n{canonical_headers}\n{}\n{}",
        uri.path(),
        query.join("&"),
        signed.join(";"),
        header(headers, "x-amz-content-sha256"),
    );
    let to_sign = format!("AWS4-HMAC-SHA256\n{date}\n{scope}\n{}", hex(&Sha256::digest(canonical.as_bytes())));
    let mut key = hmac(format!("AWS4{secret}").as_bytes(), &date[..8]);
    for part in ["us-east-1", "s3", "aws4_request"] {
        key = hmac(&key, part);
    }
    let expected = format!(
        "AWS4-HMAC-SHA256 Credential={key_id}/{scope}, SignedHeaders={}, Signature={}",
        signed.join(";"),
        hex(&hmac(&key, &to_sign))
    );
    assert_eq!(authorization, expected, "canonical request:\n{canonical}");
    signed
}

#[tokio::test]
async fn local_signer_signs_an_authorized_read_itself_and_never_asks_the_catalog() {
    let upstream = table_route_catalog(json!({})).await;
    let g = local_gate(&upstream).await;
    let a = sign(&g, &sign_body("GET", OBJECT)).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let answer = a.json();
    assert_eq!(answer["uri"], OBJECT);
    let signed = assert_verifies("GET", &answer);
    for name in ["host", "x-amz-content-sha256", "x-amz-date", "x-amz-security-token"] {
        assert!(signed.iter().any(|s| s == name), "{name} is not signed: {signed:?}");
    }
    assert_eq!(header(&answer["headers"], "x-amz-content-sha256"), "UNSIGNED-PAYLOAD");
    assert_eq!(header(&answer["headers"], "x-amz-security-token"), TOKEN);
    assert_eq!(a.headers.get("cache-control"), None, "a read's answer may be cached");
    // the table was loaded for its locations; no sign request reached the catalog
    assert_eq!(signs_received(&upstream), 0);
    assert!(upstream.requests().iter().all(|r| r.target == TABLE), "{:?}", upstream.requests());
}

#[tokio::test]
async fn local_signer_answers_to_writes_are_never_cached() {
    let upstream = table_route_catalog(json!({})).await;
    let g = local_gate(&upstream).await;
    let a = sign(&g, &sign_body("PUT", OBJECT)).await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_verifies("PUT", &a.json());
    assert_eq!(a.headers.get("cache-control").map(|v| v.to_str().unwrap()), Some("no-store"));
    assert_eq!(signs_received(&upstream), 0);
}

#[tokio::test]
async fn local_signer_refuses_a_refused_header_or_a_key_outside_the_table_and_signs_nothing() {
    let upstream = table_route_catalog(json!({})).await;
    let g = local_gate(&upstream).await;
    let public =
        json!({"region": "us-east-1", "method": "PUT", "uri": OBJECT, "headers": {"x-amz-acl": ["public-read"]}});
    let outside = sign_body("GET", "https://lake.s3.amazonaws.com/wh/hr/payroll/data/f.parquet");
    for body in [public, outside] {
        let a = sign(&g, &body).await;
        a.assert_error(403, "ForbiddenException");
        assert!(!a.text().contains("AWS4-HMAC-SHA256"), "{}", a.text());
    }
    assert_eq!(signs_received(&upstream), 0);
}

#[tokio::test]
async fn local_signer_binds_a_batch_delete_to_its_checked_body() {
    let upstream = table_route_catalog(json!({})).await;
    let g = local_gate(&upstream).await;
    let mut body = delete_body("<Object><Key>wh/sales/orders/data/a</Key></Object>");
    // what Iceberg's S3FileIO sends: the caller's claim is replaced by the body's hash
    body["headers"] = json!({"X-Amz-Content-SHA256": ["UNSIGNED-PAYLOAD"]});
    let xml = body["body"].as_str().unwrap().to_owned();
    let a = sign(&g, &body).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let answer = a.json();
    let signed = assert_verifies("POST", &answer);
    assert!(signed.iter().any(|s| s == "x-amz-content-sha256"), "{signed:?}");
    assert_eq!(header(&answer["headers"], "x-amz-content-sha256"), hex(&Sha256::digest(xml.as_bytes())));
    assert_eq!(a.headers.get("cache-control").map(|v| v.to_str().unwrap()), Some("no-store"));
    assert_eq!(signs_received(&upstream), 0);
    // a key outside the table is refused, and nothing signed
    let outside = delete_body("<Object><Key>wh/hr/payroll/a</Key></Object>");
    sign(&g, &outside).await.assert_error(403, "ForbiddenException");
    assert_eq!(signs_received(&upstream), 0);
}

/// icegate signing as `credentials.sts.role_arn`, assumed at `sts` with the chain's key.
async fn role_gate(upstream: &FakeUpstream, sts: &FakeUpstream, refresh_before_seconds: u64) -> Gate {
    let sts_url = sts.url("");
    local_gate_with(upstream, POLICY, move |c| {
        c.credentials.sts.role_arn = Some("arn:aws:iam::123456789012:role/icegate-signer".into());
        c.credentials.sts.endpoint = Some(sts_url);
        c.credentials.sts.external_id = Some("ext-1".into());
        c.credentials.sts.duration_seconds = 900;
        c.credentials.sts.refresh_before_seconds = refresh_before_seconds;
    })
    .await
}

#[tokio::test]
async fn local_signer_with_a_role_signs_with_the_roles_credentials_assumed_once() {
    let upstream = table_route_catalog(json!({})).await;
    let sts = crate::sts::fake_sts(3600).await;
    let g = role_gate(&upstream, &sts, 300).await;
    for method in ["GET", "PUT"] {
        let a = sign(&g, &sign_body(method, OBJECT)).await;
        assert_eq!(a.status, 200, "{}", a.text());
        let answer = a.json();
        // the fake STS's credentials: key ASIAMINTED, secret `secret-of-ASIAMINTED`
        assert_verifies_with(method, &answer, ("ASIAMINTED", "secret-of-ASIAMINTED"));
        assert_eq!(header(&answer["headers"], "x-amz-security-token"), "minted-token");
    }
    let calls = sts.requests();
    assert_eq!(calls.len(), 1, "assumed once, then reused while fresh: {calls:#?}");
    crate::sts::assert_signed(&calls[0], KEY_ID, SECRET);
    let form: std::collections::BTreeMap<String, String> = crate::sts::form(&calls[0]).into_iter().collect();
    assert_eq!(form["Action"], "AssumeRole");
    assert_eq!(form["RoleArn"], "arn:aws:iam::123456789012:role/icegate-signer");
    assert_eq!(form["RoleSessionName"], "icegate-signer");
    assert_eq!(form["ExternalId"], "ext-1");
    assert_eq!(form["DurationSeconds"], "900");
    // the role's own permissions: no session policy narrows them, no tags need sts:TagSession
    assert!(form.keys().all(|k| k != "Policy" && !k.starts_with("Tags.")), "{form:?}");
    assert_eq!(signs_received(&upstream), 0);
}

#[tokio::test]
async fn local_signer_renews_the_roles_credentials_before_they_expire() {
    let upstream = table_route_catalog(json!({})).await;
    // credentials that expire within `refresh_before_seconds` are never reused
    let sts = crate::sts::fake_sts(200).await;
    let g = role_gate(&upstream, &sts, 300).await;
    for _ in 0..2 {
        assert_eq!(sign(&g, &sign_body("GET", OBJECT)).await.status, 200);
    }
    assert_eq!(sts.requests().len(), 2);
}

#[tokio::test]
async fn local_signer_a_refused_assume_role_is_503_without_stss_words() {
    let upstream = table_route_catalog(json!({})).await;
    let sts = FakeUpstream::start(|_: &Recorded| {
        Reply::raw(
            403,
            "<ErrorResponse><Error><Code>AccessDenied</Code><Message>User: arn:aws:iam::1:user/icegate is not authorized</Message></Error></ErrorResponse>",
        )
    })
    .await;
    let g = role_gate(&upstream, &sts, 300).await;
    let message = sign(&g, &sign_body("GET", OBJECT)).await.assert_error(503, "ServiceUnavailableException");
    assert!(
        message.contains("signing role") && !message.contains("arn:") && !message.contains("AccessDenied"),
        "{message}"
    );
    assert_eq!(signs_received(&upstream), 0);
}

#[tokio::test]
async fn local_signer_never_signs_what_http_stacks_change_on_the_way() {
    // botocore sends `Expect: 100-continue` with a PutObject and signs without it; signed, it
    // made moto (and any store that recomputes as the SDKs sign) refuse every such PUT.
    let upstream = table_route_catalog(json!({})).await;
    let g = local_gate(&upstream).await;
    let body = json!({"region": "us-east-1", "method": "PUT", "uri": OBJECT,
                      "headers": {"Expect": ["100-continue"], "Connection": ["keep-alive"], "Content-Length": ["10"]}});
    let a = sign(&g, &body).await;
    assert_eq!(a.status, 200, "{}", a.text());
    let signed = assert_verifies("PUT", &a.json());
    assert!(signed.iter().all(|h| h != "expect" && h != "connection"), "{signed:?}");
    assert!(signed.iter().any(|h| h == "content-length"), "{signed:?}");
}
