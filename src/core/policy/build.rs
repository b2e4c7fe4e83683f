//! Validating parsed policy files and building the indexed [`Snapshot`] from them, so that
//! every invariant stated in `snapshot.rs` holds by construction.

use super::diagnostic::{Diagnostic, LoadError, Loaded};
use super::located::{Text, Word};
use super::model::{Condition, ObjectType, OwnerType, Privilege};
use super::names::{FullName, parse_full_name, role_name_problem};
use super::raw;
use super::snapshot::{
    Grant, Group, GroupId, Narrowing, Node, NodeId, Owner, ROOT, Role, RoleId, Snapshot, Stats, User, UserId,
    privilege_bit,
};
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;
use std::path::{Path, PathBuf};

pub(crate) struct Builder {
    hash: String,
    errors: Vec<Diagnostic>,
    warnings: Vec<Diagnostic>,
    file: PathBuf,
    /// Every DENY grant and where it was written, for the warnings of [`super::lint`].
    denies: Vec<super::lint::Deny>,
}

type Files = Vec<(PathBuf, raw::File)>;

impl Builder {
    pub(crate) fn new(hash: String) -> Self {
        Self { hash, errors: Vec::new(), warnings: Vec::new(), file: PathBuf::new(), denies: Vec::new() }
    }

    pub(super) fn error(&mut self, line: u64, message: String) {
        self.errors.push(Diagnostic { file: self.file.clone(), line, message });
    }

    pub(super) fn warn(&mut self, line: u64, message: String) {
        self.warnings.push(Diagnostic { file: self.file.clone(), line, message });
    }

    pub(super) fn errors_len(&self) -> usize {
        self.errors.len()
    }

    fn at(&mut self, file: &Path) {
        file.clone_into(&mut self.file);
    }

    pub(crate) fn build(mut self, mut files: Files) -> Result<Loaded, LoadError> {
        let settings = self.settings(&files);
        let mut snap = Snapshot {
            metalake: settings.metalake.into(),
            default_catalog: settings.default_catalog.map(Into::into),
            require_known_user: settings.require_known_user,
            prefixes: FxHashMap::default(),
            strict_prefixes: false,
            path_prefixes: Default::default(),
            folding_catalogs: Default::default(),
            roles: Vec::new(),
            role_ids: FxHashMap::default(),
            users: Vec::new(),
            user_ids: FxHashMap::default(),
            groups: Vec::new(),
            group_ids: FxHashMap::default(),
            nodes: vec![Node { kind: Some(ObjectType::Metalake), ..Node::default() }],
            restrictions: Default::default(),
            stats: Stats::default(),
            hash: std::mem::take(&mut self.hash),
        };
        snap.node_mut(ROOT).full_name = snap.metalake.clone();
        // About a node per object named (ancestors are mostly shared), reserved so that the
        // node vector is not copied as it grows; room never written to is never resident.
        let named: usize = files
            .iter()
            .flat_map(|(_, f)| f.roles.iter().map(|r| r.securable_objects.len()).chain([f.owners.len()]))
            .sum();
        snap.nodes.reserve(named);
        self.declare_names(&files, &mut snap);
        // every file's catalogs first: the names of a folding catalog are checked in all files
        let mut case_sensitive: FxHashMap<String, (bool, PathBuf, u64)> = FxHashMap::default();
        for (path, file) in &files {
            self.at(path);
            self.prefixes(file, &mut snap, &mut case_sensitive);
        }
        snap.path_prefixes = crate::core::iceberg::prefix::Prefixes::new(snap.prefixes.keys().map(|p| &**p));
        for (path, file) in &mut files {
            self.at(path);
            self.groups(file, &mut snap);
            self.users(file, &mut snap);
            // Each role is dropped once indexed, so that the snapshot grows into the memory its
            // parsed form held: most of a large policy is its roles.
            self.grants(std::mem::take(&mut file.roles), &mut snap);
        }
        let mut owned: FxHashMap<(ObjectType, String), (PathBuf, u64)> = FxHashMap::default();
        for (path, file) in &files {
            self.at(path);
            self.owners(file, &mut snap, &mut owned);
        }
        for (path, file) in &files {
            self.at(path);
            self.restrictions(file, &mut snap);
        }
        if !self.errors.is_empty() {
            return Err(LoadError::Invalid(self.errors));
        }
        for node in &mut snap.nodes {
            node.grants.sort();
            node.grants.dedup();
        }
        snap.stats.users = snap.users.len();
        snap.stats.groups = snap.groups.len();
        snap.stats.roles = snap.roles.len();
        self.warnings.extend(super::lint::warnings(&snap, &self.denies));
        // Freeing what is left of the parsed files (users, groups, owners: a few allocations
        // per scalar) need not delay the snapshot.
        // (If no thread can be had, the files are dropped here instead.)
        let _ = std::thread::Builder::new().name("icegate-free".into()).spawn(move || drop(files));
        Ok(Loaded { snapshot: snap, warnings: self.warnings })
    }
}

