//! The generated policy the decision benchmarks share: roles of ten grants each over a grid of
//! catalogs × schemas × tables, users and groups holding them, and owners. Deterministic (a
//! fixed xorshift seed), so that every run and every engine compared sees the same policy.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "shared by benchmarks that each use part of it; a benchmark that fails panics"
)]

use std::collections::HashSet;
use std::fmt::Write as _;

/// The size of a generated policy. Every role has 10 grants, so grants = 10 × `roles`.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub catalogs: u32,
    pub schemas: u32,
    pub tables: u32,
    pub roles: u32,
    pub users: u32,
    pub groups: u32,
    /// Roles a user holds directly.
    pub user_roles: usize,
    /// Roles each group grants.
    pub group_roles: usize,
    pub owned_schemas: u32,
    pub owned_tables: usize,
}

impl Shape {
    /// The policy of the targets: 10,000 roles, 10,000 users, 100,000 grants over
    /// 100 catalogs × 100 schemas × 50 tables.
    pub const STANDARD: Shape = Shape::with_grants(100_000);

    /// A policy of about `grants` grants (10 per role), users as many as roles, a group per
    /// ten roles; the object grid and per-user role counts stay those of [`Shape::STANDARD`]
    /// so that only the policy's size changes.
    pub const fn with_grants(grants: u32) -> Shape {
        let roles = if grants < 10 { 1 } else { grants / 10 };
        Shape {
            catalogs: 100,
            schemas: 100,
            tables: 50,
            roles,
            users: roles,
            groups: if roles < 10 { 1 } else { roles / 10 },
            user_roles: if roles < 5 { roles as usize } else { 5 },
            group_roles: if roles < 3 { roles as usize } else { 3 },
            owned_schemas: if roles < 10_000 { roles / 10 } else { 1_000 },
            owned_tables: (roles / 2) as usize,
        }
    }

    pub fn grants(&self) -> u64 {
        u64::from(self.roles) * 10
    }
}

/// Table grants are DENY with this chance in 1,000 (about 3% of all grants are DENY).
const TABLE_DENY_PER_MILLE: u64 = 60;

/// xorshift64*: small, fast and deterministic, so every run benchmarks the same policy.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u32) -> u32 {
        (self.next() % u64::from(n)) as u32
    }

    pub fn chance(&mut self, per_mille: u64) -> bool {
        self.next() % 1000 < per_mille
    }
}

/// What the generator made, beside the YAML, so the benchmark can pick its subjects.
pub struct Generated {
    pub yaml: String,
    /// Per role: its catalog and the schema on which it grants USE_SCHEMA and SELECT_TABLE.
    pub role_home: Vec<(u32, u32)>,
    /// Per role: the schema on which it grants USE_SCHEMA and CREATE_TABLE only, if any.
    pub role_create_only: Vec<Option<u32>>,
    /// Per role: the tables `(schema, table)` of its home catalog it grants on.
    pub role_tables: Vec<Vec<(u32, u32)>>,
    /// Per user: direct roles, then groups.
    pub users: Vec<(Vec<u32>, Vec<u32>)>,
    pub groups: Vec<Vec<u32>>,
}

impl Generated {
    pub fn held(&self, user: u32) -> Vec<u32> {
        let (direct, groups) = &self.users[user as usize];
        let mut held = direct.clone();
        for g in groups {
            for r in &self.groups[*g as usize] {
                if !held.contains(r) {
                    held.push(*r);
                }
            }
        }
        held
    }
}

fn privilege(out: &mut String, name: &str, deny: bool) {
    let condition = if deny { "DENY" } else { "ALLOW" };
    write!(out, "{{name: {name}, condition: {condition}}}").unwrap();
}

