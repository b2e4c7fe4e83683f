//! Property tests of the decision core (proptest), and a differential test against a naive
//! reference evaluator written straight from docs/design.md §4's formulas, with no indexes.

use icegate::core::decide::Settings;
use icegate::core::offline::{Input, decide};
use icegate::core::roles::{OwnershipMode, Principal, parse_header};
use proptest::prelude::*;
use std::collections::BTreeSet;

const ROLES: [&str; 4] = ["r0", "r1", "r2", "r3"];
const GROUPS: [&str; 2] = ["g0", "g1"];
const CATALOGS: [&str; 2] = ["c1", "c2"];
const SCHEMAS: [&[&str]; 3] = [&["s1"], &["s1", "x"], &["s2"]];
const LEAVES: [&str; 3] = ["t1", "t2", "v1"];

/// A securable object of the generated universe.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Obj {
    Metalake,
    Catalog(usize),
    Schema(usize, usize),
    /// (catalog, schema, leaf name, kind): kind 0 table, 1 view, 2 function
    Leaf(usize, usize, usize, u8),
}

impl Obj {
    fn yaml(&self) -> (String, String) {
        let schema = |s: usize| SCHEMAS[s].join(":");
        match self {
            Obj::Metalake => ("METALAKE".into(), "lake".into()),
            Obj::Catalog(c) => ("CATALOG".into(), CATALOGS[*c].into()),
            Obj::Schema(c, s) => ("SCHEMA".into(), format!("{}.{}", CATALOGS[*c], schema(*s))),
            Obj::Leaf(c, s, l, k) => {
                let ty = ["TABLE", "VIEW", "FUNCTION"][*k as usize];
                (ty.into(), format!("{}.{}.{}", CATALOGS[*c], schema(*s), LEAVES[*l]))
            }
        }
    }

    fn ty(&self) -> &'static str {
        match self {
            Obj::Metalake => "METALAKE",
            Obj::Catalog(_) => "CATALOG",
            Obj::Schema(..) => "SCHEMA",
            Obj::Leaf(_, _, _, 0) => "TABLE",
            Obj::Leaf(_, _, _, 1) => "VIEW",
            Obj::Leaf(..) => "FUNCTION",
        }
    }
}

/// The privileges an Iceberg operation checks, with the types each is grantable on (§3).
const PRIVS: [(&str, &[&str]); 10] = [
    ("USE_CATALOG", &["METALAKE", "CATALOG"]),
    ("USE_SCHEMA", &["METALAKE", "CATALOG", "SCHEMA"]),
    ("CREATE_SCHEMA", &["METALAKE", "CATALOG", "SCHEMA"]),
    ("CREATE_TABLE", &["METALAKE", "CATALOG", "SCHEMA"]),
    ("SELECT_TABLE", &["METALAKE", "CATALOG", "SCHEMA", "TABLE"]),
    ("MODIFY_TABLE", &["METALAKE", "CATALOG", "SCHEMA", "TABLE"]),
    ("CREATE_VIEW", &["METALAKE", "CATALOG", "SCHEMA"]),
    ("SELECT_VIEW", &["METALAKE", "CATALOG", "SCHEMA", "VIEW"]),
    ("EXECUTE_FUNCTION", &["METALAKE", "CATALOG", "SCHEMA", "FUNCTION"]),
    ("MODIFY_FUNCTION", &["METALAKE", "CATALOG", "SCHEMA", "FUNCTION"]),
];

#[derive(Clone, Debug)]
struct Grant {
    role: usize,
    obj: Obj,
    privilege: usize,
    deny: bool,
}

/// Owner: 0 the user `u0`, 1 the group `g0`, 2 someone else.
#[derive(Clone, Debug)]
struct Policy {
    user_roles: BTreeSet<usize>,
    user_groups: BTreeSet<usize>,
    group_roles: [BTreeSet<usize>; 2],
    grants: Vec<Grant>,
    owners: Vec<(Obj, u8)>,
}

impl Policy {
    fn held(&self) -> BTreeSet<usize> {
        let mut held = self.user_roles.clone();
        for g in &self.user_groups {
            held.extend(self.group_roles[*g].iter().copied());
        }
        held
    }

