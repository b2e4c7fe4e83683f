//! icegate's decision engine beside cedar-policy, on the same policy and the same loadTable checks,
//! measured in the same run: the generated policy of `benches/common/policy_gen.rs` (10,000 roles,
//! 10,000 users, 1,000 groups, 100,000 grants over 100 catalogs × 100 schemas × 50 tables, with
//! owners), loaded by icegate and translated to Cedar in Cedar's own style — grants as entity
//! relationships and nine fixed policies, not a policy per grant.
//!
//! First it checks that both engines agree on a deterministic sample of 4,000 unnarrowed
//! loadTable requests (`agreement: N of M`, with the first disagreements in detail), then it times
//! one allowed and one denied loadTable in each engine (median of batches), and prints both
//! engines' load time and the process RSS after each load.
//!
//! Run from the repository root with `cargo bench --manifest-path benches/cedar/Cargo.toml`.
//! This is a workspace of its own, so the root crate's builds never compile cedar-policy.
//!
//! # The Cedar model
//!
//! Entities: `User` (parents: its direct `Role`s and its `Group`s), `Group` (parents: its
//! `Role`s), `Role`, `Metalake`, `Catalog` (parent `Metalake`), `Schema` (parent `Catalog`) and
//! `Table` (parent `Schema`). Each securable object carries, for the four privileges loadTable
//! reads and where each is grantable, the roles that ALLOW and that DENY it (`use_catalog_allow:
//! Set<Role>`, `select_table_deny`, …; only non-empty sets are stored), and its `owner` (a `User`
//! or a `Group`). Cedar's entity hierarchy gives `principal in Role::"r"` for every role held
//! directly or through a group, and `principal in Group::"g"` for membership.
//!
//! A request is `User::"u"`, `Action::"loadTable"`, `Table::"c.s.t"`, with the catalog and the
//! schema of the path in the context (`context.catalog`, `context.schema`), as icegate takes them
//! from the path: a table the policy never mentions has no entity, and Cedar could not reach its
//! schema through it.
//!
//! The policies follow loadTable's rule (docs/design.md §4, `Rule::TableRead` in src/policy/rules.rs):
//! `TOP ∨ SOUC ∨ UCS ∧ (own(table) ∨ SELECT_TABLE@ ∨ MODIFY_TABLE@)`, one `permit` per clause
//! (the two TOP clauses share one), and DENY as four `forbid`s, one per privilege. icegate's DENY
//! is per privilege term, not per request, and ownership ignores it, so each `forbid` carries an
//! `unless` for the clauses its DENY cannot remove: a DENY of USE_CATALOG leaves TOP; of
//! USE_SCHEMA, TOP and SOUC; of SELECT_TABLE, every clause but SELECT's — owners, and
//! MODIFY_TABLE held and not denied (and the reverse for a DENY of MODIFY_TABLE). A plain
//! `forbid` per DENY would deny what icegate allows through the other privilege or ownership.
//! The generated policy's DENYs are all SELECT_TABLE or MODIFY_TABLE on tables, so the sample
//! exercises the last two `forbid`s; the USE_CATALOG and USE_SCHEMA ones follow the same argument.
//!
//! Not modelled, and reported when the policy uses them: nested namespaces (Cedar has no
//! recursion over a schema chain), disabled users and operator-set narrowing; requests are
//! unnarrowed (every held role active, ownership on, no identity groups), and a denial is only
//! a denial (icegate's 403-or-404 existence check has no Cedar counterpart here).

use cedar_policy::{
    Authorizer, Context, Decision, Entities, Entity, EntityId, EntityTypeName, EntityUid, Policy, PolicyId, PolicySet,
    Request as CedarRequest, Response, RestrictedExpression,
};
use icegate::core::iceberg::{Namespace, OperationId};
use icegate::core::policy::Snapshot;
use icegate::core::policy::authorize::{Decision as IcegateDecision, Reason, Request, Verdict, authorize_path};
use icegate::core::policy::load::{Source, build, parse};
use icegate::core::policy::rules::Rule;
use icegate::core::roles::{ActiveRoles, Narrowed, OwnershipMode, Principal, check_user, narrow};
use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use std::hint::black_box;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::{Duration, Instant};

#[path = "../../common/policy_gen.rs"]
mod policy_gen;
use policy_gen::{Generated, Rng, Shape, generate};

const SHAPE: Shape = Shape::STANDARD;
/// Requests per kind in the agreement sample (8 kinds).
const SAMPLE_PER_KIND: usize = 500;
/// Disagreements printed in detail.
const SHOW_DISAGREEMENTS: usize = 5;
/// Clause 4 of loadTable's rule is `USE_CATALOG@ ∧ USE_SCHEMA@ ∧ SELECT_TABLE@` (as decision.rs).
const SELECT_CLAUSE: usize = 4;
/// The figure of the issue this benchmark is read against.
const TARGET: &str = "target: icegate at most 1/50 of what cedar-policy takes for the same checks, i.e. ratio ≥ 50 \
     (seen before: cedar-policy 4.14 ~47 µs per loadTable with grants as entity relationships and 8 policies)";