/// A policy in the format of docs/design.md §3, in flow style so that writing it is quick.
///
/// Each role lives in one catalog: USE_CATALOG on it (1 grant); USE_SCHEMA + SELECT_TABLE on a
/// home schema (2); USE_SCHEMA + one of SELECT_TABLE, MODIFY_TABLE, CREATE_TABLE on a second
/// schema (2); SELECT_TABLE or MODIFY_TABLE on five tables of the catalog, 6% of them DENY (5).
/// Users hold five roles directly and one or two groups of three roles each. Owners: a group on
/// every tenth catalog, `owned_schemas` schemas, `owned_tables` tables owned by users.
pub fn generate(shape: &Shape) -> Generated {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut y = String::with_capacity(16 << 20);
    y.push_str("version: 1\nmetalake: lake\ndefault_catalog: c0\nrequire_known_user: true\n");

    let mut role_home = Vec::with_capacity(shape.roles as usize);
    let mut role_create_only = Vec::with_capacity(shape.roles as usize);
    let mut role_tables = Vec::with_capacity(shape.roles as usize);
    y.push_str("roles:\n");
    for r in 0..shape.roles {
        let c = rng.below(shape.catalogs);
        let home = rng.below(shape.schemas);
        let second = (home + 1 + rng.below(shape.schemas - 1)) % shape.schemas;
        write!(y, "- {{name: r{r}, securableObjects: [").unwrap();
        write!(y, "{{type: CATALOG, fullName: c{c}, privileges: [").unwrap();
        privilege(&mut y, "USE_CATALOG", false);
        write!(y, "]}}, {{type: SCHEMA, fullName: c{c}.s{home}, privileges: [").unwrap();
        privilege(&mut y, "USE_SCHEMA", false);
        y.push_str(", ");
        privilege(&mut y, "SELECT_TABLE", false);
        write!(y, "]}}, {{type: SCHEMA, fullName: c{c}.s{second}, privileges: [").unwrap();
        privilege(&mut y, "USE_SCHEMA", false);
        y.push_str(", ");
        let second_privilege = ["SELECT_TABLE", "MODIFY_TABLE", "CREATE_TABLE"][rng.below(3) as usize];
        privilege(&mut y, second_privilege, false);
        y.push_str("]}");
        role_home.push((c, home));
        role_create_only.push((second_privilege == "CREATE_TABLE").then_some(second));
        let mut tables: Vec<(u32, u32)> = Vec::with_capacity(5);
        while tables.len() < 5 {
            // Mostly in the role's own two schemas, sometimes elsewhere in its catalog.
            let s = match rng.below(4) {
                0 => home,
                1 => second,
                _ => rng.below(shape.schemas),
            };
            let t = (s, rng.below(shape.tables));
            if tables.contains(&t) {
                continue;
            }
            tables.push(t);
            let name = if rng.below(3) == 0 { "MODIFY_TABLE" } else { "SELECT_TABLE" };
            write!(y, ", {{type: TABLE, fullName: c{c}.s{}.t{}, privileges: [", t.0, t.1).unwrap();
            privilege(&mut y, name, rng.chance(TABLE_DENY_PER_MILLE));
            y.push_str("]}");
        }
        role_tables.push(tables);
        y.push_str("]}\n");
    }

    let mut groups = Vec::with_capacity(shape.groups as usize);
    y.push_str("groups:\n");
    for g in 0..shape.groups {
        let mut roles: Vec<u32> = Vec::with_capacity(shape.group_roles);
        while roles.len() < shape.group_roles {
            let r = rng.below(shape.roles);
            if !roles.contains(&r) {
                roles.push(r);
            }
        }
        let list: Vec<String> = roles.iter().map(|r| format!("r{r}")).collect();
        writeln!(y, "- {{name: g{g}, roles: [{}]}}", list.join(", ")).unwrap();
        groups.push(roles);
    }

    let mut users = Vec::with_capacity(shape.users as usize);
    y.push_str("users:\n");
    for u in 0..shape.users {
        let mut roles: Vec<u32> = Vec::with_capacity(shape.user_roles);
        while roles.len() < shape.user_roles {
            let r = rng.below(shape.roles);
            if !roles.contains(&r) {
                roles.push(r);
            }
        }
        let mut member: Vec<u32> = vec![rng.below(shape.groups)];
        if rng.below(2) == 0 {
            let g = rng.below(shape.groups);
            if !member.contains(&g) {
                member.push(g);
            }
        }
        let role_list: Vec<String> = roles.iter().map(|r| format!("r{r}")).collect();
        let group_list: Vec<String> = member.iter().map(|g| format!("g{g}")).collect();
        writeln!(y, "- {{name: u{u}, roles: [{}], groups: [{}]}}", role_list.join(", "), group_list.join(", "))
            .unwrap();
        users.push((roles, member));
    }

    y.push_str("owners:\n");
    for c in (0..shape.catalogs).step_by(10) {
        writeln!(y, "- {{type: CATALOG, fullName: c{c}, owner: g{c}, ownerType: GROUP}}").unwrap();
    }
    for i in 0..shape.owned_schemas {
        let (c, s) = (i % shape.catalogs, (i / shape.catalogs) * 10 + i % 10);
        writeln!(y, "- {{type: SCHEMA, fullName: c{c}.s{s}, owner: g{}, ownerType: GROUP}}", rng.below(shape.groups))
            .unwrap();
    }
    let mut owned_tables = HashSet::new();
    while owned_tables.len() < shape.owned_tables {
        let t = (rng.below(shape.catalogs), rng.below(shape.schemas), rng.below(shape.tables));
        if owned_tables.insert(t) {
            let u = rng.below(shape.users);
            writeln!(y, "- {{type: TABLE, fullName: c{}.s{}.t{}, owner: u{u}, ownerType: USER}}", t.0, t.1, t.2)
                .unwrap();
        }
    }
    Generated { yaml: y, role_home, role_create_only, role_tables, users, groups }
}

