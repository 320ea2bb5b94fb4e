//! The signature scheme, both sides of it: the service signs each attempt afresh, and receivers
//! check with [`verify`]. It is Stripe's `t=...,v1=...` scheme, so Stripe's libraries verify it
//! too (a test holds us to that).

use hmac::{Hmac, Mac};
use pay_domain::kernel::secret::Secret;
use pay_domain::webhooks::ports::WebhookSigner;
use sha2::Sha256;
use subtle::{Choice, ConstantTimeEq};

type HmacSha256 = Hmac<Sha256>;

/// The production `WebhookSigner`: `t=<t>,v1=<hex>` with one `v1=` per live secret.
#[derive(Debug, Clone, Copy, Default)]
pub struct HmacSigner;

/// HMAC-SHA256 keyed with the secret string's bytes as issued (`whsec_...`, never decoded),
/// over `{t}.{body}`.
fn tag(secret: &[u8], t: i64, body: &[u8]) -> [u8; 32] {
    let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC takes keys of any length");
    mac.update(t.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.finalize().into_bytes().into()
}

impl WebhookSigner for HmacSigner {
    fn signature_header(&self, secrets: &[Secret], t: i64, body: &[u8]) -> String {
        let mut header = format!("t={t}");
        for secret in secrets {
            header.push_str(",v1=");
            header.push_str(&hex::encode(tag(secret.expose().as_bytes(), t, body)));
        }
        header
    }
}

/// Why a signature header was refused. The messages name no secret or signature.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// Not `key=value` items, or no single numeric `t`.
    #[error("malformed signature header: {0}")]
    Malformed(&'static str),
    /// A well-formed header without any `v1=`.
    #[error("no v1 signature in the header")]
    NoSignature,
    /// `t` is further in the past than the tolerance (a replay, or a very late delivery).
    #[error("signature timestamp is {age_secs} s old, beyond the tolerance")]
    TooOld { age_secs: i64 },
    /// `t` is further in the future than the tolerance (clock skew, or a forged header).
    #[error("signature timestamp is {ahead_secs} s ahead, beyond the tolerance")]
    TooNew { ahead_secs: i64 },
    /// No `v1=` is the signature of this body with this secret.
    #[error("no signature matches")]
    NoMatch,
}

/// Checks a delivery the way a receiver should, before parsing the body: `header` is the
/// `x-pay-signature` value, `raw_body` the exact bytes received, `secret` the signing secret as
/// issued. Succeeds when `t` is within `tolerance_secs` of `now_unix` (either direction) and ANY
/// `v1=` matches: during a rotation the header carries one per live secret. Schemes other than
/// `v1` are ignored so new ones can be added without breaking receivers.
pub fn verify(
    secret: &str,
    header: &str,
    raw_body: &[u8],
    now_unix: i64,
    tolerance_secs: i64,
) -> Result<(), VerifyError> {
    let mut t: Option<i64> = None;
    let mut candidates = Vec::new();
    for item in header.split(',') {
        let (key, value) = item
            .trim()
            .split_once('=')
            .ok_or(VerifyError::Malformed("an item is not key=value"))?;
        match key {
            "t" => {
                if t.is_some() {
                    // Two timestamps: which one was signed is ambiguous, so refuse both.
                    return Err(VerifyError::Malformed("more than one t"));
                }
                if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(VerifyError::Malformed("t is not a number"));
                }
                t = Some(
                    value
                        .parse()
                        .map_err(|_| VerifyError::Malformed("t is out of range"))?,
                );
            }
            "v1" => candidates.push(value),
            _ => {}
        }
    }
    let t = t.ok_or(VerifyError::Malformed("no t"))?;
    if candidates.is_empty() {
        return Err(VerifyError::NoSignature);
    }
    // i128: a hostile `t` near i64::MAX must not overflow the subtraction.
    let skew = i128::from(now_unix) - i128::from(t);
    let tolerance = i128::from(tolerance_secs);
    let saturate = |x: i128| i64::try_from(x).unwrap_or(i64::MAX);
    if skew > tolerance {
        return Err(VerifyError::TooOld {
            age_secs: saturate(skew),
        });
    }
    if -skew > tolerance {
        return Err(VerifyError::TooNew {
            ahead_secs: saturate(-skew),
        });
    }
    let expected = tag(secret.as_bytes(), t, raw_body);
    let mut matched = Choice::from(0);
    for candidate in candidates {
        // Decoding the attacker's hex is not secret-dependent; only the comparison with the
        // expected tag must take the same time wherever the first differing byte is.
        if let Ok(bytes) = hex::decode(candidate) {
            matched |= expected.as_slice().ct_eq(&bytes);
        }
    }
    if bool::from(matched) {
        Ok(())
    } else {
        Err(VerifyError::NoMatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::process::{Command, Stdio};

    const SECRET: &str = "whsec_MfKQ9r3GyiJ2vVzT8xWb4nLpE6sHcA0dRu7kYq1oZNe";
    const OLD_SECRET: &str = "whsec_PrEv10usSecretXXXXXXXXXXXXXXXXXXXXXXXXXXXXX";
    const T: i64 = 1_700_000_000;
    const BODY: &[u8] = br#"{"deliveryId":"0192f0c4-1a2b-7c3d-8e4f-0123456789ab","type":"pay.payment.status_changed","sequence":7}"#;
    // Computed independently with Python:
    // hmac.new(SECRET.encode(), b"1700000000." + BODY, hashlib.sha256).hexdigest()
    const KAT_BODY: &str = "521ca82f37f2719e0df9e787e785413ef9bd8b9ab4562b1dfa3c0c84a12ab529";
    // The same over BODY with OLD_SECRET.
    const KAT_OLD: &str = "12fa688544a7c7808870159a9c52e97a47760a434e7501f3efdb39900747273f";
    // SECRET over "1700000000." and an empty body.
    const KAT_EMPTY: &str = "1bc6eb62b858c3de3861de033ecb6e96ba1b187e8a8721b34f354feecf5bb6d2";

    fn sign(secrets: &[&str], t: i64, body: &[u8]) -> String {
        let secrets: Vec<Secret> = secrets.iter().map(|s| Secret::new(*s)).collect();
        HmacSigner.signature_header(&secrets, t, body)
    }

    #[test]
    fn known_answers() {
        assert_eq!(sign(&[SECRET], T, BODY), format!("t={T},v1={KAT_BODY}"));
        assert_eq!(sign(&[SECRET], T, b""), format!("t={T},v1={KAT_EMPTY}"));
        // One v1 per secret, in the order given (current first, then the one rotating out).
        assert_eq!(
            sign(&[SECRET, OLD_SECRET], T, BODY),
            format!("t={T},v1={KAT_BODY},v1={KAT_OLD}")
        );
        assert_eq!(sign(&[], T, BODY), format!("t={T}"));
    }

    #[test]
    fn a_valid_header_verifies() {
        let h = sign(&[SECRET], T, BODY);
        assert_eq!(verify(SECRET, &h, BODY, T, 300), Ok(()));
        assert_eq!(
            verify(SECRET, &format!("t={T},v1={KAT_EMPTY}"), b"", T, 300),
            Ok(())
        );
        // Upper-case hex and spaces after commas are still the same signature.
        let loose = format!("t={T}, v1={}", KAT_BODY.to_uppercase());
        assert_eq!(verify(SECRET, &loose, BODY, T, 300), Ok(()));
    }

    #[test]
    fn tampering_is_refused() {
        let h = sign(&[SECRET], T, BODY);
        let mut body = BODY.to_vec();
        *body.last_mut().unwrap() = b' ';
        assert_eq!(verify(SECRET, &h, &body, T, 300), Err(VerifyError::NoMatch));
        assert_eq!(
            verify(SECRET, &h, &BODY[..BODY.len() - 1], T, 300),
            Err(VerifyError::NoMatch)
        );
        assert_eq!(
            verify(OLD_SECRET, &h, BODY, T, 300),
            Err(VerifyError::NoMatch)
        );
        // The secret is used as issued: its prefix is part of the key.
        assert_eq!(
            verify(&SECRET[6..], &h, BODY, T, 300),
            Err(VerifyError::NoMatch)
        );
        // `t` is signed: moving it within the tolerance breaks the signature.
        let moved = format!("t={},v1={KAT_BODY}", T + 1);
        assert_eq!(
            verify(SECRET, &moved, BODY, T, 300),
            Err(VerifyError::NoMatch)
        );
        // A truncated or garbled signature does not match.
        let short = format!("t={T},v1={}", &KAT_BODY[..62]);
        assert_eq!(
            verify(SECRET, &short, BODY, T, 300),
            Err(VerifyError::NoMatch)
        );
        let garbled = format!("t={T},v1=zz{}", &KAT_BODY[2..]);
        assert_eq!(
            verify(SECRET, &garbled, BODY, T, 300),
            Err(VerifyError::NoMatch)
        );
    }

    #[test]
    fn tolerance_edges_in_both_directions() {
        let h = sign(&[SECRET], T, BODY);
        assert_eq!(verify(SECRET, &h, BODY, T + 300, 300), Ok(()));
        assert_eq!(
            verify(SECRET, &h, BODY, T + 301, 300),
            Err(VerifyError::TooOld { age_secs: 301 })
        );
        assert_eq!(verify(SECRET, &h, BODY, T - 300, 300), Ok(()));
        assert_eq!(
            verify(SECRET, &h, BODY, T - 301, 300),
            Err(VerifyError::TooNew { ahead_secs: 301 })
        );
        // Extreme values do not overflow.
        let far = format!("t={},v1={KAT_BODY}", i64::MAX);
        assert!(matches!(
            verify(SECRET, &far, BODY, i64::MIN, 300),
            Err(VerifyError::TooNew { .. })
        ));
    }

    #[test]
    fn rotation_any_v1_may_match() {
        // The receiver already has the new secret; the old one signed first.
        let h = sign(&[OLD_SECRET, SECRET], T, BODY);
        assert_eq!(h, format!("t={T},v1={KAT_OLD},v1={KAT_BODY}"));
        assert_eq!(verify(SECRET, &h, BODY, T, 300), Ok(()));
        assert_eq!(verify(OLD_SECRET, &h, BODY, T, 300), Ok(()));
        assert_eq!(
            verify("whsec_neither", &h, BODY, T, 300),
            Err(VerifyError::NoMatch)
        );
    }

    #[test]
    fn unknown_schemes_are_ignored() {
        let h = format!("t={T},v0=deadbeef,v1={KAT_BODY},v2=whatever");
        assert_eq!(verify(SECRET, &h, BODY, T, 300), Ok(()));
        // A v0 carrying the right value does not count: only v1 is our scheme.
        let only_v0 = format!("t={T},v0={KAT_BODY}");
        assert_eq!(
            verify(SECRET, &only_v0, BODY, T, 300),
            Err(VerifyError::NoSignature)
        );
    }

    #[test]
    fn malformed_headers_are_refused() {
        let sig = format!("v1={KAT_BODY}");
        for (header, why) in [
            (String::new(), "an item is not key=value"),
            (sig.clone(), "no t"),
            (format!("t={T},t={T},{sig}"), "more than one t"),
            (format!("t=abc,{sig}"), "t is not a number"),
            (format!("t=,{sig}"), "t is not a number"),
            (format!("t=+{T},{sig}"), "t is not a number"),
            (format!("t=-{T},{sig}"), "t is not a number"),
            (format!("t= {T},{sig}"), "t is not a number"),
            (format!("t=1.7e9,{sig}"), "t is not a number"),
            (format!("t=99999999999999999999,{sig}"), "t is out of range"),
            (format!("t={T},{sig},"), "an item is not key=value"),
            (format!("t={T};{sig}"), "t is not a number"),
            (format!("t={T},garbage,{sig}"), "an item is not key=value"),
        ] {
            assert_eq!(
                verify(SECRET, &header, BODY, T, 300),
                Err(VerifyError::Malformed(why)),
                "{header:?}"
            );
        }
        assert_eq!(
            verify(SECRET, &format!("t={T}"), BODY, T, 300),
            Err(VerifyError::NoSignature)
        );
    }

    #[test]
    fn errors_never_carry_the_signature() {
        let h = format!("t={},v1={KAT_BODY}", T + 1);
        let e = verify(SECRET, &h, BODY, T, 300).unwrap_err();
        assert!(!e.to_string().contains(KAT_BODY) && !format!("{e:?}").contains(SECRET));
    }

    // --- Stripe's own verifier as an independent check (PyPI `stripe`). ---

    fn stripe_available() -> bool {
        let found = Command::new("python3")
            .args(["-c", "import stripe"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found && std::env::var("PAY_REQUIRE_ALL_TESTS").as_deref() == Ok("1") {
            panic!(
                "PAY_REQUIRE_ALL_TESTS=1 but the Python stripe package is missing: \
                 pip install stripe"
            );
        }
        if !found {
            println!("SKIP: stripe package not installed (pip install stripe)");
        }
        found
    }

    /// Runs a Python snippet with `stdin` as its standard input; returns (exit code, stdout).
    fn python(script: &str, args: &[&str], stdin: &[u8]) -> (i32, String) {
        let mut child = Command::new("python3")
            .arg("-c")
            .arg(script)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.trim().is_empty(), "python stderr: {stderr}");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    const STRIPE_VERIFY: &str = r#"
import sys, stripe
payload = sys.stdin.buffer.read()
try:
    stripe.WebhookSignature.verify_header(payload, sys.argv[1], sys.argv[2], 300)
except stripe.SignatureVerificationError:
    print("rejected")
    sys.exit(3)
print("ok")
"#;

    fn stripe_verifies(body: &[u8], header: &str, secret: &str) -> bool {
        match python(STRIPE_VERIFY, &[header, secret], body) {
            (0, out) if out.trim() == "ok" => true,
            (3, _) => false,
            other => panic!("unexpected result from stripe: {other:?}"),
        }
    }

    fn now() -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64
    }

    #[test]
    fn stripe_verifies_our_signatures() {
        if !stripe_available() {
            return;
        }
        // Stripe checks `t` against its own clock, so sign with real time.
        let t = now();
        let body = r#"{"deliveryId":"0192f0c4","type":"pay.payment.status_changed","label":"Café ☕ \u2028","n":1}"#
            .as_bytes();
        let header = sign(&[SECRET], t, body);
        assert!(stripe_verifies(body, &header, SECRET));
        // During a rotation stripe accepts when either v1 matches its secret.
        let rotating = sign(&[OLD_SECRET, SECRET], t, body);
        assert!(stripe_verifies(body, &rotating, SECRET));
        assert!(stripe_verifies(body, &rotating, OLD_SECRET));
        // And it is a real check: a changed byte, another secret or a stale t fail there too.
        let mut tampered = body.to_vec();
        tampered[2] = b'D';
        assert!(!stripe_verifies(&tampered, &header, SECRET));
        assert!(!stripe_verifies(body, &header, "whsec_other"));
        assert!(!stripe_verifies(
            body,
            &sign(&[SECRET], t - 400, body),
            SECRET
        ));
    }

    #[test]
    fn we_verify_stripes_signatures() {
        if !stripe_available() {
            return;
        }
        let t = now();
        let script = "import sys, stripe; print(stripe.WebhookSignature.generate_signature_header(\
                      sys.stdin.buffer.read().decode('utf-8'), sys.argv[1], int(sys.argv[2])))";
        let body = r#"{"type":"pay.webhook.test","x":"ü"}"#.as_bytes();
        let (code, out) = python(script, &[SECRET, &t.to_string()], body);
        assert_eq!(code, 0);
        let header = out.trim();
        assert_eq!(header, sign(&[SECRET], t, body), "the very same header");
        assert_eq!(verify(SECRET, header, body, t, 300), Ok(()));
        assert_eq!(
            verify(OLD_SECRET, header, body, t, 300),
            Err(VerifyError::NoMatch)
        );
    }
}