// ---------------------------------------------------------------------------------------------
// The policy file, read again on the Cedar side with a reader of its own (docs/design.md §3), so that
// the translation does not go through icegate's loader and cannot inherit a mistake of it.

#[derive(Deserialize)]
struct File {
    metalake: String,
    #[serde(default)]
    users: Vec<User>,
    #[serde(default)]
    groups: Vec<Group>,
    #[serde(default)]
    roles: Vec<Role>,
    #[serde(default)]
    owners: Vec<Owner>,
}

#[derive(Deserialize)]
struct User {
    name: String,
    #[serde(default)]
    roles: Vec<String>,
    #[serde(default)]
    groups: Vec<String>,
    enabled: Option<bool>,
    default_active_roles: Option<Vec<String>>,
    max_active_roles: Option<Vec<String>>,
    #[serde(default)]
    blocked_roles: Vec<String>,
}

#[derive(Deserialize)]
struct Group {
    name: String,
    #[serde(default)]
    roles: Vec<String>,
    default_active_roles: Option<Vec<String>>,
    max_active_roles: Option<Vec<String>>,
    #[serde(default)]
    blocked_roles: Vec<String>,
}

#[derive(Deserialize)]
struct Role {
    name: String,
    #[serde(rename = "securableObjects", default)]
    securable_objects: Vec<Securable>,
}

#[derive(Deserialize)]
struct Securable {
    #[serde(rename = "type")]
    kind: String,
    #[serde(rename = "fullName")]
    full_name: String,
    #[serde(default)]
    privileges: Vec<Privilege>,
}

#[derive(Deserialize)]
struct Privilege {
    name: String,
    condition: String,
}

#[derive(Deserialize)]
struct Owner {
    #[serde(rename = "type")]
    kind: String,
    #[serde(rename = "fullName")]
    full_name: String,
    owner: String,
    #[serde(rename = "ownerType")]
    owner_type: String,
}

fn read_policy(text: &str) -> Result<File, String> {
    // The parser's default budget is far below a 100,000-grant policy; icegate's loader scales it
    // with the text the same way.
    let mut options = serde_saphyr::Options::default();
    let mut budget = serde_saphyr::Budget::default();
    let scale = text.len().saturating_mul(4).saturating_add(10_000);
    budget.max_nodes = budget.max_nodes.max(scale);
    budget.max_events = budget.max_events.max(scale);
    budget.max_total_scalar_bytes = budget.max_total_scalar_bytes.max(text.len().saturating_mul(2));
    options.budget = Some(budget);
    serde_saphyr::from_str_with_options::<File>(text, options).map_err(|e| e.to_string())
}

// ---------------------------------------------------------------------------------------------
// Translation to Cedar entities and policies.

/// The privileges loadTable reads, as attribute stems, and the object kinds each is grantable on.
const PRIVILEGES: [&str; 4] = ["use_catalog", "use_schema", "select_table", "modify_table"];

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Kind {
    Metalake,
    Catalog,
    Schema,
    Table,
}

/// One securable object as Cedar will hold it.
#[derive(Default)]
struct Object {
    parent: Option<EntityUid>,
    /// Per privilege of [`PRIVILEGES`]: the roles that ALLOW it, then those that DENY it.
    roles: [[Vec<EntityUid>; 2]; 4],
    owner: Option<EntityUid>,
}

/// What the translation left out or could not express; printed so that a policy other than the
/// generated one does not silently get a different meaning in Cedar.
#[derive(Default, Debug)]
struct Unsupported {
    /// Grants of privileges loadTable never reads, or on objects it never reaches (views, …).
    ignored_grants: usize,
    ignored_owners: usize,
    /// Nested namespaces: Cedar has no recursion, so a schema chain would need one term per level.
    nested_schemas: usize,
    /// Disabled users and operator-set narrowing (docs/design.md §5) change unnarrowed requests too.
    disabled_users: usize,
    narrowing_settings: usize,
    /// DENY grants per privilege of [`PRIVILEGES`]: which `forbid`s the policy exercises at all.
    denies: [usize; 4],
}

impl Unsupported {
    fn is_empty(&self) -> bool {
        self.nested_schemas == 0 && self.disabled_users == 0 && self.narrowing_settings == 0
    }
}

/// The entity type names, parsed once, as a policy enforcement point would keep them.
struct Types {
    user: EntityTypeName,
    group: EntityTypeName,
    role: EntityTypeName,
    table: EntityTypeName,
    schema: EntityTypeName,
    catalog: EntityTypeName,
    metalake: EntityTypeName,
    load_table: EntityUid,
}

