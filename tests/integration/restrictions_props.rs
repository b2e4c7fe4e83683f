//! Property tests of read restrictions (docs/design.md §8), for random policies with
//! restrictions: `explain` and the served path agree on which apply (the status, and the
//! `read-restrictions` a trusted reader's answer carries, by field id), and narrowing the
//! active roles never removes a restriction; and they agree on which renames and schema-changing
//! commits would move data out from under a restriction (docs/design.md §8 "A restriction keeps
//! covering what it covered").

use crate::fake_upstream::{FakeUpstream, Recorded, Reply, basic, gate, send};
use icegate::core::decide::Settings;
use icegate::core::offline::{Input, decide};
use icegate::core::roles::Principal;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

const ROLES: [&str; 3] = ["r0", "r1", "r2"];
const USERS: [&str; 2] = ["u0", "u1"];
const OBJECTS: [(&str, &str); 6] = [
    ("METALAKE", "lake"),
    ("CATALOG", "c1"),
    ("SCHEMA", "c1.s1"),
    ("SCHEMA", "c1.s2"),
    ("TABLE", "c1.s1.t1"),
    ("TABLE", "c1.s1.t2"),
];
const TABLES: [&str; 3] = ["s1/tables/t1", "s1/tables/t2", "s2/tables/t3"];
/// The table's current schema: each column's field id.
const COLUMNS: [(&str, i64); 3] = [("a", 7), ("b", 3), ("c", 11)];
const ACTIONS: [&str; 4] = ["mask-alphanum", "replace-with-null", "show-last-4", "sha-256-global"];

#[derive(Clone, Debug)]
struct Restriction {
    object: usize,
    unless: BTreeSet<usize>,
    filter: Option<usize>,
    columns: BTreeMap<usize, usize>,
}

#[derive(Clone, Debug)]
struct Policy {
    held: [BTreeSet<usize>; 2],
    enforcers: BTreeSet<usize>,
    restrictions: Vec<Restriction>,
    /// `u1` owns the catalog (`TOP`, which the rename and commit rules exempt).
    top: bool,
}

impl Policy {
    fn yaml(&self) -> String {
        let names = |set: &BTreeSet<usize>, of: &[&str]| set.iter().map(|i| of[*i]).collect::<Vec<_>>().join(", ");
        let mut y = String::from("version: 1\nmetalake: lake\ndefault_catalog: c1\nusers:\n");
        for (i, user) in USERS.iter().enumerate() {
            y += &format!(
                "  - {{ name: {user}, roles: [base{}{}] }}\n",
                if self.held[i].is_empty() { "" } else { ", " },
                names(&self.held[i], &ROLES)
            );
        }
        y += "roles:\n  - name: base\n    securableObjects:\n      - type: METALAKE\n        fullName: lake\n        privileges:\n";
        for p in ["USE_CATALOG", "USE_SCHEMA", "SELECT_TABLE", "MODIFY_TABLE", "CREATE_TABLE"] {
            y += &format!("          - {{ name: {p}, condition: ALLOW }}\n");
        }
        for r in ROLES {
            y += &format!("  - name: {r}\n");
        }
        // u0 owns a table of each schema, so that it may move them across schemas
        y += "owners:\n";
        y += "  - { type: TABLE, fullName: c1.s1.t1, owner: u0, ownerType: USER }\n";
        y += "  - { type: TABLE, fullName: c1.s2.t3, owner: u0, ownerType: USER }\n";
        if self.top {
            y += "  - { type: CATALOG, fullName: c1, owner: u1, ownerType: USER }\n";
        }
        y += "restrictions:\n";
        for r in &self.restrictions {
            let (ty, full) = OBJECTS[r.object];
            y += &format!(
                "  - object: {{ type: {ty}, fullName: {full} }}\n    unless_roles: [{}]\n",
                names(&r.unless, &ROLES)
            );
            if let Some(c) = r.filter {
                y += &format!("    row_filter: {{ type: eq, term: {}, value: x }}\n", COLUMNS[c].0);
            }
            if !r.columns.is_empty() {
                let cols: Vec<String> =
                    r.columns.iter().map(|(c, a)| format!("{}: {}", COLUMNS[*c].0, ACTIONS[*a])).collect();
                y += &format!("    columns: {{ {} }}\n", cols.join(", "));
            }
        }
        y += &format!("restriction_enforcers: {{ users: [{}] }}\n", names(&self.enforcers, &USERS));
        y
    }
}

fn restriction() -> impl Strategy<Value = Restriction> {
    (
        0..OBJECTS.len(),
        prop::collection::btree_set(0..ROLES.len(), 0..2),
        prop::option::of(0..COLUMNS.len()),
        prop::collection::btree_map(0..COLUMNS.len(), 0..ACTIONS.len(), 0..3),
    )
        .prop_map(|(object, unless, filter, columns)| {
            // a restriction restricts something
            let filter = if filter.is_none() && columns.is_empty() { Some(0) } else { filter };
            Restriction { object, unless, filter, columns }
        })
}

