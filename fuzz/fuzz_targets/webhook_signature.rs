//! The webhook signature header (`pay_webhooks::verify`, Stripe's `t=...,v1=...` scheme), two
//! ways by the first byte:
//! 0: the input is the header as received, over a fixed body: an accepted header has exactly
//!    one `t` within the tolerance and a `v1` that is the true HMAC, read here independently;
//! 1: the input is a body (and a timestamp from its first 8 bytes): what `HmacSigner` signs
//!    verifies, also with unknown schemes and spaces around the items, and fails with one body
//!    byte changed or the time moved past the tolerance.
#![no_main]

use hmac::{Hmac, Mac};
use libfuzzer_sys::fuzz_target;
use pay_domain::kernel::secret::Secret;
use pay_domain::webhooks::ports::WebhookSigner;
use pay_webhooks::{verify, HmacSigner, VerifyError};
use sha2::Sha256;

const SECRET: &str = "whsec_MfKQ9r3GyiJ2vVzT8xWb4nLpE6sHcA0dRu7kYq1oZNe";
const T: i64 = 1_700_000_000;
const TOLERANCE: i64 = 300;
const BODY: &[u8] = br#"{"deliveryId":"0192f0c4-1a2b-7c3d-8e4f-0123456789ab","type":"pay.payment.status_changed","sequence":7}"#;

/// HMAC-SHA256 of `{t}.{body}` keyed with the secret as issued, from the hmac crate directly.
fn tag(t: &str, body: &[u8]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).expect("any key length");
    mac.update(t.as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.finalize().into_bytes().to_vec()
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        let Ok(header) = std::str::from_utf8(rest) else {
            return;
        };
        if verify(SECRET, header, BODY, T, TOLERANCE).is_ok() {
            let items: Vec<(&str, &str)> = header
                .split(',')
                .map(|i| {
                    i.trim()
                        .split_once('=')
                        .expect("accepted items are key=value")
                })
                .collect();
            let ts: Vec<&str> = items
                .iter()
                .filter(|(k, _)| *k == "t")
                .map(|i| i.1)
                .collect();
            assert_eq!(ts.len(), 1, "exactly one t");
            assert!(ts[0].bytes().all(|b| b.is_ascii_digit()));
            let t: i64 = ts[0].parse().expect("t fits an i64");
            assert!((t - T).abs() <= TOLERANCE);
            // The tag is over the canonical decimal of t: "0170..." signs as "170...".
            let expected = tag(&t.to_string(), BODY);
            assert!(
                items
                    .iter()
                    .any(|(k, v)| *k == "v1" && hex::decode(v).is_ok_and(|b| b == expected)),
                "accepted without the true v1"
            );
        }
        return;
    }
    if rest.len() < 8 {
        return;
    }
    let (t_bytes, body) = rest.split_at(8);
    // A sender's clock: any non-negative unix time.
    let t = i64::from_le_bytes(t_bytes.try_into().expect("8 bytes")) & i64::MAX;
    let header = HmacSigner.signature_header(&[Secret::new(SECRET)], t, body);
    assert_eq!(
        header,
        format!("t={t},v1={}", hex::encode(tag(&t.to_string(), body)))
    );
    assert_eq!(verify(SECRET, &header, body, t, TOLERANCE), Ok(()));
    let loose = format!(" v0=00 , {} ,v2=x", header.replace(',', " , "));
    assert_eq!(verify(SECRET, &loose, body, t, TOLERANCE), Ok(()));
    if t < i64::MAX - TOLERANCE {
        assert_eq!(
            verify(SECRET, &header, body, t + TOLERANCE + 1, TOLERANCE),
            Err(VerifyError::TooOld {
                age_secs: TOLERANCE + 1
            })
        );
    }
    if let Some(first) = body.first() {
        let mut changed = body.to_vec();
        changed[0] = first ^ 1;
        assert_eq!(
            verify(SECRET, &header, &changed, t, TOLERANCE),
            Err(VerifyError::NoMatch)
        );
    }
    assert_eq!(
        verify("whsec_another", &header, body, t, TOLERANCE),
        Err(VerifyError::NoMatch)
    );
});