impl Types {
    fn new() -> Self {
        let name = |n: &str| EntityTypeName::from_str(n).expect("a valid entity type name");
        Self {
            user: name("User"),
            group: name("Group"),
            role: name("Role"),
            table: name("Table"),
            schema: name("Schema"),
            catalog: name("Catalog"),
            metalake: name("Metalake"),
            load_table: EntityUid::from_str(r#"Action::"loadTable""#).expect("a valid action"),
        }
    }

    fn of(&self, kind: Kind) -> &EntityTypeName {
        match kind {
            Kind::Metalake => &self.metalake,
            Kind::Catalog => &self.catalog,
            Kind::Schema => &self.schema,
            Kind::Table => &self.table,
        }
    }

    fn uid(&self, ty: &EntityTypeName, id: &str) -> EntityUid {
        EntityUid::from_type_name_and_id(ty.clone(), EntityId::new(id))
    }

    /// The per-request work of a Cedar enforcement point: the request from the names in the path.
    fn load_table(&self, user: &str, catalog: &str, schema: &str, table: &str) -> CedarRequest {
        let schema_name = format!("{catalog}.{schema}");
        let resource = self.uid(&self.table, &format!("{schema_name}.{table}"));
        let context = Context::from_pairs([
            ("catalog".to_owned(), RestrictedExpression::new_entity_uid(self.uid(&self.catalog, catalog))),
            ("schema".to_owned(), RestrictedExpression::new_entity_uid(self.uid(&self.schema, &schema_name))),
        ])
        .expect("a context of two entity references");
        CedarRequest::new(self.uid(&self.user, user), self.load_table.clone(), resource, context, None)
            .expect("a request without a schema to validate against")
    }
}

/// The Cedar side, built once.
struct Cedar {
    entities: Entities,
    policies: PolicySet,
    authorizer: Authorizer,
    stats: String,
}

/// The objects of a full name of `kind`, outermost first, as icegate's tree would hold them.
fn object_chain(
    metalake: &str,
    kind: &str,
    full_name: &str,
    unsupported: &mut Unsupported,
) -> Option<Vec<(Kind, String)>> {
    let mut chain = vec![(Kind::Metalake, metalake.to_owned())];
    match kind.to_ascii_uppercase().as_str() {
        "METALAKE" => {}
        "CATALOG" => chain.push((Kind::Catalog, full_name.to_owned())),
        "SCHEMA" | "TABLE" => {
            let mut parts = full_name.splitn(3, '.');
            let (Some(c), Some(s)) = (parts.next(), parts.next()) else { return None };
            if s.contains(':') {
                unsupported.nested_schemas += 1;
            }
            chain.push((Kind::Catalog, c.to_owned()));
            chain.push((Kind::Schema, format!("{c}.{s}")));
            if kind.eq_ignore_ascii_case("TABLE") {
                chain.push((Kind::Table, full_name.to_owned()));
            }
        }
        _ => return None,
    }
    Some(chain)
}

/// The object at the end of `chain`, creating its ancestors as icegate's tree does.
fn object<'o>(
    types: &Types,
    objects: &'o mut HashMap<(Kind, String), Object>,
    chain: &[(Kind, String)],
) -> &'o mut Object {
    let mut parent: Option<EntityUid> = None;
    for (kind, name) in chain {
        let o = objects.entry((*kind, name.clone())).or_default();
        o.parent = parent.clone();
        parent = Some(types.uid(types.of(*kind), name));
    }
    let last = chain.last().expect("a chain starts at the metalake");
    objects.get_mut(&(last.0, last.1.clone())).expect("inserted above")
}

fn set(uids: &[EntityUid]) -> RestrictedExpression {
    RestrictedExpression::new_set(uids.iter().cloned().map(RestrictedExpression::new_entity_uid))
}

fn build_entities(types: &Types, file: &File, unsupported: &mut Unsupported) -> Result<Vec<Entity>, String> {
    let mut objects: HashMap<(Kind, String), Object> = HashMap::new();
    // The metalake always exists: the policies name it.
    object(types, &mut objects, &[(Kind::Metalake, file.metalake.clone())]);
    for role in &file.roles {
        let role_uid = types.uid(&types.role, &role.name);
        for so in &role.securable_objects {
            let Some(chain) = object_chain(&file.metalake, &so.kind, &so.full_name, unsupported) else {
                unsupported.ignored_grants += so.privileges.len();
                continue;
            };
            let o = object(types, &mut objects, &chain);
            for p in &so.privileges {
                let Some(i) = PRIVILEGES.iter().position(|n| n.eq_ignore_ascii_case(&p.name)) else {
                    unsupported.ignored_grants += 1;
                    continue;
                };
                let deny = p.condition.eq_ignore_ascii_case("DENY");
                unsupported.denies[i] += usize::from(deny);
                o.roles[i][usize::from(deny)].push(role_uid.clone());
            }
        }
    }
    for owner in &file.owners {
        let Some(chain) = object_chain(&file.metalake, &owner.kind, &owner.full_name, unsupported) else {
            unsupported.ignored_owners += 1;
            continue;
        };
        let ty = if owner.owner_type.eq_ignore_ascii_case("USER") { &types.user } else { &types.group };
        object(types, &mut objects, &chain).owner = Some(types.uid(ty, &owner.owner));
    }

    let mut entities = Vec::with_capacity(file.users.len() + file.groups.len() + file.roles.len() + objects.len());
    for role in &file.roles {
        entities.push(Entity::new_no_attrs(types.uid(&types.role, &role.name), HashSet::new()));
    }
    for g in &file.groups {
        if g.default_active_roles.is_some() || g.max_active_roles.is_some() || !g.blocked_roles.is_empty() {
            unsupported.narrowing_settings += 1;
        }
        let parents = g.roles.iter().map(|r| types.uid(&types.role, r)).collect();
        entities.push(Entity::new_no_attrs(types.uid(&types.group, &g.name), parents));
    }
    for u in &file.users {
        if u.enabled == Some(false) {
            unsupported.disabled_users += 1;
        }
        if u.default_active_roles.is_some() || u.max_active_roles.is_some() || !u.blocked_roles.is_empty() {
            unsupported.narrowing_settings += 1;
        }
        let parents = u
            .roles
            .iter()
            .map(|r| types.uid(&types.role, r))
            .chain(u.groups.iter().map(|g| types.uid(&types.group, g)))
            .collect();
        entities.push(Entity::new_no_attrs(types.uid(&types.user, &u.name), parents));
    }
    for ((kind, name), o) in objects {
        let mut attrs = HashMap::new();
        for (i, stem) in PRIVILEGES.iter().enumerate() {
            for (condition, roles) in ["allow", "deny"].iter().zip(&o.roles[i]) {
                if !roles.is_empty() {
                    attrs.insert(format!("{stem}_{condition}"), set(roles));
                }
            }
        }
        if let Some(owner) = o.owner {
            attrs.insert("owner".to_owned(), RestrictedExpression::new_entity_uid(owner));
        }
        let entity = Entity::new(types.uid(types.of(kind), &name), attrs, o.parent.into_iter().collect())
            .map_err(|e| format!("entity {kind:?} {name}: {e}"))?;
        entities.push(entity);
    }
    Ok(entities)
}

