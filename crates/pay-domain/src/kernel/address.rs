//! Whether a text is an address of a given chain, by that chain's published format: a pure rule
//! (no network, no processor), so a payer's refund address is checked the same way whichever
//! processor runs, and every rule is tested with `cargo test -p pay-domain`.
//!
//! The chain comes from the CAIP-2 part of an asset identifier (`eip155:1/slip44:60` ->
//! `eip155:1`):
//!
//! | chain | accepted |
//! |---|---|
//! | `eip155:*` (EVM) | `0x` + 40 hex digits; all lower or all upper case, or mixed case with a valid EIP-55 checksum (Keccak-256); never the zero address |
//! | `bip122:000000000019d6689c085ae165831e93` (Bitcoin) | base58check P2PKH (`0x00`, `1...`) or P2SH (`0x05`, `3...`); segwit `bc1...`: bech32 for witness v0 (BIP-173), bech32m for v1-16 (BIP-350) |
//! | `bip122:000000000933ea01ad0ee984209779ba` (Bitcoin testnet) | the same with `0x6f`, `0xc4` and `tb1...` |
//! | `solana:*` | base58 decoding to exactly 32 bytes |
//! | `tron:*` | base58check of 21 bytes starting `0x41` (`T...`) |
//! | any other | no format known here: 1 to 128 ASCII letters, digits and `:` (the merchant checks the address before refunding) |

use sha2::{Digest, Sha256};
use sha3::Keccak256;

/// Longest address of a chain without a known format.
pub const MAX_OTHER_LEN: usize = 128;

/// The base58 alphabet (Bitcoin's; Solana and Tron use it too).
pub const BASE58: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
/// The bech32 data alphabet.
pub const BECH32: &[u8; 32] = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l";
/// What a valid bech32 (BIP-173) checksum evaluates to.
pub const BECH32_CONST: u32 = 1;
/// What a valid bech32m (BIP-350) checksum evaluates to.
pub const BECH32M_CONST: u32 = 0x2bc8_30a3;
/// Tron's address version byte.
const TRON_VERSION: u8 = 0x41;

/// A Bitcoin network's address prefixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BitcoinNetwork {
    pub hrp: &'static str,
    pub p2pkh: u8,
    pub p2sh: u8,
}

pub const BITCOIN_MAINNET: BitcoinNetwork = BitcoinNetwork {
    hrp: "bc",
    p2pkh: 0x00,
    p2sh: 0x05,
};
pub const BITCOIN_TESTNET: BitcoinNetwork = BitcoinNetwork {
    hrp: "tb",
    p2pkh: 0x6f,
    p2sh: 0xc4,
};

/// How a chain writes its addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressFormat {
    Evm,
    Bitcoin(BitcoinNetwork),
    Solana,
    Tron,
    /// A chain this build has no format for.
    Other,
}

/// Why a text is not an address of the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    #[error("it is empty")]
    Empty,
    #[error("it is too long")]
    TooLong,
    #[error("it has characters such addresses never contain")]
    Characters,
    #[error("it has the wrong length")]
    Length,
    #[error("its checksum does not match (a mistyped character?)")]
    Checksum,
    #[error("its EIP-55 checksum (the mixed case) does not match")]
    Eip55Checksum,
    #[error("it is the zero address, where funds are lost")]
    ZeroAddress,
    #[error("it mixes upper and lower case")]
    MixedCase,
    #[error("it belongs to another network")]
    Network,
    #[error("its witness version or program is not valid")]
    Witness,
}

