//! Operations to rules: which formula decides each Iceberg operation on which object
//! (docs/design.md §4), in the two steps of the pipeline (what the path decides, what the body adds).

use super::eval::{Evaluation, Leaf, Subject, Target, evaluate};
use super::rules::Rule;
use super::snapshot::Snapshot;
use crate::core::iceberg::body::{Body, TableUpdate};
use crate::core::iceberg::location::{Location, LocationError};
use crate::core::iceberg::{Namespace, OperationId, TableIdent};

/// The objects a classified request names in its path, with its catalog resolved.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    pub op: OperationId,
    pub catalog: &'a str,
    pub namespace: Option<&'a Namespace>,
    pub name: Option<&'a str>,
    /// `parent=` of listNamespaces.
    pub parent: Option<&'a Namespace>,
    /// dropTable's `purgeRequested` is true (any letter case, as the catalog's Java server
    /// parses it).
    pub purge: bool,
}

/// A table, view or function named by the request, borrowed from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ident<'a> {
    pub namespace: &'a [String],
    pub name: &'a str,
}

impl<'a> Ident<'a> {
    pub fn of(ident: &'a TableIdent) -> Self {
        Self { namespace: ident.namespace.levels(), name: &ident.name }
    }
}

/// Which object of the request a check was made on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Object<'a> {
    /// A namespace by its levels: the path's, `parent=`, a created namespace's parent (no
    /// levels for a top-level one), a rename's destination, a list entry.
    Namespace(&'a [String]),
    Table(Ident<'a>),
    View(Ident<'a>),
    Function(Ident<'a>),
    /// The name in a tableExists or existence check: a possible table and a possible view.
    TableOrView(Ident<'a>),
}

/// One formula evaluated on one object.
#[derive(Clone, Debug)]
pub struct Checked<'a> {
    pub rule: Rule,
    pub object: Object<'a>,
    pub target: Target,
    pub eval: Evaluation,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Deny,
    /// Denied, but answered 404 if the upstream says the object does not exist (docs/design.md §4).
    DenyUnlessMissing,
    /// 404 without a check: a metadata-table name in a nested namespace.
    NotFound,
}

#[derive(Clone, Debug)]
pub enum Reason<'a> {
    /// The checks made, in order; for a denial the last one failed.
    Checks(Vec<Checked<'a>>),
    /// A decision no formula makes; the text says why.
    Fixed(&'static str),
    /// A sign request for a method that is not signed.
    SignMethod(String),
    /// A sign request for a provider other than S3.
    SignProvider(String),
    /// A rename the rename rule refuses (docs/design.md §4 "Renames do not carry name-bound
    /// policy"), after the checks that passed.
    RenameRule { checks: Vec<Checked<'a>>, why: &'static str },
    /// A chosen location the location rule refuses (docs/design.md §4 "Locations are placed only by
    /// owners, and only inside what they own"), after the checks that passed.
    Location { checks: Vec<Checked<'a>>, refusal: LocationRefusal },
}

/// Why the location rule refused a location a caller without `TOP` chose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LocationRefusal {
    /// The location is malformed (400).
    Malformed(LocationError),
    /// It does not lie strictly inside the directory of the table's namespace.
    Outside { location: String, directory: String },
    /// The namespace's directory is not known: offline without `--namespace-location`, or the
    /// upstream reported one icegate cannot read.
    NoDirectory { location: String, namespace: String },
}

#[derive(Clone, Debug)]
pub struct Decision<'a> {
    pub verdict: Verdict,
    pub reason: Reason<'a>,
}

impl Decision<'_> {
    pub fn is_allowed(&self) -> bool {
        self.verdict == Verdict::Allow
    }

    fn fixed(verdict: Verdict, why: &'static str) -> Self {
        Self { verdict, reason: Reason::Fixed(why) }
    }
}

/// Iceberg's metadata tables, which clients probe as `ns.t.<name>` first (docs/design.md §4).
pub const METADATA_TABLES: [&str; 16] = [
    "entries",
    "files",
    "data_files",
    "delete_files",
    "history",
    "metadata_log_entries",
    "snapshots",
    "refs",
    "manifests",
    "partitions",
    "position_deletes",
    "all_data_files",
    "all_delete_files",
    "all_entries",
    "all_files",
    "all_manifests",
];

/// Runs checks in order; the first failure decides.
struct Checks<'s, 'a> {
    snap: &'s Snapshot,
    subject: &'s Subject<'s>,
    catalog: &'s str,
    done: Vec<Checked<'a>>,
    /// The location rule's refusal, which ends the checks like a failed one.
    location: Option<LocationRefusal>,
}

impl<'s, 'a> Checks<'s, 'a> {
    fn new(snap: &'s Snapshot, subject: &'s Subject<'s>, catalog: &'s str) -> Self {
        Self { snap, subject, catalog, done: Vec::with_capacity(1), location: None }
    }

    /// The location rule, for a caller who passed `TOP ∨ SOUC` on `namespace`: unless it has
    /// `TOP`, every location in `chosen` must lie strictly inside the namespace's directory
    /// (`facts`); false when one does not.
    fn location_rule<'c>(
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

    /// Evaluates `rule` on `object`; false when it failed.
    fn check(&mut self, rule: Rule, object: Object<'a>) -> bool {
        let target = resolve(self.snap, self.subject, self.catalog, &object);
        let eval = evaluate(self.snap, self.subject, &target, rule.formula());
        let allowed = eval.allowed;
        self.done.push(Checked { rule, object, target, eval });
        allowed
    }

    /// Allowed when every check passed; no check at all is a denial (default deny holds for
    /// empty work, docs/design.md §4).
    fn finish(self) -> Decision<'a> {
        if let Some(refusal) = self.location {
            return Decision { verdict: Verdict::Deny, reason: Reason::Location { checks: self.done, refusal } };
        }
        let allowed = !self.done.is_empty() && self.done.iter().all(|c| c.eval.allowed);
        Decision { verdict: if allowed { Verdict::Allow } else { Verdict::Deny }, reason: Reason::Checks(self.done) }
    }
}

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

pub(crate) fn resolve(snap: &Snapshot, subject: &Subject<'_>, catalog: &str, object: &Object<'_>) -> Target {
    let owners = subject.owners;
    let leaf = |ident: &Ident<'_>, kind: Leaf| {
        Target::resolve(snap, owners, catalog, ident.namespace, Some((kind, ident.name)))
    };
    match object {
        Object::Namespace(levels) => Target::resolve(snap, owners, catalog, levels, None),
        Object::Table(i) => leaf(i, Leaf::Table),
        Object::View(i) => leaf(i, Leaf::View),
        Object::Function(i) => leaf(i, Leaf::Function),
        Object::TableOrView(i) => leaf(i, Leaf::TableAndView),
    }
}

