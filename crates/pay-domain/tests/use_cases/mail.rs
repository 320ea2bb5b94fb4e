//! `send-request-email` and the mailer's steps over the fakes: authorisation like every link
//! mutation, the address rules and default, the link's state, what lands in the outbox, and
//! claim, lease, record (compare-and-set) and the retry policy.

use super::*;
use pay_domain::mail::{
    MailKind, MailStatus, MailStore, OutgoingMail, SendOutcome, CLAIM_LEASE, MAX_ATTEMPTS,
    RETRY_DELAYS,
};

const PAYER: &str = "payer@example.com";

fn link_for(w: &World, p: &Principal, customer_email: Option<&str>) -> PaymentLink {
    w.pay
        .links()
        .create_link(
            p,
            CreateLinkInput {
                amount: "12.50".into(),
                fiat_currency: Some("USD".into()),
                title: Some("Order 42".into()),
                customer_email: customer_email.map(str::to_owned),
                ..Default::default()
            },
        )
        .unwrap()
}

fn mails(w: &World) -> Vec<OutgoingMail> {
    w.store.tables().mails.clone()
}

fn keyed(w: &World) -> (BootstrapOutcome, Principal) {
    let b = w.tenant("Acme Goods", "owner@acme.example");
    let p = w.key_principal(&b);
    (b, p)
}

#[test]
fn the_default_address_is_the_links_customer_email() {
    let w = world();
    let (b, p) = keyed(&w);
    let link = link_for(&w, &p, Some(PAYER));
    let to = w
        .pay
        .mail()
        .send_request_email(&p, &link.uid, None)
        .unwrap();
    assert_eq!(to, PAYER);
    let all = mails(&w);
    assert_eq!(all.len(), 1, "one row in the outbox, nothing sent");
    let m = &all[0];
    assert_eq!(m.company_id, b.company_id);
    assert_eq!((m.link_id, &m.link_uid), (link.id, &link.uid));
    assert_eq!(m.kind, MailKind::PaymentRequest);
    assert_eq!(m.to, PAYER);
    assert_eq!(m.status, MailStatus::Pending);
    assert_eq!(m.attempts, 0);
    assert_eq!(m.next_attempt_at, Some(w.now()), "due at once");
    assert_eq!(m.created_at, w.now());
    assert_eq!(
        (m.last_attempt_at, &m.last_error, m.sent_at),
        (None, &None, None)
    );
    assert_eq!(
        m.subject,
        "Payment request from Acme Goods: Order 42 (12.50 USD)"
    );
    let url = format!("https://pay.example/pay/{}", link.uid);
    assert!(m.text_body.contains(&url), "{}", m.text_body);
    assert!(m.html_body.contains(&format!("href=\"{url}\"")));
    assert_eq!(w.store.calls("insert_mail"), 1);
    // Readable back by id and per link.
    assert_eq!(w.store.mail(m.id).unwrap().as_ref(), Some(m));
    assert_eq!(w.store.link_mails(b.company_id, &link.uid).unwrap(), all);
}

#[test]
fn an_explicit_address_wins_and_is_normalised() {
    let w = world();
    let (_, p) = keyed(&w);
    let link = link_for(&w, &p, Some(PAYER));
    let to = w
        .pay
        .mail()
        .send_request_email(&p, &link.uid, Some("  Other.Person@Example.ORG ".into()))
        .unwrap();
    assert_eq!(to, "Other.Person@example.org");
    assert_eq!(mails(&w)[0].to, "Other.Person@example.org");
    // Each call queues another mail (a resend).
    w.pay
        .mail()
        .send_request_email(&p, &link.uid, None)
        .unwrap();
    assert_eq!(mails(&w).len(), 2);
}

