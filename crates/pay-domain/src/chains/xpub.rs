//! The merchant's extended public key (BIP32): parsed strictly, an extended private key refused
//! before anything else looks at it, and the EVM addresses of its children `0/<i>`.

use std::fmt;
use std::str::FromStr;

use bip32::{ChildNumber, ExtendedKey, ExtendedPublicKey};
use k256::elliptic_curve::sec1::ToEncodedPoint;
use sha3::{Digest, Keccak256};

use crate::kernel::address::eip55;
use crate::kernel::hex;

/// Why a value is not a usable extended public key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XpubRefusal {
    /// An extended private key (`xprv`, `tprv`, `yprv`, `zprv`, ...), or anything serialised
    /// as one. The value is never kept, echoed or logged.
    #[error("this is an extended private key; give the extended public key (xpub...) of the account instead, and keep the private key in the wallet")]
    PrivateKey,
    /// Not a BIP32 extended public key at all.
    #[error("{0}")]
    Invalid(&'static str),
}

/// A BIP32 extended public key as the merchant gave it (`xpub...`), known to be a valid
/// public key whose non-hardened children can be derived.
#[derive(Clone)]
pub struct Xpub {
    text: String,
    key: ExtendedPublicKey<k256::PublicKey>,
}

// Public, but the text is what the merchant typed: keep logs short.
impl fmt::Debug for Xpub {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Xpub({})", self.fingerprint())
    }
}

impl PartialEq for Xpub {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}
impl Eq for Xpub {}

/// The derivation below the account key that deposit addresses use (the external chain).
pub const DERIVATION: &str = "0/*";

/// Longest text worth decoding (an extended key is 111 base58 characters).
const MAX_LEN: usize = 120;

impl Xpub {
    /// Parses `text`: any extended private key is [`XpubRefusal::PrivateKey`] (recognised by
    /// its prefix `?prv` even with a bad checksum, and by its serialised key byte `0x00`);
    /// anything else that is not a valid extended public key on secp256k1 is
    /// [`XpubRefusal::Invalid`].
    pub fn parse(text: &str) -> Result<Xpub, XpubRefusal> {
        let text = text.trim();
        let prefix = text.get(..4).unwrap_or("");
        if prefix
            .get(1..)
            .is_some_and(|rest| rest.eq_ignore_ascii_case("prv"))
        {
            return Err(XpubRefusal::PrivateKey);
        }
        if text.is_empty() {
            return Err(XpubRefusal::Invalid(
                "an extended public key (xpub...) is required",
            ));
        }
        if text.len() > MAX_LEN || !text.is_ascii() {
            return Err(XpubRefusal::Invalid(
                "not an extended public key: a BIP32 xpub is 111 base58 characters",
            ));
        }
        let extended = ExtendedKey::from_str(text).map_err(|_| {
            XpubRefusal::Invalid(
                "not an extended public key: the base58check encoding or its length is wrong",
            )
        })?;
        // A private key's 33 key bytes start with 0x00, whatever version bytes it carries.
        if extended.prefix.is_private() || extended.key_bytes[0] == 0 {
            return Err(XpubRefusal::PrivateKey);
        }
        if !extended.prefix.is_public() {
            return Err(XpubRefusal::Invalid(
                "not an extended public key: unknown version bytes",
            ));
        }
        let key = ExtendedPublicKey::<k256::PublicKey>::try_from(extended).map_err(|_| {
            XpubRefusal::Invalid("not an extended public key: the key is not a point of secp256k1")
        })?;
        // The children 0/<i> must be derivable; a key whose child 0 is not (probability
        // ~2^-127) is refused rather than failing later at a payment.
        key.derive_child(ChildNumber::new(0, false).expect("0 is a valid child"))
            .map_err(|_| XpubRefusal::Invalid("this key's external chain 0 cannot be derived"))?;
        Ok(Xpub {
            text: text.to_owned(),
            key,
        })
    }

    /// The key as given (trimmed).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The BIP32 fingerprint of this key: the first 4 bytes of HASH160 of its compressed
    /// public key, 8 lower-case hex digits.
    pub fn fingerprint(&self) -> String {
        hex::encode(&self.key.fingerprint())
    }

    /// The EIP-55 address of the child `0/<index>`, `None` for an index BIP32 cannot derive
    /// (hardened range, or the ~2^-127 chance of an invalid child).
    pub fn address(&self, index: u32) -> Option<String> {
        let external = self
            .key
            .derive_child(ChildNumber::new(0, false).ok()?)
            .ok()?;
        let child = external
            .derive_child(ChildNumber::new(index, false).ok()?)
            .ok()?;
        Some(evm_address(child.public_key()))
    }

