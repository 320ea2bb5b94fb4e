//! Checkout use cases over the fakes: starting, accepting and cancelling sessions, what the
//! processor reports (deposits, settlement within and beyond the tolerance, late and over
//! payments, failure, refunds), the merchant's resolution, expiry by the clock, pausing a link
//! mid-session, one-time links, and the events each move writes into the outbox.

use serde_json::Value;

use super::*;
use pay_domain::checkout::machine::SessionStatus;
use pay_domain::checkout::{CheckoutStore, PaymentSession, PaymentUnderWay};
use pay_domain::kernel::amount::Decimal;
use pay_domain::kernel::ids::{LinkUid, PaymentSessionId};
use pay_domain::links::{Branding, CreateAnonymousLinkInput, SettlementPriority};
use pay_domain::sandbox::clock::MAX_ADVANCE_SECS as MAX_CLOCK_ADVANCE_SECS;
use pay_domain::webhooks::EventKind;

const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const HOOK: &str = "https://hooks.acme.example/pay";

// ----- helpers -----

struct Shop {
    key: Principal,
    company: CompanyId,
}

impl World {
    fn shop(&self, name: &str, email: &str) -> Shop {
        let b = self.tenant(name, email);
        let (_, owner) = self.sign_in(email);
        self.pay
            .webhooks()
            .put_company_callback(&owner, b.company_id, CallbackKind::CompanyPayment, HOOK)
            .unwrap();
        Shop {
            key: self.key_principal(&b),
            company: b.company_id,
        }
    }

    fn link_for(&self, shop: &Shop, skip_review: Option<bool>) -> PaymentLink {
        self.pay
            .links()
            .create_link(
                &shop.key,
                CreateLinkInput {
                    amount: "10".into(),
                    skip_quote_acceptance: skip_review,
                    ..Default::default()
                },
            )
            .unwrap()
    }

    /// The events (short names) queued for a link, in sequence order, with their sequences.
    fn events_of(&self, link: &PaymentLink) -> Vec<(u64, String)> {
        let mut out: Vec<(u64, String)> = self
            .store
            .stored_deliveries()
            .iter()
            .filter(|d| d.payment_link_uid.as_deref() == Some(link.uid.as_str()))
            .map(|d| {
                let body: Value = serde_json::from_str(&d.body).unwrap();
                (
                    body["sequence"].as_u64().unwrap(),
                    d.event.short_name().to_owned(),
                )
            })
            .collect();
        out.sort();
        out
    }

    fn event_names(&self, link: &PaymentLink) -> Vec<String> {
        self.events_of(link).into_iter().map(|(_, n)| n).collect()
    }

    fn timeline_names(&self, link: &PaymentLink) -> Vec<String> {
        self.store
            .timeline(link.id)
            .unwrap()
            .into_iter()
            .map(|e| e.kind.as_str().to_owned())
            .collect()
    }

    fn started(&self, link: &PaymentLink) -> PaymentSession {
        self.pay
            .checkout()
            .start_session(&link.uid, BASE_USDC, "198.51.100.9")
            .unwrap()
    }

    fn deposit(&self, shop: &Shop, link: &PaymentLink, amount: &str) -> PaymentSession {
        self.pay
            .sandbox()
            .sandbox_event(
                Some(&shop.key),
                &link.uid,
                SandboxEvent::Deposit {
                    amount: d(amount),
                    hold: false,
                },
                None,
                None,
            )
            .unwrap()
    }
}

fn d(s: &str) -> Decimal {
    Decimal::parse(s).unwrap()
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn set_tolerance(w: &World, shop: &Shop, percent: Option<&str>, fixed: Option<&str>) {
    let mut t = w.store.write();
    let settings = &mut t
        .companies
        .iter_mut()
        .find(|(c, _)| c.id == shop.company)
        .unwrap()
        .1;
    settings.underpayment_percent_enabled = percent.is_some();
    settings.underpayment_percent_threshold = d(percent.unwrap_or("0"));
    settings.underpayment_fixed_enabled = fixed.is_some();
    settings.underpayment_fixed_threshold = d(fixed.unwrap_or("0"));
}

// ----- the happy path -----

#[test]
fn a_link_stored_with_a_leading_zero_before_the_rule_still_quotes() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w.link_for(&shop, Some(false));
    assert_eq!(link.payload.amount.as_str(), "10");
    // Written by a build that took "010" as input: the link keeps it and still quotes.
    w.store
        .write()
        .links
        .iter_mut()
        .find(|l| l.id == link.id)
        .unwrap()
        .payload
        .amount = pay_domain::kernel::amount::Amount::parse_stored("010", 6).unwrap();
    let quote = w
        .pay
        .checkout()
        .start_session(&link.uid, ETH, "198.51.100.9")
        .unwrap();
    assert_eq!(quote.invoice_amount.as_str(), "010");
    assert_eq!(quote.required_sell_amount.to_string(), "0.005");
    assert_eq!(quote.expected_buy_amount.to_string(), "9.9");
}