impl AddressFormat {
    /// The format of the chain of a CAIP-19 asset identifier (or a bare CAIP-2 chain id).
    pub fn of_asset(asset_identifier: &str) -> AddressFormat {
        let chain = asset_identifier.split('/').next().unwrap_or("");
        let (namespace, reference) = chain.split_once(':').unwrap_or((chain, ""));
        match (namespace, reference) {
            ("eip155", _) => AddressFormat::Evm,
            ("bip122", "000000000019d6689c085ae165831e93") => {
                AddressFormat::Bitcoin(BITCOIN_MAINNET)
            }
            ("bip122", "000000000933ea01ad0ee984209779ba") => {
                AddressFormat::Bitcoin(BITCOIN_TESTNET)
            }
            ("solana", _) => AddressFormat::Solana,
            ("tron", _) => AddressFormat::Tron,
            _ => AddressFormat::Other,
        }
    }

    /// What an address of this format looks like, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            AddressFormat::Evm => "0x and 40 hex digits, EIP-55 checksummed when in mixed case",
            AddressFormat::Bitcoin(n) if n == BITCOIN_MAINNET => {
                "a legacy 1... or 3... address, or a bc1... segwit address"
            }
            AddressFormat::Bitcoin(_) => {
                "a legacy m..., n... or 2... address, or a tb1... segwit address"
            }
            AddressFormat::Solana => "32 bytes in base58, 32 to 44 characters",
            AddressFormat::Tron => "T and 33 base58 characters",
            AddressFormat::Other => "1 to 128 letters, digits and colons",
        }
    }

    /// Whether `address` (already trimmed) is an address of this format.
    pub fn check(self, address: &str) -> Result<(), AddressError> {
        if address.is_empty() {
            return Err(AddressError::Empty);
        }
        // No format here is longer than 90 characters (bech32's limit); `Other` allows 128.
        if address.len() > MAX_OTHER_LEN {
            return Err(AddressError::TooLong);
        }
        match self {
            AddressFormat::Evm => evm(address),
            AddressFormat::Bitcoin(net) => bitcoin(address, net),
            AddressFormat::Solana => match base58_decode(address) {
                Some(bytes) if bytes.len() == 32 => Ok(()),
                Some(_) => Err(AddressError::Length),
                None => Err(AddressError::Characters),
            },
            AddressFormat::Tron => {
                let payload = base58check(address)?;
                if payload.len() != 21 {
                    return Err(AddressError::Length);
                }
                if payload[0] != TRON_VERSION {
                    return Err(AddressError::Network);
                }
                Ok(())
            }
            AddressFormat::Other => {
                if address
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b':')
                {
                    Ok(())
                } else {
                    Err(AddressError::Characters)
                }
            }
        }
    }
}

/// `0x` + 40 hex digits; mixed case must carry the EIP-55 checksum; not the zero address.
fn evm(address: &str) -> Result<(), AddressError> {
    let hex = address.strip_prefix("0x").ok_or(AddressError::Characters)?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(AddressError::Characters);
    }
    if hex.len() != 40 {
        return Err(AddressError::Length);
    }
    if hex.bytes().all(|b| b == b'0') {
        return Err(AddressError::ZeroAddress);
    }
    let has_lower = hex.bytes().any(|b| b.is_ascii_lowercase());
    let has_upper = hex.bytes().any(|b| b.is_ascii_uppercase());
    if has_lower && has_upper && eip55(&hex.to_ascii_lowercase()) != hex {
        return Err(AddressError::Eip55Checksum);
    }
    Ok(())
}

/// EIP-55: the hex letter at position i is upper case when nibble i of
/// Keccak-256(lower-case hex as ASCII) is 8 or more.
pub fn eip55(lower_hex: &str) -> String {
    let hash = Keccak256::digest(lower_hex.as_bytes());
    lower_hex
        .chars()
        .enumerate()
        .map(|(i, c)| {
            let nibble = (hash[i / 2] >> if i % 2 == 0 { 4 } else { 0 }) & 0x0f;
            if nibble >= 8 {
                c.to_ascii_uppercase()
            } else {
                c
            }
        })
        .collect()
}

