//! The chain processor's `PriceSource`: each chain asset's USD price, a fixed par from the
//! chains file or read from a Chainlink-compatible aggregator (`latestRoundData()` and
//! `decimals()` by `eth_call`), refused when the round is older than `maxPriceAgeSecs`. The
//! port is blocking (callers are on the blocking pool), so the calls run on a small runtime of
//! this source's own.

use std::sync::Arc;
use std::time::Duration;

use pay_domain::chains::rules::from_units;
use pay_domain::chains::{Chain, PriceRule};
use pay_domain::checkout::ports::PriceSource;
use pay_domain::kernel::amount::Decimal;
use pay_domain::kernel::ports::Clock;
use pay_domain::{Fault, PortResult};

use crate::rpc::RpcClient;

/// `decimals()`.
const DECIMALS: &str = "0x313ce567";
/// `latestRoundData()`.
const LATEST_ROUND_DATA: &str = "0xfeaf968c";
/// How long one feed read may take.
const FEED_TIMEOUT: Duration = Duration::from_secs(5);

/// USD prices of the configured chains' assets.
pub struct ChainPrices {
    chains: Arc<Vec<Chain>>,
    clock: Arc<dyn Clock>,
    /// Dropped with `shutdown_background` (dropping a runtime blocks, which an async context
    /// refuses).
    rt: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for ChainPrices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChainPrices").finish_non_exhaustive()
    }
}

impl Drop for ChainPrices {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// A feed's answer as a price: `latestRoundData()`'s five words (round, answer, started,
/// updated, answered-in round) and `decimals()`'s one; `None` when the answer is not positive,
/// the round is older than `max_age_secs` at `now_secs` (or from the future by more than a
/// minute), or the words are not what the aggregator returns.
pub fn feed_price(
    round_hex: &str,
    decimals_hex: &str,
    now_secs: i64,
    max_age_secs: u64,
) -> Option<Decimal> {
    let word = |hex: &str, i: usize| hex.get(i * 64..(i + 1) * 64).map(str::to_owned);
    let int = |w: String| {
        let v = serde_json::Value::String(format!("0x{w}"));
        crate::rpc::quantity(&v)
    };
    let answer_word = word(round_hex, 1)?;
    // int256: a set top bit is a negative answer.
    if answer_word.starts_with(['8', '9', 'a', 'b', 'c', 'd', 'e', 'f']) {
        return None;
    }
    let answer = int(answer_word)?;
    let updated = i64::try_from(int(word(round_hex, 3)?)?).ok()?;
    let decimals = u32::try_from(int(word(decimals_hex, 0)?)?).ok()?;
    if answer == 0 || decimals > 18 {
        return None;
    }
    let age = now_secs - updated;
    if age < -60 || age > i64::try_from(max_age_secs).ok()? {
        return None;
    }
    from_units(answer, decimals)
}

impl ChainPrices {
    pub fn new(chains: Arc<Vec<Chain>>, clock: Arc<dyn Clock>) -> PortResult<ChainPrices> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("pay-chain-prices")
            .enable_all()
            .build()
            .map_err(|e| Fault::caused("chain prices: runtime", e))?;
        Ok(ChainPrices {
            chains,
            clock,
            rt: Some(rt),
        })
    }

    /// The rule of `asset`, and its chain's node.
    fn rule(&self, asset: &str) -> Option<(&Chain, &PriceRule)> {
        self.chains
            .iter()
            .find_map(|c| c.asset(asset).map(|a| (c, &a.price)))
    }

    /// The aggregator's current price, `None` when stale or unreadable (logged).
    fn read_feed(&self, chain: &Chain, aggregator: &str, max_age_secs: u64) -> Option<Decimal> {
        let rt = self.rt.as_ref()?;
        let read = rt.block_on(async {
            let client = RpcClient::new(&chain.rpc_url, FEED_TIMEOUT)?;
            let round = client.eth_call(aggregator, LATEST_ROUND_DATA).await?;
            let decimals = client.eth_call(aggregator, DECIMALS).await?;
            Ok::<_, crate::RpcError>((round, decimals))
        });
        match read {
            Ok((round, decimals)) => {
                let now = self.clock.now().unix_seconds();
                let price = feed_price(&round, &decimals, now, max_age_secs);
                if price.is_none() {
                    tracing::warn!(chain = %chain.chain_code, %aggregator, "price feed stale or not positive: no quote");
                }
                price
            }
            Err(e) => {
                tracing::warn!(chain = %chain.chain_code, %aggregator, error = %e, "price feed unreadable: no quote");
                None
            }
        }
    }
}

impl PriceSource for ChainPrices {
    /// The USD price of a chain asset (`None` in any other unit, or when its feed is stale).
    fn price(&self, asset: &str, unit: &str) -> PortResult<Option<Decimal>> {
        if unit != "USD" {
            return Ok(None);
        }
        Ok(match self.rule(asset) {
            None => None,
            Some((_, PriceRule::Fixed(p))) => Some(*p),
            Some((
                chain,
                PriceRule::Feed {
                    aggregator,
                    max_age_secs,
                },
            )) => self.read_feed(chain, aggregator, *max_age_secs),
        })
    }

    /// Every chain asset in USD, without reading a feed.
    fn lists(&self, asset: &str, unit: &str) -> PortResult<bool> {
        Ok(unit == "USD" && self.rule(asset).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[u128]) -> String {
        ws.iter().map(|w| format!("{w:064x}")).collect()
    }

    #[test]
    fn a_feed_answer_is_a_price_while_fresh() {
        let now = 1_800_000_000i64;
        let round = |answer: u128, updated: i64| words(&[7, answer, 0, updated as u128, 7]);
        let d8 = words(&[8]);
        assert_eq!(
            feed_price(&round(250_012_345_678, now - 10), &d8, now, 600),
            Some(Decimal::parse("2500.12345678").unwrap())
        );
        assert_eq!(
            feed_price(&round(250_000_000_000, now - 601), &d8, now, 600),
            None,
            "stale"
        );
        assert_eq!(
            feed_price(&round(250_000_000_000, now + 3600), &d8, now, 600),
            None,
            "future"
        );
        assert_eq!(feed_price(&round(0, now), &d8, now, 600), None);
        let negative = format!(
            "{:064x}{}{}",
            7,
            "f".repeat(64),
            words(&[0, now as u128, 7])
        );
        assert_eq!(feed_price(&negative, &d8, now, 600), None);
        assert_eq!(feed_price("00", &d8, now, 600), None, "not five words");
    }
}
