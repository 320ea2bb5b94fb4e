//! The host's own adapters of the non-storage ports the embedded services take: its clock,
//! the webhook signature and the sealing of webhook secrets at rest. Randomness, digests and
//! passwords come from `pay-auth`; the sandbox processor and its prices from `pay-processor`.

use std::time::Instant;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use hmac::{Hmac, Mac};
use pay_domain::kernel::ports::{Clock, SecretSealer};
use pay_domain::kernel::secret::SealedSecret;
use pay_domain::kernel::secret::Secret;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::webhooks::ports::WebhookSigner;
use pay_domain::{Fault, PortResult};
use sha2::Sha256;

/// Real time, starting from a chosen instant (so a demo always runs on the same day).
#[derive(Debug)]
pub struct HostClock {
    start: Timestamp,
    since: Instant,
}

impl HostClock {
    pub fn starting_at(start: Timestamp) -> HostClock {
        HostClock {
            start,
            since: Instant::now(),
        }
    }
}

impl Clock for HostClock {
    fn now(&self) -> Timestamp {
        let elapsed = time::Duration::try_from(self.since.elapsed()).unwrap_or(time::Duration::MAX);
        self.start.plus(elapsed)
    }
}

/// `t=<t>,v1=<hex HMAC-SHA256 of "{t}.{body}">`, one `v1=` per secret.
#[derive(Debug, Default)]
pub struct HmacSigner;

impl WebhookSigner for HmacSigner {
    fn signature_header(&self, secrets: &[Secret], t: i64, body: &[u8]) -> String {
        let mut header = format!("t={t}");
        for s in secrets {
            let Ok(mut mac) = <Hmac<Sha256> as Mac>::new_from_slice(s.expose().as_bytes()) else {
                continue;
            };
            mac.update(format!("{t}.").as_bytes());
            mac.update(body);
            header.push_str(",v1=");
            header.push_str(&hex::encode(mac.finalize().into_bytes()));
        }
        header
    }
}

/// Webhook secrets at rest: ChaCha20-Poly1305 under one key, a random nonce per value, the
/// key id and the row's associated data bound in.
pub struct OneKeySealer {
    key_id: String,
    cipher: ChaCha20Poly1305,
}

impl std::fmt::Debug for OneKeySealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OneKeySealer")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

impl OneKeySealer {
    pub fn new(key_id: &str, key: &[u8; 32]) -> OneKeySealer {
        OneKeySealer {
            key_id: key_id.to_owned(),
            cipher: ChaCha20Poly1305::new(Key::from_slice(key)),
        }
    }

    fn bound(&self, aad: &str) -> String {
        format!("{}\n{aad}", self.key_id)
    }
}

impl SecretSealer for OneKeySealer {
    fn seal(&self, secret: &Secret, aad: &str) -> PortResult<SealedSecret> {
        let nonce: [u8; 12] = rand::random();
        let aad = self.bound(aad);
        let payload = Payload {
            msg: secret.expose().as_bytes(),
            aad: aad.as_bytes(),
        };
        let sealed = self
            .cipher
            .encrypt(Nonce::from_slice(&nonce), payload)
            .map_err(|_| Fault::new("sealing a secret"))?;
        Ok(SealedSecret {
            key_id: self.key_id.clone(),
            sealed: hex::encode([nonce.as_slice(), &sealed].concat()),
        })
    }

    fn open(&self, sealed: &SealedSecret, aad: &str) -> PortResult<Secret> {
        let refused = || Fault::new("a sealed secret that does not open");
        if sealed.key_id != self.key_id {
            return Err(refused());
        }
        let bytes = hex::decode(&sealed.sealed).map_err(|_| refused())?;
        if bytes.len() < 12 {
            return Err(refused());
        }
        let (nonce, ciphertext) = bytes.split_at(12);
        let aad = self.bound(aad);
        let payload = Payload {
            msg: ciphertext,
            aad: aad.as_bytes(),
        };
        let plain = self
            .cipher
            .decrypt(Nonce::from_slice(nonce), payload)
            .map_err(|_| refused())?;
        String::from_utf8(plain)
            .map(Secret::new)
            .map_err(|_| refused())
    }

    fn is_current(&self, sealed: &SealedSecret) -> bool {
        sealed.key_id == self.key_id
    }
}
