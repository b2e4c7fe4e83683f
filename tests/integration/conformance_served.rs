//! The conformance corpus (docs/design.md §11) through the SERVED path: each case is sent to icegate
//! in front of the recording fake catalog, and the status the client gets (and the list entries
//! it sees) is compared with the case's expectation, so that `explain` (which runs the same
//! cases offline, tests/integration/conformance.rs) and enforcement cannot drift apart. The
//! fake catalog answers as `explain` assumes (docs/design.md §10): the named object exists as the
//! case says, nothing else exists (no collision), no stage-create location is known, a list
//! answers with the case's `list_response`, and a namespace's metadata carries the case's
//! `namespace_location` as its `location` property, and a table's load the case's `table_metadata`. Without one, explain knows no directory and
//! refuses every location a caller without `TOP` chooses; the fake then reports a directory that
//! no chosen location of the corpus lies in, which the served path refuses alike.

use crate::conformance::{BEING_BUILT, Document, against_known, corpus};
use crate::fake_upstream::{FakeUpstream, Recorded, Reply, gate, send};
use icegate::config::{JwtIdentity, Provider};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

const SECRET: &str = "the conformance corpus's shared secret";
const ISSUER: &str = "icegate-conformance";

/// What the fake catalog answers for the case being sent.
#[derive(Clone, Debug, Default)]
struct Script {
    /// The case's path, percent-decoded and lower-cased, without its query.
    path: String,
    exists: bool,
    list_response: Option<Value>,
    /// For a sign request: the table's path and a load-table answer whose location holds the
    /// object to sign (`explain` checks no sign location, docs/design.md §10).
    sign_table: Option<(String, String)>,
    /// The `location` property of every namespace loaded that is not the case's object.
    namespace_location: String,
    /// A load-table answer whose current schema has every column the policy's read
    /// restrictions name, for a policy that has some (docs/design.md §8).
    table_answer: Option<String>,
    /// The case's `table_metadata`: what a load of any table answers (docs/design.md §8 "A
    /// restriction keeps covering what it covered").
    table_metadata: Option<Value>,
}

/// A directory no location of the corpus lies in: the served stand-in for "not known".
const NO_DIRECTORY: &str = "s3://icegate-conformance-no-directory/none";

fn comparable(target: &str) -> String {
    let path = target.split('?').next().unwrap_or_default();
    percent_encoding::percent_decode_str(path).decode_utf8_lossy().to_lowercase()
}

fn answer(script: &Script, r: &Recorded) -> Reply {
    match r.method.as_str() {
        // the lookup of 403-or-404 asks about the named object; any other HEAD is a collision
        // check, and nothing collides
        "HEAD" if comparable(&r.target) == script.path && script.exists => Reply::raw(200, ""),
        "HEAD" => Reply::raw(404, ""),
        "GET" if script.table_metadata.is_some() && comparable(&r.target).contains("/tables/") => {
            let metadata = script.table_metadata.clone().unwrap_or_default();
            Reply::json(200, json!({"metadata-location": "s3://bucket/t/metadata/2.json", "metadata": metadata}))
        }
        "GET" if comparable(&r.target) == script.path => match &script.list_response {
            Some(list) => Reply::json(200, list.clone()),
            // a list the case gives no answer for is empty
            None if script.path.ends_with("/namespaces") => Reply::json(200, json!({"namespaces": []})),
            None if script.path.ends_with("/tables") || script.path.ends_with("/views") => {
                Reply::json(200, json!({"identifiers": []}))
            }
            None => match &script.table_answer {
                Some(table) if script.path.contains("/tables/") => Reply::raw(200, table),
                _ => Reply::ok(),
            },
        },
        "GET" => match &script.sign_table {
            Some((table, answer)) if comparable(&r.target) == *table => Reply::raw(200, answer),
            _ if comparable(&r.target).rsplit_once("/namespaces/").is_some_and(|(_, ns)| !ns.contains('/')) => {
                Reply::json(200, json!({"namespace": [], "properties": {"location": script.namespace_location}}))
            }
            _ => Reply::ok(),
        },
        _ => Reply::ok(),
    }
}

/// The table a sign request of `case` names, and a load-table answer placing it where the
/// request's object is.
fn sign_table(case: &Value) -> Option<(String, String)> {
    let path = comparable(case["path"].as_str()?);
    let table = path.strip_suffix("/sign")?.to_owned();
    let uri = case["body"]["uri"].as_str()?;
    let location = uri.rfind('/').and_then(|end| uri.get(..end))?;
    let metadata =
        json!({"format-version": 2, "table-uuid": "u", "location": location, "properties": {}, "schemas": []});
    let answer = json!({"metadata-location": format!("{location}/metadata/1.json"), "metadata": metadata});
    Some((table, answer.to_string()))
}

