//! Evidence files over the fakes: upload sniffed and sanitised (a PHP script named `.pdf` is
//! refused, so is a file over the limit), written row-then-bytes, read only by its company,
//! linked by an expense save (another company's file 404, another expense's 409, the list
//! change versioned, dropped files unlinked), counted in the export, and orphans cleaned a day
//! later by real time (the service clock), bytes and row.

use super::*;
use pay_domain::bookkeeping::FileStore;
use pay_domain::bookkeeping::{
    ActivityRef, BookkeepingError, CounterpartyInput, EvidenceRefusal, EvidenceStatus,
    EvidenceType, ExportKind, ExportPeriod, OutgoingTransferInput, SaveExpenseInput,
    MAX_EVIDENCE_BYTES,
};

const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const PDF: &[u8] = b"%PDF-1.7\n1 0 obj\n<<>>\nendobj\n%%EOF\n";
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

fn outgoing(w: &World, p: &Principal, hash: char) -> String {
    w.pay
        .bookkeeping()
        .report_outgoing(
            p,
            OutgoingTransferInput {
                chain: "eip155:8453".into(),
                tx_hash: format!("0x{}", hash.to_string().repeat(64)),
                log_index: 0,
                asset: BASE_USDC.into(),
                amount: "10".into(),
                to_address: "0x8ba1f109551bD432803012645Ac136ddd64DBA72".into(),
                occurred_at: None,
            },
        )
        .unwrap()
        .activity()
        .id
        .to_string()
}

fn save(activity: &str, files: &[String]) -> SaveExpenseInput {
    SaveExpenseInput {
        activity_id: Some(activity.into()),
        activity_key: None,
        counterparty: Some(CounterpartyInput::NewVendor {
            email: "billing@hoster.example".into(),
            name: None,
            client_id: None,
        }),
        category: "Hosting".into(),
        description: "Servers".into(),
        notes: None,
        fiat_currency: None,
        fiat_amount: None,
        tax_amount: None,
        evidence_file_ids: files.to_vec(),
    }
}

#[test]
fn uploads_are_sniffed_sanitised_and_private() {
    let w = world();
    let key = w.key_principal(&w.tenant("Acme", "ann@acme.example"));
    let books = w.pay.bookkeeping();
    let f = books
        .upload_evidence(&key, "../../etc/passwd", PDF)
        .unwrap();
    assert_eq!(f.filename, "passwd.pdf");
    assert_eq!(f.content_type, EvidenceType::Pdf);
    assert_eq!(f.status, EvidenceStatus::Stored);
    assert_eq!(f.size, PDF.len() as u64);
    assert!(f.uploaded_by.starts_with("api_key:"));
    assert_eq!(
        w.files.get(&f.storage_key()).unwrap().as_deref(),
        Some(PDF),
        "bytes under the row's key"
    );
    let (meta, bytes) = books.evidence_content(&key, f.id).unwrap();
    assert_eq!((meta, bytes.as_slice()), (f.clone(), PDF));
    // By content only: a PHP script named .pdf, an empty file; over the limit.
    let refused = |name: &str, bytes: &[u8]| books.upload_evidence(&key, name, bytes).unwrap_err();
    assert_eq!(
        refused("invoice.pdf", b"<?php echo 1; ?>"),
        BookkeepingError::Evidence(EvidenceRefusal::UnsupportedType)
    );
    assert_eq!(
        refused("x.pdf", b""),
        BookkeepingError::Evidence(EvidenceRefusal::UnsupportedType)
    );
    let mut big = PDF.to_vec();
    big.resize(MAX_EVIDENCE_BYTES + 1, b' ');
    assert!(matches!(
        refused("big.pdf", &big),
        BookkeepingError::Evidence(EvidenceRefusal::TooLarge { .. })
    ));
    big.truncate(MAX_EVIDENCE_BYTES);
    books.upload_evidence(&key, "limit.pdf", &big).unwrap();
    // Another company sees nothing; a reader grant reads, cannot upload.
    let other = w.key_principal(&w.tenant("Other", "olga@other.example"));
    {
        let id = f.id;
        assert!(matches!(
            books.evidence_content(&other, id).unwrap_err(),
            BookkeepingError::NotFound(_)
        ));
    }
    let reader = grant(key.company_id, 1, &[Scope::BookkeepingRead]);
    assert!(books.evidence_file(&reader, f.id).is_ok());
    assert!(matches!(
        books.upload_evidence(&reader, "a.pdf", PDF).unwrap_err(),
        BookkeepingError::Denied(_)
    ));
    let customers = grant(key.company_id, 2, &[Scope::CustomersRead]);
    assert!(matches!(
        books.evidence_file(&customers, f.id).unwrap_err(),
        BookkeepingError::Denied(_)
    ));
}