#[test]
fn without_any_address_it_is_missing_email() {
    let w = world();
    let (_, p) = keyed(&w);
    let link = link_for(&w, &p, None);
    assert_eq!(
        w.pay.mail().send_request_email(&p, &link.uid, None),
        Err(MissingEmail.into())
    );
    assert!(mails(&w).is_empty());
    assert_eq!(w.store.calls("insert_mail"), 0);
}

#[test]
fn a_bad_address_is_a_validation_error_on_email() {
    let w = world();
    let (_, p) = keyed(&w);
    let link = link_for(&w, &p, Some(PAYER));
    let long = format!("{}@example.com", "a".repeat(250));
    for bad in [
        "",
        "  ",
        "nope",
        "a@b",
        "a@b.example\r\nBcc: x@evil.example",
        "x@example.com,y@example.com",
        long.as_str(),
    ] {
        assert_eq!(
            field_of(
                w.pay
                    .mail()
                    .send_request_email(&p, &link.uid, Some(bad.into()))
            ),
            "email",
            "{bad:?}"
        );
    }
    assert!(mails(&w).is_empty());
}

#[test]
fn a_link_that_is_not_active_takes_no_request() {
    let w = world();
    let (_, p) = keyed(&w);
    for (status, state) in [
        (LinkStatus::Paused, LinkState::Paused),
        (LinkStatus::Archived, LinkState::Archived),
    ] {
        let link = link_for(&w, &p, Some(PAYER));
        w.store.force_status(&link.uid, status);
        assert_eq!(
            w.pay.mail().send_request_email(&p, &link.uid, None),
            Err(LinkNotActive { state }.into())
        );
        // The address is checked first: a bad one is still a 400.
        assert_eq!(
            field_of(
                w.pay
                    .mail()
                    .send_request_email(&p, &link.uid, Some("x".into()))
            ),
            "email"
        );
    }
    // Past its expiry (24 h by default) an active link is expired.
    let link = link_for(&w, &p, Some(PAYER));
    w.advance(Duration::hours(24));
    assert_eq!(
        w.pay.mail().send_request_email(&p, &link.uid, None),
        Err(LinkNotActive {
            state: LinkState::Expired
        }
        .into())
    );
    assert!(mails(&w).is_empty());
}

#[test]
fn authorised_like_every_link_mutation() {
    let w = world();
    let (b, p) = keyed(&w);
    let link = link_for(&w, &p, Some(PAYER));
    let uid = &link.uid;

    // Another company's link and an unknown uid are not found (a malformed one never gets
    // here: the edge that parses it answers as for an unknown one).
    let other = w.tenant("Other Co", "owner@other.example");
    let other_p = w.key_principal(&other);
    assert_eq!(
        w.pay.mail().send_request_email(&other_p, uid, None),
        Err(LINK_NOT_FOUND.into())
    );
    assert_eq!(
        w.pay.mail().send_request_email(
            &p,
            &LinkUid::parse("ZZZZZZZZZZZZZZZZZZZZZZ").unwrap(),
            None
        ),
        Err(LINK_NOT_FOUND.into())
    );

    // A member's session may read links but not write them.
    let member = w.member(b.company_id, "member@acme.example", Role::Member);
    let mp = w.sign_in_principal(&member);
    assert_eq!(
        w.pay.mail().send_request_email(&mp, uid, None),
        Err(Denied::Forbidden.into())
    );
    // An owner's session may.
    let (_, owner) = w.sign_in("owner@acme.example");
    let op = w.sign_in_principal(&owner);
    assert!(w.pay.mail().send_request_email(&op, uid, None).is_ok());

    // OAuth: the write scope is needed, and only the grant's own links are visible.
    let reader = grant(b.company_id, 1, &[Scope::PaymentLinksRead]);
    assert_eq!(
        w.pay.mail().send_request_email(&reader, uid, None),
        Err(Denied::MissingScope {
            scope: Scope::PaymentLinksWrite,
            dpop_bound: false
        }
        .into())
    );
    let writer = grant(
        b.company_id,
        2,
        &[Scope::PaymentLinksRead, Scope::PaymentLinksWrite],
    );
    assert_eq!(
        w.pay.mail().send_request_email(&writer, uid, None),
        Err(LINK_NOT_FOUND.into()),
        "a key's link is not the grant's"
    );
    let own = link_for(&w, &writer, Some(PAYER));
    assert!(w
        .pay
        .mail()
        .send_request_email(&writer, &own.uid, None)
        .is_ok());

    // Refusals wrote nothing; the two successes queued one mail each.
    assert_eq!(mails(&w).len(), 2);
}

