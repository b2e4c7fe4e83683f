//! `s3-downscope` minting against an in-process fake STS: the AssumeRole request (form, session
//! policy, SigV4, session name and tags), caching and refresh, STS errors, and icegate's own
//! credentials from the environment, a profile or web identity.

use crate::fake_upstream::{FakeUpstream, Recorded, Reply};
use crate::support::TempDir;
use aws_smithy_types::DateTime;
use aws_smithy_types::date_time::Format;
use hmac::{Hmac, Mac};
use icegate::config::credentials::Sts;
use icegate::core::policy::authorize::Scope;
use icegate::serve::storage::aws_chain::{Chain, ChainError, Env};
use icegate::serve::storage::sts::{Downscoper, MintRequest, StsClient, StsError};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const ROLE: &str = "arn:aws:iam::123456789012:role/icegate-data";
const SECRET: &str = "base-secret";

fn expiration_in(seconds: i64) -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
    DateTime::from_secs(now + seconds).fmt(Format::DateTime).unwrap()
}

pub(crate) fn credentials_xml(action: &str, key_id: &str, token: &str, expires_in: i64) -> String {
    format!(
        r#"<{action}Response xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><{action}Result><Credentials>
        <AccessKeyId>{key_id}</AccessKeyId><SecretAccessKey>secret-of-{key_id}</SecretAccessKey>
        <SessionToken>{token}</SessionToken><Expiration>{}</Expiration></Credentials></{action}Result>
        <ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></{action}Response>"#,
        expiration_in(expires_in)
    )
}

pub(crate) fn form(r: &Recorded) -> Vec<(String, String)> {
    form_urlencoded::parse(&r.body).into_owned().collect()
}

fn param(r: &Recorded, name: &str) -> String {
    form(r).into_iter().find(|(k, _)| k == name).map(|(_, v)| v).unwrap_or_else(|| panic!("no `{name}`"))
}

fn policy(r: &Recorded) -> Value {
    serde_json::from_str(&param(r, "Policy")).unwrap()
}

/// A fake STS answering every AssumeRole (and AssumeRoleWithWebIdentity) with fresh credentials.
pub(crate) async fn fake_sts(expires_in: i64) -> FakeUpstream {
    FakeUpstream::start(move |r| {
        let action = form(r).into_iter().find(|(k, _)| k == "Action").map(|(_, v)| v).unwrap_or_default();
        match action.as_str() {
            "AssumeRoleWithWebIdentity" => Reply::raw(200, &credentials_xml(&action, "ASIAWEB", "web-token", 3600)),
            _ => Reply::raw(200, &credentials_xml("AssumeRole", "ASIAMINTED", "minted-token", expires_in)),
        }
    })
    .await
}

fn config(sts: &FakeUpstream) -> Sts {
    Sts {
        role_arn: Some(ROLE.into()),
        region: "us-east-1".into(),
        endpoint: Some(sts.url("")),
        duration_seconds: 900,
        external_id: None,
        refresh_before_seconds: 300,
    }
}

fn env_chain(token: Option<&str>) -> Chain {
    let mut vars = vec![("AWS_ACCESS_KEY_ID", "AKIDBASE"), ("AWS_SECRET_ACCESS_KEY", SECRET)];
    vars.extend(token.map(|t| ("AWS_SESSION_TOKEN", t)));
    Chain::new(Env::from_pairs(vars))
}

fn strings(l: &[&str]) -> Vec<String> {
    l.iter().map(|s| (*s).to_owned()).collect()
}

fn request<'a>(table: &'a str, scope: Scope, roles: &'a [String], locations: &'a [String]) -> MintRequest<'a> {
    MintRequest { user: "alice@example.com", active_roles: roles, table, scope, locations }
}

