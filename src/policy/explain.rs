//! Readable reasons: what decided a [`Decision`], for `icegate explain` and the audit log.
//! Off the request path: it re-evaluates terms to name the grants, denies and owners involved.

use super::authorize::{Checked, Decision, Object, Reason};
use super::eval::{Subject, Target, Term, granted, term_holds};
use super::model::{Condition, OwnerType};
use super::snapshot::{NodeId, ROOT, Snapshot};

/// The object a check was made on, as an operator reads it: `TABLE `prod.sales.orders``.
pub fn object_label(catalog: &str, object: &Object<'_>) -> String {
    let schema = |levels: &[String]| format!("{catalog}.{}", levels.join(":"));
    match object {
        Object::Namespace([]) => format!("CATALOG `{catalog}`"),
        Object::Namespace(levels) => format!("SCHEMA `{}`", schema(levels)),
        Object::Table(i) => format!("TABLE `{}.{}`", schema(i.namespace), i.name),
        Object::View(i) => format!("VIEW `{}.{}`", schema(i.namespace), i.name),
        Object::Function(i) => format!("FUNCTION `{}.{}`", schema(i.namespace), i.name),
        Object::TableOrView(i) => format!("TABLE or VIEW `{}.{}`", schema(i.namespace), i.name),
    }
}

fn node_label(snap: &Snapshot, node: NodeId) -> String {
    let n = snap.node(node);
    let kind = n.kind.map_or("OBJECT", |k| k.as_str());
    format!("{kind} `{}`", n.full_name)
}

fn term_name(term: Term) -> String {
    match term {
        Term::OwnMetalake => "own(metalake)".into(),
        Term::OwnCatalog => "own(catalog)".into(),
        Term::OwnSchema => "own(schema)".into(),
        Term::OwnTable => "own(table)".into(),
        Term::OwnView => "own(view)".into(),
        Term::OwnFunction => "own(function)".into(),
        Term::Priv(p) => format!("{p}@"),
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

/// One term, with the grant, deny or owner behind its value.
fn describe_term(snap: &Snapshot, subject: &Subject<'_>, target: &Target, term: Term) -> String {
    let name = term_name(term);
    let Term::Priv(p) = term else {
        if term_holds(snap, subject, target, term) {
            let owners: Vec<String> = own_node(target, term)
                .into_iter()
                .filter_map(|n| snap.node(n).owner.as_ref().map(|o| (n, o)))
                .map(|(n, o)| {
                    let kind = if o.kind == OwnerType::User { "user" } else { "group" };
                    format!("{} is owned by {kind} `{}`", node_label(snap, n), o.name)
                })
                .collect();
            return format!("{name} holds ({})", owners.join(", "));
        }
        if !subject.ownership {
            return format!("{name} fails (ownership grants nothing to a narrowed request)");
        }
        return format!("{name} fails");
    };
    for node in target.nodes() {
        if let Some(role) = granted(snap, node, p, Condition::Deny, subject.held) {
            return format!("{name} is denied by role `{}` on {}", snap.role_name(role), node_label(snap, node));
        }
    }
    for node in target.nodes() {
        if let Some(role) = granted(snap, node, p, Condition::Allow, subject.active) {
            return format!("{name} is allowed by role `{}` on {}", snap.role_name(role), node_label(snap, node));
        }
    }
    for node in target.nodes() {
        if let Some(role) = granted(snap, node, p, Condition::Allow, subject.held) {
            return format!(
                "{name} fails: only role `{}`, which is not active, allows it on {}",
                snap.role_name(role),
                node_label(snap, node)
            );
        }
    }
    format!("{name} fails: no held role allows it")
}

fn describe_check(snap: &Snapshot, subject: &Subject<'_>, catalog: &str, check: &Checked<'_>) -> String {
    let object = object_label(catalog, &check.object);
    let formula = check.rule.formula();
    if let Some(clause) = check.eval.clause.and_then(|i| formula.get(i)) {
        let terms: Vec<String> = clause.iter().map(|t| describe_term(snap, subject, &check.target, *t)).collect();
        return format!("{} on {object} holds: {}", check.rule.text(), terms.join("; "));
    }
    let mut seen: Vec<Term> = Vec::new();
    for t in formula.iter().flat_map(|c| c.iter()) {
        if !seen.contains(t) {
            seen.push(*t);
        }
    }
    // Failing privilege terms first: they are what an operator would grant or lift.
    let mut failing = Vec::new();
    let mut holding = Vec::new();
    let mut not_owner = Vec::new();
    for t in seen {
        let holds = term_holds(snap, subject, &check.target, t);
        match (t, holds) {
            (Term::Priv(_), false) => failing.push(describe_term(snap, subject, &check.target, t)),
            (Term::Priv(_), true) => holding.push(describe_term(snap, subject, &check.target, t)),
            (_, true) => holding.push(describe_term(snap, subject, &check.target, t)),
            (_, false) => not_owner.push(term_name(t)),
        }
    }
    let mut parts = failing;
    parts.extend(holding);
    if !not_owner.is_empty() {
        let why = if subject.ownership { "" } else { " (ownership grants nothing to a narrowed request)" };
        parts.push(format!("{} fail{why}", not_owner.join(", ")));
    }
    format!("{} on {object} fails: {}", check.rule.text(), parts.join("; "))
}

/// The reason for `decision`, in words; `catalog` is the request's catalog.
pub fn describe(snap: &Snapshot, subject: &Subject<'_>, catalog: &str, decision: &Decision<'_>) -> String {
    match &decision.reason {
        Reason::Fixed(why) => (*why).to_owned(),
        Reason::SignMethod(m) => {
            format!("sign request method `{m}` is not signed (only GET, HEAD, PUT, POST, DELETE, PATCH)")
        }
        Reason::SignProvider(p) => format!("sign request provider `{p}` is not supported (only `s3`)"),
        Reason::Checks(checks) if checks.is_empty() => "no check applies".to_owned(),
        Reason::Checks(checks) => {
            let verdict = if decision.is_allowed() { "allowed" } else { "denied" };
            let parts: Vec<String> = checks.iter().map(|c| describe_check(snap, subject, catalog, c)).collect();
            format!("{verdict}: {}", parts.join("; then "))
        }
    }
}
