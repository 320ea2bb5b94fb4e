//! Signing secrets at rest: XChaCha20-Poly1305 with a random 24-byte nonce per seal (large
//! enough that random nonces never repeat in practice), associated data binding each value to
//! its row and to the key that sealed it, and a keyring so the operator can rotate the
//! encryption key while rows sealed with older keys still open.

use std::fmt;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};
use hmac::{Hmac, Mac};
use pay_domain::kernel::ports::SecretSealer;
use pay_domain::kernel::secret::SealedSecret;
use pay_domain::kernel::secret::Secret;
use pay_domain::{Fault, PortResult};
use sha2::{Digest, Sha256};

const KEY_LEN: usize = 32;
const NONCE_LEN: usize = 24;
const TAG_LEN: usize = 16;

/// Why a configured key was refused. Never carries key material.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("{which} encryption key is not valid base64")]
    InvalidBase64 { which: String },
    #[error("{which} encryption key is {len} bytes; it must be exactly 32")]
    WrongLength { which: String, len: usize },
    #[error("{which} encryption key is given twice")]
    Duplicate { which: String },
}

struct KeyEntry {
    id: String,
    cipher: XChaCha20Poly1305,
    /// The key itself, for `Keyring::derive` only (never printed).
    bytes: [u8; KEY_LEN],
}

impl KeyEntry {
    fn new(bytes: &[u8; KEY_LEN]) -> Self {
        KeyEntry {
            id: key_id(bytes),
            cipher: XChaCha20Poly1305::new(Key::from_slice(bytes)),
            bytes: *bytes,
        }
    }

    fn derive(&self, label: &str) -> [u8; 32] {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.bytes)
            .expect("HMAC accepts any key length");
        mac.update(label.as_bytes());
        mac.finalize().into_bytes().into()
    }
}

/// `k` + 8 hex characters of SHA-256 of the key: stored beside each sealed value so `open`
/// picks the right key, and short enough to read in a log. 32 bits of a hash of a 256-bit
/// random key reveal nothing useful about it.
fn key_id(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    format!("k{}", &hex::encode(digest)[..8])
}

/// The current key (seals and opens) and older keys (open only, until their rows are
/// resealed).
pub struct Keyring {
    current: KeyEntry,
    older: Vec<KeyEntry>,
}

impl Keyring {
    /// Builds a keyring from base64 (standard alphabet) keys of exactly 32 bytes each.
    pub fn from_base64(current: &str, older: &[&str]) -> Result<Keyring, KeyError> {
        let decode = |which: String, b64: &str| -> Result<KeyEntry, KeyError> {
            // Keys often come from files or environment variables with a trailing newline.
            let bytes = STANDARD
                .decode(b64.trim())
                .map_err(|_| KeyError::InvalidBase64 {
                    which: which.clone(),
                })?;
            let array: [u8; KEY_LEN] =
                bytes
                    .as_slice()
                    .try_into()
                    .map_err(|_| KeyError::WrongLength {
                        which,
                        len: bytes.len(),
                    })?;
            Ok(KeyEntry::new(&array))
        };
        let current = decode("current".into(), current)?;
        let mut ring = Keyring {
            current,
            older: Vec::new(),
        };
        for (i, b64) in older.iter().enumerate() {
            let which = format!("older[{i}]");
            let entry = decode(which.clone(), b64)?;
            // Same id means the same key (barring a 32-bit hash collision, refused as well):
            // the id must name exactly one key or `open` could pick the wrong one.
            if ring.entry(&entry.id).is_some() {
                return Err(KeyError::Duplicate { which });
            }
            ring.older.push(entry);
        }
        Ok(ring)
    }

    /// A keyring with one fresh random key, and that key in base64 for the operator to keep.
    pub fn generate() -> (Keyring, String) {
        let key = XChaCha20Poly1305::generate_key(&mut OsRng);
        let b64 = STANDARD.encode(key);
        let ring = Keyring {
            current: KeyEntry::new(&key.into()),
            older: Vec::new(),
        };
        (ring, b64)
    }

