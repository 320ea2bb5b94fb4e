//! Webhook use cases over the fakes: the company callbacks of the developer settings, emitting
//! a link's events into the outbox, test events, the dispatcher's three steps (claim, prepare,
//! record) and the delivery log with resend.

use pay_domain::kernel::ids::DeliveryId;
use serde_json::Value;

use super::*;
use pay_domain::webhooks::{
    AttemptOutcome, DeliveryOrigin, EventKind, LinkSnapshot, PaymentEvent, PaymentEventDraft,
    SessionSnapshot, StoredSigningSecret,
};

const HOOK: &str = "https://hooks.acme.example/pay";
const NEW_HOOK: &str = "https://new.acme.example/hook";
const LEGACY: &str = "https://legacy.acme.example/hook";
const ORDER: &str = "order-42";
const PAY: CallbackKind = CallbackKind::CompanyPayment;
const SHARED: CallbackKind = CallbackKind::LegacyShared;
const DELIVERY_NOT_FOUND: NotFound = NotFound { kind: "Delivery" };

/// A tenant with its owner signed in and its API-key principal.
#[derive(Debug)]
struct Team {
    company: CompanyId,
    owner: SignedIn,
    key: Principal,
}

impl World {
    fn team(&self, name: &str, email: &str) -> Team {
        let b = self.tenant(name, email);
        let (_, owner) = self.sign_in(email);
        Team {
            company: b.company_id,
            owner,
            key: self.key_principal(&b),
        }
    }

    /// Saves a new callback and returns the secret issued with it.
    fn set_callback(&self, team: &Team, kind: CallbackKind, url: &str) -> Secret {
        self.pay
            .webhooks()
            .put_company_callback(&team.owner, team.company, kind, url)
            .unwrap()
            .1
            .expect("the first save issues a secret")
    }

    fn callback(&self, team: &Team, kind: CallbackKind) -> CompanyCallback {
        self.store.stored_callback(team.company, kind).unwrap()
    }

    fn link_with_order(&self, p: &Principal, order: &str) -> PaymentLink {
        self.pay
            .links()
            .create_link(
                p,
                CreateLinkInput {
                    amount: "10".into(),
                    order_id: Some(order.into()),
                    ..Default::default()
                },
            )
            .unwrap()
    }

    fn emit(&self, link: &PaymentLink) -> Vec<Delivery> {
        self.pay
            .webhooks()
            .emit_link_event(
                link,
                status_changed(),
                "sandbox_deposit",
                SessionSnapshot::default(),
            )
            .unwrap()
    }

    /// Emits one event that must reach exactly one callback.
    fn emit_one(&self, link: &PaymentLink) -> Delivery {
        let mut sent = self.emit(link);
        assert_eq!(sent.len(), 1);
        sent.remove(0)
    }

    fn claim(&self) -> Vec<Delivery> {
        self.pay.webhooks().claim_due_deliveries(100).unwrap()
    }

    fn delivery_now(&self, id: uuid::Uuid) -> Delivery {
        self.store.stored_delivery(id).unwrap()
    }

    /// The secrets that signed a request prepared now for the stored delivery.
    fn signing_secrets_now(&self, id: uuid::Uuid) -> Vec<String> {
        self.pay
            .webhooks()
            .prepare_attempt(&self.delivery_now(id))
            .unwrap();
        self.signer.last().secrets
    }
}

fn status_changed() -> EventKind {
    EventKind::Payment(PaymentEvent::StatusChanged)
}

fn json(d: &Delivery) -> Value {
    serde_json::from_str(&d.body).unwrap()
}

fn ids(list: &[Delivery]) -> Vec<uuid::Uuid> {
    list.iter().map(|d| d.id).collect()
}

fn answered(status: u16) -> AttemptOutcome {
    AttemptOutcome {
        status: Some(status),
        duration_ms: 12,
        error: None,
        response_excerpt: Some("{}".into()),
        retry_after: None,
    }
}

fn timed_out() -> AttemptOutcome {
    AttemptOutcome {
        status: None,
        duration_ms: 10_000,
        error: Some(pay_domain::webhooks::AttemptError::ConnectionFailed),
        response_excerpt: None,
        retry_after: None,
    }
}

fn header<'a>(req: &'a pay_domain::webhooks::OutboundRequest, name: &str) -> &'a str {
    req.headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {name} header"))
}

fn last4_of(s: &Secret) -> String {
    let s = s.expose();
    s[s.len() - 4..].to_owned()
}

fn assert_signing_secret(s: &Secret) {
    let s = s.expose();
    assert!(s.starts_with("whsec_"), "{s}");
    assert_eq!(s.len(), "whsec_".len() + 43);
    assert!(is_alnum(&s["whsec_".len()..]));
}

fn filter() -> DeliveryFilter {
    DeliveryFilter::default()
}

// =====================================================================================
// Company callbacks
// =====================================================================================

#[test]
fn company_callbacks_need_a_session_member_with_settings_manage() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let b = w.team("Beta", "ops@beta.example");
    let member = w.member(a.company, "m@acme.example", Role::Member);
    let admin = w.member(a.company, "admin@acme.example", Role::Admin);
    w.store.reset_calls();

    for (who, what) in [
        (&member, "a member without settings.manage"),
        (&b.owner, "the owner of another company"),
    ] {
        for kind in [PAY, SHARED] {
            assert_eq!(
                w.pay.webhooks().company_callback(who, a.company, kind),
                Err(Denied::Forbidden.into()),
                "{what}"
            );
            assert_eq!(
                w.pay
                    .webhooks()
                    .put_company_callback(who, a.company, kind, HOOK)
                    .map(|_| ()),
                Err(Denied::Forbidden.into()),
                "{what}"
            );
            // The role is checked before the URL.
            assert_eq!(
                w.pay
                    .webhooks()
                    .put_company_callback(who, a.company, kind, "http://127.0.0.1/")
                    .map(|_| ()),
                Err(Denied::Forbidden.into()),
                "{what}"
            );
            assert_eq!(
                w.pay
                    .webhooks()
                    .rotate_company_callback_secret(who, a.company, kind)
                    .map(|_| ()),
                Err(Denied::Forbidden.into()),
                "{what}"
            );
        }
    }
    assert_eq!(w.store.writes(), 0);
    assert_eq!(w.store.calls("company_callback"), 0);
    assert!(w.sealer.seal_calls().is_empty());

    // Admins and owners manage them.
    let (view, secret) = w
        .pay
        .webhooks()
        .put_company_callback(&admin, a.company, PAY, HOOK)
        .unwrap();
    assert!(secret.is_some());
    assert_eq!(
        w.pay.webhooks().company_callback(&a.owner, a.company, PAY),
        Ok(Some(view.clone()))
    );
    assert_eq!(
        w.pay.webhooks().company_callback(&admin, a.company, PAY),
        Ok(Some(view))
    );
    assert!(w
        .pay
        .webhooks()
        .rotate_company_callback_secret(&a.owner, a.company, PAY)
        .is_ok());
    // Once it exists, still not for the member nor for B.
    assert_eq!(
        w.pay.webhooks().company_callback(&member, a.company, PAY),
        Err(Denied::Forbidden.into())
    );
    assert_eq!(
        w.pay.webhooks().company_callback(&b.owner, a.company, PAY),
        Err(Denied::Forbidden.into())
    );
    assert_eq!(
        w.pay
            .webhooks()
            .rotate_company_callback_secret(&b.owner, a.company, PAY)
            .map(|_| ()),
        Err(Denied::Forbidden.into())
    );
    assert_eq!(w.store.calls("save_company_callback"), 2);
    // B's own callbacks are its own.
    assert_eq!(
        w.pay.webhooks().company_callback(&b.owner, b.company, PAY),
        Ok(None)
    );
}

