//! Full names and role names as the policy spells them: splitting a full name by the shape of
//! its type (docs/design.md §2, §3), and the role names the active-roles header could not carry.

use super::model::{NameShape, ObjectType};
use crate::core::iceberg::names;

/// A full name, split by the shape of its type.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FullName {
    Metalake,
    Catalog(String),
    Schema(String, Vec<String>),
    /// A table, view, function, topic, fileset or model under a schema.
    SchemaObject(String, Vec<String>, String),
    /// A tag, policy, job template, role or job under the metalake.
    MetalakeObject(String),
}

/// Splits `full` as a full name of type `ty` (docs/design.md §2, §3).
pub(crate) fn parse_full_name(ty: ObjectType, full: &str, metalake: &str) -> Result<FullName, String> {
    let bad = |why: &str| Err(format!("full name `{full}` does not fit type {ty}: {why}"));
    let catalog_ok = |c: &str| !c.is_empty() && !c.contains(':') && !c.chars().any(char::is_control);
    let schema_levels = |s: &str| -> Option<Vec<String>> {
        let levels: Vec<String> = s.split(':').map(str::to_owned).collect();
        levels.iter().all(|l| names::check_level(l, &[]).is_ok()).then_some(levels)
    };
    match ty.name_shape() {
        NameShape::Metalake if full == metalake => Ok(FullName::Metalake),
        NameShape::Metalake => Err(format!("full name `{full}` of a METALAKE must be the metalake `{metalake}`")),
        NameShape::Catalog if catalog_ok(full) && !full.contains('.') => Ok(FullName::Catalog(full.to_owned())),
        NameShape::Catalog => bad("expected `catalog`"),
        NameShape::Schema => match full.split_once('.') {
            Some((c, s)) if catalog_ok(c) => match schema_levels(s) {
                Some(levels) => Ok(FullName::Schema(c.to_owned(), levels)),
                None => bad("expected `catalog.schema`, schema levels joined with `:`"),
            },
            _ => bad("expected `catalog.schema`"),
        },
        NameShape::SchemaObject => {
            let mut parts = full.splitn(3, '.');
            match (parts.next(), parts.next(), parts.next()) {
                (Some(c), Some(s), Some(name)) if catalog_ok(c) && names::check_name(name).is_ok() => {
                    match schema_levels(s) {
                        Some(levels) => Ok(FullName::SchemaObject(c.to_owned(), levels, name.to_owned())),
                        None => bad("expected `catalog.schema.name`, schema levels joined with `:`"),
                    }
                }
                _ => bad("expected `catalog.schema.name`"),
            }
        }
        NameShape::MetalakeObject if !full.is_empty() && !full.chars().any(char::is_control) => {
            Ok(FullName::MetalakeObject(full.to_owned()))
        }
        NameShape::MetalakeObject => bad("expected a name"),
    }
}

/// Why a role name could never be named by the header (docs/design.md §3).
pub(crate) fn role_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("is empty")
    } else if name.contains([',', ';', '=']) {
        Some("contains `,`, `;` or `=`")
    } else if name.chars().any(char::is_control) {
        Some("contains a control character")
    } else if name.trim() != name {
        Some("has leading or trailing whitespace")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_names_split_by_type() {
        use FullName::*;
        let p = |ty, s| parse_full_name(ty, s, "lake");
        assert_eq!(p(ObjectType::Metalake, "lake"), Ok(Metalake));
        assert!(p(ObjectType::Metalake, "other").is_err());
        assert_eq!(p(ObjectType::Catalog, "prod"), Ok(Catalog("prod".into())));
        assert!(p(ObjectType::Catalog, "prod.sales").is_err());
        assert!(p(ObjectType::Catalog, "a:b").is_err());
        assert_eq!(p(ObjectType::Schema, "prod.a:b"), Ok(Schema("prod".into(), vec!["a".into(), "b".into()])));
        assert!(p(ObjectType::Schema, "prod").is_err());
        assert!(p(ObjectType::Schema, "prod.a.b").is_err());
        assert!(p(ObjectType::Schema, "prod.a::b").is_err());
        assert_eq!(
            p(ObjectType::Table, "prod.sales.x.y"),
            Ok(SchemaObject("prod".into(), vec!["sales".into()], "x.y".into()))
        );
        assert!(p(ObjectType::Table, "prod.sales").is_err());
        assert!(p(ObjectType::View, "prod.sales.").is_err());
        assert_eq!(p(ObjectType::Tag, "pii"), Ok(MetalakeObject("pii".into())));
    }

    #[test]
    fn role_names_the_header_could_not_name_are_refused() {
        assert!(role_name_problem("analyst").is_none());
        assert!(role_name_problem("data team").is_none());
        assert!(role_name_problem("a,b").is_some());
        assert!(role_name_problem("a;b").is_some());
        assert!(role_name_problem("a=b").is_some());
        assert!(role_name_problem(" a").is_some());
        assert!(role_name_problem("a\tb").is_some());
        assert!(role_name_problem("").is_some());
    }
}
