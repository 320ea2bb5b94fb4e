//! DPoP proofs (RFC 9449) and JWK thumbprints (RFC 7638, RFC 8037) for the OAuth token
//! endpoint and the DPoP-bound resource routes. Pure functions on `ring`: no
//! I/O and no clock, so the caller owns time, the public origin and the `jti` replay store.
//!
//! What stays with the caller: storing `(htu, jti_digest(jti))` under a unique index for the
//! whole `iat` window (a replay, even two at once, then fails on insert); refusing a bound
//! token sent as `Bearer` or without a proof; building the target URI from the configured
//! public origin, never from `Host` or `X-Forwarded-*`.

mod claims;
mod error;
mod es256;
mod htu;
mod jose;
mod memo;
mod nonce;
mod thumbprint;

use std::sync::Arc;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

pub use error::{ProofError, RotationError, ThumbprintError, INVALID_DPOP_PROOF, USE_DPOP_NONCE};
pub use jose::Alg;
pub use nonce::{NonceIssuer, NONCE_WINDOW_SECS};
pub use thumbprint::jwk_thumbprint;

use claims::{Claims, Member};
use jose::{CompactJws, PublicJwk};
use memo::KnownKey;

/// Longest `DPoP` header value looked at. A real proof with a P-256 key is about 500 bytes;
/// the cap bounds the work an unauthenticated request can ask for.
pub const MAX_PROOF_LEN: usize = 8 * 1024;

/// Longest `jti` accepted, in characters. RFC 9449 asks for at least 96 random bits; the cap
/// keeps the replay store's rows small whatever the client sends.
pub const MAX_JTI_CHARS: usize = 256;

/// Default oldest acceptable `iat`, in seconds before now (docs/security.md, "DPoP proofs").
pub const DEFAULT_MAX_AGE_SECS: i64 = 300;

/// Default furthest acceptable `iat` ahead of now, in seconds: client clock skew.
pub const DEFAULT_MAX_SKEW_AHEAD_SECS: i64 = 10;

/// The `algs` parameter for `WWW-Authenticate: DPoP` (RFC 9449 section 7.1): what a client
/// may sign with.
pub const SUPPORTED_ALGS: &str = "ES256 EdDSA Ed25519";

/// What one request expects of its proof. Everything the verifier compares against comes from
/// here, so the caller decides where each value comes from (and never from the request's own
/// `Host` header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProofCheck<'a> {
    /// The request method as on the wire (`GET`, `POST`); `htm` must equal it exactly.
    pub method: &'a str,
    /// The absolute request URI, built by the caller from the configured public origin plus
    /// the request path (a query is allowed and ignored).
    pub target_uri: &'a str,
    /// The server's current time, unix seconds.
    pub now_unix: i64,
    /// Oldest acceptable `iat`, in seconds before `now_unix`; `iat` exactly this old passes.
    pub max_age_secs: i64,
    /// Furthest acceptable `iat` after `now_unix`, in seconds; exactly this far passes.
    pub max_skew_ahead_secs: i64,
    /// The access token presented with the proof: when present the proof must carry `ath`
    /// equal to [`access_token_hash`] of it (resource routes).
    pub access_token: Option<&'a str>,
    /// The thumbprint the token, refresh family or installation is bound to: when present the
    /// proof key's thumbprint must equal it.
    pub bound_jkt: Option<&'a str>,
    /// The nonce the server last sent in `DPoP-Nonce`, when it requires one.
    pub expected_nonce: Option<&'a str>,
    /// The nonce it sent before, still accepted (a stateless server's previous window).
    pub previous_nonce: Option<&'a str>,
}

impl<'a> ProofCheck<'a> {
    /// A check with the default time window and no token, binding or nonce: what the token
    /// endpoint needs for a first authorization-code exchange.
    pub fn new(method: &'a str, target_uri: &'a str, now_unix: i64) -> Self {
        ProofCheck {
            method,
            target_uri,
            now_unix,
            max_age_secs: DEFAULT_MAX_AGE_SECS,
            max_skew_ahead_secs: DEFAULT_MAX_SKEW_AHEAD_SECS,
            access_token: None,
            bound_jkt: None,
            expected_nonce: None,
            previous_nonce: None,
        }
    }

    /// Requires `ath` for this access token (resource routes).
    pub fn with_access_token(self, access_token: &'a str) -> Self {
        ProofCheck {
            access_token: Some(access_token),
            ..self
        }
    }

    /// Requires the proof key to have this thumbprint.
    pub fn with_bound_jkt(self, jkt: &'a str) -> Self {
        ProofCheck {
            bound_jkt: Some(jkt),
            ..self
        }
    }

