//! The active-roles header grammar and narrowing (docs/design.md §5).

use crate::support::load;
use icegate::core::roles::{
    ActiveRoles, HeaderError, NarrowError, OwnershipMode, Principal, Requested, check_user, narrow, parse_header,
};

fn parse(v: &str) -> Result<ActiveRoles, HeaderError> {
    parse_header(Some(v.as_bytes()), OwnershipMode::Always)
}

fn roles(names: &[&str]) -> Requested {
    Requested::Roles(names.iter().map(|s| (*s).to_owned()).collect())
}

#[test]
fn header_grammar_table() {
    let ok = [
        ("", Requested::Default),
        (" \t ", Requested::Default),
        ("analyst", roles(&["analyst"])),
        (" analyst , analyst ", roles(&["analyst"])),
        ("b,a,b", roles(&["b", "a"])),
        ("ALL", Requested::All),
        ("NONE", Requested::None),
        ("all", roles(&["all"])),
        ("data team", roles(&["data team"])),
    ];
    for (value, want) in ok {
        assert_eq!(parse(value).map(|h| h.requested), Ok(want), "{value:?}");
    }
    let bad = [
        "analyst,",
        ",",
        "a,,b",
        "ALL,analyst",
        "NONE,ALL",
        "ALL,ALL",
        "NONE,NONE",
        "analyst\u{a0}",
        "a\u{2003}b",
        "a\nb",
        "a\u{1}b",
        "a; ownership=include",
    ];
    for value in bad {
        let e = parse(value).unwrap_err();
        assert!(e.to_string().contains("X-Gravitino-Active-Roles"), "{value:?}: {e}");
    }
    assert_eq!(parse_header(Some(b"\xff"), OwnershipMode::Always), Err(HeaderError::NotUtf8));
    assert_eq!(parse_header(None, OwnershipMode::Always), Ok(ActiveRoles::DEFAULT));
}

#[test]
fn the_ownership_parameter_needs_caller_mode_and_exact_lower_case() {
    let caller = |v: &str| parse_header(Some(v.as_bytes()), OwnershipMode::Caller);
    assert_eq!(caller("a ; ownership = include").unwrap().ownership, Some(true));
    assert_eq!(caller("NONE;ownership=exclude").unwrap().ownership, Some(false));
    for bad in [
        "a;ownership=INCLUDE",
        "a;Ownership=include",
        "a;owner=include",
        ";ownership=include",
        " ;ownership=include",
        "a;ownership=include;x",
        "a;",
    ] {
        assert!(caller(bad).is_err(), "{bad:?}");
    }
    assert_eq!(
        parse_header(Some(b"a;ownership=include"), OwnershipMode::Narrowed),
        Err(HeaderError::ParameterNotEnabled)
    );
}

const POLICY: &str = "version: 1\nmetalake: lake\nusers:\n  - { name: u, roles: [a, b], groups: [g] }\n  - { name: d, roles: [a, b, c], default_active_roles: [c, a] }\n  - { name: off, enabled: false }\ngroups:\n  - { name: g, roles: [c] }\nroles: [{ name: a }, { name: b }, { name: c }, { name: x }]\n";

fn narrowed(
    user: &str,
    header: Option<&str>,
    claim: Option<&[&str]>,
) -> Result<icegate::core::roles::Narrowed, NarrowError> {
    let snap = load(POLICY);
    let p = Principal {
        user: user.into(),
        groups: vec![],
        claim_roles: claim.map(|c| c.iter().map(|s| (*s).to_owned()).collect()),
    };
    let id = check_user(&snap, &p)?;
    let h = parse_header(header.map(str::as_bytes), OwnershipMode::Always).unwrap();
    narrow(&snap, &p, id, &h, OwnershipMode::Always)
}

#[test]
fn unheld_roles_are_named_in_the_order_sent() {
    let e = narrowed("u", Some("x, a, nope"), None).unwrap_err();
    assert_eq!(e.to_string(), "user 'u' cannot assume active role(s) that are not held: x, nope");
}

#[test]
fn the_upstream_header_carries_the_enforced_set() {
    assert_eq!(narrowed("u", None, None).unwrap().upstream_header, None);
    assert_eq!(narrowed("u", Some("ALL"), None).unwrap().upstream_header, None);
    assert_eq!(narrowed("u", Some("c, a"), None).unwrap().upstream_header.as_deref(), Some("c,a"));
    assert_eq!(narrowed("u", Some("a,b,c"), None).unwrap().upstream_header.as_deref(), Some("a,b,c"));
    assert_eq!(narrowed("u", Some("NONE"), None).unwrap().upstream_header.as_deref(), Some("NONE"));
    // operator defaults go in the order the user's roles are listed, not the default's order
    assert_eq!(narrowed("d", None, None).unwrap().upstream_header.as_deref(), Some("a,c"));
    // claim defaults keep the claim's order; unheld claim roles are ignored
    assert_eq!(narrowed("u", None, Some(&["c", "x", "a"])).unwrap().upstream_header.as_deref(), Some("c,a"));
    assert_eq!(narrowed("u", None, Some(&[])).unwrap().upstream_header.as_deref(), Some("NONE"));
}

#[test]
fn a_claim_is_a_ceiling_for_the_header() {
    let e = narrowed("u", Some("b"), Some(&["a"])).unwrap_err();
    assert!(matches!(e, NarrowError::NotHeld { .. }));
    assert!(narrowed("u", Some("a"), Some(&["a", "c"])).is_ok());
}

#[test]
fn unknown_and_disabled_users_are_refused() {
    assert!(matches!(narrowed("zed", None, None), Err(NarrowError::UnknownUser(_))));
    assert!(matches!(narrowed("off", None, None), Err(NarrowError::DisabledUser(_))));
}

#[test]
fn narrowing_is_reported_for_the_ownership_modes() {
    assert!(!narrowed("u", None, None).unwrap().narrowed);
    assert!(!narrowed("u", Some("ALL"), None).unwrap().narrowed);
    assert!(narrowed("u", Some("a,b,c"), None).unwrap().narrowed, "naming every held role still narrows");
    assert!(narrowed("u", Some("NONE"), None).unwrap().narrowed);
    assert!(narrowed("d", None, None).unwrap().narrowed, "an operator setting applies");
    assert!(narrowed("u", None, Some(&["a"])).unwrap().narrowed, "a claim applies");
}