/// `principal in X.attr` for any `X` of `scopes`, each guarded by `has`: a catalog, schema or
/// table the policy never mentions has no entity, and a missing attribute is an empty set.
fn any_in(scopes: &[&str], attr: &str) -> String {
    let terms: Vec<String> = scopes.iter().map(|x| format!("({x} has {attr} && principal in {x}.{attr})")).collect();
    format!("({})", terms.join(" || "))
}

/// The nine policies of loadTable, named, in Cedar's text.
fn policies_text(metalake: &EntityUid) -> Vec<(&'static str, String)> {
    let m = metalake.to_string();
    let (c, s, t) = ("context.catalog", "context.schema", "resource");
    let own = |x: &str| any_in(&[x], "owner");
    // `P@`'s scopes: USE_CATALOG over {metalake, catalog}; USE_SCHEMA adds the schema; the table
    // privileges add the table (docs/design.md §4).
    let scopes = |privilege: &str| -> Vec<&str> {
        match privilege {
            "use_catalog" => vec![&m, c],
            "use_schema" => vec![&m, c, s],
            _ => vec![&m, c, s, t],
        }
    };
    let allow = |p: &str| any_in(&scopes(p), &format!("{p}_allow"));
    let deny = |p: &str| any_in(&scopes(p), &format!("{p}_deny"));
    let top = format!("{} || {}", own(&m), own(c));
    let owners = format!("{top} || {} || {}", own(s), own(t));
    let (uc, us) = (allow("use_catalog"), allow("use_schema"));
    let head =
        |effect: &str| format!(r#"{effect}(principal is User, action == Action::"loadTable", resource is Table)"#);
    let permit = head("permit");
    let forbid = head("forbid");
    vec![
        ("top-owner", format!("{permit} when {{ {top} }};")),
        ("schema-owner", format!("{permit} when {{ {} && {uc} }};", own(s))),
        ("table-owner", format!("{permit} when {{ {uc} && {us} && {} }};", own(t))),
        ("select-table", format!("{permit} when {{ {uc} && {us} && {} }};", allow("select_table"))),
        ("modify-table", format!("{permit} when {{ {uc} && {us} && {} }};", allow("modify_table"))),
        ("deny-use-catalog", format!("{forbid} when {{ {} }} unless {{ {top} }};", deny("use_catalog"))),
        ("deny-use-schema", format!("{forbid} when {{ {} }} unless {{ {top} || {} }};", deny("use_schema"), own(s))),
        (
            "deny-select-table",
            format!(
                "{forbid} when {{ {} }} unless {{ {owners} || {} && !{} }};",
                deny("select_table"),
                allow("modify_table"),
                deny("modify_table")
            ),
        ),
        (
            "deny-modify-table",
            format!(
                "{forbid} when {{ {} }} unless {{ {owners} || {} && !{} }};",
                deny("modify_table"),
                allow("select_table"),
                deny("select_table")
            ),
        ),
    ]
}

/// Timings of the Cedar build, for the printed figures.
struct CedarBuild {
    read: Duration,
    translate: Duration,
    entities: Duration,
    policies: Duration,
}

fn build_cedar(types: &Types, text: &str) -> Result<(Cedar, Unsupported, CedarBuild), String> {
    let start = Instant::now();
    let file = read_policy(text)?;
    let read = start.elapsed();
    let mut unsupported = Unsupported::default();
    let start = Instant::now();
    let list = build_entities(types, &file, &mut unsupported)?;
    let translate = start.elapsed();
    let count = list.len();
    let start = Instant::now();
    // Computes the transitive closure of the hierarchy: every user's roles through its groups.
    let entities = Entities::from_entities(list, None).map_err(|e| e.to_string())?;
    let entities_time = start.elapsed();
    let start = Instant::now();
    let mut policies = PolicySet::new();
    let metalake = types.uid(&types.metalake, &file.metalake);
    for (id, src) in policies_text(&metalake) {
        let policy = Policy::parse(Some(PolicyId::new(id)), &src).map_err(|e| format!("policy {id}: {e}"))?;
        policies.add(policy).map_err(|e| e.to_string())?;
    }
    let policies_time = start.elapsed();
    let stats = format!("{count} entities, {} policies", policies.policies().count());
    drop(file);
    let cedar = Cedar { entities, policies, authorizer: Authorizer::new(), stats };
    Ok((cedar, unsupported, CedarBuild { read, translate, entities: entities_time, policies: policies_time }))
}

impl Cedar {
    fn decide(&self, request: &CedarRequest) -> Response {
        self.authorizer.is_authorized(request, &self.policies, &self.entities)
    }
}

// ---------------------------------------------------------------------------------------------
// icegate's side, as benches/decision.rs drives it.

fn ns(name: &str) -> Namespace {
    Namespace::new(vec![name.to_owned()], &[]).expect("a valid namespace")
}

fn narrowed(snap: &Snapshot, user: &str) -> Narrowed {
    let principal = Principal { user: user.to_owned(), ..Principal::default() };
    let id = check_user(snap, &principal).expect("a known, enabled user");
    narrow(snap, &principal, id, &ActiveRoles::DEFAULT, OwnershipMode::Always).expect("no header to refuse")
}

fn load_table<'a>(catalog: &'a str, schema: &'a Namespace, table: &'a str) -> Request<'a> {
    Request { op: OperationId::LoadTable, catalog, namespace: Some(schema), name: Some(table), parent: None }
}

