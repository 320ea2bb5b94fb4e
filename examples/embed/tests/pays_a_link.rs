//! The embedding example creates a link and its payer pays it, over the in-memory stores.

use pay_domain::checkout::machine::SessionStatus;

#[test]
fn a_link_is_created_and_paid_without_a_server_or_a_database() {
    let host = pay_embed_example::build(1_795_327_640_000);
    let outcome = pay_embed_example::create_and_pay(&host).unwrap();
    assert_eq!(
        outcome.statuses,
        vec![
            SessionStatus::Quote,
            SessionStatus::Pending,
            SessionStatus::Complete,
            SessionStatus::Complete,
        ]
    );
    assert_eq!(
        outcome.public_url,
        format!("https://pay.example/pay/{}", outcome.link_uid)
    );
}
