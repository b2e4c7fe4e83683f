//! Loading policies (docs/design.md §3): every check names the file, the line and the offending name,
//! and a broken policy is never half-loaded.

use crate::support::TempDir;
use icegate::core::policy::{LoadError, load_path, load_str};

fn errors(yaml: &str) -> Vec<String> {
    match load_str("p.yaml", yaml) {
        Ok(_) => panic!("policy loaded but should not:\n{yaml}"),
        Err(LoadError::Invalid(d)) => d.iter().map(ToString::to_string).collect(),
    }
}

fn one_error(yaml: &str) -> String {
    let e = errors(yaml);
    assert_eq!(e.len(), 1, "{e:#?}");
    e.into_iter().next().unwrap()
}

const HEAD: &str = "version: 1\nmetalake: lake\n";

#[test]
fn unknown_keys_are_errors_with_their_line() {
    let e = one_error(&format!("{HEAD}users:\n  - name: a\n    role: [x]\n"));
    assert!(e.starts_with("p.yaml:5: unknown field `role`"), "{e}");
}

#[test]
fn duplicate_yaml_keys_are_errors() {
    let e = one_error(&format!("{HEAD}metalake: other\n"));
    assert!(e.starts_with("p.yaml:3: duplicate mapping key"), "{e}");
}

#[test]
fn version_and_metalake_are_required() {
    assert!(one_error("metalake: lake\n").contains("missing field `version`"));
    assert!(one_error("version: 1\n").contains("missing field `metalake`"));
    assert!(one_error("").starts_with("p.yaml:1:"));
}

#[test]
fn unknown_privileges_conditions_and_types_are_errors() {
    let e = errors(&format!(
        "{HEAD}roles:\n  - name: r\n    securableObjects:\n      - {{ type: CATALOG, fullName: c, privileges: [{{ name: SELECT, condition: ALLOW }}] }}\n      - {{ type: CATALOG, fullName: c, privileges: [{{ name: USE_CATALOG, condition: MAYBE }}] }}\n      - {{ type: BUCKET, fullName: c, privileges: [] }}\n"
    ));
    assert_eq!(e.len(), 3, "{e:#?}");
    assert!(e[0].starts_with("p.yaml:6: unknown privilege `SELECT`"), "{}", e[0]);
    assert!(e[1].starts_with("p.yaml:7: unknown condition `MAYBE`"), "{}", e[1]);
    assert!(e[2].starts_with("p.yaml:8: unknown object type `BUCKET`"), "{}", e[2]);
}

#[test]
fn a_privilege_on_a_type_it_is_not_grantable_on_is_an_error() {
    let e = one_error(&format!(
        "{HEAD}roles:\n  - name: r\n    securableObjects:\n      - {{ type: TABLE, fullName: c.s.t, privileges: [{{ name: CREATE_TABLE, condition: ALLOW }}] }}\n"
    ));
    assert!(e.contains("privilege `CREATE_TABLE` is not grantable on TABLE `c.s.t`"), "{e}");
}

#[test]
fn kinds_are_case_insensitive_but_names_are_not() {
    let loaded = load_str(
        "p.yaml",
        &format!("{HEAD}users: [{{ name: a, roles: [R] }}]\nroles:\n  - name: R\n    securableObjects:\n      - {{ type: catalog, fullName: c, privileges: [{{ name: use_catalog, condition: allow }}] }}\n"),
    )
    .unwrap();
    assert_eq!(loaded.snapshot.stats().allow, 1);
    let e = one_error(&format!("{HEAD}users: [{{ name: a, roles: [r] }}]\nroles: [{{ name: R }}]\n"));
    assert!(e.contains("undefined role `r`"), "{e}");
}

#[test]
fn undefined_references_are_errors() {
    let e = errors(&format!(
        "{HEAD}users:\n  - {{ name: a, groups: [nope], default_active_roles: [x], max_active_roles: [y], blocked_roles: [z] }}\ngroups:\n  - {{ name: g, roles: [w] }}\n"
    ));
    let all = e.join("\n");
    for needle in [
        "undefined group `nope`",
        "undefined role `x` in `default_active_roles`",
        "undefined role `y` in `max_active_roles`",
        "undefined role `z` in `blocked_roles`",
        "group `g` lists undefined role `w`",
    ] {
        assert!(all.contains(needle), "missing {needle}:\n{all}");
    }
}