#[test]
fn put_refuses_unsafe_callback_urls() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    w.store.reset_calls();
    for url in [
        "http://hooks.acme.example/pay",
        "https://user:pw@hooks.acme.example/pay",
        "https://user@hooks.acme.example/pay",
        "https://127.0.0.1/hook",
        "https://10.1.2.3/hook",
        "https://192.168.0.10:8443/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hook",
        "https://[::ffff:10.0.0.1]/hook",
        "https://[fd00::1]:8443/hook",
        "https://localhost/hook",
        "https://localhost:8443/hook",
        "https://LOCALHOST/hook",
        "https://api.localhost/hook",
        "http://127.0.0.1:9000/hook",
        "ftp://hooks.acme.example/",
        "hooks.acme.example/pay",
        "",
    ] {
        for kind in [PAY, SHARED] {
            assert_eq!(
                field_of(
                    w.pay
                        .webhooks()
                        .put_company_callback(&a.owner, a.company, kind, url)
                ),
                "url",
                "{url:?}"
            );
        }
    }
    assert_eq!(w.store.calls("save_company_callback"), 0);
    assert!(w.sealer.seal_calls().is_empty());
    assert_eq!(w.store.stored_callback(a.company, PAY), None);

    // Public https names and addresses are accepted.
    for url in [
        HOOK,
        "https://93.184.216.34/hook",
        "https://hooks.acme.example:8443/p?x=1",
    ] {
        assert_eq!(
            w.pay
                .webhooks()
                .put_company_callback(&a.owner, a.company, PAY, url)
                .map(|(v, _)| v.url),
            Ok(url.to_owned())
        );
    }
    // A refused URL leaves a saved callback as it was.
    let before = w.callback(&a, PAY);
    assert_eq!(
        field_of(w.pay.webhooks().put_company_callback(
            &a.owner,
            a.company,
            PAY,
            "https://10.0.0.1/"
        )),
        "url"
    );
    assert_eq!(w.callback(&a, PAY), before);
}

#[test]
fn put_refuses_loopback_in_every_literal_form() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let accepted: Vec<&str> = [
        "https://127.1/hook",
        "https://2130706433/hook",
        "https://0x7f.0.0.1/hook",
        "https://0x7f000001/hook",
        "https://0177.0.0.1/hook",
        "https://localhost./hook",
    ]
    .into_iter()
    .filter(|url| {
        w.pay
            .webhooks()
            .put_company_callback(&a.owner, a.company, PAY, url)
            .is_ok()
    })
    .collect();
    assert_eq!(accepted, Vec::<&str>::new(), "all of these reach 127.0.0.1");
}

#[test]
fn private_targets_are_accepted_only_when_allowed() {
    let w = world_with(true);
    let a = w.team("Acme", "ops@acme.example");
    let (view, secret) = w
        .pay
        .webhooks()
        .put_company_callback(&a.owner, a.company, PAY, "http://127.0.0.1:9000/hook")
        .unwrap();
    assert_eq!(view.url, "http://127.0.0.1:9000/hook");
    assert!(secret.is_some());
    assert_eq!(w.callback(&a, PAY).url, "http://127.0.0.1:9000/hook");
    assert!(w
        .pay
        .webhooks()
        .put_company_callback(&a.owner, a.company, SHARED, "http://localhost:9000/hook")
        .is_ok());
    // User info stays refused.
    assert_eq!(
        field_of(w.pay.webhooks().put_company_callback(
            &a.owner,
            a.company,
            PAY,
            "http://u:p@127.0.0.1:9000/hook"
        )),
        "url"
    );

    // The same URL without the allowance is refused.
    let strict = world();
    let s = strict.team("Acme", "ops@acme.example");
    assert_eq!(
        field_of(strict.pay.webhooks().put_company_callback(
            &s.owner,
            s.company,
            PAY,
            "http://127.0.0.1:9000/hook"
        )),
        "url"
    );
}

#[test]
fn the_first_put_issues_a_sealed_secret_returned_once() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    w.advance(Duration::minutes(3));
    let (view, secret) = w
        .pay
        .webhooks()
        .put_company_callback(&a.owner, a.company, PAY, HOOK)
        .unwrap();
    let secret = secret.expect("the first save issues a secret");
    assert_signing_secret(&secret);

    let aad = format!("webhook_callbacks:{}:company_payment", a.company);
    assert_eq!(w.sealer.seal_calls(), vec![aad.clone()]);
    assert_eq!(
        w.callback(&a, PAY),
        CompanyCallback {
            company_id: a.company,
            kind: PAY,
            url: HOOK.into(),
            secret: StoredSigningSecret {
                sealed: FakeSealer::sealed(secret.expose(), &aad),
                last4: last4_of(&secret),
                created_at: w.now(),
            },
            previous: None,
            updated_at: w.now(),
            version: 1,
        }
    );
    assert_eq!(
        view,
        CallbackView {
            url: HOOK.into(),
            secret_last4: last4_of(&secret),
            secret_created_at: w.now(),
        }
    );
    // Reads show the view only.
    assert_eq!(
        w.pay.webhooks().company_callback(&a.owner, a.company, PAY),
        Ok(Some(view))
    );
    assert_eq!(
        w.pay
            .webhooks()
            .company_callback(&a.owner, a.company, SHARED),
        Ok(None)
    );

    // The legacy callback has its own secret, sealed for its own row.
    let legacy = w.set_callback(&a, SHARED, LEGACY);
    assert_signing_secret(&legacy);
    assert_ne!(legacy, secret);
    assert_eq!(
        w.callback(&a, SHARED).secret.sealed,
        FakeSealer::sealed(
            legacy.expose(),
            &format!("webhook_callbacks:{}:legacy_shared", a.company)
        )
    );
}

#[test]
fn a_second_put_changes_the_url_and_keeps_the_secret() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let link = w.new_link(&a.key);
    let secret = w.set_callback(&a, PAY, HOOK);
    let before = w.callback(&a, PAY);
    w.advance(Duration::hours(2));

    let (view, issued) = w
        .pay
        .webhooks()
        .put_company_callback(&a.owner, a.company, PAY, NEW_HOOK)
        .unwrap();
    assert_eq!(issued, None, "a secret is shown once");
    assert_eq!(
        w.callback(&a, PAY),
        CompanyCallback {
            url: NEW_HOOK.into(),
            updated_at: w.now(),
            version: before.version + 1,
            ..before.clone()
        }
    );
    assert_eq!(
        view,
        CallbackView {
            url: NEW_HOOK.into(),
            secret_last4: before.secret.last4.clone(),
            secret_created_at: before.secret.created_at,
        }
    );
    assert_eq!(w.sealer.seal_calls().len(), 1, "no new secret was made");

    // Events go to the new URL, signed with the first secret.
    let d = w.emit_one(&link);
    assert_eq!(d.url, NEW_HOOK);
    assert_eq!(
        w.signing_secrets_now(d.id),
        vec![secret.expose().to_owned()]
    );
}

