//! Pure rules of the chain processor: base units, confirmations, where a reorg forked, and the
//! EIP-681 payment request a wallet scans.

use crate::kernel::amount::{Decimal, Rounding};

use super::config::{ChainAsset, ChainAssetKind};

/// `amount` in base units of an asset with `decimals` (wei for ether), rounded up (a payer is
/// never asked for less than the amount); `None` when negative or beyond `u128`.
pub fn to_units(amount: Decimal, decimals: u32) -> Option<u128> {
    if amount.is_negative() {
        return None;
    }
    let text = amount.round_to(decimals, Rounding::Up).to_string();
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let digits = format!("{int}{frac:0<width$}", width = decimals as usize);
    digits.parse().ok()
}

/// `units` base units of an asset with `decimals` as an exact decimal; `None` when the amount
/// is beyond what a `Decimal` holds (more than 18 integer digits).
pub fn from_units(units: u128, decimals: u32) -> Option<Decimal> {
    let digits = units.to_string();
    let d = decimals as usize;
    let text = if d == 0 {
        digits
    } else {
        let padded = format!("{digits:0>width$}", width = d + 1);
        let (int, frac) = padded.split_at(padded.len() - d);
        format!("{int}.{frac}")
    };
    Decimal::parse(&text).ok().map(Decimal::normalized)
}

/// Confirmations of a transfer in block `block` when the chain's head is `head`:
/// `head - block + 1`, 0 when the block is above the head (it left the chain, or the node lags).
pub fn confirmations(head: u64, block: u64) -> u64 {
    if head < block {
        0
    } else {
        head - block + 1
    }
}

/// Whether a transfer in `block` is final at `head` with `required` confirmations.
pub fn is_final(head: u64, block: u64, required: u32) -> bool {
    confirmations(head, block) >= u64::from(required)
}

/// What the watcher does after it found a block whose parent is not the block it stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewind {
    /// The highest block both the stored chain and the node agree on; reading resumes after it.
    /// `None` when none of the kept blocks agree (the fork is older than what was kept).
    pub common: Option<u64>,
    /// Blocks dropped: from the first disagreeing one to the last stored one.
    pub depth: u64,
    /// Deeper than the chain's confirmations: the watcher keeps only final blocks (its progress
    /// stops at the last block with its confirmations), so any kept block dropped means a
    /// final transfer may have moved. Logged loudly.
    pub beyond_confirmations: bool,
}

/// Finds the fork: `stored` are the kept `(number, hash)` of the recent blocks (any order),
/// `node_hash(n)` the node's hash of block `n` now. Walks down from the highest stored block to
/// the first one whose hash still matches.
pub fn find_fork(
    stored: &[(u64, String)],
    mut node_hash: impl FnMut(u64) -> Option<String>,
) -> Rewind {
    let mut kept: Vec<&(u64, String)> = stored.iter().collect();
    kept.sort_by_key(|b| std::cmp::Reverse(b.0));
    let top = kept.first().map_or(0, |b| b.0);
    let mut common = None;
    for (number, hash) in kept.iter().map(|b| (b.0, &b.1)) {
        if node_hash(number).is_some_and(|h| h.eq_ignore_ascii_case(hash)) {
            common = Some(number);
            break;
        }
    }
    let depth = match common {
        Some(c) => top - c,
        None => kept.len() as u64,
    };
    Rewind {
        common,
        depth,
        beyond_confirmations: depth > 0,
    }
}

/// The EIP-681 payment request for `units` of `asset` to `address` on chain `chain_id`:
/// `ethereum:<address>@<chainId>?value=<wei>` for the native coin,
/// `ethereum:<token>@<chainId>/transfer?address=<address>&uint256=<units>` for a token.
pub fn payment_uri(asset: &ChainAsset, chain_id: u64, address: &str, units: u128) -> String {
    kind_payment_uri(&asset.kind, chain_id, address, units)
}

/// The EIP-681 payment request a wallet scans for `amount` of the asset `asset_identifier`
/// (`eip155:<chainId>/slip44:60` or `eip155:<chainId>/erc20:<contract>`, with `decimals`) to
/// `address`, the amount in base units rounded up; `None` for an asset of another kind.
pub fn payment_request(
    asset_identifier: &str,
    decimals: u32,
    address: &str,
    amount: Decimal,
) -> Option<String> {
    let (chain, asset) = asset_identifier.split_once('/')?;
    let chain_id: u64 = chain.strip_prefix("eip155:")?.parse().ok()?;
    let kind = if asset == "slip44:60" {
        ChainAssetKind::Native
    } else {
        ChainAssetKind::Erc20 {
            contract: super::config::evm_address_lower(asset.strip_prefix("erc20:")?)?,
        }
    };
    Some(kind_payment_uri(
        &kind,
        chain_id,
        address,
        to_units(amount, decimals)?,
    ))
}

fn kind_payment_uri(kind: &ChainAssetKind, chain_id: u64, address: &str, units: u128) -> String {
    match kind {
        ChainAssetKind::Native => format!("ethereum:{address}@{chain_id}?value={units}"),
        ChainAssetKind::Erc20 { contract } => {
            format!("ethereum:{contract}@{chain_id}/transfer?address={address}&uint256={units}")
        }
    }
}

