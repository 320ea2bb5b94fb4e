//! The operator's chains (`PAY_CHAINS_FILE`): one strict JSON array, every entry checked and
//! named in its refusal, and the assets it adds to the settlement-asset catalogue.

use serde::Deserialize;

use crate::kernel::amount::Decimal;
use crate::kernel::assets::DestinationAsset;

/// The defaults of the contract's "Chain processor" section.
pub const DEFAULT_CONFIRMATIONS: u32 = 12;
pub const DEFAULT_POLL_INTERVAL_MS: u64 = 2000;
pub const DEFAULT_LATE_WATCH_SECS: u64 = 86_400;
pub const DEFAULT_MAX_PRICE_AGE_SECS: u64 = 3600;
/// `/readyz` fails when a chain has not been read for this long (5 minutes).
pub const DEFAULT_UNREACHABLE_AFTER_SECS: u64 = 300;

/// One entry of the file, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ChainEntry {
    chain_code: String,
    kind: String,
    chain_id: u64,
    chain_name: Option<String>,
    rpc_url: String,
    confirmations: Option<u32>,
    poll_interval_ms: Option<u64>,
    late_watch_secs: Option<u64>,
    unreachable_after_secs: Option<u64>,
    assets: Vec<AssetEntry>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AssetEntry {
    asset_identifier: String,
    symbol: String,
    name: String,
    decimals: u32,
    usd_price: Option<String>,
    price_feed: Option<String>,
    max_price_age_secs: Option<u64>,
}

/// What an asset is on its chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainAssetKind {
    /// The chain's own coin (`slip44:60`).
    Native,
    /// An ERC-20 token at this contract (lower-case `0x` + 40 hex digits).
    Erc20 { contract: String },
}

/// Where an asset's USD price comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PriceRule {
    /// A fixed par (stablecoins).
    Fixed(Decimal),
    /// A Chainlink-compatible aggregator on the same chain (lower-case address), refused when
    /// its latest round is older than `max_age_secs`.
    Feed {
        aggregator: String,
        max_age_secs: u64,
    },
}

/// One asset of a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainAsset {
    pub asset_identifier: String,
    pub kind: ChainAssetKind,
    pub symbol: String,
    pub name: String,
    pub decimals: u32,
    pub price: PriceRule,
}

/// One configured EVM chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    /// The service's code for the chain (`sourceChain`, the channel id's prefix).
    pub chain_code: String,
    pub chain_id: u64,
    pub chain_name: String,
    pub rpc_url: String,
    pub confirmations: u32,
    pub poll_interval_ms: u64,
    pub late_watch_secs: u64,
    /// `/readyz` fails once no watcher has read the chain's node for this long.
    pub unreachable_after_secs: u64,
    pub assets: Vec<ChainAsset>,
}

impl Chain {
    /// CAIP-2: `eip155:<chainId>`.
    pub fn caip2(&self) -> String {
        format!("eip155:{}", self.chain_id)
    }

    /// The asset with this identifier (case-insensitive on the contract address).
    pub fn asset(&self, asset_identifier: &str) -> Option<&ChainAsset> {
        self.assets
            .iter()
            .find(|a| a.asset_identifier.eq_ignore_ascii_case(asset_identifier))
    }

    /// The token at `contract` (any case).
    pub fn token(&self, contract: &str) -> Option<&ChainAsset> {
        self.assets.iter().find(|a| {
            matches!(&a.kind, ChainAssetKind::Erc20 { contract: c } if c.eq_ignore_ascii_case(contract))
        })
    }

    /// The native coin, when the chain lists it.
    pub fn native(&self) -> Option<&ChainAsset> {
        self.assets
            .iter()
            .find(|a| a.kind == ChainAssetKind::Native)
    }

    /// The catalogue entries of this chain's assets.
    pub fn destination_assets(&self) -> Vec<DestinationAsset> {
        self.assets
            .iter()
            .map(|a| DestinationAsset {
                asset_identifier: a.asset_identifier.clone(),
                chain_code: self.chain_code.clone(),
                chain_name: self.chain_name.clone(),
                symbol: a.symbol.clone(),
                name: a.name.clone(),
                decimals: a.decimals,
                default_for_new_companies: false,
            })
            .collect()
    }
}

/// Parses and checks the chains file. The error names the entry (`chains[1] (base)`) and the
/// field.
pub fn parse_chains(text: &str) -> Result<Vec<Chain>, String> {
    let entries: Vec<serde_json::Value> =
        serde_json::from_str(text).map_err(|e| format!("not a JSON array of chains: {e}"))?;
    if entries.is_empty() {
        return Err("the chains file lists no chain".into());
    }
    let mut chains: Vec<Chain> = Vec::with_capacity(entries.len());
    for (i, value) in entries.into_iter().enumerate() {
        let code = value["chainCode"].as_str().unwrap_or("?").to_owned();
        let name = format!("chains[{i}] ({code})");
        let entry: ChainEntry =
            serde_json::from_value(value).map_err(|e| format!("{name}: {e}"))?;
        let chain = check_chain(entry).map_err(|e| format!("{name}: {e}"))?;
        if chains.iter().any(|c| c.chain_code == chain.chain_code) {
            return Err(format!("{name}: chainCode is listed twice"));
        }
        if chains.iter().any(|c| c.chain_id == chain.chain_id) {
            return Err(format!(
                "{name}: chainId {} is listed twice",
                chain.chain_id
            ));
        }
        chains.push(chain);
    }
    Ok(chains)
}