#[test]
fn duplicate_names_and_owned_objects_are_errors() {
    let e = errors(&format!(
        "{HEAD}users: [{{ name: a }}, {{ name: a }}]\nroles: [{{ name: r }}, {{ name: r }}]\nowners:\n  - {{ type: CATALOG, fullName: c, owner: a, ownerType: USER }}\n  - {{ type: catalog, fullName: c, owner: b, ownerType: USER }}\n"
    ));
    let all = e.join("\n");
    assert!(all.contains("user `a` is defined twice (first at p.yaml:3)"), "{all}");
    assert!(all.contains("role `r` is defined twice"), "{all}");
    assert!(all.contains("CATALOG `c` is owned twice"), "{all}");
}

#[test]
fn full_names_must_fit_their_type() {
    for (ty, name) in [
        ("CATALOG", "a.b"),
        ("SCHEMA", "c"),
        ("SCHEMA", "c.a.b"),
        ("TABLE", "c.s"),
        ("METALAKE", "other"),
        ("SCHEMA", "c.a::b"),
    ] {
        let e =
            one_error(&format!("{HEAD}owners: [{{ type: {ty}, fullName: \"{name}\", owner: u, ownerType: USER }}]\n"));
        assert!(e.contains(&format!("full name `{name}`")), "{e}");
    }
}

#[test]
fn role_names_the_header_cannot_carry_are_errors() {
    let e = one_error(&format!("{HEAD}roles: [{{ name: \"a,b\" }}]\n"));
    assert!(e.contains("role name `a,b` contains"), "{e}");
}

#[test]
fn gravitino_role_fields_are_accepted() {
    let loaded = load_str(
        "p.yaml",
        &format!(
            "{HEAD}roles:\n  - name: r\n    properties: {{ k: v }}\n    audit: {{ creator: admin }}\n    securableObjects: []\n"
        ),
    );
    assert!(loaded.is_ok());
}

#[test]
fn a_directory_loads_its_yaml_files_in_name_order_and_skips_dotfiles() {
    let dir = TempDir::new("policy-dir");
    dir.write("10-roles.yaml", "version: 1\nroles: [{ name: r }]\n");
    dir.write("00-base.yml", "version: 1\nmetalake: lake\nusers: [{ name: a, roles: [r] }]\n");
    dir.write(".hidden.yaml", "not: [valid");
    dir.write("notes.txt", "ignored");
    std::fs::create_dir(dir.path().join("..data")).unwrap();
    let loaded = load_path(dir.path()).unwrap();
    assert_eq!(loaded.snapshot.stats().users, 1);
    assert_eq!(loaded.snapshot.stats().roles, 1);
    // the hash covers the files in load order
    let a = std::fs::read(dir.path().join("00-base.yml")).unwrap();
    let b = std::fs::read(dir.path().join("10-roles.yaml")).unwrap();
    let expected = icegate::core::policy::load::content_hash(&[
        icegate::core::policy::load::Source { path: "a".into(), text: String::from_utf8(a).unwrap() },
        icegate::core::policy::load::Source { path: "b".into(), text: String::from_utf8(b).unwrap() },
    ]);
    assert_eq!(loaded.snapshot.hash(), expected);
    assert!(expected.starts_with("sha256:") && expected.len() == 7 + 64);
}

#[test]
fn a_directory_rejects_duplicates_across_files_and_disagreeing_settings() {
    let dir = TempDir::new("policy-dir-dup");
    dir.write("a.yaml", "version: 1\nmetalake: lake\nroles: [{ name: r }]\n");
    dir.write("b.yaml", "version: 1\nmetalake: other\nroles: [{ name: r }]\n");
    let e = load_path(dir.path()).unwrap_err().to_string();
    assert!(e.contains("b.yaml:2: metalake `other` differs"), "{e}");
    assert!(e.contains("b.yaml:3: role `r` is defined twice"), "{e}");
}

