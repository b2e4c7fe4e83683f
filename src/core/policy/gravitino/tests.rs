use super::wire::{Group, Owner, Privilege, Role, SecurableObject, User};
use super::*;
use crate::core::decide::Settings;
use crate::core::offline::{Input, decide};
use crate::core::policy::model::ObjectType;
use crate::core::roles::Principal;

fn object(kind: &str, full_name: &str, privileges: &[(&str, &str)]) -> SecurableObject {
    SecurableObject {
        full_name: full_name.into(),
        kind: kind.into(),
        privileges: privileges.iter().map(|(n, c)| Privilege { name: (*n).into(), condition: (*c).into() }).collect(),
    }
}

fn user(name: &str, roles: &[&str]) -> User {
    User { name: name.into(), roles: Some(roles.iter().map(|r| (*r).into()).collect()), enabled: None }
}

/// A metalake as Gravitino's own client writes it: lower-case types and privilege names.
fn lake() -> Metalake {
    Metalake {
        name: "lake".into(),
        roles: vec![
            Role {
                name: "reader".into(),
                securable_objects: vec![
                    object("catalog", "prod", &[("use_catalog", "allow")]),
                    object("schema", "prod.sales", &[("use_schema", "allow"), ("select_table", "allow")]),
                    object("table", "prod.sales.salaries", &[("select_table", "deny")]),
                    object("fileset", "prod.files.f", &[("read_fileset", "allow"), ("SOMETHING_NEW", "allow")]),
                ],
            },
            Role {
                name: "admin".into(),
                securable_objects: vec![object("METALAKE", "lake", &[("MANAGE_GRANTS", "ALLOW")])],
            },
            Role {
                name: "usage".into(),
                securable_objects: vec![
                    object("CATALOG", "prod", &[("USE_CATALOG", "ALLOW")]),
                    object("SCHEMA", "prod.sales", &[("USE_SCHEMA", "ALLOW")]),
                ],
            },
        ],
        users: vec![user("icegate", &["admin"]), user("alice", &["reader"]), user("bob", &["usage"])],
        groups: vec![Group { name: "analysts".into(), roles: Some(vec!["reader".into()]) }],
        owners: vec![ObjectOwner {
            kind: ObjectType::Table,
            full_name: "prod.sales.orders".into(),
            owner: Owner { name: "bob".into(), kind: "USER".into() },
        }],
    }
}

fn status(snap: &crate::core::policy::Snapshot, user: &str, groups: &[&str], method: &str, target: &str) -> u16 {
    let principal =
        Principal { user: user.into(), groups: groups.iter().map(|g| (*g).into()).collect(), claim_roles: None };
    let input = Input {
        method,
        target,
        principal,
        active_roles: None,
        body: None,
        exists: true,
        list_response: None,
        namespace_location: None,
        table_metadata: None,
    };
    decide(snap, &Settings::default(), &input).status
}

#[test]
fn a_metalake_decides_as_gravitino_does() {
    let doc = document(&lake(), None).unwrap();
    assert_eq!(doc.ignored_objects, 1, "the fileset is left out, its unknown privilege with it");
    let snap = load(source(&doc)).unwrap().snapshot;
    let get = |user: &str, groups: &[&str], path: &str| status(&snap, user, groups, "GET", path);
    assert_eq!(get("alice", &[], "/v1/prod/namespaces/sales/tables/orders"), 200);
    assert_eq!(get("alice", &[], "/v1/prod/namespaces/sales/tables/salaries"), 403, "the DENY holds");
    assert_eq!(get("bob", &[], "/v1/prod/namespaces/sales/tables/orders"), 200, "an owner read from Gravitino");
    assert_eq!(get("bob", &[], "/v1/prod/namespaces/sales/tables/other"), 403, "owning one table is not the schema");
    assert_eq!(get("bob", &["analysts"], "/v1/prod/namespaces/sales/tables/other"), 200, "a group's role");
    assert_eq!(
        get("carol", &["analysts"], "/v1/prod/namespaces/sales/tables/other"),
        403,
        "no user record: nothing, even through a group"
    );
}

#[test]
fn the_hash_is_the_sha256_of_the_canonical_json_whatever_the_order_read() {
    let doc = document(&lake(), None).unwrap();
    let one = source(&doc);
    let mut shuffled = lake();
    shuffled.roles.reverse();
    shuffled.users.reverse();
    for role in &mut shuffled.roles {
        role.securable_objects.reverse();
        for o in &mut role.securable_objects {
            o.privileges.reverse();
        }
    }
    let two = source(&document(&shuffled, None).unwrap());
    assert_eq!(one.text, two.text);
    let hash = crate::core::policy::load::content_hash(std::slice::from_ref(&one));
    assert_eq!(load(one).unwrap().snapshot.hash(), hash);
    assert!(hash.starts_with("sha256:") && hash.len() == 7 + 64);
}

