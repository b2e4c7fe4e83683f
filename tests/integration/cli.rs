//! The `icegate check` and `icegate explain` commands as operators run them (docs/design.md §10).

use crate::support::TempDir;
use serde_json::Value;
use std::process::{Command, Output};

pub(crate) fn icegate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_icegate")).args(args).output().unwrap()
}

pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub(crate) const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/policies/example.yaml");

#[test]
fn check_accepts_the_example_policy_and_prints_its_counts() {
    let out = icegate(&["check", "--policy", EXAMPLE]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "users: 6, groups: 2, roles: 6, grants: 30 (allow 28, deny 2), owners: 2");
    assert_eq!(stderr(&out), "", "the example policy means what its comments say");
}

/// Issue 16: the two policy shapes that do not do what they look like.
const DECEPTIVE: &str = r"
version: 1
metalake: lake
users:
  - { name: alice, roles: [analyst, engineer] }
  - { name: bob, roles: [analyst] }
  - { name: carol, groups: [hr] }
  - { name: erin, roles: [engineer] }
groups:
  - { name: hr, roles: [no_pii] }
roles:
  - name: analyst
    securableObjects:
      - type: TABLE
        fullName: prod.sales.salaries
        privileges: [{ name: SELECT_TABLE, condition: DENY }]
      - type: TABLE
        fullName: prod.sales.bonus
        privileges: [{ name: SELECT_TABLE, condition: DENY }, { name: MODIFY_TABLE, condition: DENY }]
  - name: engineer
    securableObjects:
      - type: SCHEMA
        fullName: prod.sales
        privileges: [{ name: MODIFY_TABLE, condition: ALLOW }]
  - name: no_pii
    securableObjects:
      - type: TABLE
        fullName: prod.hr.people
        privileges: [{ name: SELECT_TABLE, condition: DENY }]
      - type: TABLE
        fullName: prod.sales.people
        privileges: [{ name: SELECT_TABLE, condition: DENY }]
owners:
  - { type: SCHEMA, fullName: prod.hr, owner: hr, ownerType: GROUP }
";

#[test]
fn check_warns_about_a_deny_that_modify_table_or_ownership_undoes() {
    let dir = TempDir::new("check-deceptive");
    let path = dir.write("p.yaml", DECEPTIVE);
    let out = icegate(&["check", "--policy", path.to_str().unwrap()]);
    assert!(out.status.success(), "warnings do not make a policy invalid");
    let err = stderr(&out);
    let file = path.display().to_string();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    // alice holds the deny and engineer's MODIFY_TABLE; bob and erin hold only one of them;
    // `bonus` denies both privileges
    assert!(lines[0].starts_with(&format!("warning: {file}:16: role `analyst` DENYs SELECT_TABLE on TABLE `prod.sales.salaries`, but role `engineer` ALLOWs MODIFY_TABLE on SCHEMA `prod.sales`, and user `alice`, holding both, can still load TABLE `prod.sales.salaries`")), "{err}");
    assert!(lines[0].ends_with("also DENY MODIFY_TABLE on TABLE `prod.sales.salaries`"), "{err}");
    // hr owns prod.hr: its own deny on prod.hr.people restricts nothing (prod.sales.people it
    // does not own)
    assert!(lines[1].starts_with(&format!("warning: {file}:29: role `no_pii` DENYs SELECT_TABLE on TABLE `prod.hr.people`, but its holders user `carol`, group `hr` own SCHEMA `prod.hr`: ownership ignores DENY")), "{err}");
}