#[test]
fn a_save_seals_secrets_of_an_older_key_or_form_again() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let link = w.new_link(&a.key);
    let old = w.set_callback(&a, PAY, HOOK);
    let (_, current) = w
        .pay
        .webhooks()
        .rotate_company_callback_secret(&a.owner, a.company, PAY)
        .unwrap();
    // Both secrets as an older key (or the format before the key id was bound) left them.
    let aad = format!("webhook_callbacks:{}:company_payment", a.company);
    {
        let mut t = w.store.write();
        let cb = t.callbacks.iter_mut().find(|c| c.kind == PAY).unwrap();
        cb.secret.sealed = FakeSealer::sealed_under_old_key(current.expose(), &aad);
        let (prev, _) = cb.previous.as_mut().unwrap();
        prev.sealed = FakeSealer::sealed_under_old_key(old.expose(), &aad);
    }
    let before = w.callback(&a, PAY);
    // They still open and sign.
    let d = w.emit_one(&link);
    let both = vec![current.expose().to_owned(), old.expose().to_owned()];
    assert_eq!(w.signing_secrets_now(d.id), both);
    let seals = w.sealer.seal_calls().len();

    // The next save writes them in the current form: the same secrets, nothing else changed.
    w.pay
        .webhooks()
        .put_company_callback(&a.owner, a.company, PAY, NEW_HOOK)
        .unwrap();
    let after = w.callback(&a, PAY);
    assert_eq!(
        after.secret,
        StoredSigningSecret {
            sealed: FakeSealer::sealed(current.expose(), &aad),
            ..before.secret.clone()
        }
    );
    let (prev, until) = after.previous.clone().unwrap();
    assert_eq!(
        (prev, until),
        (
            StoredSigningSecret {
                sealed: FakeSealer::sealed(old.expose(), &aad),
                ..before.previous.clone().unwrap().0
            },
            before.previous.unwrap().1
        )
    );
    assert_eq!(w.sealer.seal_calls().len(), seals + 2);
    assert_eq!(w.signing_secrets_now(d.id), both);

    // Current values are not sealed again.
    w.pay
        .webhooks()
        .put_company_callback(&a.owner, a.company, PAY, HOOK)
        .unwrap();
    assert_eq!(w.sealer.seal_calls().len(), seals + 2);
    assert_eq!(w.callback(&a, PAY).secret, after.secret);

    // A rotation keeps the previous secret in the current form as well.
    w.store
        .write()
        .callbacks
        .iter_mut()
        .find(|c| c.kind == PAY)
        .unwrap()
        .secret
        .sealed = FakeSealer::sealed_under_old_key(current.expose(), &aad);
    let (_, newest) = w
        .pay
        .webhooks()
        .rotate_company_callback_secret(&a.owner, a.company, PAY)
        .unwrap();
    let rotated = w.callback(&a, PAY);
    assert_eq!(
        rotated.previous.unwrap().0.sealed,
        FakeSealer::sealed(current.expose(), &aad)
    );
    assert_eq!(
        rotated.secret.sealed,
        FakeSealer::sealed(newest.expose(), &aad)
    );
}

#[test]
fn rotation_issues_a_new_secret_and_keeps_the_old_one_for_24_hours() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let old = w.set_callback(&a, PAY, HOOK);
    let before = w.callback(&a, PAY);
    w.advance(Duration::hours(1));

    let (view, new) = w
        .pay
        .webhooks()
        .rotate_company_callback_secret(&a.owner, a.company, PAY)
        .unwrap();
    assert_signing_secret(&new);
    assert_ne!(new, old);
    let aad = format!("webhook_callbacks:{}:company_payment", a.company);
    assert_eq!(
        w.callback(&a, PAY),
        CompanyCallback {
            company_id: a.company,
            kind: PAY,
            url: HOOK.into(),
            secret: StoredSigningSecret {
                sealed: FakeSealer::sealed(new.expose(), &aad),
                last4: last4_of(&new),
                created_at: w.now(),
            },
            previous: Some((before.secret, w.now().plus(Duration::hours(24)))),
            updated_at: w.now(),
            version: before.version + 1,
        }
    );
    assert_eq!(
        view,
        CallbackView {
            url: HOOK.into(),
            secret_last4: last4_of(&new),
            secret_created_at: w.now(),
        }
    );
    assert_eq!(
        w.pay.webhooks().company_callback(&a.owner, a.company, PAY),
        Ok(Some(view))
    );
}

#[test]
fn rotating_without_a_callback_is_not_found() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let not_found = NotFound { kind: "Callback" };
    for kind in [PAY, SHARED] {
        assert_eq!(
            w.pay
                .webhooks()
                .rotate_company_callback_secret(&a.owner, a.company, kind)
                .map(|_| ()),
            Err(not_found.into())
        );
    }
    // One kind set does not make the other rotatable.
    w.set_callback(&a, PAY, HOOK);
    assert_eq!(
        w.pay
            .webhooks()
            .rotate_company_callback_secret(&a.owner, a.company, SHARED)
            .map(|_| ()),
        Err(not_found.into())
    );
    assert_eq!(w.store.calls("save_company_callback"), 1);
    assert_eq!(w.sealer.seal_calls().len(), 1);
}

#[test]
fn only_the_company_kinds_are_company_callbacks() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    w.set_callback(&a, PAY, HOOK);
    w.store.reset_calls();
    for kind in [CallbackKind::AnonymousLink, CallbackKind::Grant] {
        let k = kind.as_str();
        assert!(
            w.pay
                .webhooks()
                .company_callback(&a.owner, a.company, kind)
                .is_err(),
            "{k}"
        );
        assert!(
            w.pay
                .webhooks()
                .put_company_callback(&a.owner, a.company, kind, HOOK)
                .is_err(),
            "{k}"
        );
        assert!(
            w.pay
                .webhooks()
                .rotate_company_callback_secret(&a.owner, a.company, kind)
                .is_err(),
            "{k}"
        );
    }
    assert_eq!(w.store.writes(), 0);
    assert_eq!(w.sealer.seal_calls().len(), 1);
    assert_eq!(w.store.snapshot().callbacks.len(), 1);
}

#[test]
fn a_url_change_racing_a_rotation_keeps_the_rotated_secret() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    w.set_callback(&a, PAY, HOOK);
    let before_rotation = w.callback(&a, PAY);
    let (_, rotated) = w
        .pay
        .webhooks()
        .rotate_company_callback_secret(&a.owner, a.company, PAY)
        .unwrap();
    // The URL change read the row just before the rotation committed.
    w.store.serve_stale_callback_read(before_rotation);
    let _ = w
        .pay
        .webhooks()
        .put_company_callback(&a.owner, a.company, PAY, NEW_HOOK);
    let aad = format!("webhook_callbacks:{}:company_payment", a.company);
    assert_eq!(
        w.callback(&a, PAY).secret.sealed.sealed,
        FakeSealer::sealed(rotated.expose(), &aad).sealed,
        "the secret the rotation returned was dropped"
    );
}

// =====================================================================================
// emit_link_event
// =====================================================================================

#[test]
fn without_a_callback_an_event_has_no_delivery() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let b = w.team("Beta", "ops@beta.example");
    // Another company's callback does not receive A's events.
    w.set_callback(&b, PAY, "https://hooks.beta.example/pay");
    w.set_callback(&b, SHARED, "https://legacy.beta.example/pay");
    let link = w.new_link(&a.key);
    assert_eq!(w.emit(&link), vec![]);
    assert_eq!(w.store.stored_deliveries(), vec![]);
}

#[test]
fn the_company_payment_callback_receives_the_payment_envelope() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let link = w.link_with_order(&a.key, ORDER);
    w.set_callback(&a, PAY, HOOK);
    w.advance(Duration::minutes(7));
    w.store.reset_calls();
    let session = SessionSnapshot {
        id: Some("s1".into()),
        status: Some("complete".into()),
        previous_status: Some("pending".into()),
        ..Default::default()
    };
    let sent = w
        .pay
        .webhooks()
        .emit_link_event(&link, status_changed(), "sandbox_deposit", session.clone())
        .unwrap();
    assert_eq!(sent.len(), 1);
    assert_eq!(w.store.stored_deliveries(), sent);
    assert_eq!(w.store.calls("enqueue_link_event"), 1);
    assert_eq!(w.store.calls("insert_deliveries"), 0, "one transaction");

    let d = &sent[0];
    assert_eq!(d.company_id, a.company);
    assert_eq!(d.target, PAY);
    assert_eq!(d.url, HOOK);
    assert_eq!(d.event, status_changed());
    assert_eq!(d.origin, DeliveryOrigin::Event);
    assert_eq!(d.status, DeliveryStatus::Pending);
    assert_eq!(d.attempts, 0);
    assert_eq!(d.next_attempt_at, Some(w.now()));
    assert_eq!(d.last_attempt_at, None);
    assert_eq!(d.last_response_status, None);
    assert_eq!(d.last_error, None);
    assert_eq!(d.payment_link_uid.as_deref(), Some(link.uid.as_str()));
    assert_eq!(d.subscription_uid, None);
    assert_eq!(d.order_id.as_deref(), Some(ORDER));
    assert_eq!(d.created_at, w.now());
    assert_ne!(d.group_id, d.id);

    let v = json(d);
    assert_eq!(v["deliveryId"], d.id.to_string());
    assert_eq!(v["type"], "pay.payment.status_changed");
    assert_eq!(v["createdAt"], w.now().to_rfc3339());
    assert_eq!(v["sequence"], 1);
    assert_eq!(v["event"]["type"], "status_changed");
    assert_eq!(v["event"]["trigger"], "sandbox_deposit");
    assert_eq!(v["paymentLink"]["id"], link.id.to_string());
    assert_eq!(v["paymentLink"]["uid"], link.uid.as_str());
    assert_eq!(v["paymentLink"]["merchantOrderId"], ORDER);
    assert_eq!(
        v["paymentLink"]["publicUrl"],
        format!("https://pay.example/pay/{}", link.uid)
    );
    assert_eq!(v["session"]["status"], "complete");
    // Exactly the domain's payment envelope for this delivery.
    let draft = PaymentEventDraft {
        event: status_changed(),
        trigger: "sandbox_deposit".into(),
        link: LinkSnapshot::of(&link, "https://pay.example"),
        session,
        created_at: w.now(),
        sequence: 1,
    };
    assert_eq!(d.body, draft.body_for(d.id));
}