fn check_chain(e: ChainEntry) -> Result<Chain, String> {
    let code_ok = !e.chain_code.is_empty()
        && e.chain_code.len() <= 32
        && e.chain_code
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if !code_ok {
        return Err("chainCode must be 1 to 32 of a-z, 0-9, - and _".into());
    }
    if e.kind != "evm" {
        return Err(format!(
            "kind {:?} is not supported (only \"evm\" is built)",
            e.kind
        ));
    }
    if e.chain_id == 0 {
        return Err("chainId must be positive".into());
    }
    let rpc_ok = (e.rpc_url.starts_with("http://") || e.rpc_url.starts_with("https://"))
        && e.rpc_url.len() > "https://".len();
    if !rpc_ok {
        return Err("rpcUrl must be an http:// or https:// URL".into());
    }
    let confirmations = e.confirmations.unwrap_or(DEFAULT_CONFIRMATIONS);
    if !(1..=1000).contains(&confirmations) {
        return Err("confirmations must be 1 to 1000".into());
    }
    let poll_interval_ms = e.poll_interval_ms.unwrap_or(DEFAULT_POLL_INTERVAL_MS);
    if !(10..=600_000).contains(&poll_interval_ms) {
        return Err("pollIntervalMs must be 10 to 600000".into());
    }
    let late_watch_secs = e.late_watch_secs.unwrap_or(DEFAULT_LATE_WATCH_SECS);
    if late_watch_secs > 366 * 86_400 {
        return Err("lateWatchSecs must be at most a year".into());
    }
    let unreachable_after_secs = e
        .unreachable_after_secs
        .unwrap_or(DEFAULT_UNREACHABLE_AFTER_SECS);
    if !(1..=86_400).contains(&unreachable_after_secs) {
        return Err("unreachableAfterSecs must be 1 to 86400".into());
    }
    if e.assets.is_empty() {
        return Err("assets lists no asset".into());
    }
    let mut assets: Vec<ChainAsset> = Vec::new();
    for (j, a) in e.assets.into_iter().enumerate() {
        let label = format!("assets[{j}] ({})", a.asset_identifier);
        let asset = check_asset(e.chain_id, a).map_err(|m| format!("{label}: {m}"))?;
        if assets.iter().any(|b| {
            b.asset_identifier
                .eq_ignore_ascii_case(&asset.asset_identifier)
        }) {
            return Err(format!("{label}: listed twice"));
        }
        assets.push(asset);
    }
    Ok(Chain {
        chain_name: e.chain_name.unwrap_or_else(|| e.chain_code.clone()),
        chain_code: e.chain_code,
        chain_id: e.chain_id,
        rpc_url: e.rpc_url,
        confirmations,
        poll_interval_ms,
        late_watch_secs,
        unreachable_after_secs,
        assets,
    })
}

/// `0x` + 40 hex digits, any case, as lower case.
pub fn evm_address_lower(text: &str) -> Option<String> {
    let hex = text.strip_prefix("0x")?;
    (hex.len() == 40 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| format!("0x{}", hex.to_ascii_lowercase()))
}

