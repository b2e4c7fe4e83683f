//! Namespace levels and object names after decoding, and the rules every one of them obeys.
//!
//! The same rules apply wherever a name comes from: a path segment, `parent=`, or a JSON body
//! (docs/design.md §7), so that a name authorized in one place cannot mean another thing elsewhere.

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
    /// Catalogs that derive locations by joining names would read it as a directory.
    #[error("name `{0}` contains `/` or `\\`, which a catalog could read as a directory")]
    PathSeparator(String),
}

/// How one catalog's names are read (docs/design.md §2, §7): the extra namespace separators the
/// upstream accepts, and whether the catalog folds names to lower case
/// (`case_sensitive: false`), in which case every name is folded before any decision.
#[derive(Clone, Copy, Debug, Default)]
pub struct NameRules<'a> {
    pub separators: &'a [String],
    pub fold_case: bool,
}

impl NameRules<'_> {
    /// `name` as the catalog compares it: Java's `toLowerCase(Locale.ROOT)` when the catalog
    /// folds (Rust's `to_lowercase` is the same full Unicode mapping), else as it is.
    pub fn fold(&self, name: String) -> String {
        // Not shortened to "only if some char is upper case": title-case letters (`ǅ`) fold too.
        if self.fold_case { name.to_lowercase() } else { name }
    }

    /// Checked levels, folded first where the catalog folds.
    pub fn namespace(&self, levels: Vec<String>) -> Result<Namespace, NameError> {
        Namespace::new(levels.into_iter().map(|l| self.fold(l)).collect(), self.separators)
    }

    /// A checked name, folded first where the catalog folds.
    pub fn name(&self, name: String) -> Result<String, NameError> {
        let name = self.fold(name);
        check_name(&name)?;
        Ok(name)
    }
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

    pub fn into_levels(self) -> Vec<String> {
        self.0
    }

    /// The Gravitino schema name: levels joined with `:` (docs/design.md §2).
    pub fn schema_name(&self) -> String {
        self.0.join(":")
    }

    /// The Gravitino full name of this schema in `catalog` (`catalog.a:b`), or of `leaf` in
    /// it (`catalog.a:b.leaf`), built in one allocation: audit lines name one on every request.
    pub fn full_name(&self, catalog: &str, leaf: Option<&str>) -> String {
        let levels: usize = self.0.iter().map(|l| l.len() + 1).sum();
        let mut out = String::with_capacity(catalog.len() + levels + leaf.map_or(0, |l| l.len() + 1));
        out.push_str(catalog);
        for (i, level) in self.0.iter().enumerate() {
            out.push(if i == 0 { '.' } else { ':' });
            out.push_str(level);
        }
        if let Some(leaf) = leaf {
            out.push('.');
            out.push_str(leaf);
        }
        out
    }

    /// The parent namespace, or `None` for a top-level namespace.
    pub fn parent(&self) -> Option<Namespace> {
        match self.0.split_last() {
            Some((_, rest)) if !rest.is_empty() => Some(Self(rest.to_vec())),
            _ => None,
        }
    }
}

impl Namespace {
    /// [`Namespace::new`] in place, from borrowed levels: the same checks and the same errors,
    /// reusing this namespace's allocations, so that a list filter can rebuild one namespace per
    /// entry without allocating. On an error the namespace is unchanged.
    pub fn set_levels(&mut self, levels: &[&str], separators: &[String]) -> Result<(), NameError> {
        if levels.is_empty() || !levels.iter().all(|level| level_ok(level, separators)) {
            // the rare refusal goes through `new`, which gives the exact error
            *self = Self::new(levels.iter().map(|level| (*level).to_owned()).collect(), separators)?;
            return Ok(());
        }
        self.0.truncate(levels.len());
        for (i, level) in levels.iter().enumerate() {
            match self.0.get_mut(i) {
                Some(old) => {
                    old.clear();
                    old.push_str(level);
                }
                None => self.0.push((*level).to_owned()),
            }
        }
        Ok(())
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

/// Rules shared by levels and names: non-empty, not a dot segment, no `/` or `\` (docs/design.md §4
/// "Names in bodies": a catalog that derives a location by joining names would place
/// `orders/data` inside `orders`), no control characters (U+0001 included, which Gravitino
/// uses internally as a separator). Paths cannot carry these, bodies and list entries can.
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
    if has_path_separator(s) {
        return Err(NameError::PathSeparator(s.to_owned()));
    }
    Ok(())
}

/// Whether `s` has a character [`is_control`] accepts, read byte by byte instead of decoding:
/// in UTF-8, C0 controls and DEL are the bytes below 0x20 and 0x7f, and a C1 control
/// (U+0080..U+009F) is 0xc2 then 0x80..=0x9f, where 0xc2 can only be a leading byte. Only
/// names that [`crate::core::wordscan::name_plain`] did not pass come here, so no word-wise
/// shortcut is repeated.
fn has_control(s: &str) -> bool {
    let bytes = s.as_bytes();
    bytes.iter().any(|&b| b < 0x20 || b == 0x7f) || bytes.windows(2).any(|w| matches!(w, [0xc2, b] if *b < 0xa0))
}

fn has_path_separator(s: &str) -> bool {
    memchr::memchr2(b'/', b'\\', s.as_bytes()).is_some()
}

/// The rules of `check_common` as a yes or no, without building an error. A list filter asks
/// for every name it reads: the usual name, printable ASCII without a separator, passes in one
/// pass over its words; any other is checked rule by rule.
fn common_ok(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && (crate::core::wordscan::name_plain(s.as_bytes()) || (!has_control(s) && !has_path_separator(s)))
}

/// Whether [`check_level`] accepts `level`; the same rules, without building an error.
fn level_ok(level: &str, separators: &[String]) -> bool {
    common_ok(level)
        && !level.bytes().any(|b| b == b'.' || b == b':')
        && !separators.iter().any(|sep| !sep.is_empty() && level.contains(sep.as_str()))
}

/// Whether [`check_name`] accepts `name`; the same rules, without building an error.
pub fn name_ok(name: &str) -> bool {
    common_ok(name)
}

/// A decoded namespace level (docs/design.md §7).
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
    fn names_and_levels_that_a_catalog_could_read_as_directories_are_refused() {
        for s in ["orders/data", "/orders", "orders\\data", "a/", "\\"] {
            assert!(matches!(check_name(s), Err(NameError::PathSeparator(_))), "{s}");
            assert!(matches!(check_level(s, &[]), Err(NameError::PathSeparator(_))), "{s}");
            assert!(!name_ok(s) && !level_ok(s, &[]), "{s}");
        }
    }

