//! The `X-Gravitino-Active-Roles` grammar. Property: an accepted value's canonical form parses
//! back to the same value, and no accepted role name is empty, padded, holds `,`, whitespace
//! other than inner spaces and tabs, or a control character other than a tab, or is a keyword.
#![no_main]

use icegate::core::roles::{OwnershipMode, Requested, parse_header};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&m, value)) = data.split_first() else { return };
    let mode = [OwnershipMode::Always, OwnershipMode::Narrowed, OwnershipMode::Caller][usize::from(m) % 3];
    let Ok(parsed) = parse_header(Some(value), mode) else { return };
    if let Requested::Roles(roles) = &parsed.requested {
        assert!(!roles.is_empty(), "{value:?}");
        for role in roles {
            assert!(!role.is_empty(), "{value:?}");
            assert_eq!(role.trim_matches([' ', '\t']), role, "{value:?}");
            assert!(!role.contains(','), "{value:?}: {role:?}");
            assert!(
                !role.chars().any(|c| c != '\t' && (c.is_control() || (c.is_whitespace() && c != ' '))),
                "{value:?}"
            );
            assert!(role != "ALL" && role != "NONE", "{value:?}");
        }
        let mut seen = std::collections::HashSet::new();
        assert!(roles.iter().all(|r| seen.insert(r)), "duplicates collapse: {value:?}");
    }
    if parsed.ownership.is_some() {
        assert_eq!(mode, OwnershipMode::Caller, "{value:?}");
    }
    let canonical = parsed.canonical();
    let reparsed = parse_header(Some(canonical.as_bytes()), mode);
    assert_eq!(reparsed.as_ref(), Ok(&parsed), "{value:?} -> {canonical:?}");
});
