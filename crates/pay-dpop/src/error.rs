//! Why a proof or a thumbprint input was refused: one variant per rule, so the
//! HTTP edge can match exhaustively and a test can pin the exact rule that fired. Messages name
//! the rule and at most a claim or member name, never a value the client sent.

/// The `error` parameter of `WWW-Authenticate: DPoP` (RFC 9449 section 7.1) or of a token
/// endpoint error body (RFC 9449 section 5) for a refused proof.
pub const INVALID_DPOP_PROOF: &str = "invalid_dpop_proof";

/// The `error` value that tells the client to retry with the nonce sent in `DPoP-Nonce`
/// (RFC 9449 sections 8 and 9).
pub const USE_DPOP_NONCE: &str = "use_dpop_nonce";

/// A DPoP proof refused by [`crate::verify_proof`]. Each variant is one rule of RFC 9449
/// section 4.3 or of our stricter local policy (docs/security.md, "DPoP proofs").
///
/// `Display` is a short English description without any client-supplied value, fit for an
/// `error_description` parameter (it holds no `"` or `\`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    /// The request carried no `DPoP` header at all.
    #[error("the request has no DPoP proof")]
    Missing,
    /// More than one `DPoP` header (RFC 9449 section 4.3, step 1).
    #[error("the request has more than one DPoP header")]
    MultipleHeaders,
    /// The header value is longer than [`crate::MAX_PROOF_LEN`]; refused before any parsing.
    #[error("the DPoP proof is too large")]
    TooLarge,
    /// Not exactly three non-empty base64url segments without padding (compact JWS).
    #[error("the DPoP proof is not a compact JWS of three base64url segments")]
    MalformedJws,
    /// The header or the payload is not a JSON object, or repeats a member name.
    #[error("the DPoP proof header or payload is not a JSON object with unique members")]
    MalformedJson,
    /// `typ` is missing or is not exactly `dpop+jwt`.
    #[error("the DPoP proof typ is not dpop+jwt")]
    WrongType,
    /// `alg` is missing or not one of ES256, EdDSA, Ed25519 (so never `none`, HS*, RS*).
    #[error("the DPoP proof alg is not supported")]
    UnsupportedAlgorithm,
    /// A `crit` header: we implement no JWS extension, so none can be understood.
    #[error("the DPoP proof has a crit header")]
    CriticalHeader,
    /// No `jwk` header, or it is not an object.
    #[error("the DPoP proof has no jwk header")]
    MissingJwk,
    /// The `jwk` carries private key material (`d`, `p`, `q`, `dp`, `dq`, `qi`, `oth`, `k`).
    #[error("the DPoP proof jwk holds a private key")]
    PrivateKey,
    /// The `jwk` is not a well-formed P-256 or Ed25519 public key (unknown kty or crv, a
    /// coordinate that is not exactly 32 bytes of canonical base64url, `use` other than `sig`).
    #[error("the DPoP proof jwk is not a valid P-256 or Ed25519 public key")]
    InvalidJwk,
    /// `alg` and the key disagree (ES256 needs EC P-256; EdDSA and Ed25519 need OKP Ed25519),
    /// or the jwk's own `alg` names another algorithm.
    #[error("the DPoP proof alg does not match its key")]
    AlgorithmKeyMismatch,
    /// The signature does not verify with the embedded key (RFC 9449 section 4.3, step 6).
    #[error("the DPoP proof signature is invalid")]
    BadSignature,
    /// A required claim is absent.
    #[error("the DPoP proof lacks the {0} claim")]
    MissingClaim(&'static str),
    /// A claim has the wrong JSON type (`iat` not an integer, `htu` not a string...).
    #[error("the DPoP proof {0} claim has the wrong type")]
    InvalidClaim(&'static str),
    /// `jti` is empty or longer than [`crate::MAX_JTI_CHARS`] characters.
    #[error("the DPoP proof jti is empty or too long")]
    JtiLength,
    /// `htm` is not the request method.
    #[error("the DPoP proof htm does not match the request method")]
    MethodMismatch,
    /// `htu` is not an absolute http(s) URI, or names another scheme, host, port or path.
    #[error("the DPoP proof htu does not match the request URI")]
    UriMismatch,
    /// The caller's target URI cannot be compared (not an absolute http(s) URI): a
    /// configuration fault or a request path that no proof could match.
    #[error("the request URI cannot be checked against a DPoP proof")]
    InvalidTargetUri,
    /// `iat` is older than the allowed age.
    #[error("the DPoP proof is too old")]
    IssuedTooLongAgo,
    /// `iat` is further ahead of the server clock than the allowed skew.
    #[error("the DPoP proof is issued in the future")]
    IssuedInTheFuture,
    /// An access token was presented but the proof has no `ath`.
    #[error("the DPoP proof lacks the access token hash")]
    MissingAccessTokenHash,
    /// `ath` is not the hash of the presented access token.
    #[error("the DPoP proof access token hash does not match")]
    AccessTokenHashMismatch,
    /// The proof key is not the key the token (or installation) is bound to. RFC 9449
    /// figure 16 answers this on resource routes with `invalid_token`; the edge may map it so.
    #[error("the DPoP proof key is not the bound key")]
    KeyNotBound,
    /// A nonce is required and the proof has none.
    #[error("a DPoP nonce is required")]
    NonceMissing,
    /// The proof's nonce is not the one the server expects.
    #[error("the DPoP nonce is stale or unknown")]
    NonceMismatch,
}

impl ProofError {
    /// The `error` value for `WWW-Authenticate: DPoP` or a token error body: `use_dpop_nonce`
    /// when the only thing to fix is the nonce (the client retries with the `DPoP-Nonce` it is
    /// sent), `invalid_dpop_proof` for everything else.
    pub fn www_authenticate_error(&self) -> &'static str {
        match self {
            ProofError::NonceMissing | ProofError::NonceMismatch => USE_DPOP_NONCE,
            _ => INVALID_DPOP_PROOF,
        }
    }
}

/// A `DPoP-Previous` key rotation refused by [`crate::verify_key_rotation`]: which proof
/// failed, or how the pair is inconsistent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RotationError {
    /// The `DPoP` proof (made with the new key) fails a rule.
    #[error("DPoP: {0}")]
    Current(#[source] ProofError),
    /// The `DPoP-Previous` proof fails a rule, including not being made with the key
    /// registered now ([`ProofError::KeyNotBound`]).
    #[error("DPoP-Previous: {0}")]
    Previous(#[source] ProofError),
    /// Both proofs carry the same `jti`: one proof would be two.
    #[error("DPoP and DPoP-Previous share a jti")]
    SameJti,
}

impl RotationError {
    /// As [`ProofError::www_authenticate_error`], for whichever proof failed.
    pub fn www_authenticate_error(&self) -> &'static str {
        match self {
            RotationError::Current(e) | RotationError::Previous(e) => e.www_authenticate_error(),
            RotationError::SameJti => INVALID_DPOP_PROOF,
        }
    }
}

/// Why [`crate::jwk_thumbprint`] cannot hash a JWK.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThumbprintError {
    /// The JWK is not a JSON object.
    #[error("the JWK is not a JSON object")]
    NotAnObject,
    /// `kty` is absent, not a string, or not EC, RSA or OKP.
    #[error("the JWK kty is missing or not EC, RSA or OKP")]
    UnsupportedKeyType,
    /// A member RFC 7638 requires for this key type is absent or not a string.
    #[error("the JWK lacks the required member {0}")]
    MissingMember(&'static str),
}
