//! Storage locations a request chooses, and the location rule's containment test (docs/design.md
//! §4 "Locations are placed only by owners, and only inside what they own"): a location is read
//! as a scheme, an authority and path segments, and one lies inside another only by segments,
//! never by string prefix, so that `s3://lake/sales_archive` is not inside `s3://lake/sales`.

use thiserror::Error;

/// Why a location is refused before any comparison (400): file systems and some object stores
/// resolve these forms, and icegate will not guess how.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum LocationError {
    #[error("location `{0}` has no scheme (`s3://...`)")]
    NoScheme(String),
    #[error("location `{0}` has an empty path segment")]
    EmptySegment(String),
    #[error("location `{0}` has a `.` or `..` segment")]
    DotSegment(String),
    #[error("location `{0}` has a `\\`, `%`, `?`, `#` or control character")]
    Character(String),
}

/// A location read into its parts. Invariant: no segment is empty, `.`, `..`, or holds `\`,
/// `%`, `?`, `#` or a control character; a trailing `/` is not a segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location<'a> {
    /// The scheme as written; [`Location::store`] is what is compared.
    scheme: &'a str,
    /// Empty for `file:/x` and `file:///x` alike.
    authority: &'a str,
    segments: Vec<&'a str>,
}

/// The stores that several schemes name: compared as the storage compares them.
fn canonical_scheme(scheme: &str) -> Option<&'static str> {
    const ALIASES: [(&str, &str); 10] = [
        ("s3", "s3"),
        ("s3a", "s3"),
        ("s3n", "s3"),
        ("abfs", "abfs"),
        ("abfss", "abfs"),
        ("wasb", "wasb"),
        ("wasbs", "wasb"),
        ("gs", "gs"),
        ("file", "file"),
        ("hdfs", "hdfs"),
    ];
    ALIASES.iter().find(|(s, _)| s.eq_ignore_ascii_case(scheme)).map(|(_, canonical)| *canonical)
}

impl<'a> Location<'a> {
    /// Reads `text`; a scheme icegate does not know is its own store, compared by name.
    pub fn parse(text: &'a str) -> Result<Self, LocationError> {
        let err = |make: fn(String) -> LocationError| make(text.to_owned());
        if text.chars().any(|c| c.is_control() || matches!(c, '\\' | '%' | '?' | '#')) {
            return Err(err(LocationError::Character));
        }
        let Some((scheme, rest)) = text.split_once(':') else { return Err(err(LocationError::NoScheme)) };
        let valid_scheme = scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if !valid_scheme {
            return Err(err(LocationError::NoScheme));
        }
        let (authority, path) = match rest.strip_prefix("//") {
            Some(after) => after.split_once('/').unwrap_or((after, "")),
            None if rest.starts_with('/') => ("", rest),
            None => return Err(err(LocationError::NoScheme)),
        };
        if !scheme.eq_ignore_ascii_case("file") && authority.is_empty() {
            return Err(err(LocationError::EmptySegment));
        }
        let path = path.strip_prefix('/').unwrap_or(path);
        let path = path.strip_suffix('/').unwrap_or(path);
        let mut segments = Vec::new();
        if !path.is_empty() {
            for segment in path.split('/') {
                match segment {
                    "" => return Err(err(LocationError::EmptySegment)),
                    "." | ".." => return Err(err(LocationError::DotSegment)),
                    _ => segments.push(segment),
                }
            }
        }
        Ok(Self { scheme, authority, segments })
    }

    /// The store the scheme names: one name for aliases, the scheme itself for any other.
    fn store(&self) -> &str {
        canonical_scheme(self.scheme).unwrap_or(self.scheme)
    }

    /// Whether `self` lies strictly inside `directory`: the same store, and at least one more
    /// segment below it.
    pub fn is_inside(&self, directory: &Location<'_>) -> bool {
        self.store().eq_ignore_ascii_case(directory.store())
            && self.authority == directory.authority
            && self.segments.len() > directory.segments.len()
            && self.segments.iter().zip(&directory.segments).all(|(a, b)| a == b)
    }