fn hmac(key: &[u8], data: &str) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
    mac.update(data.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Checks the `Authorization` header's shape and recomputes its signature from the request as
/// received, independently of aws-sigv4.
pub(crate) fn assert_signed(r: &Recorded, key_id: &str, secret: &str) {
    let auth = r.header("authorization").expect("signed");
    let rest = auth.strip_prefix("AWS4-HMAC-SHA256 Credential=").unwrap_or_else(|| panic!("{auth}"));
    let (credential, rest) = rest.split_once(", SignedHeaders=").unwrap();
    let (signed, signature) = rest.split_once(", Signature=").unwrap();
    let scope: Vec<&str> = credential.split('/').collect();
    assert_eq!(scope.len(), 5, "{credential}");
    assert_eq!((scope[0], scope[2], scope[3], scope[4]), (key_id, "us-east-1", "sts", "aws4_request"));
    assert!(scope[1].len() == 8 && scope[1].bytes().all(|b| b.is_ascii_digit()), "{credential}");
    assert!(signature.len() == 64 && signature.bytes().all(|b| b.is_ascii_hexdigit()), "{signature}");
    for needed in ["content-type", "host", "x-amz-date"] {
        assert!(signed.split(';').any(|h| h == needed), "{needed} not signed: {signed}");
    }
    let headers: String = signed.split(';').map(|h| format!("{h}:{}\n", r.header(h).unwrap().trim())).collect();
    let canonical = format!("POST\n/\n\n{headers}\n{signed}\n{}", hex(&Sha256::digest(&r.body)));
    let amz_date = r.header("x-amz-date").unwrap();
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{}/us-east-1/sts/aws4_request\n{}",
        scope[1],
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    let key = ["us-east-1", "sts", "aws4_request"]
        .iter()
        .fold(hmac(format!("AWS4{secret}").as_bytes(), scope[1]), |k, part| hmac(&k, part));
    assert_eq!(hex(&hmac(&key, &to_sign)), signature, "signature does not verify");
}

#[tokio::test]
async fn assume_role_sends_the_exact_form_signed_with_the_base_credentials() {
    let sts = fake_sts(3600).await;
    let mut config = config(&sts);
    config.external_id = Some("ext-1".into());
    let downscoper = Downscoper::with_chain(&config, env_chain(Some("base-token"))).unwrap();
    let roles = strings(&["analyst", "etl"]);
    let locations = strings(&["s3://bucket/wh/db/t", "s3://bucket/wh/db/t/data", "gs://other/t"]);
    let minted = downscoper.mint(&request("cat.db.t", Scope::Read, &roles, &locations)).await.unwrap();
    assert_eq!(
        (minted.access_key_id.as_str(), minted.secret_access_key.as_str(), minted.session_token.as_str()),
        ("ASIAMINTED", "secret-of-ASIAMINTED", "minted-token")
    );
    let debug = format!("{minted:?} {downscoper:?}");
    assert!(!debug.contains("secret-of") && !debug.contains("minted-token") && !debug.contains(SECRET), "{debug}");

    let r = sts.only();
    assert_eq!((r.method.as_str(), r.target.as_str()), ("POST", "/"));
    assert_eq!(r.header("content-type"), Some("application/x-www-form-urlencoded; charset=utf-8"));
    assert_eq!(r.header("x-amz-security-token"), Some("base-token"));
    assert_signed(&r, "AKIDBASE", SECRET);
    assert!(r.header("authorization").unwrap().contains("x-amz-security-token"));
    let mut sent = form(&r);
    sent.retain(|(k, _)| k != "Policy");
    let expected = [
        ("Action", "AssumeRole"),
        ("Version", "2011-06-15"),
        ("RoleArn", ROLE),
        ("RoleSessionName", "icegate-alice@example.com"),
        ("DurationSeconds", "900"),
        ("ExternalId", "ext-1"),
        ("Tags.member.1.Key", "icegate:user"),
        ("Tags.member.1.Value", "alice@example.com"),
        ("Tags.member.2.Key", "icegate:active-roles"),
        ("Tags.member.2.Value", "analyst etl"),
        ("Tags.member.3.Key", "icegate:table"),
        ("Tags.member.3.Value", "cat.db.t"),
    ];
    assert_eq!(sent, expected.map(|(k, v)| (k.to_owned(), v.to_owned())));
    assert_eq!(
        policy(&r),
        json!({"Version": "2012-10-17", "Statement": [
            {"Sid": "Objects", "Effect": "Allow", "Action": ["s3:GetObject", "s3:GetObjectVersion"],
             "Resource": ["arn:aws:s3:::bucket/wh/db/t/*"]},
            {"Sid": "List0", "Effect": "Allow", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::bucket",
             "Condition": {"StringLike": {"s3:prefix": ["wh/db/t/*"]}}},
            {"Sid": "BucketLocation", "Effect": "Allow", "Action": "s3:GetBucketLocation",
             "Resource": ["arn:aws:s3:::bucket"]},
        ]})
    );
}

#[tokio::test]
async fn write_scope_adds_write_actions_and_a_table_without_s3_location_gets_deny_all() {
    let sts = fake_sts(3600).await;
    let downscoper = Downscoper::with_chain(&config(&sts), env_chain(None)).unwrap();
    let locations = strings(&["s3a://bucket/wh/db/t/", "s3://logs/t"]);
    downscoper.mint(&request("cat.db.t", Scope::Write, &[], &locations)).await.unwrap();
    let no_s3 = strings(&["file:///tmp/wh/db/local"]);
    downscoper.mint(&request("cat.db.local", Scope::Write, &[], &no_s3)).await.unwrap();
    let sent = sts.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].header("x-amz-security-token"), None);
    assert!(!sent[0].header("authorization").unwrap().contains("x-amz-security-token"));
    assert_signed(&sent[0], "AKIDBASE", SECRET);
    assert_eq!(param(&sent[0], "Tags.member.2.Value"), "");
    let write = policy(&sent[0]);
    let statements = write["Statement"].as_array().unwrap();
    assert_eq!(statements.len(), 4);
    assert_eq!(
        statements[0],
        json!({"Sid": "Objects", "Effect": "Allow",
            "Action": ["s3:GetObject", "s3:GetObjectVersion", "s3:PutObject", "s3:DeleteObject",
                       "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"],
            "Resource": ["arn:aws:s3:::bucket/wh/db/t/*", "arn:aws:s3:::logs/t/*"]})
    );
    assert_eq!(statements[1]["Resource"], "arn:aws:s3:::bucket");
    assert_eq!(statements[1]["Condition"], json!({"StringLike": {"s3:prefix": ["wh/db/t/*"]}}));
    assert_eq!(statements[2]["Resource"], "arn:aws:s3:::logs");
    assert_eq!(statements[2]["Condition"], json!({"StringLike": {"s3:prefix": ["t/*"]}}));
    assert_eq!(statements[3]["Resource"], json!(["arn:aws:s3:::bucket", "arn:aws:s3:::logs"]));
    assert_eq!(
        policy(&sent[1]),
        json!({"Version": "2012-10-17", "Statement": [{"Sid": "DenyAll", "Effect": "Deny", "Action": "*", "Resource": "*"}]})
    );
}

