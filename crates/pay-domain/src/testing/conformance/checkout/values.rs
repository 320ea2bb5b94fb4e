//! The sessions, writes and builders the checkout cases store.

use super::*;

/// A `build` that must not be called (no webhook event).
pub fn never(_: u64) -> Vec<Delivery> {
    panic!("build called")
}

/// A link of the company (not yet stored).
pub fn new_link(company: CompanyId, status: LinkStatus, expires_at: Option<i64>) -> PaymentLink {
    let mut l = link_value(company);
    l.status = status;
    l.payload.title = Some("Order 1".into());
    l.expires_at = expires_at.map(ts);
    l.created_by = CreatedBy::ApiKey(PartnerId(Uuid::now_v7()));
    l
}

/// An active link of the company, without expiry, in the store.
pub fn link<S: Ports>(store: &S, company: CompanyId) -> PaymentLink {
    let l = new_link(company, LinkStatus::Active, None);
    store.insert_link(&l, None).unwrap();
    l
}

/// A session of the link (not yet stored), every optional field empty.
pub fn session(
    l: &PaymentLink,
    status: SessionStatus,
    created_at: i64,
    expires_at: i64,
) -> PaymentSession {
    session_with_id(
        PaymentSessionId(Uuid::now_v7()),
        l,
        status,
        created_at,
        expires_at,
    )
}

pub fn session_with_id(
    id: PaymentSessionId,
    l: &PaymentLink,
    status: SessionStatus,
    created_at: i64,
    expires_at: i64,
) -> PaymentSession {
    PaymentSession {
        id,
        link_id: l.id,
        company_id: l.company_id,
        status,
        previous_status: None,
        version: 1,
        invoice_asset: "USD".into(),
        invoice_amount: crate::kernel::amount::Amount::parse("12.50", 2).expect("a literal amount"),
        selected_sell_asset: "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913".into(),
        required_sell_amount: crate::kernel::amount::Decimal::parse("12.562500")
            .expect("a literal decimal"),
        expected_buy_amount: crate::kernel::amount::Decimal::parse("12.50")
            .expect("a literal decimal"),
        destination_address: "0x00000000000000000000000000000000000000aa".into(),
        deposit_address: None,
        channel_id: None,
        composite_channel_id: None,
        source_chain: None,
        expires_at: ts(expires_at),
        settlement: crate::checkout::Settlement::default(),
        error_message: None,
        created_at: ts(created_at),
        updated_at: ts(created_at),
    }
}

/// The session after one more write: status moved, version and `updated_at` advanced.
pub fn moved(s: &PaymentSession, to: SessionStatus, at: i64) -> PaymentSession {
    PaymentSession {
        previous_status: Some(s.status),
        status: to,
        version: s.version + 1,
        updated_at: ts(at),
        ..s.clone()
    }
}

pub fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

pub fn entry(
    l: &PaymentLink,
    session: Option<PaymentSessionId>,
    kind: &str,
    at: i64,
) -> TimelineEvent {
    TimelineEvent {
        id: Uuid::now_v7(),
        link_id: l.id,
        session_id: session,
        kind: TimelineKind::parse(kind).expect("a timeline kind"),
        created_at: ts(at),
        facts: TimelineFacts::Deposit {
            amount: dec("12.50"),
        },
    }
}

/// A write with nothing but the session change.
pub fn write(l: &PaymentLink, change: SessionChange) -> LinkEventWrite {
    LinkEventWrite {
        link_id: l.id,
        change,
        processor_event_id: None,
        claim_link: None,
        timeline: vec![],
        webhook_events: 0,
        events: Vec::new(),
    }
}

pub fn insert(l: &PaymentLink, s: &PaymentSession) -> LinkEventWrite {
    LinkEventWrite {
        timeline: vec![entry(
            l,
            Some(s.id),
            "quote_created",
            s.created_at.unix_millis(),
        )],
        ..write(l, SessionChange::Insert(s.clone()))
    }
}

pub fn update(l: &PaymentLink, before: &PaymentSession, after: &PaymentSession) -> LinkEventWrite {
    LinkEventWrite {
        timeline: vec![entry(
            l,
            Some(after.id),
            "status_changed",
            after.updated_at.unix_millis(),
        )],
        ..write(
            l,
            SessionChange::Update {
                session: after.clone(),
                expected_version: before.version,
            },
        )
    }
}

/// Builds one delivery per sequence number handed out (`count` of them, from `first`), its body
/// naming the number.
pub fn builder(
    company: CompanyId,
    l: &PaymentLink,
    count: u64,
) -> impl Fn(u64) -> Vec<Delivery> + '_ {
    move |first| {
        (first..first + count)
            .map(|n| {
                let id = Uuid::now_v7();
                Delivery {
                    id,
                    group_id: Uuid::now_v7(),
                    company_id: company,
                    origin: DeliveryOrigin::Event,
                    event: EventKind::Payment(PaymentEvent::StatusChanged),
                    status: DeliveryStatus::Pending,
                    attempts: 0,
                    next_attempt_at: Some(ts(T0)),
                    last_attempt_at: None,
                    last_response_status: None,
                    last_error: None,
                    payment_link_uid: Some(l.uid.to_string()),
                    subscription_uid: None,
                    grant_id: None,
                    order_id: Some("o-1".into()),
                    target: CallbackKind::CompanyPayment,
                    url: "https://hooks.shop.example/pay".into(),
                    body: format!(r#"{{"sequence":{n}}}"#),
                    created_at: ts(T0),
                }
            })
            .collect()
    }
}

pub fn applied(outcome: WriteOutcome) -> Vec<Delivery> {
    match outcome {
        WriteOutcome::Applied(d) => d,
        other => panic!("expected Applied, got {other:?}"),
    }
}

pub fn sequences(deliveries: &[Delivery]) -> Vec<String> {
    deliveries.iter().map(|d| d.body.clone()).collect()
}

pub fn all_deliveries() -> DeliveryFilter {
    DeliveryFilter {
        limit: 500,
        ..DeliveryFilter::default()
    }
}