#[test]
fn a_payer_reviews_a_quote_accepts_it_and_pays() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w.link_for(&shop, Some(false));
    let view = w.pay.checkout().checkout_view(&link.uid).unwrap();
    assert_eq!(view.state, LinkState::Active);
    assert!(view.review_required);
    assert!(view.pay_assets.iter().any(|a| a.asset_identifier == ETH));

    let quote = w
        .pay
        .checkout()
        .start_session(&link.uid, ETH, "198.51.100.9")
        .unwrap();
    assert_eq!(quote.status, SessionStatus::Quote);
    assert_eq!(quote.previous_status, None);
    // 10 USDC at 2000 USDC per ETH, the merchant pays the 1 % fee: the payer sends 0.005 ETH.
    assert_eq!(quote.required_sell_amount.to_string(), "0.005");
    assert_eq!(quote.expected_buy_amount.to_string(), "9.9");
    assert_eq!(quote.invoice_asset, BASE_USDC);
    assert_eq!(quote.invoice_amount.as_str(), "10");
    assert_eq!(
        quote.expires_at,
        w.now().plus(pay_domain::checkout::quote::QUOTE_TTL)
    );
    assert_eq!(
        quote.destination_address,
        format!("wallet-{}-base", shop.company)
    );
    assert_eq!(quote.deposit_address, None);
    assert!(w.event_names(&link).is_empty(), "quotes are internal");
    assert_eq!(w.timeline_names(&link), strs(&["quote_created"]));

    let pending = w
        .pay
        .checkout()
        .accept_session(&link.uid, quote.id)
        .unwrap();
    assert_eq!(pending.status, SessionStatus::Pending);
    assert_eq!(pending.previous_status, Some(SessionStatus::Quote));
    assert_eq!(pending.deposit_address, Some(format!("dep-{}", quote.id)));
    assert_eq!(pending.source_chain.as_deref(), Some("ethereum"));
    assert_eq!(
        w.events_of(&link),
        vec![(1, "channel_created".into()), (2, "status_changed".into())]
    );

    let done = w.deposit(&shop, &link, "0.005");
    assert_eq!(done.status, SessionStatus::Complete);
    assert_eq!(done.previous_status, Some(SessionStatus::Processing));
    assert_eq!(done.settlement.to_json()["receivedAmount"], "0.005");
    assert_eq!(
        w.event_names(&link),
        strs(&[
            "channel_created",
            "status_changed",
            "status_changed",
            "settlement_updated",
            "status_changed"
        ])
    );
    assert_eq!(
        w.timeline_names(&link),
        strs(&[
            "quote_created",
            "channel_created",
            "status_changed",
            "status_changed",
            "settlement_updated",
            "status_changed"
        ])
    );
    // The last status_changed carries the session as it ended.
    let last = w
        .store
        .stored_deliveries()
        .into_iter()
        .filter(|d| {
            d.event == EventKind::Payment(pay_domain::webhooks::PaymentEvent::StatusChanged)
        })
        .max_by_key(|d| {
            serde_json::from_str::<Value>(&d.body).unwrap()["sequence"]
                .as_u64()
                .unwrap()
        })
        .unwrap();
    let body: Value = serde_json::from_str(&last.body).unwrap();
    assert_eq!(body["session"]["status"], "complete");
    assert_eq!(body["session"]["previousStatus"], "processing");
    assert_eq!(body["type"], "pay.payment.status_changed");

    let detail = w.pay.checkout().link_detail(&shop.key, &link.uid).unwrap();
    assert_eq!(
        detail.latest_session.unwrap().status,
        SessionStatus::Complete
    );
    assert_eq!(detail.timeline.len(), 6);
}

#[test]
fn skipping_review_opens_the_channel_at_once() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w.link_for(&shop, Some(true));
    assert!(
        !w.pay
            .checkout()
            .checkout_view(&link.uid)
            .unwrap()
            .review_required
    );
    let s = w.started(&link);
    assert_eq!(s.status, SessionStatus::Pending);
    assert!(s.deposit_address.is_some());
    assert_eq!(
        w.event_names(&link),
        strs(&["channel_created", "status_changed"])
    );
}

#[test]
fn an_unknown_pay_asset_and_an_unknown_session_are_refused() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w.link_for(&shop, None);
    assert_eq!(
        field_of(w.pay.checkout().start_session(
            &link.uid,
            "eip155:1/erc20:0xnope",
            "198.51.100.9"
        )),
        "payAsset"
    );
    let unknown = PaymentSessionId(uuid::Uuid::from_u128(7));
    assert!(matches!(
        w.pay.checkout().checkout_session(&link.uid, unknown),
        Err(CheckoutError::NotFound(_))
    ));
    assert!(matches!(
        w.pay
            .checkout()
            .checkout_view(&LinkUid::parse("NoLinkHere123456789012").unwrap()),
        Err(CheckoutError::NotFound(_))
    ));
    // A session of another link is not found through this one.
    let other = w.link_for(&shop, None);
    let s = w.started(&other);
    assert!(matches!(
        w.pay.checkout().checkout_session(&link.uid, s.id),
        Err(CheckoutError::NotFound(_))
    ));
}