fn path_ident<'a>(req: &Request<'a>) -> Option<Ident<'a>> {
    Some(Ident { namespace: req.namespace?.levels(), name: req.name? })
}

fn path_namespace<'a>(req: &Request<'a>) -> &'a [String] {
    req.namespace.map_or(&[], Namespace::levels)
}

/// The check the path alone decides (docs/design.md §5): for operations whose objects are all in
/// the path, the whole check; for updateTable and signRequest, what no body could lift; for
/// operations that name their objects in the body, nothing.
pub fn authorize_path<'a>(snap: &Snapshot, subject: &Subject<'_>, req: &Request<'a>) -> Decision<'a> {
    use OperationId as Op;
    let mut checks = Checks::new(snap, subject, req.catalog);
    let ns = || Object::Namespace(path_namespace(req));
    let Some(ident) = path_ident(req) else {
        match req.op {
            Op::GetConfig => return Decision::fixed(Verdict::Allow, "getConfig needs only a known, enabled user"),
            Op::GetToken => return Decision::fixed(Verdict::Allow, "getToken is forwarded before every check"),
            Op::SignS3Request => {
                return Decision::fixed(
                    Verdict::Deny,
                    "the legacy un-scoped S3 signer is not accepted; sign through the table's `/sign` endpoint",
                );
            }
            Op::ListNamespaces => {
                if checks.check(Rule::CatalogUse, Object::Namespace(&[]))
                    && let Some(parent) = req.parent
                {
                    checks.check(Rule::NamespaceLoad, Object::Namespace(parent.levels()));
                }
            }
            Op::LoadNamespaceMetadata | Op::NamespaceExists => {
                checks.check(Rule::NamespaceLoad, ns());
            }
            Op::DropNamespace | Op::UpdateProperties => {
                checks.check(Rule::SchemaOwner, ns());
            }
            Op::ListTables | Op::ListViews | Op::ListFunctions => {
                checks.check(Rule::ListObjects, ns());
            }
            Op::CreateTable => {
                checks.check(Rule::TableCreate, ns());
            }
            Op::RegisterTable => {
                checks.check(Rule::Top, ns());
            }
            Op::CreateView | Op::RegisterView => {
                checks.check(Rule::ViewCreate, ns());
            }
            Op::CreateNamespace | Op::RenameTable | Op::RenameView | Op::CommitTransaction => {
                return Decision::fixed(Verdict::Allow, "the objects are named in the body");
            }
            Op::LoadFunction
            | Op::PlanTableScan
            | Op::FetchPlanningResult
            | Op::CancelPlanning
            | Op::FetchScanTasks
            | Op::LoadTable
            | Op::UpdateTable
            | Op::DropTable
            | Op::TableExists
            | Op::UnregisterTable
            | Op::LoadCredentials
            | Op::SignRequest
            | Op::ReportMetrics
            | Op::LoadView
            | Op::ReplaceView
            | Op::DropView
            | Op::ViewExists => return Decision::fixed(Verdict::Deny, "the route names no object icegate can check"),
        }
        return checks.finish();
    };
    match req.op {
        Op::LoadTable => {
            if ident.namespace.len() >= 2 && METADATA_TABLES.contains(&ident.name) {
                return Decision::fixed(
                    Verdict::NotFound,
                    "a metadata-table name in a nested namespace is not a table",
                );
            }
            if !checks.check(Rule::TableRead, Object::Table(ident)) {
                let exists = checks.check(Rule::TableExistence, Object::TableOrView(ident));
                return existence_decision(checks, exists);
            }
        }
        Op::LoadCredentials
        | Op::PlanTableScan
        | Op::FetchPlanningResult
        | Op::FetchScanTasks
        | Op::CancelPlanning
        | Op::ReportMetrics
        | Op::SignRequest => {
            checks.check(Rule::TableRead, Object::Table(ident));
        }
        Op::TableExists => {
            checks.check(Rule::TableExists, Object::TableOrView(ident));
        }
        Op::UpdateTable => {
            checks.check(Rule::TableUpdateAnyBody, Object::Table(ident));
        }
        Op::DropTable if req.purge => {
            checks.check(Rule::Top, Object::Table(ident));
        }
        Op::DropTable | Op::UnregisterTable => {
            checks.check(Rule::TableOwner, Object::Table(ident));
        }
        Op::LoadView => {
            if !checks.check(Rule::ViewRead, Object::View(ident)) {
                let exists = checks.check(Rule::ViewExistence, Object::TableOrView(ident));
                return existence_decision(checks, exists);
            }
        }
        Op::ViewExists => {
            checks.check(Rule::ViewExists, Object::TableOrView(ident));
        }
        Op::ReplaceView | Op::DropView => {
            checks.check(Rule::ViewOwner, Object::View(ident));
        }
        Op::LoadFunction => {
            checks.check(Rule::FunctionRead, Object::Function(ident));
        }
        Op::GetConfig
        | Op::GetToken
        | Op::ListNamespaces
        | Op::CreateNamespace
        | Op::LoadNamespaceMetadata
        | Op::NamespaceExists
        | Op::DropNamespace
        | Op::UpdateProperties
        | Op::ListTables
        | Op::CreateTable
        | Op::ListFunctions
        | Op::RegisterTable
        | Op::RenameTable
        | Op::CommitTransaction
        | Op::ListViews
        | Op::CreateView
        | Op::RenameView
        | Op::RegisterView
        | Op::SignS3Request => return Decision::fixed(Verdict::Deny, "the route names no object icegate can check"),
    }
    checks.finish()
}