    fn yaml(&self) -> String {
        let list = |s: &BTreeSet<usize>, names: &[&str]| s.iter().map(|i| names[*i]).collect::<Vec<_>>().join(", ");
        let mut y = String::from("version: 1\nmetalake: lake\ndefault_catalog: c1\nusers:\n");
        y += &format!(
            "  - {{ name: u0, roles: [{}], groups: [{}] }}\n  - {{ name: other }}\ngroups:\n",
            list(&self.user_roles, &ROLES),
            list(&self.user_groups, &GROUPS)
        );
        for (g, roles) in self.group_roles.iter().enumerate() {
            y += &format!("  - {{ name: {}, roles: [{}] }}\n", GROUPS[g], list(roles, &ROLES));
        }
        y += "roles:\n";
        for (r, name) in ROLES.iter().enumerate() {
            let objects: Vec<String> = self
                .grants
                .iter()
                .filter(|g| g.role == r)
                .map(|g| {
                    let (ty, full) = g.obj.yaml();
                    let cond = if g.deny { "DENY" } else { "ALLOW" };
                    format!(
                        "{{ type: {ty}, fullName: \"{full}\", privileges: [{{ name: {}, condition: {cond} }}] }}",
                        PRIVS[g.privilege].0
                    )
                })
                .collect();
            y += &format!("  - name: {name}\n    securableObjects: [{}]\n", objects.join(", "));
        }
        let mut seen = BTreeSet::new();
        let mut owners = Vec::new();
        for (obj, who) in &self.owners {
            if !seen.insert(obj.clone()) {
                continue;
            }
            let (ty, full) = obj.yaml();
            let (owner, kind) = [("u0", "USER"), ("g0", "GROUP"), ("zed", "USER")][*who as usize];
            owners.push(format!("{{ type: {ty}, fullName: \"{full}\", owner: {owner}, ownerType: {kind} }}"));
        }
        y += &format!("owners: [{}]\n", owners.join(", "));
        y
    }
}

fn obj_strategy() -> impl Strategy<Value = Obj> {
    prop_oneof![
        Just(Obj::Metalake),
        (0..2usize).prop_map(Obj::Catalog),
        (0..2usize, 0..3usize).prop_map(|(c, s)| Obj::Schema(c, s)),
        (0..2usize, 0..3usize, 0..3usize, 0..3u8).prop_map(|(c, s, l, k)| Obj::Leaf(c, s, l, k)),
    ]
}

fn grant_strategy() -> impl Strategy<Value = Option<Grant>> {
    (0..4usize, obj_strategy(), 0..PRIVS.len(), prop::bool::weighted(0.15)).prop_map(|(role, obj, privilege, deny)| {
        PRIVS[privilege].1.contains(&obj.ty()).then_some(Grant { role, obj, privilege, deny })
    })
}

fn role_set() -> impl Strategy<Value = BTreeSet<usize>> {
    prop::collection::btree_set(0..4usize, 0..3)
}

fn policy_strategy() -> impl Strategy<Value = Policy> {
    (
        role_set(),
        prop::collection::btree_set(0..2usize, 0..2),
        [role_set(), role_set()],
        prop::collection::vec(grant_strategy(), 0..32),
        prop::collection::vec((obj_strategy(), 0..3u8), 0..4),
        0..4usize,
    )
        .prop_map(|(user_roles, user_groups, group_roles, grants, owners, traversal)| {
            let mut grants: Vec<Grant> = grants.into_iter().flatten().collect();
            // Most decisions need USE_CATALOG and USE_SCHEMA first; grant them to one role in
            // most cases so that the leaf privileges and denies are what the test exercises.
            if traversal < 3 {
                for privilege in [0, 1] {
                    grants.push(Grant { role: traversal, obj: Obj::Metalake, privilege, deny: false });
                }
            }
            Policy { user_roles, user_groups, group_roles, grants, owners }
        })
}

/// A request of the generated universe: (operation label, method, target, body).
#[derive(Clone, Debug)]
struct Req {
    op: &'static str,
    catalog: usize,
    schema: usize,
    leaf: usize,
}

const OPS: [&str; 12] = [
    "loadTable",
    "tableExists",
    "dropTable",
    "updateTable",
    "loadView",
    "dropView",
    "viewExists",
    "loadNamespaceMetadata",
    "dropNamespace",
    "listTables",
    "createTable",
    "loadFunction",
];

fn req_strategy() -> impl Strategy<Value = Req> {
    (0..OPS.len(), 0..2usize, 0..3usize, 0..3usize).prop_map(|(op, catalog, schema, leaf)| Req {
        op: OPS[op],
        catalog,
        schema,
        leaf,
    })
}