#[test]
fn a_missing_merchant_wallet_blocks_the_start_with_an_event() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w.link_for(&shop, None);
    w.processor.no_wallet.lock().unwrap().push(BASE_USDC.into());
    assert!(matches!(
        w.pay
            .checkout()
            .start_session(&link.uid, ETH, "198.51.100.9"),
        Err(CheckoutError::StartBlocked(_))
    ));
    assert_eq!(
        w.event_names(&link),
        strs(&["start_blocked_missing_company_wallet"])
    );
    assert_eq!(
        w.timeline_names(&link),
        strs(&["start_blocked_missing_company_wallet"])
    );
    assert!(w.store.latest_session(link.id).unwrap().is_none());
    // Refused again within the hour: no second event; an hour later, one more.
    let start = || {
        w.pay
            .checkout()
            .start_session(&link.uid, ETH, "198.51.100.9")
    };
    assert!(matches!(start(), Err(CheckoutError::StartBlocked(_))));
    assert_eq!(w.event_names(&link).len(), 1);
    w.advance(Duration::hours(1) + Duration::milliseconds(1));
    assert!(matches!(start(), Err(CheckoutError::StartBlocked(_))));
    assert_eq!(w.event_names(&link).len(), 2);
}

// ----- settlement and the tolerance -----

#[test]
fn a_short_deposit_beyond_the_tolerance_is_underpaid_then_topped_up() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    set_tolerance(&w, &shop, Some("1"), None);
    let link = w.link_for(&shop, Some(true));
    w.started(&link);
    let s = w.deposit(&shop, &link, "9.8");
    assert_eq!(s.status, SessionStatus::Underpaid);
    assert_eq!(s.settlement.to_json()["shortBy"], "0.2");
    let names = w.event_names(&link);
    assert_eq!(
        names[2..].to_vec(),
        strs(&[
            "status_changed",
            "underpayment_difference_requested",
            "status_changed"
        ])
    );
    let s = w.deposit(&shop, &link, "0.2");
    assert_eq!(s.status, SessionStatus::Complete);
    assert_eq!(s.settlement.to_json()["receivedAmount"], "10");
    assert!(s.settlement.to_json().get("shortBy").is_none());
}

#[test]
fn the_tolerance_holds_at_its_edges() {
    // 10 required; 1 % percent tolerance = 0.1; fixed 0.25.
    for (percent, fixed, received, ok) in [
        (Some("1"), None, "9.9", true),
        (Some("1"), None, "9.89", false),
        (None, Some("0.25"), "9.75", true),
        (None, Some("0.25"), "9.74", false),
        (Some("1"), Some("0.25"), "9.75", true),
        (None, None, "9.99", false),
        (None, None, "10", true),
    ] {
        let w = world();
        let shop = w.shop("Acme", "owner@acme.example");
        set_tolerance(&w, &shop, percent, fixed);
        let link = w.link_for(&shop, Some(true));
        w.started(&link);
        let s = w.deposit(&shop, &link, received);
        let want = if ok {
            SessionStatus::Complete
        } else {
            SessionStatus::Underpaid
        };
        assert_eq!(s.status, want, "{percent:?} {fixed:?} {received}");
        if ok && received != "10" {
            assert!(s.settlement.to_json().contains_key("shortWithinTolerance"));
        }
    }
}

#[test]
fn an_overpayment_completes_and_is_recorded() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w.link_for(&shop, Some(true));
    w.started(&link);
    let s = w.deposit(&shop, &link, "12.5");
    assert_eq!(s.status, SessionStatus::Complete);
    assert_eq!(s.settlement.to_json()["overpaidBy"], "2.5");
}

#[test]
fn a_processor_event_is_applied_once() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w.link_for(&shop, Some(true));
    w.started(&link);
    let ev = || {
        w.pay.sandbox().sandbox_event(
            Some(&shop.key),
            &link.uid,
            SandboxEvent::Deposit {
                amount: d("4"),
                hold: true,
            },
            Some("evt-1"),
            None,
        )
    };
    let first = ev().unwrap();
    assert_eq!(first.status, SessionStatus::Processing);
    let events = w.events_of(&link);
    let again = ev().unwrap();
    assert_eq!(again, first, "the replay changes nothing");
    assert_eq!(w.events_of(&link), events);
    assert_eq!(again.settlement.to_json()["receivedAmount"], "4");
    // The held deposit settles on `settle`: 4 of 10 is underpaid.
    let s = w
        .pay
        .sandbox()
        .sandbox_event(
            Some(&shop.key),
            &link.uid,
            SandboxEvent::Settle,
            Some("evt-2"),
            None,
        )
        .unwrap();
    assert_eq!(s.status, SessionStatus::Underpaid);
}

#[test]
fn a_late_deposit_on_an_expired_session_is_recorded() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w.link_for(&shop, Some(true));
    w.started(&link);
    w.advance(pay_domain::checkout::DEPOSIT_WINDOW);
    assert_eq!(w.pay.checkout().run_due_work(10).unwrap().moved, 1);
    let s = w.deposit(&shop, &link, "10");
    assert_eq!(s.status, SessionStatus::Expired);
    assert_eq!(s.settlement.to_json()["late"], true);
    assert_eq!(s.settlement.to_json()["lateAmount"], "10");
    assert_eq!(
        w.event_names(&link).last().map(String::as_str),
        Some("settlement_updated")
    );
}

