//! Endpoints: where deliveries go, one company's URL. Two rules keep one merchant's broken
//! receiver from hurting another's deliveries or being hammered:
//!
//! - **A share per endpoint**: a dispatcher has at most `ENDPOINT_IN_FLIGHT` sends to one
//!   endpoint in flight at once, and holds at most `ENDPOINT_HELD` of its deliveries (those
//!   sending and one wave waiting); its claims skip a full endpoint's deliveries. A receiver that
//!   hangs until the send timeout holds that share of a dispatcher, never its whole capacity.
//! - **Circuit breaker**: an endpoint whose every attempt has failed for `CircuitRule::open_after`
//!   (and at least `min_failures` times) is paused: none of its deliveries is claimed until the
//!   pause ends, and their retries are not used up meanwhile. Then one probe is let through: a
//!   2xx answer closes the circuit, a failure pauses it again for twice as long (up to
//!   `max_pause`). The pause is kept with the endpoint (`Circuit`) and logged.
//!
//! The endpoint is the company and the URL together: another company pointing its callback at
//! the same URL (and failing its signature checks) cannot pause this one's deliveries, nor use
//! up their in-flight share. Everything here runs on real time, never a company's test clock.

use std::collections::HashMap;

use time::Duration;

use crate::kernel::ids::CompanyId;
use crate::kernel::timestamp::Timestamp;

use super::delivery::AttemptOutcome;
use super::failure::AttemptError;

/// Most sends to one endpoint in flight at once, per dispatcher.
pub const ENDPOINT_IN_FLIGHT: usize = 32;
/// Most deliveries of one endpoint a dispatcher holds at once (claimed, not yet sent): its sends
/// in flight and one wave waiting, so the next send starts when one ends, without waiting for
/// a claim, and a claimed delivery waits at most one send timeout for its turn.
pub const ENDPOINT_HELD: usize = 2 * ENDPOINT_IN_FLIGHT;
/// Deliveries of an endpoint held at once while its circuit is probing, over every dispatcher.
pub const PROBE_HELD: usize = 1;

/// When a failing endpoint is paused, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CircuitRule {
    /// Failing without a single success for this long opens the circuit...
    pub open_after: Duration,
    /// ...once at least this many attempts failed.
    pub min_failures: u32,
    /// The first pause; each failed probe doubles it.
    pub first_pause: Duration,
    /// The longest pause.
    pub max_pause: Duration,
}

impl Default for CircuitRule {
    fn default() -> Self {
        CircuitRule {
            open_after: Duration::hours(1),
            min_failures: 10,
            first_pause: Duration::minutes(5),
            max_pause: Duration::hours(1),
        }
    }
}

impl CircuitRule {
    /// The pause after the `n`th opening (1-based): `first_pause`, doubled each time, at most
    /// `max_pause`.
    pub fn pause(&self, n: u32) -> Duration {
        let doublings = n.saturating_sub(1).min(16);
        (self.first_pause * 2i32.pow(doublings)).min(self.max_pause)
    }
}

/// One company's URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Endpoint {
    pub company_id: CompanyId,
    pub url: String,
}

/// What one attempt says of its endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointResult {
    pub endpoint: Endpoint,
    /// A 2xx answer.
    pub ok: bool,
}

impl EndpointResult {
    /// The attempt's verdict on the receiver: a 2xx answer is a success; any other answer, a
    /// refused target, a failed connection or handshake, or a timeout is a failure. An attempt
    /// never sent (no callback any more, a request the service could not build) says nothing
    /// of the receiver: `None`.
    pub fn of(endpoint: Endpoint, outcome: &AttemptOutcome) -> Option<EndpointResult> {
        match outcome.error {
            Some(AttemptError::NoCallback | AttemptError::Internal) => None,
            _ => Some(EndpointResult {
                endpoint,
                ok: outcome.is_success(),
            }),
        }
    }
}