#[test]
fn the_company_payment_callback_takes_precedence_over_the_legacy_one() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let link = w.new_link(&a.key);

    // Only the legacy callback: it receives the event.
    w.set_callback(&a, SHARED, LEGACY);
    let d = w.emit_one(&link);
    assert_eq!((d.target, d.url.as_str()), (SHARED, LEGACY));

    // Both: only the company payment callback.
    w.set_callback(&a, PAY, HOOK);
    let d = w.emit_one(&link);
    assert_eq!((d.target, d.url.as_str()), (PAY, HOOK));

    // Links made in the dashboard too.
    let by_session = w.new_link(&w.sign_in_principal(&a.owner));
    let d = w.emit_one(&by_session);
    assert_eq!((d.target, d.url.as_str()), (PAY, HOOK));
    assert_eq!(w.store.stored_deliveries().len(), 3);
}

#[test]
fn grant_made_and_anonymous_links_reach_no_company_callback() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    w.set_callback(&a, PAY, HOOK);
    w.set_callback(&a, SHARED, LEGACY);
    let g = grant(a.company, 1, &[Scope::PaymentLinksWrite]);
    let by_grant = w.new_link(&g);
    let own = w.new_link(&a.key);
    let anonymous = PaymentLink {
        id: PaymentLinkId(uuid::Uuid::from_u128(u128::MAX)),
        uid: LinkUid::parse("Anonymous0000000000000").unwrap(),
        created_by: CreatedBy::Anonymous,
        ..own
    };
    w.store.insert_link(&anonymous, None).unwrap();
    assert_eq!(w.emit(&by_grant), vec![]);
    assert_eq!(w.emit(&anonymous), vec![]);
    assert_eq!(w.store.stored_deliveries(), vec![]);
}

#[test]
fn each_event_of_a_link_has_the_next_sequence_number() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    w.set_callback(&a, PAY, HOOK);
    let one = w.new_link(&a.key);
    let two = w.new_link(&a.key);
    let seq = |d: &Delivery| json(d)["sequence"].as_u64().unwrap();

    let first: Vec<Delivery> = (0..3).map(|_| w.emit_one(&one)).collect();
    assert_eq!(first.iter().map(seq).collect::<Vec<_>>(), vec![1, 2, 3]);
    // Per link.
    assert_eq!(seq(&w.emit_one(&two)), 1);
    assert_eq!(seq(&w.emit_one(&one)), 4);
    assert_eq!(seq(&w.emit_one(&two)), 2);
    // Each event is its own group with its own delivery.
    let mut groups: Vec<uuid::Uuid> = first.iter().map(|d| d.group_id).collect();
    groups.sort();
    groups.dedup();
    assert_eq!(groups.len(), 3);
}

// =====================================================================================
// send_test_event
// =====================================================================================

#[test]
fn send_test_event_needs_webhooks_write_and_a_visible_link() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let b = w.team("Beta", "ops@beta.example");
    w.set_callback(&a, PAY, HOOK);
    w.set_callback(&b, PAY, "https://hooks.beta.example/pay");
    let link = w.new_link(&a.key);
    let b_link = w.new_link(&b.key);
    w.store.reset_calls();

    let no_write = grant(
        a.company,
        1,
        &[
            Scope::WebhooksRead,
            Scope::PaymentLinksRead,
            Scope::PaymentLinksWrite,
        ],
    );
    assert_eq!(
        w.pay.webhooks().send_test_event(&no_write, &link.uid),
        Err(Denied::MissingScope {
            scope: Scope::WebhooksWrite,
            dpop_bound: false
        }
        .into())
    );
    let member = w.member(a.company, "m@acme.example", Role::Member);
    assert_eq!(
        w.pay
            .webhooks()
            .send_test_event(&w.sign_in_principal(&member), &link.uid),
        Err(Denied::Forbidden.into())
    );
    let unknown = LinkUid::parse("Unknown000000000000000").unwrap();
    for uid in [&b_link.uid, &unknown] {
        assert_eq!(
            w.pay.webhooks().send_test_event(&a.key, uid),
            Err(LINK_NOT_FOUND.into()),
            "{uid:?}"
        );
    }
    // A grant sees only its own links.
    let writer = grant(a.company, 2, &[Scope::WebhooksWrite]);
    assert_eq!(
        w.pay.webhooks().send_test_event(&writer, &link.uid),
        Err(LINK_NOT_FOUND.into())
    );
    assert_eq!(w.store.stored_deliveries(), vec![]);
    assert_eq!(w.store.calls("enqueue_link_event"), 0);
}

#[test]
fn send_test_event_without_a_callback_is_a_validation_error() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let link = w.new_link(&a.key);
    assert_eq!(
        field_of(w.pay.webhooks().send_test_event(&a.key, &link.uid)),
        "paymentLinkUid"
    );
    assert_eq!(w.store.stored_deliveries(), vec![]);
}

#[test]
fn send_test_event_enqueues_a_test_delivery_to_the_callback() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let link = w.link_with_order(&a.key, ORDER);
    w.set_callback(&a, PAY, HOOK);
    w.advance(Duration::minutes(1));
    let sent = w.pay.webhooks().send_test_event(&a.key, &link.uid).unwrap();
    assert_eq!(sent.len(), 1);
    assert_eq!(w.store.stored_deliveries(), sent);
    let d = &sent[0];
    assert_eq!(d.event, EventKind::Test);
    assert_eq!((d.target, d.url.as_str()), (PAY, HOOK));
    assert_eq!(d.status, DeliveryStatus::Pending);
    assert_eq!(d.next_attempt_at, Some(w.now()));
    assert_eq!(d.payment_link_uid.as_deref(), Some(link.uid.as_str()));
    let v = json(d);
    assert_eq!(v["type"], "pay.webhook.test");
    assert_eq!(v["event"]["type"], "test");
    assert_eq!(v["event"]["trigger"], "merchant_test");
    assert_eq!(v["deliveryId"], d.id.to_string());
    assert_eq!(v["paymentLink"]["uid"], link.uid.as_str());

    // An admin's session may send one too; the header names the event.
    let admin = w.member(a.company, "admin@acme.example", Role::Admin);
    let sent = w
        .pay
        .webhooks()
        .send_test_event(&w.sign_in_principal(&admin), &link.uid)
        .unwrap();
    let req = w.pay.webhooks().prepare_attempt(&sent[0]).unwrap();
    assert_eq!(header(&req, "x-pay-event"), "test");
}

// =====================================================================================
// Dispatcher: claim, prepare, record
// =====================================================================================

