//! The sandbox `PriceSource`: a fixed table of USD prices per asset identifier and per fiat
//! code, built in or loaded from the operator's JSON. A price in another unit is the quotient of
//! the two USD prices, exact to 18 decimals and rounded down.

use std::collections::BTreeMap;
use std::fmt;

use pay_domain::checkout::ports::PriceSource;
use pay_domain::kernel::amount::{Decimal, Rounding};
use pay_domain::kernel::assets::{AssetCatalogue, AssetId};
use pay_domain::{Fault, PortResult};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;

/// Fractional digits of every price this source returns (before trailing zeros are dropped).
pub const PRICE_SCALE: u32 = 18;

/// USD prices per asset identifier and per ISO 4217 code. USD itself is always 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPrices {
    assets: BTreeMap<String, Decimal>,
    fiat: BTreeMap<String, Decimal>,
}

/// Why an operator's price table was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PriceTableError {
    /// Not JSON, or not `{"assets": {...}, "fiat": {...}}` with string values (unknown keys,
    /// a missing `assets`, numbers instead of strings).
    #[error("the price table is not of the form {{\"assets\": {{...}}, \"fiat\": {{...}}}} with decimal strings: {0}")]
    Json(String),
    /// `assets` is empty.
    #[error("the price table prices no asset")]
    NoAssets,
    /// A key appears twice in one section.
    #[error("{key} is priced twice")]
    Duplicate { key: String },
    /// An `assets` key is not a CAIP-19 style identifier (`<ns>:<ref>/<ns>:<ref>`).
    #[error("{key:?} is not an asset identifier such as \"eip155:1/slip44:60\"")]
    InvalidAssetIdentifier { key: String },
    /// A `fiat` key is not three upper-case letters.
    #[error("{key:?} is not an ISO 4217 code such as \"EUR\"")]
    InvalidFiatCode { key: String },
    /// A price is not a positive decimal string.
    #[error("the price of {key} ({value:?}) {reason}")]
    InvalidPrice {
        key: String,
        value: String,
        reason: String,
    },
    /// `fiat.USD` is given and is not 1 (prices are in USD).
    #[error("fiat USD must be 1 (the table's prices are in USD), not {value}")]
    UsdNotOne { value: String },
    /// Some price in the table cannot be expressed: the quotient overflows or rounds to zero at
    /// 18 decimals.
    #[error("the price of {asset} in {unit} is out of range")]
    OutOfRange { asset: String, unit: String },
}

impl SandboxPrices {
    /// The built-in table: every USDC and USDT of the built-in catalogue at 1 USD, ETH 2500, BTC
    /// 60000, SOL 150; USD 1, EUR 1.08, GBP 1.27, CHF 1.12, JPY 0.0067, CAD 0.73, AUD 0.65.
    pub fn builtin() -> Self {
        let lit = |s: &str| Decimal::parse(s).expect("a literal decimal");
        let assets = AssetCatalogue::builtin()
            .all()
            .iter()
            .filter_map(|a| {
                let usd = match a.symbol.as_str() {
                    "USDC" | "USDT" => "1",
                    "ETH" => "2500",
                    "BTC" => "60000",
                    "SOL" => "150",
                    _ => return None,
                };
                Some((a.asset_identifier.clone(), lit(usd)))
            })
            .collect();
        let fiat = [
            ("USD", "1"),
            ("EUR", "1.08"),
            ("GBP", "1.27"),
            ("CHF", "1.12"),
            ("JPY", "0.0067"),
            ("CAD", "0.73"),
            ("AUD", "0.65"),
        ]
        .into_iter()
        .map(|(code, usd)| (code.to_owned(), lit(usd)))
        .collect();
        SandboxPrices { assets, fiat }
    }