    /// A key of its own for another use, derived from each key of the ring:
    /// HMAC-SHA256(key, `label`), the current key's first, then each older key's. A derived key
    /// never equals a ring key nor another label's, and it rotates with the ring.
    pub fn derive(&self, label: &str) -> (Vec<u8>, Vec<Vec<u8>>) {
        (
            self.current.derive(label).to_vec(),
            self.older
                .iter()
                .map(|e| e.derive(label).to_vec())
                .collect(),
        )
    }

    /// The id new seals carry; rows with another id are due for resealing.
    pub fn current_key_id(&self) -> &str {
        &self.current.id
    }

    fn entry(&self, id: &str) -> Option<&KeyEntry> {
        std::iter::once(&self.current)
            .chain(&self.older)
            .find(|e| e.id == id)
    }
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Ids only: they are what an operator needs to tell keys apart.
        f.debug_struct("Keyring")
            .field("current", &self.current.id)
            .field(
                "older",
                &self.older.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// The production `SecretSealer`.
#[derive(Debug)]
pub struct AeadSealer {
    keys: Keyring,
}

impl AeadSealer {
    pub fn new(keys: Keyring) -> Self {
        AeadSealer { keys }
    }

    pub fn keyring(&self) -> &Keyring {
        &self.keys
    }
}

/// Marks a value sealed with the key id bound into its associated data. Values without it were
/// sealed before (the row's associated data alone); they still open, and their rows are sealed
/// again in this form on their next write. Base64 never contains `:`, so the two forms cannot
/// be confused.
const CURRENT_FORM: &str = "v2:";

/// The associated data of the current form: the format version, the key id and the row's
/// associated data (table and row id), so a value opens only in its own row, under the key
/// its stored key id names, and in the form it was written in.
fn bound_aad(key_id: &str, aad: &str) -> String {
    format!("{CURRENT_FORM}{key_id}:{aad}")
}

impl SecretSealer for AeadSealer {
    fn seal(&self, secret: &Secret, aad: &str) -> PortResult<SealedSecret> {
        let key = &self.keys.current;
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let ciphertext = key
            .cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: secret.expose().as_bytes(),
                    aad: bound_aad(&key.id, aad).as_bytes(),
                },
            )
            .map_err(|_| Fault::new("sealing a secret failed"))?;
        let mut out = Vec::with_capacity(NONCE_LEN + ciphertext.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&ciphertext);
        Ok(SealedSecret {
            key_id: key.id.clone(),
            sealed: format!("{CURRENT_FORM}{}", STANDARD.encode(out)),
        })
    }

