//! The webhook dispatcher: claims due deliveries from the outbox, sends each signed attempt,
//! records the outcome. Store calls run on the blocking pool; sends run concurrently. Any
//! number of dispatchers (threads, `serve` instances, `pay-server worker`s) can run against one
//! PostgreSQL database: claims never overlap. A dispatcher that dies mid-attempt leaves its
//! claim to expire, and the delivery is tried again (at least once, same delivery id).
//!
//! `run` and `drain` keep a pipeline full: the claimer tops up what the dispatcher holds (up to
//! `IN_FLIGHT` deliveries) as sends end, a busy endpoint `TOP_UP` places at a time, and
//! outcomes are recorded as they come (what finished while the last record ran goes in the
//! next transaction). Per endpoint (a company's
//! URL), at most `ENDPOINT_IN_FLIGHT` sends run at once and `ENDPOINT_HELD` deliveries are held
//! (the claim skips a full endpoint's queue): a receiver that hangs until the timeout holds its
//! own share, and other merchants' deliveries are claimed past it. An endpoint failing for an
//! hour is paused by its circuit (`pay_domain::webhooks::circuit`) and resumes by itself.
//!
//! Sends end inside their claim's lease: the send timeout is derived from the lease
//! (`send_timeout`), and a held delivery waits at most one wave of its endpoint's sends for its
//! turn (it holds twice what it sends), so a slow receiver cannot make a live claim run out and
//! another dispatcher send the same delivery while the first is still waiting.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use pay_domain::app::Pay;
use pay_domain::webhooks::{
    AttemptError, AttemptOutcome, Delivery, Endpoint, OutboundRequest, ENDPOINT_HELD,
    ENDPOINT_IN_FLIGHT,
};
use pay_webhooks::HttpTransport;
use tokio::sync::{mpsc, Notify, Semaphore};

/// Most deliveries claimed at once.
pub const BATCH: usize = 64;
/// Attempts `run_once` sends at once.
pub const CONCURRENCY: usize = 32;
/// Deliveries a dispatcher holds at once (`run`, `drain`): sending, or waiting for their
/// endpoint's turn. Each endpoint has at most `ENDPOINT_IN_FLIGHT` (32) sends in flight and
/// `ENDPOINT_HELD` (64) held, so endpoints that hang take a quarter each at most.
pub const IN_FLIGHT: usize = 256;
/// Most outcomes recorded in one transaction.
pub const RECORD_BATCH: usize = 256;
/// How long, after a claim found no endpoint without a send in flight that had work, the
/// claimer tops up the busy endpoints' waiting waves first (new endpoints' work waits that much
/// longer at most). Each further such claim that finds nothing doubles the pause, up to
/// `SPREAD_PAUSE_MAX`; one that finds work sets it back. (Such a claim skips the busy
/// endpoints' queues, which costs a read of each of their due deliveries.)
pub const SPREAD_PAUSE: Duration = Duration::from_millis(20);
/// The longest spread pause: what new endpoints' work waits at most behind busy ones.
pub const SPREAD_PAUSE_MAX: Duration = Duration::from_millis(320);
/// A busy endpoint's waiting wave is topped up once this many of its places are free: claims
/// come in chunks, not one place each time a send ends (a claim is a transaction).
pub const TOP_UP: usize = 16;
/// How long the recorder waits after an outcome for others to share its transaction.
pub const LINGER: Duration = Duration::from_millis(2);
/// Wait between claims when nothing was due.
pub const IDLE_POLL: Duration = Duration::from_millis(200);
/// Sends a claimed delivery waits through at most, its own included: in `run_once`, `BATCH`
/// attempts `CONCURRENCY` at a time; in the pipeline, `ENDPOINT_HELD` held per endpoint,
/// `ENDPOINT_IN_FLIGHT` sent at a time (a test checks both).
pub const ROUND_WAVES: u32 = BATCH.div_ceil(CONCURRENCY) as u32;

