//! The sandbox `Processor`: takes every asset, charges a configurable fee, and opens deposit
//! channels that are a pure function of the session and the asset, so asking again (after a
//! restart too) gives the same channel.

use pay_domain::checkout::ports::{DepositChannel, Processor, SettlementTransfer};
use pay_domain::kernel::amount::Decimal;
use pay_domain::kernel::assets::DestinationAsset;
use pay_domain::kernel::ids::CompanyId;
use pay_domain::{Fault, FieldError, PortResult};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::address::deposit_address;

/// The fee the sandbox charges unless configured otherwise, in percent.
const DEFAULT_FEE_PERCENT: &str = "1";

/// The sandbox payment processor (`name()` is `"sandbox"`). Nothing is ever paid into its
/// channels: deposits are simulated through the use cases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxProcessor {
    fee_percent: Decimal,
    /// Asset identifiers for which merchants have no settlement wallet (to rehearse blocked
    /// starts); empty by default.
    no_wallet: Vec<String>,
}

impl SandboxProcessor {
    /// The sandbox with the default 1 % fee.
    pub fn new() -> Self {
        SandboxProcessor {
            fee_percent: Decimal::parse(DEFAULT_FEE_PERCENT).expect("a literal decimal"),
            no_wallet: Vec::new(),
        }
    }

    /// The sandbox with another fee, `0 <= fee_percent < 100`.
    pub fn with_fee_percent(fee_percent: Decimal) -> Result<Self, FieldError> {
        let hundred = Decimal::parse("100").expect("a literal decimal");
        if fee_percent.is_negative() || fee_percent >= hundred {
            return Err(FieldError::new(
                "fee_percent",
                format!(
                    "the sandbox fee must be at least 0 and below 100 percent, not {fee_percent}"
                ),
            ));
        }
        Ok(SandboxProcessor {
            fee_percent,
            no_wallet: Vec::new(),
        })
    }

    /// The same sandbox where merchants have no settlement wallet for these assets, so that
    /// starting a payment that settles in one of them is blocked.
    pub fn without_wallets(mut self, asset_identifiers: &[&str]) -> Self {
        self.no_wallet = asset_identifiers.iter().map(|s| (*s).to_owned()).collect();
        self
    }
}

impl Default for SandboxProcessor {
    fn default() -> Self {
        SandboxProcessor::new()
    }
}

/// The sandbox channel id of `session` paying in the asset `asset_identifier`: `sbx_ch_` + the
/// first 24 lower-case hex digits of `SHA-256(session UUID as its 16 bytes || asset identifier
/// as UTF-8)`.
pub fn channel_id(session: Uuid, asset_identifier: &str) -> String {
    let digest = Sha256::new()
        .chain_update(session.as_bytes())
        .chain_update(asset_identifier.as_bytes())
        .finalize();
    format!("sbx_ch_{}", hex::encode(&digest[..12]))
}