#[test]
fn claim_returns_due_deliveries_oldest_first_and_leases_them() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    w.set_callback(&a, PAY, HOOK);
    let link = w.new_link(&a.key);
    let first = w.emit_one(&link);
    w.advance(Duration::seconds(1));
    let second = w.emit_one(&link);
    let later = Delivery {
        id: uuid::Uuid::from_u128(9_000_000),
        next_attempt_at: Some(w.now().plus(Duration::minutes(10))),
        ..second.clone()
    };
    w.store
        .insert_deliveries(std::slice::from_ref(&later))
        .unwrap();
    let now = w.now();

    assert_eq!(
        ids(&w.pay.webhooks().claim_due_deliveries(1).unwrap()),
        vec![first.id]
    );
    let claimed = w.pay.webhooks().claim_due_deliveries(10).unwrap();
    assert_eq!(ids(&claimed), vec![second.id]);
    assert_eq!(
        claimed[0].next_attempt_at,
        Some(now.plus(Duration::seconds(60)))
    );
    for id in [first.id, second.id] {
        let d = w.delivery_now(id);
        assert_eq!(d.next_attempt_at, Some(now.plus(Duration::seconds(60))));
        assert_eq!((d.status, d.attempts), (DeliveryStatus::Pending, 0));
    }
    // Leased: nobody else gets them until the lease ends on the service clock.
    assert_eq!(w.claim(), vec![]);
    w.wall.advance(Duration::hours(1));
    assert_eq!(w.claim(), vec![]);
    w.advance(Duration::seconds(59));
    assert_eq!(w.claim(), vec![]);
    w.advance(Duration::seconds(1));
    assert_eq!(ids(&w.claim()), vec![first.id, second.id]);
    assert_eq!(w.claim(), vec![]);
    // Not due before its time.
    assert_eq!(
        w.delivery_now(later.id).next_attempt_at,
        later.next_attempt_at
    );
    w.advance(Duration::minutes(10));
    assert_eq!(ids(&w.claim()), vec![first.id, second.id, later.id]);
}

#[test]
fn a_dispatcher_may_claim_for_its_own_lease() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    w.set_callback(&a, PAY, HOOK);
    let link = w.new_link(&a.key);
    let d = w.emit_one(&link);
    let claimed = w
        .pay
        .webhooks()
        .claim_due_deliveries_for(10, Duration::seconds(5))
        .unwrap();
    assert_eq!(ids(&claimed), vec![d.id]);
    // Both clocks move together here: this is about the lease's length, not its clock.
    let both = |by: Duration| {
        w.advance(by);
        w.wall.advance(by);
    };
    both(Duration::seconds(4));
    assert_eq!(w.claim(), vec![], "still leased");
    both(Duration::seconds(1));
    assert_eq!(
        ids(&w.claim()),
        vec![d.id],
        "the lease ran out: claimed again"
    );
}

#[test]
fn prepare_attempt_builds_the_spec_headers_signed_at_wall_time() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let secret = w.set_callback(&a, PAY, HOOK);
    let link = w.new_link(&a.key);
    let d = w.emit_one(&link);
    // Business time moved days ahead (sandbox test clock); real time did not.
    w.advance(Duration::days(3));
    let claimed = w.claim();
    assert_eq!(ids(&claimed), vec![d.id]);
    w.store.reset_calls();

    let req = w.pay.webhooks().prepare_attempt(&claimed[0]).unwrap();
    let t = w.wall.now().unix_seconds();
    assert_eq!(t, WALL_MS / 1000);
    assert_ne!(t, w.now().unix_seconds());
    let expected: Vec<(String, String)> = [
        ("content-type", "application/json".to_owned()),
        ("user-agent", "Pay-Webhooks/1.0".to_owned()),
        ("x-pay-delivery-id", d.id.to_string()),
        ("x-pay-delivery-group-id", d.group_id.to_string()),
        ("x-pay-delivery-origin", "event".to_owned()),
        ("x-pay-event", "status_changed".to_owned()),
        ("x-pay-attempt", "1".to_owned()),
        ("x-pay-signature", format!("t={t},v1={}", secret.expose())),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_owned(), v))
    .collect();
    assert_eq!(req.headers, expected);
    assert_eq!(req.delivery_id, d.id);
    assert_eq!(req.url, HOOK);
    assert_eq!(req.body, d.body);
    assert_eq!(req.attempt, 1);
    assert_eq!(
        w.signer.calls(),
        vec![SignCall {
            secrets: vec![secret.expose().to_owned()],
            t,
            body: d.body.clone(),
        }]
    );
    assert_eq!(
        *w.sealer.opened_with.lock().unwrap(),
        vec![format!("webhook_callbacks:{}:company_payment", a.company)]
    );
    assert_eq!(w.store.writes(), 0, "preparing writes nothing");

    // The next attempt is number 2, and `t` follows the wall clock.
    w.pay
        .webhooks()
        .record_attempt(&claimed[0], answered(500))
        .unwrap();
    w.advance(Duration::minutes(5));
    w.wall.advance(Duration::seconds(42));
    let again = w.claim();
    let req = w.pay.webhooks().prepare_attempt(&again[0]).unwrap();
    assert_eq!(header(&req, "x-pay-attempt"), "2");
    assert_eq!(req.attempt, 2);
    assert_eq!(w.signer.last().t, t + 42);
    assert_eq!(
        header(&req, "x-pay-signature"),
        format!("t={},v1={}", t + 42, secret.expose())
    );
}

#[test]
fn during_a_rotation_both_secrets_sign_for_24_hours_of_service_time() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let old = w.set_callback(&a, PAY, HOOK);
    let link = w.new_link(&a.key);
    let d = w.emit_one(&link);
    w.advance(Duration::hours(1));
    let (_, new) = w
        .pay
        .webhooks()
        .rotate_company_callback_secret(&a.owner, a.company, PAY)
        .unwrap();
    let both = vec![new.expose().to_owned(), old.expose().to_owned()];

    let req = w
        .pay
        .webhooks()
        .prepare_attempt(&w.delivery_now(d.id))
        .unwrap();
    assert_eq!(w.signer.last().secrets, both, "current first");
    assert_eq!(
        header(&req, "x-pay-signature"),
        format!(
            "t={},v1={},v1={}",
            w.wall.now().unix_seconds(),
            new.expose(),
            old.expose()
        )
    );
    // Real time does not end the grace; the service clock does.
    w.wall.advance(Duration::days(3));
    assert_eq!(w.signing_secrets_now(d.id), both);
    w.advance(Duration::hours(24) - Duration::milliseconds(1));
    assert_eq!(w.signing_secrets_now(d.id), both);
    w.advance(Duration::milliseconds(1));
    assert_eq!(w.signing_secrets_now(d.id), vec![new.expose().to_owned()]);
    w.advance(Duration::days(30));
    assert_eq!(w.signing_secrets_now(d.id), vec![new.expose().to_owned()]);
}

#[test]
fn record_attempt_moves_the_delivery_by_its_outcome() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    w.set_callback(&a, PAY, HOOK);
    let link = w.new_link(&a.key);
    for _ in 0..4 {
        w.emit_one(&link);
    }
    let claimed = w.claim();
    assert_eq!(claimed.len(), 4);
    let now = w.now();
    let retry_at = Some(now.plus(Duration::minutes(5)));

    let cases = [
        (answered(204), DeliveryStatus::Succeeded, None),
        (answered(500), DeliveryStatus::Retrying, retry_at),
        (answered(302), DeliveryStatus::Retrying, retry_at),
        (timed_out(), DeliveryStatus::Retrying, retry_at),
    ];
    for (d, (outcome, status, next)) in claimed.iter().zip(cases) {
        let after = w.pay.webhooks().record_attempt(d, outcome.clone()).unwrap();
        assert_eq!(
            after,
            AfterAttempt {
                status,
                next_attempt_at: next
            },
            "{outcome:?}"
        );
        let stored = w.delivery_now(d.id);
        assert_eq!(stored.status, status);
        assert_eq!(stored.attempts, 1);
        assert_eq!(stored.next_attempt_at, next);
        assert_eq!(stored.last_attempt_at, Some(now));
        assert_eq!(stored.last_response_status, outcome.status);
        assert_eq!(stored.last_error, outcome.error);
        assert_eq!(
            w.store.stored_attempts(d.id),
            vec![AttemptRecord {
                delivery_id: d.id,
                number: 1,
                at: now,
                outcome,
            }]
        );
    }
    // The succeeded one is never claimed again; the others are, five minutes later.
    w.advance(Duration::minutes(4));
    assert_eq!(w.claim(), vec![]);
    w.advance(Duration::minutes(1));
    assert_eq!(ids(&w.claim()), ids(&claimed[1..]));
    w.advance(Duration::days(1));
    assert!(!ids(&w.claim()).contains(&claimed[0].id));
}