    fn open(&self, sealed: &SealedSecret, aad: &str) -> PortResult<Secret> {
        let key = self.keys.entry(&sealed.key_id).ok_or_else(|| {
            Fault::new(format!(
                "secret sealed with unknown key id {:?}",
                sealed.key_id
            ))
        })?;
        // The form decides the associated data: the current one binds the key id in; a value
        // from before opens with the row's associated data alone.
        let (b64, aad) = match sealed.sealed.strip_prefix(CURRENT_FORM) {
            Some(rest) => (rest, bound_aad(&sealed.key_id, aad)),
            None => (sealed.sealed.as_str(), aad.to_owned()),
        };
        // One message for every failure below: which check failed is no business of a log.
        let refused = || Fault::new("sealed secret does not open");
        let bytes = STANDARD.decode(b64).map_err(|_| refused())?;
        if bytes.len() < NONCE_LEN + TAG_LEN {
            return Err(refused());
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_LEN);
        let plain = key
            .cipher
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: ciphertext,
                    aad: aad.as_bytes(),
                },
            )
            .map_err(|_| refused())?;
        String::from_utf8(plain)
            .map(Secret::new)
            .map_err(|_| refused())
    }

    fn is_current(&self, sealed: &SealedSecret) -> bool {
        sealed.key_id == self.keys.current.id && sealed.sealed.starts_with(CURRENT_FORM)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AAD: &str = "webhook_callbacks:00000000-0000-0000-0000-000000000001:company_payment";
    const KEY_A: [u8; 32] = [7; 32];
    const KEY_B: [u8; 32] = [42; 32];

    fn b64(k: &[u8]) -> String {
        STANDARD.encode(k)
    }

    fn sealer(current: &[u8], older: &[&[u8]]) -> AeadSealer {
        let older: Vec<String> = older.iter().map(|k| b64(k)).collect();
        let older: Vec<&str> = older.iter().map(String::as_str).collect();
        AeadSealer::new(Keyring::from_base64(&b64(current), &older).unwrap())
    }

    fn secret() -> Secret {
        Secret::new("whsec_MfKQ9r3GyiJ2vVzT8xWb4nLpE6sHcA0dRu7kYq1oZNe")
    }

    #[test]
    fn round_trip_and_layout() {
        let s = sealer(&KEY_A, &[]);
        let sealed = s.seal(&secret(), AAD).unwrap();
        assert_eq!(s.open(&sealed, AAD).unwrap(), secret());
        // key id: k + 8 hex of SHA-256 of the key bytes.
        let expected_id = format!("k{}", &hex::encode(Sha256::digest(KEY_A))[..8]);
        assert_eq!(sealed.key_id, expected_id);
        assert_eq!(s.keyring().current_key_id(), expected_id);
        // "v2:" + nonce (24) || ciphertext (plaintext + 16-byte tag), standard base64.
        let b64 = sealed
            .sealed
            .strip_prefix("v2:")
            .expect("the versioned form");
        let raw = STANDARD.decode(b64).unwrap();
        assert_eq!(raw.len(), NONCE_LEN + secret().expose().len() + TAG_LEN);
        assert!(!sealed.sealed.contains("whsec_"));
        // Independently: the same primitive, keyed and fed by hand, opens it with the
        // associated data "v2:" + key id + ":" + the row's, and with the row's alone it does not.
        let cipher = XChaCha20Poly1305::new(Key::from_slice(&KEY_A));
        let (nonce, ct) = raw.split_at(NONCE_LEN);
        let open_with = |aad: &str| {
            cipher.decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: ct,
                    aad: aad.as_bytes(),
                },
            )
        };
        let bound = format!("v2:{expected_id}:{AAD}");
        assert_eq!(open_with(&bound).unwrap(), secret().expose().as_bytes());
        assert!(open_with(AAD).is_err(), "the key id is bound in");
        assert!(s.is_current(&sealed));
    }

    /// A value as the sealer wrote it before the key id was bound in: base64 of nonce and
    /// ciphertext, no prefix, the row's associated data alone.
    fn sealed_the_old_way(key: &[u8; 32], aad: &str) -> SealedSecret {
        let cipher = XChaCha20Poly1305::new(Key::from_slice(key));
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let ct = cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: secret().expose().as_bytes(),
                    aad: aad.as_bytes(),
                },
            )
            .unwrap();
        let mut raw = nonce.to_vec();
        raw.extend_from_slice(&ct);
        SealedSecret {
            key_id: key_id(key),
            sealed: STANDARD.encode(raw),
        }
    }

    #[test]
    fn values_sealed_before_the_key_id_was_bound_still_open() {
        let old = sealed_the_old_way(&KEY_A, AAD);
        // Under the same key, and after a rotation made it an older key.
        for s in [sealer(&KEY_A, &[]), sealer(&KEY_B, &[&KEY_A])] {
            assert_eq!(s.open(&old, AAD).unwrap(), secret());
            assert!(!s.is_current(&old), "due for sealing again");
            // Still bound to its row.
            assert!(s.open(&old, &AAD.replace("0001", "0002")).is_err());
            // Sealed again, it is in the current form.
            let again = s.seal(&s.open(&old, AAD).unwrap(), AAD).unwrap();
            assert!(s.is_current(&again));
            assert_eq!(s.open(&again, AAD).unwrap(), secret());
        }
        // The prefix cannot be added to an old value, nor removed from a new one: each form
        // opens only with its own associated data.
        let s = sealer(&KEY_A, &[]);
        let promoted = SealedSecret {
            sealed: format!("v2:{}", old.sealed),
            ..old.clone()
        };
        assert!(s.open(&promoted, AAD).is_err());
        let new = s.seal(&secret(), AAD).unwrap();
        let demoted = SealedSecret {
            sealed: new.sealed.trim_start_matches("v2:").to_owned(),
            ..new
        };
        assert!(s.open(&demoted, AAD).is_err());
    }

    #[test]
    fn a_key_id_swapped_to_another_live_key_fails() {
        let s = sealer(&KEY_A, &[&KEY_B]);
        let b_id = key_id(&KEY_B);
        let sealed = s.seal(&secret(), AAD).unwrap();
        let swapped = SealedSecret {
            key_id: b_id.clone(),
            ..sealed.clone()
        };
        assert!(s.open(&swapped, AAD).is_err());
        assert!(!s.is_current(&swapped));
        // And the other way: sealed under B (then current), relabelled as A's.
        let under_b = sealer(&KEY_B, &[]).seal(&secret(), AAD).unwrap();
        assert_eq!(under_b.key_id, b_id);
        assert_eq!(s.open(&under_b, AAD).unwrap(), secret());
        let relabelled = SealedSecret {
            key_id: key_id(&KEY_A),
            ..under_b
        };
        assert!(s.open(&relabelled, AAD).is_err());
        // An old-form value relabelled fails as well.
        let old = SealedSecret {
            key_id: b_id,
            ..sealed_the_old_way(&KEY_A, AAD)
        };
        assert!(s.open(&old, AAD).is_err());
    }

    #[test]
    fn other_aad_fails() {
        let s = sealer(&KEY_A, &[]);
        let sealed = s.seal(&secret(), AAD).unwrap();
        let other_row = AAD.replace("0001", "0002");
        assert!(s.open(&sealed, &other_row).is_err());
        assert!(s.open(&sealed, "").is_err());
    }

    #[test]
    fn any_tampered_byte_fails() {
        let s = sealer(&KEY_A, &[]);
        let sealed = s.seal(&secret(), AAD).unwrap();
        let raw = STANDARD
            .decode(sealed.sealed.trim_start_matches("v2:"))
            .unwrap();
        for i in 0..raw.len() {
            let mut bad = raw.clone();
            bad[i] ^= 0x01;
            let tampered = SealedSecret {
                sealed: format!("v2:{}", STANDARD.encode(&bad)),
                ..sealed.clone()
            };
            assert!(s.open(&tampered, AAD).is_err(), "byte {i}");
        }
        for junk in [
            "",
            "v2:",
            "not base64!",
            "v2:not base64!",
            &STANDARD.encode([0u8; NONCE_LEN + TAG_LEN - 1]),
            &format!("v2:{}", STANDARD.encode([0u8; NONCE_LEN + TAG_LEN - 1])),
        ] {
            let junk = SealedSecret {
                sealed: junk.to_owned(),
                ..sealed.clone()
            };
            assert!(s.open(&junk, AAD).is_err());
        }
    }

    #[test]
    fn unknown_key_id_fails() {
        let a = sealer(&KEY_A, &[]);
        let sealed = a.seal(&secret(), AAD).unwrap();
        let b = sealer(&KEY_B, &[]);
        let e = b.open(&sealed, AAD).unwrap_err();
        assert!(e.to_string().contains("unknown key id"), "{e}");
        // Relabelling the row with B's id does not help: B's key cannot open A's ciphertext.
        let relabelled = SealedSecret {
            key_id: b.keyring().current_key_id().into(),
            ..sealed
        };
        assert!(b.open(&relabelled, AAD).is_err());
    }

    #[test]
    fn rotation_older_keys_still_open() {
        let before = sealer(&KEY_A, &[]);
        let old_row = before.seal(&secret(), AAD).unwrap();
        let after = sealer(&KEY_B, &[&KEY_A]);
        assert_eq!(after.open(&old_row, AAD).unwrap(), secret());
        let new_row = after.seal(&secret(), AAD).unwrap();
        assert_eq!(new_row.key_id, after.keyring().current_key_id());
        assert_ne!(
            new_row.key_id, old_row.key_id,
            "new seals use the current key"
        );
        assert!(before.open(&new_row, AAD).is_err());
    }

    #[test]
    fn two_seals_differ() {
        let s = sealer(&KEY_A, &[]);
        let x = s.seal(&secret(), AAD).unwrap();
        let y = s.seal(&secret(), AAD).unwrap();
        assert_ne!(x.sealed, y.sealed);
        let nonce =
            |v: &SealedSecret| STANDARD.decode(&v.sealed[3..]).unwrap()[..NONCE_LEN].to_vec();
        assert_ne!(nonce(&x), nonce(&y));
    }

    #[test]
    fn key_configuration_errors() {
        let good = b64(&KEY_A);
        assert!(matches!(
            Keyring::from_base64("%%%", &[]),
            Err(KeyError::InvalidBase64 { ref which }) if which == "current"
        ));
        assert_eq!(
            Keyring::from_base64(&b64(&[1; 31]), &[]).unwrap_err(),
            KeyError::WrongLength {
                which: "current".into(),
                len: 31
            }
        );
        assert_eq!(
            Keyring::from_base64(&good, &[&b64(&[1; 33])]).unwrap_err(),
            KeyError::WrongLength {
                which: "older[0]".into(),
                len: 33
            }
        );
        assert_eq!(
            Keyring::from_base64(&good, &[&b64(&KEY_B), &good]).unwrap_err(),
            KeyError::Duplicate {
                which: "older[1]".into()
            }
        );
        assert!(Keyring::from_base64(&format!("{good}\n"), &[]).is_ok());
    }

    #[test]
    fn generated_keys_work_and_are_fresh() {
        let (ring, key) = Keyring::generate();
        assert_eq!(STANDARD.decode(&key).unwrap().len(), 32);
        let id = ring.current_key_id().to_owned();
        let s = AeadSealer::new(ring);
        let sealed = s.seal(&secret(), AAD).unwrap();
        // The returned base64 is the key that sealed: a keyring rebuilt from it opens.
        let again = AeadSealer::new(Keyring::from_base64(&key, &[]).unwrap());
        assert_eq!(again.keyring().current_key_id(), id);
        assert_eq!(again.open(&sealed, AAD).unwrap(), secret());
        let (_, other) = Keyring::generate();
        assert_ne!(key, other);
    }

    #[test]
    fn debug_never_prints_key_bytes() {
        let s = sealer(&KEY_A, &[&KEY_B]);
        let d = format!("{s:?} {:?}", s.keyring());
        for key in [KEY_A, KEY_B] {
            assert!(!d.contains(&b64(&key)), "{d}");
            assert!(!d.contains(&hex::encode(key)), "{d}");
            assert!(
                !d.contains(&format!("{:?}", &key[..4]).trim_end_matches(']').to_owned()),
                "{d}"
            );
        }
        assert!(d.contains(s.keyring().current_key_id()), "{d}");
        let (_, b) = Keyring::generate();
        assert!(!format!("{:?}", Keyring::from_base64(&b, &[]).unwrap()).contains(&b));
    }
}
