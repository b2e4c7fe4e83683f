//! Readable reasons: what decided a [`Decision`], for `icegate explain` and the audit log.
//! It re-evaluates terms to name the grants, denies and owners involved. Every forwarded
//! request's audit line carries one, so the text is written into one buffer, never assembled
//! from intermediate strings.

use super::authorize::{Checked, Decision, LocationRefusal, Object, Reason};
use super::eval::{Subject, Target, Term, granted, term_holds};
use super::model::{Condition, OwnerType};
use super::snapshot::{NodeId, ROOT, Snapshot};
use std::fmt::Write as _;

/// The object a check was made on, as an operator reads it: `TABLE `prod.sales.orders``.
pub fn object_label(catalog: &str, object: &Object<'_>) -> String {
    let mut out = String::new();
    write_object_label(&mut out, catalog, object);
    out
}

// Writing to a `String` cannot fail: the `fmt::Result`s below are ignored for that reason.
fn write_object_label(out: &mut String, catalog: &str, object: &Object<'_>) {
    let schema = |out: &mut String, levels: &[String]| {
        out.push_str(catalog);
        out.push('.');
        for (i, level) in levels.iter().enumerate() {
            if i > 0 {
                out.push(':');
            }
            out.push_str(level);
        }
    };
    let (kind, levels, name) = match object {
        Object::Namespace([]) => {
            let _ = write!(out, "CATALOG `{catalog}`");
            return;
        }
        Object::Namespace(levels) => ("SCHEMA", *levels, None),
        Object::Table(i) => ("TABLE", i.namespace, Some(i.name)),
        Object::View(i) => ("VIEW", i.namespace, Some(i.name)),
        Object::Function(i) => ("FUNCTION", i.namespace, Some(i.name)),
        Object::TableOrView(i) => ("TABLE or VIEW", i.namespace, Some(i.name)),
    };
    out.push_str(kind);
    out.push_str(" `");
    schema(out, levels);
    if let Some(name) = name {
        out.push('.');
        out.push_str(name);
    }
    out.push('`');
}

fn write_node_label(out: &mut String, snap: &Snapshot, node: NodeId) {
    let n = snap.node(node);
    out.push_str(n.kind.map_or("OBJECT", |k| k.as_str()));
    push_quoted(out, " ", &n.full_name, "");
}

/// `before`, `text` in backticks, `after`: the pieces of a reason, pushed without a formatter
/// (every forwarded request's reason is written, and `write!` costs several times as much).
fn push_quoted(out: &mut String, before: &str, text: &str, after: &str) {
    out.push_str(before);
    out.push('`');
    out.push_str(text);
    out.push('`');
    out.push_str(after);
}

fn write_term_name(out: &mut String, term: Term) {
    match term {
        Term::OwnMetalake => out.push_str("own(metalake)"),
        Term::OwnCatalog => out.push_str("own(catalog)"),
        Term::OwnSchema => out.push_str("own(schema)"),
        Term::OwnTable => out.push_str("own(table)"),
        Term::OwnView => out.push_str("own(view)"),
        Term::OwnFunction => out.push_str("own(function)"),
        Term::Priv(p) => {
            out.push_str(p.as_str());
            out.push('@');
        }
    }
}

fn own_node(target: &Target, term: Term) -> Vec<NodeId> {
    match term {
        Term::OwnMetalake => vec![ROOT],
        Term::OwnCatalog => target.catalog.into_iter().collect(),
        Term::OwnSchema => target.schemas.clone(),
        Term::OwnTable => target.table.into_iter().collect(),
        Term::OwnView => target.view.into_iter().collect(),
        Term::OwnFunction => target.function.into_iter().collect(),
        Term::Priv(_) => Vec::new(),
    }
}

/// The ownership store's records an ownership term reads.
fn created_records(target: &Target, term: Term) -> impl Iterator<Item = &crate::core::ownership::Record> {
    let (schemas, leaf): (&[std::sync::Arc<crate::core::ownership::Record>], _) = match term {
        Term::OwnSchema => (&target.created.schemas, None),
        Term::OwnTable => (&[], target.created.table.as_deref()),
        Term::OwnView => (&[], target.created.view.as_deref()),
        _ => (&[], None),
    };
    schemas.iter().map(|r| &**r).chain(leaf)
}

/// One term, with the grant, deny or owner behind its value.
fn write_term(out: &mut String, snap: &Snapshot, subject: &Subject<'_>, target: &Target, term: Term) {
    write_term_name(out, term);
    let Term::Priv(p) = term else {
        if term_holds(snap, subject, target, term) {
            out.push_str(" holds (");
            let owned = own_node(target, term).into_iter().filter_map(|n| snap.node(n).owner.as_ref().map(|o| (n, o)));
            let mut first = true;
            for (n, o) in owned {
                if !std::mem::take(&mut first) {
                    out.push_str(", ");
                }
                let kind = if o.kind == OwnerType::User { "user" } else { "group" };
                write_node_label(out, snap, n);
                let _ = write!(out, " is owned by {kind} `{}`", o.name);
            }
            // Owners from the ownership store name their source: "by creation at ...".
            for r in created_records(target, term).filter(|r| r.owned_by(subject.user, subject.groups)) {
                if !std::mem::take(&mut first) {
                    out.push_str(", ");
                }
                let kind = if r.owner_type == OwnerType::User { "user" } else { "group" };
                let _ = write!(
                    out,
                    "{} `{}` is owned by {kind} `{}` {}",
                    r.kind.as_str(),
                    r.full_name,
                    r.owner,
                    r.provenance()
                );
            }
            out.push(')');
        } else if !subject.ownership {
            out.push_str(" fails (ownership grants nothing to a narrowed request)");
        } else {
            out.push_str(" fails");
        }
        return;
    };
    let found =
        |condition, roles| target.nodes().find_map(|node| granted(snap, node, p, condition, roles).map(|r| (node, r)));
    if let Some((node, role)) = found(Condition::Deny, subject.held) {
        push_quoted(out, " is denied by role ", snap.role_name(role), " on ");
        write_node_label(out, snap, node);
    } else if let Some((node, role)) = found(Condition::Allow, subject.active) {
        push_quoted(out, " is allowed by role ", snap.role_name(role), " on ");
        write_node_label(out, snap, node);
    } else if let Some((node, role)) = found(Condition::Allow, subject.held) {
        push_quoted(out, " fails: only role ", snap.role_name(role), ", which is not active, allows it on ");
        write_node_label(out, snap, node);
    } else {
        out.push_str(" fails: no held role allows it");
    }
}