#[test]
fn eleven_failed_attempts_five_minutes_apart_end_failed() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    w.set_callback(&a, PAY, HOOK);
    let link = w.new_link(&a.key);
    let d = w.emit_one(&link);
    let start = w.now();

    for n in 1..=11u32 {
        let claimed = w.claim();
        assert_eq!(ids(&claimed), vec![d.id], "attempt {n}");
        let req = w.pay.webhooks().prepare_attempt(&claimed[0]).unwrap();
        assert_eq!(header(&req, "x-pay-attempt"), n.to_string());
        let after = w
            .pay
            .webhooks()
            .record_attempt(&claimed[0], answered(503))
            .unwrap();
        if n < 11 {
            assert_eq!(
                after,
                AfterAttempt {
                    status: DeliveryStatus::Retrying,
                    next_attempt_at: Some(w.now().plus(Duration::minutes(5))),
                },
                "attempt {n}"
            );
            // Not before its time.
            w.advance(Duration::minutes(4));
            assert_eq!(w.claim(), vec![], "attempt {n}");
            w.advance(Duration::minutes(1));
        } else {
            assert_eq!(
                after,
                AfterAttempt {
                    status: DeliveryStatus::Failed,
                    next_attempt_at: None,
                }
            );
        }
    }
    let failed = w.delivery_now(d.id);
    assert_eq!(failed.status, DeliveryStatus::Failed);
    assert_eq!(failed.attempts, 11);
    assert_eq!(failed.next_attempt_at, None);
    assert_eq!(w.now(), start.plus(Duration::minutes(50)));

    let (logged, attempts) = w.pay.webhooks().delivery(&a.key, DeliveryId(d.id)).unwrap();
    assert_eq!(logged, failed);
    assert_eq!(
        attempts.iter().map(|r| r.number).collect::<Vec<_>>(),
        (1..=11).collect::<Vec<u32>>()
    );
    for r in &attempts {
        assert_eq!(
            r.at,
            start.plus(Duration::minutes(5 * i64::from(r.number - 1)))
        );
        assert_eq!(r.outcome, answered(503));
    }
    // Terminal: never claimed again, and no twelfth attempt.
    w.advance(Duration::days(1));
    assert_eq!(w.claim(), vec![]);
    assert!(w
        .pay
        .webhooks()
        .record_attempt(&failed, answered(200))
        .is_err());
    assert_eq!(w.store.stored_attempts(d.id).len(), 11);
}

#[test]
fn retry_after_on_503_schedules_the_next_attempt_later() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    w.set_callback(&a, PAY, HOOK);
    let link = w.new_link(&a.key);
    let d = w.emit_one(&link);
    let claimed = w.claim();
    let now = w.now();
    let busy = AttemptOutcome {
        retry_after: Some(Duration::seconds(900)),
        ..answered(503)
    };
    assert_eq!(
        w.pay.webhooks().record_attempt(&claimed[0], busy),
        Ok(AfterAttempt {
            status: DeliveryStatus::Retrying,
            next_attempt_at: Some(now.plus(Duration::minutes(15))),
        })
    );
    assert_eq!(
        w.delivery_now(d.id).next_attempt_at,
        Some(now.plus(Duration::minutes(15)))
    );
    w.advance(Duration::minutes(15) - Duration::seconds(1));
    assert_eq!(w.claim(), vec![]);
    w.advance(Duration::seconds(1));
    assert_eq!(ids(&w.claim()), vec![d.id]);
}

#[test]
fn an_attempt_recorded_on_a_stale_claim_is_refused() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    w.set_callback(&a, PAY, HOOK);
    let link = w.new_link(&a.key);
    let d = w.emit_one(&link);
    // Dispatcher 1 claims and stalls past its lease; dispatcher 2 claims the same delivery.
    let first = w.claim();
    w.advance(Duration::seconds(60));
    let second = w.claim();
    assert_eq!(ids(&second), vec![d.id]);
    w.pay
        .webhooks()
        .record_attempt(&second[0], answered(500))
        .unwrap();
    assert!(w
        .pay
        .webhooks()
        .record_attempt(&first[0], answered(200))
        .is_err());
    let stored = w.delivery_now(d.id);
    assert_eq!(
        (stored.status, stored.attempts),
        (DeliveryStatus::Retrying, 1)
    );
    assert_eq!(w.store.stored_attempts(d.id).len(), 1);
    assert_eq!(w.store.stored_attempts(d.id)[0].outcome, answered(500));
}

// =====================================================================================
// Delivery log and resend
// =====================================================================================

#[test]
fn delivery_log_and_resend_need_their_scopes() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    w.set_callback(&a, PAY, HOOK);
    let link = w.new_link(&a.key);
    let d = w.emit_one(&link);
    let id = DeliveryId(d.id);
    w.store.reset_calls();

    let none = grant(
        a.company,
        1,
        &[Scope::PaymentLinksRead, Scope::PaymentLinksWrite],
    );
    assert_eq!(
        w.pay.webhooks().deliveries(&none, filter()),
        Err(Denied::MissingScope {
            scope: Scope::WebhooksRead,
            dpop_bound: false
        }
        .into())
    );
    assert_eq!(
        w.pay.webhooks().delivery(&none, id).map(|_| ()),
        Err(Denied::MissingScope {
            scope: Scope::WebhooksRead,
            dpop_bound: false
        }
        .into())
    );
    // A grant sees only its own grant's deliveries: the key's link's is not found.
    let read = grant(a.company, 2, &[Scope::WebhooksRead]);
    let own = |n: u128| Delivery {
        id: uuid::Uuid::from_u128(n),
        grant_id: Some(uuid::Uuid::from_u128(n)),
        ..d.clone()
    };
    pay_domain::webhooks::ports::WebhookStore::insert_deliveries(&*w.store, &[own(2), own(3)])
        .unwrap();
    w.store.reset_calls();
    assert_eq!(
        w.pay
            .webhooks()
            .deliveries(&read, filter())
            .map(|l| ids(&l)),
        Ok(vec![own(2).id])
    );
    assert_eq!(
        w.pay.webhooks().delivery(&read, id).map(|_| ()),
        Err(NotFound { kind: "Delivery" }.into())
    );
    let mine = DeliveryId(own(2).id);
    assert_eq!(
        w.pay.webhooks().delivery(&read, mine).map(|(x, _)| x.id),
        Ok(own(2).id)
    );
    assert_eq!(
        w.pay.webhooks().resend_delivery(&read, mine).map(|_| ()),
        Err(Denied::MissingScope {
            scope: Scope::WebhooksWrite,
            dpop_bound: false
        }
        .into())
    );
    let write = grant(a.company, 3, &[Scope::WebhooksWrite]);
    assert_eq!(
        w.pay.webhooks().deliveries(&write, filter()),
        Err(Denied::MissingScope {
            scope: Scope::WebhooksRead,
            dpop_bound: false
        }
        .into())
    );
    assert_eq!(
        w.pay.webhooks().delivery(&write, id).map(|_| ()),
        Err(Denied::MissingScope {
            scope: Scope::WebhooksRead,
            dpop_bound: false
        }
        .into())
    );
    // Members read the log but cannot resend.
    let member = w.member(a.company, "m@acme.example", Role::Member);
    let pm = w.sign_in_principal(&member);
    // (the whole company's, the grants' deliveries included)
    assert_eq!(
        w.pay.webhooks().deliveries(&pm, filter()).map(|l| ids(&l)),
        Ok(vec![d.id, own(3).id, own(2).id])
    );
    assert_eq!(
        w.pay.webhooks().resend_delivery(&pm, id).map(|_| ()),
        Err(Denied::Forbidden.into())
    );
    assert_eq!(w.store.calls("insert_deliveries"), 0);
    // Another grant's delivery is not found for the resend either; its own is resent.
    assert_eq!(
        w.pay.webhooks().resend_delivery(&write, mine).map(|_| ()),
        Err(NotFound { kind: "Delivery" }.into())
    );
    assert_eq!(w.store.calls("insert_deliveries"), 0);
    let theirs = DeliveryId(own(3).id);
    assert!(w.pay.webhooks().resend_delivery(&write, theirs).is_ok());
    assert_eq!(w.store.calls("insert_deliveries"), 1);
}