    /// Requires this server-issued nonce.
    pub fn with_nonce(self, nonce: &'a str) -> Self {
        ProofCheck {
            expected_nonce: Some(nonce),
            ..self
        }
    }

    /// Requires one of two server-issued nonces: the one sent now or the one sent before
    /// ([`NonceIssuer::accepted`]).
    pub fn with_nonces(self, current: &'a str, previous: &'a str) -> Self {
        ProofCheck {
            expected_nonce: Some(current),
            previous_nonce: Some(previous),
            ..self
        }
    }
}

/// A proof that passed every check. The caller still has to record `(htu, jti_digest(jti))`
/// to refuse a replay, and binds new tokens to `jkt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedProof {
    /// RFC 7638 thumbprint of the proof key: the value to bind a token to.
    pub jkt: String,
    /// The proof's unique id, 1 to [`MAX_JTI_CHARS`] characters.
    pub jti: String,
    /// Creation time claimed by the client, unix seconds, inside the allowed window.
    pub iat: i64,
    /// The normalised `htu` (query and fragment removed): the same for every spelling of one
    /// URI, so it is a stable half of the replay key.
    pub htu: String,
    /// The `htm` claim, equal to the request method.
    pub htm: String,
    /// The algorithm the proof was signed with.
    pub alg: Alg,
}

/// Verifies the `DPoP` header(s) of one request against `check`, walking RFC 9449 section 4.3
/// plus our local rules (docs/security.md, "DPoP proofs"). `header_values` must hold every `DPoP`
/// header of the request, so that two headers are refused rather than one picked.
///
/// The signature is checked before any claim is believed. A nonce failure is reported only
/// when every other rule passed, so `use_dpop_nonce` always means "retry with the nonce and
/// it will work".
pub fn verify_proof(
    header_values: &[&str],
    check: &ProofCheck,
) -> Result<VerifiedProof, ProofError> {
    // Step 1: exactly one DPoP header.
    let value = match header_values {
        [] => return Err(ProofError::Missing),
        [one] => *one,
        _ => return Err(ProofError::MultipleHeaders),
    };
    // Step 2: a single well-formed JWT, bounded before it is decoded.
    if value.len() > MAX_PROOF_LEN {
        return Err(ProofError::TooLarge);
    }
    let jws = CompactJws::split(value)?;
    // A header seen before with a valid signature is known by its exact text (`memo`): its
    // checks below ran then, on the same bytes. Otherwise every segment is decoded (all three
    // before any JSON, as ever), then the header's JSON, then the payload's.
    let known = memo::get(jws.header);
    let header = match known {
        Some(_) => None,
        None => Some(jose::b64url_decode(jws.header).ok_or(ProofError::MalformedJws)?),
    };
    let payload = jose::b64url_decode(jws.payload).ok_or(ProofError::MalformedJws)?;
    let signature = jose::b64url_decode(jws.signature).ok_or(ProofError::MalformedJws)?;
    let header = header.map(|h| jose::json_object(&h)).transpose()?;
    let claims = Claims::parse(&payload)?;
    let (known, fresh) = match known {
        Some(known) => (known, false),
        // (`header` is always there when the header was not known.)
        None => {
            let header = header.ok_or(ProofError::MalformedJws)?;
            (Arc::new(read_header(&header)?), true)
        }
    };
    // Step 6: the signature verifies with the header's key; only then is the header kept.
    known.verify(jws.signing_input.as_bytes(), &signature)?;
    if fresh {
        memo::put(jws.header, Arc::clone(&known));
    }
    let alg = known.alg;

    // Step 3: required claims, with their types.
    let jti = required_str(&claims.jti, "jti")?;
    if jti.is_empty() || jti.chars().count() > MAX_JTI_CHARS {
        return Err(ProofError::JtiLength);
    }
    let htm = required_str(&claims.htm, "htm")?;
    let htu = required_str(&claims.htu, "htu")?;
    let iat = match &claims.iat {
        None => return Err(ProofError::MissingClaim("iat")),
        Some(Member::Int(iat)) => *iat,
        Some(_) => return Err(ProofError::InvalidClaim("iat")),
    };

    // Step 8: method. Step 9: URI, normalised on both sides.
    if htm != check.method {
        return Err(ProofError::MethodMismatch);
    }
    let target = htu::normalize(check.target_uri).ok_or(ProofError::InvalidTargetUri)?;
    let htu = htu::normalize(htu).ok_or(ProofError::UriMismatch)?;
    if htu != target {
        return Err(ProofError::UriMismatch);
    }

    // Step 11: iat inside [now - max_age, now + skew], in i128 so no input can overflow.
    let age = i128::from(check.now_unix) - i128::from(iat);
    if age > i128::from(check.max_age_secs) {
        return Err(ProofError::IssuedTooLongAgo);
    }
    if -age > i128::from(check.max_skew_ahead_secs) {
        return Err(ProofError::IssuedInTheFuture);
    }

    // Step 12: the access token hash and the key binding.
    if let Some(token) = check.access_token {
        let ath = match &claims.ath {
            None => return Err(ProofError::MissingAccessTokenHash),
            Some(ath) => ath.as_str().ok_or(ProofError::InvalidClaim("ath"))?,
        };
        if !constant_time_eq(ath, &access_token_hash(token)) {
            return Err(ProofError::AccessTokenHashMismatch);
        }
    }
    let jkt = &known.jkt;
    if let Some(bound) = check.bound_jkt {
        if !constant_time_eq(jkt, bound) {
            return Err(ProofError::KeyNotBound);
        }
    }

    // Step 10: the server's nonce, last (see above).
    if let Some(expected) = check.expected_nonce {
        let nonce = match &claims.nonce {
            None => return Err(ProofError::NonceMissing),
            Some(nonce) => nonce.as_str().ok_or(ProofError::InvalidClaim("nonce"))?,
        };
        let previous = check
            .previous_nonce
            .is_some_and(|p| constant_time_eq(nonce, p));
        if !(constant_time_eq(nonce, expected) | previous) {
            return Err(ProofError::NonceMismatch);
        }
    }

    Ok(VerifiedProof {
        jkt: jkt.clone(),
        jti: jti.to_owned(),
        iat,
        htu,
        htm: htm.to_owned(),
        alg,
    })
}

