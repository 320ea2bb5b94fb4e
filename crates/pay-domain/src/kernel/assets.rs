//! Settlement assets and display currencies. The operator configures the catalogue (a default
//! set ships); a link's `asset`/`currency` resolve against it.

use serde::{Deserialize, Serialize};

use crate::kernel::error::FieldError;

/// Why no destination asset could be picked for a link or a setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AssetRefusal {
    /// `asset` (or `currency`) names no enabled settlement asset.
    #[error("{message}")]
    InvalidDestinationAsset { field: String, message: String },
    /// `currency` matches several assets and no default settles it.
    #[error("currency {symbol} matches several destination assets; pass `asset`")]
    AmbiguousCurrency { symbol: String },
    /// Neither `asset`, `currency` nor a default asset.
    #[error("no destination asset: pass `asset` or `currency`, or set a default asset")]
    MissingDestinationAsset,
    /// `asset` and `currency` disagree.
    #[error(transparent)]
    Invalid(#[from] FieldError),
}

/// One settlement asset of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DestinationAsset {
    /// CAIP-19 style: `<chain namespace>:<reference>/<asset namespace>:<reference>`.
    pub asset_identifier: String,
    pub chain_code: String,
    pub chain_name: String,
    pub symbol: String,
    pub name: String,
    pub decimals: u32,
    /// The default settlement asset given to new companies (exactly one in a catalogue).
    #[serde(default)]
    pub default_for_new_companies: bool,
}

/// The operator's catalogue of settlement assets.
#[derive(Debug, Clone)]
pub struct AssetCatalogue {
    assets: Vec<DestinationAsset>,
}

const ETH_MAINNET: &str = "eip155:1";
const SOLANA_MAINNET: &str = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";

impl AssetCatalogue {
    /// Checks the catalogue: unique identifiers, identifier shape, decimals <= 18, exactly one
    /// default.
    pub fn new(assets: Vec<DestinationAsset>) -> Result<Self, String> {
        if assets.is_empty() {
            return Err("the asset catalogue is empty".into());
        }
        let mut seen = std::collections::HashSet::new();
        for a in &assets {
            if !seen.insert(a.asset_identifier.as_str()) {
                return Err(format!("asset {} is listed twice", a.asset_identifier));
            }
            if AssetId::parse(&a.asset_identifier).is_none() {
                return Err(format!(
                    "asset identifier {:?} is not chain/asset",
                    a.asset_identifier
                ));
            }
            if a.decimals > crate::kernel::amount::MAX_SCALE {
                return Err(format!(
                    "asset {} has more than 18 decimals",
                    a.asset_identifier
                ));
            }
            if a.symbol.is_empty() || a.chain_code.is_empty() {
                return Err(format!(
                    "asset {} needs a symbol and a chain code",
                    a.asset_identifier
                ));
            }
        }
        let defaults = assets
            .iter()
            .filter(|a| a.default_for_new_companies)
            .count();
        if defaults != 1 {
            return Err(format!(
                "the catalogue needs exactly one default asset, has {defaults}"
            ));
        }
        Ok(AssetCatalogue { assets })
    }

    /// The set that ships: USDC on four chains, USDT on two, ETH, BTC and SOL.
    pub fn builtin() -> Self {
        let a = |id: &str, chain: &str, chain_name: &str, sym: &str, name: &str, dec: u32| {
            DestinationAsset {
                asset_identifier: id.into(),
                chain_code: chain.into(),
                chain_name: chain_name.into(),
                symbol: sym.into(),
                name: name.into(),
                decimals: dec,
                default_for_new_companies: false,
            }
        };
        let mut assets = vec![
            a(
                "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
                "base",
                "Base",
                "USDC",
                "USD Coin",
                6,
            ),
            a(
                &format!("{ETH_MAINNET}/erc20:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"),
                "ethereum",
                "Ethereum",
                "USDC",
                "USD Coin",
                6,
            ),
            a(
                "eip155:137/erc20:0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
                "polygon",
                "Polygon PoS",
                "USDC",
                "USD Coin",
                6,
            ),
            a(
                &format!("{SOLANA_MAINNET}/token:EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"),
                "solana",
                "Solana",
                "USDC",
                "USD Coin",
                6,
            ),
            a(
                &format!("{ETH_MAINNET}/erc20:0xdAC17F958D2ee523a2206206994597C13D831ec7"),
                "ethereum",
                "Ethereum",
                "USDT",
                "Tether USD",
                6,
            ),
            a(
                "tron:mainnet/trc20:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
                "tron",
                "Tron",
                "USDT",
                "Tether USD",
                6,
            ),
            a(
                &format!("{ETH_MAINNET}/slip44:60"),
                "ethereum",
                "Ethereum",
                "ETH",
                "Ether",
                18,
            ),
            a(
                "bip122:000000000019d6689c085ae165831e93/slip44:0",
                "bitcoin",
                "Bitcoin",
                "BTC",
                "Bitcoin",
                8,
            ),
            a(
                &format!("{SOLANA_MAINNET}/slip44:501"),
                "solana",
                "Solana",
                "SOL",
                "Solana",
                9,
            ),
        ];
        assets[0].default_for_new_companies = true;
        AssetCatalogue { assets }
    }