/// The same policy in JSON (which is YAML too), line for line but the braces: the generated
/// YAML's top-level keys become members, its flow-style entries objects with every bare
/// scalar quoted but numbers and booleans of the top level.
pub fn json(yaml: &str) -> String {
    let mut out = String::with_capacity(yaml.len() * 5 / 4);
    out.push('{');
    let mut in_list = false;
    let mut first_entry = false;
    let mut first_key = true;
    for line in yaml.lines() {
        if let Some(entry) = line.strip_prefix("- ") {
            out.push_str(if first_entry { "\n" } else { ",\n" });
            first_entry = false;
            quote_scalars(entry, &mut out);
            continue;
        }
        if in_list {
            out.push_str("\n]");
            in_list = false;
        }
        let (key, value) = line.split_once(':').unwrap();
        let value = value.trim();
        out.push_str(if first_key { "\n" } else { ",\n" });
        first_key = false;
        if value.is_empty() {
            write!(out, "\"{key}\": [").unwrap();
            in_list = true;
            first_entry = true;
        } else if value.parse::<u64>().is_ok() || value == "true" || value == "false" {
            write!(out, "\"{key}\": {value}").unwrap();
        } else {
            write!(out, "\"{key}\": \"{value}\"").unwrap();
        }
    }
    if in_list {
        out.push_str("\n]");
    }
    out.push_str("\n}\n");
    out
}

/// A flow-style entry of the generated YAML with its bare scalars (names, kinds, full names)
/// in quotes.
fn quote_scalars(flow: &str, out: &mut String) {
    let mut word = String::new();
    for ch in flow.chars() {
        if matches!(ch, '{' | '}' | '[' | ']' | ',' | ':' | ' ') {
            if !word.is_empty() {
                write!(out, "\"{word}\"").unwrap();
                word.clear();
            }
            out.push(ch);
        } else {
            word.push(ch);
        }
    }
    if !word.is_empty() {
        write!(out, "\"{word}\"").unwrap();
    }
}
