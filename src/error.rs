//! The one place where a refusal becomes an Iceberg error response (DESIGN.md §7):
//! `{"error": {"message": "...", "type": "...", "code": N}}`.

use crate::core::iceberg::body::BodyError;
use crate::core::refused::{self, Answer, Refused};

/// An answer icegate gives itself, without forwarding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    /// The Iceberg error `type`.
    pub kind: &'static str,
    pub message: String,
    /// A policy decision `icegate explain` can show the reasons of (a denied operation).
    pub explainable: bool,
    /// The connection cannot be trusted to carry another request (its framing was ambiguous).
    pub close_connection: bool,
    /// What icegate's log gets when this refusal is answered, and the caller does not: the
    /// event and the detail (the upstream's own words).
    pub log: Option<Box<(String, String)>>,
}

impl Refusal {
    pub fn new(status: u16, kind: &'static str, message: impl Into<String>) -> Self {
        Self { status, kind, message: message.into(), explainable: false, close_connection: false, log: None }
    }

    fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequestException", message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "ForbiddenException", message)
    }

    /// Appends how to see why: the `icegate explain` command with the request's own
    /// arguments, which an operator can run against the policy (the reasons are not sent, so
    /// the policy cannot be learned from answers).
    pub fn with_explain_hint(
        mut self,
        user: &str,
        groups: &[String],
        active_roles: Option<&str>,
        method: &str,
        target: &str,
    ) -> Self {
        if !self.explainable {
            return self;
        }
        let quote = |s: &str| {
            if s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:@%,=".contains(c)) {
                s.to_owned()
            } else {
                format!("'{}'", s.replace('\'', "'\\''"))
            }
        };
        let mut command = format!("icegate explain --policy POLICY --user {}", quote(user));
        for g in groups {
            command.push_str(&format!(" --group {}", quote(g)));
        }
        if let Some(roles) = active_roles {
            command.push_str(&format!(" --active-roles={}", quote(roles)));
        }
        command.push_str(&format!(" {method} {}", quote(target)));
        self.message = format!("{}; `{command}` shows why", self.message);
        self
    }

    /// An upstream redirect, which is never relayed: it could send the client around icegate.
    pub fn upstream_redirect(status: u16) -> Self {
        Self::new(
            502,
            "BadGatewayException",
            format!("the upstream answered with a redirect ({status}), which icegate does not relay"),
        )
    }

    /// An upstream response icegate must read and could not: the message never quotes what the
    /// upstream sent (a value could be a secret, a name could be hidden from the caller); the
    /// detail goes to icegate's log.
    fn unreadable_upstream(what: &str, detail: &dyn std::fmt::Display) -> Self {
        let message = format!("the upstream's {what} could not be read; icegate's log has the details");
        Self::new(502, "BadGatewayException", message).logged(format!("upstream {what} refused"), detail)
    }

    /// This refusal, with `detail` for icegate's log under `event`.
    fn logged(self, event: String, detail: &dyn std::fmt::Display) -> Self {
        Self { log: Some(Box::new((event, detail.to_string()))), ..self }
    }

    /// The response body.
    fn to_json(&self) -> String {
        serde_json::json!({
            "error": { "message": self.message, "type": self.kind, "code": self.status }
        })
        .to_string()
    }
}

/// A stop of the served path: the core's refusals and the serving layer's, answered alike.
pub type Stop = crate::core::decide::Stop<Refusal>;

impl From<Refused> for Refusal {
    /// The core's refusals, by variant; an unreadable list response's detail goes to the log
    /// only: it may quote the upstream's bytes, such as the name of an entry the caller may
    /// not see.
    fn from(e: Refused) -> Self {
        if let Refused::List(detail) = &e {
            return Self::unreadable_upstream("list response", detail);
        }
        Self { explainable: e.explainable(), ..Self::new(e.status(), e.kind(), e.to_string()) }
    }
}

impl Answer for Refusal {
    fn status(&self) -> u16 {
        self.status
    }

    fn message(&self) -> String {
        self.message.clone()
    }
}

impl From<&crate::serve::inspect::ReadError> for Refusal {
    fn from(e: &crate::serve::inspect::ReadError) -> Self {
        use crate::serve::inspect::ReadError;
        match e {
            ReadError::Body(body) => Self::from(body),
            ReadError::Io(_) => Self::bad_request(e.to_string()),
            ReadError::Timeout(_) => Self::new(408, "RequestTimeoutException", e.to_string()),
        }
    }
}

impl From<&crate::serve::accept::AcceptError> for Refusal {
    /// Ambiguous framing also closes the connection: what follows the body could be read as
    /// another request by one of the two hops.
    fn from(e: &crate::serve::accept::AcceptError) -> Self {
        let refusal = Self::bad_request(e.to_string());
        match e {
            crate::serve::accept::AcceptError::Framing => Self { close_connection: true, ..refusal },
            _ => refusal,
        }
    }
}

impl From<&BodyError> for Refusal {
    fn from(e: &BodyError) -> Self {
        Self::new(refused::body_status(e), refused::body_kind(e), e.to_string())
    }
}

