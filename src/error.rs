//! A refusal: an answer icegate gives itself, as an Iceberg error (docs/design.md §7):
//! `{"error": {"message": "...", "type": "...", "code": N}}`, and the refusals of the core's
//! errors. The serving layer's errors are answered in `serve::pipeline::rescue`; this module imports only
//! the core, so that every layer may answer with a refusal.

use crate::core::iceberg::OperationId;
use crate::core::iceberg::body::BodyError;
use crate::core::iceberg::errors::ErrorKind;
use crate::core::refused::{self, CoreRefusal, StopAnswer};

/// An answer icegate gives itself, without forwarding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The Iceberg error: its status and `type`.
    pub kind: ErrorKind,
    pub message: String,
    /// A policy decision `icegate explain` can show the reasons of (a denied operation).
    pub explainable: bool,
    /// The `explain` options its hint names, beyond the request's own arguments (the files that
    /// hold what the decision read: `--body FILE`).
    pub explain_inputs: &'static [&'static str],
    /// The connection cannot be trusted to carry another request (its framing was ambiguous).
    pub close_connection: bool,
    /// What icegate's log gets when this refusal is answered, and the caller does not: the
    /// event and the detail (the upstream's own words).
    pub log: Option<Box<(String, String)>>,
}

impl Refusal {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            explainable: false,
            explain_inputs: &[],
            close_connection: false,
            log: None,
        }
    }

    /// The HTTP status answered.
    pub fn status(&self) -> u16 {
        self.kind.status()
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::BadRequest, message)
    }

    pub fn not_authorized(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotAuthorized, message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Forbidden, message)
    }

    pub fn request_timeout(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::RequestTimeout, message)
    }

    /// icegate failed at what it should have done: the one 500.
    pub fn service_failure(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::ServiceFailure, message)
    }

    pub fn bad_gateway(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::BadGateway, message)
    }

    pub fn service_unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::ServiceUnavailable, message)
    }

    pub fn gateway_timeout(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::GatewayTimeout, message)
    }

    /// Appends how to see why: the `icegate explain` command with the request's own
    /// arguments, and placeholders for the files holding what else the decision read, which an
    /// operator can run against the policy (the reasons are not sent, so the policy cannot be
    /// learned from answers).
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
        for input in self.explain_inputs {
            command.push_str(&format!(" {input}"));
        }
        command.push_str(&format!(" {method} {}", quote(target)));
        self.message = format!("{}; `{command}` shows why", self.message);
        self
    }

    /// An upstream redirect, which is never relayed: it could send the client around icegate.
    pub fn upstream_redirect(status: u16) -> Self {
        Self::bad_gateway(format!("the upstream answered with a redirect ({status}), which icegate does not relay"))
    }

    /// An upstream response icegate must read and could not: the message never quotes what the
    /// upstream sent (a value could be a secret, a name could be hidden from the caller); the
    /// detail goes to icegate's log.
    pub fn unreadable_upstream(what: &str, detail: &dyn std::fmt::Display) -> Self {
        let message = format!("the upstream's {what} could not be read; icegate's log has the details");
        Self::bad_gateway(message).logged(format!("upstream {what} refused"), detail)
    }

    /// This refusal, with `detail` for icegate's log under `event`.
    pub fn logged(self, event: String, detail: &dyn std::fmt::Display) -> Self {
        Self { log: Some(Box::new((event, detail.to_string()))), ..self }
    }

    /// The response body.
    pub fn to_json(&self) -> String {
        serde_json::json!({
            "error": { "message": self.message, "type": self.kind.type_name(), "code": self.kind.status() }
        })
        .to_string()
    }
}

/// A stop of the served path: the core's refusals and the serving layer's, answered alike.
pub type Stop = crate::core::decide::Stop<Refusal>;

/// How a stage's error stops a request: the error's refusal, with the operation when
/// classification had named it (`.map_err(error::stop(Some(op)))`).
pub fn stop<E>(operation: Option<OperationId>) -> impl Fn(E) -> Stop + Copy
where
    for<'e> Refusal: From<&'e E>,
{
    move |error| Stop::plain(Refusal::from(&error), operation)
}

impl From<CoreRefusal> for Refusal {
    /// The core's refusals, by variant; an unreadable list response's detail goes to the log
    /// only: it may quote the upstream's bytes, such as the name of an entry the caller may
    /// not see.
    fn from(e: CoreRefusal) -> Self {
        if let CoreRefusal::List(detail) = &e {
            return Self::unreadable_upstream("list response", detail);
        }
        Self {
            explainable: e.explainable(),
            explain_inputs: e.explain_inputs(),
            ..Self::new(e.error_kind(), e.to_string())
        }
    }
}

impl StopAnswer for Refusal {
    fn status(&self) -> u16 {
        self.kind.status()
    }

    fn message(&self) -> String {
        self.message.clone()
    }
}

impl From<&BodyError> for Refusal {
    fn from(e: &BodyError) -> Self {
        Self::new(refused::body_error_kind(e), e.to_string())
    }
}

impl From<&crate::core::credentials::storage::SignerError> for Refusal {
    fn from(e: &crate::core::credentials::storage::SignerError) -> Self {
        Self::bad_gateway(e.to_string())
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
            BindError::Request(_) => Self::service_failure(e.to_string()),
            BindError::Unbound(_) => Self::bad_gateway(e.to_string()),
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
            Refusal::from(CoreRefusal::List(crate::core::iceberg::list::ListError::Shape("`secret_table`".into())));
        assert_eq!((refused.status(), refused.kind.type_name()), (502, "BadGatewayException"));
        assert!(!refused.message.contains("secret_table"), "{}", refused.message);
        let (event, detail) = *refused.log.unwrap();
        assert_eq!(event, "upstream list response refused");
        assert!(detail.contains("secret_table"), "{detail}");
    }

    #[test]
    fn the_core_refusals_keep_their_iceberg_errors() {
        let denied = Refusal::from(CoreRefusal::Denied {
            operation: crate::core::iceberg::OperationId::LoadTable,
            object: "a.t".into(),
        });
        assert_eq!((denied.status(), denied.kind.type_name(), denied.explainable), (403, "ForbiddenException", true));
        assert_eq!(denied.message, "not authorized to loadTable `a.t`");
        let missing = Refusal::from(CoreRefusal::NotFound { view: true, object: "a.v".into() });
        assert_eq!(
            (missing.status(), missing.kind.type_name(), missing.message.as_str()),
            (404, "NoSuchViewException", "view does not exist: `a.v`")
        );
        assert!(missing.log.is_none() && !missing.explainable);
    }
}