#[test]
fn an_empty_directory_or_missing_path_is_an_error() {
    let dir = TempDir::new("policy-empty");
    assert!(load_path(dir.path()).unwrap_err().to_string().contains("holds no policy file"));
    assert!(load_path(&dir.path().join("missing.yaml")).unwrap_err().to_string().contains("cannot read policy"));
}

#[test]
fn the_example_policy_loads_without_warnings() {
    let loaded =
        load_path(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/policies/example.yaml"))).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn large_policies_fit_the_parser_budget() {
    // The YAML parser's default budget stopped at ~250,000 nodes (~20,000 grants).
    let mut y = String::from("version: 1\nmetalake: lake\nroles:\n");
    for r in 0..3_000 {
        y.push_str(&format!("  - name: r{r}\n    securableObjects:\n"));
        for t in 0..10 {
            y.push_str(&format!(
                "      - {{ type: TABLE, fullName: c{}.s{}.t{t}, privileges: [{{ name: SELECT_TABLE, condition: ALLOW }}] }}\n",
                r % 7,
                r % 13
            ));
        }
    }
    let loaded = load_str("big.yaml", &y).unwrap();
    assert_eq!(loaded.snapshot.stats().allow, 30_000);
}

#[test]
fn catalogs_entries_must_agree_on_case_sensitive_and_not_repeat_a_prefix() {
    let e = errors(&format!(
        "{HEAD}catalogs:\n  - {{ name: hive, case_sensitive: false }}\n  - {{ prefix: h2, name: hive }}\n  - {{ prefix: hive, name: other }}\n"
    ));
    assert_eq!(e.len(), 2, "{e:#?}");
    assert!(
        e[0].starts_with(
            "p.yaml:5: catalog `hive` is `case_sensitive: true` here but `case_sensitive: false` at p.yaml:4"
        ),
        "{}",
        e[0]
    );
    assert!(e[1].starts_with("p.yaml:6: catalog prefix `hive` is mapped twice"), "{}", e[1]);
}

#[test]
fn names_in_a_case_insensitive_catalog_must_be_lower_case() {
    let e = errors(&format!(
        "{HEAD}catalogs:\n  - {{ name: Hive, case_sensitive: false }}\nroles:\n  - name: r\n    securableObjects:\n      - {{ type: TABLE, fullName: Hive.sales.Salaries, privileges: [{{ name: SELECT_TABLE, condition: DENY }}] }}\n      - {{ type: SCHEMA, fullName: Hive.Sales, privileges: [] }}\n      - {{ type: CATALOG, fullName: Hive, privileges: [] }}\n      - {{ type: TABLE, fullName: other.Sales.T, privileges: [] }}\nowners:\n  - {{ type: VIEW, fullName: Hive.sales.V, owner: a, ownerType: USER }}\n"
    ));
    assert_eq!(e.len(), 3, "{e:#?}");
    assert!(e[0].starts_with("p.yaml:8: TABLE `Hive.sales.Salaries` is not in lower case, but catalog `Hive` folds names to lower case (`case_sensitive: false`); write `Hive.sales.salaries`"), "{}", e[0]);
    assert!(e[1].starts_with("p.yaml:9: SCHEMA `Hive.Sales` is not in lower case"), "{}", e[1]);
    assert!(e[2].starts_with("p.yaml:13: VIEW `Hive.sales.V` is not in lower case"), "{}", e[2]);
}

#[test]
fn a_catalogs_entry_without_prefix_is_reached_by_its_name_and_only_listed_prefixes_are() {
    let snap = crate::support::load(&format!(
        "{HEAD}default_catalog: prod\ncatalogs:\n  - {{ name: prod }}\n  - {{ prefix: \"main|warehouse\", name: prod }}\n"
    ));
    assert_eq!(snap.catalog_for_prefix(Some("prod")), Some("prod"));
    assert_eq!(snap.catalog_for_prefix(Some("main|warehouse")), Some("prod"));
    assert_eq!(snap.catalog_for_prefix(Some("main")), None);
    assert_eq!(snap.catalog_for_prefix(None), Some("prod"));
    // without a `catalogs` list, a prefix is its catalog's name
    let open = crate::support::load(HEAD);
    assert_eq!(open.catalog_for_prefix(Some("main")), Some("main"));
}

/// One policy in YAML and in JSON, line for line: the JSON form is read on the JSON path.
const AS_YAML: &str = "version: 1
metalake: lake
users: [{name: a, roles: [r]}]
roles:
- {name: r, securableObjects: [{type: CATALOG, fullName: c, privileges: [{name: USE_CATALOG, condition: ALLOW}]},
   {type: TABLE, fullName: c.s.t, privileges: [{name: SELECT_TABLE, condition: DENY}, {name: SELECT_TABLE, condition: DENY}]}]}
owners: [{type: CATALOG, fullName: c, owner: a, ownerType: USER}, {type: SCHEMA, fullName: c.s, owner: nobody, ownerType: GROUP}]
";
const AS_JSON: &str = r#"{"version": 1,
"metalake": "lake",
"users": [{"name": "a", "roles": ["r"]}],
"roles": [
{"name": "r", "securableObjects": [{"type": "CATALOG", "fullName": "c", "privileges": [{"name": "USE_CATALOG", "condition": "ALLOW"}]},
   {"type": "TABLE", "fullName": "c.s.t", "privileges": [{"name": "SELECT_TABLE", "condition": "DENY"}, {"name": "SELECT_TABLE", "condition": "DENY"}]}]}],
"owners": [{"type": "CATALOG", "fullName": "c", "owner": "a", "ownerType": "USER"}, {"type": "SCHEMA", "fullName": "c.s", "owner": "nobody", "ownerType": "GROUP"}]
}
"#;