#[test]
fn fail_and_cancel_end_sessions() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w.link_for(&shop, Some(true));
    w.started(&link);
    let s = w
        .pay
        .sandbox()
        .sandbox_event(Some(&shop.key), &link.uid, SandboxEvent::Fail, None, None)
        .unwrap();
    assert_eq!(s.status, SessionStatus::Failed);
    assert!(s.error_message.is_some());

    let link = w.link_for(&shop, Some(false));
    let s = w.started(&link);
    let s = w.pay.checkout().cancel_session(&link.uid, s.id).unwrap();
    assert_eq!(s.status, SessionStatus::Cancelled);
    assert_eq!(
        w.event_names(&link),
        strs(&["payment_cancelled_by_payer", "status_changed"])
    );
    // A finished session takes no more moves.
    assert!(matches!(
        w.pay.checkout().accept_session(&link.uid, s.id),
        Err(CheckoutError::Transition(_))
    ));
}

// ----- refunds and the merchant's resolution -----

#[test]
fn an_underpayment_is_refunded_to_the_payers_address() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w.link_for(&shop, Some(true));
    let s = w.started(&link);
    w.deposit(&shop, &link, "5");
    let r = w
        .pay
        .checkout()
        .resolve_underpayment(&shop.key, &link.uid, Resolution::Refund)
        .unwrap();
    assert_eq!(r.status, SessionStatus::RefundPending);
    // Refunding needs the payer's address first.
    assert!(w
        .pay
        .sandbox()
        .sandbox_event(Some(&shop.key), &link.uid, SandboxEvent::Refund, None, None)
        .is_err());
    assert_eq!(
        field_of(
            w.pay
                .checkout()
                .submit_refund_address(&link.uid, s.id, "not an address!")
        ),
        "address"
    );
    let r = w
        .pay
        .checkout()
        .submit_refund_address(&link.uid, s.id, PAYER)
        .unwrap();
    assert_eq!(r.status, SessionStatus::RefundPending);
    assert_eq!(r.settlement.to_json()["refundAddress"], PAYER);
    let r = w
        .pay
        .sandbox()
        .sandbox_event(Some(&shop.key), &link.uid, SandboxEvent::Refund, None, None)
        .unwrap();
    assert_eq!(r.status, SessionStatus::Refunded);
    let names = w.event_names(&link);
    for want in [
        "refund_address_requested",
        "refund_address_received",
        "underpayment_difference_requested",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
}

/// A checksummed EVM address (EIP-55's example) and another one.
const PAYER: &str = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
const ATTACKER: &str = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359";

/// A session paid short with `asset` whose refund the merchant decided.
fn refund_pending(w: &World, shop: &Shop, link: &PaymentLink, asset: &str) -> PaymentSession {
    let s = w
        .pay
        .checkout()
        .start_session(&link.uid, asset, "198.51.100.9")
        .unwrap();
    w.deposit(shop, link, "1");
    let r = w
        .pay
        .checkout()
        .resolve_underpayment(&shop.key, &link.uid, Resolution::Refund)
        .unwrap();
    assert_eq!(r.status, SessionStatus::RefundPending);
    s
}

fn received_count(w: &World, link: &PaymentLink) -> usize {
    w.event_names(link)
        .iter()
        .filter(|n| *n == "refund_address_received")
        .count()
}

#[test]
fn the_first_refund_address_wins() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w.link_for(&shop, Some(true));
    let s = refund_pending(&w, &shop, &link, BASE_USDC);
    let id = s.id;
    let first = w
        .pay
        .checkout()
        .submit_refund_address(&link.uid, id, PAYER)
        .unwrap();
    assert_eq!(first.settlement.to_json()["refundAddress"], PAYER);
    let timeline = w.timeline_names(&link).len();
    // Another address, the same one again, and a malformed one: all refused as already set.
    for again in [ATTACKER, PAYER, "not an address!"] {
        assert_eq!(
            w.pay.checkout().submit_refund_address(&link.uid, id, again),
            Err(RefundAddressAlreadySet.into()),
            "{again}"
        );
    }
    let now = w.pay.checkout().checkout_session(&link.uid, id).unwrap();
    assert_eq!(now.settlement.to_json()["refundAddress"], PAYER);
    assert_eq!(now.version, first.version, "nothing was written");
    assert_eq!(received_count(&w, &link), 1, "one refund_address_received");
    assert_eq!(w.timeline_names(&link).len(), timeline);
}