#[test]
fn delivery_log_limit_defaults_to_50_and_is_at_most_200() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    w.set_callback(&a, PAY, HOOK);
    let link = w.new_link(&a.key);
    let template = w.emit_one(&link);
    let more: Vec<Delivery> = (1..=210u32)
        .map(|i| Delivery {
            id: uuid::Uuid::from_u128(1_000_000 + u128::from(i)),
            created_at: template.created_at.plus(Duration::seconds(i64::from(i))),
            ..template.clone()
        })
        .collect();
    w.store.insert_deliveries(&more).unwrap();
    let newest: Vec<uuid::Uuid> = more.iter().rev().map(|d| d.id).collect();
    let list = |limit: usize| {
        w.pay
            .webhooks()
            .deliveries(&a.key, DeliveryFilter { limit, ..filter() })
            .map(|l| ids(&l))
    };

    assert_eq!(list(0), Ok(newest[..50].to_vec()));
    assert_eq!(list(3), Ok(newest[..3].to_vec()));
    assert_eq!(list(200), Ok(newest[..200].to_vec()));
    w.store.reset_calls();
    assert_eq!(
        field_of(w.pay.webhooks().deliveries(
            &a.key,
            DeliveryFilter {
                limit: 201,
                ..filter()
            }
        )),
        "limit"
    );
    assert_eq!(w.store.calls("deliveries"), 0);
}

#[test]
fn delivery_log_filters_reach_the_store_within_the_company() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let b = w.team("Beta", "ops@beta.example");
    w.set_callback(&a, PAY, HOOK);
    w.set_callback(&b, PAY, "https://hooks.beta.example/pay");
    let l1 = w.link_with_order(&a.key, "order-1");
    let l2 = w.link_with_order(&a.key, "order-2");
    let d1 = w.emit_one(&l1);
    w.advance(Duration::seconds(1));
    let d2 = w.emit_one(&l2);
    w.advance(Duration::seconds(1));
    let t1 = w.pay.webhooks().send_test_event(&a.key, &l1.uid).unwrap()[0].clone();
    // B has the same order id.
    let b_link = w.link_with_order(&b.key, "order-1");
    let bd = w.emit_one(&b_link);
    // d1 succeeds.
    let claimed = w.claim();
    let c1 = claimed.iter().find(|d| d.id == d1.id).unwrap();
    w.pay.webhooks().record_attempt(c1, answered(200)).unwrap();

    let list = |f: DeliveryFilter| ids(&w.pay.webhooks().deliveries(&a.key, f).unwrap());
    let by_search = |q: &str| {
        list(DeliveryFilter {
            search: Some(q.into()),
            ..filter()
        })
    };
    assert_eq!(list(filter()), vec![t1.id, d2.id, d1.id]);
    assert_eq!(
        list(DeliveryFilter {
            payment_link_uid: Some(l1.uid.to_string()),
            ..filter()
        }),
        vec![t1.id, d1.id]
    );
    assert_eq!(
        list(DeliveryFilter {
            status: Some(DeliveryStatus::Succeeded),
            ..filter()
        }),
        vec![d1.id]
    );
    assert_eq!(
        list(DeliveryFilter {
            status: Some(DeliveryStatus::Pending),
            ..filter()
        }),
        vec![t1.id, d2.id]
    );
    assert_eq!(
        list(DeliveryFilter {
            payment_link_uid: Some(l1.uid.to_string()),
            status: Some(DeliveryStatus::Pending),
            ..filter()
        }),
        vec![t1.id]
    );
    assert_eq!(by_search(&d2.id.to_string()), vec![d2.id]);
    assert_eq!(by_search("test"), vec![t1.id]);
    assert_eq!(by_search("status_changed"), vec![d2.id, d1.id]);
    assert_eq!(by_search(l2.uid.as_str()), vec![d2.id]);
    assert_eq!(by_search("order-1"), vec![t1.id, d1.id]);
    // Never another company's, even when asked by its link or id.
    assert_eq!(by_search(&bd.id.to_string()), Vec::<uuid::Uuid>::new());
    assert_eq!(
        list(DeliveryFilter {
            payment_link_uid: Some(b_link.uid.to_string()),
            ..filter()
        }),
        Vec::<uuid::Uuid>::new()
    );
    assert_eq!(
        ids(&w.pay.webhooks().deliveries(&b.key, filter()).unwrap()),
        vec![bd.id]
    );
}

#[test]
fn another_companys_or_a_malformed_delivery_is_not_found() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let b = w.team("Beta", "ops@beta.example");
    w.set_callback(&b, PAY, "https://hooks.beta.example/pay");
    let bd = w.emit_one(&w.new_link(&b.key));
    let claimed = w.claim();
    w.pay
        .webhooks()
        .record_attempt(&claimed[0], answered(500))
        .unwrap();
    let before = w.store.snapshot();
    w.store.reset_calls();

    // (A malformed id names no delivery: the HTTP edge answers it as this 404 before the
    // service, `edge::delivery_id`.)
    let unknown = DeliveryId(uuid::Uuid::from_u128(987_654_321));
    let bd_id = DeliveryId(bd.id);
    for id in [bd_id, unknown] {
        assert_eq!(
            w.pay.webhooks().delivery(&a.key, id).map(|_| ()),
            Err(DELIVERY_NOT_FOUND.into()),
            "{id:?}"
        );
        assert_eq!(
            w.pay.webhooks().resend_delivery(&a.key, id).map(|_| ()),
            Err(DELIVERY_NOT_FOUND.into()),
            "{id:?}"
        );
    }
    assert_eq!(w.store.writes(), 0);
    assert_eq!(w.store.snapshot(), before);
    // B sees its own, with its attempt.
    let (d, attempts) = w.pay.webhooks().delivery(&b.key, bd_id).unwrap();
    assert_eq!(d.id, bd.id);
    assert_eq!(attempts.len(), 1);
}