    /// Loads an operator's table, `{"assets": {"<asset identifier>": "2500"}, "fiat": {"EUR":
    /// "1.08"}}`: USD prices as positive decimal strings; `fiat` may be left out, and `USD` is
    /// 1 whether listed or not. Strict: unknown or repeated keys, numbers, malformed keys and
    /// tables in which some price would overflow or round to zero are refused. The table
    /// replaces the built-in one.
    pub fn from_json(json: &str) -> Result<SandboxPrices, PriceTableError> {
        let raw: RawTable =
            serde_json::from_str(json).map_err(|e| PriceTableError::Json(e.to_string()))?;
        if raw.assets.0.is_empty() {
            return Err(PriceTableError::NoAssets);
        }
        let assets = collect(raw.assets, |key| {
            AssetId::parse(key)
                .is_some()
                .then_some(())
                .ok_or_else(|| PriceTableError::InvalidAssetIdentifier { key: key.into() })
        })?;
        let mut fiat = collect(raw.fiat, |key| {
            (key.len() == 3 && key.bytes().all(|b| b.is_ascii_uppercase()))
                .then_some(())
                .ok_or_else(|| PriceTableError::InvalidFiatCode { key: key.into() })
        })?;
        let one = Decimal::parse("1").expect("a literal decimal");
        match fiat.get("USD") {
            Some(usd) if *usd != one => {
                return Err(PriceTableError::UsdNotOne {
                    value: usd.to_string(),
                })
            }
            Some(_) => {}
            None => {
                fiat.insert("USD".into(), one);
            }
        }
        let table = SandboxPrices { assets, fiat };
        table.check_range()?;
        Ok(table)
    }

    /// The USD price of a unit: a fiat code, else an asset identifier.
    fn unit_usd(&self, unit: &str) -> Option<&Decimal> {
        self.fiat.get(unit).or_else(|| self.assets.get(unit))
    }

    /// Every (asset, unit) pair gives a positive price, so `price` never fails on this table.
    fn check_range(&self) -> Result<(), PriceTableError> {
        for (asset, a) in &self.assets {
            for (unit, u) in self.fiat.iter().chain(&self.assets) {
                match a.checked_div(*u, PRICE_SCALE, Rounding::Down) {
                    Some(p) if !p.is_zero() => {}
                    _ => {
                        return Err(PriceTableError::OutOfRange {
                            asset: asset.clone(),
                            unit: unit.clone(),
                        })
                    }
                }
            }
        }
        Ok(())
    }
}

impl PriceSource for SandboxPrices {
    /// `usd(asset) / usd(unit)` at 18 decimals rounded down, trailing zeros dropped; `unit` is
    /// looked up as a fiat code first, then as an asset identifier. `None` when either is not in
    /// the table (fiat codes are case-sensitive, and a fiat code is not an `asset`).
    fn price(&self, asset: &str, unit: &str) -> PortResult<Option<Decimal>> {
        let (Some(a), Some(u)) = (self.assets.get(asset), self.unit_usd(unit)) else {
            return Ok(None);
        };
        a.checked_div(*u, PRICE_SCALE, Rounding::Down)
            .map(|p| Some(p.normalized()))
            .ok_or_else(|| Fault::new(format!("sandbox price of {asset} in {unit} out of range")))
    }
}

/// Parses and checks one section's entries into a map of normalized prices.
fn collect(
    entries: Entries,
    check_key: impl Fn(&str) -> Result<(), PriceTableError>,
) -> Result<BTreeMap<String, Decimal>, PriceTableError> {
    let mut out = BTreeMap::new();
    for (key, value) in entries.0 {
        check_key(&key)?;
        let invalid = |reason: String| PriceTableError::InvalidPrice {
            key: key.clone(),
            value: value.clone(),
            reason,
        };
        let price = Decimal::parse(&value).map_err(|e| invalid(e.to_string()))?;
        if price.is_negative() || price.is_zero() {
            return Err(invalid("must be positive".into()));
        }
        if out.insert(key.clone(), price.normalized()).is_some() {
            return Err(PriceTableError::Duplicate { key });
        }
    }
    Ok(out)
}

/// The operator's JSON as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    assets: Entries,
    #[serde(default)]
    fiat: Entries,
}