struct Settings {
    metalake: String,
    default_catalog: Option<String>,
    require_known_user: bool,
}

impl Builder {
    /// `version`, and `metalake`, `default_catalog`, `require_known_user`, which must agree
    /// wherever repeated.
    fn settings(&mut self, files: &Files) -> Settings {
        let mut metalake: Option<String> = None;
        let mut default_catalog: Option<String> = None;
        let mut require: Option<bool> = None;
        for (path, file) in files {
            self.at(path);
            if file.version.value != 1 {
                let line = file.version.line();
                self.error(line, format!("unsupported policy version `{}`; expected `1`", file.version.value));
            }
            if let Some(m) = &file.metalake {
                match &metalake {
                    Some(prev) if *prev != m.value => {
                        self.error(m.line(), format!("metalake `{}` differs from `{prev}` in an earlier file", m.value))
                    }
                    _ => metalake = Some(m.value.clone()),
                }
            }
            if let Some(c) = &file.default_catalog {
                match &default_catalog {
                    Some(prev) if *prev != c.value => self.error(
                        c.line(),
                        format!("default_catalog `{}` differs from `{prev}` in an earlier file", c.value),
                    ),
                    _ => {
                        if parse_full_name(ObjectType::Catalog, &c.value, "").is_err() {
                            self.error(c.line(), format!("default_catalog `{}` is not a catalog name", c.value));
                        }
                        default_catalog = Some(c.value.clone());
                    }
                }
            }
            if let Some(r) = &file.require_known_user {
                match require {
                    Some(prev) if prev != r.value => self.error(
                        r.line(),
                        format!("require_known_user `{}` differs from `{prev}` in an earlier file", r.value),
                    ),
                    _ => require = Some(r.value),
                }
            }
        }
        if metalake.is_none() {
            if let Some((path, _)) = files.first() {
                self.at(path);
            }
            self.error(1, "missing field `metalake`".to_owned());
        }
        Settings {
            metalake: metalake.unwrap_or_default(),
            default_catalog,
            require_known_user: require.unwrap_or(true),
        }
    }

