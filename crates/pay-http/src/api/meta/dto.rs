//! Request and response shapes of the meta routes.

use serde::Serialize;
use utoipa::ToSchema;

data_list!(TimezoneList, String, "IANA time zone names, sorted.");

/// Liveness and readiness.
#[derive(Debug, Serialize, ToSchema)]
pub struct HealthDto {
    #[schema(example = "ok")]
    pub status: String,
}

/// Readiness: the database answers and, under the chain processor, each chain is read.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReadyDto {
    #[schema(example = "ok")]
    pub status: String,
    /// The chain processor's chains (absent under the sandbox).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chains: Vec<ChainReadyDto>,
}

/// One chain as its watchers last read it (every instance answers the same: the watchers
/// record their rounds in the database).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChainReadyDto {
    #[schema(example = "base")]
    pub chain_code: String,
    /// The node's head at the last read; `null` before the first.
    #[schema(example = 19000120)]
    pub head: Option<u64>,
    /// Blocks the watcher is behind that head (the head minus the last block read).
    #[schema(example = 0)]
    pub lag: Option<u64>,
    /// When a watcher last read the node.
    #[schema(value_type = Option<String>, example = "2026-11-22T06:17:20.123Z")]
    pub read_at: Option<pay_domain::kernel::timestamp::Timestamp>,
    /// Since when its rounds fail (`null` while they succeed).
    #[schema(value_type = Option<String>)]
    pub failing_since: Option<pay_domain::kernel::timestamp::Timestamp>,
}

impl From<pay_domain::chains::ChainHealth> for ChainReadyDto {
    fn from(h: pay_domain::chains::ChainHealth) -> Self {
        ChainReadyDto {
            chain_code: h.chain_code,
            head: h.head,
            lag: h.lag,
            read_at: h.read_at,
            failing_since: h.failing_since,
        }
    }
}