#[test]
fn saves_link_their_files_and_dropped_ones_become_orphans() {
    let w = world();
    let key = w.key_principal(&w.tenant("Acme", "ann@acme.example"));
    let other = w.key_principal(&w.tenant("Other", "olga@other.example"));
    let books = w.pay.bookkeeping();
    let a = outgoing(&w, &key, 'a');
    let pdf = books.upload_evidence(&key, "invoice.pdf", PDF).unwrap();
    let png = books.upload_evidence(&key, "receipt", PNG).unwrap();
    assert_eq!(png.filename, "receipt.png");
    let foreign = books.upload_evidence(&other, "theirs.pdf", PDF).unwrap();
    let ids = |fs: &[&pay_domain::bookkeeping::EvidenceFile]| -> Vec<String> {
        fs.iter().map(|f| f.id.to_string()).collect()
    };
    // Another company's file or an unknown id: 404 naming the entry; nothing saved.
    let err = books
        .save_expense(&key, save(&a, &ids(&[&pdf, &foreign])))
        .unwrap_err();
    assert!(
        matches!(&err, BookkeepingError::Evidence(EvidenceRefusal::NotFound { field, .. }) if field == "evidenceFileIds[1]"),
        "{err:?}"
    );
    assert!(books
        .activity_detail(&key, &ActivityRef::parse(&a).unwrap())
        .unwrap()
        .expense
        .is_none());
    let saved = books
        .save_expense(&key, save(&a, &ids(&[&png, &pdf])))
        .unwrap();
    let detail = &saved.detail;
    assert_eq!(
        detail.evidence.iter().map(|f| f.id).collect::<Vec<_>>(),
        [pdf.id, png.id],
        "upload order"
    );
    assert_eq!(
        detail.versions[0].changes.last().unwrap().field,
        "evidenceFileIds"
    );
    // A second expense cannot take a linked file: 409.
    let b = outgoing(&w, &key, 'b');
    let err = books
        .save_expense(&key, save(&b, &ids(&[&pdf])))
        .unwrap_err();
    assert!(
        matches!(&err, BookkeepingError::Evidence(EvidenceRefusal::LinkedElsewhere { field, .. }) if field == "evidenceFileIds[0]"),
        "{err:?}"
    );
    // The export counts the files.
    let period = ExportPeriod::new(
        Some(w.now().minus(Duration::days(1))),
        Some(w.now().plus(Duration::days(1))),
    )
    .unwrap();
    let page = books
        .export_page(&key, ExportKind::Expenses, &period, None)
        .unwrap();
    assert!(page.csv.contains(",2,"), "{}", page.csv);
    // Re-save without the PNG: unlinked (versioned), an orphan from now (real time).
    let again = books.save_expense(&key, save(&a, &ids(&[&pdf]))).unwrap();
    let change = &again.detail.versions[1].changes;
    assert_eq!(change.len(), 1);
    assert_eq!(change[0].field, "evidenceFileIds");
    assert_eq!(change[0].to, Some(pdf.id.to_string()));
    assert_eq!(again.detail.evidence.len(), 1);
    let png_row = books.evidence_file(&key, png.id).unwrap();
    assert_eq!(
        (png_row.expense_id, png_row.orphan_since),
        (None, Some(w.now()))
    );
    // The other expense may take it now.
    books.save_expense(&key, save(&b, &ids(&[&png]))).unwrap();
    books.save_expense(&key, save(&b, &[])).unwrap();

    // Cleanup: nothing before a day; then the unlinked PNG and the never-linked foreign file
    // go (bytes first, then the row); the linked PDF stays.
    assert_eq!(books.clean_orphan_evidence(w.now()).unwrap(), 0);
    let later = w.now().plus(Duration::hours(23));
    assert_eq!(books.clean_orphan_evidence(later).unwrap(), 0);
    let day_after = w
        .now()
        .plus(Duration::hours(24) + Duration::milliseconds(1));
    assert_eq!(books.clean_orphan_evidence(day_after).unwrap(), 2);
    assert_eq!(w.files.get(&png.storage_key()).unwrap(), None);
    assert_eq!(w.files.get(&foreign.storage_key()).unwrap(), None);
    assert!(w.files.get(&pdf.storage_key()).unwrap().is_some());
    assert!(w
        .store
        .tables()
        .evidence_files
        .iter()
        .all(|f| f.id == pdf.id));
    assert_eq!(
        books.clean_orphan_evidence(day_after).unwrap(),
        0,
        "idempotent"
    );
    assert!(matches!(
        books.evidence_content(&key, png.id).unwrap_err(),
        BookkeepingError::NotFound(_)
    ));
    assert_eq!(books.evidence_content(&key, pdf.id).unwrap().1, PDF);
}

#[test]
fn an_unfinished_upload_is_never_served_and_is_cleaned() {
    let w = world();
    let key = w.key_principal(&w.tenant("Acme", "ann@acme.example"));
    let books = w.pay.bookkeeping();
    let f = books.upload_evidence(&key, "a.pdf", PDF).unwrap();
    // As if the process died after the row and the bytes, before `Stored`.
    w.store
        .write()
        .evidence_files
        .iter_mut()
        .for_each(|r| r.status = EvidenceStatus::Pending);
    assert!(matches!(
        books.evidence_file(&key, f.id).unwrap_err(),
        BookkeepingError::NotFound(_)
    ));
    let a = outgoing(&w, &key, 'c');
    assert!(matches!(
        books
            .save_expense(&key, save(&a, &[f.id.to_string()]))
            .unwrap_err(),
        BookkeepingError::Evidence(EvidenceRefusal::NotFound { .. })
    ));
    let day_after = w.now().plus(Duration::days(1) + Duration::seconds(1));
    assert_eq!(books.clean_orphan_evidence(day_after).unwrap(), 1);
    assert_eq!(w.files.get(&f.storage_key()).unwrap(), None);
    assert!(w.store.tables().evidence_files.is_empty());
}