#[test]
fn racing_refund_addresses_leave_exactly_one() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let candidates: Vec<String> = (1..=8u8)
        .map(|i| format!("0x{}", format!("{i:02x}").repeat(20)))
        .collect();
    // Rounds of eight submissions released together: each round's losers read the session
    // before the winner wrote it, so only the re-decision inside the write loop refuses them.
    for _ in 0..25 {
        let link = w.link_for(&shop, Some(true));
        let id = refund_pending(&w, &shop, &link, BASE_USDC).id;
        let start = std::sync::Barrier::new(candidates.len());
        let outcomes: Vec<Result<PaymentSession, CheckoutError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = candidates
                .iter()
                .map(|a| {
                    let (pay, uid, start) = (&w.pay, &link.uid, &start);
                    scope.spawn(move || {
                        start.wait();
                        pay.checkout().submit_refund_address(uid, id, a)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let won: Vec<&PaymentSession> = outcomes.iter().filter_map(|o| o.as_ref().ok()).collect();
        assert_eq!(won.len(), 1, "{outcomes:?}");
        assert!(outcomes
            .iter()
            .filter(|o| o.is_err())
            .all(|o| o == &Err(RefundAddressAlreadySet.into())));
        let kept = w
            .pay
            .checkout()
            .checkout_session(&link.uid, id)
            .unwrap()
            .settlement
            .to_json()["refundAddress"]
            .clone();
        assert_eq!(kept, won[0].settlement.to_json()["refundAddress"]);
        assert_eq!(received_count(&w, &link), 1);
    }
}

#[test]
fn a_refund_address_is_one_of_the_chain_paid_on() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w.link_for(&shop, Some(true));
    let message = |r: Result<PaymentSession, CheckoutError>| match r {
        Err(CheckoutError::Invalid(FieldError { field, message })) => {
            assert_eq!(field, "address");
            message
        }
        other => panic!("expected a validation error, got {other:?}"),
    };
    // Paid with USDC on Base: an EVM address, checksum held.
    let s = refund_pending(&w, &shop, &link, BASE_USDC).id;
    let uid = &link.uid;
    for bad in [
        "0xabc123",
        "0x5aaeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
        "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
        "",
    ] {
        let m = message(w.pay.checkout().submit_refund_address(uid, s, bad));
        assert!(
            m.starts_with("address must be an address on Base (0x and 40 hex"),
            "{m}"
        );
    }
    assert_eq!(received_count(&w, &link), 0);
    // Spaces around a pasted address do not count.
    let ok = w
        .pay
        .checkout()
        .submit_refund_address(uid, s, &format!("  {PAYER}\n"))
        .unwrap();
    assert_eq!(ok.settlement.to_json()["refundAddress"], PAYER);
    // Paid with BTC: a Bitcoin address of its network.
    let link = w.link_for(&shop, Some(true));
    let btc = "bip122:000000000019d6689c085ae165831e93/slip44:0";
    let s = refund_pending(&w, &shop, &link, btc).id;
    let uid = &link.uid;
    for (bad, why) in [
        (PAYER, "it has characters such addresses never contain"),
        (
            "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5",
            "its checksum does not match",
        ),
        (
            "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7",
            "it has characters such addresses never contain",
        ),
    ] {
        let m = message(w.pay.checkout().submit_refund_address(uid, s, bad));
        assert!(
            m.starts_with("address must be an address on Bitcoin ("),
            "{m}"
        );
        assert!(m.contains(why), "{bad}: {m}");
    }
    let ok = w
        .pay
        .checkout()
        .submit_refund_address(uid, s, "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4")
        .unwrap();
    assert_eq!(
        ok.settlement.to_json()["refundAddress"],
        "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
    );
}

#[test]
fn the_merchant_completes_an_underpayment_by_hand() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w.link_for(&shop, Some(true));
    w.started(&link);
    w.deposit(&shop, &link, "9");
    let r = w
        .pay
        .checkout()
        .resolve_underpayment(&shop.key, &link.uid, Resolution::Complete)
        .unwrap();
    assert_eq!(r.status, SessionStatus::Complete);
    assert_eq!(
        r.settlement.to_json()["resolution"],
        "completed_by_merchant"
    );
    assert_eq!(
        w.event_names(&link)[w.event_names(&link).len() - 2..].to_vec(),
        strs(&["manual_resolution_completed", "status_changed"])
    );
    // Nothing left to resolve.
    assert!(matches!(
        w.pay
            .checkout()
            .resolve_underpayment(&shop.key, &link.uid, Resolution::Complete),
        Err(CheckoutError::Transition(_))
    ));
}

#[test]
fn an_underpaid_link_starts_nothing_until_paid_or_resolved() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    for resolution in [None, Some(Resolution::Refund), Some(Resolution::Complete)] {
        let link = w.link_for(&shop, Some(true));
        let s = w.started(&link);
        let short = w.deposit(&shop, &link, "9");
        assert_eq!(short.status, SessionStatus::Underpaid);
        let refused = w
            .pay
            .checkout()
            .start_session(&link.uid, BASE_USDC, "198.51.100.9");
        assert_eq!(
            refused,
            Err(CheckoutError::UnderWay(PaymentUnderWay {
                session: s.id,
                status: SessionStatus::Underpaid
            }))
        );
        assert!(!refused.unwrap_err().to_string().contains(&s.id.to_string()));
        assert_eq!(
            w.pay
                .checkout()
                .payment_under_way(&link.uid)
                .unwrap()
                .map(|u| u.session),
            Some(s.id)
        );
        match resolution {
            // The rest, on the same session.
            None => assert_eq!(w.deposit(&shop, &link, "1").status, SessionStatus::Complete),
            Some(r) => {
                w.pay
                    .checkout()
                    .resolve_underpayment(&shop.key, &link.uid, r)
                    .unwrap();
            }
        }
        assert_eq!(w.pay.checkout().payment_under_way(&link.uid).unwrap(), None);
        w.started(&link);
    }
}

