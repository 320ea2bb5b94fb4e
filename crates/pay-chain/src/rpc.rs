//! A JSON-RPC 2.0 client for EVM nodes over HTTP: one POST per call, hex quantities parsed
//! strictly, errors kept apart (the node answered an error, or the transport failed) so the
//! watcher can back off and log without crashing.

use std::time::Duration;

use pay_domain::chains::Chain;
use serde_json::{json, Value};

/// The `Transfer(address,address,uint256)` event's topic (Keccak-256 of its signature).
pub const TRANSFER_TOPIC: &str =
    "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

/// Why a call gave no result.
#[derive(Debug, thiserror::Error)]
pub enum RpcError {
    /// No answer: connection refused, timeout, not HTTP 200.
    #[error("{method}: the node did not answer: {detail}")]
    Transport { method: String, detail: String },
    /// The node answered with a JSON-RPC error.
    #[error("{method}: the node answered error {code}: {message}")]
    Node {
        method: String,
        code: i64,
        message: String,
    },
    /// The answer is not what the method returns.
    #[error("{method}: unexpected answer: {detail}")]
    Malformed { method: String, detail: String },
}

/// A block as the watcher needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub number: u64,
    pub hash: String,
    pub parent_hash: String,
    /// Seconds since the epoch.
    pub timestamp: u64,
    pub transactions: Vec<Transaction>,
}

/// A top-level transaction of a block (read with the block's full transactions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transaction {
    pub hash: String,
    /// Lower case.
    pub from: String,
    /// Lower case; `None` for a contract creation.
    pub to: Option<String>,
    /// Wei.
    pub value: u128,
}

/// A log entry (`eth_getLogs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Log {
    /// The emitting contract, lower case.
    pub address: String,
    pub topics: Vec<String>,
    pub data: String,
    pub block_number: u64,
    pub block_hash: String,
    pub tx_hash: String,
    pub log_index: u64,
}

/// An ERC-20 `Transfer` decoded from its log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenTransfer {
    pub token: String,
    pub from: String,
    pub to: String,
    pub units: u128,
    pub block_number: u64,
    pub block_hash: String,
    pub tx_hash: String,
    pub log_index: u64,
}

/// A client of one node.
#[derive(Debug, Clone)]
pub struct RpcClient {
    url: String,
    http: reqwest::Client,
}

fn malformed(method: &str, detail: impl Into<String>) -> RpcError {
    RpcError::Malformed {
        method: method.to_owned(),
        detail: detail.into(),
    }
}

/// `0x`-prefixed hex quantity as a `u128`.
pub fn quantity(v: &Value) -> Option<u128> {
    let s = v.as_str()?.strip_prefix("0x")?;
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    // A 32-byte word may carry leading zeros; what is left must fit 128 bits.
    let significant = s.trim_start_matches('0');
    if significant.len() > 32 {
        return None;
    }
    if significant.is_empty() {
        return Some(0);
    }
    u128::from_str_radix(significant, 16).ok()
}

fn quantity64(v: &Value) -> Option<u64> {
    quantity(v).and_then(|q| u64::try_from(q).ok())
}

fn lower(v: &Value) -> Option<String> {
    v.as_str().map(str::to_ascii_lowercase)
}

/// A 32-byte topic holding an address: its last 20 bytes.
fn topic_address(topic: &str) -> Option<String> {
    let hex = topic.strip_prefix("0x")?;
    (hex.len() == 64).then(|| format!("0x{}", hex[24..].to_ascii_lowercase()))
}

/// The 32-byte word for an address, as a topic filter.
pub fn address_topic(address: &str) -> String {
    format!(
        "0x{:0>64}",
        address.trim_start_matches("0x").to_ascii_lowercase()
    )
}