/// The key of a transfer in the wallet activity: `eip155:<chainId>:<txHash>:<logIndex>`, the
/// log index `native` for a native coin transfer.
pub fn transfer_key(chain_id: u64, tx_hash: &str, log_index: Option<u64>) -> String {
    let index = log_index.map_or_else(|| "native".to_owned(), |i| i.to_string());
    format!("eip155:{chain_id}:{}:{index}", tx_hash.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chains::config::PriceRule;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    #[test]
    fn units_both_ways() {
        assert_eq!(to_units(d("1.5"), 18), Some(1_500_000_000_000_000_000));
        assert_eq!(to_units(d("0.0404"), 18), Some(40_400_000_000_000_000));
        assert_eq!(to_units(d("100"), 6), Some(100_000_000));
        assert_eq!(to_units(d("1.0000001"), 6), Some(1_000_001), "rounded up");
        assert_eq!(to_units(d("-1"), 6), None);
        assert_eq!(to_units(d("7"), 0), Some(7));
        assert_eq!(from_units(1_500_000, 6), Some(d("1.5")));
        assert_eq!(
            from_units(1, 18).unwrap().to_string(),
            "0.000000000000000001"
        );
        assert_eq!(from_units(0, 6), Some(Decimal::ZERO));
        assert_eq!(from_units(u128::MAX, 0), None, "beyond a Decimal");
    }

    #[test]
    fn confirmations_count_the_block_itself() {
        assert_eq!(confirmations(10, 10), 1);
        assert_eq!(confirmations(11, 10), 2);
        assert_eq!(confirmations(9, 10), 0);
        assert!(!is_final(10, 10, 2));
        assert!(is_final(11, 10, 2));
    }

    fn chain(hashes: &[(u64, &str)]) -> Vec<(u64, String)> {
        hashes.iter().map(|(n, h)| (*n, (*h).to_owned())).collect()
    }

    #[test]
    fn the_fork_is_the_highest_block_that_still_matches() {
        let stored = chain(&[(10, "a"), (11, "b"), (12, "c"), (13, "d")]);
        // The node replaced 12 and 13.
        let node = |n: u64| {
            Some(if n <= 11 {
                ["a", "b"][n as usize - 10].to_owned()
            } else {
                "x".into()
            })
        };
        // The kept blocks are final ones: two of them dropped is a reorg below the
        // confirmations, whatever their number.
        let r = find_fork(&stored, node);
        assert_eq!(
            r,
            Rewind {
                common: Some(11),
                depth: 2,
                beyond_confirmations: true
            }
        );
        // Only the last kept block replaced: still a final block gone.
        let last_only = |n: u64| {
            Some(
                if n == 13 {
                    "x"
                } else {
                    ["a", "b", "c"][n as usize - 10]
                }
                .to_owned(),
            )
        };
        assert_eq!(
            find_fork(&stored, last_only),
            Rewind {
                common: Some(12),
                depth: 1,
                beyond_confirmations: true
            }
        );
        // Nothing matches: everything kept is dropped.
        let r = find_fork(&stored, |_| Some("z".into()));
        assert_eq!((r.common, r.depth), (None, 4));
        // Hashes compare case-insensitively; all still there is no reorg.
        let r = find_fork(&chain(&[(5, "0xAB")]), |_| Some("0xab".into()));
        assert_eq!(
            (r.common, r.depth, r.beyond_confirmations),
            (Some(5), 0, false)
        );
    }

    #[test]
    fn eip681_uris() {
        let eth = ChainAsset {
            asset_identifier: "eip155:1/slip44:60".into(),
            kind: ChainAssetKind::Native,
            symbol: "ETH".into(),
            name: "Ether".into(),
            decimals: 18,
            price: PriceRule::Fixed(d("1")),
        };
        let addr = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
        assert_eq!(
            payment_uri(&eth, 1, addr, 40_400_000_000_000_000),
            format!("ethereum:{addr}@1?value=40400000000000000")
        );
        let usdc = ChainAsset {
            kind: ChainAssetKind::Erc20 {
                contract: "0x5fbdb2315678afecb367f032d93f642f64180aa3".into(),
            },
            ..eth
        };
        assert_eq!(
            payment_uri(&usdc, 31337, addr, 100_000_000),
            format!("ethereum:0x5fbdb2315678afecb367f032d93f642f64180aa3@31337/transfer?address={addr}&uint256=100000000")
        );
    }

    #[test]
    fn payment_requests_from_an_asset_identifier() {
        let addr = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
        assert_eq!(
            payment_request("eip155:1/slip44:60", 18, addr, d("0.0404")).unwrap(),
            format!("ethereum:{addr}@1?value=40400000000000000")
        );
        assert_eq!(
            payment_request(
                "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
                6,
                addr,
                d("25.0000001")
            )
            .unwrap(),
            format!("ethereum:0x833589fcd6edb6e08f4c7c32d4f71b54bda02913@8453/transfer?address={addr}&uint256=25000001")
        );
        assert_eq!(
            payment_request(
                "bip122:000000000019d6689c085ae165831e93/slip44:0",
                8,
                "bc1q",
                d("1")
            ),
            None
        );
        assert_eq!(
            payment_request("eip155:1/erc20:0x12", 6, addr, d("1")),
            None
        );
    }

    #[test]
    fn transfer_keys() {
        assert_eq!(transfer_key(1, "0xAB", Some(3)), "eip155:1:0xab:3");
        assert_eq!(transfer_key(1, "0xab", None), "eip155:1:0xab:native");
    }
}
