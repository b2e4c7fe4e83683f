//! Read restrictions (docs/design.md §8 "Read restrictions"): the row filters and column masks a
//! policy puts on tables, which ones apply to a request, and the `read-restrictions` member the
//! Iceberg REST spec (apache/iceberg PR #13879) gives a trusted reader of a loadTable-like answer,
//! resolved against the table's current schema. Engines enforce them; icegate issues them and
//! refuses readers it does not trust to.

pub mod action;
pub mod answer;
pub mod apply;
pub mod cover;
pub mod expr;
pub mod schema;
pub mod wire;

pub use action::{Action, ColumnPath};
pub use apply::Applied;
pub use expr::Filter;