impl Log {
    /// This log as an ERC-20 `Transfer`, when it is one whose amount fits 128 bits.
    pub fn token_transfer(&self) -> Option<TokenTransfer> {
        if self.topics.len() != 3 || !self.topics[0].eq_ignore_ascii_case(TRANSFER_TOPIC) {
            return None;
        }
        Some(TokenTransfer {
            token: self.address.clone(),
            from: topic_address(&self.topics[1])?,
            to: topic_address(&self.topics[2])?,
            units: quantity(&Value::String(self.data.clone()))?,
            block_number: self.block_number,
            block_hash: self.block_hash.clone(),
            tx_hash: self.tx_hash.clone(),
            log_index: self.log_index,
        })
    }
}

impl RpcClient {
    /// A client of the node at `url`; each call times out after `timeout`.
    pub fn new(url: &str, timeout: Duration) -> Result<RpcClient, RpcError> {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| RpcError::Transport {
                method: "client".into(),
                detail: e.to_string(),
            })?;
        Ok(RpcClient {
            url: url.to_owned(),
            http,
        })
    }

    /// One call: the `result` of the answer.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let transport = |detail: String| RpcError::Transport {
            method: method.to_owned(),
            detail,
        };
        let answer = self
            .http
            .post(&self.url)
            .json(&body)
            .send()
            .await
            .map_err(|e| transport(e.without_url().to_string()))?;
        if !answer.status().is_success() {
            return Err(transport(format!("HTTP {}", answer.status())));
        }
        let mut v: Value = answer
            .json()
            .await
            .map_err(|e| transport(e.without_url().to_string()))?;
        if let Some(err) = v.get("error") {
            return Err(RpcError::Node {
                method: method.to_owned(),
                code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
                message: err
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .chars()
                    .take(300)
                    .collect(),
            });
        }
        v.get_mut("result")
            .map(Value::take)
            .ok_or_else(|| malformed(method, "no result"))
    }

    /// `eth_chainId`.
    pub async fn chain_id(&self) -> Result<u64, RpcError> {
        let v = self.call("eth_chainId", json!([])).await?;
        quantity64(&v).ok_or_else(|| malformed("eth_chainId", v.to_string()))
    }

    /// `eth_blockNumber`: the head.
    pub async fn block_number(&self) -> Result<u64, RpcError> {
        let v = self.call("eth_blockNumber", json!([])).await?;
        quantity64(&v).ok_or_else(|| malformed("eth_blockNumber", v.to_string()))
    }

    /// `eth_getBlockByNumber` with its transactions; `None` above the head.
    pub async fn block(&self, number: u64) -> Result<Option<Block>, RpcError> {
        const M: &str = "eth_getBlockByNumber";
        let v = self.call(M, json!([format!("0x{number:x}"), true])).await?;
        if v.is_null() {
            return Ok(None);
        }
        let bad = |what: &str| malformed(M, format!("block {number}: bad {what}"));
        let mut transactions = Vec::new();
        for tx in v["transactions"]
            .as_array()
            .ok_or_else(|| bad("transactions"))?
        {
            transactions.push(Transaction {
                hash: lower(&tx["hash"]).ok_or_else(|| bad("transaction hash"))?,
                from: lower(&tx["from"]).ok_or_else(|| bad("transaction from"))?,
                to: lower(&tx["to"]),
                value: quantity(&tx["value"]).ok_or_else(|| bad("transaction value"))?,
            });
        }
        Ok(Some(Block {
            number: quantity64(&v["number"]).ok_or_else(|| bad("number"))?,
            hash: lower(&v["hash"]).ok_or_else(|| bad("hash"))?,
            parent_hash: lower(&v["parentHash"]).ok_or_else(|| bad("parentHash"))?,
            timestamp: quantity64(&v["timestamp"]).ok_or_else(|| bad("timestamp"))?,
            transactions,
        }))
    }

    /// The hash of block `number` now, `None` above the head.
    pub async fn block_hash(&self, number: u64) -> Result<Option<String>, RpcError> {
        let v = self
            .call(
                "eth_getBlockByNumber",
                json!([format!("0x{number:x}"), false]),
            )
            .await?;
        Ok(lower(&v["hash"]))
    }

    /// The hash and time (seconds since the epoch) of block `number` now, `None` above the head.
    pub async fn block_header(&self, number: u64) -> Result<Option<(String, u64)>, RpcError> {
        const M: &str = "eth_getBlockByNumber";
        let v = self
            .call(M, json!([format!("0x{number:x}"), false]))
            .await?;
        if v.is_null() {
            return Ok(None);
        }
        let hash = lower(&v["hash"]).ok_or_else(|| malformed(M, "bad hash"))?;
        let time = quantity64(&v["timestamp"]).ok_or_else(|| malformed(M, "bad timestamp"))?;
        Ok(Some((hash, time)))
    }

    /// `eth_getLogs` of `Transfer` events of `tokens` in blocks `from..=to`.
    pub async fn transfer_logs(
        &self,
        from: u64,
        to: u64,
        tokens: &[String],
    ) -> Result<Vec<Log>, RpcError> {
        const M: &str = "eth_getLogs";
        let filter = json!({
            "fromBlock": format!("0x{from:x}"),
            "toBlock": format!("0x{to:x}"),
            "address": tokens,
            "topics": [TRANSFER_TOPIC],
        });
        let v = self.call(M, json!([filter])).await?;
        let bad = |what: &str| malformed(M, format!("bad {what}"));
        let mut logs = Vec::new();
        for l in v.as_array().ok_or_else(|| bad("list"))? {
            if l["removed"].as_bool() == Some(true) {
                continue;
            }
            logs.push(Log {
                address: lower(&l["address"]).ok_or_else(|| bad("address"))?,
                topics: l["topics"]
                    .as_array()
                    .ok_or_else(|| bad("topics"))?
                    .iter()
                    .filter_map(lower)
                    .collect(),
                data: lower(&l["data"]).ok_or_else(|| bad("data"))?,
                block_number: quantity64(&l["blockNumber"]).ok_or_else(|| bad("blockNumber"))?,
                block_hash: lower(&l["blockHash"]).ok_or_else(|| bad("blockHash"))?,
                tx_hash: lower(&l["transactionHash"]).ok_or_else(|| bad("transactionHash"))?,
                log_index: quantity64(&l["logIndex"]).ok_or_else(|| bad("logIndex"))?,
            });
        }
        Ok(logs)
    }

    /// `eth_getBalance` of `address` at block `number` (wei).
    pub async fn balance(&self, address: &str, number: u64) -> Result<u128, RpcError> {
        let v = self
            .call("eth_getBalance", json!([address, format!("0x{number:x}")]))
            .await?;
        quantity(&v).ok_or_else(|| malformed("eth_getBalance", v.to_string()))
    }

    /// Whether the transaction succeeded (`eth_getTransactionReceipt` status 1) and the fee
    /// its sender paid (`gasUsed` times `effectiveGasPrice`, wei); `None` before it is mined.
    pub async fn receipt(&self, tx_hash: &str) -> Result<Option<(bool, u128)>, RpcError> {
        const M: &str = "eth_getTransactionReceipt";
        let v = self.call(M, json!([tx_hash])).await?;
        if v.is_null() {
            return Ok(None);
        }
        let gas = quantity(&v["gasUsed"]).ok_or_else(|| malformed(M, "bad gasUsed"))?;
        let price = quantity(&v["effectiveGasPrice"])
            .ok_or_else(|| malformed(M, "bad effectiveGasPrice"))?;
        let fee = gas
            .checked_mul(price)
            .ok_or_else(|| malformed(M, "fee beyond 128 bits"))?;
        Ok(Some((quantity(&v["status"]) == Some(1), fee)))
    }

    /// Whether the transaction succeeded (`eth_getTransactionReceipt` status 1).
    pub async fn succeeded(&self, tx_hash: &str) -> Result<bool, RpcError> {
        let v = self
            .call("eth_getTransactionReceipt", json!([tx_hash]))
            .await?;
        Ok(quantity(&v["status"]) == Some(1))
    }

    /// The coin moved by calls from inside contracts in block `number` (internal transfers):
    /// `(txHash, from, to, wei)` of every nested call with a value that did not revert, from the
    /// node's call traces (`debug_traceBlockByNumber` with the `callTracer`). A node without
    /// traces answers an error.
    pub async fn internal_transfers(
        &self,
        number: u64,
    ) -> Result<Vec<(String, String, String, u128)>, RpcError> {
        const M: &str = "debug_traceBlockByNumber";
        let v = self
            .call(
                M,
                json!([format!("0x{number:x}"), {"tracer": "callTracer"}]),
            )
            .await?;
        let mut out = Vec::new();
        for tx in v.as_array().ok_or_else(|| malformed(M, "not a list"))? {
            let Some(hash) = lower(&tx["txHash"]) else {
                continue;
            };
            let root = &tx["result"];
            if root.get("error").is_some() {
                continue;
            }
            // Depth first through the frames that did not revert (a reverted frame undoes
            // every call beneath it).
            let mut frames: Vec<&Value> = root["calls"].as_array().into_iter().flatten().collect();
            while let Some(f) = frames.pop() {
                if f.get("error").is_some() {
                    continue;
                }
                let value = quantity(&f["value"]).unwrap_or(0);
                if let (Some(from), Some(to), true) =
                    (lower(&f["from"]), lower(&f["to"]), value > 0)
                {
                    out.push((hash.clone(), from, to, value));
                }
                frames.extend(f["calls"].as_array().into_iter().flatten());
            }
        }
        Ok(out)
    }

    /// `eth_call` of `data` on `to` at the head: the returned bytes as hex (no `0x`).
    pub async fn eth_call(&self, to: &str, data: &str) -> Result<String, RpcError> {
        let v = self
            .call("eth_call", json!([{"to": to, "data": data}, "latest"]))
            .await?;
        let s = v
            .as_str()
            .and_then(|s| s.strip_prefix("0x"))
            .ok_or_else(|| malformed("eth_call", v.to_string()))?;
        Ok(s.to_ascii_lowercase())
    }
}

