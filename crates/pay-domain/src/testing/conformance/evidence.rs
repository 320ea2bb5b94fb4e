//! Evidence file rows: pending then stored once, read only by their company, linked by the
//! expense writes in the same transaction (never a file of another company, a pending one, or
//! one another expense links; concurrent expenses taking one file: one wins), unlinked files
//! become orphans at the given instant, and the orphan claim is a compare-and-set that a link
//! beats.

use uuid::Uuid;

use super::bookkeeping::{activity, expense, Ports};
use super::fixtures::*;
use super::subscriptions::contact;
use crate::bookkeeping::ports::ExpenseWrite;
use crate::bookkeeping::{Direction, EvidenceFile, EvidenceStatus, EvidenceType};
use crate::customers::GivenFields;
use crate::kernel::ids::*;

/// A pending file of `company` uploaded (and orphaned) at `at`.
pub fn evidence(company: CompanyId, at: i64) -> EvidenceFile {
    EvidenceFile {
        id: EvidenceFileId(Uuid::now_v7()),
        company_id: company,
        filename: "Rechnung März.pdf".into(),
        content_type: EvidenceType::Pdf,
        size: 1234,
        sha256: "ab".repeat(32),
        status: EvidenceStatus::Pending,
        expense_id: None,
        uploaded_at: ts(at),
        uploaded_by: "api_key:test".into(),
        orphan_since: Some(ts(at)),
    }
}

fn stored<S: Ports>(store: &S, company: CompanyId, at: i64) -> EvidenceFile {
    let f = evidence(company, at);
    store.insert_evidence(&f).unwrap();
    assert!(store.mark_evidence_stored(company, f.id).unwrap());
    EvidenceFile {
        status: EvidenceStatus::Stored,
        ..f
    }
}

pub fn evidence_rows_round_trip_within_their_company<S: Ports>(store: &S) {
    let a = company(store);
    let b = company(store);
    let f = evidence(a, T0);
    store.insert_evidence(&f).unwrap();
    assert_eq!(store.evidence_file(a, f.id).unwrap().as_ref(), Some(&f));
    assert_eq!(store.evidence_file(b, f.id).unwrap(), None);
    assert!(store.insert_evidence(&f).is_err(), "ids are unique");
    assert!(!store.mark_evidence_stored(b, f.id).unwrap());
    assert!(store.mark_evidence_stored(a, f.id).unwrap());
    assert!(!store.mark_evidence_stored(a, f.id).unwrap(), "once");
    assert_eq!(
        store.evidence_file(a, f.id).unwrap().unwrap().status,
        EvidenceStatus::Stored
    );
}