impl Req {
    fn http(&self) -> (&'static str, String, Option<&'static str>) {
        let ns = format!("/v1/{}/namespaces/{}", CATALOGS[self.catalog], SCHEMAS[self.schema].join("%1F"));
        let leaf = LEAVES[self.leaf];
        match self.op {
            "loadTable" => ("GET", format!("{ns}/tables/{leaf}"), None),
            "tableExists" => ("HEAD", format!("{ns}/tables/{leaf}"), None),
            "dropTable" => ("DELETE", format!("{ns}/tables/{leaf}"), None),
            "updateTable" => ("POST", format!("{ns}/tables/{leaf}"), Some(r#"{"requirements":[],"updates":[]}"#)),
            "loadView" => ("GET", format!("{ns}/views/{leaf}"), None),
            "dropView" => ("DELETE", format!("{ns}/views/{leaf}"), None),
            "viewExists" => ("HEAD", format!("{ns}/views/{leaf}"), None),
            "loadNamespaceMetadata" => ("GET", ns, None),
            "dropNamespace" => ("DELETE", ns, None),
            "listTables" => ("GET", format!("{ns}/tables"), None),
            "createTable" => ("POST", format!("{ns}/tables"), Some(r#"{"name":"fresh"}"#)),
            _ => ("GET", format!("{ns}/functions/{leaf}"), None),
        }
    }
}

fn run(
    snapshot: &icegate::core::policy::Snapshot,
    user: &str,
    header: Option<&str>,
    req: &Req,
    mode: OwnershipMode,
) -> (u16, Option<&'static str>) {
    let (method, target, body) = req.http();
    let input = Input {
        method,
        target: &target,
        principal: Principal { user: user.to_owned(), groups: Vec::new(), claim_roles: None },
        active_roles: header.map(str::as_bytes),
        body: body.map(str::as_bytes),
        exists: true,
        list_response: None,
        namespace_location: None,
        table_metadata: None,
    };
    let out = decide(snapshot, &Settings { ownership: mode, ..Settings::default() }, &input);
    (out.status, out.credential.map(|c| c.as_str()))
}

fn header_for(active: &BTreeSet<usize>) -> String {
    if active.is_empty() { "NONE".to_owned() } else { active.iter().map(|r| ROLES[*r]).collect::<Vec<_>>().join(",") }
}

/// The naive reference: docs/design.md §4 read literally, scanning every grant and owner.
struct Reference<'a> {
    p: &'a Policy,
    held: BTreeSet<usize>,
    active: BTreeSet<usize>,
    ownership: bool,
}

impl Reference<'_> {
    fn chain(c: usize, s: usize) -> Vec<Obj> {
        let mut chain = vec![Obj::Metalake, Obj::Catalog(c)];
        // the schema chain: every ancestor level is a schema of its own
        for (i, levels) in SCHEMAS.iter().enumerate() {
            if SCHEMAS[s].starts_with(levels) {
                chain.push(Obj::Schema(c, i));
            }
        }
        chain
    }

    fn privilege(&self, name: &str, scopes: &[Obj]) -> bool {
        let (idx, grantable) =
            PRIVS.iter().enumerate().find(|(_, (n, _))| *n == name).map(|(i, (_, g))| (i, *g)).unwrap();
        let in_scope = |o: &Obj| scopes.contains(o) && grantable.contains(&o.ty());
        let denied = self
            .p
            .grants
            .iter()
            .any(|g| g.deny && g.privilege == idx && self.held.contains(&g.role) && in_scope(&g.obj));
        let allowed = self
            .p
            .grants
            .iter()
            .any(|g| !g.deny && g.privilege == idx && self.active.contains(&g.role) && in_scope(&g.obj));
        allowed && !denied
    }

    fn owns(&self, o: &Obj) -> bool {
        let groups: Vec<u8> = if self.p.user_groups.contains(&0) { vec![0, 1] } else { vec![0] };
        // the first owner listed for an object is the one loaded (later ones are skipped)
        self.ownership && self.p.owners.iter().find(|(obj, _)| obj == o).is_some_and(|(_, who)| groups.contains(who))
    }

    fn allowed(&self, r: &Req) -> bool {
        let chain = Self::chain(r.catalog, r.schema);
        let schemas: Vec<&Obj> = chain.iter().filter(|o| matches!(o, Obj::Schema(..))).collect();
        let table = Obj::Leaf(r.catalog, r.schema, r.leaf, 0);
        let view = Obj::Leaf(r.catalog, r.schema, r.leaf, 1);
        let function = Obj::Leaf(r.catalog, r.schema, r.leaf, 2);
        let with = |o: &Obj| {
            let mut c = chain.clone();
            c.push(o.clone());
            c
        };
        let p = |name: &str| self.privilege(name, &chain);
        let top = self.owns(&Obj::Metalake) || self.owns(&Obj::Catalog(r.catalog));
        let own_schema = schemas.iter().any(|s| self.owns(s));
        let uc = p("USE_CATALOG");
        let souc = own_schema && uc;
        let ucs = uc && p("USE_SCHEMA");
        let sel_t = self.privilege("SELECT_TABLE", &with(&table));
        let mod_t = self.privilege("MODIFY_TABLE", &with(&table));
        let sel_v = self.privilege("SELECT_VIEW", &with(&view));
        match r.op {
            "loadTable" => top || souc || ucs && (self.owns(&table) || sel_t || mod_t),
            "tableExists" => {
                top || souc
                    || ucs
                        && (self.owns(&table)
                            || self.owns(&view)
                            || sel_t
                            || mod_t
                            || p("CREATE_TABLE")
                            || sel_v
                            || p("CREATE_VIEW"))
            }
            "dropTable" => top || souc || ucs && self.owns(&table),
            "updateTable" => top || souc || ucs && (self.owns(&table) || mod_t),
            "loadView" => top || souc || ucs && (self.owns(&view) || sel_v),
            "dropView" => top || souc || ucs && self.owns(&view),
            "viewExists" => top || souc || ucs && (self.owns(&view) || sel_v || p("CREATE_VIEW")),
            "loadNamespaceMetadata" => top || uc && (own_schema || p("USE_SCHEMA") || p("CREATE_SCHEMA")),
            "dropNamespace" => top || souc,
            "listTables" => top || uc && (own_schema || p("USE_SCHEMA")),
            "createTable" => top || souc || ucs && p("CREATE_TABLE"),
            _ => {
                top || souc
                    || ucs
                        && (self.owns(&function)
                            || self.privilege("EXECUTE_FUNCTION", &with(&function))
                            || self.privilege("MODIFY_FUNCTION", &with(&function)))
            }
        }
    }

    fn scope(&self, r: &Req) -> &'static str {
        let chain = Self::chain(r.catalog, r.schema);
        let table = Obj::Leaf(r.catalog, r.schema, r.leaf, 0);
        let mut with = chain.clone();
        with.push(table.clone());
        let owner = with.iter().any(|o| self.owns(o));
        if owner || self.privilege("MODIFY_TABLE", &with) { "write" } else { "read" }
    }
}

fn subsets(held: &BTreeSet<usize>) -> Vec<BTreeSet<usize>> {
    let items: Vec<usize> = held.iter().copied().collect();
    (0..1usize << items.len())
        .map(|mask| items.iter().enumerate().filter(|(i, _)| mask >> i & 1 == 1).map(|(_, r)| *r).collect())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The indexed evaluator agrees with the naive reference on every request and active set.
    #[test]
    fn differential_indexed_evaluator_matches_naive_reference(policy in policy_strategy(), reqs in prop::collection::vec(req_strategy(), 1..8), mode_narrowed in any::<bool>()) {
        let snapshot = crate::support::load(&policy.yaml());
        let held = policy.held();
        let mode = if mode_narrowed { OwnershipMode::Narrowed } else { OwnershipMode::Always };
        for active in subsets(&held) {
            let header = (active != held).then(|| header_for(&active));
            let ownership = mode == OwnershipMode::Always || header.is_none();
            let reference = Reference { p: &policy, held: held.clone(), active: active.clone(), ownership };
            for r in &reqs {
                let (status, credential) = run(&snapshot, "u0", header.as_deref(), r, mode);
                let expected = reference.allowed(r);
                prop_assert_eq!(status == 200, expected, "{:?} header {:?} status {}\n{}", r, header, status, policy.yaml());
                if status == 200 && r.op == "loadTable" {
                    prop_assert_eq!(credential, Some(reference.scope(r)), "{:?} header {:?}", r, header);
                }
            }
        }
    }

    /// Narrowing never widens (ownership mode `always`): allowed with S ⇒ allowed with T ⊇ S.
    #[test]
    fn narrowing_never_widens(policy in policy_strategy(), reqs in prop::collection::vec(req_strategy(), 1..8)) {
        let snapshot = crate::support::load(&policy.yaml());
        let held = policy.held();
        let sets = subsets(&held);
        for r in &reqs {
            let allowed: Vec<(BTreeSet<usize>, bool)> = sets
                .iter()
                .map(|s| (s.clone(), run(&snapshot, "u0", Some(&header_for(s)), r, OwnershipMode::Always).0 == 200))
                .collect();
            let unheadered = run(&snapshot, "u0", None, r, OwnershipMode::Always).0 == 200;
            for (s, ok_s) in &allowed {
                if !ok_s { continue; }
                prop_assert!(unheadered, "{:?}: allowed with {:?} but not with all held roles", r, s);
                for (t, ok_t) in &allowed {
                    if s.is_subset(t) {
                        prop_assert!(ok_t, "{:?}: allowed with {:?} but not with {:?}", r, s, t);
                    }
                }
            }
        }
    }

    /// Default deny: a snapshot without grants or owners allows nothing but getConfig and getToken.
    #[test]
    fn default_deny_without_grants_or_owners(reqs in prop::collection::vec(req_strategy(), 1..16), user in prop_oneof![Just("u0"), Just("other")]) {
        let snapshot = crate::support::load(
            "version: 1\nmetalake: lake\ndefault_catalog: c1\nusers: [{ name: u0, roles: [r0], groups: [g0] }, { name: other }]\n\
             groups: [{ name: g0, roles: [r1] }]\nroles: [{ name: r0 }, { name: r1 }]\n",
        );
        for r in &reqs {
            let (status, _) = run(&snapshot, user, None, r, OwnershipMode::Always);
            prop_assert_ne!(status, 200, "{:?}", r);
        }
        let config = Req { op: "getConfig", catalog: 0, schema: 0, leaf: 0 };
        let input = Input { method: "GET", target: "/v1/config", principal: Principal { user: user.to_owned(), ..Principal::default() }, active_roles: None, body: None, exists: true, list_response: None , namespace_location: None, table_metadata: None };
        prop_assert_eq!(decide(&snapshot, &Settings::default(), &input).status, 200, "{:?}", config);
        let token = Input { method: "POST", target: "/v1/oauth/tokens", body: Some(b"grant_type=client_credentials"), ..input };
        prop_assert_eq!(decide(&snapshot, &Settings::default(), &token).status, 200);
    }

    /// A DENY on any scope of the chain, in any held role (active or not), denies.
    #[test]
    fn a_deny_anywhere_on_the_chain_denies(deny_at in 0..4usize, allow_at in 0..4usize, deny_active in any::<bool>()) {
        let scopes = ["{ type: METALAKE, fullName: lake", "{ type: CATALOG, fullName: c1", "{ type: SCHEMA, fullName: c1.s1", "{ type: TABLE, fullName: c1.s1.t1"];
        let policy = format!(
            "version: 1\nmetalake: lake\ndefault_catalog: c1\nusers: [{{ name: u0, roles: [reader, denier] }}]\nroles:\n\
             - name: reader\n  securableObjects:\n\
             \x20   - {{ type: METALAKE, fullName: lake, privileges: [{{ name: USE_CATALOG, condition: ALLOW }}, {{ name: USE_SCHEMA, condition: ALLOW }}] }}\n\
             \x20   - {}, privileges: [{{ name: SELECT_TABLE, condition: ALLOW }}] }}\n\
             - name: denier\n  securableObjects:\n\
             \x20   - {}, privileges: [{{ name: SELECT_TABLE, condition: DENY }}] }}\n",
            scopes[allow_at], scopes[deny_at]
        );
        let snapshot = crate::support::load(&policy);
        let header = if deny_active { "reader,denier" } else { "reader" };
        let r = Req { op: "loadTable", catalog: 0, schema: 0, leaf: 0 };
        prop_assert_eq!(run(&snapshot, "u0", Some(header), &r, OwnershipMode::Always).0, 403);
        prop_assert_eq!(run(&snapshot, "u0", None, &r, OwnershipMode::Always).0, 403);
    }

    /// The header parser never panics, and is idempotent on its canonical output.
    #[test]
    fn header_parser_total_and_idempotent(bytes in prop::collection::vec(any::<u8>(), 0..40), text in "[ \tA-Za-z_,;=]{0,24}", caller in any::<bool>()) {
        let mode = if caller { OwnershipMode::Caller } else { OwnershipMode::Always };
        for value in [bytes.as_slice(), text.as_bytes()] {
            if let Ok(parsed) = parse_header(Some(value), mode) {
                let canonical = parsed.canonical();
                prop_assert_eq!(parse_header(Some(canonical.as_bytes()), mode), Ok(parsed.clone()), "{:?}", canonical);
            }
        }
    }
}