/// A failed read whose existence check passed may become 404; otherwise 403 either way.
fn existence_decision<'a>(mut checks: Checks<'_, 'a>, exists_check_passed: bool) -> Decision<'a> {
    // The existence check is recorded for explain but is not what denied the read.
    let existence = checks.done.pop();
    let mut decision = checks.finish();
    if exists_check_passed {
        decision.verdict = Verdict::DenyUnlessMissing;
        if let (Reason::Checks(done), Some(e)) = (&mut decision.reason, existence) {
            done.push(e);
        }
    }
    decision
}

/// The rest of the check, from what the body names (docs/design.md §4): explicit locations,
/// data-moving updates, renames, transactions, namespaces to create, sign requests. `facts`
/// are what the upstream said (none, offline).
pub fn authorize_body<'a>(
    snap: &Snapshot,
    subject: &Subject<'_>,
    req: &Request<'a>,
    body: &'a Body,
    facts: Facts<'_>,
) -> Decision<'a> {
    let mut checks = Checks::new(snap, subject, req.catalog);
    match body {
        Body::CreateNamespace { namespace, location } => {
            let levels = namespace.levels();
            let parent = Object::Namespace(levels.get(..levels.len() - 1).unwrap_or(&[]));
            // a namespace's location is where the upstream places its tables by default
            if checks.check(Rule::NamespaceCreate, parent) && *location {
                checks.check(Rule::Top, parent);
            }
        }
        Body::UpdateProperties { location: true } => {
            checks.check(Rule::Top, Object::Namespace(path_namespace(req)));
        }
        Body::CreateTable { explicit_location: true, locations, .. } => {
            let namespace = path_namespace(req);
            if checks.check(Rule::SchemaOwner, Object::Namespace(namespace)) {
                checks.location_rule(namespace, locations.iter().map(String::as_str), facts);
            }
        }
        Body::UpdateTable(update) => {
            if let Some(ident) = path_ident(req) {
                check_update(&mut checks, ident, update, facts);
            }
        }
        Body::Rename { source, destination } if req.op == OperationId::RenameTable => {
            let allowed = if source.namespace == destination.namespace {
                checks.check(Rule::TableUpdate, Object::Table(Ident::of(source)))
            } else {
                checks.check(Rule::TableOwner, Object::Table(Ident::of(source)))
                    && checks.check(Rule::TableCreate, Object::Namespace(destination.namespace.levels()))
            };
            if allowed {
                return rename_rule(checks, Leaf::Table, (source, destination));
            }
        }
        Body::Rename { source, destination } => {
            let allowed = checks.check(Rule::ViewOwner, Object::View(Ident::of(source)))
                && (source.namespace == destination.namespace
                    || checks.check(Rule::ViewCreate, Object::Namespace(destination.namespace.levels())));
            if allowed {
                return rename_rule(checks, Leaf::View, (source, destination));
            }
        }
        Body::CommitTransaction(changes) => {
            for change in changes {
                if !check_update(&mut checks, Ident::of(&change.identifier), &change.update, facts) {
                    break;
                }
            }
        }
        Body::SignRequest(sign) => {
            if sign.provider.as_deref().is_some_and(|p| p != "s3") {
                return Decision {
                    verdict: Verdict::Deny,
                    reason: Reason::SignProvider(sign.provider.clone().unwrap_or_default()),
                };
            }
            let Some(ident) = path_ident(req) else {
                return Decision::fixed(Verdict::Deny, "the route names no object icegate can check");
            };
            match sign.method.as_str() {
                "GET" | "HEAD" => checks.check(Rule::TableRead, Object::Table(ident)),
                "PUT" | "POST" | "DELETE" | "PATCH" => checks.check(Rule::TableUpdate, Object::Table(ident)),
                _ => return Decision { verdict: Verdict::Deny, reason: Reason::SignMethod(sign.method.clone()) },
            };
        }
        Body::CreateTable { .. }
        | Body::UpdateProperties { location: false }
        | Body::RegisterTable { .. }
        | Body::CreateView { .. }
        | Body::RegisterView { .. }
        | Body::ReplaceView => {
            return Decision::fixed(Verdict::Allow, "the body adds nothing to the check of the path");
        }
    }
    checks.finish()
}

