//! Namespace levels and object names after decoding, and the rules every one of them obeys.
//!
//! The same rules apply wherever a name comes from: a path segment, `parent=`, or a JSON body
//! (DESIGN.md §7), so that a name authorized in one place cannot mean another thing elsewhere.

use thiserror::Error;

/// A name that icegate refuses to authorize (400).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum NameError {
    #[error("a namespace must have at least one level")]
    EmptyNamespace,
    #[error("an empty name or namespace level is not allowed")]
    Empty,
    #[error("`{0}` is a dot segment")]
    DotSegment(String),
    #[error("namespace level `{0}` contains `.`, which full names use to join levels")]
    DotInLevel(String),
    #[error("namespace level `{0}` contains the schema separator `:`")]
    ColonInLevel(String),
    #[error("namespace level `{level}` contains the upstream namespace separator `{separator}`")]
    UpstreamSeparator { level: String, separator: String },
    #[error("name `{0}` contains a control character")]
    Control(String),
}

/// A namespace: one or more decoded levels. Invariant: every level passed [`check_level`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Namespace(Vec<String>);

impl Namespace {
    /// Checks every level; `separators` are the extra separators the upstream accepts.
    pub fn new(levels: Vec<String>, separators: &[String]) -> Result<Self, NameError> {
        if levels.is_empty() {
            return Err(NameError::EmptyNamespace);
        }
        for level in &levels {
            check_level(level, separators)?;
        }
        Ok(Self(levels))
    }

    pub fn levels(&self) -> &[String] {
        &self.0
    }

    /// The Gravitino schema name: levels joined with `:` (DESIGN.md §2).
    pub fn schema_name(&self) -> String {
        self.0.join(":")
    }

    /// The parent namespace, or `None` for a top-level namespace.
    pub fn parent(&self) -> Option<Namespace> {
        match self.0.split_last() {
            Some((_, rest)) if !rest.is_empty() => Some(Self(rest.to_vec())),
            _ => None,
        }
    }
}

impl std::fmt::Display for Namespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join("."))
    }
}

/// A table, view or function identifier. Invariant: `name` passed [`check_name`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableIdent {
    pub namespace: Namespace,
    pub name: String,
}

impl TableIdent {
    pub fn new(namespace: Namespace, name: String) -> Result<Self, NameError> {
        check_name(&name)?;
        Ok(Self { namespace, name })
    }
}

impl std::fmt::Display for TableIdent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.namespace, self.name)
    }
}

/// C0 controls, DEL and C1 controls (U+0080..U+009F).
pub fn is_control(c: char) -> bool {
    c.is_control()
}

/// Rules shared by levels and names: non-empty, not a dot segment, no control characters
/// (U+0001 included, which Gravitino uses internally as a separator).
fn check_common(s: &str) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(NameError::Empty);
    }
    if s == "." || s == ".." {
        return Err(NameError::DotSegment(s.to_owned()));
    }
    if s.chars().any(is_control) {
        return Err(NameError::Control(s.escape_debug().to_string()));
    }
    Ok(())
}

/// A decoded namespace level (DESIGN.md §7).
pub fn check_level(level: &str, separators: &[String]) -> Result<(), NameError> {
    check_common(level)?;
    if level.contains('.') {
        return Err(NameError::DotInLevel(level.to_owned()));
    }
    if level.contains(':') {
        return Err(NameError::ColonInLevel(level.to_owned()));
    }
    if let Some(sep) = separators.iter().find(|s| !s.is_empty() && level.contains(s.as_str())) {
        return Err(NameError::UpstreamSeparator { level: level.to_owned(), separator: sep.clone() });
    }
    Ok(())
}

/// A decoded table, view or function name: may contain `.` and `:` (everything after the
/// schema in a full name is the name).
pub fn check_name(name: &str) -> Result<(), NameError> {
    check_common(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_reject_what_full_names_could_confuse() {
        assert!(check_level("sales", &[]).is_ok());
        assert_eq!(check_level("sa.les", &[]), Err(NameError::DotInLevel("sa.les".into())));
        assert!(matches!(check_level("a:b", &[]), Err(NameError::ColonInLevel(_))));
        assert!(matches!(check_level("a\u{1}b", &[]), Err(NameError::Control(_))));
        assert!(matches!(check_level("a\u{85}b", &[]), Err(NameError::Control(_))));
        assert!(matches!(check_level("..", &[]), Err(NameError::DotSegment(_))));
        assert!(matches!(check_level("", &[]), Err(NameError::Empty)));
        assert!(matches!(check_level("a|b", &["|".to_owned()]), Err(NameError::UpstreamSeparator { .. })));
    }

    #[test]
    fn names_may_contain_dots_and_colons() {
        assert!(check_name("x.y").is_ok());
        assert!(check_name("a:b").is_ok());
        assert!(check_name(".").is_err());
        assert!(check_name("a\u{1f}b").is_err());
    }

    #[test]
    fn namespace_parent_and_schema_name() {
        let ns = Namespace::new(vec!["a".into(), "b".into(), "c".into()], &[]).unwrap();
        assert_eq!(ns.schema_name(), "a:b:c");
        assert_eq!(ns.parent().unwrap().schema_name(), "a:b");
        assert_eq!(Namespace::new(vec!["a".into()], &[]).unwrap().parent(), None);
        assert!(Namespace::new(vec![], &[]).is_err());
    }
}
