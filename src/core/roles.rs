//! The `X-Gravitino-Active-Roles` header: its grammar, and narrowing a caller's held roles to
//! the active set the evaluator uses (docs/design.md §5).

use crate::core::policy::snapshot::{GroupId, RoleId, UserId};
use crate::core::policy::{RoleSet, Snapshot, Subject};
use thiserror::Error;

/// The header's name, as clients send it.
pub const HEADER: &str = "X-Gravitino-Active-Roles";

/// `narrowing.ownership`: whether ownership still grants under narrowing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OwnershipMode {
    /// Ownership always applies (Gravitino's option A).
    #[default]
    Always,
    /// A narrowed request gets nothing from ownership (option B).
    Narrowed,
    /// Like `narrowed` unless the header ends with `; ownership=include` (option C).
    Caller,
}

impl OwnershipMode {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "always" => Some(Self::Always),
            "narrowed" => Some(Self::Narrowed),
            "caller" => Some(Self::Caller),
            _ => None,
        }
    }
}

/// What the header asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Requested {
    /// No header, or only spaces and tabs: the default active set.
    Default,
    All,
    None,
    /// Role names in the order sent, duplicates collapsed.
    Roles(Vec<String>),
}

/// A parsed header value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActiveRoles {
    pub requested: Requested,
    /// The `ownership=` parameter: `Some(true)` for `include`, `Some(false)` for `exclude`.
    pub ownership: Option<bool>,
}

impl ActiveRoles {
    pub const DEFAULT: ActiveRoles = ActiveRoles { requested: Requested::Default, ownership: None };

    /// The value in canonical form; parsing it gives `self` back.
    pub fn canonical(&self) -> String {
        let mut out = match &self.requested {
            Requested::Default => String::new(),
            Requested::All => "ALL".to_owned(),
            Requested::None => "NONE".to_owned(),
            Requested::Roles(r) => r.join(","),
        };
        match self.ownership {
            Some(true) => out.push_str(";ownership=include"),
            Some(false) => out.push_str(";ownership=exclude"),
            None => {}
        }
        out
    }
}

/// A header value icegate refuses (400). Every message names the header.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum HeaderError {
    #[error("header `X-Gravitino-Active-Roles` is not valid UTF-8")]
    NotUtf8,
    #[error("header `X-Gravitino-Active-Roles` contains a control character or whitespace other than spaces and tabs")]
    BadCharacter,
    #[error("header `X-Gravitino-Active-Roles` has an empty role name in `{0}`")]
    EmptyEntry(String),
    #[error("header `X-Gravitino-Active-Roles`: `ALL` and `NONE` must stand alone, got `{0}`")]
    KeywordNotAlone(String),
    #[error("header `X-Gravitino-Active-Roles` has no roles before `;` in `{0}`")]
    EmptyBeforeParameter(String),
    #[error(
        "header `X-Gravitino-Active-Roles` has an invalid parameter `{0}`; expected `ownership=include` or `ownership=exclude`"
    )]
    BadParameter(String),
    #[error(
        "header `X-Gravitino-Active-Roles`: the `ownership` parameter is accepted only when `narrowing.ownership` is `caller`"
    )]
    ParameterNotEnabled,
    #[error("header `X-Gravitino-Active-Roles` was sent more than once")]
    Repeated,
}

fn trim(s: &str) -> &str {
    s.trim_matches([' ', '\t'])
}