fn queued(w: &World) -> (Principal, OutgoingMail) {
    let (_, p) = keyed(w);
    let link = link_for(w, &p, Some(PAYER));
    w.pay
        .mail()
        .send_request_email(&p, &link.uid, None)
        .unwrap();
    (p, mails(w).pop().unwrap())
}

#[test]
fn a_claim_hides_the_mail_for_the_lease() {
    let w = world();
    let (_, m) = queued(&w);
    let claimed = w.pay.mail().claim_due_mails(10).unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].id, m.id);
    assert_eq!(claimed[0].next_attempt_at, Some(w.now().plus(CLAIM_LEASE)));
    assert!(
        w.pay.mail().claim_due_mails(10).unwrap().is_empty(),
        "leased"
    );
    w.advance(CLAIM_LEASE - Duration::seconds(1));
    assert!(w.pay.mail().claim_due_mails(10).unwrap().is_empty());
    // A mailer that died mid-send: the lease runs out and the mail is claimed again.
    w.advance(Duration::seconds(1));
    assert_eq!(w.pay.mail().claim_due_mails(10).unwrap().len(), 1);
    assert_eq!(w.pay.mail().claim_due_mails(0).unwrap().len(), 0);
}

#[test]
fn a_sent_mail_is_recorded_once() {
    let w = world();
    let (_, _) = queued(&w);
    let claimed = w.pay.mail().claim_due_mails(10).unwrap().pop().unwrap();
    w.advance(Duration::seconds(3));
    let after = w
        .pay
        .mail()
        .record_mail_outcome(&claimed, SendOutcome::Sent)
        .unwrap()
        .expect("recorded");
    assert_eq!(after.status, MailStatus::Sent);
    let stored = w.store.mail(claimed.id).unwrap().unwrap();
    assert_eq!(stored.status, MailStatus::Sent);
    assert_eq!(stored.attempts, 1);
    assert_eq!(stored.sent_at, Some(w.now()));
    assert_eq!(stored.last_attempt_at, Some(w.now()));
    assert_eq!(stored.next_attempt_at, None);
    // A second mailer holding the same (stale) claim records nothing.
    assert_eq!(
        w.pay
            .mail()
            .record_mail_outcome(&claimed, SendOutcome::Transient("late".into()))
            .unwrap(),
        None
    );
    assert_eq!(w.store.mail(claimed.id).unwrap().unwrap(), stored);
    assert!(
        w.pay.mail().claim_due_mails(10).unwrap().is_empty(),
        "terminal"
    );
    assert!(w
        .pay
        .mail()
        .pending_mails_after(None, 10)
        .unwrap()
        .is_empty());
}