/// An endpoint that failed since its last success, as stored. No row: it is healthy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Circuit {
    pub endpoint: Endpoint,
    /// The first failure since the last success.
    pub failing_since: Timestamp,
    pub last_failure_at: Timestamp,
    /// Failed attempts since the last success.
    pub failures: u32,
    /// While in the future, no delivery of the endpoint is claimed.
    pub paused_until: Option<Timestamp>,
    /// Times the circuit opened since the last success (0: never; it is only failing).
    pub pauses: u32,
}

/// Where an endpoint's circuit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CircuitState {
    /// No failure since the last success.
    Closed,
    /// Failing, not (yet) for long enough to pause.
    Failing,
    /// Paused: nothing is claimed.
    Open,
    /// The pause ended: one probe at a time until an answer decides.
    Probing,
}

impl CircuitState {
    /// How many deliveries of the endpoint a dispatcher may hold at once.
    pub fn held_cap(self) -> usize {
        match self {
            CircuitState::Closed | CircuitState::Failing => ENDPOINT_HELD,
            CircuitState::Open => 0,
            CircuitState::Probing => PROBE_HELD,
        }
    }
}

impl Circuit {
    /// The state at `now` (real time).
    pub fn state(&self, now: Timestamp) -> CircuitState {
        match self.paused_until {
            Some(until) if until > now => CircuitState::Open,
            _ if self.pauses > 0 => CircuitState::Probing,
            _ => CircuitState::Failing,
        }
    }

    /// Whether it was paused at `now` (by a result at `now`, under `rule`).
    pub fn opened_at(&self, now: Timestamp, rule: &CircuitRule) -> bool {
        self.pauses > 0 && self.paused_until == Some(now.plus(rule.pause(self.pauses)))
    }
}

/// The state of a circuit (None: closed) after one attempt's result at `now`, real time.
///
/// | before | success | failure |
/// |---|---|---|
/// | closed | closed | failing since now |
/// | failing | closed | failing; open when failing for `open_after` with `min_failures` |
/// | open | closed (an attempt sent before the pause answered) | open, the pause unchanged |
/// | probing | closed | open again, the pause doubled |
pub fn after_result(
    current: Option<Circuit>,
    result: &EndpointResult,
    now: Timestamp,
    rule: &CircuitRule,
) -> Option<Circuit> {
    if result.ok {
        return None;
    }
    let Some(mut c) = current else {
        let mut c = Circuit {
            endpoint: result.endpoint.clone(),
            failing_since: now,
            last_failure_at: now,
            failures: 1,
            paused_until: None,
            pauses: 0,
        };
        open_if_due(&mut c, now, rule);
        return Some(c);
    };
    let state = c.state(now);
    c.failures = c.failures.saturating_add(1);
    c.last_failure_at = c.last_failure_at.max(now);
    match state {
        CircuitState::Closed | CircuitState::Failing => open_if_due(&mut c, now, rule),
        CircuitState::Open => {}
        CircuitState::Probing => open(&mut c, now, rule),
    }
    Some(c)
}

fn open_if_due(c: &mut Circuit, now: Timestamp, rule: &CircuitRule) {
    if c.failures >= rule.min_failures && now >= c.failing_since.plus(rule.open_after) {
        open(c, now, rule);
    }
}

fn open(c: &mut Circuit, now: Timestamp, rule: &CircuitRule) {
    c.pauses = c.pauses.saturating_add(1);
    c.paused_until = Some(now.plus(rule.pause(c.pauses)));
}

/// The results of a round in the order they came, with the rule and the time: what the store
/// folds into the endpoints' circuits in the round's transaction.
#[derive(Debug, Clone, Copy)]
pub struct EndpointHealth<'a> {
    pub results: &'a [EndpointResult],
    pub now: Timestamp,
    pub rule: &'a CircuitRule,
}

impl EndpointHealth<'_> {
    /// Folds the results, endpoint by endpoint, over the circuits `read` returns (the stored
    /// rows); returns each touched endpoint's new state (None: delete its row), in the order
    /// the endpoints first appear.
    pub fn fold<E>(
        &self,
        mut read: impl FnMut(&Endpoint) -> Result<Option<Circuit>, E>,
    ) -> Result<Vec<(Endpoint, Option<Circuit>)>, E> {
        let mut out: Vec<(Endpoint, Option<Circuit>)> = Vec::new();
        for r in self.results {
            let i = match out.iter().position(|(e, _)| *e == r.endpoint) {
                Some(i) => i,
                None => {
                    out.push((r.endpoint.clone(), read(&r.endpoint)?));
                    out.len() - 1
                }
            };
            let current = out[i].1.take();
            out[i].1 = after_result(current, r, self.now, self.rule);
        }
        Ok(out)
    }
}