fn policy() -> impl Strategy<Value = Policy> {
    (
        prop::collection::btree_set(0..ROLES.len(), 0..4),
        prop::collection::btree_set(0..ROLES.len(), 0..4),
        prop::collection::btree_set(0..USERS.len(), 0..3),
        prop::collection::vec(restriction(), 1..5),
        any::<bool>(),
    )
        .prop_map(|(h0, h1, enforcers, restrictions, top)| Policy { held: [h0, h1], enforcers, restrictions, top })
}

/// Every active-roles header for `held`: none, `NONE`, and each non-empty subset of the roles
/// (with `base`, which every request needs to be allowed).
fn headers(held: &BTreeSet<usize>) -> Vec<Option<String>> {
    let held: Vec<usize> = held.iter().copied().collect();
    let mut out = vec![None];
    for mask in 0..(1u32 << held.len()) {
        let mut roles = vec!["base"];
        roles.extend(held.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, r)| ROLES[*r]));
        out.push(Some(roles.join(",")));
    }
    out
}

fn explained(
    snap: &icegate::core::policy::Snapshot,
    user: &str,
    table: &str,
    header: Option<&str>,
) -> (u16, Option<Value>) {
    let target = format!("/v1/c1/namespaces/{table}");
    let input = Input {
        method: "GET",
        target: &target,
        principal: Principal { user: user.to_owned(), ..Principal::default() },
        active_roles: header.map(str::as_bytes),
        body: None,
        exists: true,
        list_response: None,
        namespace_location: None,
        table_metadata: None,
    };
    let o = decide(snap, &Settings::default(), &input);
    (o.status, o.restrictions.as_ref().map(icegate::core::restrictions::Applied::to_json))
}

/// The `required-column-projections` explain's columns resolve to in the fake's schema.
fn projections_of(explained: &Value) -> BTreeMap<i64, String> {
    let id = |name: &str| COLUMNS.iter().find(|(c, _)| *c == name).map(|(_, id)| *id).unwrap();
    explained["columns"].as_object().unwrap().iter().map(|(c, a)| (id(c), a.as_str().unwrap().to_owned())).collect()
}

fn load_answer() -> String {
    let fields: Vec<Value> =
        COLUMNS.iter().map(|(name, id)| json!({"id": id, "name": name, "required": false, "type": "string"})).collect();
    json!({"metadata-location": "s3://b/t/m.json", "metadata": {"format-version": 2, "table-uuid": "u",
        "location": "s3://b/t", "current-schema-id": 0, "schemas": [{"schema-id": 0, "type": "struct", "fields": fields}]}})
    .to_string()
}

/// The metadata a commit is decided with: schema 1 is current; in the older schema 0 `a` named
/// another field.
fn commit_metadata() -> Value {
    let fields = |ids: [i64; 3]| -> Vec<Value> {
        COLUMNS
            .iter()
            .zip(ids)
            .map(|((n, _), id)| json!({"id": id, "name": n, "required": false, "type": "string"}))
            .collect()
    };
    json!({"format-version": 2, "table-uuid": "u", "location": "s3://b/t", "current-schema-id": 1, "schemas": [
        {"schema-id": 0, "type": "struct", "fields": fields([107, 3, 11])},
        {"schema-id": 1, "type": "struct", "fields": fields([7, 3, 11])}]})
}

