//! Sandbox deposit addresses in each chain's format, derived from the session and the chain.
//!
//! Every address comes from `seed = SHA-256(session UUID as its 16 bytes || chain code as UTF-8)`.
//! They look like the chain's addresses, and where the format lets us they are made so that a
//! wallet refuses them, so that nobody can lose real funds to a sandbox address by mistake:
//!
//! | chain code | shape | why a wallet refuses it |
//! |---|---|---|
//! | `ethereum`, `base`, `polygon` | `0x` + 40 lower-case hex | it does not: EVM addresses carry no checksum |
//! | `bitcoin` | `bc1q` + 38 bech32 characters (P2WPKH shape) | its bech32 checksum is wrong on purpose |
//! | `solana` | 44 base58 characters | it decodes to more than 32 bytes |
//! | `tron` | `T` + 33 base58 characters (base58check of `0x41` + 20 bytes) | its 4-byte checksum is inverted |
//! | anything else | `sbx_` + 40 lower-case hex | not a chain format |

use sha2::{Digest, Sha256};
use uuid::Uuid;

/// The base58 alphabet (Bitcoin's, used by Solana and Tron).
pub use pay_domain::kernel::address::BASE58 as BASE58_ALPHABET;
/// The bech32 data alphabet.
pub use pay_domain::kernel::address::BECH32 as BECH32_ALPHABET;
use pay_domain::kernel::address::{base58_encode, segwit_encode};

/// What our bech32 checksums evaluate to: a valid bech32 (BIP-173) string gives 1 and a valid
/// bech32m (BIP-350) one `0x2bc830a3`, so every decoder refuses ours.
const SANDBOX_BECH32_CONST: u32 = 0;

/// The smallest first base58 digit that makes a 44-character string worth more than 2^256
/// (2^256 / 58^43 is about 17.2), so it cannot decode to a 32-byte Solana public key.
const SOLANA_FIRST_DIGIT_MIN: usize = 18;
/// Tron's mainnet address version byte (base58check of it starts with `T`).
const TRON_VERSION: u8 = 0x41;

/// The deposit address of `session` on the chain `chain_code` (see the module docs for the
/// shapes). The same inputs always give the same address.
pub fn deposit_address(session: Uuid, chain_code: &str) -> String {
    let seed: [u8; 32] = Sha256::new()
        .chain_update(session.as_bytes())
        .chain_update(chain_code.as_bytes())
        .finalize()
        .into();
    match chain_code {
        "ethereum" | "base" | "polygon" => format!("0x{}", hex::encode(&seed[..20])),
        "bitcoin" => bech32_p2wpkh(&seed[..20], SANDBOX_BECH32_CONST),
        "solana" => solana(seed),
        "tron" => tron(&seed[..20], true),
        _ => format!("sbx_{}", hex::encode(&seed[..20])),
    }
}

/// `bc1q` + a witness-v0 20-byte program + a checksum that evaluates to `constant` (the sandbox
/// passes `SANDBOX_BECH32_CONST`; `BECH32_CONST` would make a real address).
fn bech32_p2wpkh(program: &[u8], constant: u32) -> String {
    segwit_encode("bc", 0, program, constant)
}

/// 44 base58 characters, the first at least `SOLANA_FIRST_DIGIT_MIN`.
fn solana(seed: [u8; 32]) -> String {
    let mut stream = ByteStream::new(seed);
    let mut out = String::with_capacity(44);
    out.push(stream.pick(BASE58_ALPHABET, SOLANA_FIRST_DIGIT_MIN));
    for _ in 1..44 {
        out.push(stream.pick(BASE58_ALPHABET, 0));
    }
    out
}

/// base58 of `0x41 || body || checksum`, the checksum being the first four bytes of the double
/// SHA-256 of the first 21, with every bit inverted when `spoil` (what the sandbox passes).
fn tron(body: &[u8], spoil: bool) -> String {
    let mut bytes = Vec::with_capacity(25);
    bytes.push(TRON_VERSION);
    bytes.extend_from_slice(body);
    let check = Sha256::digest(Sha256::digest(&bytes));
    bytes.extend(check[..4].iter().map(|&b| if spoil { !b } else { b }));
    base58_encode(&bytes)
}

/// Bytes from `SHA-256(seed || counter as 4 big-endian bytes)`, counter 0, 1, ...
struct ByteStream {
    seed: [u8; 32],
    counter: u32,
    block: [u8; 32],
    pos: usize,
}