fn write_check(out: &mut String, snap: &Snapshot, subject: &Subject<'_>, catalog: &str, check: &Checked<'_>) {
    let formula = check.rule.formula();
    out.push_str(check.rule.text());
    out.push_str(" on ");
    write_object_label(out, catalog, &check.object);
    if let Some(clause) = check.eval.clause.and_then(|i| formula.get(i)) {
        out.push_str(" holds: ");
        for (i, t) in clause.iter().enumerate() {
            if i > 0 {
                out.push_str("; ");
            }
            write_term(out, snap, subject, &check.target, *t);
        }
        return;
    }
    out.push_str(" fails: ");
    let mut seen: Vec<Term> = Vec::new();
    for t in formula.iter().flat_map(|c| c.iter()) {
        if !seen.contains(t) {
            seen.push(*t);
        }
    }
    // Failing privilege terms first: they are what an operator would grant or lift; then the
    // terms that hold; then the ownership terms that fail, named together.
    let holds: Vec<bool> = seen.iter().map(|t| term_holds(snap, subject, &check.target, *t)).collect();
    let failing = seen.iter().zip(&holds).filter(|(t, h)| matches!(t, Term::Priv(_)) && !**h);
    let holding = seen.iter().zip(&holds).filter(|(_, h)| **h);
    let mut first = true;
    for (t, _) in failing.chain(holding) {
        if !std::mem::take(&mut first) {
            out.push_str("; ");
        }
        write_term(out, snap, subject, &check.target, *t);
    }
    let mut not_owner = seen.iter().zip(&holds).filter(|(t, h)| !matches!(t, Term::Priv(_)) && !**h).peekable();
    if not_owner.peek().is_some() {
        if !std::mem::take(&mut first) {
            out.push_str("; ");
        }
        for (i, (t, _)) in not_owner.enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_term_name(out, *t);
        }
        out.push_str(" fail");
        if !subject.ownership {
            out.push_str(" (ownership grants nothing to a narrowed request)");
        }
    }
}

/// The reason for `decision`, in words; `catalog` is the request's catalog.
pub fn describe(snap: &Snapshot, subject: &Subject<'_>, catalog: &str, decision: &Decision<'_>) -> String {
    match &decision.reason {
        Reason::Fixed(why) => (*why).to_owned(),
        Reason::SignMethod(m) => {
            format!("sign request method `{m}` is not signed (only GET, HEAD, PUT, POST, DELETE, PATCH)")
        }
        Reason::SignProvider(p) => format!("sign request provider `{p}` is not supported (only `s3`)"),
        Reason::Checks(checks) if checks.is_empty() => {
            "denied: no check applies (nothing is allowed by default)".to_owned()
        }
        Reason::Checks(checks) => {
            let mut out = String::with_capacity(256 * checks.len());
            out.push_str(if decision.is_allowed() { "allowed: " } else { "denied: " });
            write_checks(&mut out, snap, subject, catalog, checks);
            out
        }
        Reason::Location { checks, refusal } => {
            let mut out = String::from("denied: the location rule: ");
            match refusal {
                LocationRefusal::Malformed(e) => {
                    let _ = write!(out, "{e}");
                }
                LocationRefusal::Outside { location, directory } => {
                    let _ = write!(
                        out,
                        "`{location}` does not lie inside the directory of the table's namespace, `{directory}`, and \
                         the caller does not own the catalog"
                    );
                }
                LocationRefusal::NoDirectory { location, namespace } => {
                    let _ = write!(
                        out,
                        "the directory of namespace `{namespace}` is not known, so `{location}` cannot be shown to lie \
                         inside it (explain takes it from --namespace-location)"
                    );
                }
            }
            if !checks.is_empty() {
                out.push_str("; the privilege checks passed: ");
                write_checks(&mut out, snap, subject, catalog, checks);
            }
            out
        }
        Reason::RenameRule { checks, why } => {
            let mut out = format!(
                "denied: the rename would change which policy entries apply ({why}); an administrator must change the policy first"
            );
            if !checks.is_empty() {
                out.push_str("; the privilege checks passed: ");
                write_checks(&mut out, snap, subject, catalog, checks);
            }
            out
        }
    }
}

fn write_checks(out: &mut String, snap: &Snapshot, subject: &Subject<'_>, catalog: &str, checks: &[Checked<'_>]) {
    for (i, c) in checks.iter().enumerate() {
        if i > 0 {
            out.push_str("; then ");
        }
        write_check(out, snap, subject, catalog, c);
    }
}
