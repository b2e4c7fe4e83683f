//! The policy-as-code commands as operators run them (docs/design.md §10, issue 19): `icegate
//! test`, `who-can`, `diff` and `report`, on the example policy and small edits of it.

use crate::cli::{EXAMPLE, icegate, stderr, stdout};
use crate::support::{TempDir, shared_dir};
use serde_json::{Value, json};
use std::process::Output;

const EXAMPLE_TESTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/policies/example.tests.yaml");

fn json_lines(o: &Output) -> Vec<Value> {
    stdout(o).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The example policy with `from` replaced by `to` (which must occur).
fn edited_example(dir: &TempDir, name: &str, from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(EXAMPLE).unwrap();
    assert!(text.contains(from), "the example policy no longer contains {from:?}");
    dir.write(name, &text.replacen(from, to, 1)).display().to_string()
}

const SALARIES_DENY: &str = "          - { name: SELECT_TABLE, condition: DENY }\n";

#[test]
fn test_runs_the_example_policys_tests_and_they_pass() {
    let out = icegate(&["test", "--policy", EXAMPLE, EXAMPLE_TESTS]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    let last = text.lines().last().unwrap();
    let passed: usize = last.strip_suffix(" passed, 0 failed").unwrap_or_else(|| panic!("{text}")).parse().unwrap();
    assert!(passed >= 15, "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
}

#[test]
fn test_prints_each_failure_and_the_count_and_exits_1() {
    let dir = TempDir::new("cases-fail");
    let cases = dir.write(
        "t.yaml",
        "cases:\n  - name: alice reads salaries\n    user: alice\n    method: GET\n    path: /v1/prod/namespaces/sales/tables/salaries\n    expect: { status: 200 }\n  - name: bob reads orders\n    user: bob\n    method: GET\n    path: /v1/prod/namespaces/sales/tables/orders\n    expect: { status: 200, credential: read }\n  - name: bob reads salaries\n    user: bob\n    method: GET\n    path: /v1/prod/namespaces/sales/tables/salaries\n    expect: { status: 200 }\n",
    );
    let file = cases.display().to_string();
    let out = icegate(&["test", "--policy", EXAMPLE, &file]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0]
            .starts_with(&format!("FAIL {file}: alice reads salaries: expected status 200, got 403 (reason: denied: ")),
        "{text}"
    );
    assert!(lines[0].contains("SELECT_TABLE@ is denied by role `analyst` on TABLE `prod.sales.salaries`"), "{text}");
    assert!(
        lines[1].starts_with(&format!("FAIL {file}: bob reads orders: expected credential read, got write")),
        "{text}"
    );
    assert_eq!(lines[2], "1 passed, 2 failed");
}

#[test]
fn test_runs_each_document_against_its_own_policy() {
    let dir = TempDir::new("cases-docs");
    let doc = |catalog: &str, expect: u16| {
        format!(
            "policy:\n  version: 1\n  metalake: lake\n  users: [{{ name: u, roles: [r] }}]\n  roles:\n    - name: r\n      securableObjects:\n        - {{ type: CATALOG, fullName: {catalog}, privileges: [{{ name: USE_CATALOG, condition: ALLOW }}] }}\ncases:\n  - {{ name: u lists {catalog}, user: u, method: GET, path: /v1/{catalog}/namespaces, expect: {{ status: {expect} }} }}\n  - {{ name: u lists other, user: u, method: GET, path: /v1/other/namespaces, expect: {{ status: 403 }} }}\n"
        )
    };
    let cases = dir.write("multi.yaml", &format!("{}---\n{}", doc("a", 200), doc("b", 200)));
    let out = icegate(&["test", cases.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert_eq!(stdout(&out), "4 passed, 0 failed\n");
}

#[test]
fn test_refuses_bad_input_with_exit_2_before_running_anything() {
    let dir = TempDir::new("cases-bad");
    let case =
        |extra: &str| format!("cases:\n  - name: c\n    user: alice\n    method: GET\n    path: /v1/config\n{extra}");
    let bad = [
        ("typo.yaml", case("    expected: { status: 200 }\n"), "unknown field `expected`"),
        ("nothing.yaml", case("    expect: {}\n"), "expects nothing"),
        ("status.yaml", case("    expect: { status: two hundred }\n"), "document 0"),
        ("empty.yaml", "cases: []\n".to_owned(), "holds no cases"),
        ("yaml.yaml", "cases: [\n".to_owned(), "not YAML"),
        (
            "policy.yaml",
            format!(
                "policy: {{ version: 1, metalake: lake, users: [{{ name: a, roles: [ghost] }}] }}\n{}",
                case("    expect: { status: 403 }\n")
            ),
            "undefined role `ghost`",
        ),
    ];
    for (name, text, message) in bad {
        let path = dir.write(name, &text);
        let out = icegate(&["test", "--policy", EXAMPLE, path.to_str().unwrap(), EXAMPLE_TESTS]);
        assert_eq!(out.status.code(), Some(2), "{name}: {}{}", stdout(&out), stderr(&out));
        assert!(stdout(&out).is_empty(), "{name}: {}", stdout(&out));
        assert!(stderr(&out).contains(message), "{name}: {}", stderr(&out));
        assert!(stderr(&out).contains(path.to_str().unwrap()), "{name}: {}", stderr(&out));
    }
    // Without --policy, a document without its own policy cannot run.
    let out = icegate(&["test", EXAMPLE_TESTS]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no `policy`"), "{}", stderr(&out));
}

#[test]
fn test_passes_the_shared_conformance_cases() {
    let dir = shared_dir("conformance");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".yaml"))
        .collect();
    files.sort();
    let mut args = vec!["test"];
    args.extend(files.iter().map(String::as_str));
    let out = icegate(&args);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).ends_with(" passed, 0 failed\n"), "{}", stdout(&out));
}

#[test]
fn who_can_lists_the_subjects_a_privilege_reaches_with_the_grant_behind_it() {
    let out = icegate(&["who-can", "--policy", EXAMPLE, "SELECT_TABLE", "TABLE", "prod.sales.salaries"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The DENY in analyst removes alice, bi-service and mallory; engineer and the metalake
    // grant of the data-platform group remain.
    assert_eq!(
        json_lines(&out),
        [
            json!({"user": "bob", "via": {"role": "engineer", "object": {"type": "SCHEMA", "fullName": "prod.sales"}}}),
            json!({"group": "data-platform", "via": {"role": "platform_admin", "object": {"type": "METALAKE", "fullName": "lake"}}}),
        ]
    );
    let out = icegate(&["who-can", "--policy", EXAMPLE, "owner", "table", "prod.hr.reviews"]);
    assert_eq!(
        json_lines(&out),
        [
            json!({"user": "carol", "via": {"owned": {"type": "SCHEMA", "fullName": "prod.hr"}, "group": "hr"}}),
            json!({"group": "hr", "via": {"owned": {"type": "SCHEMA", "fullName": "prod.hr"}}}),
        ]
    );
    // A user reaches a role through a group of the policy: the via names the group.
    let out = icegate(&["who-can", "--policy", EXAMPLE, "USE_CATALOG", "CATALOG", "prod"]);
    let lines = json_lines(&out);
    assert!(lines.contains(&json!({"user": "carol", "via": {"role": "hr_reader", "object": {"type": "CATALOG", "fullName": "prod"}, "group": "hr"}})), "{lines:?}");
}

#[test]
fn who_can_folds_names_in_a_catalog_that_folds_them() {
    let dir = TempDir::new("who-can-case");
    let policy = dir.write(
        "p.yaml",
        "version: 1\nmetalake: lake\ncatalogs: [{ name: hive, case_sensitive: false }]\nusers: [{ name: u, roles: [r] }]\nroles:\n  - name: r\n    securableObjects:\n      - { type: SCHEMA, fullName: hive.db, privileges: [{ name: SELECT_TABLE, condition: ALLOW }] }\n      - { type: TABLE, fullName: hive.db.salaries, privileges: [{ name: SELECT_TABLE, condition: DENY }] }\n",
    );
    let who = |name: &str| {
        json_lines(&icegate(&["who-can", "--policy", policy.to_str().unwrap(), "SELECT_TABLE", "TABLE", name]))
    };
    // `SALARIES` is the table `salaries` there: the DENY applies to it as to a request for it.
    assert_eq!(who("hive.DB.SALARIES"), Vec::<Value>::new());
    assert_eq!(who("hive.db.salaries"), Vec::<Value>::new());
    assert_eq!(who("hive.DB.Orders").len(), 1);
}

#[test]
fn who_can_refuses_what_it_cannot_answer_with_exit_2() {
    for (args, message) in [
        (["FLY", "TABLE", "prod.sales.t"], "unknown privilege `FLY`"),
        (["SELECT_TABLE", "SHELF", "prod.sales.t"], "unknown object type `SHELF`"),
        (["CONSUME_TOPIC", "TOPIC", "prod.sales.t"], "type `TOPIC` is not one icegate decides on"),
        (["SELECT_TABLE", "TABLE", "prod.sales"], "does not fit type TABLE"),
    ] {
        let mut all = vec!["who-can", "--policy", EXAMPLE];
        all.extend(args);
        let out = icegate(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty());
    }
}

#[test]
fn diff_of_a_policy_with_itself_is_empty_and_exits_0() {
    let out = icegate(&["diff", "--policy", EXAMPLE, "--policy", EXAMPLE]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
    assert_eq!(stderr(&out), "no change in effective access\n");
}

#[test]
fn diff_names_who_gains_and_loses_what_and_exits_1() {
    let dir = TempDir::new("diff");
    let new = edited_example(&dir, "new.yaml", SALARIES_DENY, "");
    let out = icegate(&["diff", "--policy", EXAMPLE, "--policy", &new]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let change = |user: &str| {
        json!({"subject": format!("user:{user}"), "privilege": "SELECT_TABLE",
               "object": {"type": "TABLE", "fullName": "prod.sales.salaries"}, "before": "deny", "after": "allow"})
    };
    assert_eq!(json_lines(&out), [change("alice"), change("bi-service"), change("mallory")]);
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("3 changes in effective access for 3 subjects: 3 gained, 0 lost"),
        "{}",
        stderr(&out)
    );

    // Carol leaves hr: she loses the group's role and its ownership; the group keeps both.
    let new = edited_example(&dir, "carol.yaml", "  - name: carol\n    groups: [hr]\n", "  - name: carol\n");
    let out = icegate(&["diff", "--policy", EXAMPLE, "--policy", &new]);
    assert_eq!(out.status.code(), Some(1));
    let lines = json_lines(&out);
    assert!(lines.iter().all(|l| l["subject"] == "user:carol" && l["after"] == "none"), "{lines:?}");
    assert!(lines.contains(&json!({"subject": "user:carol", "privilege": "OWNER", "object": {"type": "SCHEMA", "fullName": "prod.hr"}, "before": "allow", "after": "none"})), "{lines:?}");
    assert!(lines.contains(&json!({"subject": "user:carol", "privilege": "USE_CATALOG", "object": {"type": "CATALOG", "fullName": "prod"}, "before": "allow", "after": "none"})), "{lines:?}");
}

#[test]
fn diff_sees_no_change_when_a_schema_grant_becomes_identical_table_grants() {
    let dir = TempDir::new("diff-move");
    let policy = |objects: &str| {
        format!(
            "version: 1\nmetalake: lake\nusers: [{{ name: u, roles: [r] }}]\nroles:\n  - name: r\n    securableObjects:\n{objects}      - {{ type: TABLE, fullName: prod.s.b, privileges: [{{ name: MODIFY_TABLE, condition: ALLOW }}] }}\n"
        )
    };
    let grant = |ty: &str, name: &str| {
        format!(
            "      - {{ type: {ty}, fullName: {name}, privileges: [{{ name: SELECT_TABLE, condition: ALLOW }}] }}\n"
        )
    };
    let old = dir.write("old.yaml", &policy(&grant("SCHEMA", "prod.s")));
    let new = dir.write("new.yaml", &policy(&(grant("TABLE", "prod.s.a") + &grant("TABLE", "prod.s.b"))));
    let out = icegate(&["diff", "--policy", old.to_str().unwrap(), "--policy", new.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    // Dropping one of the table grants is a change, on that table only.
    let fewer = dir.write("fewer.yaml", &policy(&grant("TABLE", "prod.s.a")));
    let out = icegate(&["diff", "--policy", old.to_str().unwrap(), "--policy", fewer.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        json_lines(&out),
        [
            json!({"subject": "user:u", "privilege": "SELECT_TABLE", "object": {"type": "TABLE", "fullName": "prod.s.b"}, "before": "allow", "after": "none"})
        ]
    );
}

#[test]
fn diff_refuses_bad_input_with_exit_2() {
    let out = icegate(&["diff", "--policy", EXAMPLE]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("two policies"), "{}", stderr(&out));
    let dir = TempDir::new("diff-bad");
    let broken = dir.write("broken.yaml", "version: 1\nmetalake: lake\nusers: [{ name: a, roles: [ghost] }]\n");
    let out = icegate(&["diff", "--policy", EXAMPLE, "--policy", broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("undefined role `ghost`"), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
}

/// The JSON the report page embeds.
fn report_data(page: &str) -> Value {
    let start = page.find(r#"<script id="report-data" type="application/json">"#).unwrap();
    let rest = &page[start..];
    let json = &rest[rest.find('>').unwrap() + 1..rest.find("</script>").unwrap()];
    serde_json::from_str(json).unwrap()
}

#[test]
fn report_writes_one_self_contained_page_with_the_evaluators_answers() {
    let dir = TempDir::new("report");
    let out_path = dir.path().join("access.html");
    let out = icegate(&["report", "--policy", EXAMPLE, "--out", out_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = std::fs::read_to_string(&out_path).unwrap();
    for external in ["src=", "href=", "http://", "https://", "@import", "url("] {
        assert!(!page.contains(external), "the page refers to something outside it: {external}");
    }
    let data = report_data(&page);
    let subject = |id: &str| data["subjects"].as_array().unwrap().iter().position(|s| s["id"] == id).unwrap();
    let object = |name: &str| data["objects"].as_array().unwrap().iter().position(|o| o["fullName"] == name).unwrap();
    let cell = |s: usize, o: usize| {
        data["cells"].as_array().unwrap().iter().find(|c| c[0] == s && c[1] == o).map(|c| c[2].clone())
    };
    let alice_salaries = cell(subject("user:alice"), object("prod.sales.salaries")).unwrap();
    assert!(
        alice_salaries
            .as_array()
            .unwrap()
            .contains(&json!(["SELECT_TABLE", ["deny", "role `analyst` on TABLE `prod.sales.salaries`"]])),
        "{alice_salaries}"
    );
    assert_eq!(data["subjects"][subject("user:mallory")]["disabled"], true);
}

#[test]
fn report_keeps_names_from_the_policy_inert() {
    let dir = TempDir::new("report-xss");
    let policy = dir.write(
        "p.yaml",
        "version: 1\nmetalake: lake\nusers: [{ name: \"</script><script>alert(1)</script>\", roles: [\"<img onerror:x>\"] }]\nroles:\n  - name: \"<img onerror:x>\"\n    securableObjects:\n      - { type: CATALOG, fullName: prod, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }\n",
    );
    let out_path = dir.path().join("r.html");
    let out = icegate(&["report", "--policy", policy.to_str().unwrap(), "--out", out_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = std::fs::read_to_string(&out_path).unwrap();
    assert!(!page.contains("alert(1)</script>"), "a name closed the data's script element");
    assert!(!page.contains("<img"), "a name became markup");
    assert_eq!(report_data(&page)["subjects"][0]["name"], "</script><script>alert(1)</script>");
}
