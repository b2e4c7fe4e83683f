//! Where a table's data may be placed (docs/design.md §4 "Locations are placed only by owners,
//! and only inside what they own"): what a table change chooses, the location rule, the facts it
//! reads and the namespace directories it needs asked of the upstream.

use super::model::{Checks, Ident, LocationRefusal, Object, Request, path_ident, resolve};
use crate::core::iceberg::body::{Body, TableUpdate};
use crate::core::iceberg::location::Location;
use crate::core::iceberg::{Namespace, TableIdent};
use crate::core::policy::eval::{Subject, evaluate};
use crate::core::policy::rules::Rule;
use crate::core::policy::snapshot::Snapshot;

/// Facts only the upstream has, which a decision on a body reads (docs/design.md §1's lookup step).
/// Offline (`explain`, the conformance cases) none is known.
#[derive(Clone, Copy, Debug, Default)]
pub struct Facts<'a> {
    /// The location the upstream assigned to this caller's stage-create of a table, for each
    /// staged create whose commit sets a location.
    pub staged_locations: &'a [(TableIdent, String)],
    /// The directory of each namespace whose tables' chosen locations the location rule checks
    /// (its `location` property, or the parent of where the upstream places a new table).
    pub namespace_locations: &'a [(Namespace, String)],
}

impl Facts<'_> {
    fn namespace_location(&self, namespace: &[String]) -> Option<&str> {
        self.namespace_locations.iter().find(|(n, _)| n.levels() == namespace).map(|(_, l)| l.as_str())
    }

    fn staged_location(&self, ident: Ident<'_>) -> Option<&str> {
        self.staged_locations
            .iter()
            .find(|(t, _)| t.namespace.levels() == ident.namespace && t.name == ident.name)
            .map(|(_, location)| location.as_str())
    }
}

/// Whether `set` is the location the upstream assigned; a trailing `/` names the same
/// directory.
fn same_location(set: &str, assigned: &str) -> bool {
    set.trim_end_matches('/') == assigned.trim_end_matches('/')
}

impl Checks<'_, '_> {
    /// The location rule, for a caller who passed `TOP ∨ SOUC` on `namespace`: unless it has
    /// `TOP`, every location in `chosen` must lie strictly inside the namespace's directory
    /// (`facts`); false when one does not.
    pub(super) fn location_rule<'c>(
        &mut self,
        namespace: &[String],
        chosen: impl IntoIterator<Item = &'c str>,
        facts: Facts<'_>,
    ) -> bool {
        let mut chosen = chosen.into_iter().peekable();
        if chosen.peek().is_none() || has_top(self.snap, self.subject, self.catalog, namespace) {
            return true;
        }
        let refusal = chosen.find_map(|location| {
            let parsed = match Location::parse(location) {
                Ok(parsed) => parsed,
                Err(e) => return Some(LocationRefusal::Malformed(e)),
            };
            let no_directory =
                || LocationRefusal::NoDirectory { location: location.to_owned(), namespace: namespace.join(".") };
            let Some(directory) = facts.namespace_location(namespace) else { return Some(no_directory()) };
            let Ok(directory_parsed) = Location::parse(directory) else { return Some(no_directory()) };
            (!parsed.is_inside(&directory_parsed))
                .then(|| LocationRefusal::Outside { location: location.to_owned(), directory: directory.to_owned() })
        });
        self.location = refusal;
        self.location.is_none()
    }
}

/// updateTable's rule for one table change (docs/design.md §4); false when it failed.
pub(super) fn check_update<'a>(
    checks: &mut Checks<'_, 'a>,
    ident: Ident<'a>,
    update: &TableUpdate,
    facts: Facts<'_>,
) -> bool {
    let namespace = Object::Namespace(ident.namespace);
    match choices(ident, update, facts) {
        // The commit of a staged create: its set-location is the table's initial location,
        // which only an owner may choose, unless it is the one the upstream assigned.
        Choices::StagedAssigned => checks.check(Rule::TableCreate, namespace),
        // A location is what the table's credentials and signatures will cover: choosing one
        // is for owners of the namespace, inside its directory, never for the table's owner.
        Choices::Chosen(chosen) => {
            checks.check(Rule::SchemaOwner, namespace) && checks.location_rule(ident.namespace, chosen, facts)
        }
        Choices::None => checks.check(Rule::TableUpdate, Object::Table(ident)),
    }
}