/// One section's `"key": "value"` pairs in order, repeats kept (a plain map would let the last
/// one win silently).
#[derive(Debug, Default)]
struct Entries(Vec<(String, String)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;

        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = Entries;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of decimal strings")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, String>()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }

        deserializer.deserialize_map(EntriesVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ETH: &str = "eip155:1/slip44:60";
    const BTC: &str = "bip122:000000000019d6689c085ae165831e93/slip44:0";
    const SOL: &str = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp/slip44:501";
    const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
    const ETH_USDC: &str = "eip155:1/erc20:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48";
    const TRON_USDT: &str = "tron:mainnet/trc20:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    fn price(p: &SandboxPrices, asset: &str, unit: &str) -> Option<String> {
        p.price(asset, unit).unwrap().map(|d| d.to_string())
    }

    #[test]
    fn builtin_prices() {
        let p = SandboxPrices::builtin();
        assert_eq!(price(&p, ETH, "USD").as_deref(), Some("2500"));
        assert_eq!(price(&p, BTC, "USD").as_deref(), Some("60000"));
        assert_eq!(price(&p, SOL, "USD").as_deref(), Some("150"));
        for usd_coin in [BASE_USDC, ETH_USDC, TRON_USDT] {
            assert_eq!(price(&p, usd_coin, "USD").as_deref(), Some("1"));
        }
        // 2500 / 1.08 = 2314.814814...: 18 decimals, rounded down (the 19th digit is 8).
        assert_eq!(
            price(&p, ETH, "EUR").as_deref(),
            Some("2314.814814814814814814")
        );
        // 60000 / 0.0067 = 8955223.880597014925373134|328...
        assert_eq!(
            price(&p, BTC, "JPY").as_deref(),
            Some("8955223.880597014925373134")
        );
        assert_eq!(
            price(&p, SOL, "GBP").as_deref(),
            Some("118.110236220472440944")
        );
        assert_eq!(
            price(&p, ETH_USDC, "CHF").as_deref(),
            Some("0.892857142857142857")
        );
        // An asset as the unit.
        assert_eq!(price(&p, BASE_USDC, ETH).as_deref(), Some("0.0004"));
        assert_eq!(price(&p, BTC, ETH).as_deref(), Some("24"));
        assert_eq!(price(&p, ETH, ETH).as_deref(), Some("1"));
        assert_eq!(
            price(&p, ETH, "CAD").as_deref(),
            Some("3424.657534246575342465")
        );
        assert_eq!(
            price(&p, ETH, "AUD").as_deref(),
            Some("3846.153846153846153846")
        );
    }

    #[test]
    fn unknown_assets_and_units_have_no_price() {
        let p = SandboxPrices::builtin();
        assert_eq!(p.price("eip155:1/erc20:0xnope", "USD"), Ok(None));
        assert_eq!(p.price(ETH, "XYZ"), Ok(None));
        assert_eq!(p.price(ETH, "NZD"), Ok(None));
        assert_eq!(p.price(ETH, "usd"), Ok(None));
        assert_eq!(p.price(ETH, "eip155:1/erc20:0xnope"), Ok(None));
        // A fiat code is a unit, not an asset.
        assert_eq!(p.price("EUR", "USD"), Ok(None));
    }

    #[test]
    fn the_builtin_table_prices_the_whole_builtin_catalogue_in_every_unit() {
        let p = SandboxPrices::builtin();
        let catalogue = AssetCatalogue::builtin();
        assert_eq!(p.assets.len(), catalogue.all().len());
        let units: Vec<String> = p
            .fiat
            .keys()
            .cloned()
            .chain(catalogue.all().iter().map(|a| a.asset_identifier.clone()))
            .collect();
        for a in catalogue.all() {
            for unit in &units {
                let got = p.price(&a.asset_identifier, unit).unwrap();
                assert!(
                    got.is_some_and(|v| !v.is_zero() && v.scale() <= PRICE_SCALE),
                    "{} in {unit}",
                    a.asset_identifier
                );
            }
        }
        assert_eq!(p.check_range(), Ok(()));
    }

    #[test]
    fn an_operator_table_replaces_the_builtin_one() {
        let p = SandboxPrices::from_json(&format!(
            r#"{{"assets": {{"{ETH}": "3000.50", "{BASE_USDC}": "0.999"}}, "fiat": {{"EUR": "1.10", "USD": "1.000"}}}}"#
        ))
        .unwrap();
        assert_eq!(price(&p, ETH, "USD").as_deref(), Some("3000.5"));
        assert_eq!(
            price(&p, ETH, "EUR").as_deref(),
            Some("2727.727272727272727272")
        );
        assert_eq!(
            price(&p, BASE_USDC, ETH).as_deref(),
            Some("0.000332944509248458")
        );
        // Not in this table, though built in.
        assert_eq!(p.price(BTC, "USD"), Ok(None));
        assert_eq!(p.price(ETH, "GBP"), Ok(None));
        // `fiat` may be left out: USD is always there.
        let p = SandboxPrices::from_json(&format!(r#"{{"assets": {{"{SOL}": "99"}}}}"#)).unwrap();
        assert_eq!(p.price(SOL, "USD"), Ok(Some(d("99"))));
        assert_eq!(p.price(SOL, "EUR"), Ok(None));
    }

    #[test]
    fn operator_table_errors() {
        let err = |json: &str| SandboxPrices::from_json(json).unwrap_err();
        let json_err = |json: &str| matches!(err(json), PriceTableError::Json(_));
        // Shape.
        assert!(json_err("not json"));
        assert!(json_err("[]"));
        assert!(
            json_err(r#"{"fiat": {"EUR": "1.08"}}"#),
            "assets is required"
        );
        assert!(json_err(&format!(
            r#"{{"assets": {{"{ETH}": "1"}}, "crypto": {{}}}}"#
        )));
        assert!(json_err(&format!(r#"{{"assets": {{"{ETH}": 2500}}}}"#)));
        assert!(json_err(&format!(r#"{{"assets": {{"{ETH}": null}}}}"#)));
        assert!(json_err(r#"{"assets": ["x"]}"#));
        assert_eq!(err(r#"{"assets": {}}"#), PriceTableError::NoAssets);
        // Keys.
        assert_eq!(
            err(r#"{"assets": {"ETH": "2500"}}"#),
            PriceTableError::InvalidAssetIdentifier { key: "ETH".into() }
        );
        assert_eq!(
            err(r#"{"assets": {"eip155:1/slip44:60 ": "2500"}}"#),
            PriceTableError::InvalidAssetIdentifier {
                key: "eip155:1/slip44:60 ".into()
            }
        );
        for code in ["eur", "EURO", "E1R", ""] {
            assert_eq!(
                err(&format!(
                    r#"{{"assets": {{"{ETH}": "1"}}, "fiat": {{"{code}": "1"}}}}"#
                )),
                PriceTableError::InvalidFiatCode { key: code.into() }
            );
        }
        assert_eq!(
            err(&format!(
                r#"{{"assets": {{"{ETH}": "2500", "{ETH}": "2600"}}}}"#
            )),
            PriceTableError::Duplicate { key: ETH.into() }
        );
        assert_eq!(
            err(&format!(
                r#"{{"assets": {{"{ETH}": "1"}}, "fiat": {{"EUR": "1.08", "EUR": "1.09"}}}}"#
            )),
            PriceTableError::Duplicate { key: "EUR".into() }
        );
        // Values.
        for bad in [
            "",
            "1e3",
            "+1",
            " 1",
            "1,5",
            "abc",
            "0",
            "0.00",
            "-1",
            "1.0000000000000000001",
        ] {
            assert!(
                matches!(
                    err(&format!(r#"{{"assets": {{"{ETH}": "{bad}"}}}}"#)),
                    PriceTableError::InvalidPrice { key, value, .. } if key == ETH && value == bad
                ),
                "{bad:?}"
            );
        }
        assert!(matches!(
            err(&format!(r#"{{"assets": {{"{ETH}": "1"}}, "fiat": {{"EUR": "-1.08"}}}}"#)),
            PriceTableError::InvalidPrice { key, .. } if key == "EUR"
        ));
        assert_eq!(
            err(&format!(
                r#"{{"assets": {{"{ETH}": "1"}}, "fiat": {{"USD": "1.01"}}}}"#
            )),
            PriceTableError::UsdNotOne {
                value: "1.01".into()
            }
        );
        // A price that rounds to zero at 18 decimals, and one that overflows.
        assert!(matches!(
            err(&format!(
                r#"{{"assets": {{"{ETH}": "0.000000000000000001", "{BTC}": "999999999999999999"}}}}"#
            )),
            PriceTableError::OutOfRange { .. }
        ));
        assert!(matches!(
            err(&format!(
                r#"{{"assets": {{"{ETH}": "1000"}}, "fiat": {{"XAU": "0.000000000000000001"}}}}"#
            )),
            PriceTableError::OutOfRange { asset, unit } if asset == ETH && unit == "XAU"
        ));
    }

    #[test]
    fn errors_read_well() {
        let e = SandboxPrices::from_json(r#"{"assets": {"ETH": "2500"}}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "\"ETH\" is not an asset identifier such as \"eip155:1/slip44:60\""
        );
        let e =
            SandboxPrices::from_json(&format!(r#"{{"assets": {{"{ETH}": "0"}}}}"#)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("the price of {ETH} (\"0\") must be positive")
        );
    }
}