/// The clause of loadTable's rule that allowed, if any.
fn clause(decision: &IcegateDecision<'_>) -> Option<usize> {
    match &decision.reason {
        Reason::Checks(done) => done.first().and_then(|c| c.eval.clause),
        _ => None,
    }
}

fn icegate_load_table(
    snap: &Snapshot,
    user: &str,
    catalog: &str,
    schema: &str,
    table: &str,
) -> (Verdict, Option<usize>) {
    let n = narrowed(snap, user);
    let schema = ns(schema);
    let d = authorize_path(snap, &n.subject(user), &load_table(catalog, &schema, table));
    (d.verdict, if d.verdict == Verdict::Allow { clause(&d) } else { None })
}

// ---------------------------------------------------------------------------------------------
// The agreement sample.

/// One loadTable request of the sample.
struct Case {
    kind: &'static str,
    user: String,
    catalog: String,
    schema: String,
    table: String,
}

const KINDS: [&str; 8] = [
    "granted table of a held role",
    "any table of a held role's home schema",
    "any table of a held role's catalog",
    "any table anywhere",
    "table owned by the user",
    "table of a schema owned by the user's group",
    "table of a catalog owned by the user's group",
    "table with a DENY grant, user holding that role",
];

/// Deterministic requests of eight kinds, so that allowed and denied, ownership and DENY all
/// come up often; the names come from the policy file, not from icegate.
fn sample(generated: &Generated, text: &str) -> Vec<Case> {
    let file = read_policy(text).expect("the generated policy reads");
    let role_index: HashMap<&str, usize> = file.roles.iter().enumerate().map(|(i, r)| (r.name.as_str(), i)).collect();
    let group_index: HashMap<&str, usize> = file.groups.iter().enumerate().map(|(i, g)| (g.name.as_str(), i)).collect();
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); file.groups.len()];
    let mut holders: Vec<Vec<usize>> = vec![Vec::new(); file.roles.len()];
    for (u, user) in file.users.iter().enumerate() {
        let mut held: Vec<usize> = user.roles.iter().map(|r| role_index[r.as_str()]).collect();
        for g in &user.groups {
            let g = group_index[g.as_str()];
            members[g].push(u);
            held.extend(file.groups[g].roles.iter().map(|r| role_index[r.as_str()]));
        }
        held.sort_unstable();
        held.dedup();
        for r in held {
            holders[r].push(u);
        }
    }
    let split = |full: &str| -> Vec<String> { full.splitn(3, '.').map(str::to_owned).collect() };
    let owned = |kind: &str| -> Vec<&Owner> { file.owners.iter().filter(|o| o.kind == kind).collect() };
    let (owned_tables, owned_schemas, owned_catalogs) = (owned("TABLE"), owned("SCHEMA"), owned("CATALOG"));
    let denied: Vec<(usize, String)> = file
        .roles
        .iter()
        .enumerate()
        .flat_map(|(r, role)| {
            role.securable_objects
                .iter()
                .filter(|so| so.kind == "TABLE" && so.privileges.iter().any(|p| p.condition == "DENY"))
                .map(move |so| (r, so.full_name.clone()))
        })
        .collect();

    let mut rng = Rng(0x5eed_ceda_0000_0001);
    let mut cases = Vec::with_capacity(KINDS.len() * SAMPLE_PER_KIND);
    let user_name = |u: usize| file.users[u].name.clone();
    for (k, kind) in KINDS.iter().enumerate() {
        let mut made = 0;
        while made < SAMPLE_PER_KIND {
            let u = rng.below(SHAPE.users) as usize;
            let held = generated.held(u as u32);
            let r = held[rng.below(held.len() as u32) as usize] as usize;
            let (c, home) = generated.role_home[r];
            let t = rng.below(SHAPE.tables);
            let case = match k {
                0 => {
                    let (s, t) = generated.role_tables[r][rng.below(5) as usize];
                    Some((user_name(u), format!("c{c}"), format!("s{s}"), format!("t{t}")))
                }
                1 => Some((user_name(u), format!("c{c}"), format!("s{home}"), format!("t{t}"))),
                2 => Some((user_name(u), format!("c{c}"), format!("s{}", rng.below(SHAPE.schemas)), format!("t{t}"))),
                3 => Some((
                    user_name(u),
                    format!("c{}", rng.below(SHAPE.catalogs)),
                    format!("s{}", rng.below(SHAPE.schemas)),
                    format!("t{t}"),
                )),
                4 => {
                    let o = owned_tables[rng.below(owned_tables.len() as u32) as usize];
                    let p = split(&o.full_name);
                    Some((o.owner.clone(), p[0].clone(), p[1].clone(), p[2].clone()))
                }
                5 | 6 => {
                    let list = if k == 5 { &owned_schemas } else { &owned_catalogs };
                    let o = list[rng.below(list.len() as u32) as usize];
                    let in_group = group_index.get(o.owner.as_str()).map(|g| &members[*g]).filter(|m| !m.is_empty());
                    in_group.map(|m| {
                        let p = split(&o.full_name);
                        let s = if k == 5 { p[1].clone() } else { format!("s{}", rng.below(SHAPE.schemas)) };
                        (user_name(m[rng.below(m.len() as u32) as usize]), p[0].clone(), s, format!("t{t}"))
                    })
                }
                _ => {
                    let (r, table) = &denied[rng.below(denied.len() as u32) as usize];
                    let h = &holders[*r];
                    let p = split(table);
                    (!h.is_empty()).then(|| {
                        (user_name(h[rng.below(h.len() as u32) as usize]), p[0].clone(), p[1].clone(), p[2].clone())
                    })
                }
            };
            if let Some((user, catalog, schema, table)) = case {
                cases.push(Case { kind, user, catalog, schema, table });
                made += 1;
            }
        }
    }
    cases
}