/// What a table change chooses of where its data lives.
enum Choices<'u> {
    /// A staged create's commit that chooses nothing but the location the upstream assigned.
    StagedAssigned,
    /// It chooses where data lives (these locations; none for a removed location property).
    Chosen(Vec<&'u str>),
    /// It moves no data.
    None,
}

fn choices<'u>(ident: Ident<'_>, update: &'u TableUpdate, facts: Facts<'_>) -> Choices<'u> {
    let properties = update.property_locations.iter().map(String::as_str);
    if update.asserts_create {
        let assigned = facts.staged_location(ident);
        let explicit = update.set_locations.iter().filter(|set| !assigned.is_some_and(|a| same_location(set, a)));
        let chosen: Vec<&str> = explicit.map(String::as_str).chain(properties).collect();
        match update.location_properties || !chosen.is_empty() {
            true => Choices::Chosen(chosen),
            false => Choices::StagedAssigned,
        }
    } else if update.moves_data() {
        Choices::Chosen(update.set_locations.iter().map(String::as_str).chain(properties).collect())
    } else {
        Choices::None
    }
}

/// Whether `subject` has `TOP` for `namespace` (the catalog's or the metalake's owner).
pub fn has_top(snap: &Snapshot, subject: &Subject<'_>, catalog: &str, namespace: &[String]) -> bool {
    let target = resolve(snap, subject, catalog, &Object::Namespace(namespace));
    evaluate(snap, subject, &target, Rule::Top.formula()).allowed
}

/// The namespaces whose directory the location rule needs for `body` (docs/design.md §4): those of
/// the tables for which a caller who may choose a location (`TOP ∨ SOUC`) but lacks `TOP`
/// chooses one. For anyone else the directory could not change the decision, and it is asked of
/// the upstream.
pub fn namespace_directories_needed<'b>(
    snap: &Snapshot,
    subject: &Subject<'_>,
    req: &Request<'b>,
    body: &'b Body,
    facts: Facts<'_>,
) -> Vec<&'b Namespace> {
    let needs = |namespace: &Namespace, chosen: bool| {
        let levels = namespace.levels();
        chosen && !has_top(snap, subject, req.catalog, levels) && {
            let target = resolve(snap, subject, req.catalog, &Object::Namespace(levels));
            evaluate(snap, subject, &target, Rule::SchemaOwner.formula()).allowed
        }
    };
    let chooses = |ident: Ident<'_>, update: &TableUpdate| matches!(choices(ident, update, facts), Choices::Chosen(chosen) if !chosen.is_empty());
    let mut out: Vec<&Namespace> = Vec::new();
    match body {
        Body::CreateTable { locations, .. } => out.extend(req.namespace.filter(|ns| needs(ns, !locations.is_empty()))),
        Body::UpdateTable(update) => {
            if let Some(ident) = path_ident(req) {
                out.extend(req.namespace.filter(|ns| needs(ns, chooses(ident, update))));
            }
        }
        Body::CommitTransaction(changes) => {
            for change in changes {
                let ns = &change.identifier.namespace;
                if !out.contains(&ns) && needs(ns, chooses(Ident::of(&change.identifier), &change.update)) {
                    out.push(ns);
                }
            }
        }
        // these choose no table location (a namespace's location needs TOP, checked as a rule)
        Body::CreateNamespace { .. }
        | Body::UpdateProperties { .. }
        | Body::RegisterTable { .. }
        | Body::Rename { .. }
        | Body::SignRequest(_)
        | Body::CreateView { .. }
        | Body::RegisterView { .. }
        | Body::ReplaceView => {}
    }
    out
}