#[tokio::test]
async fn credentials_are_cached_per_key_and_concurrent_mints_share_one_call() {
    let sts = FakeUpstream::start(|_| {
        Reply::raw(200, &credentials_xml("AssumeRole", "ASIAMINTED", "t", 3600)).after(Duration::from_millis(150))
    })
    .await;
    let downscoper = Arc::new(Downscoper::with_chain(&config(&sts), env_chain(None)).unwrap());
    let roles = strings(&["analyst"]);
    let locations = strings(&["s3://bucket/wh/db/t"]);
    let mints = (0..8).map(|_| {
        let (d, roles, locations) = (downscoper.clone(), roles.clone(), locations.clone());
        tokio::spawn(async move { d.mint(&request("cat.db.t", Scope::Read, &roles, &locations)).await.unwrap() })
    });
    let all: Vec<_> = futures_join(mints).await;
    assert!(all.iter().all(|m| Arc::ptr_eq(m, &all[0])));
    assert_eq!(sts.requests().len(), 1);
    downscoper.mint(&request("cat.db.t", Scope::Read, &roles, &locations)).await.unwrap();
    assert_eq!(sts.requests().len(), 1, "same key: cached");
    downscoper.mint(&request("cat.db.t", Scope::Write, &roles, &locations)).await.unwrap();
    assert_eq!(sts.requests().len(), 2, "another scope: minted");
    downscoper.mint(&request("cat.db.t", Scope::Read, &[], &locations)).await.unwrap();
    assert_eq!(sts.requests().len(), 3, "other active roles: minted");
    downscoper.mint(&request("cat.db.u", Scope::Read, &roles, &locations)).await.unwrap();
    assert_eq!(sts.requests().len(), 4, "another table: minted");
}

async fn futures_join<T: Send + 'static>(handles: impl Iterator<Item = tokio::task::JoinHandle<T>>) -> Vec<T> {
    let mut out = Vec::new();
    for h in handles.collect::<Vec<_>>() {
        out.push(h.await.unwrap());
    }
    out
}

