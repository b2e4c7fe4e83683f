//! Building the policy's read restrictions (docs/design.md §3, §8): each entry's object, roles,
//! row filter and columns checked with its file and line, then indexed under its object's node.

use super::build::Builder;
use super::model::ObjectType;
use super::raw;
use super::snapshot::{Restriction, Snapshot};
use crate::core::restrictions::action::{Action, ColumnPath};
use crate::core::restrictions::expr::Filter;

impl Builder {
    /// `restrictions` and `restriction_enforcers` of one file.
    pub(super) fn restrictions(&mut self, file: &raw::File, snap: &mut Snapshot) {
        for entry in &file.restrictions {
            if let Some(restriction) = self.restriction(entry, snap) {
                let index = snap.restrictions.list.len() as u32;
                snap.restrictions.on.entry(restriction.node).or_default().push(index);
                snap.restrictions.list.push(restriction);
            }
        }
        let Some(enforcers) = &file.restriction_enforcers else { return };
        for user in &enforcers.users {
            if user.value.is_empty() {
                self.error(user.line(), "restriction enforcer user must not be empty".to_owned());
            } else if snap.user_id(&user.value).is_none() {
                let message = format!("restriction enforcer user `{}` is not defined by the policy", user.value);
                self.warn(user.line(), message);
            }
            snap.restrictions.enforcer_users.insert(user.value.as_str().into());
        }
        for group in &enforcers.groups {
            if group.value.is_empty() {
                self.error(group.line(), "restriction enforcer group must not be empty".to_owned());
            } else if snap.group_id(&group.value).is_none() {
                // groups may come from the identity, as owners' may
                let message = format!(
                    "restriction enforcer group `{}` is not defined by the policy (it may come from the identity)",
                    group.value
                );
                self.warn(group.line(), message);
            }
            snap.restrictions.enforcer_groups.insert(group.value.as_str().into());
        }
    }

    fn restriction(&mut self, entry: &raw::Restriction, snap: &mut Snapshot) -> Option<Restriction> {
        let full = &entry.object.full_name;
        let (ty, name) = self.object(snap, &entry.object.kind, full)?;
        let what = format!("restriction on {ty} `{}`", full.value);
        if !matches!(ty, ObjectType::Metalake | ObjectType::Catalog | ObjectType::Schema | ObjectType::Table) {
            let message = format!(
                "{what}: read restrictions apply to tables, so `object` is a TABLE or what holds tables (SCHEMA, \
                 CATALOG, METALAKE)"
            );
            self.error(full.line(), message);
            return None;
        }
        let errors = self.errors_len();
        let mut unless_roles = Vec::with_capacity(entry.unless_roles.len());
        for role in &entry.unless_roles {
            match snap.role_id(&role.value) {
                Some(id) if !unless_roles.contains(&id) => unless_roles.push(id),
                Some(_) => {}
                None => {
                    self.error(role.line(), format!("{what} lists undefined role `{}` in `unless_roles`", role.value))
                }
            }
        }
        let row_filter = entry.row_filter.as_ref().and_then(|f| match Filter::parse(&f.value) {
            Ok(filter) => Some(filter),
            Err(e) => {
                self.error(f.line(), format!("{what} has a malformed `row_filter`: {e}"));
                None
            }
        });
        let mut columns = Vec::new();
        if let Some(map) = &entry.columns {
            for (column, action) in &map.value {
                let Some(path) = ColumnPath::parse(column) else {
                    let message = format!(
                        "{what} names column `{column}`, which is not a column path (names joined with `.`, none empty)"
                    );
                    self.error(map.line(), message);
                    continue;
                };
                match action.as_str().and_then(Action::parse) {
                    Some(action) => columns.push((path, action)),
                    None => {
                        let expected: Vec<&str> = Action::ALL.iter().map(|a| a.as_str()).collect();
                        let message = format!(
                            "{what} gives column `{column}` unknown action `{}`; expected one of `{}`",
                            action.as_str().map_or_else(|| action.to_string(), str::to_owned),
                            expected.join("`, `")
                        );
                        self.error(map.line(), message);
                    }
                }
            }
        }
        if entry.row_filter.is_none() && columns.is_empty() && entry.columns.as_ref().is_none_or(|c| c.value.is_empty())
        {
            self.error(full.line(), format!("{what} restricts nothing: give it a `row_filter` or `columns`"));
        }
        if self.errors_len() > errors {
            return None;
        }
        let node = Self::node(snap, ty, &name)?;
        Some(Restriction {
            name: entry.name.as_ref().map(|n| n.value.as_str().into()),
            kind: ty,
            full_name: full.value.as_str().into(),
            node,
            unless_roles,
            row_filter,
            columns,
        })
    }
}
