//! Test client: ring-generated keys that sign compact JWS the way a DPoP client does, plus a
//! baseline valid proof each test bends in exactly one way.
#![allow(dead_code)] // Each test binary uses its own part of these helpers.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use pay_dpop::ProofCheck;
use ring::rand::SystemRandom;
use ring::signature::{
    EcdsaKeyPair, Ed25519KeyPair, KeyPair as _, ECDSA_P256_SHA256_FIXED_SIGNING,
};
use serde_json::{json, Value};

/// A frozen clock for every generated proof.
pub const NOW: i64 = 1_700_000_000;
pub const METHOD: &str = "POST";
pub const URI: &str = "https://api.pay.example/oauth/token";

pub fn b64(bytes: impl AsRef<[u8]>) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

pub fn unb64(text: &str) -> Vec<u8> {
    URL_SAFE_NO_PAD.decode(text).expect("test base64url")
}

/// A client key pair.
pub enum TestKey {
    P256(EcdsaKeyPair),
    Ed25519(Ed25519KeyPair),
}

impl TestKey {
    pub fn p256() -> TestKey {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        TestKey::P256(
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
                .unwrap(),
        )
    }

    pub fn ed25519() -> TestKey {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
        TestKey::Ed25519(Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap())
    }

    /// The alg a client would name for this key (`EdDSA` for Ed25519, as RFC 8037).
    pub fn alg(&self) -> &'static str {
        match self {
            TestKey::P256(_) => "ES256",
            TestKey::Ed25519(_) => "EdDSA",
        }
    }

    /// The public JWK, members in the order a browser's `exportKey` gives them.
    pub fn jwk(&self) -> Value {
        match self {
            TestKey::P256(key) => {
                let point = key.public_key().as_ref();
                assert_eq!(point.len(), 65);
                json!({"kty": "EC", "crv": "P-256", "x": b64(&point[1..33]), "y": b64(&point[33..])})
            }
            TestKey::Ed25519(key) => {
                json!({"kty": "OKP", "crv": "Ed25519", "x": b64(key.public_key().as_ref())})
            }
        }
    }

    /// The RFC 7638 thumbprint, computed here independently of the crate: the hash input is
    /// written out literally and hashed with ring, not sha2.
    pub fn expected_jkt(&self) -> String {
        let jwk = self.jwk();
        let input = match self {
            TestKey::P256(_) => format!(
                r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
                jwk["x"].as_str().unwrap(),
                jwk["y"].as_str().unwrap()
            ),
            TestKey::Ed25519(_) => format!(
                r#"{{"crv":"Ed25519","kty":"OKP","x":"{}"}}"#,
                jwk["x"].as_str().unwrap()
            ),
        };
        b64(ring::digest::digest(
            &ring::digest::SHA256,
            input.as_bytes(),
        ))
    }

    pub fn sign(&self, message: &[u8]) -> Vec<u8> {
        match self {
            TestKey::P256(key) => key
                .sign(&SystemRandom::new(), message)
                .unwrap()
                .as_ref()
                .to_vec(),
            TestKey::Ed25519(key) => key.sign(message).as_ref().to_vec(),
        }
    }
}

/// The header a well-behaved client sends.
pub fn header(key: &TestKey) -> Value {
    json!({"typ": "dpop+jwt", "alg": key.alg(), "jwk": key.jwk()})
}

/// Claims matching [`check`].
pub fn claims() -> Value {
    json!({"jti": "jti-4c1f9a0e2b7d", "htm": METHOD, "htu": URI, "iat": NOW})
}

/// What the token endpoint would check at [`NOW`].
pub fn check() -> ProofCheck<'static> {
    ProofCheck::new(METHOD, URI, NOW)
}

/// Signs raw header and payload JSON text, so tests can send what a serializer never would.
pub fn sign_raw(header_json: &str, claims_json: &str, key: &TestKey) -> String {
    let input = format!("{}.{}", b64(header_json), b64(claims_json));
    let signature = key.sign(input.as_bytes());
    format!("{input}.{}", b64(signature))
}

pub fn sign(header: &Value, claims: &Value, key: &TestKey) -> String {
    sign_raw(&header.to_string(), &claims.to_string(), key)
}

/// A valid proof for [`check`].
pub fn proof(key: &TestKey) -> String {
    sign(&header(key), &claims(), key)
}

/// A valid proof whose claims were edited by `edit`.
pub fn proof_with_claims(key: &TestKey, edit: impl FnOnce(&mut Value)) -> String {
    let mut claims = claims();
    edit(&mut claims);
    sign(&header(key), &claims, key)
}

/// A proof whose header was edited by `edit`, signed by `key`.
pub fn proof_with_header(key: &TestKey, edit: impl FnOnce(&mut Value)) -> String {
    let mut header = header(key);
    edit(&mut header);
    sign(&header, &claims(), key)
}