/// A rename or a commit (by `which`), as method, target and body.
fn change_request(which: usize, table: usize, column: usize) -> (String, String) {
    let ident = |t: &str| {
        let (ns, name) = t.split_once("/tables/").unwrap();
        json!({"namespace": [ns], "name": name})
    };
    let names = ["s1/tables/t1", "s1/tables/t2", "s2/tables/t3", "s1/tables/new", "s2/tables/new"];
    let field = |name: &str, id: i64| json!({"id": id, "name": name, "required": false, "type": "string"});
    let current: Vec<Value> = COLUMNS.iter().map(|(n, id)| field(n, *id)).collect();
    let (name, id) = COLUMNS[column];
    let renamed: Vec<Value> =
        COLUMNS.iter().map(|(n, i)| if *n == name { field(&format!("{n}_old"), *i) } else { field(n, *i) }).collect();
    let added = |fields: Vec<Value>| {
        json!([{"action": "add-schema", "schema": {"type": "struct", "schema-id": 2, "fields": fields}},
            {"action": "set-current-schema", "schema-id": -1}])
    };
    let updates = match which % 7 {
        0 => {
            let body = json!({"source": ident(TABLES[table]), "destination": ident(names[column + table % 3])});
            return ("/v1/c1/tables/rename".to_owned(), body.to_string());
        }
        1 => added([renamed, vec![field(name, 40 + id)]].concat()),
        2 => added(renamed),
        3 => added([current, vec![field("d", 50)]].concat()),
        4 => json!([{"action": "set-current-schema", "schema-id": 0}]),
        5 => json!([{"action": "remove-schemas", "schema-ids": [0]}]),
        _ => json!([{"action": "set-properties", "updates": {"k": "v"}}]),
    };
    (format!("/v1/c1/namespaces/{}", TABLES[table]), json!({"requirements": [], "updates": updates}).to_string())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn explain_and_the_served_path_agree_on_which_restrictions_apply(p in policy(), user in 0..2usize, table in 0..3usize, which in 0..9usize) {
        let yaml = p.yaml();
        let snap = crate::support::load(&yaml);
        let all = headers(&p.held[user]);
        let header = all[which % all.len()].clone();
        let (status, restrictions) = explained(&snap, USERS[user], TABLES[table], header.as_deref());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let served = runtime.block_on(async {
            let answer = load_answer();
            let upstream = FakeUpstream::start(move |r: &Recorded| match r.method.as_str() {
                "GET" => Reply::raw(200, &answer),
                _ => Reply::ok(),
            })
            .await;
            let g = gate(&upstream.url(""), &yaml, |_| {}).await;
            let auth = basic(USERS[user]);
            let mut headers = vec![("authorization", auth.as_str())];
            if let Some(h) = &header {
                headers.push(("x-gravitino-active-roles", h.as_str()));
            }
            send(g.addr, "GET", &format!("/v1/c1/namespaces/{}", TABLES[table]), &headers, b"").await
        });
        prop_assert_eq!(served.status, status, "{} {}", served.text(), yaml);
        let carried = (served.status == 200).then(|| served.json().get("read-restrictions").cloned()).flatten();
        match (&restrictions, carried) {
            (Some(r), Some(wire)) => {
                prop_assert_eq!(&r["trusted"], &json!(true));
                let got: BTreeMap<i64, String> = wire["required-column-projections"].as_array().into_iter().flatten()
                    .map(|p| (p["field-id"].as_i64().unwrap(), p["action"].as_str().unwrap().to_owned())).collect();
                prop_assert_eq!(got, projections_of(r));
                prop_assert_eq!(wire.get("required-row-filter").is_some(), r.get("row_filter").is_some());
            }
            (Some(r), None) => prop_assert!(status == 403 && r["trusted"] == json!(false), "{r} {status}"),
            (None, Some(wire)) => prop_assert!(false, "served {wire} where explain has none"),
            (None, None) => prop_assert_eq!(status, 200),
        }
    }

    #[test]
    fn narrowing_never_removes_a_restriction(p in policy(), user in 0..2usize, table in 0..3usize) {
        let snap = crate::support::load(&p.yaml());
        let applied = |header: Option<&str>| -> BTreeSet<String> {
            let (_, r) = explained(&snap, USERS[user], TABLES[table], header);
            r.map(|r| r["applied"].as_array().unwrap().iter().map(|e| e["name"].to_string()).collect()).unwrap_or_default()
        };
        let unnarrowed = applied(None);
        for header in headers(&p.held[user]).into_iter().flatten() {
            let narrowed = applied(Some(&header));
            prop_assert!(unnarrowed.is_subset(&narrowed), "{header}: {unnarrowed:?} ⊄ {narrowed:?}");
        }
    }

    #[test]
    fn explain_and_the_served_path_agree_on_renames_and_schema_changing_commits(p in policy(), user in 0..2usize, table in 0..3usize, which in 0..7usize, column in 0..3usize) {
        let yaml = p.yaml();
        let snap = crate::support::load(&yaml);
        let (target, body) = change_request(which, table, column);
        let metadata = commit_metadata();
        let input = Input {
            method: "POST",
            target: &target,
            principal: Principal { user: USERS[user].to_owned(), ..Principal::default() },
            active_roles: None,
            body: Some(body.as_bytes()),
            exists: true,
            list_response: None,
            namespace_location: None,
            table_metadata: Some(&metadata),
        };
        let explained = decide(&snap, &Settings::default(), &input);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let served = runtime.block_on(async {
            let answer = json!({"metadata-location": "s3://b/t/m.json", "metadata": commit_metadata()}).to_string();
            let upstream = FakeUpstream::start(move |r: &Recorded| match r.method.as_str() {
                "GET" => Reply::raw(200, &answer),
                "HEAD" => Reply::raw(404, ""),
                _ => Reply::ok(),
            })
            .await;
            let g = gate(&upstream.url(""), &yaml, |_| {}).await;
            let auth = basic(USERS[user]);
            let headers = [("authorization", auth.as_str()), ("content-type", "application/json")];
            send(g.addr, "POST", &target, &headers, body.as_bytes()).await
        });
        prop_assert_eq!(served.status, explained.status, "{} {} {}: {} {}", target, body, explained.reason, served.text(), yaml);
    }
}
