//! Known answers from the standards (EIP-55's examples, BIP-173/BIP-350's vectors, base58check
//! addresses whose keys are public), and properties over generated addresses: what an encoder
//! writes is accepted, and one changed character is refused.

use proptest::prelude::*;

use super::*;

const ETH: &str = "eip155:1/slip44:60";
const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const BTC: &str = "bip122:000000000019d6689c085ae165831e93/slip44:0";
const BTC_TEST: &str = "bip122:000000000933ea01ad0ee984209779ba/slip44:1";
const SOL: &str = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp/slip44:501";
const TRON_USDT: &str = "tron:mainnet/trc20:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";

fn check(asset: &str, address: &str) -> Result<(), AddressError> {
    AddressFormat::of_asset(asset).check(address)
}

// ----- helpers -----

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

// ----- which chain -----

#[test]
fn the_chain_comes_from_the_caip2_part() {
    assert_eq!(AddressFormat::of_asset(ETH), AddressFormat::Evm);
    assert_eq!(AddressFormat::of_asset(BASE_USDC), AddressFormat::Evm);
    assert_eq!(
        AddressFormat::of_asset(BTC),
        AddressFormat::Bitcoin(BITCOIN_MAINNET)
    );
    assert_eq!(
        AddressFormat::of_asset(BTC_TEST),
        AddressFormat::Bitcoin(BITCOIN_TESTNET)
    );
    assert_eq!(AddressFormat::of_asset(SOL), AddressFormat::Solana);
    assert_eq!(AddressFormat::of_asset(TRON_USDT), AddressFormat::Tron);
    // Litecoin is bip122 too, with other prefixes: no rule here.
    assert_eq!(
        AddressFormat::of_asset("bip122:12a765e31ffd4059bada1e25190f6e98/slip44:2"),
        AddressFormat::Other
    );
    assert_eq!(
        AddressFormat::of_asset("cosmos:cosmoshub-4/slip44:118"),
        AddressFormat::Other
    );
    assert_eq!(AddressFormat::of_asset(""), AddressFormat::Other);
}

// ----- EVM (EIP-55) -----

/// EIP-55's own examples: all caps, all lower, and checksummed.
const EIP55_EXAMPLES: &[&str] = &[
    "0x52908400098527886E0F7030069857D2E4169EE7",
    "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
    "0xde709f2102306220921060314715629080e2fb77",
    "0x27b1fdb04752bbc536007a920d24acb045561c26",
    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
    "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
    "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
    "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
];

#[test]
fn eip55_examples_are_accepted_and_reproduced() {
    for a in EIP55_EXAMPLES {
        assert_eq!(check(ETH, a), Ok(()), "{a}");
        assert_eq!(check(BASE_USDC, a), Ok(()), "{a}");
    }
    for a in &EIP55_EXAMPLES[4..] {
        assert_eq!(format!("0x{}", eip55(&a[2..].to_ascii_lowercase())), *a);
    }
}

#[test]
fn evm_refusals() {
    // One letter's case flipped in a checksummed example.
    assert_eq!(
        check(ETH, "0x5aaeb6053F3E94C9b9A09f33669435E7Ef1BeAed"),
        Err(AddressError::Eip55Checksum)
    );
    assert_eq!(
        check(ETH, "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d35A"),
        Err(AddressError::Eip55Checksum)
    );
    for (a, why) in [
        ("0xabc123", AddressError::Length),
        (
            "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed00",
            AddressError::Length,
        ),
        (
            "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
            AddressError::Characters,
        ),
        (
            "0X5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED",
            AddressError::Characters,
        ),
        (
            "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg",
            AddressError::Characters,
        ),
        (
            "0x0000000000000000000000000000000000000000",
            AddressError::ZeroAddress,
        ),
        ("0xPAYER", AddressError::Characters),
        ("", AddressError::Empty),
    ] {
        assert_eq!(check(ETH, a), Err(why), "{a:?}");
    }
}

// ----- Bitcoin -----

/// BIP-350's valid segwit addresses (BIP-173's v0 ones among them).
const SEGWIT_VALID: &[&str] = &[
    "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4",
    "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7",
    "bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y",
    "BC1SW50QGDZ25J",
    "bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs",
    "tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy",
    "tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c",
    "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0",
];

#[test]
fn bip350_valid_addresses_are_accepted_on_their_network_only() {
    for a in SEGWIT_VALID {
        let (mine, other) = if a.to_ascii_lowercase().starts_with("bc1") {
            (BTC, BTC_TEST)
        } else {
            (BTC_TEST, BTC)
        };
        assert_eq!(check(mine, a), Ok(()), "{a}");
        assert!(check(other, a).is_err(), "{a} on the other network");
    }
}