#[tokio::test]
async fn credentials_inside_the_refresh_window_are_minted_again() {
    let sts = fake_sts(60).await;
    let downscoper = Downscoper::with_chain(&config(&sts), env_chain(None)).unwrap();
    let locations = strings(&["s3://bucket/t"]);
    for _ in 0..2 {
        downscoper.mint(&request("cat.db.t", Scope::Read, &[], &locations)).await.unwrap();
    }
    assert_eq!(sts.requests().len(), 2);
}

#[tokio::test]
async fn an_sts_error_names_its_code_and_message_and_is_not_cached() {
    let sts = FakeUpstream::start(|_| {
        Reply::raw(
            403,
            "<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><Error><Type>Sender</Type>\
             <Code>AccessDenied</Code><Message>User is not authorized to perform: sts:AssumeRole</Message>\
             </Error><RequestId>r</RequestId></ErrorResponse>",
        )
    })
    .await;
    let downscoper = Downscoper::with_chain(&config(&sts), env_chain(None)).unwrap();
    let locations = strings(&["s3://bucket/t"]);
    for _ in 0..2 {
        let e = downscoper.mint(&request("cat.db.t", Scope::Read, &[], &locations)).await.unwrap_err();
        assert!(matches!(&e, StsError::Refused { code, .. } if code == "AccessDenied"), "{e:?}");
        assert_eq!(
            e.to_string(),
            "sts refused the request: `AccessDenied`: User is not authorized to perform: sts:AssumeRole"
        );
    }
    assert_eq!(sts.requests().len(), 2);
}

#[tokio::test]
async fn web_identity_credentials_sign_assume_role_and_are_reused() {
    let sts = fake_sts(3600).await;
    let dir = TempDir::new("sts-web-identity");
    let token_file = dir.write("token", "eyJ.service-account.jwt\n");
    let chain = Chain::new(Env::from_pairs([
        ("AWS_WEB_IDENTITY_TOKEN_FILE", token_file.to_str().unwrap()),
        ("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/icegate-pod"),
        ("AWS_ROLE_SESSION_NAME", "icegate-pod-1"),
        ("HOME", dir.path().to_str().unwrap()),
    ]));
    let downscoper = Downscoper::with_chain(&config(&sts), chain).unwrap();
    let locations = strings(&["s3://bucket/t"]);
    downscoper.mint(&request("cat.db.t", Scope::Read, &[], &locations)).await.unwrap();
    downscoper.mint(&request("cat.db.u", Scope::Read, &[], &locations)).await.unwrap();
    let sent = sts.requests();
    assert_eq!(sent.len(), 3, "one web identity call, then two AssumeRole");
    let web = &sent[0];
    assert_eq!(web.header("authorization"), None);
    assert_eq!(web.header("content-type"), Some("application/x-www-form-urlencoded; charset=utf-8"));
    let expected = [
        ("Action", "AssumeRoleWithWebIdentity"),
        ("Version", "2011-06-15"),
        ("RoleArn", "arn:aws:iam::123456789012:role/icegate-pod"),
        ("RoleSessionName", "icegate-pod-1"),
        ("WebIdentityToken", "eyJ.service-account.jwt"),
    ];
    assert_eq!(form(web), expected.map(|(k, v)| (k.to_owned(), v.to_owned())));
    for assume in &sent[1..] {
        assert_eq!(param(assume, "Action"), "AssumeRole");
        assert_eq!(assume.header("x-amz-security-token"), Some("web-token"));
        assert_signed(assume, "ASIAWEB", "secret-of-ASIAWEB");
    }
}