    pub fn all(&self) -> &[DestinationAsset] {
        &self.assets
    }

    pub fn get(&self, identifier: &str) -> Option<&DestinationAsset> {
        self.assets
            .iter()
            .find(|a| a.asset_identifier == identifier)
    }

    pub fn default_for_new_companies(&self) -> &DestinationAsset {
        // `new` and `builtin` guarantee exactly one.
        self.assets
            .iter()
            .find(|a| a.default_for_new_companies)
            .unwrap_or(&self.assets[0])
    }

    /// The contract's resolution: `asset` must be in the catalogue; only `currency` picks the
    /// one asset with that symbol, or the default when several match and its symbol matches;
    /// neither picks the default.
    pub fn resolve(
        &self,
        asset: Option<&str>,
        currency: Option<&str>,
        default: Option<&str>,
    ) -> Result<&DestinationAsset, AssetRefusal> {
        let default = default.and_then(|d| self.get(d));
        if let Some(id) = asset {
            let found = self
                .get(id)
                .ok_or_else(|| AssetRefusal::InvalidDestinationAsset {
                    field: "asset".into(),
                    message: format!("asset {id} is not an enabled destination asset"),
                })?;
            if let Some(sym) = currency {
                if !found.symbol.eq_ignore_ascii_case(sym) {
                    return Err(FieldError::new(
                        "currency",
                        format!(
                            "currency {sym} does not match asset symbol {}",
                            found.symbol
                        ),
                    )
                    .into());
                }
            }
            return Ok(found);
        }
        if let Some(sym) = currency {
            let matches: Vec<_> = self
                .assets
                .iter()
                .filter(|a| a.symbol.eq_ignore_ascii_case(sym))
                .collect();
            return match matches.as_slice() {
                [] => Err(AssetRefusal::InvalidDestinationAsset {
                    field: "currency".into(),
                    message: format!("no enabled destination asset has the symbol {sym}"),
                }),
                [one] => Ok(one),
                _ => match default {
                    Some(d) if d.symbol.eq_ignore_ascii_case(sym) => Ok(d),
                    _ => Err(AssetRefusal::AmbiguousCurrency {
                        symbol: sym.to_owned(),
                    }),
                },
            };
        }
        default.ok_or(AssetRefusal::MissingDestinationAsset)
    }
}

/// An asset identifier in CAIP-19 form (`<namespace>:<reference>/<namespace>:<reference>`,
/// e.g. `eip155:8453/erc20:0x8335...`): checked once, where it enters (the catalogue, the
/// operator's price table).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AssetId(String);

