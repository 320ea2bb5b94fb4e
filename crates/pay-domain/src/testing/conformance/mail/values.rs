//! The mails and outcomes the mail cases store.

use super::*;

/// A stored link with a customer e-mail and the merchant's name, as request mails need.
pub fn link<S: Ports>(store: &S, company: CompanyId) -> PaymentLink {
    let mut l = link_value(company);
    l.payload.order_id = None;
    l.payload.customer_email = Some("payer@example.com".into());
    l.payload.merchant_name = Some("Acme Ltd".into());
    store.insert_link(&l, None).unwrap();
    l
}

/// A pending mail for the link, due at `due`, created at `created_at`.
pub fn mail(l: &PaymentLink, created_at: i64, due: i64) -> OutgoingMail {
    OutgoingMail {
        id: MailId(Uuid::now_v7()),
        company_id: l.company_id,
        link_id: l.id,
        link_uid: l.uid.clone(),
        kind: MailKind::PaymentRequest,
        to: "Payer.Name+tag@example.com".into(),
        subject: "Payment request from Acme Ltd (12.50 USDC) – é ✓".into(),
        text_body: "Hello,\n\nPay here: https://pay.example/pay/x\n".into(),
        html_body: "<p>Hello, <a href=\"https://pay.example/pay/x\">pay</a> &amp; é</p>".into(),
        status: MailStatus::Pending,
        attempts: 0,
        next_attempt_at: Some(ts(due)),
        last_attempt_at: None,
        last_error: None,
        created_at: ts(created_at),
        sent_at: None,
    }
}

pub fn sent(at: i64) -> AfterMailAttempt {
    AfterMailAttempt {
        status: MailStatus::Sent,
        next_attempt_at: None,
        last_error: None,
        sent_at: Some(ts(at)),
    }
}

pub fn retry(next: i64, error: &str) -> AfterMailAttempt {
    AfterMailAttempt {
        status: MailStatus::Pending,
        next_attempt_at: Some(ts(next)),
        last_error: Some(error.into()),
        sent_at: None,
    }
}
