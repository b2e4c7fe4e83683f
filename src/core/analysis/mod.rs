//! Policy as code: the commands a policy's authors, reviewers and auditors run on a policy
//! (docs/design.md §10): `test` (decision cases, §11), `who-can`, `diff` and `report`. Every
//! answer comes from the evaluator ([`crate::core::policy::eval`]) and the offline decision
//! sequence ([`crate::core::decide`]), never from a second reading of the policy's rules.

pub mod access;
pub mod diff;
pub mod reach;
pub mod report;
pub mod restricted;
pub mod who_can;
