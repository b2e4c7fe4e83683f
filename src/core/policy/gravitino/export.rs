//! A document as a policy file in §3's YAML (`icegate policy export`): block lists of flow
//! mappings, every name a double-quoted scalar (JSON's escapes are YAML's), so that `check`,
//! `test`, `who-can`, `diff` and `report` read exactly what Gravitino holds.

use super::document::{Document, quote};
use std::fmt::Write;

/// The YAML policy file of `document`, headed by a comment saying where it came from.
pub fn to_yaml(document: &Document, origin: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# exported by `icegate policy export` from {origin}");
    if document.ignored_objects > 0 {
        let _ = writeln!(
            out,
            "# {} securable object(s) of types icegate does not enforce (filesets, topics, models, ...) left out",
            document.ignored_objects
        );
    }
    let _ = writeln!(out, "version: 1");
    let _ = writeln!(out, "metalake: {}", quote(&document.metalake));
    let _ = writeln!(out, "require_known_user: {}", document.require_known_user);
    if let Some(d) = &document.default_catalog {
        let _ = writeln!(out, "default_catalog: {}", quote(d));
    }
    block(&mut out, "catalogs", &document.catalogs, |c| {
        let mut s = format!("{{ name: {}", quote(&c.name));
        if let Some(p) = &c.prefix {
            let _ = write!(s, ", prefix: {}", quote(p));
        }
        if let Some(cs) = c.case_sensitive {
            let _ = write!(s, ", case_sensitive: {cs}");
        }
        s.push_str(" }");
        s
    });
    block(&mut out, "users", &document.users, |u| {
        let enabled = u.enabled.map(|e| format!(", enabled: {e}")).unwrap_or_default();
        format!("{{ name: {}, roles: {}{enabled} }}", quote(&u.name), names(&u.roles))
    });
    block(&mut out, "groups", &document.groups, |g| {
        format!("{{ name: {}, roles: {} }}", quote(&g.name), names(&g.roles))
    });
    if document.roles.is_empty() {
        out.push_str("roles: []\n");
    } else {
        out.push_str("roles:\n");
        for role in &document.roles {
            let _ = writeln!(out, "  - name: {}", quote(&role.name));
            if role.securable_objects.is_empty() {
                out.push_str("    securableObjects: []\n");
                continue;
            }
            out.push_str("    securableObjects:\n");
            for o in &role.securable_objects {
                let privileges: Vec<String> = o
                    .privileges
                    .iter()
                    .map(|p| format!("{{ name: {}, condition: {} }}", p.name, p.condition))
                    .collect();
                let _ = writeln!(
                    out,
                    "      - {{ type: {}, fullName: {}, privileges: [{}] }}",
                    o.kind,
                    quote(&o.full_name),
                    privileges.join(", ")
                );
            }
        }
    }
    block(&mut out, "owners", &document.owners, |o| {
        format!(
            "{{ type: {}, fullName: {}, owner: {}, ownerType: {} }}",
            o.kind,
            quote(&o.full_name),
            quote(&o.owner),
            o.owner_type
        )
    });
    out
}

fn block<T>(out: &mut String, key: &str, entries: &[T], entry: impl Fn(&T) -> String) {
    if entries.is_empty() {
        let _ = writeln!(out, "{key}: []");
        return;
    }
    let _ = writeln!(out, "{key}:");
    for e in entries {
        let _ = writeln!(out, "  - {}", entry(e));
    }
}

fn names(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| quote(n)).collect();
    format!("[{}]", quoted.join(", "))
}