#[test]
fn transient_failures_retry_on_the_schedule_then_give_up() {
    let w = world();
    let (_, m) = queued(&w);
    for attempt in 1..=MAX_ATTEMPTS {
        let claimed = w
            .pay
            .mail()
            .claim_due_mails(10)
            .unwrap()
            .pop()
            .expect("due");
        assert_eq!(claimed.attempts, attempt - 1);
        let after = w
            .pay
            .mail()
            .record_mail_outcome(
                &claimed,
                SendOutcome::Transient(format!("421 {PAYER} busy, try {attempt}")),
            )
            .unwrap()
            .unwrap();
        let stored = w.store.mail(m.id).unwrap().unwrap();
        assert_eq!(stored.attempts, attempt);
        assert_eq!(
            stored.last_error.as_deref(),
            Some(format!("421 <recipient> busy, try {attempt}").as_str()),
            "the address is masked"
        );
        if attempt < MAX_ATTEMPTS {
            let wait = RETRY_DELAYS[attempt as usize - 1];
            assert_eq!(after.status, MailStatus::Pending);
            assert_eq!(stored.next_attempt_at, Some(w.now().plus(wait)));
            w.advance(wait - Duration::seconds(1));
            assert!(
                w.pay.mail().claim_due_mails(10).unwrap().is_empty(),
                "not due yet"
            );
            w.advance(Duration::seconds(1));
        } else {
            assert_eq!(after.status, MailStatus::Failed);
            assert_eq!(stored.next_attempt_at, None);
        }
    }
    w.advance(Duration::days(1));
    assert!(w.pay.mail().claim_due_mails(10).unwrap().is_empty());
}

#[test]
fn a_permanent_refusal_fails_at_once() {
    let w = world();
    let (_, m) = queued(&w);
    let claimed = w.pay.mail().claim_due_mails(10).unwrap().pop().unwrap();
    let after = w
        .pay
        .mail()
        .record_mail_outcome(
            &claimed,
            SendOutcome::Permanent(format!(
                "550 5.1.1 <{}>: no such user",
                PAYER.to_uppercase()
            )),
        )
        .unwrap()
        .unwrap();
    assert_eq!(after.status, MailStatus::Failed);
    let stored = w.store.mail(m.id).unwrap().unwrap();
    assert_eq!(
        stored.last_error.as_deref(),
        Some("550 5.1.1 <<recipient>>: no such user")
    );
    assert_eq!((stored.attempts, stored.sent_at), (1, None));
}

#[test]
fn pending_mails_are_listed_after_a_cursor() {
    let w = world();
    let (p, first) = queued(&w);
    let link = link_for(&w, &p, Some(PAYER));
    w.pay
        .mail()
        .send_request_email(&p, &link.uid, None)
        .unwrap();
    let all = w.pay.mail().pending_mails_after(None, 10).unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].id, first.id);
    let rest = w
        .pay
        .mail()
        .pending_mails_after(Some(first.id), 10)
        .unwrap();
    assert_eq!(rest.len(), 1);
    assert!(w
        .pay
        .mail()
        .pending_mails_after(Some(rest[0].id), 10)
        .unwrap()
        .is_empty());
    assert_eq!(w.pay.mail().pending_mails_after(None, 1).unwrap().len(), 1);
    // Listing claims nothing: both are still due for a mailer with a transport.
    assert_eq!(w.pay.mail().claim_due_mails(10).unwrap().len(), 2);
}

#[test]
fn finished_mails_are_forgotten_after_the_retention() {
    let w = world();
    let (p, _) = queued(&w);
    let claimed = w.pay.mail().claim_due_mails(10).unwrap().pop().unwrap();
    w.pay
        .mail()
        .record_mail_outcome(&claimed, SendOutcome::Sent)
        .unwrap();
    // A second request to the same link that never leaves (no transport): it stays.
    let link = link_for(&w, &p, Some(PAYER));
    w.pay
        .mail()
        .send_request_email(&p, &link.uid, None)
        .unwrap();
    // The rate-limit hits of the two requests (per link and per recipient) go after a day.
    w.advance(Duration::days(2));
    assert_eq!(w.pay.prune().unwrap(), 4, "the four rate-limit hits");
    w.advance(pay_domain::mail::MAIL_RETENTION - Duration::days(2));
    assert_eq!(w.pay.prune().unwrap(), 0, "kept for the whole retention");
    w.advance(Duration::milliseconds(1));
    assert_eq!(w.pay.prune().unwrap(), 1, "the sent one goes");
    let left = mails(&w);
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].status, MailStatus::Pending);
}
