//! Error messages a user can act on (issue 6): a denial names the operation, the object and
//! the roles asked for, and carries the `icegate explain` command that shows why; running
//! that command against the policy reproduces the decision.

use crate::fake_upstream::{FakeUpstream, Reply, basic, gate, send};
use crate::support::TempDir;
use std::process::Command;

static POLICY: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| crate::support::sales_policy(&["{ name: dave, roles: [analyst, editor] }"]));

#[tokio::test]
async fn a_denial_says_what_was_refused_and_how_to_see_why() {
    let upstream = FakeUpstream::start(|_| Reply::ok()).await;
    let g = gate(&upstream.url(""), &POLICY, |_| {}).await;
    let target = "/v1/prod/namespaces/sales/tables/orders";
    let auth = basic("dave");
    let body = br#"{"updates":[{"action":"set-properties","updates":{"k":"v"}}],"requirements":[]}"#;
    let a =
        send(g.addr, "POST", target, &[("authorization", &auth), ("x-gravitino-active-roles", "analyst")], body).await;
    let message = a.assert_error(403, "ForbiddenException");
    assert!(message.starts_with("not authorized to updateTable `sales.orders`"), "{message}");
    let hint = "`icegate explain --policy POLICY --user dave --active-roles=analyst POST /v1/prod/namespaces/sales/tables/orders` shows why";
    assert!(message.ends_with(hint), "{message}");

    // The command reproduces the decision, with its reasons.
    let dir = TempDir::new("messages");
    let policy = dir.write("p.yaml", &POLICY);
    let body_file = dir.write("body.json", std::str::from_utf8(body).unwrap());
    let out = Command::new(env!("CARGO_BIN_EXE_icegate"))
        .args(["explain", "--policy", policy.to_str().unwrap(), "--user", "dave", "--active-roles=analyst"])
        .args(["--body", body_file.to_str().unwrap(), "POST", target])
        .output()
        .unwrap();
    let explained: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(explained["status"], 403, "{explained}");
    assert!(explained["reason"].as_str().unwrap().contains("MODIFY_TABLE"), "{explained}");

    // A contract message keeps its exact form, and refusals that are not policy decisions
    // get no hint.
    let unheld =
        send(g.addr, "GET", target, &[("authorization", &auth), ("x-gravitino-active-roles", "admin")], b"").await;
    let message = unheld.assert_error(403, "ForbiddenException");
    assert_eq!(message, "user 'dave' cannot assume active role(s) that are not held: admin");
    let unknown = send(g.addr, "GET", "/v1/prod/magic", &[("authorization", &auth)], b"").await;
    assert!(!unknown.assert_error(403, "ForbiddenException").contains("explain"));
    upstream.assert_untouched();
}

#[tokio::test]
async fn a_denial_of_an_object_named_in_the_body_names_that_object() {
    let upstream = FakeUpstream::start(|_| Reply::ok()).await;
    let g = gate(&upstream.url(""), &POLICY, |_| {}).await;
    let auth = basic("dave");
    let commit = br#"{"table-changes":[
        {"identifier":{"namespace":["sales"],"name":"orders"},"requirements":[],"updates":[]},
        {"identifier":{"namespace":["hr"],"name":"payroll"},"requirements":[],"updates":[]}]}"#;
    let a = send(g.addr, "POST", "/v1/prod/transactions/commit", &[("authorization", &auth)], commit).await;
    let message = a.assert_error(403, "ForbiddenException");
    assert!(message.starts_with("not authorized to commitTransaction `hr.payroll`;"), "{message}");
    let create = br#"{"namespace":["marketing"]}"#;
    let a = send(g.addr, "POST", "/v1/prod/namespaces", &[("authorization", &auth)], create).await;
    let message = a.assert_error(403, "ForbiddenException");
    assert!(message.starts_with("not authorized to createNamespace `marketing`;"), "{message}");
    upstream.assert_untouched();
}
