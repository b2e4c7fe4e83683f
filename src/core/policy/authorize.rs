//! Operations to rules: which formula decides each Iceberg operation on which object
//! (docs/design.md §4), in the two steps of the pipeline (what the path decides, what the body adds).

use super::eval::{Leaf, Subject, Target, evaluate};
use super::rules::Rule;
use super::snapshot::Snapshot;
use crate::core::iceberg::body::Body;
use crate::core::iceberg::{OperationId, TableIdent};

mod model;
mod placement;
mod scope;

pub(crate) use model::resolve;
pub use model::{Checked, Decision, Ident, LocationRefusal, Object, Reason, Request, Verdict};
use model::{Checks, path_ident, path_namespace};
use placement::check_update;
pub use placement::{Facts, has_top, namespace_directories_needed};
pub use scope::{CredentialScope, Scope, credential_scope};

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