fn check_asset(chain_id: u64, a: AssetEntry) -> Result<ChainAsset, String> {
    let prefix = format!("eip155:{chain_id}/");
    let rest = a
        .asset_identifier
        .strip_prefix(&prefix)
        .ok_or_else(|| format!("assetIdentifier must start with {prefix}"))?;
    let (kind, asset_identifier) = if rest == "slip44:60" {
        (ChainAssetKind::Native, a.asset_identifier.clone())
    } else if let Some(contract) = rest.strip_prefix("erc20:") {
        let contract = evm_address_lower(contract)
            .ok_or("an erc20 assetIdentifier names its contract as 0x + 40 hex digits")?;
        (
            ChainAssetKind::Erc20 {
                contract: contract.clone(),
            },
            format!("{prefix}erc20:{contract}"),
        )
    } else {
        return Err(
            "assetIdentifier must be slip44:60 (the native coin) or erc20:<contract>".into(),
        );
    };
    if a.decimals > 18 {
        return Err("decimals must be 0 to 18".into());
    }
    if a.symbol.trim().is_empty() || a.name.trim().is_empty() {
        return Err("symbol and name are required".into());
    }
    let price = match (a.usd_price, a.price_feed) {
        (Some(p), None) => {
            let d = Decimal::parse(&p).map_err(|e| format!("usdPrice {e}"))?;
            if d.is_negative() || d.is_zero() {
                return Err("usdPrice must be positive".into());
            }
            if a.max_price_age_secs.is_some() {
                return Err("maxPriceAgeSecs applies to a priceFeed only".into());
            }
            PriceRule::Fixed(d)
        }
        (None, Some(feed)) => PriceRule::Feed {
            aggregator: evm_address_lower(&feed)
                .ok_or("priceFeed must be an aggregator address (0x + 40 hex digits)")?,
            max_age_secs: a.max_price_age_secs.unwrap_or(DEFAULT_MAX_PRICE_AGE_SECS),
        },
        _ => return Err("give exactly one of usdPrice and priceFeed".into()),
    };
    Ok(ChainAsset {
        asset_identifier,
        kind,
        symbol: a.symbol,
        name: a.name,
        decimals: a.decimals,
        price,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

    fn file(chain_extra: &str, assets: &str) -> String {
        format!(
            r#"[{{"chainCode": "local", "kind": "evm", "chainId": 31337, "rpcUrl": "http://127.0.0.1:8545"{chain_extra}, "assets": [{assets}]}}]"#
        )
    }

    const ETH: &str = r#"{"assetIdentifier": "eip155:31337/slip44:60", "symbol": "ETH", "name": "Ether", "decimals": 18, "priceFeed": "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"}"#;

    fn usdc() -> String {
        format!(
            r#"{{"assetIdentifier": "eip155:31337/erc20:{TOKEN}", "symbol": "USDC", "name": "USD Coin", "decimals": 6, "usdPrice": "1"}}"#
        )
    }

    #[test]
    fn a_valid_file_with_defaults() {
        let chains = parse_chains(&file("", &format!("{ETH}, {}", usdc()))).unwrap();
        let c = &chains[0];
        assert_eq!(
            (c.confirmations, c.poll_interval_ms, c.late_watch_secs),
            (12, 2000, 86_400)
        );
        assert_eq!(c.chain_name, "local");
        assert_eq!(c.caip2(), "eip155:31337");
        let token = c.token(&TOKEN.to_uppercase().replace("0X", "0x")).unwrap();
        assert_eq!(
            token.asset_identifier,
            format!("eip155:31337/erc20:{}", TOKEN.to_lowercase())
        );
        assert_eq!(token.price, PriceRule::Fixed(Decimal::parse("1").unwrap()));
        assert_eq!(
            c.native().unwrap().price,
            PriceRule::Feed {
                aggregator: "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512".into(),
                max_age_secs: 3600
            }
        );
        assert_eq!(c.destination_assets().len(), 2);
        assert!(c.asset(&format!("eip155:31337/erc20:{TOKEN}")).is_some());
    }

    #[test]
    fn every_refusal_names_its_entry() {
        let cases: Vec<(String, &str)> = vec![
            ("{}".into(), "not a JSON array"),
            ("[]".into(), "no chain"),
            (file(r#", "kind2": 1"#, ETH), "chains[0] (local): unknown field"),
            (r#"[{"chainCode": "base", "kind": "evm"}]"#.into(), "chains[0] (base): missing field"),
            (file("", ETH).replace("\"evm\"", "\"bitcoin\""), "chains[0] (local): kind"),
            (file("", ETH).replace("31337,", "0,"), "chainId must be positive"),
            (file("", ETH).replace("http://127", "ftp://127"), "rpcUrl"),
            (file(r#", "confirmations": 0"#, ETH), "confirmations"),
            (file(r#", "pollIntervalMs": 1"#, ETH), "pollIntervalMs"),
            (file("", ""), "assets lists no asset"),
            (file("", &ETH.replace("31337/slip44", "1/slip44")), "assets[0] (eip155:1/slip44:60): assetIdentifier must start with eip155:31337/"),
            (file("", &ETH.replace("slip44:60", "slip44:0")), "slip44:60"),
            (file("", &usdc().replace(TOKEN, "0x12")), "40 hex"),
            (file("", &ETH.replace("18", "19")), "decimals"),
            (file("", &usdc().replace("\"1\"", "\"0\"")), "usdPrice must be positive"),
            (file("", &usdc().replace(r#""usdPrice": "1""#, r#""usdPrice": "1", "priceFeed": "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512""#)), "exactly one"),
            (file("", &format!("{ETH}, {ETH}")), "listed twice"),
            (
                format!("[{}, {}]", &file("", ETH)[1..file("", ETH).len() - 1], &file("", ETH)[1..file("", ETH).len() - 1]),
                "chains[1] (local): chainCode is listed twice",
            ),
            (file("", ETH).replace("\"local\"", "\"Local Chain\""), "chainCode"),
        ];
        for (text, wanted) in cases {
            let e = parse_chains(&text).unwrap_err();
            assert!(e.contains(wanted), "{text}\n -> {e}\n wanted {wanted}");
        }
    }
}