#[test]
fn an_unknown_privilege_on_an_enforced_object_refuses_the_read() {
    let mut read = lake();
    read.roles[0].securable_objects.push(object("TABLE", "prod.sales.t", &[("SELECT_EVERYTHING", "DENY")]));
    let e = document(&read, None).unwrap_err().to_string();
    assert!(e.contains("role `reader` holds unknown privilege `SELECT_EVERYTHING` on TABLE `prod.sales.t`"), "{e}");
    let mut read = lake();
    read.roles[0].securable_objects.push(object("schema", "prod.s", &[("USE_SCHEMA", "MAYBE")]));
    assert!(matches!(document(&read, None), Err(GravitinoError::UnknownCondition { .. })));
    let mut read = lake();
    read.owners[0].owner.kind = "ROBOT".into();
    assert!(matches!(document(&read, None), Err(GravitinoError::UnknownOwnerType { .. })));
}

#[test]
fn a_role_no_user_can_name_refuses_the_read_whole() {
    let mut read = lake();
    read.users.push(user("dave", &["ghost"]));
    let e = load(source(&document(&read, None).unwrap())).unwrap_err().to_string();
    assert!(e.contains("ghost"), "{e}");
}

#[test]
fn an_implausible_read_is_refused() {
    let read = lake();
    assert!(check_plausible(&read, "icegate", Some(2), false).is_ok());
    let e = check_plausible(&read, "svc", None, false).unwrap_err().to_string();
    assert!(e.contains("`svc` is not among the metalake's users"), "{e}");
    let empty = Metalake { roles: Vec::new(), ..lake() };
    assert!(matches!(check_plausible(&empty, "icegate", Some(2), false), Err(GravitinoError::NoRoles { before: 2 })));
    assert!(check_plausible(&empty, "icegate", Some(2), true).is_ok());
    assert!(check_plausible(&empty, "icegate", Some(0), false).is_ok());
    assert!(check_plausible(&empty, "icegate", None, false).is_ok());
}

#[test]
fn the_catalogs_file_is_strict() {
    let path = Path::new("catalogs.yaml");
    let file =
        parse_catalogs_file(path, "version: 1\ndefault_catalog: prod\ncatalogs:\n  - { name: prod, prefix: p }\n")
            .unwrap();
    assert_eq!(file.default_catalog.as_deref(), Some("prod"));
    for bad in ["version: 2\n", "version: 1\nusers: []\n", "version: 1\nversion: 1\n", "catalogs: []\n"] {
        let e = parse_catalogs_file(path, bad).unwrap_err().to_string();
        assert!(e.starts_with("catalogs file `catalogs.yaml`: "), "{bad}: {e}");
    }
    let doc = document(&lake(), Some(&file)).unwrap();
    let snap = load(source(&doc)).unwrap().snapshot;
    assert_eq!(status(&snap, "alice", &[], "GET", "/v1/p/namespaces/sales/tables/orders"), 200);
}

#[test]
fn the_export_loads_into_the_same_policy() {
    let mut read = lake();
    read.users.push(User { name: "off\"line".into(), roles: Some(vec![]), enabled: Some(false) });
    let file = CatalogsFile {
        version: 1,
        default_catalog: Some("prod".into()),
        catalogs: vec![CatalogPrefix { name: "prod".into(), prefix: Some("p".into()), case_sensitive: None }],
    };
    let doc = document(&read, Some(&file)).unwrap();
    let yaml = to_yaml(&doc, "http://g:8090 metalake `lake`");
    let from_yaml = crate::core::policy::load_str("export.yaml", &yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    let from_json = load(source(&doc)).unwrap();
    assert_eq!(from_yaml.snapshot.stats().to_string(), from_json.snapshot.stats().to_string());
    for (user, path, want) in [
        ("alice", "/v1/p/namespaces/sales/tables/orders", 200),
        ("alice", "/v1/p/namespaces/sales/tables/salaries", 403),
        ("bob", "/v1/p/namespaces/sales/tables/orders", 200),
        ("off\"line", "/v1/p/namespaces/sales/tables/orders", 403),
    ] {
        assert_eq!(status(&from_yaml.snapshot, user, &[], "GET", path), want, "{user} {path}");
        assert_eq!(status(&from_json.snapshot, user, &[], "GET", path), want, "{user} {path}");
    }
}