#[tokio::test]
async fn profiles_come_from_the_shared_files_with_the_credentials_file_winning() {
    let sts = fake_sts(3600).await;
    let client = StsClient::new(Some(&sts.url("/")), "us-east-1").unwrap();
    let dir = TempDir::new("sts-profile");
    std::fs::create_dir_all(dir.path().join(".aws")).unwrap();
    dir.write(".aws/credentials", "[default]\naws_access_key_id = AKIDHOME\naws_secret_access_key = home\n");
    let home = dir.path().to_str().unwrap().to_owned();
    let c = Chain::new(Env::from_pairs([("HOME", home.as_str())])).credentials(&client).await.unwrap();
    assert_eq!((c.access_key_id(), c.secret_access_key(), c.session_token()), ("AKIDHOME", "home", None));

    let config = dir.write(
        "config",
        "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = d\n\
         [profile dev]\nregion = eu-west-1\naws_access_key_id = AKIDCONFIG\naws_secret_access_key = from-config\n\
         aws_session_token = config-token\n",
    );
    let credentials = dir.write("credentials", "[dev]\naws_access_key_id = AKIDCREDS\n");
    let vars = [
        ("HOME", home.as_str()),
        ("AWS_PROFILE", "dev"),
        ("AWS_CONFIG_FILE", config.to_str().unwrap()),
        ("AWS_SHARED_CREDENTIALS_FILE", credentials.to_str().unwrap()),
    ];
    let c = Chain::new(Env::from_pairs(vars)).credentials(&client).await.unwrap();
    assert_eq!(
        (c.access_key_id(), c.secret_access_key(), c.session_token()),
        ("AKIDCREDS", "from-config", Some("config-token"))
    );
    let mut with_env = vars.to_vec();
    with_env.extend([("AWS_ACCESS_KEY_ID", "AKIDENV"), ("AWS_SECRET_ACCESS_KEY", "env")]);
    let c = Chain::new(Env::from_pairs(with_env)).credentials(&client).await.unwrap();
    assert_eq!(c.access_key_id(), "AKIDENV", "the environment comes first");

    let downscoper = Downscoper::with_chain(&crate::sts::config(&sts), Chain::new(Env::from_pairs(vars))).unwrap();
    downscoper.mint(&request("cat.db.t", Scope::Read, &[], &strings(&["s3://b/t"]))).await.unwrap();
    assert_signed(&sts.only(), "AKIDCREDS", "from-config");
}

#[tokio::test]
async fn a_missing_or_incomplete_chain_says_what_it_tried() {
    let sts = fake_sts(3600).await;
    let client = StsClient::new(Some(&sts.url("")), "us-east-1").unwrap();
    let dir = TempDir::new("sts-empty");
    let home = dir.path().to_str().unwrap();
    let e =
        Chain::new(Env::from_pairs([("HOME", home), ("AWS_PROFILE", "prod"), ("AWS_EC2_METADATA_DISABLED", "true")]))
            .credentials(&client)
            .await
            .unwrap_err();
    assert!(matches!(e, ChainError::NotFound(_)));
    let message = e.to_string();
    for named in ["AWS_ACCESS_KEY_ID", "profile `prod`", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN"] {
        assert!(message.contains(named), "{message}");
    }
    let e = Chain::new(Env::from_pairs([("AWS_ROLE_ARN", ROLE)])).credentials(&client).await.unwrap_err();
    assert_eq!(e.to_string(), "`AWS_ROLE_ARN` is set but `AWS_WEB_IDENTITY_TOKEN_FILE` is not");
    // the instance metadata service is off: on an EC2 runner it would serve the instance's role
    let no_instance = ("AWS_EC2_METADATA_DISABLED", "true");
    let downscoper =
        Downscoper::with_chain(&config(&sts), Chain::new(Env::from_pairs([("HOME", home), no_instance]))).unwrap();
    let e = downscoper.mint(&request("cat.db.t", Scope::Read, &[], &[])).await.unwrap_err();
    assert!(matches!(e, StsError::Chain(ChainError::NotFound(_))), "{e:?}");
    sts.assert_untouched();
}

#[test]
fn the_setup_needs_a_role_and_an_http_endpoint() {
    let mut config = Sts::default();
    let e = Downscoper::with_chain(&config, env_chain(None)).unwrap_err();
    assert_eq!(e.to_string(), "invalid sts setup: `credentials.sts.role_arn` is required in `s3-downscope` mode");
    config.role_arn = Some(ROLE.into());
    assert!(Downscoper::with_chain(&config, env_chain(None)).is_ok());
    config.endpoint = Some("ftp://127.0.0.1:21/".into());
    assert!(matches!(Downscoper::with_chain(&config, env_chain(None)), Err(StsError::Config(_))));
    let regional = StsClient::new(None, "eu-central-1").unwrap();
    assert_eq!(regional.endpoint().to_string(), "https://sts.eu-central-1.amazonaws.com/");
}