// ----- expiry and link changes -----

#[test]
fn quotes_and_deposit_requests_expire_by_the_clock() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let quoted = w.link_for(&shop, Some(false));
    let q = w.started(&quoted);
    let open = w.link_for(&shop, Some(true));
    let p = w.started(&open);
    w.advance(pay_domain::checkout::quote::QUOTE_TTL - Duration::milliseconds(1));
    assert_eq!(w.pay.checkout().run_due_work(10).unwrap().moved, 0);
    w.advance(Duration::milliseconds(1));
    assert_eq!(w.pay.checkout().run_due_work(10).unwrap().moved, 1);
    let q = w.store.payment_session(q.id).unwrap().unwrap();
    assert_eq!(q.status, SessionStatus::Expired);
    assert_eq!(
        w.event_names(&quoted),
        strs(&["quote_expired", "status_changed"])
    );
    w.advance(pay_domain::checkout::DEPOSIT_WINDOW);
    assert_eq!(w.pay.checkout().run_due_work(10).unwrap().moved, 1);
    assert_eq!(
        w.store.payment_session(p.id).unwrap().unwrap().status,
        SessionStatus::Expired
    );
    assert_eq!(
        w.event_names(&open)[2..].to_vec(),
        strs(&["payment_request_expired", "status_changed"])
    );
    // An expired quote cannot be accepted, even before the worker runs.
    let quoted2 = w.link_for(&shop, Some(false));
    let q2 = w.started(&quoted2);
    w.advance(pay_domain::checkout::quote::QUOTE_TTL);
    assert!(matches!(
        w.pay.checkout().accept_session(&quoted2.uid, q2.id),
        Err(CheckoutError::Transition(_))
    ));
}

#[test]
fn an_expiring_link_ends_its_waiting_session_and_refuses_starts() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w
        .pay
        .links()
        .create_link(
            &shop.key,
            CreateLinkInput {
                amount: "10".into(),
                skip_quote_acceptance: Some(true),
                expiration_time: Some("15m".into()),
                ..Default::default()
            },
        )
        .unwrap();
    let s = w.started(&link);
    w.advance(Duration::minutes(15));
    assert_eq!(
        w.pay.checkout().checkout_view(&link.uid).unwrap().state,
        LinkState::Expired
    );
    assert!(matches!(
        w.pay
            .checkout()
            .start_session(&link.uid, BASE_USDC, "198.51.100.9"),
        Err(CheckoutError::NotActive(LinkNotActive {
            state: LinkState::Expired
        }))
    ));
    assert_eq!(w.pay.checkout().run_due_work(10).unwrap().moved, 1);
    assert_eq!(
        w.store.payment_session(s.id).unwrap().unwrap().status,
        SessionStatus::Expired
    );
    assert_eq!(
        w.event_names(&link)[2..].to_vec(),
        strs(&["payment_link_expired", "status_changed"])
    );
}

#[test]
fn pausing_a_link_mid_session_ends_the_session() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w.link_for(&shop, Some(true));
    let s = w.started(&link);
    w.pay
        .links()
        .set_link_status(&shop.key, &link.uid, LinkStatus::Paused)
        .unwrap();
    let s = w.store.payment_session(s.id).unwrap().unwrap();
    assert_eq!(s.status, SessionStatus::Cancelled);
    assert_eq!(
        w.event_names(&link)[2..].to_vec(),
        strs(&["payment_link_inactive", "status_changed"])
    );
    assert!(matches!(
        w.pay
            .checkout()
            .start_session(&link.uid, BASE_USDC, "198.51.100.9"),
        Err(CheckoutError::NotActive(LinkNotActive {
            state: LinkState::Paused
        }))
    ));
    assert_eq!(
        w.pay.checkout().checkout_view(&link.uid).unwrap().state,
        LinkState::Paused
    );
    // A processing session is not the payer's to lose: pausing leaves it be.
    w.pay
        .links()
        .set_link_status(&shop.key, &link.uid, LinkStatus::Active)
        .unwrap();
    w.started(&link);
    w.pay
        .sandbox()
        .sandbox_event(
            Some(&shop.key),
            &link.uid,
            SandboxEvent::Deposit {
                amount: d("10"),
                hold: true,
            },
            None,
            None,
        )
        .unwrap();
    w.pay
        .links()
        .set_link_status(&shop.key, &link.uid, LinkStatus::Archived)
        .unwrap();
    let latest = w.store.latest_session(link.id).unwrap().unwrap();
    assert_eq!(latest.status, SessionStatus::Processing);
}

// ----- one-time links -----

fn anonymous_link(w: &World) -> PaymentLink {
    w.reserve_anonymous_company();
    w.pay
        .links()
        .create_anonymous_link(
            CreateAnonymousLinkInput {
                link: CreateLinkInput {
                    amount: "10".into(),
                    skip_quote_acceptance: Some(true),
                    ..Default::default()
                },
                priorities: vec![SettlementPriority {
                    asset: BASE_USDC.into(),
                    address: "0xpayout".into(),
                }],
                branding: Branding::default(),
                webhook_url: Some(HOOK.into()),
            },
            "198.51.100.7",
        )
        .unwrap()
        .0
}

