//! Bookkeeping over the fakes: a completed session records its incoming transfer once (also
//! when the processor event is replayed: the completion is a domain event, consumed once), the sandbox's outgoing transfer, one expense per
//! outgoing transfer with every save versioned, the counterparty as a contact (a new vendor
//! inline, its wallet remembered and suggested), the export's pages, tenancy and scopes.

use super::*;
use pay_domain::bookkeeping::{
    header_record, ActivityFilter, ActivityRef, BookkeepingError, CounterpartyInput, Direction,
    ExportKind, ExportPeriod, OutgoingTransferInput, SaveExpenseInput, EXPORT_PAGE_SIZE,
};
use pay_domain::checkout::machine::SessionStatus;
use pay_domain::customers::ContactKind;
use pay_domain::kernel::amount::Decimal;

const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const VENDOR: &str = "0x8ba1f109551bD432803012645Ac136ddd64DBA72";

fn transfer(hash: char) -> OutgoingTransferInput {
    OutgoingTransferInput {
        chain: "eip155:8453".into(),
        tx_hash: format!("0x{}", hash.to_string().repeat(64)),
        log_index: 1,
        asset: BASE_USDC.into(),
        amount: "125.5".into(),
        to_address: VENDOR.into(),
        occurred_at: None,
    }
}

fn save(activity_id: &str, description: &str) -> SaveExpenseInput {
    SaveExpenseInput {
        activity_id: Some(activity_id.into()),
        activity_key: None,
        counterparty: Some(CounterpartyInput::NewVendor {
            email: "billing@hoster.example".into(),
            name: Some("Hoster".into()),
            client_id: None,
        }),
        category: "Hosting".into(),
        description: description.into(),
        notes: None,
        fiat_currency: Some("EUR".into()),
        fiat_amount: Some("115.20".into()),
        tax_amount: None,
        evidence_file_ids: vec![],
    }
}

#[test]
fn a_completed_session_records_its_incoming_transfer_once() {
    let w = world();
    let b = w.tenant("Acme", "ann@acme.example");
    let key = w.key_principal(&b);
    let link = w
        .pay
        .links()
        .create_link(
            &key,
            CreateLinkInput {
                skip_quote_acceptance: Some(true),
                ..amount("10")
            },
        )
        .unwrap();
    let s = w
        .pay
        .checkout()
        .start_session(&link.uid, BASE_USDC, ADDR)
        .unwrap();
    let deposit = || {
        w.pay.sandbox().sandbox_event(
            Some(&key),
            &link.uid,
            SandboxEvent::Deposit {
                amount: Decimal::parse("10").unwrap(),
                hold: false,
            },
            Some("dep-1"),
            None,
        )
    };
    assert_eq!(deposit().unwrap().status, SessionStatus::Complete);
    let list = w
        .pay
        .bookkeeping()
        .list_activity(&key, ActivityFilter::default())
        .unwrap();
    assert_eq!(list.len(), 1);
    let (a, has_expense) = &list[0];
    assert!(!has_expense);
    assert_eq!(a.direction, Direction::Incoming);
    assert_eq!(a.payment_session_id, Some(s.id));
    assert_eq!(a.amount, s.expected_buy_amount);
    assert_eq!(a.wallet_address, s.destination_address);
    assert_eq!(a.key.chain(), "eip155:8453");
    assert_eq!(a.key.tx_hash(), format!("0x{}", s.id.0.simple()));
    // The processor reports the event again: nothing is told again, nothing recorded twice.
    let calls = |w: &World| w.store.calls("record_activity");
    assert_eq!(calls(&w), 1);
    deposit().unwrap();
    assert_eq!(
        calls(&w),
        1,
        "a replayed processor event decides nothing new"
    );
    assert_eq!(
        w.pay
            .bookkeeping()
            .list_activity(&key, ActivityFilter::default())
            .unwrap()
            .len(),
        1
    );
    // The completion went through the event outbox and is done: the drain finds nothing.
    assert_eq!(w.pay.drain_events().unwrap().replayed, 0);
    assert_eq!(calls(&w), 1);
    // An incoming activity takes no expense.
    let err = w
        .pay
        .bookkeeping()
        .save_expense(&key, save(&a.id.to_string(), "x"))
        .unwrap_err();
    assert!(matches!(err, BookkeepingError::NotFound(_)), "{err:?}");
}

