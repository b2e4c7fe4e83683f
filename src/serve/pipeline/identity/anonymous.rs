//! `anonymous` (off by default): a request without any credential is the user `anonymous`.

use super::error::Recognized;
use crate::core::roles::Principal;
use http::HeaderMap;

pub(super) fn recognize(headers: &HeaderMap) -> Recognized {
    if headers.contains_key(http::header::AUTHORIZATION) {
        return Recognized::No;
    }
    Recognized::Yes(Principal { user: "anonymous".into(), ..Principal::default() })
}