impl ByteStream {
    fn new(seed: [u8; 32]) -> Self {
        ByteStream {
            seed,
            counter: 0,
            block: [0; 32],
            pos: 32,
        }
    }

    fn next_byte(&mut self) -> u8 {
        if self.pos == self.block.len() {
            self.block = Sha256::new()
                .chain_update(self.seed)
                .chain_update(self.counter.to_be_bytes())
                .finalize()
                .into();
            self.counter += 1;
            self.pos = 0;
        }
        let b = self.block[self.pos];
        self.pos += 1;
        b
    }

    /// A uniform character of `alphabet[from..]` (rejection sampling, no modulo bias).
    fn pick(&mut self, alphabet: &[u8], from: usize) -> char {
        let n = alphabet.len() - from;
        let limit = 256 - 256 % n;
        loop {
            let b = usize::from(self.next_byte());
            if b < limit {
                return char::from(alphabet[from + b % n]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use pay_domain::kernel::address::{
        base58_decode, bech32_polymod, hrp_expand, BECH32M_CONST, BECH32_CONST,
    };

    /// What the bech32 checksum of `addr` evaluates to (1: valid bech32, BECH32M_CONST: valid
    /// bech32m).
    fn bech32_check(addr: &str) -> u32 {
        let (hrp, data) = addr.rsplit_once('1').unwrap();
        let mut values = hrp_expand(hrp);
        values.extend(
            data.bytes()
                .map(|c| BECH32_ALPHABET.iter().position(|&a| a == c).unwrap() as u8),
        );
        bech32_polymod(&values)
    }

    /// Whether `addr` is a Tron address a wallet accepts (version byte and checksum).
    fn tron_checksum_ok(addr: &str) -> bool {
        let bytes = base58_decode(addr).unwrap();
        bytes.len() == 25
            && bytes[0] == TRON_VERSION
            && Sha256::digest(Sha256::digest(&bytes[..21]))[..4] == bytes[21..]
    }

    fn sessions(n: u128) -> impl Iterator<Item = Uuid> {
        (0..n).map(|i| Uuid::from_u128(0x0190_0000_0000_7000_8000_0000_0000_0000 + i * 7919))
    }

    fn all_in(s: &str, alphabet: &[u8]) -> bool {
        s.bytes().all(|c| alphabet.contains(&c))
    }

    #[test]
    fn base58_round_trips_and_keeps_leading_zeros() {
        for bytes in [
            vec![],
            vec![0],
            vec![0, 0, 1, 2, 3],
            vec![0xff; 25],
            (0..=40).collect::<Vec<u8>>(),
        ] {
            let s = base58_encode(&bytes);
            assert_eq!(base58_decode(&s).unwrap(), bytes, "{s}");
        }
        // Bitcoin's own vector.
        assert_eq!(base58_encode(b"hello world"), "StV1DL6CwTryKyV");
        assert_eq!(base58_encode(&[0, 0, 0x28, 0x7f, 0xb4, 0xcd]), "11233QC4");
    }

    #[test]
    fn the_checkers_accept_real_addresses() {
        // Controls: the rules below would be vacuous if these checkers refused everything.
        assert_eq!(
            bech32_check("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"),
            BECH32_CONST
        );
        assert!(tron_checksum_ok("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"));
        assert_eq!(
            base58_decode("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
                .unwrap()
                .len(),
            32
        );
    }

    #[test]
    fn the_encoders_make_real_addresses_unless_told_to_spoil_them() {
        // BIP-173's vector: the valid constant reproduces it; the sandbox's keeps the shape and
        // changes only the checksum.
        let program = hex::decode("751e76e8199196d454941c45d1b3a323f1433bd6").unwrap();
        let real = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4";
        assert_eq!(bech32_p2wpkh(&program, BECH32_CONST), real);
        let spoiled = bech32_p2wpkh(&program, SANDBOX_BECH32_CONST);
        assert_eq!(spoiled.len(), real.len());
        assert_eq!(spoiled[..36], real[..36]);
        assert_ne!(spoiled[36..], real[36..]);
        // A real Tron address (the USDT contract) round-trips unspoiled.
        let real = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";
        let body = &base58_decode(real).unwrap()[1..21];
        assert_eq!(tron(body, false), real);
        assert_ne!(tron(body, true), real);
        assert!(!tron_checksum_ok(&tron(body, true)));
    }

    #[test]
    fn evm_addresses_are_0x_and_40_lower_hex() {
        for s in sessions(200) {
            for chain in ["ethereum", "base", "polygon"] {
                let a = deposit_address(s, chain);
                assert_eq!(a.len(), 42, "{a}");
                assert!(a.starts_with("0x"), "{a}");
                assert!(all_in(&a[2..], b"0123456789abcdef"), "{a}");
            }
        }
    }

    #[test]
    fn bitcoin_addresses_look_like_p2wpkh_but_fail_the_checksum() {
        for s in sessions(200) {
            let a = deposit_address(s, "bitcoin");
            assert_eq!(a.len(), 42, "{a}");
            assert!(a.starts_with("bc1q"), "{a}");
            assert!(all_in(&a[4..], BECH32_ALPHABET), "{a}");
            let check = bech32_check(&a);
            assert_ne!(check, BECH32_CONST, "{a} is a payable bech32 address");
            assert_ne!(check, BECH32M_CONST, "{a} is a payable bech32m address");
        }
    }

    #[test]
    fn solana_addresses_are_44_base58_and_not_a_32_byte_key() {
        let mut first_chars = std::collections::HashSet::new();
        for s in sessions(300) {
            let a = deposit_address(s, "solana");
            assert_eq!(a.len(), 44, "{a}");
            assert!(all_in(&a, BASE58_ALPHABET), "{a}");
            assert!(
                base58_decode(&a).unwrap().len() > 32,
                "{a} decodes to a Solana public key"
            );
            first_chars.insert(a.as_bytes()[0]);
        }
        // The first character is drawn from the whole allowed range, not a constant.
        assert!(first_chars.len() > 20);
    }

    #[test]
    fn tron_addresses_are_t_and_33_base58_with_an_invalid_checksum() {
        for s in sessions(200) {
            let a = deposit_address(s, "tron");
            assert_eq!(a.len(), 34, "{a}");
            assert!(a.starts_with('T'), "{a}");
            assert!(all_in(&a, BASE58_ALPHABET), "{a}");
            let bytes = base58_decode(&a).unwrap();
            assert_eq!((bytes.len(), bytes[0]), (25, TRON_VERSION), "{a}");
            assert!(!tron_checksum_ok(&a), "{a} is a payable Tron address");
        }
    }

    #[test]
    fn the_domain_refuses_sandbox_addresses_where_the_chain_has_a_checksum() {
        // The rule a payer's refund address must pass: a sandbox deposit address, copied
        // back, is refused on every chain whose format can tell.
        use pay_domain::kernel::address::{AddressFormat, BITCOIN_MAINNET};
        for s in sessions(100) {
            for (chain, format) in [
                ("bitcoin", AddressFormat::Bitcoin(BITCOIN_MAINNET)),
                ("solana", AddressFormat::Solana),
                ("tron", AddressFormat::Tron),
            ] {
                let a = deposit_address(s, chain);
                assert!(format.check(&a).is_err(), "{chain}: {a}");
            }
            // EVM addresses carry no checksum in lower case: accepted, as the module says.
            assert_eq!(
                AddressFormat::Evm.check(&deposit_address(s, "base")),
                Ok(())
            );
        }
    }

    #[test]
    fn unknown_chains_get_sbx_and_40_hex() {
        let a = deposit_address(Uuid::from_u128(1), "dogecoin");
        assert_eq!(a.len(), 44);
        assert!(a.starts_with("sbx_"));
        assert!(all_in(&a[4..], b"0123456789abcdef"));
        // The chain code takes part: two unknown chains differ.
        assert_ne!(a, deposit_address(Uuid::from_u128(1), "litecoin"));
    }

    #[test]
    fn addresses_are_deterministic_and_per_session_and_chain() {
        let mut seen = std::collections::HashSet::new();
        for s in sessions(100) {
            for chain in [
                "ethereum", "base", "polygon", "bitcoin", "solana", "tron", "x",
            ] {
                let a = deposit_address(s, chain);
                assert_eq!(a, deposit_address(s, chain));
                assert!(seen.insert(a), "an address repeats");
            }
        }
    }

    #[test]
    fn the_seed_is_sha256_of_session_bytes_and_chain_code() {
        let s = Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef);
        let mut input = s.as_bytes().to_vec();
        input.extend_from_slice(b"ethereum");
        let digest = Sha256::digest(&input);
        assert_eq!(
            deposit_address(s, "ethereum"),
            format!("0x{}", hex::encode(&digest[..20]))
        );
    }
}