#[test]
fn bip350_invalid_addresses_are_refused_for_their_reason() {
    use AddressError::*;
    let cases: &[(&str, AddressError)] = &[
        // Invalid human-readable part (neither bc nor tb): read as base58, which it is not.
        (
            "tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut",
            Characters,
        ),
        // bech32 instead of bech32m, and the reverse.
        (
            "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd",
            Checksum,
        ),
        (
            "tb1z0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqglt7rf",
            Checksum,
        ),
        (
            "BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL",
            Checksum,
        ),
        ("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh", Checksum),
        (
            "tb1q0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq24jc47",
            Checksum,
        ),
        // Invalid character in checksum.
        (
            "bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4",
            Characters,
        ),
        // Invalid witness version.
        (
            "BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R",
            Witness,
        ),
        // Invalid program lengths (1 byte, 41 bytes, 16 bytes for v0).
        ("bc1pw5dgrnzv", Witness),
        (
            "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav",
            Witness,
        ),
        ("BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P", Witness),
        // Mixed case.
        (
            "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq",
            MixedCase,
        ),
        // Zero padding of more than 4 bits; non-zero padding.
        (
            "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf",
            Witness,
        ),
        (
            "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j",
            Witness,
        ),
        // Empty data section.
        ("bc1gmk9yu", Length),
    ];
    for (a, why) in cases {
        let net = if a.to_ascii_lowercase().starts_with("tb1") {
            BTC_TEST
        } else {
            BTC
        };
        assert_eq!(check(net, a), Err(*why), "{a}");
    }
}

#[test]
fn base58check_legacy_addresses() {
    // The P2PKH address of the public key G (private key 1), BIP-173's P2WPKH program.
    let hash160 = unhex("751e76e8199196d454941c45d1b3a323f1433bd6");
    let mut p2pkh = vec![0x00];
    p2pkh.extend_from_slice(&hash160);
    assert_eq!(
        base58check_encode(&p2pkh),
        "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH"
    );
    for a in [
        "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH",
        // The genesis block's address, a zero hash160, Bitcoin Wiki's P2SH example.
        "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa",
        "1111111111111111111114oLvT2",
        "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy",
    ] {
        assert_eq!(check(BTC, a), Ok(()), "{a}");
        assert_eq!(check(BTC_TEST, a), Err(AddressError::Network), "{a}");
    }
    // One character changed: the checksum catches it.
    assert_eq!(
        check(BTC, "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMj"),
        Err(AddressError::Checksum)
    );
    // A testnet P2PKH of the same key.
    let mut testnet = vec![0x6f];
    testnet.extend_from_slice(&hash160);
    let t = base58check_encode(&testnet);
    assert!(t.starts_with('m') || t.starts_with('n'), "{t}");
    assert_eq!(check(BTC_TEST, &t), Ok(()));
    assert_eq!(check(BTC, &t), Err(AddressError::Network));
    // An EVM address is no Bitcoin address.
    assert!(check(BTC, EIP55_EXAMPLES[4]).is_err());
}

// ----- Tron and Solana -----