    #[test]
    fn names_may_contain_dots_and_colons() {
        assert!(check_name("x.y").is_ok());
        assert!(check_name("a:b").is_ok());
        assert!(check_name(".").is_err());
        assert!(check_name("a\u{1f}b").is_err());
    }

    /// Strings made of the characters the name rules look at, and their neighbours in UTF-8.
    fn tricky() -> impl proptest::strategy::Strategy<Value = String> {
        let chars = proptest::sample::select(vec![
            'a', '.', ':', '|', '/', '\\', '\u{0}', '\u{1}', '\u{1f}', ' ', '\u{7e}', '\u{7f}', '\u{80}', '\u{85}',
            '\u{9f}', '\u{a0}', '\u{bf}', '\u{c0}', '\u{100}', '\u{2028}', '\u{feff}', 'é', '😀',
        ]);
        proptest::strategy::Strategy::prop_map(proptest::collection::vec(chars, 0..12), |c| c.into_iter().collect())
    }

    proptest::proptest! {
        #[test]
        fn byte_wise_checks_agree_with_the_checks(s in tricky(), t in tricky()) {
            proptest::prop_assert_eq!(has_control(&s), s.chars().any(is_control));
            proptest::prop_assert_eq!(name_ok(&s), check_name(&s).is_ok());
            let seps = ["|".to_owned(), String::new()];
            proptest::prop_assert_eq!(level_ok(&s, &seps), check_level(&s, &seps).is_ok());
            proptest::prop_assert_eq!(level_ok(&s, &[]), check_level(&s, &[]).is_ok());
            let mut ns = Namespace::new(vec!["old".into(), "x".into()], &[]).unwrap();
            let levels = [s.as_str(), t.as_str()];
            for given in [&levels[..], &levels[..1], &[]] {
                let owned: Vec<String> = given.iter().map(|l| (*l).to_owned()).collect();
                let before = ns.clone();
                match (ns.set_levels(given, &seps), Namespace::new(owned, &seps)) {
                    (Ok(()), Ok(new)) => proptest::prop_assert_eq!(&ns, &new),
                    (Err(a), Err(b)) => {
                        proptest::prop_assert_eq!(a, b);
                        proptest::prop_assert_eq!(&ns, &before);
                    }
                    (a, b) => proptest::prop_assert!(false, "set_levels {:?}, new {:?}", a, b),
                }
            }
        }
    }

    #[test]
    fn every_char_is_a_control_byte_wise_exactly_when_it_is_one() {
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            assert_eq!(has_control(c.encode_utf8(&mut [0; 4])), is_control(c), "{c:?}");
        }
        // at every offset of a word and across words, where the check reads eight bytes at once
        for c in (0..0x800).filter_map(char::from_u32) {
            for at in 0..=17 {
                let s = format!("{}{c}{}", &"abcdefghijklmnopq"[..at], "xyz");
                assert_eq!(has_control(&s), is_control(c), "{s:?}");
            }
        }
    }

    #[test]
    fn namespace_parent_and_schema_name() {
        let ns = Namespace::new(vec!["a".into(), "b".into(), "c".into()], &[]).unwrap();
        assert_eq!(ns.schema_name(), "a:b:c");
        assert_eq!(ns.full_name("prod", None), "prod.a:b:c");
        assert_eq!(ns.full_name("prod", Some("t")), "prod.a:b:c.t");
        assert_eq!(ns.parent().unwrap().schema_name(), "a:b");
        assert_eq!(Namespace::new(vec!["a".into()], &[]).unwrap().parent(), None);
        assert!(Namespace::new(vec![], &[]).is_err());
    }
}