/// A claim's share per endpoint: what its circuit allows a dispatcher to hold at once minus
/// what the claiming dispatcher holds. The stores build one from those counts and their stored
/// circuits, exclude the endpoints that are `full` from the selection, and `take` the selected
/// deliveries in order.
#[derive(Debug, Clone, Default)]
pub struct ClaimBudget {
    /// Held now, per endpoint.
    in_flight: HashMap<Endpoint, usize>,
    /// Caps other than `ENDPOINT_HELD` (paused, probing).
    caps: HashMap<Endpoint, usize>,
}

impl ClaimBudget {
    /// `held`: deliveries the dispatcher holds, per endpoint; `circuits`: the stored ones.
    pub fn new(
        held: impl IntoIterator<Item = (Endpoint, usize)>,
        circuits: impl IntoIterator<Item = Circuit>,
        now: Timestamp,
    ) -> ClaimBudget {
        let mut in_flight: HashMap<Endpoint, usize> = HashMap::new();
        for (e, n) in held {
            *in_flight.entry(e).or_default() += n;
        }
        let caps = circuits
            .into_iter()
            .map(|c| {
                let cap = c.state(now).held_cap();
                (c.endpoint, cap)
            })
            .filter(|(_, cap)| *cap != ENDPOINT_HELD)
            .collect();
        ClaimBudget { in_flight, caps }
    }

    /// Endpoints whose circuit is probing: one probe at a time over every dispatcher, so the
    /// store adds what it has leased of them (`leased`) before the claim takes any.
    pub fn probing(&self) -> Vec<Endpoint> {
        let mut probing: Vec<Endpoint> = self
            .caps
            .iter()
            .filter(|(_, cap)| **cap == PROBE_HELD)
            .map(|(e, _)| e.clone())
            .collect();
        probing.sort();
        probing
    }

    /// Counts `n` deliveries of `e` leased by any dispatcher (a probing endpoint's).
    pub fn leased(&mut self, e: &Endpoint, n: usize) {
        let in_flight = self.in_flight.entry(e.clone()).or_default();
        *in_flight = (*in_flight).max(n);
    }

    fn cap(&self, e: &Endpoint) -> usize {
        self.caps.get(e).copied().unwrap_or(ENDPOINT_HELD)
    }

    /// Endpoints with no room left: a claim skips their deliveries.
    pub fn full(&self) -> Vec<Endpoint> {
        let mut full: Vec<Endpoint> = self
            .in_flight
            .keys()
            .chain(self.caps.keys())
            .filter(|e| self.in_flight.get(*e).copied().unwrap_or(0) >= self.cap(e))
            .cloned()
            .collect();
        full.sort();
        full.dedup();
        full
    }

    /// Takes one place of `e`: false when it has none left (the delivery stays for later).
    pub fn take(&mut self, e: &Endpoint) -> bool {
        let cap = self.cap(e);
        let n = self.in_flight.entry(e.clone()).or_default();
        if *n >= cap {
            return false;
        }
        *n += 1;
        true
    }
}