/// Whether `subject` may create a table in `namespace` (createTable's rule): the stage-create
/// icegate sends on a caller's behalf, to learn the location the upstream assigns, is sent only
/// for a caller who could have sent it.
pub fn may_create_table(snap: &Snapshot, subject: &Subject<'_>, catalog: &str, namespace: &[String]) -> bool {
    let target = resolve(snap, subject, catalog, &Object::Namespace(namespace));
    evaluate(snap, subject, &target, Rule::TableCreate.formula()).allowed
}

/// docs/design.md §4 "Renames do not carry name-bound policy": a policy names objects, so a rename
/// must not shed a DENY that names its source, nor land on a name that a grant or an owner
/// entry names. Called after the privilege checks passed.
fn rename_rule<'a>(
    checks: Checks<'_, 'a>,
    leaf: Leaf,
    (source, destination): (&TableIdent, &TableIdent),
) -> Decision<'a> {
    let node = |ident: &TableIdent| {
        let target = Target::resolve(
            checks.snap,
            checks.subject.owners,
            checks.catalog,
            ident.namespace.levels(),
            Some((leaf, &ident.name)),
        );
        match leaf {
            Leaf::View => target.view,
            _ => target.table,
        }
        .map(|id| checks.snap.node(id))
    };
    let why = if node(source).is_some_and(|n| n.deny_mask != 0) {
        Some("a role denies a privilege on the source object itself")
    } else if node(destination).is_some_and(|n| n.allow_mask != 0 || n.owner.is_some()) {
        Some("a role allows a privilege on, or the policy's owners name, the destination object itself")
    } else {
        None
    };
    match why {
        Some(why) => Decision { verdict: Verdict::Deny, reason: Reason::RenameRule { checks: checks.done, why } },
        None => checks.finish(),
    }
}

