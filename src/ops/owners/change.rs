//! What a request changes in the ownership store (an intent to create, drop or rename an object,
//! and how it turned out), and why the store could not take it.

use crate::core::ownership::Kind;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum OwnersError {
    #[error("cannot open the ownership store `{path}`: {reason}")]
    Open { path: String, reason: String },
    #[error("the ownership store failed: {0}")]
    Store(String),
    #[error("the ownership store is off (`[owners] store = \"off\"`)")]
    Off,
    #[error("the ownership store's worker failed: {0}")]
    Task(String),
    /// The upstream carried a change out; recording it failed (its intent stays pending).
    #[error(
        "the upstream carried the request out, but the ownership store could not record it yet ({0}); it is reconciled later"
    )]
    Unrecorded(String),
}

/// An object a change is about: its Gravitino full name and its path upstream (after the
/// base path), for the existence checks of reconciliation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    pub kind: Kind,
    pub full_name: String,
    pub path: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    Create(Object),
    Drop(Object),
    Rename { from: Object, to: Object },
}

/// A change a request is about to make, by whom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Intent {
    pub change: Change,
    pub user: String,
    /// For a create: the upstream said the object did not exist just before it was forwarded,
    /// so finding it afterwards proves this request created it. Otherwise an ambiguous create
    /// records nothing.
    pub confirmable: bool,
}

/// How an intent turned out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settlement {
    /// `direct`: the upstream's answer to the request itself said so.
    Happened {
        direct: bool,
    },
    DidNotHappen,
}