impl AssetId {
    /// `s` when it is an asset identifier: two `/`-separated parts, each a lower-case
    /// namespace (`[a-z0-9-]+`), `:`, and a reference (`[A-Za-z0-9._-]+`).
    pub fn parse(s: &str) -> Option<AssetId> {
        let (chain, asset) = s.split_once('/')?;
        let part = |p: &str| {
            p.split_once(':').is_some_and(|(ns, r)| {
                !ns.is_empty()
                    && !r.is_empty()
                    && ns
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                    && r.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
            })
        };
        (part(chain) && part(asset)).then(|| AssetId(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for AssetId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// ISO 4217 display currencies we accept in `fiatCurrency`, with their minor-unit digits.
const FIAT: &[(&str, u32)] = &[
    ("USD", 2),
    ("EUR", 2),
    ("GBP", 2),
    ("CHF", 2),
    ("CAD", 2),
    ("AUD", 2),
    ("NZD", 2),
    ("JPY", 0),
    ("CNY", 2),
    ("HKD", 2),
    ("SGD", 2),
    ("INR", 2),
    ("BRL", 2),
    ("MXN", 2),
    ("ARS", 2),
    ("ZAR", 2),
    ("NGN", 2),
    ("KES", 2),
    ("TRY", 2),
    ("PLN", 2),
    ("CZK", 2),
    ("SEK", 2),
    ("NOK", 2),
    ("DKK", 2),
    ("AED", 2),
    ("SAR", 2),
    ("KRW", 0),
    ("IDR", 2),
    ("PHP", 2),
    ("THB", 2),
    ("VND", 0),
];

/// The display currencies `fiatCurrency` takes (ISO 4217 codes).
pub fn fiat_codes() -> impl Iterator<Item = &'static str> {
    FIAT.iter().map(|(code, _)| *code)
}

/// Minor-unit digits of a display currency, or `None` when we do not know it.
pub fn fiat_decimals(code: &str) -> Option<u32> {
    FIAT.iter().find(|(c, _)| *c == code).map(|(_, d)| *d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asset_ids_are_two_namespaced_parts() {
        for ok in [
            "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
            "bip122:000000000019d6689c085ae165831e93/slip44:0",
            "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp/token:EPjFWdd5_Aq.x-1",
        ] {
            assert_eq!(AssetId::parse(ok).unwrap().as_str(), ok);
        }
        for bad in [
            "",
            "eip155:1",
            "eip155:1/",
            "/slip44:60",
            "EIP155:1/slip44:60",
            "eip155:1/slip44:60/x",
            "eip155:1/slip44:6 0",
            "eip155:/slip44:60",
            "eip155:1/:60",
        ] {
            assert!(AssetId::parse(bad).is_none(), "{bad}");
        }
    }

    const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
    const ETH_USDT: &str = "eip155:1/erc20:0xdAC17F958D2ee523a2206206994597C13D831ec7";

    #[test]
    fn builtin_catalogue_is_valid() {
        let c = AssetCatalogue::builtin();
        assert!(AssetCatalogue::new(c.all().to_vec()).is_ok());
        assert_eq!(c.default_for_new_companies().asset_identifier, BASE_USDC);
    }

    #[test]
    fn catalogue_rules() {
        let mut assets = AssetCatalogue::builtin().all().to_vec();
        assets[1].default_for_new_companies = true;
        assert!(AssetCatalogue::new(assets.clone()).is_err());
        assets[1].default_for_new_companies = false;
        assets.push(assets[2].clone());
        assert!(AssetCatalogue::new(assets.clone()).is_err());
        assets.pop();
        assets[3].asset_identifier = "nochain".into();
        assert!(AssetCatalogue::new(assets).is_err());
        assert!(AssetCatalogue::new(vec![]).is_err());
    }

    #[test]
    fn resolution_follows_the_contract() {
        let c = AssetCatalogue::builtin();
        let id = |r: Result<&DestinationAsset, AssetRefusal>| r.map(|a| a.asset_identifier.clone());
        // Exact asset.
        assert_eq!(id(c.resolve(Some(ETH_USDT), None, None)).unwrap(), ETH_USDT);
        assert!(matches!(
            c.resolve(Some("eip155:1/erc20:0xnope"), None, Some(BASE_USDC)),
            Err(AssetRefusal::InvalidDestinationAsset { .. })
        ));
        // Asset and a contradicting currency.
        assert!(matches!(
            c.resolve(Some(ETH_USDT), Some("USDC"), None),
            Err(AssetRefusal::Invalid(_))
        ));
        // One symbol match.
        assert_eq!(
            id(c.resolve(None, Some("ETH"), None)).unwrap(),
            "eip155:1/slip44:60"
        );
        // Several matches: the default settles it only when its symbol matches.
        assert_eq!(
            id(c.resolve(None, Some("USDC"), Some(BASE_USDC))).unwrap(),
            BASE_USDC
        );
        assert_eq!(
            c.resolve(None, Some("USDT"), Some(BASE_USDC)),
            Err(AssetRefusal::AmbiguousCurrency {
                symbol: "USDT".into()
            })
        );
        assert!(matches!(
            c.resolve(None, Some("DOGE"), None),
            Err(AssetRefusal::InvalidDestinationAsset { field, .. }) if field == "currency"
        ));
        // Neither: the default, or nothing.
        assert_eq!(
            id(c.resolve(None, None, Some(BASE_USDC))).unwrap(),
            BASE_USDC
        );
        assert_eq!(
            c.resolve(None, None, None),
            Err(AssetRefusal::MissingDestinationAsset)
        );
    }

    #[test]
    fn fiat_codes() {
        assert_eq!(fiat_decimals("USD"), Some(2));
        assert_eq!(fiat_decimals("JPY"), Some(0));
        assert_eq!(fiat_decimals("usd"), None);
    }
}
