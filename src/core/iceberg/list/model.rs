//! The vocabulary of a list response that its readers (`scan`, `general`, `entry`) and the
//! filter share: an entry, the response's fields as read, and why a response cannot be read.

use crate::core::iceberg::json::JsonError;
use crate::core::iceberg::{Namespace, TableIdent};
use std::ops::Range;
use thiserror::Error;

/// One listed object, by name: a namespace, or a table, view or function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    Namespace(Namespace),
    Object(TableIdent),
}

/// A list response icegate must filter but cannot read: 502, never passed through (docs/design.md §7).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ListError {
    #[error("upstream list response is not valid: {0}")]
    Json(#[from] JsonError),
    #[error("upstream list response is not valid: it has no `{0}`")]
    MissingList(&'static str),
    #[error("upstream list response is not valid: {0}")]
    Shape(String),
}

pub(super) const TOKEN_KEY: &str = "next-page-token";

/// One response as read: spans of its text, and the decoded token.
#[derive(Debug, Default)]
pub(super) struct Read {
    pub(super) fields: Vec<Field>,
    pub(super) kept: Vec<Range<usize>>,
    pub(super) next_page_token: Option<String>,
    pub(super) hidden: usize,
}

#[derive(Clone, Debug)]
pub(super) enum Field {
    /// Where the entries stood.
    List,
    /// Where `next-page-token` stood.
    Token,
    /// Another field: its decoded key and the span of its raw value.
    Other(String, Range<usize>),
}