impl From<&crate::ops::owners::OwnersError> for Refusal {
    /// The ownership store cannot be written: creates, drops and renames wait (DESIGN.md §4).
    fn from(e: &crate::ops::owners::OwnersError) -> Self {
        let message = match e {
            crate::ops::owners::OwnersError::Unrecorded(_) => e.to_string(),
            _ => format!("creates, drops and renames are unavailable while the ownership store cannot be written: {e}"),
        };
        Self::new(503, "ServiceUnavailableException", message)
    }
}

/// The HTTP response of a refusal: the Iceberg error JSON, never cached.
pub fn response(refusal: &Refusal) -> http::Response<crate::serve::forward::Body> {
    let body = crate::serve::forward::full(bytes::Bytes::from(refusal.to_json()));
    let mut response = http::Response::new(body);
    *response.status_mut() = http::StatusCode::from_u16(refusal.status).unwrap_or(http::StatusCode::BAD_GATEWAY);
    let headers = response.headers_mut();
    headers.insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    headers.insert(http::header::CACHE_CONTROL, http::HeaderValue::from_static("no-store"));
    if refusal.close_connection {
        headers.insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
    }
    if refusal.status == 401 {
        headers.insert(http::header::WWW_AUTHENTICATE, http::HeaderValue::from_static("Basic realm=\"icegate\""));
    }
    response
}

impl From<&crate::serve::identity::IdentityError> for Refusal {
    fn from(e: &crate::serve::identity::IdentityError) -> Self {
        Self::new(401, "NotAuthorizedException", e.to_string())
    }
}

impl From<&crate::serve::forward::ForwardError> for Refusal {
    fn from(e: &crate::serve::forward::ForwardError) -> Self {
        use crate::serve::forward::ForwardError;
        match e {
            ForwardError::Timeout(_) => Self::new(504, "GatewayTimeoutException", e.to_string()),
            ForwardError::Unreachable(_) | ForwardError::Request(_) | ForwardError::Rebuild(_) => {
                Self::new(502, "BadGatewayException", e.to_string())
            }
        }
    }
}

impl From<&crate::serve::rewrite::body::RewriteError> for Refusal {
    fn from(e: &crate::serve::rewrite::body::RewriteError) -> Self {
        Self::unreadable_upstream("response", e)
    }
}

impl From<&crate::serve::vending::VendError> for Refusal {
    fn from(e: &crate::serve::vending::VendError) -> Self {
        use crate::serve::vending::VendError;
        match e {
            VendError::TableMissing => Self::new(404, "NoSuchTableException", e.to_string()),
            // the envelope's errors may quote the upstream's values (a secret key)
            VendError::Envelope(_) => Self::unreadable_upstream("table response", e),
            // STS's own words (ARNs, policy text) are for the operator's log, not the caller
            VendError::Mint(_) => Self::new(
                502,
                "BadGatewayException",
                "cannot mint downscoped credentials; icegate's log has the details",
            )
            .logged("minting downscoped credentials failed".to_owned(), e),
            _ => Self::new(502, "BadGatewayException", e.to_string()),
        }
    }
}

impl From<&crate::core::credentials::storage::SignerError> for Refusal {
    fn from(e: &crate::core::credentials::storage::SignerError) -> Self {
        Self::new(502, "BadGatewayException", e.to_string())
    }
}

impl From<&crate::core::credentials::sign::headers::HeaderError> for Refusal {
    fn from(e: &crate::core::credentials::sign::headers::HeaderError) -> Self {
        Self::forbidden(format!("not authorized to sign: {e}"))
    }
}

impl From<&crate::core::credentials::sign::bind::BindError> for Refusal {
    /// An answer that does not bind what was checked is never relayed: the upstream's signer
    /// is at fault, and the signature would open more than was authorized.
    fn from(e: &crate::core::credentials::sign::bind::BindError) -> Self {
        use crate::core::credentials::sign::bind::BindError;
        match e {
            BindError::Request(_) => Self::new(500, "ServiceFailureException", e.to_string()),
            BindError::Unbound(_) => Self::new(502, "BadGatewayException", e.to_string()),
        }
    }
}

impl From<&crate::core::credentials::sign::SignError> for Refusal {
    fn from(e: &crate::core::credentials::sign::SignError) -> Self {
        Self::forbidden(format!("not authorized to sign: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_words_go_to_the_log_not_the_caller() {
        let refused =
            Refusal::from(Refused::List(crate::core::iceberg::list::ListError::Shape("`secret_table`".into())));
        assert_eq!((refused.status, refused.kind), (502, "BadGatewayException"));
        assert!(!refused.message.contains("secret_table"), "{}", refused.message);
        let (event, detail) = *refused.log.unwrap();
        assert_eq!(event, "upstream list response refused");
        assert!(detail.contains("secret_table"), "{detail}");
    }

    #[test]
    fn the_core_refusals_keep_their_iceberg_errors() {
        let denied = Refusal::from(Refused::Denied {
            operation: crate::core::iceberg::OperationId::LoadTable,
            object: "a.t".into(),
        });
        assert_eq!((denied.status, denied.kind, denied.explainable), (403, "ForbiddenException", true));
        assert_eq!(denied.message, "not authorized to loadTable `a.t`");
        let missing = Refusal::from(Refused::NotFound { view: true, object: "a.v".into() });
        assert_eq!(
            (missing.status, missing.kind, missing.message.as_str()),
            (404, "NoSuchViewException", "view does not exist: `a.v`")
        );
        assert!(missing.log.is_none() && !missing.explainable);
    }
}
