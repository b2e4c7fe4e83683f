//! The audit line of a served request.

use super::*;

// ---- audit ----

/// icegate auditing to a file (in the returned directory) in front of `script`.
async fn with_audit_file(
    script: impl Fn(&crate::fake_upstream::Recorded) -> Reply + Send + Sync + 'static,
) -> (FakeUpstream, crate::fake_upstream::Gate, crate::support::TempDir, std::path::PathBuf) {
    let dir = crate::support::TempDir::new("audit");
    let file = dir.path().join("audit.jsonl");
    let path = file.clone();
    let (up, g) = setup_with(script, move |c| {
        c.audit.enabled = true;
        c.audit.file = Some(path);
    })
    .await;
    (up, g, dir, file)
}

#[tokio::test]
async fn every_request_gets_one_audit_line_without_secrets() {
    let (_up, g, _dir, file) = with_audit_file(|_| Reply::ok()).await;
    let secret = basic("alice");
    let a =
        send(g.addr, "GET", LOAD_ORDERS, &[("authorization", &secret), ("x-gravitino-active-roles", "analyst")], b"")
            .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let d = send(g.addr, "DELETE", LOAD_ORDERS, &[("authorization", &secret)], b"").await;
    assert_eq!(d.status, 403);
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{text}");
    let (allowed, denied) = (&lines[0], &lines[1]);
    assert_eq!(allowed["decision"], "allow");
    assert_eq!(allowed["user"], "alice");
    assert_eq!(allowed["operation"], "loadTable");
    assert_eq!(allowed["status"], 200);
    assert_eq!(allowed["upstream_status"], 200);
    assert_eq!(allowed["active_roles_header"], "analyst");
    assert_eq!(allowed["active_roles"], json!(["analyst"]));
    assert_eq!(allowed["objects"], json!([{"type": "TABLE", "fullName": "prod.sales.orders"}]));
    assert_eq!(allowed["policy_generation"], 1);
    assert!(allowed["credential"].is_string(), "{allowed}");
    assert_eq!(denied["decision"], "deny");
    assert_eq!(denied["status"], 403);
    assert_eq!(denied["operation"], "dropTable");
    assert!(denied["upstream_status"].is_null());
    assert!(denied["reason"].as_str().unwrap().contains("own(table)"), "{denied}");
    assert_ne!(allowed["request_id"], denied["request_id"]);
    // the credential never appears, neither encoded nor decoded
    assert!(!text.contains(secret.trim_start_matches("Basic ")) && !text.contains("alice:pw"), "{text}");
}

#[tokio::test]
async fn an_audit_line_names_the_objects_a_body_creates_or_renames() {
    // no namespace collides with a created or renamed table (the check asks with HEAD)
    let (_up, g, _dir, file) =
        with_audit_file(|r| if r.method == "HEAD" { Reply::raw(404, "") } else { Reply::ok() }).await;
    let create = br#"{"name":"payroll","schema":{"type":"struct","fields":[]}}"#;
    let json = ("content-type", "application/json");
    let target = "/v1/prod/namespaces/sales/tables";
    send(g.addr, "POST", target, &[("authorization", &basic("bob")), json], create).await;
    // bob may create, but not place the table's data himself: refused once the body is read
    let placed = br#"{"name":"payroll2","location":"file:///elsewhere","schema":{"type":"struct","fields":[]}}"#;
    let denied = send(g.addr, "POST", target, &[("authorization", &basic("bob")), json], placed).await;
    assert_eq!(denied.status, 403);
    let rename =
        br#"{"source":{"namespace":["sales"],"name":"orders"},"destination":{"namespace":["sales"],"name":"orders2"}}"#;
    let renamed =
        send(g.addr, "POST", "/v1/prod/tables/rename", &[("authorization", &basic("alice")), json], rename).await;
    assert_eq!(renamed.status, 200, "{}", renamed.text());
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3, "{text}");
    let created =
        json!([{"type": "SCHEMA", "fullName": "prod.sales"}, {"type": "TABLE", "fullName": "prod.sales.payroll"}]);
    assert_eq!((lines[0]["user"].as_str(), &lines[0]["objects"]), (Some("bob"), &created), "{text}");
    // a refused create names what it tried to create
    assert_eq!(lines[1]["decision"], "deny", "{text}");
    assert_eq!(lines[1]["objects"][1], json!({"type": "TABLE", "fullName": "prod.sales.payroll2"}), "{text}");
    assert_eq!(
        lines[2]["objects"],
        json!([
            {"type": "CATALOG", "fullName": "prod"},
            {"type": "TABLE", "fullName": "prod.sales.orders"},
            {"type": "TABLE", "fullName": "prod.sales.orders2"}
        ]),
        "{text}"
    );
}

#[tokio::test]
async fn a_refusal_sent_before_the_body_is_read_tells_the_client_the_connection_closes() {
    let (upstream, g) = setup().await;
    let body = br#"{"updates":[],"requirements":[]}"#;
    // dave (analyst) may not update: refused on the path, before the body is read
    let a = send(g.addr, "POST", LOAD_ORDERS, &[("authorization", &basic("dave"))], body).await;
    assert_eq!(a.status, 403);
    assert_eq!(a.headers.get("connection").map(|v| v.to_str().unwrap()), Some("close"));
    // a refusal after the body was read keeps the connection
    let bad = send(g.addr, "POST", LOAD_ORDERS, &[("authorization", &basic("alice"))], b"{").await;
    assert_eq!(bad.status, 400);
    assert!(bad.headers.get("connection").is_none(), "{:?}", bad.headers);
    // and a bodiless refusal too
    let get =
        send(g.addr, "GET", "/v1/prod/namespaces/sales/tables/salaries", &[("authorization", &basic("dave"))], b"")
            .await;
    assert_eq!(get.status, 403);
    assert!(get.headers.get("connection").is_none());
    upstream.assert_untouched();
}
