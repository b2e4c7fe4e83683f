//! `check`'s warnings about policies that do not do what they look like (issue 16):
//! - a DENY of SELECT_TABLE that an ALLOW of MODIFY_TABLE on the same chain, held by the same
//!   user or group, undoes: loadTable accepts either privilege (and hands out write
//!   credentials for MODIFY_TABLE), so the table stays readable;
//! - a DENY on an object its holder owns (or whose schema, catalog or metalake it owns):
//!   ownership ignores DENY (docs/design.md §4).
//!
//! Subjects are the policy's users (their own roles and their static groups' roles) and its
//! groups; groups an identity provider adds at request time are not known here.

use super::diagnostic::Diagnostic;
use super::model::{Condition, OwnerType, Privilege};
use super::snapshot::{NodeId, RoleId, Snapshot};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Where a DENY grant was written.
#[derive(Clone, Debug)]
pub(crate) struct Deny {
    pub node: NodeId,
    pub privilege: Privilege,
    pub role: RoleId,
    pub file: PathBuf,
    pub line: u64,
}

/// A user or group, with the roles it holds and the owners that name it.
struct Subject {
    label: String,
    roles: Vec<RoleId>,
    /// (owner type, name) pairs an `owners` entry may name to make this subject an owner.
    owns_as: Vec<(OwnerType, String)>,
}

fn subjects(snap: &Snapshot) -> Vec<Subject> {
    let users = snap.users.iter().map(|u| {
        let mut roles = u.roles.clone();
        let mut owns_as = vec![(OwnerType::User, u.name.to_string())];
        for g in &u.groups {
            let group = snap.group(*g);
            roles.extend(&group.roles);
            owns_as.push((OwnerType::Group, group.name.to_string()));
        }
        roles.sort();
        roles.dedup();
        Subject { label: format!("user `{}`", u.name), roles, owns_as }
    });
    let groups = snap.groups.iter().map(|g| Subject {
        label: format!("group `{}`", g.name),
        roles: g.roles.clone(),
        owns_as: vec![(OwnerType::Group, g.name.to_string())],
    });
    users.chain(groups).collect()
}

/// Each node's parent (the metalake has none).
fn parents(snap: &Snapshot) -> Vec<Option<NodeId>> {
    let mut parent = vec![None; snap.nodes.len()];
    for (i, node) in snap.nodes.iter().enumerate() {
        let id = NodeId(u32::try_from(i).unwrap_or(u32::MAX));
        let below = node.below();
        let children = below.children.values().chain(below.tables.values()).chain(below.views.values());
        for child in children.chain(below.functions.values()) {
            if let Some(slot) = parent.get_mut(child.index()) {
                *slot = Some(id);
            }
        }
    }
    parent
}

/// `node` and its ancestors, nearest first.
fn chain(parent: &[Option<NodeId>], node: NodeId) -> Vec<NodeId> {
    let mut out = vec![node];
    while let Some(p) = out.last().and_then(|n| parent.get(n.index()).copied().flatten()) {
        out.push(p);
    }
    out
}

fn describe(snap: &Snapshot, node: NodeId) -> String {
    let n = snap.node(node);
    let kind = n.kind.map_or("OBJECT", |k| k.as_str());
    format!("{kind} `{}`", n.full_name)
}