/// The whole-exchange timeout of one send under a claim `lease`: the transport's own
/// (`pay_webhooks::transport::TOTAL_TIMEOUT`, 15 s), or less when the lease is short, so that
/// `ROUND_WAVES` sends back to back take at most half the lease and the claim, the preparation
/// and the record fit in the other half. The default lease of 60 s keeps 15 s.
pub fn send_timeout(lease: Duration) -> Duration {
    (lease / (2 * ROUND_WAVES)).min(pay_webhooks::transport::TOTAL_TIMEOUT)
}

/// One dispatcher.
#[derive(Clone)]
pub struct Dispatcher {
    pay: Pay,
    transport: Arc<HttpTransport>,
    lease: time::Duration,
    counters: pay_http::edge::metrics::Counters,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher").finish_non_exhaustive()
    }
}

/// An attempt made, on its way to the record.
type Made = (Delivery, AttemptOutcome);

impl Dispatcher {
    /// A dispatcher claiming for the domain's `CLAIM_LEASE`.
    pub fn new(pay: Pay, transport: HttpTransport) -> Self {
        Dispatcher {
            pay,
            transport: Arc::new(transport),
            lease: pay_domain::webhooks::CLAIM_LEASE,
            counters: Default::default(),
        }
    }

    /// Counts its attempts in `counters` (those `GET /metrics` shows).
    pub fn with_counters(mut self, counters: pay_http::edge::metrics::Counters) -> Self {
        self.counters = counters;
        self
    }

