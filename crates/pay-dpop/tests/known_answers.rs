//! Known-answer vectors from the RFCs (docs/security.md, "Known-answer vectors"): if one of
//! these moves, the crate no longer interoperates, whatever the other tests say.
//!
//! Sources, copied from the published texts: RFC 9449 figures 5, 7 and 13 (the only example
//! proofs with a signature the RFC prints; figure 2 is figure 5's proof and figure 21's nonce
//! proof is shown without a signature, so there is nothing to verify), the key of figure 4,
//! the token of figure 6, the `jkt` of figures 8 and 9; RFC 8037 appendices A.1 to A.3;
//! RFC 7638 section 3.1.

mod common;

use pay_dpop::{access_token_hash, jwk_thumbprint, verify_proof, Alg, ProofCheck, ProofError};
use ring::signature::{Ed25519KeyPair, KeyPair as _};
use serde_json::json;

const RFC9449_JKT: &str = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I";

/// RFC 9449 figure 5: token request with an authorization code, iat 1562262616.
/// The RFC wraps it per RFC 8792 ("\" at line end); the lines are joined here unchanged.
const RFC9449_FIGURE_5: &str = concat!(
    "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6Ik",
    "VDIiwieCI6Imw4dEZyaHgtMzR0VjNoUklDUkRZOXpDa0RscEJoRjQyVVFVZldWQVdCR",
    "nMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFqSG10NnY5VERWclUwQ2R2R1JE",
    "QSIsImNydiI6IlAtMjU2In19.eyJqdGkiOiItQndDM0VTYzZhY2MybFRjIiwiaHRtIj",
    "oiUE9TVCIsImh0dSI6Imh0dHBzOi8vc2VydmVyLmV4YW1wbGUuY29tL3Rva2VuIiwia",
    "WF0IjoxNTYyMjYyNjE2fQ.2-GxA6T8lP4vfrg8v-FdWP0A0zdrj8igiMLvqRMUvwnQg",
    "4PtFLbdLXiOSsX0x7NVY-FNyJK70nfbV37xRZT3Lg",
);

/// RFC 9449 figure 7: refresh token request, same key, iat 1562265296.
const RFC9449_FIGURE_7: &str = concat!(
    "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6Ik",
    "VDIiwieCI6Imw4dEZyaHgtMzR0VjNoUklDUkRZOXpDa0RscEJoRjQyVVFVZldWQVdCR",
    "nMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFqSG10NnY5VERWclUwQ2R2R1JE",
    "QSIsImNydiI6IlAtMjU2In19.eyJqdGkiOiItQndDM0VTYzZhY2MybFRjIiwiaHRtIj",
    "oiUE9TVCIsImh0dSI6Imh0dHBzOi8vc2VydmVyLmV4YW1wbGUuY29tL3Rva2VuIiwia",
    "WF0IjoxNTYyMjY1Mjk2fQ.pAqut2IRDm_De6PR93SYmGBPXpwrAk90e8cP2hjiaG5Qs",
    "GSuKDYW7_X620BxqhvYC8ynrrvZLTk41mSRroapUA",
);

/// RFC 9449 figure 13: protected resource request with `ath`, iat 1562262618.
const RFC9449_FIGURE_13: &str = concat!(
    "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6Ik",
    "VDIiwieCI6Imw4dEZyaHgtMzR0VjNoUklDUkRZOXpDa0RscEJoRjQyVVFVZldWQVdCR",
    "nMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFqSG10NnY5VERWclUwQ2R2R1JE",
    "QSIsImNydiI6IlAtMjU2In19.eyJqdGkiOiJlMWozVl9iS2ljOC1MQUVCIiwiaHRtIj",
    "oiR0VUIiwiaHR1IjoiaHR0cHM6Ly9yZXNvdXJjZS5leGFtcGxlLm9yZy9wcm90ZWN0Z",
    "WRyZXNvdXJjZSIsImlhdCI6MTU2MjI2MjYxOCwiYXRoIjoiZlVIeU8ycjJaM0RaNTNF",
    "c05yV0JiMHhXWG9hTnk1OUlpS0NBcWtzbVFFbyJ9.2oW9RP35yRqzhrtNP86L-Ey71E",
    "OptxRimPPToA1plemAgR6pxHF8y6-yqyVnmcw6Fy1dqd-jfxSYoMxhAJpLjA",
);

/// RFC 9449 figure 6: the access token figure 13's proof is bound to.
const RFC9449_ACCESS_TOKEN: &str = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU";

#[test]
fn rfc9449_example_key_thumbprint() {
    let jwk = json!({
        "kty": "EC",
        "x": "l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs",
        "y": "9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA",
        "crv": "P-256"
    });
    assert_eq!(jwk_thumbprint(&jwk).unwrap(), RFC9449_JKT);
}

#[test]
fn rfc9449_access_token_hash() {
    assert_eq!(
        access_token_hash(RFC9449_ACCESS_TOKEN),
        "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
    );
}