/// Every column a policy's read restrictions name (their `columns` and the terms of their row
/// filters), as dotted paths.
fn restricted_columns(policy: &Value) -> Vec<String> {
    fn terms(filter: &Value, out: &mut Vec<String>) {
        match filter {
            Value::Object(o) => {
                for (k, v) in o {
                    match (k.as_str(), v) {
                        ("term", Value::String(name)) => out.push(name.clone()),
                        ("name", Value::String(name)) if o.get("type") == Some(&json!("reference")) => {
                            out.push(name.clone())
                        }
                        _ => terms(v, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| terms(i, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for r in policy["restrictions"].as_array().into_iter().flatten() {
        out.extend(r["columns"].as_object().into_iter().flat_map(|c| c.keys().cloned()));
        terms(&r["row_filter"], &mut out);
    }
    out.sort();
    out.dedup();
    out
}

/// A load-table answer whose current schema holds `columns` (optional strings, nested ones
/// as structs), for the served path to resolve read restrictions against.
fn table_answer(columns: &[String]) -> Option<String> {
    if columns.is_empty() {
        return None;
    }
    let mut next_id = 0;
    fn insert(fields: &mut Vec<Value>, parts: &[&str], next_id: &mut i64) {
        let Some((first, rest)) = parts.split_first() else { return };
        let at = fields.iter().position(|f| f["name"] == json!(first)).unwrap_or_else(|| {
            *next_id += 1;
            let ty = if rest.is_empty() { json!("string") } else { json!({"type": "struct", "fields": []}) };
            fields.push(json!({"id": *next_id, "name": first, "required": false, "type": ty}));
            fields.len() - 1
        });
        if let Some(inner) = fields[at].get_mut("type").and_then(|t| t.get_mut("fields")).and_then(Value::as_array_mut)
        {
            insert(inner, rest, next_id);
        }
    }
    let mut fields = Vec::new();
    for c in columns {
        insert(&mut fields, &c.split('.').collect::<Vec<_>>(), &mut next_id);
    }
    let metadata = json!({"format-version": 2, "table-uuid": "u", "location": "s3://bucket/t", "properties": {},
        "current-schema-id": 0, "schemas": [{"schema-id": 0, "type": "struct", "fields": fields}]});
    Some(json!({"metadata-location": "s3://bucket/t/metadata/1.json", "metadata": metadata}).to_string())
}

/// The corpus names a sign request's object as `s3://bucket/key`; a client sends the HTTPS URL
/// of the object (the S3 signer spec), which the served check reads (docs/design.md §8), so the case
/// is sent as `https://bucket.s3.amazonaws.com/key`.
fn signed_over_https(body: &Value) -> Value {
    let mut body = body.clone();
    if let Some((bucket, key)) = body["uri"].as_str().and_then(|u| u.strip_prefix("s3://")?.split_once('/')) {
        body["uri"] = json!(format!("https://{bucket}.s3.amazonaws.com/{key}"));
    }
    body
}

/// A token of `case`'s user, groups and identity-bound roles.
fn token(case: &Value) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let mut claims = json!({
        "sub": case["user"],
        "iss": ISSUER,
        "aud": "icegate",
        "exp": now + 600,
        "groups": case.get("groups").cloned().unwrap_or_else(|| json!([])),
    });
    if let Some(roles) = case.get("claim_roles") {
        claims["roles"] = roles.clone();
    }
    let key = EncodingKey::from_secret(SECRET.as_bytes()).unwrap();
    format!("Bearer {}", jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &key).unwrap())
}

fn ownership(case: &Value) -> icegate::config::Ownership {
    match case.get("ownership_mode").and_then(Value::as_str) {
        Some("narrowed") => icegate::config::Ownership::Narrowed,
        Some("caller") => icegate::config::Ownership::Caller,
        _ => icegate::config::Ownership::Always,
    }
}

/// Sends `case` to icegate serving `policy`; `Err` says how the answer differs from what the
/// case expects.
async fn run_case(policy: &str, case: &Value) -> Result<(), String> {
    let script = Arc::new(Mutex::new(Script {
        path: comparable(case["path"].as_str().unwrap_or_default()),
        exists: case.get("exists").and_then(Value::as_bool).unwrap_or(true),
        list_response: case.get("list_response").cloned(),
        sign_table: sign_table(case),
        namespace_location: case.get("namespace_location").and_then(Value::as_str).unwrap_or(NO_DIRECTORY).to_owned(),
        table_answer: table_answer(&restricted_columns(&serde_json::from_str(policy).unwrap_or_default())),
        table_metadata: case.get("table_metadata").cloned(),
    }));
    let scripted = Arc::clone(&script);
    let upstream = FakeUpstream::start(move |r: &Recorded| answer(&scripted.lock().unwrap(), r)).await;
    let mode = ownership(case);
    let g = gate(&upstream.url(""), policy, |c| {
        c.identity.providers = vec![Provider::Jwt];
        c.identity.jwt = JwtIdentity {
            issuer: Some(ISSUER.into()),
            audience: Some("icegate".into()),
            algorithms: vec!["HS256".into()],
            hmac_secret: Some(SECRET.into()),
            active_roles_claim: Some("roles".into()),
            ..JwtIdentity::default()
        };
        c.narrowing.ownership = mode;
    })
    .await;
    let auth = token(case);
    let mut headers = vec![("authorization", auth.as_str())];
    if let Some(roles) = case.get("active_roles").and_then(Value::as_str) {
        headers.push(("x-gravitino-active-roles", roles));
    }
    let body = case.get("body").map(|b| signed_over_https(b).to_string()).unwrap_or_default();
    if case.get("body").is_some() {
        headers.push(("content-type", "application/json"));
    }
    let method = case["method"].as_str().unwrap_or_default();
    let a = send(g.addr, method, case["path"].as_str().unwrap_or_default(), &headers, body.as_bytes()).await;
    let expect = &case["expect"];
    let mut problems = Vec::new();
    if let Some(status) = expect.get("status").and_then(Value::as_u64)
        && u64::from(a.status) != status
    {
        problems.push(format!("expected status {status}, got {} ({})", a.status, a.text()));
    }
    if let Some(visible) = expect.get("visible") {
        let listed = serde_json::from_slice::<Value>(&a.body)
            .ok()
            .and_then(|v| v.as_object()?.iter().find(|(k, _)| *k != "next-page-token").map(|(_, list)| list.clone()));
        if listed.as_ref() != Some(visible) {
            problems.push(format!("expected visible {visible}, got {}", a.text()));
        }
    }
    // the served answer carries read restrictions exactly when explain says a trusted reader's
    // loadTable has some (docs/design.md §8)
    if let Some(want) = expect.get("restrictions")
        && a.status == 200
        && method == "GET"
    {
        let carried =
            serde_json::from_slice::<Value>(&a.body).ok().is_some_and(|v| v.get("read-restrictions").is_some());
        let expected = want.get("trusted") == Some(&json!(true));
        if carried != expected {
            problems.push(format!("expected read-restrictions {expected}, got {}", a.text()));
        }
    }
    match problems.is_empty() {
        true => Ok(()),
        false => Err(problems.join("; ")),
    }
}

/// Sends every case of `documents`; returns how many ran and the failures as `FILE: NAME: why`.
async fn run_documents(documents: &[Document]) -> (usize, Vec<String>) {
    let (mut ran, mut failures) = (0, Vec::new());
    for doc in documents {
        for case in &doc.cases {
            ran += 1;
            let name = case.get("name").and_then(Value::as_str).unwrap_or("<unnamed>");
            let outcome = match &doc.snapshot {
                Ok(_) => run_case(&doc.policy, case).await,
                Err(e) => Err(format!("the document's policy does not load: {e}")),
            };
            if let Err(why) = outcome {
                failures.push(format!("{}: {name}: {why}", doc.file_name));
            }
        }
    }
    (ran, failures)
}

#[tokio::test]
async fn every_shared_conformance_case_is_enforced_as_explained() {
    let (ran, failures) = run_documents(&corpus(&crate::support::shared_dir("conformance"))).await;
    assert!(failures.is_empty(), "{} of {ran} cases served differently:\n{}", failures.len(), failures.join("\n"));
}

#[tokio::test]
async fn every_own_conformance_case_is_enforced_as_explained() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let (ran, failures) = run_documents(&corpus(&dir)).await;
    assert!(failures.is_empty(), "{} of {ran} cases served differently:\n{}", failures.len(), failures.join("\n"));
}

/// Served, each folder of rules being built fails exactly the cases it fails offline.
#[tokio::test]
async fn folders_being_built_are_enforced_as_explained_but_for_their_known_failures() {
    let mut problems = Vec::new();
    for folder in BEING_BUILT {
        let (ran, failures) = run_documents(&corpus(&crate::support::shared_dir(folder))).await;
        let (unexpected, now_passing) = against_known(folder, &failures);
        if !unexpected.is_empty() || !now_passing.is_empty() {
            problems.push(format!(
                "{folder} served ({ran} cases): unexpected failures {unexpected:#?}; known failures that pass {now_passing:#?}"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