    /// Claims for `lease` instead; the transport's timeout must be `send_timeout(lease)` or
    /// shorter (`build_dispatcher` does both).
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = time::Duration::try_from(lease).unwrap_or(pay_domain::webhooks::CLAIM_LEASE);
        self
    }

    /// Claims up to `limit` deliveries beside those `held` per endpoint, and prepares each
    /// signed request, in one blocking call.
    async fn claim(
        &self,
        limit: usize,
        held: Vec<(Endpoint, usize)>,
    ) -> anyhow::Result<Vec<(Delivery, Result<OutboundRequest, AttemptError>)>> {
        let pay = self.pay.clone();
        let lease = self.lease;
        tokio::task::spawn_blocking(move || {
            let claimed = pay
                .webhooks()
                .claim_due_deliveries_beside(limit, lease, &held)?;
            let prepared = pay.webhooks().prepare_attempts(&claimed);
            Ok::<_, pay_domain::Fault>(
                claimed
                    .into_iter()
                    .zip(prepared)
                    // The store out of service (a database restarting): neither sent nor
                    // recorded, the claim runs out and the delivery is claimed again then,
                    // its attempts untouched (not a failure of the receiver's).
                    .filter(|(d, p)| match p {
                        Err(not) if not.transient => {
                            tracing::warn!(
                                delivery_id = %d.id,
                                reason = %not.reason,
                                "could not prepare a webhook request, the database unavailable; tried again after the claim runs out"
                            );
                            false
                        }
                        _ => true,
                    })
                    .map(|(mut d, p)| {
                        let p = match p {
                            Ok(request) => {
                                // The attempt goes where the owner's callback is now: its
                                // endpoint is that URL's.
                                d.url.clone_from(&request.url);
                                Ok(request)
                            }
                            Err(not) => {
                                // The delivery log shows the word; the reason is for the server log.
                                tracing::warn!(
                                    delivery_id = %d.id,
                                    error = not.error.as_str(),
                                    reason = %not.reason,
                                    "could not prepare a webhook request"
                                );
                                Err(not.error)
                            }
                        };
                        (d, p)
                    })
                    .collect(),
            )
        })
        .await?
        .map_err(|e| anyhow::anyhow!("claiming deliveries: {e}"))
    }

    /// Sends one prepared attempt.
    async fn send(&self, prepared: Result<OutboundRequest, AttemptError>) -> AttemptOutcome {
        match prepared {
            Ok(request) => self.transport.send(&request).await,
            Err(error) => failed(error),
        }
    }

    /// Records attempts in one transaction; logs stale claims and opened circuits.
    async fn record(&self, made: Vec<Made>) -> anyhow::Result<()> {
        let n = made.len();
        for (d, outcome) in &made {
            self.counters.delivery_attempt(outcome, d.attempts);
        }
        let pay = self.pay.clone();
        match tokio::task::spawn_blocking(move || pay.webhooks().record_attempts(made)).await? {
            Ok(round) => {
                if round.recorded < n {
                    tracing::warn!(
                        attempted = n,
                        recorded = round.recorded,
                        "some attempts were on stale claims"
                    );
                }
                for c in round.opened {
                    // The URL may carry a token in its path or query: the host only.
                    let host = url::Url::parse(&c.endpoint.url)
                        .ok()
                        .and_then(|u| u.host_str().map(str::to_owned))
                        .unwrap_or_default();
                    tracing::warn!(
                        company_id = %c.endpoint.company_id,
                        host = %host,
                        failures = c.failures,
                        failing_since = %c.failing_since,
                        paused_until = %c.paused_until.map(|t| t.to_string()).unwrap_or_default(),
                        pauses = c.pauses,
                        "webhook endpoint failing: deliveries paused"
                    );
                }
            }
            // The claims expire and those deliveries are tried again.
            Err(e) => {
                tracing::warn!(error = %pay_domain::kernel::error::chain(&e), "could not record attempts")
            }
        }
        Ok(())
    }

    /// Claims one round, prepares every signed request in one store call, sends them
    /// `CONCURRENCY` at a time, and records every outcome in one transaction; returns how many
    /// deliveries were attempted. (Tests step with it; `run` and `drain` keep a pipeline.)
    pub async fn run_once(&self) -> anyhow::Result<usize> {
        let round = self.claim(BATCH, Vec::new()).await?;
        let n = round.len();
        if n == 0 {
            return Ok(0);
        }
        let outcomes: Vec<Made> = futures_util::stream::iter(round)
            .map(|(d, prepared)| async move { (d, self.send(prepared).await) })
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        self.record(outcomes).await?;
        Ok(n)
    }

    /// Runs until nothing is due (no claim finds anything, twice, `IDLE_POLL` apart, with
    /// nothing of its own in flight) and every attempt made is recorded; returns how many
    /// attempts were made.
    pub async fn drain(&self) -> anyhow::Result<usize> {
        self.pipeline(true).await
    }

    /// Runs until the process stops.
    pub async fn run(self) {
        tracing::info!("webhook dispatcher running");
        loop {
            if let Err(e) = self.pipeline(false).await {
                tracing::error!(error = %format!("{e:#}"), "webhook dispatcher failed");
                tokio::time::sleep(IDLE_POLL).await;
            }
        }
    }

    /// The pipeline: one claimer keeping the dispatcher's hold full, each delivery its own task
    /// (waiting for its endpoint's turn, then sending), one recorder taking whatever finished.
    /// A delivery stops counting against the hold when its send ends; it stays leased until its
    /// outcome is recorded, so no claim takes it meanwhile. With `until_idle`, ends when two
    /// claims in a row find nothing and every attempt made is recorded.
    async fn pipeline(&self, until_idle: bool) -> anyhow::Result<usize> {
        let holding = Arc::new(Holding::default());
        let unrecorded = Arc::new(AtomicUsize::new(0));
        let (tx, mut rx) = mpsc::unbounded_channel::<Made>();
        let recorder = {
            let this = self.clone();
            let unrecorded = unrecorded.clone();
            let holding = holding.clone();
            tokio::spawn(async move {
                while let Some(first) = rx.recv().await {
                    // What finishes within `LINGER` of the first goes in the same transaction:
                    // sends claimed together end together, and one commit for many is what
                    // keeps PostgreSQL's per-transaction cost off each delivery.
                    let mut made = vec![first];
                    let until = tokio::time::Instant::now() + LINGER;
                    while made.len() < RECORD_BATCH {
                        match tokio::time::timeout_at(until, rx.recv()).await {
                            Ok(Some(m)) => made.push(m),
                            Ok(None) | Err(_) => break,
                        }
                    }
                    let n = made.len();
                    if let Err(e) = this.record(made).await {
                        tracing::warn!(error = %format!("{e:#}"), "could not record attempts");
                    }
                    unrecorded.fetch_sub(n, Ordering::AcqRel);
                    holding.changed.notify_one();
                }
            })
        };
        let mut total = 0;
        let mut idle_claims = 0;
        let mut nothing_else_since: Option<std::time::Instant> = None;
        let mut spread_pause = SPREAD_PAUSE;
        let outcome = loop {
            let (free, held) = holding.snapshot();
            if free == 0 {
                holding.changed.notified().await;
                continue;
            }
            // First as if every endpoint with a send in flight held its whole share, so the
            // places go to sends at as many endpoints as have work; only when none has, to the
            // waiting wave of the busy ones.
            // (When that found nothing a moment ago, the busy ones go first for the spread
            // pause: a claim is a transaction, and one finding nothing costs as much as a full
            // one, more when it skips a long queue.)
            let mut claimed = Vec::new();
            let spread_found_nothing =
                nothing_else_since.is_some_and(|t| t.elapsed() < spread_pause);
            if held.is_empty() || !spread_found_nothing {
                let spread: Vec<(Endpoint, usize)> = held
                    .iter()
                    .map(|(e, n)| (e.clone(), n + (ENDPOINT_HELD - ENDPOINT_IN_FLIGHT)))
                    .collect();
                claimed = match self.claim(free.min(BATCH), spread).await {
                    Ok(c) => c,
                    Err(e) => break Err(e),
                };
                if claimed.is_empty() {
                    if nothing_else_since.is_some() {
                        spread_pause = (spread_pause * 2).min(SPREAD_PAUSE_MAX);
                    }
                    nothing_else_since = Some(std::time::Instant::now());
                } else {
                    nothing_else_since = None;
                    spread_pause = SPREAD_PAUSE;
                }
            }
            // The busy endpoints' waiting waves, each once `TOP_UP` of its places are free.
            let top_up = topping_up(&held);
            if claimed.is_empty() && top_up.iter().any(|(_, n)| *n < ENDPOINT_HELD) {
                claimed = match self.claim(free.min(BATCH), top_up).await {
                    Ok(c) => c,
                    Err(e) => break Err(e),
                };
            }
            if claimed.is_empty() {
                let idle = unrecorded.load(Ordering::Acquire) == 0;
                // Nothing claimable twice in a row with nothing of ours unrecorded: done.
                if until_idle && idle && idle_claims > 0 {
                    break Ok(total);
                }
                idle_claims += usize::from(idle);
                // A send ending may make room at a full endpoint; else poll, or look at the
                // idle endpoints again when the spread pause ends.
                let wait = if until_idle && idle {
                    LINGER
                } else {
                    match nothing_else_since {
                        Some(t) if !held.is_empty() => spread_pause
                            .saturating_sub(t.elapsed())
                            .clamp(LINGER, IDLE_POLL),
                        _ => IDLE_POLL,
                    }
                };
                let _ = tokio::time::timeout(wait, holding.changed.notified()).await;
                continue;
            }
            idle_claims = 0;
            total += claimed.len();
            unrecorded.fetch_add(claimed.len(), Ordering::AcqRel);
            for (d, prepared) in claimed {
                let (endpoint, turns) = holding.hold(&d);
                let this = self.clone();
                let tx = tx.clone();
                let holding = holding.clone();
                tokio::spawn(async move {
                    // At most `ENDPOINT_IN_FLIGHT` sends per endpoint; the semaphore is never
                    // closed.
                    let turn = turns.acquire_owned().await;
                    let outcome = this.send(prepared).await;
                    drop(turn);
                    holding.release(&endpoint);
                    // The recorder lives as long as a sender does.
                    let _ = tx.send((d, outcome));
                });
            }
        };
        drop(tx);
        // Every send in flight still ends and is recorded (a claim error stops the claiming
        // only).
        recorder.await?;
        outcome
    }
}