#[test]
fn a_one_time_link_takes_one_payment_and_refunds_the_next() {
    let w = world();
    let link = anonymous_link(&w);
    let first = w.started(&link);
    assert_eq!(first.destination_address, "0xpayout");
    let second = w.started(&link);
    let settle = |s: &PaymentSession| {
        // Anonymous links take sandbox events without credentials; drive each session.
        let link = w.store.public_link(&link.uid).unwrap().unwrap();
        w.pay
            .checkout()
            .deposit(
                &link,
                s.clone(),
                d("10"),
                false,
                &format!("e-{}", s.id),
                "test",
            )
            .unwrap()
    };
    let a = settle(&first);
    assert_eq!(a.status, SessionStatus::Complete);
    // Its events describe the link as the payment left it: archived.
    let last = w
        .store
        .stored_deliveries()
        .into_iter()
        .filter(|d| d.payment_link_uid.as_deref() == Some(link.uid.as_str()))
        .map(|d| serde_json::from_str::<Value>(&d.body).unwrap())
        .max_by_key(|b| b["sequence"].as_u64().unwrap())
        .expect("the link's own webhook got events");
    assert_eq!(last["type"], "pay.payment.status_changed");
    assert_eq!(last["paymentLink"]["status"], "archived");
    let link_now = w.store.public_link(&link.uid).unwrap().unwrap();
    assert_eq!(link_now.status, LinkStatus::Archived);
    let b = settle(&w.store.payment_session(second.id).unwrap().unwrap());
    assert_eq!(b.status, SessionStatus::RefundPending);
    assert_eq!(b.settlement.to_json()["refundReason"], "link_already_paid");
    // Paid: a new start says so (before the link's archived state).
    assert_eq!(
        w.pay
            .checkout()
            .start_session(&link.uid, BASE_USDC, "198.51.100.9"),
        Err(CheckoutError::UnderWay(PaymentUnderWay {
            session: a.id,
            status: SessionStatus::Complete
        }))
    );
    // The public sandbox route drives anonymous links only.
    let shop = w.shop("Acme", "owner@acme.example");
    let company_link = w.link_for(&shop, Some(true));
    w.started(&company_link);
    assert!(matches!(
        w.pay
            .sandbox()
            .sandbox_event(None, &company_link.uid, SandboxEvent::Fail, None, None),
        Err(CheckoutError::NotFound(_))
    ));
}

// ----- tenancy and the sandbox switch -----

#[test]
fn another_companys_key_cannot_drive_or_read_a_link() {
    let w = world();
    let a = w.shop("Acme", "owner@acme.example");
    let b = w.shop("Bolt", "owner@bolt.example");
    let link = w.link_for(&a, Some(true));
    w.started(&link);
    assert!(matches!(
        w.pay
            .sandbox()
            .sandbox_event(Some(&b.key), &link.uid, SandboxEvent::Fail, None, None),
        Err(CheckoutError::NotFound(_))
    ));
    assert!(matches!(
        w.pay.checkout().link_detail(&b.key, &link.uid),
        Err(CheckoutError::NotFound(_))
    ));
    assert!(matches!(
        w.pay
            .checkout()
            .resolve_underpayment(&b.key, &link.uid, Resolution::Complete),
        Err(CheckoutError::NotFound(_))
    ));
    let reader = grant(a.company, 1, &[Scope::PaymentLinksRead]);
    assert!(w
        .pay
        .sandbox()
        .sandbox_event(Some(&reader), &link.uid, SandboxEvent::Fail, None, None)
        .is_err());
}

#[test]
fn outside_the_sandbox_there_are_no_sandbox_events() {
    let mut w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w.link_for(&shop, Some(true));
    w.started(&link);
    w.rebuild(false);
    assert!(matches!(
        w.pay
            .sandbox()
            .sandbox_event(Some(&shop.key), &link.uid, SandboxEvent::Fail, None, None),
        Err(CheckoutError::NotFound(_))
    ));
}

#[test]
fn the_test_clock_moves_business_time_and_runs_what_fell_due() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w.link_for(&shop, Some(false));
    let s = w.started(&link);
    let before = w.pay.sandbox().test_clock_now(&shop.key).unwrap();
    assert_eq!(
        field_of(w.pay.sandbox().advance_test_clock(&shop.key, 0)),
        "advanceSeconds"
    );
    assert_eq!(
        field_of(
            w.pay
                .sandbox()
                .advance_test_clock(&shop.key, MAX_CLOCK_ADVANCE_SECS + 1)
        ),
        "advanceSeconds"
    );
    let now = w.pay.sandbox().advance_test_clock(&shop.key, 600).unwrap();
    assert_eq!(now, before.plus(Duration::seconds(600)));
    assert_eq!(w.pay.sandbox().test_clock_now(&shop.key).unwrap(), now);
    assert_eq!(
        w.store.payment_session(s.id).unwrap().unwrap().status,
        SessionStatus::Expired,
        "the quote's ten minutes are up and the work ran"
    );
    let reader = grant(shop.company, 1, &[Scope::PaymentLinksRead]);
    assert!(w.pay.sandbox().advance_test_clock(&reader, 1).is_err());
}