#[test]
fn tron_addresses_are_base58check_of_0x41_and_20_bytes() {
    assert_eq!(
        check(TRON_USDT, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"),
        Ok(())
    );
    assert_eq!(
        check(TRON_USDT, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u"),
        Err(AddressError::Checksum)
    );
    // A Bitcoin address is base58check too, with another version byte.
    assert_eq!(
        check(TRON_USDT, "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH"),
        Err(AddressError::Network)
    );
    assert_eq!(
        check(TRON_USDT, &base58check_encode(&[0x41; 22])),
        Err(AddressError::Length)
    );
    assert_eq!(
        check(TRON_USDT, "0x52908400098527886E0F7030069857D2E4169EE7"),
        Err(AddressError::Characters)
    );
}

#[test]
fn solana_addresses_decode_to_32_bytes() {
    for a in [
        "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
        "So11111111111111111111111111111111111111112",
        "11111111111111111111111111111111",
    ] {
        assert_eq!(check(SOL, a), Ok(()), "{a}");
    }
    assert_eq!(
        check(SOL, &base58_encode(&[7; 33])),
        Err(AddressError::Length)
    );
    assert_eq!(
        check(SOL, &base58_encode(&[7; 31])),
        Err(AddressError::Length)
    );
    assert_eq!(
        check(SOL, "0x52908400098527886E0F7030069857D2E4169EE7"),
        Err(AddressError::Characters)
    );
}

#[test]
fn chains_without_a_format_get_the_shape_check() {
    let cosmos = "cosmos:cosmoshub-4/slip44:118";
    assert_eq!(
        check(cosmos, "cosmos1hsk6jryyqjfhp5dhc55tc9jtckygx0eph6dd02"),
        Ok(())
    );
    assert_eq!(check(cosmos, "bad address!"), Err(AddressError::Characters));
    assert_eq!(
        check(cosmos, &"a".repeat(MAX_OTHER_LEN + 1)),
        Err(AddressError::TooLong)
    );
}

// ----- properties -----

fn flip_case(s: &str, i: usize) -> String {
    s.char_indices()
        .map(|(j, c)| {
            if j == i {
                if c.is_ascii_uppercase() {
                    c.to_ascii_lowercase()
                } else {
                    c.to_ascii_uppercase()
                }
            } else {
                c
            }
        })
        .collect()
}

/// `s` with the character at `i` replaced by another of `alphabet`.
fn substitute(s: &str, i: usize, pick: usize, alphabet: &[u8]) -> String {
    let mut b = s.as_bytes().to_vec();
    let others: Vec<u8> = alphabet.iter().copied().filter(|&c| c != b[i]).collect();
    b[i] = others[pick % others.len()];
    String::from_utf8(b).unwrap()
}

proptest! {
    #[test]
    fn every_evm_spelling_of_an_address_is_accepted(bytes in prop::array::uniform20(any::<u8>())) {
        prop_assume!(bytes != [0; 20]);
        let lower: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let checksummed = format!("0x{}", eip55(&lower));
        prop_assert_eq!(check(ETH, &format!("0x{lower}")), Ok(()));
        prop_assert_eq!(check(ETH, &format!("0x{}", lower.to_ascii_uppercase())), Ok(()));
        prop_assert_eq!(check(ETH, &checksummed), Ok(()));
    }

    #[test]
    fn a_flipped_case_in_a_checksummed_address_is_refused(
        bytes in prop::array::uniform20(any::<u8>()),
        at in 2usize..42,
    ) {
        let checksummed = format!("0x{}", eip55(&bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()));
        prop_assume!(checksummed.as_bytes()[at].is_ascii_alphabetic());
        let flipped = flip_case(&checksummed, at);
        let hex = &flipped[2..];
        let mixed = hex.bytes().any(|b| b.is_ascii_lowercase()) && hex.bytes().any(|b| b.is_ascii_uppercase());
        // A flip that leaves one case throughout is a valid unchecksummed spelling.
        if mixed {
            prop_assert_eq!(check(ETH, &flipped), Err(AddressError::Eip55Checksum));
        }
    }

    #[test]
    fn segwit_addresses_round_trip_and_one_changed_character_is_refused(
        version in 0u8..=16,
        program in prop::collection::vec(any::<u8>(), 2..=40),
        at in 0usize..100,
        pick in 0usize..31,
    ) {
        let program = if version == 0 {
            program.into_iter().chain(std::iter::repeat(7)).take(if at % 2 == 0 { 20 } else { 32 }).collect()
        } else {
            program
        };
        let constant = if version == 0 { BECH32_CONST } else { BECH32M_CONST };
        let a = segwit_encode("bc", version, &program, constant);
        prop_assert_eq!(check(BTC, &a), Ok(()));
        prop_assert_eq!(check(BTC, &a.to_ascii_uppercase()), Ok(()));
        prop_assert!(check(BTC_TEST, &a).is_err());
        // The other checksum constant (bech32 for bech32m and back) is refused.
        let other = if version == 0 { BECH32M_CONST } else { BECH32_CONST };
        prop_assert_eq!(check(BTC, &segwit_encode("bc", version, &program, other)), Err(AddressError::Checksum));
        // One data character replaced: bech32 detects every single substitution.
        let i = 3 + at % (a.len() - 3);
        prop_assert!(check(BTC, &substitute(&a, i, pick, BECH32)).is_err());
    }

    #[test]
    fn base58check_addresses_round_trip_and_one_changed_character_is_refused(
        hash in prop::array::uniform20(any::<u8>()),
        at in 0usize..40,
        pick in 0usize..57,
    ) {
        for (version, format) in [
            (0x00, AddressFormat::Bitcoin(BITCOIN_MAINNET)),
            (0x05, AddressFormat::Bitcoin(BITCOIN_MAINNET)),
            (0x6f, AddressFormat::Bitcoin(BITCOIN_TESTNET)),
            (0xc4, AddressFormat::Bitcoin(BITCOIN_TESTNET)),
            (TRON_VERSION, AddressFormat::Tron),
        ] {
            let mut payload = vec![version];
            payload.extend_from_slice(&hash);
            let a = base58check_encode(&payload);
            prop_assert_eq!(format.check(&a), Ok(()));
            let i = at % a.len();
            prop_assert!(format.check(&substitute(&a, i, pick, BASE58)).is_err(), "{} at {}", a, i);
        }
    }

    #[test]
    fn solana_takes_exactly_32_bytes(bytes in prop::collection::vec(any::<u8>(), 0..40)) {
        let a = base58_encode(&bytes);
        prop_assert_eq!(AddressFormat::Solana.check(&a).is_ok(), bytes.len() == 32, "{}", a);
    }

    #[test]
    fn no_input_panics(chars in prop::collection::vec(
        prop_oneof![
            any::<char>(),
            prop::sample::select(b"0123456789abcdefABCDEFxXbBcCtTqQpP1".to_vec()).prop_map(char::from),
        ],
        0..140,
    )) {
        let s: String = chars.into_iter().collect();
        for f in [
            AddressFormat::Evm,
            AddressFormat::Bitcoin(BITCOIN_MAINNET),
            AddressFormat::Bitcoin(BITCOIN_TESTNET),
            AddressFormat::Solana,
            AddressFormat::Tron,
            AddressFormat::Other,
        ] {
            let _ = f.check(&s);
        }
    }
}