pub fn expense_writes_link_and_unlink_evidence<S: Ports>(store: &S) {
    let a = company(store);
    let b = company(store);
    let bob = store
        .upsert_contact(&contact(a, "bob@shop.example"), GivenFields::default())
        .unwrap()
        .into_contact();
    let out = activity(a, "dd", 0, Direction::Outgoing, T0);
    store.record_activity(&out).unwrap();
    let f1 = stored(store, a, T0);
    let f2 = stored(store, a, T0);
    let pending = evidence(a, T0);
    store.insert_evidence(&pending).unwrap();
    let foreign = stored(store, b, T0);
    let (mut e, v) = expense(&out, bob.id, "with files");
    // A pending file or another company's cannot be linked: nothing is written.
    for bad in [pending.id, foreign.id] {
        e.fields.evidence_file_ids = vec![f1.id, bad];
        assert_eq!(
            store.insert_expense(&e, &v, None).unwrap(),
            ExpenseWrite::Lost
        );
        assert_eq!(store.expense_of_activity(a, out.id).unwrap(), None);
        assert!(store
            .evidence_file(a, f1.id)
            .unwrap()
            .unwrap()
            .expense_id
            .is_none());
    }
    e.fields.evidence_file_ids = vec![f1.id, f2.id];
    assert_eq!(
        store.insert_expense(&e, &v, None).unwrap(),
        ExpenseWrite::Applied
    );
    let got = store.expense_of_activity(a, out.id).unwrap().unwrap();
    assert_eq!(got.fields.evidence_file_ids, vec![f1.id, f2.id]);
    let linked = store.evidence_of_expense(a, e.id).unwrap();
    assert_eq!(
        linked.iter().map(|f| f.id).collect::<Vec<_>>(),
        [f1.id, f2.id]
    );
    assert!(linked
        .iter()
        .all(|f| f.expense_id == Some(e.id) && f.orphan_since.is_none()));
    assert!(store.evidence_of_expense(b, e.id).unwrap().is_empty());
    // Another expense cannot take a linked file.
    let out2 = activity(a, "de", 0, Direction::Outgoing, T0);
    store.record_activity(&out2).unwrap();
    let (mut e2, v2) = expense(&out2, bob.id, "steals");
    e2.fields.evidence_file_ids = vec![f2.id];
    assert_eq!(
        store.insert_expense(&e2, &v2, None).unwrap(),
        ExpenseWrite::Lost
    );
    // A re-save keeping f2 only unlinks f1, an orphan from the given instant.
    let mut next = got.clone();
    next.version = 2;
    next.fields.evidence_file_ids = vec![f2.id];
    let v = crate::bookkeeping::ExpenseVersion {
        expense_id: e.id,
        version: 2,
        saved_at: ts(T0 + 5),
        saved_by: "user:test".into(),
        changes: next.fields.changes_from(Some(&got.fields)),
    };
    assert_eq!(
        store
            .update_expense(&next, 1, &v, ts(T0 + 7), None)
            .unwrap(),
        ExpenseWrite::Applied
    );
    let one = store.evidence_file(a, f1.id).unwrap().unwrap();
    assert_eq!((one.expense_id, one.orphan_since), (None, Some(ts(T0 + 7))));
    assert_eq!(
        store
            .expense_of_activity(a, out.id)
            .unwrap()
            .unwrap()
            .fields
            .evidence_file_ids,
        vec![f2.id]
    );
    // f1 is free again: the other expense takes it; two expenses racing for one file: one.
    e2.fields.evidence_file_ids = vec![f1.id];
    assert_eq!(
        store.insert_expense(&e2, &v2, None).unwrap(),
        ExpenseWrite::Applied
    );
    let free = stored(store, a, T0);
    let applied = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..6)
            .map(|i| {
                let act = activity(a, &format!("f{i}"), 0, Direction::Outgoing, T0);
                store.record_activity(&act).unwrap();
                let (mut e, v) = expense(&act, bob.id, "race");
                e.fields.evidence_file_ids = vec![free.id];
                sc.spawn(move || store.insert_expense(&e, &v, None).unwrap())
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap())
            .filter(|w| *w == ExpenseWrite::Applied)
            .count()
    });
    assert_eq!(applied, 1);
}

pub fn orphans_are_claimed_by_compare_and_set<S: Ports>(store: &S) {
    let a = company(store);
    let bob = store
        .upsert_contact(&contact(a, "bob@shop.example"), GivenFields::default())
        .unwrap()
        .into_contact();
    let old = stored(store, a, T0);
    let young = stored(store, a, T0 + 10_000);
    let pending = evidence(a, T0 + 1);
    store.insert_evidence(&pending).unwrap();
    let linked = stored(store, a, T0);
    let out = activity(a, "ee", 0, Direction::Outgoing, T0);
    store.record_activity(&out).unwrap();
    let (mut e, v) = expense(&out, bob.id, "keeps one");
    e.fields.evidence_file_ids = vec![linked.id];
    assert_eq!(
        store.insert_expense(&e, &v, None).unwrap(),
        ExpenseWrite::Applied
    );
    let cut = ts(T0 + 5_000);
    let orphans = store.orphan_evidence(cut, 10).unwrap();
    assert_eq!(
        orphans.iter().map(|f| f.id).collect::<Vec<_>>(),
        [old.id, pending.id],
        "oldest first, linked and young ones left"
    );
    assert_eq!(store.orphan_evidence(cut, 1).unwrap().len(), 1);
    assert!(!store.claim_orphan_evidence(linked.id, cut).unwrap());
    assert!(!store.claim_orphan_evidence(young.id, cut).unwrap());
    assert!(store.claim_orphan_evidence(old.id, cut).unwrap());
    assert!(
        store.claim_orphan_evidence(old.id, cut).unwrap(),
        "again: still claimed"
    );
    // A claimed file can no longer be linked.
    let out2 = activity(a, "ef", 0, Direction::Outgoing, T0);
    store.record_activity(&out2).unwrap();
    let (mut e2, v2) = expense(&out2, bob.id, "late");
    e2.fields.evidence_file_ids = vec![old.id];
    assert_eq!(
        store.insert_expense(&e2, &v2, None).unwrap(),
        ExpenseWrite::Lost
    );
    // Only a claimed row is deleted.
    store.delete_evidence(young.id).unwrap();
    assert!(store.evidence_file(a, young.id).unwrap().is_some());
    store.delete_evidence(old.id).unwrap();
    assert_eq!(store.evidence_file(a, old.id).unwrap(), None);
    store.delete_evidence(old.id).unwrap();
    assert_eq!(
        store
            .orphan_evidence(cut, 10)
            .unwrap()
            .iter()
            .map(|f| f.id)
            .collect::<Vec<_>>(),
        [pending.id]
    );
}
