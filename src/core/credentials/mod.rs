//! Storage credentials and remote signing (docs/design.md §8), the pure rules: what a caller may take
//! away from a credential-bearing response, where a table's data lives, what may be signed.

pub mod clean;
pub mod config_map;
pub mod envelope;
pub mod response;
pub mod s3url;
pub mod session_policy;
pub mod sign;
pub mod storage;

use crate::core::policy::authorize::Scope;

/// What happens to the credentials of one response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The upstream's credentials pass (still filtered: `token`, foreign prefixes).
    Keep,
    /// Every credential is removed; only allow-listed `config` keys survive.
    Strip,
    /// The upstream's are removed and S3 credentials minted for this scope are added.
    Downscope(Scope),
    /// icegate is the signer (`credentials.signing.signer = "local"`): every credential is
    /// removed as by `Strip`, and the answer offers remote signing through icegate instead.
    Sign,
}

impl Action {
    /// The upstream is not asked to vend what icegate would remove anyway.
    pub fn strips_delegation(self) -> bool {
        !matches!(self, Self::Keep)
    }

    /// The audit's `credential` value: with icegate as the signer the credentials were stripped
    /// (docs/design.md §10 lists the values).
    pub fn audit(self) -> &'static str {
        match self {
            Self::Keep => "kept",
            Self::Strip | Self::Sign => "stripped",
            Self::Downscope(_) => "downscoped",
        }
    }
}

/// Temporary credentials STS returned.
pub struct Minted {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: String,
    /// Unix milliseconds.
    pub expiration_ms: i64,
}

impl std::fmt::Debug for Minted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Minted")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"** redacted **")
            .field("session_token", &"** redacted **")
            .field("expiration_ms", &self.expiration_ms)
            .finish()
    }
}