/// What recording a round did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoundRecorded {
    /// Per attempt, in order: recorded (false: a stale claim, skipped).
    pub recorded: Vec<bool>,
    /// Circuits this round opened (paused).
    pub opened: Vec<Circuit>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(min: i64) -> Timestamp {
        Timestamp::from_unix_millis(1_800_000_000_000)
            .unwrap()
            .plus(Duration::minutes(min))
    }

    fn endpoint() -> Endpoint {
        Endpoint {
            company_id: CompanyId(uuid::Uuid::from_u128(1)),
            url: "https://a.example/hook".into(),
        }
    }

    fn result(ok: bool) -> EndpointResult {
        EndpointResult {
            endpoint: endpoint(),
            ok,
        }
    }

    fn rule() -> CircuitRule {
        CircuitRule::default()
    }

    /// Fails once a minute from minute `from` to `to` inclusive, starting from `c`.
    fn fail_every_minute(mut c: Option<Circuit>, from: i64, to: i64) -> Option<Circuit> {
        for m in from..=to {
            c = after_result(c, &result(false), at(m), &rule());
        }
        c
    }

    #[test]
    fn closed_stays_closed_on_success_and_starts_failing_on_failure() {
        assert_eq!(after_result(None, &result(true), at(0), &rule()), None);
        let c = after_result(None, &result(false), at(0), &rule()).unwrap();
        assert_eq!(c.state(at(0)), CircuitState::Failing);
        assert_eq!((c.failures, c.pauses, c.paused_until), (1, 0, None));
        assert_eq!(c.failing_since, at(0));
    }

    #[test]
    fn failing_closes_on_success() {
        let c = fail_every_minute(None, 0, 30);
        assert_eq!(c.as_ref().unwrap().state(at(30)), CircuitState::Failing);
        assert_eq!(after_result(c, &result(true), at(31), &rule()), None);
    }

    #[test]
    fn failing_opens_only_after_an_hour_and_enough_failures() {
        // 59 minutes of failures: still failing.
        let c = fail_every_minute(None, 0, 59).unwrap();
        assert_eq!(c.state(at(59)), CircuitState::Failing);
        // The failure at 60 minutes opens it for the first pause.
        let c = after_result(Some(c), &result(false), at(60), &rule()).unwrap();
        assert_eq!(c.state(at(60)), CircuitState::Open);
        assert!(c.opened_at(at(60), &rule()));
        assert_eq!(c.pauses, 1);
        assert_eq!(c.paused_until, Some(at(65)));
        // An hour of time but too few failures: not opened.
        let mut few = after_result(None, &result(false), at(0), &rule());
        for m in [20, 40, 60, 61] {
            few = after_result(few, &result(false), at(m), &rule());
        }
        assert_eq!(few.unwrap().state(at(61)), CircuitState::Failing);
    }

    #[test]
    fn open_ignores_late_failures_and_closes_on_a_late_success() {
        let c = fail_every_minute(None, 0, 60).unwrap();
        // An attempt sent before the pause fails: the pause is unchanged.
        let later = after_result(Some(c.clone()), &result(false), at(61), &rule()).unwrap();
        assert_eq!(later.paused_until, Some(at(65)));
        assert_eq!(later.pauses, 1);
        assert!(!later.opened_at(at(61), &rule()));
        // One answers 2xx: the receiver is back.
        assert_eq!(after_result(Some(c), &result(true), at(62), &rule()), None);
    }

    #[test]
    fn probing_lets_one_through_closes_on_success_and_doubles_the_pause_on_failure() {
        let c = fail_every_minute(None, 0, 60).unwrap();
        assert_eq!(c.state(at(64)), CircuitState::Open);
        assert_eq!(c.state(at(65)), CircuitState::Probing);
        assert_eq!(CircuitState::Probing.held_cap(), 1);
        assert_eq!(CircuitState::Open.held_cap(), 0);
        assert_eq!(CircuitState::Failing.held_cap(), ENDPOINT_HELD);
        assert_eq!(CircuitState::Closed.held_cap(), ENDPOINT_HELD);
        assert_eq!(ENDPOINT_HELD, 2 * ENDPOINT_IN_FLIGHT);
        assert_eq!(
            after_result(Some(c.clone()), &result(true), at(66), &rule()),
            None
        );
        let again = after_result(Some(c), &result(false), at(66), &rule()).unwrap();
        assert_eq!(again.state(at(66)), CircuitState::Open);
        assert!(again.opened_at(at(66), &rule()));
        assert_eq!(again.pauses, 2);
        assert_eq!(again.paused_until, Some(at(76)));
    }

    #[test]
    fn pauses_double_up_to_the_longest() {
        let r = rule();
        let minutes: Vec<i64> = (1..=6).map(|n| r.pause(n).whole_minutes()).collect();
        assert_eq!(minutes, [5, 10, 20, 40, 60, 60]);
        assert_eq!(r.pause(u32::MAX), Duration::hours(1));
    }

    #[test]
    fn only_answers_and_network_failures_judge_the_receiver() {
        let outcome = |status: Option<u16>, error: Option<AttemptError>| AttemptOutcome {
            status,
            duration_ms: 1,
            error,
            response_excerpt: None,
            retry_after: None,
        };
        let verdict = |o: AttemptOutcome| EndpointResult::of(endpoint(), &o).map(|r| r.ok);
        assert_eq!(verdict(outcome(Some(204), None)), Some(true));
        assert_eq!(verdict(outcome(Some(500), None)), Some(false));
        assert_eq!(verdict(outcome(Some(401), None)), Some(false));
        assert_eq!(verdict(outcome(Some(302), None)), Some(false));
        for e in AttemptError::ALL {
            let expected = match e {
                AttemptError::NoCallback | AttemptError::Internal => None,
                _ => Some(false),
            };
            assert_eq!(verdict(outcome(None, Some(e))), expected, "{e:?}");
        }
    }

    #[test]
    fn a_claim_budget_counts_what_is_leased_and_what_the_circuit_allows() {
        let other = Endpoint {
            company_id: CompanyId(uuid::Uuid::from_u128(2)),
            url: "https://b.example/hook".into(),
        };
        let third = Endpoint {
            company_id: CompanyId(uuid::Uuid::from_u128(3)),
            url: "https://c.example/hook".into(),
        };
        let open = fail_every_minute(None, 0, 60).unwrap();
        let mut probing = open.clone();
        probing.endpoint = third.clone();
        // `endpoint()` is paused at 61; `other` has 63 held; `third` probes at 70.
        let mut b = ClaimBudget::new(
            [(other.clone(), 60), (other.clone(), 3)],
            [open.clone()],
            at(61),
        );
        assert_eq!(b.full(), vec![endpoint()]);
        assert!(!b.take(&endpoint()));
        assert!(b.take(&other));
        assert!(!b.take(&other), "64 held");
        assert_eq!(b.full(), vec![endpoint(), other.clone()]);
        let mut b = ClaimBudget::new([], [probing.clone()], at(70));
        assert_eq!(b.probing(), vec![third.clone()]);
        let mut leased = b.clone();
        leased.leased(&third, 1);
        assert_eq!(leased.full(), vec![third.clone()], "a probe is out already");
        assert!(b.full().is_empty());
        assert!(b.take(&third));
        assert!(!b.take(&third), "one probe at a time");
        assert_eq!(b.full(), vec![third]);
        // An endpoint never seen has the whole cap.
        let fresh = Endpoint {
            company_id: CompanyId(uuid::Uuid::from_u128(9)),
            url: "https://d.example/hook".into(),
        };
        let mut b = ClaimBudget::default();
        assert_eq!((0..80).filter(|_| b.take(&fresh)).count(), ENDPOINT_HELD);
    }

    #[test]
    fn a_round_folds_per_endpoint_in_order() {
        let other = Endpoint {
            company_id: CompanyId(uuid::Uuid::from_u128(2)),
            url: "https://a.example/hook".into(),
        };
        let results = vec![
            result(false),
            EndpointResult {
                endpoint: other.clone(),
                ok: false,
            },
            result(true),
            result(false),
        ];
        let health = EndpointHealth {
            results: &results,
            now: at(0),
            rule: &rule(),
        };
        let mut reads = 0;
        let folded = health
            .fold(|_| {
                reads += 1;
                Ok::<_, ()>(None)
            })
            .unwrap();
        assert_eq!(reads, 2, "each endpoint read once");
        assert_eq!(folded.len(), 2);
        assert_eq!(folded[0].0, endpoint());
        // fail, success, fail: failing with one failure since the success.
        assert_eq!(folded[0].1.as_ref().unwrap().failures, 1);
        assert_eq!(folded[1].0, other);
        assert_eq!(folded[1].1.as_ref().unwrap().failures, 1);
    }
}