/// Verifies a native installation's key change: `DPoP` made with the new key and
/// `DPoP-Previous` made with the key registered now, both passing every rule of
/// [`verify_proof`] for the same method and URI, with distinct `jti`s (docs/security.md, "DPoP proofs").
///
/// `check.bound_jkt` is ignored: the new key is not bound to anything yet, and the previous
/// proof is held to `registered_jkt`. Both `jti`s must then go to the replay store, and the
/// swap of keys is the caller's, in one transaction.
pub fn verify_key_rotation(
    dpop: &[&str],
    dpop_previous: &[&str],
    check: &ProofCheck,
    registered_jkt: &str,
) -> Result<(VerifiedProof, VerifiedProof), RotationError> {
    let current_check = ProofCheck {
        bound_jkt: None,
        ..*check
    };
    let previous_check = ProofCheck {
        bound_jkt: Some(registered_jkt),
        ..*check
    };
    let current = verify_proof(dpop, &current_check).map_err(RotationError::Current)?;
    let previous = verify_proof(dpop_previous, &previous_check).map_err(RotationError::Previous)?;
    if current.jti == previous.jti {
        return Err(RotationError::SameJti);
    }
    Ok((current, previous))
}

/// Tells the verifier that `proof` (a `DPoP` header value it accepted) was for an access token
/// bound to the proof's key, and the request was let in: such a key counts towards a table of
/// its multiples, which makes its later ES256 checks cheaper (`es256`). Nothing else changes;
/// a proof it does not know is ignored.
pub fn note_bound_proof(proof: &str) {
    if let Some((header, _)) = proof.split_once('.') {
        if let Some(known) = memo::get(header) {
            known.bound_use();
        }
    }
}

/// The `ath` claim for an access token: base64url(SHA-256(token)) without padding
/// (RFC 9449 section 4.2). Binding the proof to the token stops a proof made for one token
/// being replayed with another.
pub fn access_token_hash(access_token: &str) -> String {
    jose::b64url_encode(&Sha256::digest(access_token.as_bytes()))
}

/// SHA-256 of a `jti`: the fixed-size half of the replay store's unique key, so a client's
/// choice of `jti` never sizes a database row or index entry.
pub fn jti_digest(jti: &str) -> [u8; 32] {
    Sha256::digest(jti.as_bytes()).into()
}

/// The protected header's rules (steps 4, 5 and 7): `typ`, an allowed `alg`, no `crit`, and
/// a public `jwk` that fits the alg; with the key's thumbprint.
fn read_header(header: &Map<String, Value>) -> Result<KnownKey, ProofError> {
    // Step 4: typ. Step 5: an allowed asymmetric alg. No extension we would fail to honour.
    if header.get("typ").and_then(Value::as_str) != Some("dpop+jwt") {
        return Err(ProofError::WrongType);
    }
    let alg = header
        .get("alg")
        .and_then(Value::as_str)
        .and_then(Alg::from_name)
        .ok_or(ProofError::UnsupportedAlgorithm)?;
    if header.contains_key("crit") {
        return Err(ProofError::CriticalHeader);
    }
    // Step 7: a public key that fits the alg.
    let jwk = header
        .get("jwk")
        .and_then(Value::as_object)
        .ok_or(ProofError::MissingJwk)?;
    let key = PublicJwk::parse(jwk, alg)?;
    let jkt = thumbprint::thumbprint_of(&key.thumbprint_members());
    Ok(KnownKey::new(alg, key, jkt))
}