/// updateTable's rule for one table change (docs/design.md §4); false when it failed.
fn check_update<'a>(checks: &mut Checks<'_, 'a>, ident: Ident<'a>, update: &TableUpdate, facts: Facts<'_>) -> bool {
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
fn has_top(snap: &Snapshot, subject: &Subject<'_>, catalog: &str, namespace: &[String]) -> bool {
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
        _ => {}
    }
    out
}

/// READ or WRITE, for the credentials a response may carry (docs/design.md §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    Read,
    Write,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
        }
    }
}

/// The scope with the active roles and with all held roles; `narrowed < unnarrowed` means the
/// upstream's credentials are broader than the caller's scope (docs/design.md §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CredentialScope {
    pub narrowed: Scope,
    pub unnarrowed: Scope,
}

/// `None` for operations without a credential scope.
pub fn credential_scope(snap: &Snapshot, subject: &Subject<'_>, req: &Request<'_>) -> Option<CredentialScope> {
    if !req.op.has_credential_scope() {
        return None;
    }
    if matches!(req.op, OperationId::CreateTable | OperationId::RegisterTable) {
        return Some(CredentialScope { narrowed: Scope::Write, unnarrowed: Scope::Write });
    }
    let target = resolve(snap, subject, req.catalog, &Object::Table(path_ident(req)?));
    let scope = |s: &Subject<'_>| {
        if evaluate(snap, s, &target, Rule::CredentialWrite.formula()).allowed { Scope::Write } else { Scope::Read }
    };
    Some(CredentialScope { narrowed: scope(subject), unnarrowed: scope(&subject.unnarrowed()) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::iceberg::body::TableChange;
    use crate::core::policy::RoleSet;

    /// docs/design.md §4 "Default deny holds for empty work": a conjunction of no checks denies, so a
    /// body that names nothing to check (a transaction without changes, were it to get past the
    /// body parser's 400) is never allowed by it.
    #[test]
    fn an_empty_conjunction_denies() {
        let yaml = "version: 1\nmetalake: lake\ndefault_catalog: prod\nusers: [{ name: ann }]\nowners:\n  - { type: METALAKE, fullName: lake, owner: ann, ownerType: USER }\n";
        let snap = crate::core::policy::load_str("p.yaml", yaml).unwrap().snapshot;
        let roles = RoleSet::default();
        let subject = Subject {
            user: "ann",
            groups: &[],
            held: &roles,
            active: &roles,
            ownership: true,
            owners: crate::core::ownership::OwnerIndex::empty(),
        };
        assert_eq!(Checks::new(&snap, &subject, "prod").finish().verdict, Verdict::Deny);
        let req = Request {
            op: OperationId::CommitTransaction,
            catalog: "prod",
            namespace: None,
            name: None,
            parent: None,
            purge: false,
        };
        let none: Vec<TableChange> = Vec::new();
        let body = Body::CommitTransaction(none);
        let decision = authorize_body(&snap, &subject, &req, &body, Facts::default());
        assert_eq!(decision.verdict, Verdict::Deny, "even for the metalake's owner");
    }
}
