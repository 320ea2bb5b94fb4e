//! The webhook dispatcher: claims due deliveries from the outbox, sends each signed attempt,
//! records the outcome. Store calls run on the blocking pool; sends run concurrently. Any
//! number of dispatchers (threads, `serve` instances, `pay-server worker`s) can run against one
//! PostgreSQL database: claims never overlap. A dispatcher that dies mid-attempt leaves its
//! claim to expire, and the delivery is tried again (at least once, same delivery id).
//!
//! A round's sends end inside its claim lease: the send timeout is derived from the lease
//! (`send_timeout`), so a slow receiver cannot make a live claim run out and another dispatcher
//! send the same delivery while the first is still waiting.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use pay_domain::app::Pay;
use pay_domain::webhooks::{AttemptError, AttemptOutcome, Delivery};
use pay_webhooks::HttpTransport;

/// Deliveries claimed per round.
pub const BATCH: usize = 64;
/// Attempts in flight at once per dispatcher.
pub const CONCURRENCY: usize = 32;
/// Wait between rounds when nothing was due.
pub const IDLE_POLL: Duration = Duration::from_millis(200);
/// Rounds in progress at once: while one round waits on the database (claim, record), others
/// are sending. Claims never overlap, so this is safe as several dispatchers are.
pub const PARALLEL_ROUNDS: usize = 4;
/// Sends one round waits through at most: `BATCH` attempts, `CONCURRENCY` at a time.
pub const ROUND_WAVES: u32 = BATCH.div_ceil(CONCURRENCY) as u32;

/// The whole-exchange timeout of one send under a claim `lease`: the transport's own
/// (`pay_webhooks::transport::TOTAL_TIMEOUT`, 15 s), or less when the lease is short, so that a round's
/// sends (`ROUND_WAVES` of them back to back) take at most half the lease and the claim, the
/// preparation and the record fit in the other half. The default lease of 60 s keeps 15 s.
pub fn send_timeout(lease: Duration) -> Duration {
    (lease / (2 * ROUND_WAVES)).min(pay_webhooks::transport::TOTAL_TIMEOUT)
}

/// One dispatcher.
#[derive(Clone)]
pub struct Dispatcher {
    pay: Pay,
    transport: Arc<HttpTransport>,
    lease: time::Duration,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher").finish_non_exhaustive()
    }
}

impl Dispatcher {
    /// A dispatcher claiming for the domain's `CLAIM_LEASE`.
    pub fn new(pay: Pay, transport: HttpTransport) -> Self {
        Dispatcher {
            pay,
            transport: Arc::new(transport),
            lease: pay_domain::webhooks::CLAIM_LEASE,
        }
    }

    /// Claims for `lease` instead; the transport's timeout must be `send_timeout(lease)` or
    /// shorter (`build_dispatcher` does both).
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = time::Duration::try_from(lease).unwrap_or(pay_domain::webhooks::CLAIM_LEASE);
        self
    }

    /// Claims one round, prepares every signed request in one store call, sends them
    /// concurrently, and records every outcome in one transaction; returns how many deliveries
    /// were attempted.
    pub async fn run_once(&self) -> anyhow::Result<usize> {
        let pay = self.pay.clone();
        let lease = self.lease;
        let round = tokio::task::spawn_blocking(move || {
            let claimed = pay.webhooks().claim_due_deliveries_for(BATCH, lease)?;
            let prepared = pay.webhooks().prepare_attempts(&claimed);
            Ok::<_, pay_domain::Fault>(claimed.into_iter().zip(prepared).collect::<Vec<_>>())
        })
        .await?
        .map_err(|e| anyhow::anyhow!("claiming deliveries: {e}"))?;
        let n = round.len();
        if n == 0 {
            return Ok(0);
        }
        let outcomes: Vec<(Delivery, AttemptOutcome)> = futures_util::stream::iter(round)
            .map(|(d, prepared)| async move {
                let outcome = match prepared {
                    Ok(request) => self.transport.send(&request).await,
                    Err(not) => {
                        // The delivery log shows the word; the reason is for the server log.
                        tracing::warn!(
                            delivery_id = %d.id,
                            error = not.error.as_str(),
                            reason = %not.reason,
                            "could not prepare a webhook request"
                        );
                        failed(not.error)
                    }
                };
                (d, outcome)
            })
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        let pay = self.pay.clone();
        match tokio::task::spawn_blocking(move || pay.webhooks().record_attempts(outcomes)).await? {
            Ok(recorded) if recorded < n => {
                tracing::warn!(
                    attempted = n,
                    recorded,
                    "some attempts were on stale claims"
                )
            }
            Ok(_) => {}
            // The claims expire and those deliveries are tried again.
            Err(e) => {
                tracing::warn!(error = %pay_domain::kernel::error::chain(&e), "could not record a round of attempts")
            }
        }
        Ok(n)
    }

    /// Runs rounds until nothing is due; returns how many attempts were made.
    pub async fn drain(&self) -> anyhow::Result<usize> {
        let lanes = (0..PARALLEL_ROUNDS).map(|_| async {
            let mut total = 0;
            loop {
                let n = self.run_once().await?;
                if n == 0 {
                    return Ok::<_, anyhow::Error>(total);
                }
                total += n;
            }
        });
        let mut total = 0;
        for lane in futures_util::future::join_all(lanes).await {
            total += lane?;
        }
        Ok(total)
    }

    /// Runs until the process stops.
    pub async fn run(self) {
        tracing::info!("webhook dispatcher running");
        let lanes = (0..PARALLEL_ROUNDS).map(|_| async {
            loop {
                match self.run_once().await {
                    Ok(0) => tokio::time::sleep(IDLE_POLL).await,
                    Ok(_) => {}
                    Err(e) => {
                        tracing::error!(error = %format!("{e:#}"), "webhook dispatcher round failed");
                        tokio::time::sleep(IDLE_POLL).await;
                    }
                }
            }
        });
        futures_util::future::join_all(lanes).await;
    }
}

fn failed(error: AttemptError) -> AttemptOutcome {
    AttemptOutcome {
        status: None,
        duration_ms: 0,
        error: Some(error),
        response_excerpt: None,
        retry_after: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_of_sends_takes_at_most_half_its_lease() {
        assert_eq!(ROUND_WAVES, 2);
        // The default lease keeps the transport's documented 15 s.
        assert_eq!(
            send_timeout(Duration::from_secs(60)),
            pay_webhooks::transport::TOTAL_TIMEOUT
        );
        assert_eq!(
            send_timeout(Duration::from_secs(3600)),
            pay_webhooks::transport::TOTAL_TIMEOUT
        );
        assert_eq!(
            send_timeout(Duration::from_secs(5)),
            Duration::from_millis(1250)
        );
        for secs in 2..=3600 {
            let lease = Duration::from_secs(secs);
            assert!(send_timeout(lease) * ROUND_WAVES <= lease / 2, "{secs} s");
        }
    }
}