fn required_str<'c>(
    member: &'c Option<Member<'_>>,
    name: &'static str,
) -> Result<&'c str, ProofError> {
    match member {
        None => Err(ProofError::MissingClaim(name)),
        Some(value) => value.as_str().ok_or(ProofError::InvalidClaim(name)),
    }
}

/// Equality whose time depends only on the lengths, not on where the first difference is.
fn constant_time_eq(a: &str, b: &str) -> bool {
    a.as_bytes().ct_eq(b.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::rand::SystemRandom;
    use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
    use serde_json::json;

    const URI: &str = "https://api.pay.example/v1/payment-links/abc";
    const NOW: i64 = 1_800_000_000;

    fn key_pair() -> EcdsaKeyPair {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng).unwrap()
    }

    /// A proof for `URI` with `token`'s `ath`: the header of `key`, signed by `signer`.
    fn proof(key: &EcdsaKeyPair, signer: &EcdsaKeyPair, jti: &str, token: &str) -> String {
        let point = key.public_key().as_ref();
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": {"kty": "EC",
            "crv": "P-256", "x": jose::b64url_encode(&point[1..33]),
            "y": jose::b64url_encode(&point[33..65])}});
        let claims = json!({"jti": jti, "htm": "GET", "htu": URI, "iat": NOW,
            "ath": access_token_hash(token)});
        let input = format!(
            "{}.{}",
            jose::b64url_encode(header.to_string().as_bytes()),
            jose::b64url_encode(claims.to_string().as_bytes())
        );
        let sig = signer.sign(&SystemRandom::new(), input.as_bytes()).unwrap();
        format!("{input}.{}", jose::b64url_encode(sig.as_ref()))
    }

    /// A key whose proofs were let in for a bound token [`memo::HOT_USES`] times gets its table;
    /// its proofs still verify, and a signature that is not its own, or over other bytes, is
    /// still refused.
    #[test]
    fn a_hot_key_gets_its_table_and_still_refuses_forgeries() {
        let (key, other) = (key_pair(), key_pair());
        let token = "at_hot";
        let check = ProofCheck::new("GET", URI, NOW).with_access_token(token);
        let first = proof(&key, &key, "j-0", token);
        let verified = verify_proof(&[&first], &check).unwrap();
        let header = first.split('.').next().unwrap();
        let known = memo::get(header).expect("a verified header is remembered");
        for i in 1..memo::HOT_USES {
            note_bound_proof(&first);
            assert!(
                !known.has_table(),
                "no table before {} uses (at {i})",
                memo::HOT_USES
            );
        }
        note_bound_proof(&first);
        assert!(known.has_table());
        for i in 0..20 {
            let p = proof(&key, &key, &format!("j-{i}"), token);
            assert_eq!(verify_proof(&[&p], &check).unwrap().jkt, verified.jkt);
        }
        let forged = proof(&key, &other, "j-forged", token);
        assert_eq!(
            verify_proof(&[&forged], &check),
            Err(ProofError::BadSignature)
        );
        let good = proof(&key, &key, "j-a", token);
        let (input, sig) = good.rsplit_once('.').unwrap();
        let moved = format!("{}x.{sig}", input);
        assert!(verify_proof(&[&moved], &check).is_err());
        let other_claims = proof(&key, &key, "j-b", token);
        let (other_input, _) = other_claims.rsplit_once('.').unwrap();
        let swapped = format!("{other_input}.{sig}");
        assert_eq!(
            verify_proof(&[&swapped], &check),
            Err(ProofError::BadSignature)
        );
    }

    /// Proofs never let in for a bound token give their key no table, however many verify.
    #[test]
    fn a_key_without_bound_uses_gets_no_table() {
        let key = key_pair();
        let check = ProofCheck::new("GET", URI, NOW).with_access_token("at_cold");
        let mut last = String::new();
        for i in 0..(2 * memo::HOT_USES) {
            last = proof(&key, &key, &format!("c-{i}"), "at_cold");
            verify_proof(&[&last], &check).unwrap();
        }
        let known = memo::get(last.split('.').next().unwrap()).unwrap();
        assert!(!known.has_table());
    }
}
