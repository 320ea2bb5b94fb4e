//! The customer portal's URL signing keys (`PortalKeys`), derived from the secrets keyring:
//! HMAC-SHA256(keyring key, "pay portal signing v1") for the current key and each older one.
//! So the portal key is never a webhook signing secret nor the sealing key itself, and it
//! rotates with `PAY_ENCRYPTION_KEY` (URLs signed before a rotation still verify while the old
//! key stays in `PAY_ENCRYPTION_KEYS_OLD`).

use pay_domain::customers::portal::PortalKey;
use pay_domain::customers::ports::PortalKeys;
use pay_webhooks::Keyring;

/// What the derivation binds the portal keys to (a new use gets a new label).
pub const PORTAL_KEY_LABEL: &str = "pay portal signing v1";

/// The portal keys of a keyring.
#[derive(Debug, Clone)]
pub struct KeyringPortalKeys {
    current: PortalKey,
    previous: Vec<PortalKey>,
}

impl KeyringPortalKeys {
    pub fn new(ring: &Keyring) -> KeyringPortalKeys {
        let (current, older) = ring.derive(PORTAL_KEY_LABEL);
        // A derived key is 32 bytes: always long enough.
        let key = |bytes: Vec<u8>| PortalKey::new(bytes).expect("a 32-byte derived key");
        KeyringPortalKeys {
            current: key(current),
            previous: older.into_iter().map(key).collect(),
        }
    }
}

impl PortalKeys for KeyringPortalKeys {
    fn current(&self) -> PortalKey {
        self.current.clone()
    }

    fn previous(&self) -> Vec<PortalKey> {
        self.previous.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    const B: &str = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=";

    fn keys(current: &str, older: &[&str]) -> KeyringPortalKeys {
        KeyringPortalKeys::new(&Keyring::from_base64(current, older).unwrap())
    }

    #[test]
    fn derived_from_the_ring_and_rotating_with_it() {
        let a = keys(A, &[]);
        assert_eq!(a.current(), keys(A, &[]).current(), "deterministic");
        assert!(a.previous().is_empty());
        // Not the ring key itself.
        assert_ne!(a.current(), PortalKey::new(vec![0; 32]).unwrap());
        // After a rotation to B, A's portal key is still accepted, no longer used to sign.
        let rotated = keys(B, &[A]);
        assert_ne!(rotated.current(), a.current());
        assert_eq!(rotated.previous(), vec![a.current()]);
    }

    #[test]
    fn another_label_gives_another_key() {
        let ring = Keyring::from_base64(A, &[]).unwrap();
        assert_ne!(ring.derive(PORTAL_KEY_LABEL).0, ring.derive("other use").0);
    }
}