/// What a dispatcher holds per endpoint: deliveries claimed and not yet sent (sending, or
/// waiting for a turn), and the endpoint's turns (`ENDPOINT_IN_FLIGHT` sends at once).
#[derive(Default)]
struct Holding {
    by_endpoint: Mutex<HashMap<Endpoint, Held>>,
    /// A send ended or outcomes were recorded.
    changed: Notify,
}

struct Held {
    count: usize,
    turns: Arc<Semaphore>,
}

impl Holding {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Endpoint, Held>> {
        self.by_endpoint.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Free places in the hold, and what is held per endpoint.
    fn snapshot(&self) -> (usize, Vec<(Endpoint, usize)>) {
        let map = self.lock();
        let total: usize = map.values().map(|h| h.count).sum();
        let held = map.iter().map(|(e, h)| (e.clone(), h.count)).collect();
        (IN_FLIGHT.saturating_sub(total), held)
    }

    /// Holds `d` under its endpoint (its URL is where the attempt goes, which the store holds
    /// too once the claim pointed it there); returns the endpoint and its turns.
    fn hold(&self, d: &Delivery) -> (Endpoint, Arc<Semaphore>) {
        let endpoint = Endpoint {
            company_id: d.company_id,
            url: d.url.clone(),
        };
        let mut map = self.lock();
        let held = map.entry(endpoint.clone()).or_insert_with(|| Held {
            count: 0,
            turns: Arc::new(Semaphore::new(ENDPOINT_IN_FLIGHT)),
        });
        held.count += 1;
        (endpoint, held.turns.clone())
    }

