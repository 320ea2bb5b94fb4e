//! The callbacks, attempts and builders the webhook cases store.

use super::*;

pub fn sealed(tag: &str) -> StoredSigningSecret {
    StoredSigningSecret {
        sealed: SealedSecret {
            key_id: format!("k-{tag}"),
            sealed: format!("bm9uY2U{tag}Y2lwaGVy"),
        },
        last4: format!("{tag:0>4}"),
        created_at: ts(T0),
    }
}

pub fn callback(company: CompanyId, kind: CallbackKind, url: &str) -> CompanyCallback {
    CompanyCallback {
        company_id: company,
        kind,
        url: url.into(),
        secret: sealed("a1"),
        previous: None,
        updated_at: ts(T0),
        version: 1,
    }
}

pub fn success(ms: u64) -> AttemptOutcome {
    AttemptOutcome {
        status: Some(200),
        duration_ms: ms,
        error: None,
        response_excerpt: Some("ok".into()),
        retry_after: None,
    }
}

pub fn attempt(d: &Delivery, number: u32, at: i64, outcome: AttemptOutcome) -> AttemptRecord {
    AttemptRecord {
        delivery_id: d.id,
        number,
        at: ts(at),
        outcome,
    }
}

pub fn filter() -> DeliveryFilter {
    DeliveryFilter {
        limit: 50,
        ..DeliveryFilter::default()
    }
}

/// Builds one delivery per call whose body carries the sequence number it was given.
pub fn builder(company: CompanyId, l: &PaymentLink) -> impl Fn(u64) -> Vec<Delivery> + '_ {
    move |n| {
        let mut d = delivery(company, T0, T0);
        d.payment_link_uid = Some(l.uid.to_string());
        d.body = format!(r#"{{"sequence":{n}}}"#);
        vec![d]
    }
}

pub fn sequences(deliveries: &[Delivery]) -> Vec<String> {
    deliveries.iter().map(|d| d.body.clone()).collect()
}