impl Processor for SandboxProcessor {
    fn name(&self) -> &'static str {
        "sandbox"
    }

    fn fee_percent(&self) -> Decimal {
        self.fee_percent
    }

    /// Every asset: the sandbox moves no real funds.
    fn supports(&self, _asset: &DestinationAsset) -> bool {
        true
    }

    /// A pure function of the company and the asset's chain: the sandbox address of the
    /// company's UUID on that chain (as unpayable as the deposit addresses); `None` for the
    /// assets given to [`SandboxProcessor::without_wallets`].
    fn merchant_wallet(
        &self,
        company: CompanyId,
        asset: &DestinationAsset,
    ) -> PortResult<Option<String>> {
        if self.no_wallet.contains(&asset.asset_identifier) {
            return Ok(None);
        }
        Ok(Some(deposit_address(company.0, &asset.chain_code)))
    }

    /// A pure function of `session` and `asset`: the channel id is [`channel_id`], the
    /// composite id `<chain code>:<channel id>`, the address [`deposit_address`] of the session
    /// on the asset's chain (so one session's assets on one chain share an address). `amount`
    /// must be positive and is not part of the channel.
    fn open_channel(
        &self,
        session: Uuid,
        asset: &DestinationAsset,
        amount: Decimal,
    ) -> PortResult<DepositChannel> {
        if amount.is_negative() || amount.is_zero() {
            return Err(Fault::new(format!(
                "a deposit channel needs a positive amount, not {amount}"
            )));
        }
        let channel_id = channel_id(session, &asset.asset_identifier);
        Ok(DepositChannel {
            composite_channel_id: format!("{}:{channel_id}", asset.chain_code),
            channel_id,
            deposit_address: deposit_address(session, &asset.chain_code),
            source_chain: asset.chain_code.clone(),
        })
    }

    /// A pure function of `session` and `asset`: on the asset's CAIP-2 chain, the hash
    /// `0x` + hex `SHA-256("settlement" || session UUID bytes || asset identifier)`, index 0,
    /// from the sandbox's settlement wallet (the sandbox address of the nil UUID there).
    fn settlement_transfer(
        &self,
        session: Uuid,
        asset: &DestinationAsset,
        _amount: Decimal,
        _destination: &str,
    ) -> PortResult<Option<SettlementTransfer>> {
        let digest = Sha256::new()
            .chain_update(b"settlement")
            .chain_update(session.as_bytes())
            .chain_update(asset.asset_identifier.as_bytes())
            .finalize();
        let chain = asset
            .asset_identifier
            .split_once('/')
            .map(|(chain, _)| chain)
            .ok_or_else(|| Fault::new("an asset identifier without a chain"))?;
        Ok(Some(SettlementTransfer {
            chain: chain.to_owned(),
            tx_hash: format!("0x{}", hex::encode(digest)),
            index: 0,
            from_address: deposit_address(Uuid::nil(), &asset.chain_code),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pay_domain::kernel::assets::AssetCatalogue;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    fn asset(id: &str) -> DestinationAsset {
        AssetCatalogue::builtin().get(id).unwrap().clone()
    }

    fn session(s: &str) -> Uuid {
        Uuid::parse_str(s).unwrap()
    }

    const S1: &str = "0190a5e4-7b3c-7d2e-9f10-2a3b4c5d6e7f";
    const S2: &str = "00000000-0000-4000-8000-000000000001";
    const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
    const ETH_USDC: &str = "eip155:1/erc20:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48";
    const ETH: &str = "eip155:1/slip44:60";
    const BTC: &str = "bip122:000000000019d6689c085ae165831e93/slip44:0";
    const SOL: &str = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp/slip44:501";
    const TRON_USDT: &str = "tron:mainnet/trc20:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t";

    #[test]
    fn name_fee_and_support() {
        let p = SandboxProcessor::default();
        assert_eq!(p.name(), "sandbox");
        assert_eq!(p.fee_percent(), d("1"));
        assert_eq!(SandboxProcessor::new(), p);
        let company = CompanyId(session(S1));
        let wallet = p.merchant_wallet(company, &asset(ETH)).unwrap().unwrap();
        assert_eq!(wallet, deposit_address(session(S1), "ethereum"));
        assert_eq!(
            p.merchant_wallet(company, &asset(ETH)).unwrap(),
            Some(wallet)
        );
        let blocked = SandboxProcessor::new().without_wallets(&[ETH]);
        assert_eq!(blocked.merchant_wallet(company, &asset(ETH)).unwrap(), None);
        assert!(blocked
            .merchant_wallet(company, &asset(BTC))
            .unwrap()
            .is_some());
        for a in AssetCatalogue::builtin().all() {
            assert!(p.supports(a), "{}", a.asset_identifier);
        }
        let mut odd = asset(ETH);
        odd.asset_identifier = "cosmos:cosmoshub-4/slip44:118".into();
        odd.chain_code = "cosmos".into();
        assert!(p.supports(&odd));
    }

    #[test]
    fn the_fee_is_configurable_within_0_and_100() {
        let p = SandboxProcessor::with_fee_percent(d("2.5")).unwrap();
        assert_eq!(p.fee_percent(), d("2.5"));
        assert_eq!(
            SandboxProcessor::with_fee_percent(d("0"))
                .unwrap()
                .fee_percent(),
            Decimal::ZERO
        );
        assert!(SandboxProcessor::with_fee_percent(d("99.99")).is_ok());
        for bad in ["-0.01", "100", "250"] {
            assert!(
                matches!(
                    SandboxProcessor::with_fee_percent(d(bad)),
                    Err(FieldError { field, .. }) if field == "fee_percent"
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn known_answers() {
        let p = SandboxProcessor::new();
        let open = |s: &str, id: &str| p.open_channel(session(s), &asset(id), d("10")).unwrap();
        let expect = |ch: DepositChannel, id: &str, composite: &str, address: &str, chain: &str| {
            assert_eq!(
                ch,
                DepositChannel {
                    channel_id: id.into(),
                    composite_channel_id: composite.into(),
                    deposit_address: address.into(),
                    source_chain: chain.into(),
                }
            );
        };
        expect(
            open(S1, BASE_USDC),
            "sbx_ch_0d6a05db1a9878b90436c2d3",
            "base:sbx_ch_0d6a05db1a9878b90436c2d3",
            "0x3aef18a1e057aca7144b18a7589dc418f3fe4fc6",
            "base",
        );
        expect(
            open(S1, ETH),
            "sbx_ch_c78155321e872bfbb1e30fbb",
            "ethereum:sbx_ch_c78155321e872bfbb1e30fbb",
            "0x0c09ca1a217c6144f49e72de12988fb1aa51437e",
            "ethereum",
        );
        expect(
            open(S1, BTC),
            "sbx_ch_b40cc7c413785e39e9eac12e",
            "bitcoin:sbx_ch_b40cc7c413785e39e9eac12e",
            "bc1qdgwvmdm8gw7kdse4yrvcx3v05dvmhglfsl28ky",
            "bitcoin",
        );
        expect(
            open(S1, SOL),
            "sbx_ch_98a452891d3c0fdef5fd9642",
            "solana:sbx_ch_98a452891d3c0fdef5fd9642",
            "jwwYgKT4NdqSXrLWnJvu8N5BB5ZMeEoquRyCpkDdMbyz",
            "solana",
        );
        expect(
            open(S1, TRON_USDT),
            "sbx_ch_c4abeff77d9b83426dc329e6",
            "tron:sbx_ch_c4abeff77d9b83426dc329e6",
            "TNKdJbxsJZeF8EYavzhhSE1PGgm8EEoSEa",
            "tron",
        );
        expect(
            open(S2, ETH),
            "sbx_ch_4a92d3dc7c86a67800c37f4b",
            "ethereum:sbx_ch_4a92d3dc7c86a67800c37f4b",
            "0xcfeca6a104f80140eeb61cd9ab1981dfaa3562b8",
            "ethereum",
        );
    }

    #[test]
    fn the_channel_id_is_the_rule() {
        let s = session(S1);
        let mut input = s.as_bytes().to_vec();
        input.extend_from_slice(ETH.as_bytes());
        let hex = hex::encode(Sha256::digest(&input));
        let ch = SandboxProcessor::new()
            .open_channel(s, &asset(ETH), d("1"))
            .unwrap();
        assert_eq!(ch.channel_id, format!("sbx_ch_{}", &hex[..24]));
        assert_eq!(ch.channel_id.len(), 7 + 24);
    }

    #[test]
    fn channels_are_deterministic_per_session_and_asset() {
        let p = SandboxProcessor::new();
        let catalogue = AssetCatalogue::builtin();
        let (s1, s2) = (session(S1), session(S2));
        let mut ids = std::collections::HashSet::new();
        for a in catalogue.all() {
            let first = p.open_channel(s1, a, d("10")).unwrap();
            // Idempotent, and the amount is not part of the channel.
            assert_eq!(p.open_channel(s1, a, d("10")).unwrap(), first);
            assert_eq!(p.open_channel(s1, a, d("0.000001")).unwrap(), first);
            // Another processor instance (a restart) gives the same channel.
            assert_eq!(
                SandboxProcessor::with_fee_percent(d("3"))
                    .unwrap()
                    .open_channel(s1, a, d("10"))
                    .unwrap(),
                first
            );
            assert_eq!(first.source_chain, a.chain_code);
            assert_eq!(
                first.composite_channel_id,
                format!("{}:{}", a.chain_code, first.channel_id)
            );
            let other = p.open_channel(s2, a, d("10")).unwrap();
            assert_ne!(other.deposit_address, first.deposit_address);
            assert_ne!(other.channel_id, first.channel_id);
            assert!(ids.insert(first.channel_id));
            assert!(ids.insert(other.channel_id));
        }
        // One session's two assets on one chain: one address, two channels.
        let usdc = p.open_channel(s1, &asset(ETH_USDC), d("1")).unwrap();
        let eth = p.open_channel(s1, &asset(ETH), d("1")).unwrap();
        assert_eq!(usdc.deposit_address, eth.deposit_address);
        assert_ne!(usdc.channel_id, eth.channel_id);
    }

    #[test]
    fn addresses_follow_the_asset_chain() {
        let p = SandboxProcessor::new();
        let s = session(S2);
        for a in AssetCatalogue::builtin().all() {
            let addr = p.open_channel(s, a, d("5")).unwrap().deposit_address;
            let ok = match a.chain_code.as_str() {
                "ethereum" | "base" | "polygon" => addr.starts_with("0x") && addr.len() == 42,
                "bitcoin" => addr.starts_with("bc1q") && addr.len() == 42,
                "solana" => addr.len() == 44,
                "tron" => addr.starts_with('T') && addr.len() == 34,
                other => panic!("the built-in catalogue has a new chain {other}"),
            };
            assert!(ok, "{} -> {addr}", a.chain_code);
        }
        let mut odd = asset(ETH);
        odd.chain_code = "cosmos".into();
        let ch = p.open_channel(s, &odd, d("5")).unwrap();
        assert!(ch.deposit_address.starts_with("sbx_") && ch.deposit_address.len() == 44);
        assert_eq!(ch.source_chain, "cosmos");
        assert!(ch.composite_channel_id.starts_with("cosmos:sbx_ch_"));
    }

    #[test]
    fn the_amount_must_be_positive() {
        let p = SandboxProcessor::new();
        for bad in ["0", "0.000", "-1", "-0.000001"] {
            assert!(
                matches!(
                    p.open_channel(session(S1), &asset(ETH), d(bad)),
                    Err(f) if f.what().contains("positive amount")
                ),
                "{bad}"
            );
        }
        assert!(p
            .open_channel(session(S1), &asset(ETH), d("0.000000000000000001"))
            .is_ok());
    }

    #[test]
    fn settlement_transfers_are_a_known_function_of_session_and_asset() {
        let p = SandboxProcessor::new();
        let t = p
            .settlement_transfer(session(S1), &asset(BASE_USDC), d("9.9"), "0xdest")
            .unwrap()
            .unwrap();
        assert_eq!(
            t,
            SettlementTransfer {
                chain: "eip155:8453".into(),
                tx_hash: "0x1d5aaa3386c4ac84e1f417061e364db5ee4bce01b90adf36cc1177bf5a9f8b33"
                    .into(),
                index: 0,
                from_address: deposit_address(Uuid::nil(), "base"),
            }
        );
        // Asked again: the same transfer; another session or asset: another one.
        assert_eq!(
            p.settlement_transfer(session(S1), &asset(BASE_USDC), d("1"), "x")
                .unwrap()
                .unwrap(),
            t
        );
        assert_ne!(
            p.settlement_transfer(session(S2), &asset(BASE_USDC), d("9.9"), "0xdest")
                .unwrap()
                .unwrap()
                .tx_hash,
            t.tx_hash
        );
        let btc = p
            .settlement_transfer(session(S1), &asset(BTC), d("1"), "bc1q")
            .unwrap()
            .unwrap();
        assert_eq!(btc.chain, "bip122:000000000019d6689c085ae165831e93");
        assert_eq!(
            btc.tx_hash,
            "0xf70a02413e88cfac704256b4c95933d2af0ba0c7d5c1f623272b1300dbfa6137"
        );
    }
}