pub(crate) fn warnings(snap: &Snapshot, denies: &[Deny]) -> Vec<Diagnostic> {
    let parent = parents(snap);
    let subjects = subjects(snap);
    let mut holders: Vec<Vec<&Subject>> = vec![Vec::new(); snap.roles.len()];
    for s in &subjects {
        for r in &s.roles {
            if let Some(h) = holders.get_mut(r.index()) {
                h.push(s);
            }
        }
    }
    // One warning per shape, naming every subject it applies to.
    let mut found: BTreeMap<(PathBuf, u64, String), (String, Vec<String>)> = BTreeMap::new();
    let mut note = |deny: &Deny, key: String, message: String, who: &str| {
        found.entry((deny.file.clone(), deny.line, key)).or_insert((message, Vec::new())).1.push(who.to_owned());
    };
    for deny in denies {
        let deny_chain = chain(&parent, deny.node);
        let allows =
            if deny.privilege == Privilege::SelectTable { modify_allows(snap, &deny_chain) } else { Vec::new() };
        for s in holders.get(deny.role.index()).into_iter().flatten() {
            let owns = |n: &NodeId| {
                let owner = snap.node(*n).owner.as_ref();
                owner.is_some_and(|o| s.owns_as.iter().any(|(k, name)| *k == o.kind && **name == *o.name))
            };
            if let Some(owned) = deny_chain.iter().find(|n| owns(n)) {
                let message = format!(
                    "role `{}` DENYs {} on {}, but its holders {{subjects}} own {}: ownership ignores DENY, so the deny does not restrict them; make someone else the owner, or do not give this role to the owner",
                    snap.role_name(deny.role),
                    deny.privilege,
                    describe(snap, deny.node),
                    describe(snap, *owned),
                );
                note(deny, format!("own {}", owned.index()), message, &s.label);
            }
            for &(allow_node, allow_role) in allows.iter().filter(|(_, r)| s.roles.contains(r)) {
                let deeper = if deny_chain.contains(&allow_node) { deny.node } else { allow_node };
                let also_denied = chain(&parent, deeper).iter().any(|n| {
                    let denies = snap.node(*n).grants_of(Privilege::ModifyTable, Condition::Deny);
                    denies.iter().any(|g| s.roles.contains(&g.role))
                });
                if also_denied {
                    continue;
                }
                let message = format!(
                    "role `{}` DENYs SELECT_TABLE on {}, but role `{}` ALLOWs MODIFY_TABLE on {}, and {{subjects}}, holding both, can still load {}: loadTable accepts MODIFY_TABLE as well as SELECT_TABLE (and hands out write credentials); to keep it unreadable, also DENY MODIFY_TABLE on {}",
                    snap.role_name(deny.role),
                    describe(snap, deny.node),
                    snap.role_name(allow_role),
                    describe(snap, allow_node),
                    describe(snap, deeper),
                    describe(snap, deny.node),
                );
                note(deny, format!("modify {} {}", allow_node.index(), allow_role.index()), message, &s.label);
            }
        }
    }
    found
        .into_iter()
        .map(|((file, line, _), (message, who))| Diagnostic {
            file,
            line,
            message: message.replace("{subjects}", &named(&who)),
        })
        .collect()
}

/// At most this many subjects are named in one warning; a generated policy's warnings would
/// otherwise name thousands.
const NAMED: usize = 10;

/// The subjects a warning names, the first [`NAMED`] and how many more.
fn named(who: &[String]) -> String {
    match who.get(NAMED..) {
        Some(rest) if !rest.is_empty() => {
            format!("{} and {} more", who.get(..NAMED).unwrap_or(who).join(", "), rest.len())
        }
        _ => who.join(", "),
    }
}

/// The ALLOWs of MODIFY_TABLE on `deny_chain` (the denied node, then its ancestors) or below
/// the denied node: (node, role).
fn modify_allows(snap: &Snapshot, deny_chain: &[NodeId]) -> Vec<(NodeId, RoleId)> {
    let allows = |id: NodeId| {
        snap.node(id).grants_of(Privilege::ModifyTable, Condition::Allow).iter().map(move |g| (id, g.role))
    };
    let mut out: Vec<(NodeId, RoleId)> = deny_chain.iter().flat_map(|n| allows(*n)).collect();
    let mut below: Vec<NodeId> = deny_chain.first().into_iter().copied().collect();
    while let Some(id) = below.pop() {
        let node = snap.node(id);
        let next = node.below();
        for child in next.children.values().chain(next.tables.values()) {
            out.extend(allows(*child));
            below.push(*child);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warning_names_ten_subjects_and_counts_the_rest() {
        let who: Vec<String> = (0..13).map(|i| format!("user `u{i}`")).collect();
        assert_eq!(named(&who[..2]), "user `u0`, user `u1`");
        assert_eq!(named(&who[..10]).matches("user").count(), 10);
        let capped = named(&who);
        assert!(capped.starts_with("user `u0`, ") && capped.ends_with("user `u9` and 3 more"), "{capped}");
    }
}