#[test]
fn rfc9449_figure_5_token_request_proof_verifies() {
    // The clock frozen 30 s after the proof was made.
    let check = ProofCheck::new("POST", "https://server.example.com/token", 1_562_262_646)
        .with_bound_jkt(RFC9449_JKT);
    let proof = verify_proof(&[RFC9449_FIGURE_5], &check).unwrap();
    assert_eq!(proof.jkt, RFC9449_JKT);
    assert_eq!(proof.jti, "-BwC3ESc6acc2lTc");
    assert_eq!(proof.iat, 1_562_262_616);
    assert_eq!(proof.htm, "POST");
    assert_eq!(proof.htu, "https://server.example.com/token");
    assert_eq!(proof.alg, Alg::Es256);
}

#[test]
fn rfc9449_figure_7_refresh_proof_verifies() {
    // Figure 7 reuses figure 5's jti for the same htu: a replay store keyed on (htu, jti)
    // would refuse it after figure 5, which is the store's job, not this crate's.
    let check = ProofCheck::new("POST", "https://server.example.com/token", 1_562_265_296)
        .with_bound_jkt(RFC9449_JKT);
    let proof = verify_proof(&[RFC9449_FIGURE_7], &check).unwrap();
    assert_eq!(proof.jkt, RFC9449_JKT);
    assert_eq!(proof.iat, 1_562_265_296);
}

#[test]
fn rfc9449_figure_13_resource_proof_verifies_with_its_token() {
    let check = ProofCheck::new(
        "GET",
        "https://resource.example.org/protectedresource",
        1_562_262_618,
    )
    .with_access_token(RFC9449_ACCESS_TOKEN)
    .with_bound_jkt(RFC9449_JKT);
    let proof = verify_proof(&[RFC9449_FIGURE_13], &check).unwrap();
    assert_eq!(proof.jkt, RFC9449_JKT);
    assert_eq!(proof.jti, "e1j3V_bKic8-LAEB");
    assert_eq!(proof.iat, 1_562_262_618);
    assert_eq!(proof.htm, "GET");

    // The same proof with another token, or outside its window, is refused.
    let other_token = check.with_access_token("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxV");
    assert_eq!(
        verify_proof(&[RFC9449_FIGURE_13], &other_token),
        Err(ProofError::AccessTokenHashMismatch)
    );
    let later = ProofCheck {
        now_unix: 1_562_262_618 + 301,
        ..check
    };
    assert_eq!(
        verify_proof(&[RFC9449_FIGURE_13], &later),
        Err(ProofError::IssuedTooLongAgo)
    );
}

#[test]
fn rfc9449_proofs_are_refused_for_another_request() {
    let get = ProofCheck::new("GET", "https://server.example.com/token", 1_562_262_616);
    assert_eq!(
        verify_proof(&[RFC9449_FIGURE_5], &get),
        Err(ProofError::MethodMismatch)
    );
    let elsewhere = ProofCheck::new("POST", "https://server.example.net/token", 1_562_262_616);
    assert_eq!(
        verify_proof(&[RFC9449_FIGURE_5], &elsewhere),
        Err(ProofError::UriMismatch)
    );
}

/// RFC 8037 appendix A.1 private key: ring derives the appendix A.2 public key from it, and
/// appendix A.3 gives that key's thumbprint.
const RFC8037_D: &str = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A";
const RFC8037_X: &str = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
const RFC8037_JKT: &str = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k";

#[test]
fn rfc8037_ed25519_thumbprint() {
    let public = json!({"kty": "OKP", "crv": "Ed25519", "x": RFC8037_X});
    assert_eq!(jwk_thumbprint(&public).unwrap(), RFC8037_JKT);
    // The A.1 private JWK has the same thumbprint: `d` is not a required member.
    let private = json!({"kty": "OKP", "crv": "Ed25519", "d": RFC8037_D, "x": RFC8037_X});
    assert_eq!(jwk_thumbprint(&private).unwrap(), RFC8037_JKT);
}

#[test]
fn rfc8037_key_signs_a_proof_with_the_published_thumbprint() {
    let key = Ed25519KeyPair::from_seed_unchecked(&common::unb64(RFC8037_D)).unwrap();
    assert_eq!(common::b64(key.public_key().as_ref()), RFC8037_X);
    let key = common::TestKey::Ed25519(key);
    let proof = common::proof(&key);
    let verified = verify_proof(&[&proof], &common::check().with_bound_jkt(RFC8037_JKT)).unwrap();
    assert_eq!(verified.jkt, RFC8037_JKT);
    assert_eq!(verified.alg, Alg::EdDsa);
}

#[test]
fn rfc7638_rsa_thumbprint() {
    // Section 3.1, with the optional members it shows, which must not count.
    let jwk = json!({
        "kty": "RSA",
        "n": concat!(
            "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aP",
            "FFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl9",
            "3lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdA",
            "ZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3",
            "XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
        ),
        "e": "AQAB",
        "alg": "RS256",
        "kid": "2011-04-29"
    });
    assert_eq!(
        jwk_thumbprint(&jwk).unwrap(),
        "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
    );
}
