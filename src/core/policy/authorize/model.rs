//! The vocabulary of authorization: the objects a request names, one check and its result, a
//! decision with its reason, and the sequence of checks whose first failure decides.

use crate::core::iceberg::location::LocationError;
use crate::core::iceberg::{Namespace, OperationId, TableIdent};
use crate::core::policy::eval::{Evaluation, Leaf, Subject, Target, evaluate};
use crate::core::policy::rules::Rule;
use crate::core::policy::snapshot::Snapshot;

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

#[derive(Clone, Debug)]
pub struct Decision<'a> {
    pub verdict: Verdict,
    pub reason: Reason<'a>,
}

impl Decision<'_> {
    pub fn is_allowed(&self) -> bool {
        self.verdict == Verdict::Allow
    }

    pub(super) fn fixed(verdict: Verdict, why: &'static str) -> Self {
        Self { verdict, reason: Reason::Fixed(why) }
    }
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

/// Runs checks in order; the first failure decides.
pub(super) struct Checks<'s, 'a> {
    pub(super) snap: &'s Snapshot,
    pub(super) subject: &'s Subject<'s>,
    pub(super) catalog: &'s str,
    pub(super) done: Vec<Checked<'a>>,
    /// The location rule's refusal, which ends the checks like a failed one.
    pub(super) location: Option<LocationRefusal>,
}

impl<'s, 'a> Checks<'s, 'a> {
    pub(super) fn new(snap: &'s Snapshot, subject: &'s Subject<'s>, catalog: &'s str) -> Self {
        Self { snap, subject, catalog, done: Vec::with_capacity(1), location: None }
    }

    /// Evaluates `rule` on `object`; false when it failed.
    pub(super) fn check(&mut self, rule: Rule, object: Object<'a>) -> bool {
        let target = resolve(self.snap, self.subject, self.catalog, &object);
        let eval = evaluate(self.snap, self.subject, &target, rule.formula());
        let allowed = eval.allowed;
        self.done.push(Checked { rule, object, target, eval });
        allowed
    }

    /// Allowed when every check passed; no check at all is a denial (default deny holds for
    /// empty work, docs/design.md §4).
    pub(super) fn finish(self) -> Decision<'a> {
        if let Some(refusal) = self.location {
            return Decision { verdict: Verdict::Deny, reason: Reason::Location { checks: self.done, refusal } };
        }
        let allowed = !self.done.is_empty() && self.done.iter().all(|c| c.eval.allowed);
        Decision { verdict: if allowed { Verdict::Allow } else { Verdict::Deny }, reason: Reason::Checks(self.done) }
    }
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

pub(super) fn path_ident<'a>(req: &Request<'a>) -> Option<Ident<'a>> {
    Some(Ident { namespace: req.namespace?.levels(), name: req.name? })
}

pub(super) fn path_namespace<'a>(req: &Request<'a>) -> &'a [String] {
    req.namespace.map_or(&[], Namespace::levels)
}