    /// The directory holding `self`, if it has a segment to drop (the namespace directory of a
    /// table's location).
    pub fn parent(&self) -> Option<Location<'a>> {
        let (_, rest) = self.segments.split_last()?;
        Some(Location { scheme: self.scheme, authority: self.authority, segments: rest.to_vec() })
    }

    /// The location written back, with its store's scheme (`s3` for `s3a`).
    pub fn to_text(&self) -> String {
        let mut out = format!("{}://{}", self.store(), self.authority);
        for segment in &self.segments {
            out.push('/');
            out.push_str(segment);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inside(location: &str, directory: &str) -> bool {
        Location::parse(location).unwrap().is_inside(&Location::parse(directory).unwrap())
    }

    #[test]
    fn inside_means_strictly_below_by_segments() {
        assert!(inside("s3://lake/sales/x", "s3://lake/sales"));
        assert!(inside("s3://lake/sales/x/y/", "s3://lake/sales/"));
        assert!(!inside("s3://lake/sales", "s3://lake/sales"), "the directory itself is not inside");
        assert!(!inside("s3://lake/sales/", "s3://lake/sales"));
        assert!(!inside("s3://lake/sales_archive/x", "s3://lake/sales"), "a string prefix is not a directory");
        assert!(!inside("s3://lake/hr/payroll", "s3://lake/sales"));
        assert!(!inside("s3://other/sales/x", "s3://lake/sales"), "another bucket");
        assert!(inside("s3://lake/x", "s3://lake"), "the bucket's root is a directory");
    }

    #[test]
    fn scheme_aliases_name_one_store_and_others_do_not() {
        assert!(inside("s3a://lake/sales/x", "s3://lake/sales"));
        assert!(inside("S3N://lake/sales/x", "s3a://lake/sales"));
        assert!(inside("abfss://c@acct.dfs.core.windows.net/s/x", "abfs://c@acct.dfs.core.windows.net/s"));
        assert!(inside("wasbs://c@a/s/x", "wasb://c@a/s"));
        assert!(!inside("gs://lake/sales/x", "s3://lake/sales"));
        assert!(!inside("hdfs://lake/sales/x", "file://lake/sales"));
        assert!(inside("file:/tmp/wh/sales/t", "file:///tmp/wh/sales"), "Hadoop's file:/ is file:///");
        assert!(!inside("foo://lake/sales/x", "bar://lake/sales"), "unknown schemes differ by name");
        assert!(inside("foo://lake/sales/x", "foo://lake/sales"));
    }

    #[test]
    fn malformed_locations_are_refused() {
        let refused = [
            ("s3://lake/sales/../hr", LocationError::DotSegment as fn(String) -> LocationError),
            ("s3://lake/./sales", LocationError::DotSegment),
            ("s3://lake/sales//x", LocationError::EmptySegment),
            ("s3:///sales", LocationError::EmptySegment),
            ("s3://lake/sales/%2E%2E/hr", LocationError::Character),
            ("s3://lake/sales\\x", LocationError::Character),
            ("s3://lake/sales?x=1", LocationError::Character),
            ("s3://lake/sales#x", LocationError::Character),
            ("s3://lake/sa\nles", LocationError::Character),
            ("lake/sales", LocationError::NoScheme),
            ("", LocationError::NoScheme),
            ("s3:lake/sales", LocationError::NoScheme),
            ("1s3://lake/sales", LocationError::NoScheme),
        ];
        for (text, make) in refused {
            assert_eq!(Location::parse(text), Err(make(text.to_owned())), "{text:?}");
        }
    }

    #[test]
    fn the_parent_is_the_directory_of_a_location() {
        let parent = Location::parse("s3a://lake/sales/t_1234/").unwrap().parent().unwrap();
        assert_eq!(parent.to_text(), "s3://lake/sales");
        assert!(Location::parse("s3://lake").unwrap().parent().is_none());
        assert_eq!(Location::parse("file:/tmp/wh/ns/t").unwrap().parent().unwrap().to_text(), "file:///tmp/wh/ns");
    }
}