/// Parses one header value (`None`: no header). Never panics, on any bytes.
pub fn parse_header(value: Option<&[u8]>, mode: OwnershipMode) -> Result<ActiveRoles, HeaderError> {
    let Some(bytes) = value else { return Ok(ActiveRoles::DEFAULT) };
    let text = std::str::from_utf8(bytes).map_err(|_| HeaderError::NotUtf8)?;
    if text.chars().any(|c| c != '\t' && (c.is_control() || (c.is_whitespace() && c != ' '))) {
        return Err(HeaderError::BadCharacter);
    }
    let value = trim(text);
    if value.is_empty() {
        return Ok(ActiveRoles::DEFAULT);
    }
    let (roles, ownership) = match value.split_once(';') {
        None => (value, None),
        Some((roles, param)) => {
            let roles = trim(roles);
            if roles.is_empty() {
                return Err(HeaderError::EmptyBeforeParameter(value.to_owned()));
            }
            let include = match param.split_once('=').map(|(k, v)| (trim(k), trim(v))) {
                Some(("ownership", "include")) => true,
                Some(("ownership", "exclude")) => false,
                _ => return Err(HeaderError::BadParameter(trim(param).to_owned())),
            };
            if mode != OwnershipMode::Caller {
                return Err(HeaderError::ParameterNotEnabled);
            }
            (roles, Some(include))
        }
    };
    let entries: Vec<&str> = roles.split(',').map(trim).collect();
    if entries.iter().any(|e| e.is_empty()) {
        return Err(HeaderError::EmptyEntry(roles.to_owned()));
    }
    // The keyword check comes before duplicates collapse: `ALL,ALL` is malformed.
    if entries.len() > 1 && entries.iter().any(|e| *e == "ALL" || *e == "NONE") {
        return Err(HeaderError::KeywordNotAlone(roles.to_owned()));
    }
    let requested = match entries.as_slice() {
        ["ALL"] => Requested::All,
        ["NONE"] => Requested::None,
        _ => {
            let mut names: Vec<String> = Vec::with_capacity(entries.len());
            for e in entries {
                if !names.iter().any(|n| n == e) {
                    names.push(e.to_owned());
                }
            }
            Requested::Roles(names)
        }
    };
    Ok(ActiveRoles { requested, ownership })
}

/// The caller as the identity stage found it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Principal {
    pub user: String,
    /// Groups from the identity (added to the snapshot's static groups).
    pub groups: Vec<String>,
    /// An identity-bound active-roles claim; `Some(vec![])` is an empty claim (`NONE`).
    pub claim_roles: Option<Vec<String>>,
}

/// A caller the policy refuses before any operation check (403).
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum NarrowError {
    #[error("user `{0}` is not known to icegate")]
    UnknownUser(String),
    #[error("user `{0}` is disabled")]
    DisabledUser(String),
    /// The message form is fixed by docs/design.md §5.
    #[error("user '{user}' cannot assume active role(s) that are not held: {}", roles.join(", "))]
    NotHeld { user: String, roles: Vec<String> },
}

/// The known-user check (docs/design.md §4 "Before any check"): the snapshot's user, if listed.
pub fn check_user(snap: &Snapshot, principal: &Principal) -> Result<Option<UserId>, NarrowError> {
    match snap.user_id(&principal.user) {
        Some(id) if !snap.user(id).enabled => Err(NarrowError::DisabledUser(principal.user.clone())),
        Some(id) => Ok(Some(id)),
        None if snap.require_known_user() => Err(NarrowError::UnknownUser(principal.user.clone())),
        None => Ok(None),
    }
}

/// The caller narrowed: what the evaluator and the upstream header need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Narrowed {
    /// Static groups, then identity groups, without duplicates.
    pub groups: Vec<Box<str>>,
    /// In policy order: the user's roles, then each group's.
    pub held_ordered: Vec<RoleId>,
    pub held: RoleSet,
    /// In the order the active set is reported upstream (docs/design.md §5).
    pub active_ordered: Vec<RoleId>,
    pub active: RoleSet,
    /// Whether the request counts as narrowed (for the ownership modes).
    pub narrowed: bool,
    pub ownership: bool,
    /// The canonical value to send upstream; `None` for no header.
    pub upstream_header: Option<String>,
}

impl Narrowed {
    pub fn subject<'a>(&'a self, user: &'a str) -> Subject<'a> {
        Subject {
            user,
            groups: &self.groups,
            held: &self.held,
            active: &self.active,
            ownership: self.ownership,
            owners: crate::core::ownership::OwnerIndex::empty(),
        }
    }
}

/// The operator settings and claim that bound the active set.
struct Bounds {
    ceilings: Vec<RoleSet>,
    blocked: RoleSet,
}

impl Bounds {
    fn allows(&self, held: &RoleSet, role: RoleId) -> bool {
        held.contains(role) && !self.blocked.contains(role) && self.ceilings.iter().all(|c| c.contains(role))
    }
}