    fn release(&self, endpoint: &Endpoint) {
        let mut map = self.lock();
        if let Some(held) = map.get_mut(endpoint) {
            held.count = held.count.saturating_sub(1);
            if held.count == 0 {
                map.remove(endpoint);
            }
        }
        drop(map);
        self.changed.notify_one();
    }
}

/// What the top-up claim is told is held: an endpoint with fewer than `TOP_UP` free places
/// counts as full.
fn topping_up(held: &[(Endpoint, usize)]) -> Vec<(Endpoint, usize)> {
    held.iter()
        .map(|(e, n)| {
            let n = if ENDPOINT_HELD.saturating_sub(*n) < TOP_UP {
                ENDPOINT_HELD
            } else {
                *n
            };
            (e.clone(), n)
        })
        .collect()
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
    fn a_busy_endpoint_is_topped_up_in_chunks() {
        let e = |url: &str| Endpoint {
            company_id: pay_domain::kernel::ids::CompanyId(uuid::Uuid::from_u128(1)),
            url: url.to_owned(),
        };
        let (a, b, c) = (
            e("https://a.test/"),
            e("https://b.test/"),
            e("https://c.test/"),
        );
        let held = vec![
            (a.clone(), ENDPOINT_HELD - TOP_UP),
            (b.clone(), ENDPOINT_HELD - TOP_UP + 1),
            (c.clone(), ENDPOINT_HELD),
        ];
        assert_eq!(
            topping_up(&held),
            vec![
                (a, ENDPOINT_HELD - TOP_UP),
                (b, ENDPOINT_HELD),
                (c, ENDPOINT_HELD)
            ]
        );
    }

    #[test]
    fn a_round_of_sends_takes_at_most_half_its_lease() {
        assert_eq!(ROUND_WAVES, 2);
        assert!(
            pay_domain::webhooks::ENDPOINT_HELD.div_ceil(ENDPOINT_IN_FLIGHT) as u32 <= ROUND_WAVES
        );
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