#[test]
fn a_json_policy_loads_like_its_yaml_form_with_the_same_warnings_and_lines() {
    let yaml = load_str("p", AS_YAML).unwrap();
    let json = load_str("p", AS_JSON).unwrap();
    let warnings = |w: &[icegate::core::policy::Diagnostic]| w.iter().map(ToString::to_string).collect::<Vec<_>>();
    assert_eq!(warnings(&json.warnings), warnings(&yaml.warnings));
    // twice the same DENY (line 6), the undefined owner (line 7), the owner's DENY (line 6)
    assert_eq!(json.warnings.iter().map(|w| w.line).collect::<Vec<_>>(), [6, 7, 6], "{:#?}", json.warnings);
    assert_eq!(json.snapshot.stats().to_string(), yaml.snapshot.stats().to_string());
}

#[test]
fn a_json_policy_with_errors_reports_them_as_its_yaml_form_does() {
    let both = |from: &str, to: &str| {
        let yaml = errors(&AS_YAML.replacen(from, to, 1));
        let json = errors(&AS_JSON.replacen(&format!("\"{from}\""), &format!("\"{to}\""), 1));
        assert_eq!(json, yaml);
        json
    };
    assert_eq!(both("USE_CATALOG", "SELECT"), ["p.yaml:5: unknown privilege `SELECT`"]);
    assert_eq!(both("TABLE", "BUCKET"), ["p.yaml:6: unknown object type `BUCKET`"]);
    // a value that is not a string, and a version the path reads on its own: the same lines
    let e = errors(&AS_JSON.replacen("\"version\": 1", "\"version\": 2", 1));
    assert_eq!(e, ["p.yaml:1: unsupported policy version `2`; expected `1`"]);
    // what the JSON path leaves to the YAML parser: an escaped name, a syntax error
    let e = errors(&AS_JSON.replacen("\"roles\": [\"r\"]", "\"roles\": [\"\\u0071\"]", 1));
    assert_eq!(e, ["p.yaml:3: user `a` lists undefined role `q` in `roles`"]);
    let e = one_error(&AS_JSON.replacen("\"lake\",", "\"lake\",,", 1));
    assert!(e.starts_with("p.yaml:2: "), "{e}");
}