#[test]
fn a_quote_is_refreshed_before_it_expires_and_not_after() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w.link_for(&shop, Some(false));
    let q = w
        .pay
        .checkout()
        .start_session(&link.uid, ETH, "198.51.100.9")
        .unwrap();
    w.advance(Duration::minutes(5));
    let r = w.pay.checkout().refresh_quote(&link.uid, q.id).unwrap();
    assert_eq!(r.status, SessionStatus::Quote);
    assert_eq!(r.version, q.version + 1);
    assert_eq!(
        r.expires_at,
        w.now().plus(pay_domain::checkout::quote::QUOTE_TTL)
    );
    assert_eq!(r.required_sell_amount.to_string(), "0.005");
    assert_eq!(
        w.timeline_names(&link),
        strs(&["quote_created", "quote_refreshed"])
    );
    assert!(w.event_names(&link).is_empty(), "refreshes are internal");
    // Ten minutes after the refresh, it has expired: no refresh brings it back.
    w.advance(pay_domain::checkout::quote::QUOTE_TTL);
    assert!(matches!(
        w.pay.checkout().refresh_quote(&link.uid, q.id),
        Err(CheckoutError::Transition(_))
    ));
    assert_eq!(
        w.store.payment_session(q.id).unwrap().unwrap().status,
        SessionStatus::Expired
    );
    // A session past its quote cannot be refreshed either.
    let open = w.link_for(&shop, Some(true));
    let p = w.started(&open);
    assert!(matches!(
        w.pay.checkout().refresh_quote(&open.uid, p.id),
        Err(CheckoutError::Transition(_))
    ));
}

#[test]
fn payment_starts_are_limited_per_client_address() {
    let per_minute = pay_domain::kernel::ratelimit::RateLimits::default()
        .checkout_starts
        .max;
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let link = w.link_for(&shop, Some(false));
    for _ in 0..per_minute {
        w.pay
            .checkout()
            .start_session(&link.uid, ETH, "203.0.113.5")
            .unwrap();
    }
    let before = w.store.snapshot();
    assert_eq!(
        w.pay
            .checkout()
            .start_session(&link.uid, ETH, "203.0.113.5")
            .unwrap_err(),
        CheckoutError::RateLimited(RateLimited {
            retry_after_secs: 60
        })
    );
    assert_eq!(
        w.store.snapshot().payment_sessions,
        before.payment_sessions,
        "a refused start writes no session"
    );
    // Another address, and the same one once the minute has passed, start again.
    w.pay
        .checkout()
        .start_session(&link.uid, ETH, "203.0.113.6")
        .unwrap();
    w.advance(Duration::minutes(1) + Duration::milliseconds(1));
    w.pay
        .checkout()
        .start_session(&link.uid, ETH, "203.0.113.5")
        .unwrap();
}

#[test]
fn sandbox_event_ids_are_the_callers_per_link() {
    let w = world();
    let shop = w.shop("Acme", "owner@acme.example");
    let a = w.link_for(&shop, Some(true));
    let b = w.link_for(&shop, Some(true));
    for link in [&a, &b] {
        w.started(link);
        let s = w
            .pay
            .sandbox()
            .sandbox_event(
                Some(&shop.key),
                &link.uid,
                SandboxEvent::Fail,
                Some("evt-1"),
                None,
            )
            .unwrap();
        assert_eq!(
            s.status,
            SessionStatus::Failed,
            "evt-1 of each link applies"
        );
    }
}

#[test]
fn sandbox_events_and_resolutions_are_read_strictly() {
    assert_eq!(
        SandboxEvent::parse("deposit", Some("0.5"), None).unwrap(),
        SandboxEvent::Deposit {
            amount: d("0.5"),
            hold: false
        }
    );
    assert_eq!(
        SandboxEvent::parse("deposit", Some("1"), Some(true)).unwrap(),
        SandboxEvent::Deposit {
            amount: d("1"),
            hold: true
        }
    );
    for (kind, want) in [
        ("settle", SandboxEvent::Settle),
        ("expire", SandboxEvent::Expire),
        ("fail", SandboxEvent::Fail),
        ("refund", SandboxEvent::Refund),
    ] {
        assert_eq!(SandboxEvent::parse(kind, None, None).unwrap(), want);
    }
    for (kind, amount, hold, field) in [
        ("deposit", None, None, "amount"),
        ("deposit", Some("0"), None, "amount"),
        ("deposit", Some("-1"), None, "amount"),
        ("deposit", Some("1e3"), None, "amount"),
        ("deposit", Some("007"), None, "amount"),
        ("deposit", Some("00.5"), None, "amount"),
        ("deposit", Some("-0"), None, "amount"),
        ("settle", Some("1"), None, "amount"),
        ("fail", None, Some(false), "hold"),
        ("explode", None, None, "type"),
    ] {
        assert_eq!(
            field_of(SandboxEvent::parse(kind, amount, hold)),
            field,
            "{kind} {amount:?} {hold:?}"
        );
    }
    assert_eq!(Resolution::parse("complete").unwrap(), Resolution::Complete);
    assert_eq!(Resolution::parse("refund").unwrap(), Resolution::Refund);
    assert_eq!(field_of(Resolution::parse("Complete")), "action");
}