fn bitcoin(address: &str, net: BitcoinNetwork) -> Result<(), AddressError> {
    let prefix = format!("{}1", net.hrp);
    let segwit_shaped = address
        .as_bytes()
        .get(..prefix.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(prefix.as_bytes()));
    if segwit_shaped {
        return segwit(address, net.hrp);
    }
    let payload = base58check(address)?;
    if payload.len() != 21 {
        return Err(AddressError::Length);
    }
    if payload[0] != net.p2pkh && payload[0] != net.p2sh {
        return Err(AddressError::Network);
    }
    Ok(())
}

/// A segwit address of `hrp` (BIP-173 bech32 for witness v0, BIP-350 bech32m for v1 to 16).
fn segwit(address: &str, hrp: &str) -> Result<(), AddressError> {
    if address.len() > 90 {
        return Err(AddressError::TooLong);
    }
    if !address.bytes().all(|b| (33..=126).contains(&b)) {
        return Err(AddressError::Characters);
    }
    let has_lower = address.bytes().any(|b| b.is_ascii_lowercase());
    let has_upper = address.bytes().any(|b| b.is_ascii_uppercase());
    if has_lower && has_upper {
        return Err(AddressError::MixedCase);
    }
    let lower = address.to_ascii_lowercase();
    let (found_hrp, data) = lower.rsplit_once('1').ok_or(AddressError::Characters)?;
    if found_hrp != hrp {
        return Err(AddressError::Network);
    }
    // Witness version, at least one program character, and the 6-character checksum.
    if data.len() < 8 {
        return Err(AddressError::Length);
    }
    let values: Vec<u8> = data
        .bytes()
        .map(|c| BECH32.iter().position(|&a| a == c).map(|p| p as u8))
        .collect::<Option<_>>()
        .ok_or(AddressError::Characters)?;
    let version = values[0];
    if version > 16 {
        return Err(AddressError::Witness);
    }
    let mut check = hrp_expand(hrp);
    check.extend_from_slice(&values);
    let want = if version == 0 {
        BECH32_CONST
    } else {
        BECH32M_CONST
    };
    if bech32_polymod(&check) != want {
        return Err(AddressError::Checksum);
    }
    let program = from_5bit(&values[1..values.len() - 6]).ok_or(AddressError::Witness)?;
    let length_ok = match version {
        0 => program.len() == 20 || program.len() == 32,
        _ => (2..=40).contains(&program.len()),
    };
    if !length_ok {
        return Err(AddressError::Witness);
    }
    Ok(())
}

pub fn hrp_expand(hrp: &str) -> Vec<u8> {
    hrp.bytes()
        .map(|b| b >> 5)
        .chain([0])
        .chain(hrp.bytes().map(|b| b & 31))
        .collect()
}

/// The BIP-173 checksum polynomial over 5-bit values.
pub fn bech32_polymod(values: &[u8]) -> u32 {
    const GEN: [u32; 5] = [
        0x3b6a_57b2,
        0x2650_8e6d,
        0x1ea1_19fa,
        0x3d42_33dd,
        0x2a14_62b3,
    ];
    let mut chk: u32 = 1;
    for &v in values {
        let top = chk >> 25;
        chk = ((chk & 0x01ff_ffff) << 5) ^ u32::from(v);
        for (i, g) in GEN.iter().enumerate() {
            if (top >> i) & 1 == 1 {
                chk ^= g;
            }
        }
    }
    chk
}

/// 5-bit groups back to bytes; `None` when the padding is over 4 bits or not zero.
fn from_5bit(values: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(values.len() * 5 / 8);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &v in values {
        acc = (acc << 5) | u32::from(v);
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push(((acc >> bits) & 0xff) as u8);
        }
    }
    if bits >= 5 || (acc << (8 - bits)) & 0xff != 0 {
        return None;
    }
    Some(out)
}