    /// The child at `path` below this key (non-hardened steps only): test vectors name keys
    /// this way.
    pub fn derive_path(&self, path: &[u32]) -> Option<String> {
        let mut key = self.key.clone();
        for &i in path {
            key = key.derive_child(ChildNumber::new(i, false).ok()?).ok()?;
        }
        Some(key.to_extended_key(bip32::Prefix::XPUB).to_string())
    }
}

/// The EVM address of a public key: the last 20 bytes of Keccak-256 of the uncompressed point
/// (without its `0x04` tag), EIP-55 checksummed, with `0x`.
fn evm_address(key: &k256::PublicKey) -> String {
    let point = key.to_encoded_point(false);
    let hash = Keccak256::digest(&point.as_bytes()[1..]);
    format!("0x{}", eip55(&hex::encode(&hash[12..])))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The account key `m/44'/60'/0'` of the well-known development mnemonic `test test test
    /// test test test test test test test test junk` (anvil's and hardhat's): its children
    /// `0/0`, `0/1`, `0/2` are the first three funded development accounts every EVM developer
    /// knows, published by those tools (not computed by this code).
    const DEV_ACCOUNT_XPUB: &str = "xpub6Ce9NcJvTk36xtLSrJLZqE7wtgA5deCeYs7rSQtreh4cj6ByPtrg9sD7V2FNFLPnf8heNP3FGkeV9qwfzvZNSd54JoNXVsXFYSYwHsnJxqP";

    #[test]
    fn the_first_children_are_the_development_accounts() {
        let x = Xpub::parse(DEV_ACCOUNT_XPUB).unwrap();
        assert_eq!(
            (0..3).map(|i| x.address(i).unwrap()).collect::<Vec<_>>(),
            [
                "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
                "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
                "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
            ]
        );
    }

    /// BIP32 test vector 1: the public child `1` of `m/0H` is `m/0H/1`, and the public child
    /// `1000000000` of `m/0H/1/2H/2` is `m/0H/1/2H/2/1000000000` (keys from BIP-0032).
    #[test]
    fn bip32_test_vector_1_public_derivation() {
        let m0h = Xpub::parse("xpub68Gmy5EdvgibQVfPdqkBBCHxA5htiqg55crXYuXoQRKfDBFA1WEjWgP6LHhwBZeNK1VTsfTFUHCdrfp1bgwQ9xv5ski8PX9rL2dZXvgGDnw").unwrap();
        assert_eq!(
            m0h.derive_path(&[1]).unwrap(),
            "xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ"
        );
        let m = Xpub::parse("xpub6FHa3pjLCk84BayeJxFW2SP4XRrFd1JYnxeLeU8EqN3vDfZmbqBqaGJAyiLjTAwm6ZLRQUMv1ZACTj37sR62cfN7fe5JnJ7dh8zL4fiyLHV").unwrap();
        assert_eq!(
            m.derive_path(&[1_000_000_000]).unwrap(),
            "xpub6H1LXWLaKsWFhvm6RVpEL9P4KfRZSW7abD2ttkWP3SSQvnyA8FSVqNTEcYFgJS2UaFcxupHiYkro49S8yGasTvXEYBVPamhGW6cFJodrTHy"
        );
        // The master key's fingerprint is the vector's 3442193e.
        let master = Xpub::parse("xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8").unwrap();
        assert_eq!(master.fingerprint(), "3442193e");
    }

    #[test]
    fn private_keys_are_refused_whatever_their_prefix() {
        // BIP32 test vector 1's master private key, and the same with a broken checksum.
        let xprv = "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi";
        assert_eq!(Xpub::parse(xprv), Err(XpubRefusal::PrivateKey));
        let broken = format!("{}x", &xprv[..xprv.len() - 1]);
        assert_eq!(Xpub::parse(&broken), Err(XpubRefusal::PrivateKey));
        for prefix in ["tprv", "yprv", "zprv", "Xprv"] {
            let other = format!("{prefix}{}", &xprv[4..]);
            assert_eq!(
                Xpub::parse(&other),
                Err(XpubRefusal::PrivateKey),
                "{prefix}"
            );
        }
        // Nothing of the key is in the refusal.
        assert!(!XpubRefusal::PrivateKey.to_string().contains("9s21"));
    }

    #[test]
    fn anything_else_is_invalid() {
        for bad in [
            "",
            "xpub",
            "hello",
            // A checksum error in a real xpub.
            "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet9",
            "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
            &"x".repeat(500),
            // Text whose fourth byte ends a character but whose second does not (found by the
            // OpenAPI check's fuzzing: it once panicked here).
            "\u{1F600}o\u{b6}bL|N",
            "\u{b6}\u{b6}prv",
        ] {
            assert!(
                matches!(Xpub::parse(bad), Err(XpubRefusal::Invalid(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn hardened_indices_have_no_address() {
        let x = Xpub::parse(DEV_ACCOUNT_XPUB).unwrap();
        assert!(x.address(0x8000_0000).is_none());
        assert!(x.address(0x7fff_ffff).is_some());
    }
}