/// Checks every chain's node against the file: `eth_chainId` must answer the configured
/// `chainId`. The error names the entry.
pub async fn check_chain_ids(chains: &[Chain], timeout: Duration) -> Result<(), String> {
    for (i, c) in chains.iter().enumerate() {
        let name = format!("chains[{i}] ({})", c.chain_code);
        let client = RpcClient::new(&c.rpc_url, timeout).map_err(|e| format!("{name}: {e}"))?;
        let id = client
            .chain_id()
            .await
            .map_err(|e| format!("{name}: rpcUrl: {e}"))?;
        if id != c.chain_id {
            return Err(format!(
                "{name}: the node at rpcUrl is chain {id}, not the configured chainId {}",
                c.chain_id
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities() {
        assert_eq!(quantity(&json!("0x0")), Some(0));
        assert_eq!(quantity(&json!("0x1a")), Some(26));
        assert_eq!(quantity(&json!("0x")), None);
        assert_eq!(quantity(&json!("1a")), None);
        assert_eq!(quantity(&json!(26)), None);
        let word = format!("0x{:0>64}", "ff");
        assert_eq!(quantity(&json!(word)), Some(255), "a full 32-byte word");
        assert_eq!(quantity(&json!(format!("0x1{}", "0".repeat(32)))), None);
    }

    #[test]
    fn a_transfer_log_decodes() {
        let log = Log {
            address: "0x5fbdb2315678afecb367f032d93f642f64180aa3".into(),
            topics: vec![
                TRANSFER_TOPIC.into(),
                address_topic("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"),
                address_topic("0x70997970c51812dc3a010c7d01b50e0d17dc79c8"),
            ],
            data: format!("0x{:0>64}", "5f5e100"),
            block_number: 7,
            block_hash: "0xbb".into(),
            tx_hash: "0xaa".into(),
            log_index: 2,
        };
        let t = log.token_transfer().unwrap();
        assert_eq!(t.from, "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266");
        assert_eq!(t.to, "0x70997970c51812dc3a010c7d01b50e0d17dc79c8");
        assert_eq!(t.units, 100_000_000);
        let approval = Log {
            topics: vec![
                "0x8c5be1e5".into(),
                log.topics[1].clone(),
                log.topics[2].clone(),
            ],
            ..log
        };
        assert!(approval.token_transfer().is_none());
    }
}
