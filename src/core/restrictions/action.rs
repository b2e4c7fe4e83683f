//! The column actions of the Iceberg REST spec's `ReadRestrictions` (apache/iceberg PR #13879),
//! which Iceberg types each applies to, and the column paths a policy names columns by.

use std::fmt;

/// A `required-column-projections` action. The reader applies it; icegate only issues it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    MaskAlphanum,
    MaskToFixedValue,
    ReplaceWithNull,
    ShowFirst4,
    ShowLast4,
    TruncateToYear,
    TruncateToMonth,
    Sha256Global,
    Sha256QueryLocal,
}

impl Action {
    pub const ALL: [Action; 9] = [
        Self::MaskAlphanum,
        Self::MaskToFixedValue,
        Self::ReplaceWithNull,
        Self::ShowFirst4,
        Self::ShowLast4,
        Self::TruncateToYear,
        Self::TruncateToMonth,
        Self::Sha256Global,
        Self::Sha256QueryLocal,
    ];

    /// The wire name (the spec's `action` discriminator).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MaskAlphanum => "mask-alphanum",
            Self::MaskToFixedValue => "mask-to-fixed-value",
            Self::ReplaceWithNull => "replace-with-null",
            Self::ShowFirst4 => "show-first-4",
            Self::ShowLast4 => "show-last-4",
            Self::TruncateToYear => "truncate-to-year",
            Self::TruncateToMonth => "truncate-to-month",
            Self::Sha256Global => "sha-256-global",
            Self::Sha256QueryLocal => "sha-256-query-local",
        }
    }

    /// Exact, as the spec spells it: an action is a wire value, not a keyword of the policy.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == s)
    }

    /// Two actions on one column: the same action stays, different ones become
    /// `replace-with-null` (docs/design.md §8), which shows nothing of the value.
    pub fn combine(self, other: Self) -> Self {
        if self == other { self } else { Self::ReplaceWithNull }
    }

    /// Whether the spec lets a server return this action for a column of Iceberg type `ty`
    /// (`required`: the column is declared required). The spec forbids any other pair, so
    /// icegate refuses to issue one rather than send what a reader must reject.
    pub fn applies_to(self, ty: &str, required: bool) -> bool {
        let base = ty.split(['(', '[']).next().unwrap_or(ty);
        match self {
            Self::MaskAlphanum | Self::ShowFirst4 | Self::ShowLast4 => base == "string",
            Self::TruncateToYear | Self::TruncateToMonth => {
                matches!(base, "date" | "timestamp" | "timestamptz" | "timestamp_ns" | "timestamptz_ns")
            }
            Self::Sha256Global | Self::Sha256QueryLocal => matches!(base, "string" | "int" | "long" | "binary"),
            Self::ReplaceWithNull => !required,
            Self::MaskToFixedValue => base != "struct",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A column by its path: a top-level column's name, or a nested struct field's names joined
/// with `.` (`address.city`). A name that itself holds a `.` cannot be named.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ColumnPath(Vec<String>);

impl ColumnPath {
    /// Reads a dotted path; `None` when a part is empty or holds a control character.
    pub fn parse(text: &str) -> Option<Self> {
        let parts: Vec<String> = text.split('.').map(str::to_owned).collect();
        let bad = |p: &String| p.is_empty() || p.chars().any(char::is_control);
        (!parts.iter().any(bad)).then_some(Self(parts))
    }

    pub fn parts(&self) -> &[String] {
        &self.0
    }
}

impl fmt::Display for ColumnPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("."))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_reads_back_from_its_wire_name() {
        for a in Action::ALL {
            assert_eq!(Action::parse(a.as_str()), Some(a));
        }
        assert_eq!(Action::parse("MASK-ALPHANUM"), None);
        assert_eq!(Action::parse("mask-to-default"), None);
    }

    #[test]
    fn different_actions_on_one_column_combine_to_null() {
        assert_eq!(Action::MaskAlphanum.combine(Action::MaskAlphanum), Action::MaskAlphanum);
        assert_eq!(Action::MaskAlphanum.combine(Action::ShowLast4), Action::ReplaceWithNull);
    }

    #[test]
    fn actions_apply_only_to_the_types_the_spec_lists() {
        assert!(Action::MaskAlphanum.applies_to("string", true));
        assert!(!Action::MaskAlphanum.applies_to("long", false));
        assert!(Action::TruncateToYear.applies_to("timestamptz", false));
        assert!(Action::Sha256Global.applies_to("long", false));
        assert!(!Action::ReplaceWithNull.applies_to("string", true));
        assert!(Action::MaskToFixedValue.applies_to("decimal(10,2)", true));
    }

    #[test]
    fn column_paths_split_on_dots_and_refuse_empty_parts() {
        assert_eq!(ColumnPath::parse("address.city").map(|p| p.parts().len()), Some(2));
        assert_eq!(ColumnPath::parse("a..b"), None);
        assert_eq!(ColumnPath::parse(""), None);
        assert_eq!(ColumnPath::parse("x\u{1}"), None);
    }
}
