//! An authorized sign request on its way to the catalog's signer and back (docs/design.md §8): where
//! it goes, without the hop-by-hop headers no signature may cover, a batch delete's request
//! carrying the hash of the body icegate checked, the answer relayed only when its signature
//! binds that hash, and `no-store` on every answer but a read's.

use crate::core::credentials::sign::bind;
use crate::error::Refusal;
use crate::serve::pipeline::inspect::RequestBody;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue};

/// An authorized sign request, as the forward and rewrite stages need it.
#[derive(Clone, Debug, Default)]
pub struct Forward {
    /// Where it goes when not to its table-scoped route: the signer the upstream advertises.
    pub to: Option<http::Uri>,
    /// The S3 method it asks to have signed.
    pub method: String,
    /// A batch delete's: the hex SHA-256 of its checked body, which the signature must sign.
    pub body_sha256: Option<String>,
    /// The hop-by-hop headers of the request to sign, lower case: left out of what is forwarded.
    pub unsigned: Vec<String>,
    /// Signed by icegate itself, never forwarded (`credentials.signing.signer = "local"`).
    pub local: Option<crate::serve::storage::local_signer::Local>,
}

impl Forward {
    /// Iceberg's Java signer client caches sign answers by method and URI, not body: only a
    /// read's answer may be reused.
    pub fn cacheable(&self) -> bool {
        matches!(self.method.as_str(), "GET" | "HEAD")
    }

    /// The request body as forwarded, and the caller's headers to send with it when the body
    /// changed (its `Content-Length` then is the new one's): a batch delete's request carries
    /// its body's hash as `x-amz-content-sha256`, and no request carries a hop-by-hop header
    /// to sign (docs/signing.md).
    pub fn bound(
        &self,
        body: Option<RequestBody>,
        caller: &HeaderMap,
    ) -> Result<(Option<RequestBody>, Option<HeaderMap>), Refusal> {
        if self.body_sha256.is_none() && self.unsigned.is_empty() {
            return Ok((body, None));
        }
        // A body to change that was not read could not be changed: never forwarded as it came.
        let Some(RequestBody::Buffered(bytes)) = &body else {
            return Err(Refusal::from(&bind::BindError::Request("its body was not read")));
        };
        let forwarded = bind::forwarded_request(bytes, &self.unsigned, self.body_sha256.as_deref())
            .map_err(|e| Refusal::from(&e))?;
        let forwarded = Bytes::from(forwarded);
        let mut headers = caller.clone();
        headers.insert(http::header::CONTENT_LENGTH, HeaderValue::from(forwarded.len()));
        Ok((Some(RequestBody::Buffered(forwarded)), Some(headers)))
    }

    /// A successful answer of the signer is relayed only when it binds what must be bound.
    pub fn check_answer(&self, answer: &[u8]) -> Result<(), Refusal> {
        match &self.body_sha256 {
            Some(sha256) => bind::check_answer(answer, sha256).map_err(|e| Refusal::from(&e)),
            None => Ok(()),
        }
    }
}