/// Base58 to bytes; `None` on a character outside the alphabet. Leading `1`s are zero bytes.
pub fn base58_decode(s: &str) -> Option<Vec<u8>> {
    let mut bytes: Vec<u8> = Vec::with_capacity(s.len()); // least significant first
    for c in s.bytes() {
        let mut carry = BASE58.iter().position(|&a| a == c)? as u32;
        for b in bytes.iter_mut() {
            carry += u32::from(*b) * 58;
            *b = (carry & 0xff) as u8;
            carry >>= 8;
        }
        while carry > 0 {
            bytes.push((carry & 0xff) as u8);
            carry >>= 8;
        }
    }
    let zeros = s.bytes().take_while(|&c| c == b'1').count();
    bytes.extend(std::iter::repeat_n(0, zeros));
    bytes.reverse();
    Some(bytes)
}

/// The payload of a base58check string (the last 4 bytes are the first 4 of the double
/// SHA-256 of the rest).
fn base58check(s: &str) -> Result<Vec<u8>, AddressError> {
    let mut bytes = base58_decode(s).ok_or(AddressError::Characters)?;
    if bytes.len() < 5 {
        return Err(AddressError::Length);
    }
    let checksum = bytes.split_off(bytes.len() - 4);
    if Sha256::digest(Sha256::digest(&bytes))[..4] != checksum[..] {
        return Err(AddressError::Checksum);
    }
    Ok(bytes)
}

// ----- encoders: for makers of addresses (the sandbox processor) and the tests -----

/// Base58 (Bitcoin's alphabet, also Solana's and Tron's): leading zero bytes become `1`s.
pub fn base58_encode(bytes: &[u8]) -> String {
    // Base-58 digits, least significant first.
    let mut digits: Vec<u8> = Vec::with_capacity(bytes.len() * 138 / 100 + 1);
    for &b in bytes {
        let mut carry = u32::from(b);
        for d in digits.iter_mut() {
            carry += u32::from(*d) << 8;
            *d = (carry % 58) as u8;
            carry /= 58;
        }
        while carry > 0 {
            digits.push((carry % 58) as u8);
            carry /= 58;
        }
    }
    let zeros = bytes.iter().take_while(|&&b| b == 0).count();
    std::iter::repeat_n('1', zeros)
        .chain(
            digits
                .iter()
                .rev()
                .map(|&d| char::from(BASE58[usize::from(d)])),
        )
        .collect()
}

/// Base58check: `payload` and the first four bytes of its double SHA-256.
pub fn base58check_encode(payload: &[u8]) -> String {
    let mut bytes = payload.to_vec();
    bytes.extend_from_slice(&Sha256::digest(Sha256::digest(payload))[..4]);
    base58_encode(&bytes)
}

/// Regroups bytes into 5-bit values, padding the last with zero bits.
pub fn to_5bit(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() * 8 / 5 + 1);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &b in bytes {
        acc = ((acc << 8) | u32::from(b)) & 0xfff;
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(((acc >> bits) & 31) as u8);
        }
    }
    if bits > 0 {
        out.push(((acc << (5 - bits)) & 31) as u8);
    }
    out
}

/// A segwit address: `hrp`, `1`, the witness `version` and `program` in 5-bit groups, and a
/// checksum that evaluates to `constant` (`BECH32_CONST` for v0, `BECH32M_CONST` for v1-16;
/// anything else makes a string every decoder refuses, as the sandbox wants).
pub fn segwit_encode(hrp: &str, version: u8, program: &[u8], constant: u32) -> String {
    let mut data = vec![version];
    data.extend(to_5bit(program));
    let mut values = hrp_expand(hrp);
    values.extend_from_slice(&data);
    values.extend_from_slice(&[0; 6]);
    let checksum = bech32_polymod(&values) ^ constant;
    data.extend((0..6).map(|i| ((checksum >> (5 * (5 - i))) & 31) as u8));
    let mut out = String::with_capacity(hrp.len() + 1 + data.len());
    out.push_str(hrp);
    out.push('1');
    out.extend(data.iter().map(|&d| char::from(BECH32[usize::from(d)])));
    out
}

#[cfg(test)]
mod tests;