#[test]
fn resend_creates_a_manual_copy_in_the_same_group_due_now() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    w.set_callback(&a, PAY, HOOK);
    let link = w.link_with_order(&a.key, ORDER);
    let original = w.emit_one(&link);
    // It failed once.
    let claimed = w.claim();
    w.pay
        .webhooks()
        .record_attempt(&claimed[0], timed_out())
        .unwrap();
    let original = w.delivery_now(original.id);
    w.advance(Duration::hours(2));

    let resent = w
        .pay
        .webhooks()
        .resend_delivery(&a.key, DeliveryId(original.id))
        .unwrap();
    assert_ne!(resent.id, original.id);
    assert_eq!(
        resent,
        Delivery {
            id: resent.id,
            origin: DeliveryOrigin::Manual,
            status: DeliveryStatus::Pending,
            attempts: 0,
            next_attempt_at: Some(w.now()),
            last_attempt_at: None,
            last_response_status: None,
            last_error: None,
            body: resent.body.clone(),
            created_at: w.now(),
            ..original.clone()
        }
    );
    assert_eq!(resent.group_id, original.group_id);
    // The same body but for its own deliveryId.
    let (mut old_body, mut new_body) = (json(&original), json(&resent));
    assert_eq!(new_body["deliveryId"], resent.id.to_string());
    old_body["deliveryId"] = Value::Null;
    new_body["deliveryId"] = Value::Null;
    assert_eq!(new_body, old_body);
    assert_eq!(
        resent
            .body
            .replace(&resent.id.to_string(), &original.id.to_string()),
        original.body
    );
    // Stored as returned; the original is untouched.
    assert_eq!(w.delivery_now(resent.id), resent);
    assert_eq!(w.delivery_now(original.id), original);
    assert_eq!(
        w.pay.webhooks().delivery(&a.key, DeliveryId(resent.id)),
        Ok((resent.clone(), vec![]))
    );

    // It goes out now, as a manual first attempt of the same group.
    let claimed = w.claim();
    let c = claimed.iter().find(|d| d.id == resent.id).unwrap();
    let req = w.pay.webhooks().prepare_attempt(c).unwrap();
    assert_eq!(header(&req, "x-pay-delivery-id"), resent.id.to_string());
    assert_eq!(
        header(&req, "x-pay-delivery-group-id"),
        original.group_id.to_string()
    );
    assert_eq!(header(&req, "x-pay-delivery-origin"), "manual");
    assert_eq!(header(&req, "x-pay-attempt"), "1");
    assert_eq!(req.body, resent.body);
}

// =====================================================================================
// The fake's own guarantees
// =====================================================================================

#[test]
fn mem_store_enqueue_is_all_or_nothing_and_claims_only_live_deliveries() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    w.set_callback(&a, PAY, HOOK);
    let link = w.new_link(&a.key);
    let template = w.emit_one(&link);
    let before = w.store.snapshot();

    let fresh = |seq: u64| {
        vec![Delivery {
            id: uuid::Uuid::from_u128(5_000_000 + u128::from(seq)),
            ..template.clone()
        }]
    };
    let unknown = PaymentLinkId(uuid::Uuid::from_u128(123_456_789));
    assert!(w.store.enqueue_link_event(unknown, &fresh).is_err());
    assert_eq!(w.store.snapshot(), before);
    // A failing insert does not use up a sequence number.
    let duplicate = |_: u64| vec![template.clone()];
    assert!(w.store.enqueue_link_event(link.id, &duplicate).is_err());
    assert_eq!(w.store.snapshot(), before);
    let next = w.store.enqueue_link_event(link.id, &fresh).unwrap();
    assert_eq!(ids(&next), vec![uuid::Uuid::from_u128(5_000_002)]);

    // Terminal deliveries are never claimed, whatever their next_attempt_at says.
    w.store.write().deliveries.retain(|d| d.id == template.id);
    w.store.write().deliveries[0].status = DeliveryStatus::Succeeded;
    assert_eq!(w.claim(), vec![]);
    w.store.write().deliveries[0].status = DeliveryStatus::Failed;
    assert_eq!(w.claim(), vec![]);
    w.store.write().deliveries[0].status = DeliveryStatus::Retrying;
    assert_eq!(ids(&w.claim()), vec![template.id]);
}

#[test]
fn a_round_is_prepared_with_one_secret_read_and_recorded_at_once() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let secret = w.set_callback(&a, PAY, HOOK);
    let link = w.new_link(&a.key);
    let sent: Vec<Delivery> = (0..3).map(|_| w.emit_one(&link)).collect();
    let claimed = w.claim();
    assert_eq!(claimed.len(), 3);
    w.sealer.opened_with.lock().unwrap().clear();
    let prepared = w.pay.webhooks().prepare_attempts(&claimed);
    assert_eq!(prepared.len(), 3);
    for (req, d) in prepared.iter().zip(&claimed) {
        let req = req.as_ref().unwrap();
        assert_eq!(req.delivery_id, d.id);
        assert!(header(req, "x-pay-signature").ends_with(&format!("v1={}", secret.expose())));
    }
    assert_eq!(
        w.sealer.opened_with.lock().unwrap().len(),
        1,
        "the callback's secret is opened once per round"
    );
    // One outcome per delivery, recorded together; a second record of the same round is stale.
    let round: Vec<(Delivery, AttemptOutcome)> =
        claimed.iter().map(|d| (d.clone(), answered(200))).collect();
    assert_eq!(w.pay.webhooks().record_attempts(round).unwrap().recorded, 3);
    for d in &sent {
        assert_eq!(w.delivery_now(d.id).status, DeliveryStatus::Succeeded);
    }
    let stale: Vec<(Delivery, AttemptOutcome)> =
        claimed.iter().map(|d| (d.clone(), answered(200))).collect();
    // The fake records one by one and refuses a stale one; the diesel store skips it (0).
    if let Ok(n) = w.pay.webhooks().record_attempts(stale) {
        assert_eq!(
            n.recorded, 0,
            "attempts on finished deliveries are not recorded again"
        );
    }
    for d in &sent {
        assert_eq!(w.delivery_now(d.id).attempts, 1);
    }
}

mod current_target;

// =====================================================================================
// Grant webhook subscription: keyed writes
// =====================================================================================

#[test]
fn a_keyed_write_while_the_first_runs_is_in_flight_then_taken_over() {
    use pay_domain::kernel::idempotency::{IdempotencyConflict, IdempotencyKey, IdempotentRequest};
    use pay_domain::kernel::idempotency::{IdempotencyStore, CLAIM_LEASE};
    use pay_domain::webhooks::SubscriptionInput;

    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let g = grant(a.company, 5, &[Scope::WebhooksRead, Scope::WebhooksWrite]);
    let body = r#"{"url": "https://hooks.acme.example/pay"}"#;
    let input = || SubscriptionInput {
        urls: vec![("url", "https://hooks.acme.example/pay".into())],
        ..Default::default()
    };
    // The first request's claim, as it stands while that request still runs.
    let first = IdempotentRequest {
        scope: format!(
            "grant:{}:PUT:webhook-subscriptions/current",
            uuid::Uuid::from_u128(5)
        ),
        key: IdempotencyKey::parse("k-1").unwrap(),
        fingerprint: format!("d:{body}"),
    };
    let now = w.pay.now();
    w.store
        .claim_idempotency_key(&first, "first", now, now.plus(CLAIM_LEASE))
        .unwrap();
    let webhooks = w.pay.webhooks();
    assert_eq!(
        webhooks.put_grant_subscription(&g, input(), Some("k-1"), body),
        Err(IdempotencyConflict::InFlight.into())
    );
    assert_eq!(
        webhooks.put_grant_subscription(&g, input(), Some("k-1"), "{}"),
        Err(IdempotencyConflict::Reused.into())
    );
    assert_eq!(
        w.store.snapshot().grant_subscriptions.len(),
        0,
        "nothing written"
    );
    // The first died: after its lease, the same request takes the key over and runs once.
    w.advance(CLAIM_LEASE);
    let ran = webhooks
        .put_grant_subscription(&g, input(), Some("k-1"), body)
        .unwrap();
    assert!(ran.created && !ran.replayed && ran.signing_secret.is_some());
    let again = webhooks
        .put_grant_subscription(&g, input(), Some("k-1"), body)
        .unwrap();
    assert!(again.replayed);
    assert_eq!(again.signing_secret, ran.signing_secret);
    assert_eq!(w.store.snapshot().grant_subscriptions.len(), 1);
    // The answer is stored sealed, bound to its record.
    let stored = w.store.snapshot().idempotency;
    assert_eq!(stored.len(), 1);
    assert!(stored[0].answer.is_some());
}
