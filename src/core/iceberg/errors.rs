//! The Iceberg errors icegate answers with itself (docs/design.md §7): each kind fixes its HTTP
//! status and its `type` together, so no answer can pair them differently. Every refusal, the
//! core's and the serving layer's, is built from one of these.

/// The kind of an Iceberg error `{"error": {"message", "type", "code"}}` icegate writes.
///
/// Invariant: `status()` and `type_name()` are a fixed pair per kind; a kind is never answered
/// with another status. One kind per server failure status: a 500 is always `ServiceFailure`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    BadRequest,
    NotAuthorized,
    Forbidden,
    NoSuchTable,
    NoSuchView,
    AlreadyExists,
    RequestTimeout,
    RequestEntityTooLarge,
    UnsupportedMediaType,
    ServiceFailure,
    BadGateway,
    ServiceUnavailable,
    GatewayTimeout,
}

impl ErrorKind {
    /// The HTTP status, also the error's `code`.
    pub const fn status(self) -> u16 {
        match self {
            Self::BadRequest => 400,
            Self::NotAuthorized => 401,
            Self::Forbidden => 403,
            Self::NoSuchTable | Self::NoSuchView => 404,
            Self::RequestTimeout => 408,
            Self::AlreadyExists => 409,
            Self::RequestEntityTooLarge => 413,
            Self::UnsupportedMediaType => 415,
            Self::ServiceFailure => 500,
            Self::BadGateway => 502,
            Self::ServiceUnavailable => 503,
            Self::GatewayTimeout => 504,
        }
    }

    /// The error's `type`, as Iceberg's clients name the exception.
    pub const fn type_name(self) -> &'static str {
        match self {
            Self::BadRequest => "BadRequestException",
            Self::NotAuthorized => "NotAuthorizedException",
            Self::Forbidden => "ForbiddenException",
            Self::NoSuchTable => "NoSuchTableException",
            Self::NoSuchView => "NoSuchViewException",
            Self::AlreadyExists => "AlreadyExistsException",
            Self::RequestTimeout => "RequestTimeoutException",
            Self::RequestEntityTooLarge => "RequestEntityTooLargeException",
            Self::UnsupportedMediaType => "UnsupportedMediaTypeException",
            Self::ServiceFailure => "ServiceFailureException",
            Self::BadGateway => "BadGatewayException",
            Self::ServiceUnavailable => "ServiceUnavailableException",
            Self::GatewayTimeout => "GatewayTimeoutException",
        }
    }
}

/// The `type` of an upstream error icegate relays with the upstream's own status but writes
/// the body of (the upstream sent none, or one that could carry a stack trace): the status
/// is the upstream's, so it need not be one of [`ErrorKind`]'s; `full` names the client
/// errors clients tell apart, else only server failures get a type of their own.
pub fn upstream_type(status: u16, full: bool) -> &'static str {
    match status {
        400 if full => ErrorKind::BadRequest.type_name(),
        401 if full => ErrorKind::NotAuthorized.type_name(),
        403 if full => ErrorKind::Forbidden.type_name(),
        404 if full => "NotFoundException",
        503 if full => ErrorKind::ServiceUnavailable.type_name(),
        500..=599 => ErrorKind::ServiceFailure.type_name(),
        _ => "RESTException",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_an_error_status_and_an_exception_type() {
        use ErrorKind::*;
        let all = [
            BadRequest,
            NotAuthorized,
            Forbidden,
            NoSuchTable,
            NoSuchView,
            AlreadyExists,
            RequestTimeout,
            RequestEntityTooLarge,
            UnsupportedMediaType,
            ServiceFailure,
            BadGateway,
            ServiceUnavailable,
            GatewayTimeout,
        ];
        for kind in all {
            assert!((400..600).contains(&kind.status()), "{kind:?}");
            assert!(kind.type_name().ends_with("Exception"), "{kind:?}");
        }
        // one 500 type
        assert_eq!(all.iter().filter(|k| k.status() == 500).count(), 1);
    }

    #[test]
    fn upstream_types_keep_the_upstreams_status_class() {
        assert_eq!(upstream_type(404, true), "NotFoundException");
        assert_eq!(upstream_type(404, false), "RESTException");
        assert_eq!(upstream_type(502, true), "ServiceFailureException");
        assert_eq!(upstream_type(503, false), "ServiceFailureException");
        assert_eq!(upstream_type(503, true), "ServiceUnavailableException");
        assert_eq!(upstream_type(418, true), "RESTException");
    }
}