    /// Roles, groups and users first, so references resolve whatever file defines them.
    fn declare_names(&mut self, files: &Files, snap: &mut Snapshot) {
        let mut seen: FxHashMap<(u8, &str), (&Path, u64)> = FxHashMap::default();
        for (path, file) in files {
            self.at(path);
            let kinds = [
                (0u8, "role", file.roles.iter().map(|r| &r.name).collect::<Vec<_>>()),
                (1, "group", file.groups.iter().map(|g| &g.name).collect()),
                (2, "user", file.users.iter().map(|u| &u.name).collect()),
            ];
            for (kind, label, names) in kinds {
                for name in names {
                    let line = name.line();
                    if kind == 0 {
                        if let Some(problem) = role_name_problem(&name.value) {
                            self.error(line, format!("role name `{}` {problem}", name.value));
                        }
                    } else if name.value.is_empty() {
                        self.error(line, format!("{label} name must not be empty"));
                    }
                    match seen.entry((kind, name.value.as_str())) {
                        Entry::Occupied(first) => {
                            let (f, l) = first.get();
                            let msg =
                                format!("{label} `{}` is defined twice (first at {}:{l})", name.value, f.display());
                            self.error(line, msg);
                        }
                        Entry::Vacant(slot) => {
                            slot.insert((path.as_path(), line));
                            let n = name.value.as_str().into();
                            match kind {
                                0 => {
                                    snap.role_ids.insert(Box::clone(&n), RoleId(snap.roles.len() as u32));
                                    snap.roles.push(Role { name: n });
                                }
                                1 => {
                                    snap.group_ids.insert(Box::clone(&n), GroupId(snap.groups.len() as u32));
                                    snap.groups.push(Group {
                                        name: n,
                                        roles: Vec::new(),
                                        narrowing: Narrowing::default(),
                                    });
                                }
                                _ => {
                                    snap.user_ids.insert(Box::clone(&n), UserId(snap.users.len() as u32));
                                    snap.users.push(User {
                                        name: n,
                                        enabled: true,
                                        roles: Vec::new(),
                                        groups: Vec::new(),
                                        narrowing: Narrowing::default(),
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    fn role_refs(&mut self, snap: &Snapshot, refs: &[Text], whose: &str, key: &str) -> Vec<RoleId> {
        let mut out = Vec::with_capacity(refs.len());
        for r in refs {
            match snap.role_id(&r.value) {
                Some(id) if !out.contains(&id) => out.push(id),
                Some(_) => {}
                None => self.error(r.line(), format!("{whose} lists undefined role `{}` in `{key}`", r.value)),
            }
        }
        out
    }

    fn narrowing(
        &mut self,
        snap: &Snapshot,
        whose: &str,
        default: &Option<Vec<Text>>,
        max: &Option<Vec<Text>>,
        blocked: &[Text],
    ) -> Narrowing {
        Narrowing {
            default_active_roles: default.as_ref().map(|d| self.role_refs(snap, d, whose, "default_active_roles")),
            max_active_roles: max.as_ref().map(|m| self.role_refs(snap, m, whose, "max_active_roles")),
            blocked_roles: self.role_refs(snap, blocked, whose, "blocked_roles"),
        }
    }

    /// `catalogs` (docs/design.md §2): prefixes (an entry without one is reached by its name), and
    /// `case_sensitive`, on which all entries of one catalog must agree (`seen`).
    fn prefixes(&mut self, file: &raw::File, snap: &mut Snapshot, seen: &mut FxHashMap<String, (bool, PathBuf, u64)>) {
        for c in &file.catalogs {
            snap.strict_prefixes = true;
            let name = &c.name.value;
            if parse_full_name(ObjectType::Catalog, name, "").is_err() {
                self.error(c.name.line(), format!("catalog `{name}` is not a catalog name"));
            }
            let prefix = c.prefix.as_ref().unwrap_or(&c.name);
            // written decoded, as getConfig returns it; `/` may join segments (docs/design.md §2)
            if let Err(e) = crate::core::iceberg::prefix::check_declared(&prefix.value) {
                self.error(prefix.line(), e.to_string());
            }
            match snap.prefixes.entry(prefix.value.as_str().into()) {
                Entry::Occupied(_) => {
                    self.error(prefix.line(), format!("catalog prefix `{}` is mapped twice", prefix.value))
                }
                Entry::Vacant(slot) => {
                    slot.insert(name.as_str().into());
                }
            }
            let (sensitive, line) = c.case_sensitive.as_ref().map_or((true, c.name.line()), |s| (s.value, s.line()));
            match seen.entry(name.clone()) {
                Entry::Occupied(first) if first.get().0 != sensitive => {
                    let (_, f, l) = first.get();
                    let message = format!(
                        "catalog `{name}` is `case_sensitive: {sensitive}` here but `case_sensitive: {}` at {}:{l}; \
                         all entries of one catalog must agree",
                        !sensitive,
                        f.display()
                    );
                    self.error(line, message);
                }
                Entry::Occupied(_) => {}
                Entry::Vacant(slot) => {
                    slot.insert((sensitive, self.file.clone(), line));
                    if !sensitive {
                        snap.folding_catalogs.insert(name.as_str().into());
                    }
                }
            }
        }
    }

    /// In a catalog that folds names, the policy's names must be lower case already, or they
    /// would name nothing a request can reach (docs/design.md §2).
    fn check_case(&mut self, snap: &Snapshot, ty: ObjectType, name: &FullName, full: &Text) {
        let (catalog, levels, leaf) = match name {
            FullName::Schema(c, levels) => (c, levels, None),
            FullName::SchemaObject(c, levels, leaf) => (c, levels, Some(leaf)),
            _ => return,
        };
        if !snap.folds_names(catalog) {
            return;
        }
        let folded = |s: &String| s.to_lowercase() == *s;
        if !levels.iter().all(folded) || !leaf.is_none_or(folded) {
            self.error(
                full.line(),
                format!(
                    "{ty} `{}` is not in lower case, but catalog `{catalog}` folds names to lower case \
                     (`case_sensitive: false`); write `{}`",
                    full.value,
                    lower_below_catalog(&full.value, catalog)
                ),
            );
        }
    }

    fn groups(&mut self, file: &raw::File, snap: &mut Snapshot) {
        for g in &file.groups {
            let Some(id) = snap.group_id(&g.name.value) else { continue };
            let whose = format!("group `{}`", g.name.value);
            let roles = self.role_refs(snap, &g.roles, &whose, "roles");
            let narrowing =
                self.narrowing(snap, &whose, &g.default_active_roles, &g.max_active_roles, &g.blocked_roles);
            // A name defined twice is already an error, so the last definition may overwrite.
            let group = snap.group_mut(id);
            group.roles = roles;
            group.narrowing = narrowing;
        }
    }

    fn users(&mut self, file: &raw::File, snap: &mut Snapshot) {
        for u in &file.users {
            let Some(id) = snap.user_id(&u.name.value) else { continue };
            let whose = format!("user `{}`", u.name.value);
            let roles = self.role_refs(snap, &u.roles, &whose, "roles");
            let narrowing =
                self.narrowing(snap, &whose, &u.default_active_roles, &u.max_active_roles, &u.blocked_roles);
            let mut groups = Vec::new();
            for g in &u.groups {
                match snap.group_id(&g.value) {
                    Some(gid) if !groups.contains(&gid) => groups.push(gid),
                    Some(_) => {}
                    None => self.error(g.line(), format!("{whose} lists undefined group `{}`", g.value)),
                }
            }
            let user = snap.user_mut(id);
            user.enabled = u.enabled.unwrap_or(true);
            user.roles = roles;
            user.groups = groups;
            user.narrowing = narrowing;
        }
    }
}

/// Tree building: one node per object the policy names, and one per ancestor.
impl Builder {
    fn child(snap: &mut Snapshot, parent: NodeId, kind: ObjectType, name: &str) -> NodeId {
        let next = NodeId(snap.nodes.len() as u32);
        let below = snap.node_mut(parent).below_mut();
        let map = match kind {
            ObjectType::Table => &mut below.tables,
            ObjectType::View => &mut below.views,
            ObjectType::Function => &mut below.functions,
            _ => &mut below.children,
        };
        if let Some(id) = map.get(name) {
            return *id;
        }
        map.insert(name.into(), next);
        let full_name: Box<str> = if parent == ROOT {
            name.into()
        } else {
            let above = snap.node(parent);
            let sep = if kind == ObjectType::Schema && above.kind == Some(ObjectType::Schema) { ':' } else { '.' };
            // sized once: a large policy names hundreds of thousands of objects
            let mut full = String::with_capacity(above.full_name.len() + 1 + name.len());
            full.push_str(&above.full_name);
            full.push(sep);
            full.push_str(name);
            full.into()
        };
        snap.nodes.push(Node { kind: Some(kind), full_name, ..Node::default() });
        next
    }

    /// The node for an Iceberg object; `None` for the types no Iceberg operation checks.
    pub(super) fn node(snap: &mut Snapshot, ty: ObjectType, name: &FullName) -> Option<NodeId> {
        let schema = |snap: &mut Snapshot, c: &str, levels: &[String]| {
            let mut id = Self::child(snap, ROOT, ObjectType::Catalog, c);
            for level in levels {
                id = Self::child(snap, id, ObjectType::Schema, level);
            }
            id
        };
        match name {
            FullName::Metalake => Some(ROOT),
            FullName::Catalog(c) => Some(Self::child(snap, ROOT, ObjectType::Catalog, c)),
            FullName::Schema(c, levels) => Some(schema(snap, c, levels)),
            FullName::SchemaObject(c, levels, leaf)
                if matches!(ty, ObjectType::Table | ObjectType::View | ObjectType::Function) =>
            {
                let parent = schema(snap, c, levels);
                Some(Self::child(snap, parent, ty, leaf))
            }
            FullName::SchemaObject(..) | FullName::MetalakeObject(_) => None,
        }
    }

    pub(super) fn object(
        &mut self,
        snap: &Snapshot,
        kind: &Word<ObjectType>,
        full: &Text,
    ) -> Option<(ObjectType, FullName)> {
        let ty = match &kind.value {
            Ok(ty) => *ty,
            Err(text) => {
                self.error(kind.line(), format!("unknown object type `{text}`"));
                return None;
            }
        };
        match parse_full_name(ty, &full.value, &snap.metalake) {
            Ok(name) => {
                self.check_case(snap, ty, &name, full);
                Some((ty, name))
            }
            Err(message) => {
                self.error(full.line(), message);
                None
            }
        }
    }

    fn grants(&mut self, roles: Vec<raw::Role>, snap: &mut Snapshot) {
        for role in roles {
            let Some(role_id) = snap.role_id(&role.name.value) else { continue };
            let mut seen: FxHashMap<(ObjectType, &str, Privilege, Condition), ()> = FxHashMap::default();
            for obj in &role.securable_objects {
                let Some((ty, name)) = self.object(snap, &obj.kind, &obj.full_name) else { continue };
                let mut grants = Vec::new();
                for p in &obj.privileges {
                    let privilege = match &p.name.value {
                        Ok(privilege) => *privilege,
                        Err(text) => {
                            self.error(p.name.line(), format!("unknown privilege `{text}`"));
                            continue;
                        }
                    };
                    let condition = match &p.condition.value {
                        Ok(condition) => *condition,
                        Err(text) => {
                            let message = format!("unknown condition `{text}`; expected `ALLOW` or `DENY`");
                            self.error(p.condition.line(), message);
                            continue;
                        }
                    };
                    if !privilege.is_grantable_on(ty) {
                        self.error(
                            p.name.line(),
                            format!("privilege `{privilege}` is not grantable on {ty} `{}`", obj.full_name.value),
                        );
                        continue;
                    }
                    if seen.insert((ty, obj.full_name.value.as_str(), privilege, condition), ()).is_some() {
                        self.warn(
                            p.name.line(),
                            format!(
                                "role `{}` grants {} {privilege} on {ty} `{}` twice",
                                role.name.value,
                                condition.as_str(),
                                obj.full_name.value
                            ),
                        );
                        continue;
                    }
                    match condition {
                        Condition::Allow => snap.stats.allow += 1,
                        Condition::Deny => snap.stats.deny += 1,
                    }
                    grants.push((Grant { privilege, condition, role: role_id }, p.name.line()));
                }
                if let Some(node) = Self::node(snap, ty, &name) {
                    for (g, line) in grants {
                        if g.condition == Condition::Deny {
                            let file = self.file.clone();
                            self.denies.push(super::lint::Deny {
                                node,
                                privilege: g.privilege,
                                role: g.role,
                                file,
                                line,
                            });
                        }
                        let node = snap.node_mut(node);
                        match g.condition {
                            Condition::Allow => node.allow_mask |= privilege_bit(g.privilege),
                            Condition::Deny => node.deny_mask |= privilege_bit(g.privilege),
                        }
                        node.grants.push(g);
                    }
                }
            }
        }
    }

    fn owners(
        &mut self,
        file: &raw::File,
        snap: &mut Snapshot,
        owned: &mut FxHashMap<(ObjectType, String), (PathBuf, u64)>,
    ) {
        for o in &file.owners {
            let Some((ty, name)) = self.object(snap, &o.kind, &o.full_name) else { continue };
            let line = o.full_name.line();
            let Some(kind) = OwnerType::parse(&o.owner_type.value) else {
                self.error(
                    o.owner_type.line(),
                    format!("unknown ownerType `{}`; expected `USER` or `GROUP`", o.owner_type.value),
                );
                continue;
            };
            if o.owner.value.is_empty() {
                self.error(o.owner.line(), "owner must not be empty".to_owned());
                continue;
            }
            match owned.entry((ty, o.full_name.value.clone())) {
                Entry::Occupied(first) => {
                    let (f, l) = first.get();
                    let msg = format!("{ty} `{}` is owned twice (first at {}:{l})", o.full_name.value, f.display());
                    self.error(line, msg);
                    continue;
                }
                Entry::Vacant(slot) => {
                    slot.insert((self.file.clone(), line));
                }
            }
            let defined = match kind {
                OwnerType::User => snap.user_id(&o.owner.value).is_some(),
                OwnerType::Group => snap.group_id(&o.owner.value).is_some(),
            };
            if !defined {
                let what = if kind == OwnerType::User { "user" } else { "group" };
                self.warn(
                    o.owner.line(),
                    format!(
                        "owner of {ty} `{}` is {what} `{}`, which the policy does not define",
                        o.full_name.value, o.owner.value
                    ),
                );
            }
            snap.stats.owners += 1;
            if let Some(node) = Self::node(snap, ty, &name) {
                snap.node_mut(node).owner = Some(Owner { kind, name: o.owner.value.as_str().into() });
            }
        }
    }
}

/// `full` with everything after the catalog in lower case.
fn lower_below_catalog(full: &str, catalog: &str) -> String {
    match full.strip_prefix(catalog) {
        Some(rest) => format!("{catalog}{}", rest.to_lowercase()),
        None => full.to_lowercase(),
    }
}