fn check_agreement(snap: &Snapshot, cedar: &Cedar, types: &Types, cases: &[Case]) -> (usize, usize) {
    let clauses = Rule::TableRead.text();
    let mut agree = 0;
    let mut shown = 0;
    let mut errors = 0;
    // Per kind: requests, agreements, allowed by icegate.
    let mut per_kind: Vec<(usize, usize, usize)> = vec![(0, 0, 0); KINDS.len()];
    let mut allowed_by_clause = [0usize; 6];
    for case in cases {
        let k = KINDS.iter().position(|k| *k == case.kind).expect("a known kind");
        let (verdict, clause) = icegate_load_table(snap, &case.user, &case.catalog, &case.schema, &case.table);
        let response = cedar.decide(&types.load_table(&case.user, &case.catalog, &case.schema, &case.table));
        let icegate_allows = verdict == Verdict::Allow;
        let cedar_allows = response.decision() == Decision::Allow;
        errors += response.diagnostics().errors().count();
        per_kind[k].0 += 1;
        if icegate_allows {
            per_kind[k].2 += 1;
            if let Some(c) = clause {
                allowed_by_clause[c] += 1;
            }
        }
        if icegate_allows == cedar_allows {
            agree += 1;
            per_kind[k].1 += 1;
        } else if shown < SHOW_DISAGREEMENTS {
            shown += 1;
            let reasons: Vec<String> = response.diagnostics().reason().map(ToString::to_string).collect();
            let errs: Vec<String> = response.diagnostics().errors().map(ToString::to_string).collect();
            println!(
                "  DISAGREEMENT ({}): user `{}` loadTable {}.{}.{}: icegate {verdict:?} (clause {clause:?} of `{clauses}`), \
                 cedar {:?} (policies {reasons:?}, errors {errs:?})",
                case.kind,
                case.user,
                case.catalog,
                case.schema,
                case.table,
                response.decision()
            );
        }
    }
    println!("agreement by kind of request (agree / requests, allowed by icegate):");
    for (kind, (n, a, allowed)) in KINDS.iter().zip(&per_kind) {
        println!("  {kind}: {a} / {n}, {allowed} allowed");
    }
    println!(
        "icegate's allowing clause (TOP metalake, TOP catalog, SOUC, UCS∧own(table), UCS∧SELECT, UCS∧MODIFY): {allowed_by_clause:?}"
    );
    println!("cedar evaluation errors in the sample: {errors}");
    (agree, cases.len())
}