#[test]
fn check_reports_every_error_with_file_and_line() {
    let dir = TempDir::new("check-errors");
    let path = dir.write(
        "bad.yaml",
        "version: 1\nmetalake: lake\nusers:\n  - { name: a, roles: [ghost] }\nroles:\n  - name: r\n    securableObjects:\n      - { type: TABLE, fullName: prod.sales.t, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }\n      - { type: SCHEMA, fullName: prod, privileges: [{ name: FLY, condition: ALLOW }] }\n",
    );
    let out = icegate(&["check", "--policy", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    let file = path.display().to_string();
    assert!(err.contains(&format!("{file}:4: user `a` lists undefined role `ghost` in `roles`")), "{err}");
    assert!(
        err.contains(&format!("{file}:8: privilege `USE_CATALOG` is not grantable on TABLE `prod.sales.t`")),
        "{err}"
    );
    assert!(err.contains(&format!("{file}:9: full name `prod` does not fit type SCHEMA")), "{err}");
    assert!(stdout(&out).is_empty());
}

#[test]
fn check_warns_about_owners_the_policy_does_not_define() {
    let dir = TempDir::new("check-warn");
    let path = dir.write(
        "p.yaml",
        "version: 1\nmetalake: lake\nowners:\n  - { type: CATALOG, fullName: prod, owner: idp-team, ownerType: GROUP }\n",
    );
    let out = icegate(&["check", "--policy", path.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(stderr(&out).starts_with("warning: "), "{}", stderr(&out));
    assert!(stderr(&out).contains("group `idp-team`"), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "users: 0, groups: 0, roles: 0, grants: 0 (allow 0, deny 0), owners: 1");
}

fn explain(args: &[&str]) -> Value {
    let mut all = vec!["explain", "--policy", EXAMPLE];
    all.extend_from_slice(args);
    let out = icegate(&all);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn explain_names_the_deny_that_decided() {
    let v =
        explain(&["--user", "alice", "--active-roles", "analyst", "GET", "/v1/prod/namespaces/sales/tables/salaries"]);
    assert_eq!(v["status"], 403);
    assert_eq!(v["operation"], "loadTable");
    assert_eq!(v["credential"], Value::Null);
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.contains("SELECT_TABLE@ is denied by role `analyst` on TABLE `prod.sales.salaries`"), "{reason}");
    assert!(v.get("visible").is_none());
}

#[test]
fn explain_names_the_grants_that_allowed() {
    let v = explain(&["--user", "alice", "GET", "/v1/prod/namespaces/sales/tables/orders"]);
    assert_eq!(v["status"], 200);
    assert_eq!(v["credential"], "read");
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.starts_with("allowed: "), "{reason}");
    assert!(reason.contains("SELECT_TABLE@ is allowed by role `analyst` on SCHEMA `prod.sales`"), "{reason}");
}

#[test]
fn explain_points_at_a_held_role_that_is_not_active() {
    // alice's default active set is `analyst`; her `engineer` role could modify the table
    let v = explain(&["--user", "alice", "POST", "/v1/prod/namespaces/sales/tables/orders"]);
    assert_eq!(v["status"], 403, "{v}");
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.contains("only role `engineer`, which is not active"), "{reason}");
}

#[test]
fn explain_filters_a_list_response() {
    let dir = TempDir::new("explain-list");
    let list = dir.write(
        "list.json",
        r#"{"identifiers":[{"namespace":["sales"],"name":"orders"},{"namespace":["sales"],"name":"salaries"}],"next-page-token":null}"#,
    );
    let v = explain(&[
        "--user",
        "bi-service",
        "--list-response",
        list.to_str().unwrap(),
        "GET",
        "/v1/namespaces/sales/tables",
    ]);
    assert_eq!(v["status"], 200, "{v}");
    assert_eq!(v["visible"], serde_json::json!([{"namespace":["sales"],"name":"orders"}]));
    let broken = dir.write("broken.json", "{\"identifiers\": [");
    let v = explain(&[
        "--user",
        "bi-service",
        "--list-response",
        broken.to_str().unwrap(),
        "GET",
        "/v1/namespaces/sales/tables",
    ]);
    assert_eq!(v["status"], 502);
}

#[test]
fn explain_takes_values_starting_with_a_dash_in_the_equals_form() {
    let v = explain(&["--user", "alice", "--active-roles=-x", "GET", "/v1/prod/namespaces/sales/tables/orders"]);
    assert_eq!(v["status"], 403);
    assert!(
        v["reason"].as_str().unwrap().starts_with("user 'alice' cannot assume active role(s) that are not held: -x")
    );
}

#[test]
fn explain_exits_2_on_bad_arguments_and_invalid_policies() {
    let out = icegate(&["explain", "--policy", EXAMPLE, "GET", "/v1/config"]);
    assert_eq!(out.status.code(), Some(2), "missing --user");
    let dir = TempDir::new("explain-bad");
    let bad = dir.write("bad.yaml", "version: 2\nmetalake: lake\n");
    let out = icegate(&["explain", "--policy", bad.to_str().unwrap(), "--user", "a", "GET", "/v1/config"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("bad.yaml:1: unsupported policy version `2`"), "{}", stderr(&out));
}

#[test]
fn the_documented_config_parses_with_its_defaults() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/config.md")).unwrap();
    let block = doc.split("```toml").nth(1).unwrap().split("```").next().unwrap();
    let dir = TempDir::new("config-doc");
    let path = dir.write("icegate.toml", block);
    let config = icegate::config::Config::load(Some(&path), icegate::config::Overrides::default()).unwrap();
    let defaults = icegate::config::Config::default();
    assert_eq!(config.listen, defaults.listen);
    assert_eq!(config.limits.max_body_bytes, defaults.limits.max_body_bytes);
    assert_eq!(config.lists.max_upstream_pages, defaults.lists.max_upstream_pages);
    assert_eq!(config.upstream.response_timeout_ms, defaults.upstream.response_timeout_ms);
    // the `[[upstreams]]` example is a config of its own
    let block = doc.split("```toml").nth(2).unwrap().split("```").next().unwrap();
    let path = dir.write("many.toml", block);
    let overrides = icegate::config::Overrides { policy: Some("p.yaml".into()), ..Default::default() };
    let config = icegate::config::Config::load(Some(&path), overrides).unwrap();
    let names: Vec<String> = config.upstream_entries().into_iter().map(|e| e.name).collect();
    assert_eq!(names, ["rest", "glue"]);
    assert_eq!(config.upstreams[0].response_timeout_ms, defaults.upstream.response_timeout_ms);
}

#[test]
fn serve_refuses_to_start_without_a_valid_policy() {
    let dir = TempDir::new("serve-bad-policy");
    let bad = dir.write("bad.yaml", "version: 1\nmetalake: lake\nusers: [{ name: a, roles: [nope] }]\n");
    let out = icegate(&[
        "serve",
        "--upstream",
        "http://127.0.0.1:9",
        "--policy",
        bad.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("undefined role `nope`"), "{}", stderr(&out));
    let out = icegate(&["serve", "--policy", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no upstream"), "{}", stderr(&out));
}