#[test]
fn one_expense_per_outgoing_transfer_every_save_versioned() {
    let w = world();
    let b = w.tenant("Acme", "ann@acme.example");
    let key = w.key_principal(&b);
    let books = w.pay.bookkeeping();
    let out = books.report_outgoing(&key, transfer('a')).unwrap();
    assert!(out.was_created());
    let out = out.activity().clone();
    assert_eq!(out.direction, Direction::Outgoing);
    assert_eq!(out.counterparty_address, VENDOR);
    assert!(!books
        .report_outgoing(&key, transfer('a'))
        .unwrap()
        .was_created());

    let first = books
        .save_expense(&key, save(&out.id.to_string(), "Servers"))
        .unwrap();
    assert!(first.created);
    let vendor = first.detail.contact.clone().unwrap();
    assert_eq!(vendor.kind, ContactKind::Vendor);
    w.advance(Duration::seconds(5));
    let by_key = SaveExpenseInput {
        activity_id: None,
        activity_key: Some(out.key.to_string()),
        counterparty: Some(CounterpartyInput::Existing(vendor.uid.to_string())),
        ..save("", "Servers, November")
    };
    let second = books.save_expense(&key, by_key).unwrap();
    assert!(!second.created);
    assert_eq!(second.detail.expense.id, first.detail.expense.id);
    assert_eq!(second.detail.expense.version, 2);
    let versions = &second.detail.versions;
    assert_eq!(versions.len(), 2);
    assert_eq!(versions[1].changes.len(), 1, "{:?}", versions[1].changes);
    assert_eq!(versions[1].changes[0].field, "description");
    assert!(versions[1].saved_by.starts_with("api_key:"));
    assert!(versions[1].saved_at > versions[0].saved_at);
    // The same save again changes nothing and is still a version.
    let third = books
        .save_expense(
            &key,
            SaveExpenseInput {
                counterparty: Some(CounterpartyInput::Existing(vendor.id.to_string())),
                ..save(&out.id.to_string(), "Servers, November")
            },
        )
        .unwrap();
    assert_eq!(third.detail.versions.len(), 3);
    assert!(third.detail.versions[2].changes.is_empty());

    // The vendor now knows the address: a new transfer there suggests it.
    let next = books.report_outgoing(&key, transfer('b')).unwrap();
    let detail = books
        .activity_detail(&key, &ActivityRef::Key(next.activity().key.clone()))
        .unwrap();
    assert_eq!(
        detail
            .suggested_contacts
            .iter()
            .map(|c| c.id)
            .collect::<Vec<_>>(),
        [vendor.id]
    );
    assert_eq!(detail.expense, None);
    // The same e-mail as a customer makes the vendor both.
    let as_customer = w
        .pay
        .customers()
        .upsert_customer(
            &key,
            pay_domain::customers::UpsertContactInput {
                email: "Billing@Hoster.example".into(),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(as_customer.contact().id, vendor.id);
    assert_eq!(as_customer.contact().kind, ContactKind::Both);

    // Another company: its own activity space, none of ours.
    let other = w.tenant("Other", "olga@other.example");
    let theirs = w.key_principal(&other);
    let err = books
        .save_expense(&theirs, save(&out.id.to_string(), "mine"))
        .unwrap_err();
    assert!(matches!(err, BookkeepingError::NotFound(_)), "{err:?}");
    assert!(matches!(
        books.activity_detail(&theirs, &ActivityRef::Id(out.id)),
        Err(BookkeepingError::NotFound(_))
    ));
    // Another company's contact is no counterparty of ours.
    let err = books
        .save_expense(
            &theirs,
            SaveExpenseInput {
                counterparty: Some(CounterpartyInput::Existing(vendor.id.to_string())),
                ..save(&out.id.to_string(), "x")
            },
        )
        .unwrap_err();
    assert!(matches!(err, BookkeepingError::NotFound(_)), "{err:?}");
}

#[test]
fn scopes_and_the_sandbox_switch() {
    let mut w = world();
    let b = w.tenant("Acme", "ann@acme.example");
    let key = w.key_principal(&b);
    let company = key.company_id;
    let out = w
        .pay
        .bookkeeping()
        .report_outgoing(&key, transfer('c'))
        .unwrap()
        .activity()
        .clone();
    let reader = grant(company, 1, &[Scope::BookkeepingRead]);
    let books = w.pay.bookkeeping();
    assert_eq!(
        books
            .list_activity(&reader, ActivityFilter::default())
            .unwrap()
            .len(),
        1
    );
    for err in [
        books
            .save_expense(&reader, save(&out.id.to_string(), "x"))
            .unwrap_err(),
        books.report_outgoing(&reader, transfer('d')).unwrap_err(),
    ] {
        assert!(matches!(err, BookkeepingError::Denied(_)), "{err:?}");
    }
    let customers_only = grant(company, 2, &[Scope::CustomersRead]);
    assert!(matches!(
        books.list_activity(&customers_only, ActivityFilter::default()),
        Err(BookkeepingError::Denied(_))
    ));
    assert!(w
        .pay
        .customers()
        .search_contacts(&reader, "anything", None)
        .unwrap()
        .is_empty());
    let writer = grant(company, 3, &[Scope::BookkeepingWrite]);
    assert!(
        books
            .save_expense(&writer, save(&out.id.to_string(), "x"))
            .unwrap()
            .created
    );
    // Outside sandbox mode the sandbox's stand-in for the processor is not there.
    w.rebuild(false);
    assert!(matches!(
        w.pay.bookkeeping().report_outgoing(&key, transfer('e')),
        Err(BookkeepingError::NotFound(_))
    ));
}

#[test]
fn the_export_reads_page_after_page_to_the_end() {
    let w = world();
    let b = w.tenant("Acme", "ann@acme.example");
    let key = w.key_principal(&b);
    let books = w.pay.bookkeeping();
    let start =
        pay_domain::kernel::timestamp::Timestamp::from_unix_millis(1_767_225_600_000).unwrap();
    // Two full pages, every transfer at the same instant: the cursor's tie-break by id
    // carries across the page boundary.
    let total = 2 * EXPORT_PAGE_SIZE;
    for i in 0..total {
        let out = books
            .report_outgoing(
                &key,
                OutgoingTransferInput {
                    tx_hash: format!("0x{i:064x}"),
                    occurred_at: Some(start),
                    ..transfer('0')
                },
            )
            .unwrap()
            .activity()
            .clone();
        books
            .save_expense(&key, save(&out.id.to_string(), &format!("=row {i}")))
            .unwrap();
    }
    let period = ExportPeriod::new(Some(start), Some(start.plus(Duration::seconds(1)))).unwrap();
    let mut pages = Vec::new();
    let mut after = None;
    loop {
        let page = books
            .export_page(&key, ExportKind::Expenses, &period, after.as_ref())
            .unwrap();
        pages.push(page.csv.matches("\r\n").count());
        match page.next {
            Some(n) => after = Some(n),
            None => break,
        }
        assert!(pages.len() < 5, "the cursor moves on");
        let mut rows: Vec<&str> = page.csv.split("\r\n").collect();
        rows.pop();
        assert!(
            rows.iter().all(|r| r.contains(",Hosting,'=row ")),
            "{rows:?}"
        );
    }
    assert_eq!(pages, [EXPORT_PAGE_SIZE, EXPORT_PAGE_SIZE, 0]);
    // Every transfer exactly once.
    let mut seen = std::collections::HashSet::new();
    let mut after = None;
    loop {
        let page = books
            .export_page(&key, ExportKind::Expenses, &period, after.as_ref())
            .unwrap();
        for line in page.csv.split("\r\n").filter(|l| !l.is_empty()) {
            assert!(seen.insert(line.to_owned()), "twice: {line}");
        }
        let Some(n) = page.next else { break };
        after = Some(n);
    }
    assert_eq!(seen.len(), total);
    assert!(header_record(ExportKind::Expenses).starts_with("date,"));
    // The incoming export has none of them; a reader without the scope reads nothing.
    let payments = books
        .export_page(&key, ExportKind::Payments, &period, None)
        .unwrap();
    assert_eq!((payments.csv.as_str(), payments.next), ("", None));
    let other = grant(key.company_id, 9, &[Scope::CustomersRead]);
    assert!(matches!(
        books.export_page(&other, ExportKind::Expenses, &period, None),
        Err(BookkeepingError::Denied(_))
    ));
}