// ---------------------------------------------------------------------------------------------
// Measuring.

/// Resident set size, from `/proc/self/statm` (pages × 4096).
fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()).unwrap_or(0) * 4096
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Median time per call of `f`: `batches` batches of `iters` calls (as benches/decision.rs).
fn median_per_call(mut f: impl FnMut(), iters: u32, batches: usize) -> Duration {
    let mut times: Vec<Duration> = (0..batches)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iters {
                f();
            }
            start.elapsed() / iters
        })
        .collect();
    times.sort_unstable();
    times[times.len() / 2]
}

fn fmt_duration(d: Duration) -> String {
    let ns = d.as_secs_f64() * 1e9;
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.1} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn ratio(cedar: Duration, icegate: Duration) -> f64 {
    cedar.as_secs_f64() / icegate.as_secs_f64().max(1e-12)
}

/// The allowed and denied loadTable subjects of benches/decision.rs, found the same way: the first
/// user allowed through SELECT_TABLE (not ownership) on a granted table of a held role's home
/// schema, and the first user denied it that holds a role in its catalog.
fn find_subjects(snap: &Snapshot, generated: &Generated) -> (String, String, String, String, String) {
    let mut found = None;
    'users: for u in 0..SHAPE.users {
        let user = format!("u{u}");
        for r in generated.held(u) {
            let (c, s) = generated.role_home[r as usize];
            for (ts, t) in &generated.role_tables[r as usize] {
                if *ts != s {
                    continue;
                }
                let (catalog, schema, table) = (format!("c{c}"), format!("s{s}"), format!("t{t}"));
                if icegate_load_table(snap, &user, &catalog, &schema, &table) == (Verdict::Allow, Some(SELECT_CLAUSE)) {
                    found = Some((user, c, catalog, schema, table));
                    break 'users;
                }
            }
        }
    }
    let (allowed, c, catalog, schema, table) = found.expect("no allowed loadTable in the policy");
    let mut any_denied = None;
    let mut denied = None;
    for u in 0..SHAPE.users {
        let user = format!("u{u}");
        if icegate_load_table(snap, &user, &catalog, &schema, &table).0 == Verdict::Allow {
            continue;
        }
        any_denied.get_or_insert_with(|| user.clone());
        if generated.held(u).iter().any(|r| generated.role_home[*r as usize].0 == c) {
            denied = Some(user);
            break;
        }
    }
    let denied = denied.or(any_denied).expect("no denied loadTable in the policy");
    (allowed, denied, catalog, schema, table)
}