/// Narrows `principal` (already through [`check_user`]) to its active roles.
pub fn narrow(
    snap: &Snapshot,
    principal: &Principal,
    user: Option<UserId>,
    header: &ActiveRoles,
    mode: OwnershipMode,
) -> Result<Narrowed, NarrowError> {
    let user = user.map(|id| snap.user(id));
    let mut group_ids: Vec<GroupId> = user.map(|u| u.groups.clone()).unwrap_or_default();
    let mut groups: Vec<Box<str>> = group_ids.iter().map(|g| snap.group(*g).name.clone()).collect();
    for g in &principal.groups {
        if !groups.iter().any(|have| **have == **g) {
            groups.push(g.as_str().into());
            if let Some(id) = snap.group_id(g) {
                group_ids.push(id);
            }
        }
    }
    let mut held_ordered: Vec<RoleId> = Vec::new();
    let direct = user.map(|u| u.roles.as_slice()).unwrap_or_default();
    for r in direct.iter().chain(group_ids.iter().flat_map(|g| snap.group(*g).roles.iter())) {
        if !held_ordered.contains(r) {
            held_ordered.push(*r);
        }
    }
    let held = RoleSet::new(held_ordered.clone());

    let settings: Vec<_> =
        user.map(|u| &u.narrowing).into_iter().chain(group_ids.iter().map(|g| &snap.group(*g).narrowing)).collect();
    let operator_applies = settings.iter().any(|n| n.is_set());
    let claim: Option<Vec<RoleId>> = principal
        .claim_roles
        .as_ref()
        .map(|names| names.iter().filter_map(|n| snap.role_id(n)).filter(|r| held.contains(*r)).collect());
    let mut ceilings: Vec<RoleSet> =
        settings.iter().filter_map(|n| n.max_active_roles.clone()).map(RoleSet::new).collect();
    if let Some(c) = &claim {
        ceilings.push(RoleSet::new(c.clone()));
    }
    let blocked = RoleSet::new(settings.iter().flat_map(|n| n.blocked_roles.iter().copied()).collect());
    let bounds = Bounds { ceilings, blocked };
    let within = |roles: &[RoleId]| -> Vec<RoleId> {
        let mut out: Vec<RoleId> = Vec::new();
        for r in roles {
            if bounds.allows(&held, *r) && !out.contains(r) {
                out.push(*r);
            }
        }
        out
    };
    // Operator defaults: the user's if set, else the union of its groups', in held order.
    let defaults: Option<Vec<RoleId>> = match user.and_then(|u| u.narrowing.default_active_roles.as_ref()) {
        Some(d) => Some(held_ordered.iter().copied().filter(|r| d.contains(r)).collect()),
        None => {
            let mut any = false;
            let mut union = Vec::new();
            for g in &group_ids {
                if let Some(d) = &snap.group(*g).narrowing.default_active_roles {
                    any = true;
                    union.extend(d.iter().copied());
                }
            }
            any.then(|| held_ordered.iter().copied().filter(|r| union.contains(r)).collect())
        }
    };

    let (active_ordered, named) = match &header.requested {
        Requested::Default => match (&claim, &defaults) {
            (Some(c), _) => (within(c), false),
            (None, Some(d)) => (within(d), false),
            (None, None) => (within(&held_ordered), false),
        },
        Requested::All => (within(&held_ordered), false),
        Requested::None => (Vec::new(), true),
        Requested::Roles(names) => {
            let mut ids = Vec::with_capacity(names.len());
            let mut refused = Vec::new();
            for name in names {
                match snap.role_id(name) {
                    Some(id) if bounds.allows(&held, id) => ids.push(id),
                    _ => refused.push(name.clone()),
                }
            }
            if !refused.is_empty() {
                return Err(NarrowError::NotHeld { user: principal.user.clone(), roles: refused });
            }
            (ids, true)
        }
    };
    let active = RoleSet::new(active_ordered.clone());
    let narrowed = named || claim.is_some() || operator_applies;
    let ownership = match mode {
        OwnershipMode::Always => true,
        OwnershipMode::Narrowed => !narrowed,
        OwnershipMode::Caller => !narrowed || header.ownership == Some(true),
    };
    let sent_none_or_all = matches!(header.requested, Requested::Default | Requested::All);
    let upstream_header = if sent_none_or_all && active == held {
        None
    } else if active_ordered.is_empty() {
        Some("NONE".to_owned())
    } else {
        Some(active_ordered.iter().map(|r| snap.role_name(*r)).collect::<Vec<_>>().join(","))
    };
    Ok(Narrowed { groups, held_ordered, held, active_ordered, active, narrowed, ownership, upstream_header })
}