fn main() {
    let generated = generate(&SHAPE);
    let sources = vec![Source { path: PathBuf::from("generated.yaml"), text: generated.yaml.clone() }];
    println!(
        "policy: {} roles, {} users, {} groups, {} grants, {:.1} MB of YAML (benches/common/policy_gen.rs, Shape::STANDARD)",
        SHAPE.roles,
        SHAPE.users,
        SHAPE.groups,
        SHAPE.grants(),
        mb(generated.yaml.len() as u64)
    );

    // icegate first, then Cedar, each load followed by the process's RSS. The deltas are upper
    // bounds of what each keeps: heap freed after parsing that the allocator kept counts too.
    let rss_start = rss_bytes();
    let start = Instant::now();
    let parsed = parse(&sources).expect("icegate parses the generated policy");
    let icegate_parse = start.elapsed();
    let start = Instant::now();
    let loaded = build(parsed).expect("icegate loads the generated policy");
    let icegate_build = start.elapsed();
    drop(sources);
    let rss_icegate = rss_bytes();
    let snap = &loaded.snapshot;
    println!(
        "icegate load: parse {} + build {} = {}; snapshot: {}; RSS after {:.1} MB (+{:.1} MB)",
        fmt_duration(icegate_parse),
        fmt_duration(icegate_build),
        fmt_duration(icegate_parse + icegate_build),
        snap.stats(),
        mb(rss_icegate),
        mb(rss_icegate.saturating_sub(rss_start))
    );

    let types = Types::new();
    let (cedar, unsupported, times) = build_cedar(&types, &generated.yaml).expect("the Cedar translation builds");
    let rss_cedar = rss_bytes();
    let cedar_build = times.translate + times.entities + times.policies;
    println!(
        "cedar build: read YAML {} + translate {} + Entities::from_entities {} + PolicySet {} = {} ({} without reading); \
         {}; RSS after {:.1} MB (+{:.1} MB)",
        fmt_duration(times.read),
        fmt_duration(times.translate),
        fmt_duration(times.entities),
        fmt_duration(times.policies),
        fmt_duration(times.read + cedar_build),
        fmt_duration(cedar_build),
        cedar.stats,
        mb(rss_cedar),
        mb(rss_cedar.saturating_sub(rss_icegate))
    );
    println!(
        "translation: {} grants and {} owners ignored (not read by loadTable); DENY grants of {PRIVILEGES:?}: {:?}{}",
        unsupported.ignored_grants,
        unsupported.ignored_owners,
        unsupported.denies,
        if unsupported.is_empty() {
            String::new()
        } else {
            format!("; NOT EXPRESSED in the Cedar model, decisions may differ: {unsupported:?}")
        }
    );

    // Correctness before timing.
    let cases = sample(&generated, &generated.yaml);
    let (agree, total) = check_agreement(snap, &cedar, &types, &cases);
    println!("agreement: {agree} of {total}");

    let (allowed_user, denied_user, catalog, schema, table) = find_subjects(snap, &generated);
    println!("subjects: allowed `{allowed_user}` and denied `{denied_user}` on loadTable {catalog}.{schema}.{table}");
    let namespace = ns(&schema);
    let req = load_table(&catalog, &namespace, &table);
    let allowed = narrowed(snap, &allowed_user);
    let allowed_subject = allowed.subject(&allowed_user);
    let denied = narrowed(snap, &denied_user);
    let denied_subject = denied.subject(&denied_user);
    assert!(authorize_path(snap, &allowed_subject, &req).is_allowed());
    let denied_decision = authorize_path(snap, &denied_subject, &req);
    assert!(!denied_decision.is_allowed());
    let allowed_request = types.load_table(&allowed_user, &catalog, &schema, &table);
    let denied_request = types.load_table(&denied_user, &catalog, &schema, &table);
    assert_eq!(cedar.decide(&allowed_request).decision(), Decision::Allow, "cedar disagrees on the allowed subject");
    assert_eq!(cedar.decide(&denied_request).decision(), Decision::Deny, "cedar disagrees on the denied subject");

    // icegate's per-request work from a prebuilt subject and request, as benches/decision.rs
    // times it; a denial also runs the existence check behind loadTable's 403-or-404.
    let icegate_allowed = median_per_call(
        || drop(black_box(authorize_path(snap, black_box(&allowed_subject), black_box(&req)))),
        10_000,
        51,
    );
    let icegate_denied = median_per_call(
        || drop(black_box(authorize_path(snap, black_box(&denied_subject), black_box(&req)))),
        10_000,
        51,
    );
    // icegate from the user's name: user check and narrowing too (Cedar resolves a user's roles
    // once, when it builds the entities).
    let icegate_full = |user: &str| {
        let n = narrowed(snap, black_box(user));
        drop(black_box(authorize_path(snap, &n.subject(user), black_box(&req))));
    };
    let icegate_allowed_full = median_per_call(|| icegate_full(&allowed_user), 10_000, 51);
    let icegate_denied_full = median_per_call(|| icegate_full(&denied_user), 10_000, 51);
    // Cedar: the request built from the path's names, then is_authorized against the prebuilt
    // entities and policies; and is_authorized alone on a prebuilt request.
    let cedar_call = |user: &str| {
        let request = types.load_table(black_box(user), &catalog, &schema, &table);
        drop(black_box(cedar.decide(&request)));
    };
    let cedar_allowed = median_per_call(|| cedar_call(&allowed_user), 500, 51);
    let cedar_denied = median_per_call(|| cedar_call(&denied_user), 500, 51);
    let cedar_allowed_only = median_per_call(|| drop(black_box(cedar.decide(black_box(&allowed_request)))), 500, 51);
    let cedar_denied_only = median_per_call(|| drop(black_box(cedar.decide(black_box(&denied_request)))), 500, 51);

    println!();
    println!("summary (median per call over 51 batches; the target is the issue's, never asserted):");
    println!("  agreement: {agree} of {total}");
    println!(
        "  icegate authorize_path: allowed {}, denied {}    (with user check and narrowing: {}, {})",
        fmt_duration(icegate_allowed),
        fmt_duration(icegate_denied),
        fmt_duration(icegate_allowed_full),
        fmt_duration(icegate_denied_full)
    );
    println!(
        "  cedar Request + is_authorized: allowed {}, denied {}    (is_authorized alone: {}, {})",
        fmt_duration(cedar_allowed),
        fmt_duration(cedar_denied),
        fmt_duration(cedar_allowed_only),
        fmt_duration(cedar_denied_only)
    );
    println!(
        "  ratio cedar/icegate: allowed {:.0}×, denied {:.0}×    (against icegate with narrowing: {:.0}×, {:.0}×)",
        ratio(cedar_allowed, icegate_allowed),
        ratio(cedar_denied, icegate_denied),
        ratio(cedar_allowed, icegate_allowed_full),
        ratio(cedar_denied, icegate_denied_full)
    );
    println!("    {TARGET}");
    println!(
        "  load: icegate {} (parse + build), cedar {} (read + translate + entities + policies)",
        fmt_duration(icegate_parse + icegate_build),
        fmt_duration(times.read + cedar_build)
    );
    println!(
        "  RSS: {:.1} MB after icegate's load (+{:.1} MB), {:.1} MB after cedar's build (+{:.1} MB)",
        mb(rss_icegate),
        mb(rss_icegate.saturating_sub(rss_start)),
        mb(rss_cedar),
        mb(rss_cedar.saturating_sub(rss_icegate))
    );
}
