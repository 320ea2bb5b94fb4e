//! The chain processor's tables on SQLite and PostgreSQL: a company's keys and the next index
//! each continues from, deposit addresses taken atomically (two store instances, 50 starts at
//! once: 50 distinct indices, also for two companies with one key), the watcher's lease and its
//! recent blocks.

use std::collections::HashSet;
use std::sync::Arc;

use pay_domain::chains::ports::{WalletStore, WatchStore};
use pay_domain::chains::{AddressRequest, Xpub};
use pay_domain::kernel::ids::CompanyId;
use pay_store::DieselStore;
use uuid::Uuid;

#[macro_use]
mod common;
use common::*;

both_backends!(
    keys_continue_where_they_stopped,
    an_address_is_assigned_once_per_session,
    fifty_starts_on_two_instances_get_fifty_indices,
    two_companies_with_one_key_get_disjoint_indices,
    fifty_starts_of_two_companies_with_one_key_get_fifty_indices,
    the_migration_continues_existing_keys_after_the_highest,
    one_watcher_holds_a_chain,
    recent_blocks_rewind_and_prune,
    handed_addresses_are_found_watched_or_not,
    the_watchers_record_reads_and_failures,
);

/// Account keys `m/44'/60'/0'` and `m/44'/60'/1'` of the development mnemonic.
const KEY_A: &str = "xpub6Ce9NcJvTk36xtLSrJLZqE7wtgA5deCeYs7rSQtreh4cj6ByPtrg9sD7V2FNFLPnf8heNP3FGkeV9qwfzvZNSd54JoNXVsXFYSYwHsnJxqP";
const KEY_B: &str = "xpub6Ce9NcJvTk372KjsGfWqbcex5DumjpNquQLApoeQUavSCjEc823BV1tb4rXUuPuht8h2hSxkg2EXUaKUJmniJvRZAELxypsCzBFdtosmV76";

fn derive(xpub: &str, i: u32) -> Option<String> {
    Xpub::parse(xpub).ok()?.address(i)
}

fn request(company: CompanyId, session: Uuid) -> AddressRequest {
    AddressRequest {
        company_id: company,
        session_id: session,
        chain_code: "local".into(),
        asset_identifier: "eip155:31337/slip44:60".into(),
        at: ts(1_000),
        watch_until: ts(100_000),
    }
}

fn put(store: &DieselStore, c: CompanyId, key: &str, at: i64) -> u32 {
    let fp = Xpub::parse(key).unwrap().fingerprint();
    store.put_wallet(c, key, &fp, ts(at)).unwrap().next_index
}

fn assign(store: &DieselStore, c: CompanyId) -> (u32, String) {
    let a = store
        .assign_address(&request(c, Uuid::new_v4()), &derive)
        .unwrap()
        .unwrap();
    (a.index, a.address)
}

fn keys_continue_where_they_stopped(store: &DieselStore, _url: &str) {
    let c = company(store);
    assert!(store.wallet(c).unwrap().is_none());
    assert!(
        store
            .assign_address(&request(c, Uuid::new_v4()), &derive)
            .unwrap()
            .is_none(),
        "no key: no address"
    );
    assert_eq!(put(store, c, KEY_A, 1_000), 0);
    let first: Vec<_> = (0..3).map(|_| assign(store, c)).collect();
    assert_eq!(first.iter().map(|a| a.0).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(first[0].1, "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266");
    let w = store.wallet(c).unwrap().unwrap();
    assert_eq!((w.xpub.as_str(), w.next_index), (KEY_A, 3));
    assert_eq!(w.fingerprint, Xpub::parse(KEY_A).unwrap().fingerprint());

    // Another key starts at 0; the first one, set again, continues at 3.
    assert_eq!(put(store, c, KEY_B, 2_000), 0);
    assert_eq!(assign(store, c).0, 0);
    assert_eq!(put(store, c, KEY_A, 3_000), 3);
    assert_eq!(assign(store, c).0, 3);
    let w = store.wallet(c).unwrap().unwrap();
    assert_eq!(
        (w.created_at, w.updated_at),
        (ts(1_000), ts(3_000)),
        "created once, updated on each put"
    );

    assert!(store.delete_wallet(c).unwrap());
    assert!(!store.delete_wallet(c).unwrap());
    assert!(store.wallet(c).unwrap().is_none());
    // The indices are remembered: set again, the key goes on.
    assert_eq!(put(store, c, KEY_A, 4_000), 4);
    assert_eq!(assign(store, c).0, 4);
}

/// Issue 31: two companies that set the same key (two brands on one wallet, or a copied public
/// key) are never handed the same child; each one's `nextIndex` is one past its own highest.
fn two_companies_with_one_key_get_disjoint_indices(store: &DieselStore, _url: &str) {
    let (a, b) = (company(store), company(store));
    assert_eq!(put(store, a, KEY_A, 1_000), 0);
    assert_eq!((assign(store, a).0, assign(store, a).0), (0, 1));
    // A key the company never used shows 0, and its first child continues after the other's.
    assert_eq!(put(store, b, KEY_A, 2_000), 0);
    let (i, address) = assign(store, b);
    assert_eq!(i, 2);
    assert_eq!(address, derive(KEY_A, 2).unwrap().to_ascii_lowercase());
    assert_eq!(assign(store, a).0, 3);
    assert_eq!(assign(store, b).0, 4);
    assert_eq!(store.wallet(a).unwrap().unwrap().next_index, 4);
    assert_eq!(store.wallet(b).unwrap().unwrap().next_index, 5);
    // Another key of b's has its own counter; back on the shared key, b continues after a.
    put(store, b, KEY_B, 3_000);
    assert_eq!(assign(store, b).0, 0);
    assert_eq!(assign(store, a).0, 5);
    assert_eq!(
        put(store, b, KEY_A, 4_000),
        5,
        "b's own highest, 4, plus one"
    );
    assert_eq!(assign(store, b).0, 6);
    // Deleting a's wallet frees nothing: a third company still continues after everyone.
    assert!(store.delete_wallet(a).unwrap());
    let c = company(store);
    put(store, c, KEY_A, 5_000);
    assert_eq!(assign(store, c).0, 7);
    // Each address belongs to exactly one session of one company.
    let handed = store
        .handed_addresses(&[derive(KEY_A, 2).unwrap().to_ascii_lowercase()])
        .unwrap();
    assert_eq!(handed.len(), 1);
    assert_eq!((handed[0].company_id, handed[0].index), (b, 2));
}

/// 50 starts at once on two store instances for two companies with the same key: 50 distinct
/// children, each company's `nextIndex` one past its own highest.
fn fifty_starts_of_two_companies_with_one_key_get_fifty_indices(store: &DieselStore, url: &str) {
    let companies = [company(store), company(store)];
    for c in companies {
        put(store, c, KEY_A, 1_000);
    }
    let stores = [Arc::new(open(url)), Arc::new(open(url))];
    let threads: Vec<_> = (0..50)
        .map(|i| {
            let s = stores[i % 2].clone();
            let c = companies[(i / 2) % 2];
            std::thread::spawn(move || (c, assign(&s, c)))
        })
        .collect();
    let got: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let indices: HashSet<_> = got.iter().map(|(_, a)| a.0).collect();
    let addresses: HashSet<_> = got.iter().map(|(_, a)| a.1.clone()).collect();
    assert_eq!((indices.len(), addresses.len()), (50, 50));
    assert_eq!(indices, (0..50).collect());
    for c in companies {
        let highest = got
            .iter()
            .filter(|g| g.0 == c)
            .map(|g| g.1 .0)
            .max()
            .unwrap();
        assert_eq!(store.wallet(c).unwrap().unwrap().next_index, highest + 1);
    }
}

fn an_address_is_assigned_once_per_session(store: &DieselStore, _url: &str) {
    let c = company(store);
    put(store, c, KEY_A, 1_000);
    let session = Uuid::new_v4();
    let a = store
        .assign_address(&request(c, session), &derive)
        .unwrap()
        .unwrap();
    let again = store
        .assign_address(&request(c, session), &derive)
        .unwrap()
        .unwrap();
    assert_eq!(a, again);
    assert_eq!(store.session_address(session).unwrap(), Some(a.clone()));
    assert_eq!(store.session_address(Uuid::new_v4()).unwrap(), None);
    assert_eq!(a.address, derive(KEY_A, 0).unwrap().to_ascii_lowercase());
    assert_eq!(a.chain_code, "local");
    // Watched until its deadline, on its chain only.
    assert_eq!(
        store.watched_addresses("local", ts(99_999)).unwrap(),
        vec![a]
    );
    assert!(store
        .watched_addresses("local", ts(100_000))
        .unwrap()
        .is_empty());
    assert!(store.watched_addresses("other", ts(0)).unwrap().is_empty());
}

fn fifty_starts_on_two_instances_get_fifty_indices(store: &DieselStore, url: &str) {
    let c = company(store);
    put(store, c, KEY_A, 1_000);
    let stores = [Arc::new(open(url)), Arc::new(open(url))];
    let threads: Vec<_> = (0..50)
        .map(|i| {
            let s = stores[i % 2].clone();
            std::thread::spawn(move || assign(&s, c))
        })
        .collect();
    let got: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let indices: HashSet<_> = got.iter().map(|a| a.0).collect();
    let addresses: HashSet<_> = got.iter().map(|a| a.1.clone()).collect();
    assert_eq!((indices.len(), addresses.len()), (50, 50));
    assert_eq!(indices, (0..50).collect());
    assert_eq!(store.wallet(c).unwrap().unwrap().next_index, 50);
}

/// Keys set before the shared counter (each company counting on its own) continue, for every
/// company, after the highest index any of them took.
fn the_migration_continues_existing_keys_after_the_highest(store: &DieselStore, url: &str) {
    let (a, b) = (company(store), company(store));
    put(store, a, KEY_A, 1_000);
    put(store, b, KEY_A, 1_000);
    put(store, b, KEY_B, 1_000);
    // The state before the migration: per-company counters, no shared one.
    raw_sql(
        url,
        &format!(
            "DROP TABLE chain_key_counters; \
             UPDATE chain_wallet_keys SET next_index = 3 WHERE company_id = '{a}'; \
             UPDATE chain_wallet_keys SET next_index = 5 WHERE company_id = '{b}' AND xpub = '{KEY_A}'; \
             UPDATE chain_wallet_keys SET next_index = 2 WHERE company_id = '{b}' AND xpub = '{KEY_B}';"
        ),
    );
    raw_sql(
        url,
        include_str!("../../../migrations/2026-11-27-440000_chain_key_counters/up.sql"),
    );
    assert_eq!(assign(store, a).0, 5);
    assert_eq!(store.wallet(a).unwrap().unwrap().next_index, 6);
    assert_eq!(put(store, b, KEY_A, 2_000), 5);
    assert_eq!(assign(store, b).0, 6);
    put(store, b, KEY_B, 3_000);
    assert_eq!(assign(store, b).0, 2);
}

fn one_watcher_holds_a_chain(store: &DieselStore, _url: &str) {
    assert!(store
        .claim_chain_lease("local", "a", ts(0), ts(10_000))
        .unwrap());
    assert!(!store
        .claim_chain_lease("local", "b", ts(5_000), ts(15_000))
        .unwrap());
    assert!(
        store
            .claim_chain_lease("local", "a", ts(5_000), ts(15_000))
            .unwrap(),
        "renewed"
    );
    assert!(
        store
            .claim_chain_lease("other", "b", ts(5_000), ts(15_000))
            .unwrap(),
        "per chain"
    );
    assert!(!store
        .claim_chain_lease("local", "b", ts(14_999), ts(20_000))
        .unwrap());
    assert!(
        store
            .claim_chain_lease("local", "b", ts(15_000), ts(25_000))
            .unwrap(),
        "expired"
    );
    assert!(!store
        .claim_chain_lease("local", "a", ts(16_000), ts(26_000))
        .unwrap());
}

fn recent_blocks_rewind_and_prune(store: &DieselStore, _url: &str) {
    assert!(store.recent_blocks("local").unwrap().is_empty());
    for n in 1..=10u64 {
        store
            .save_block("local", n, &format!("0x{n:02x}"), 5)
            .unwrap();
    }
    let kept = store.recent_blocks("local").unwrap();
    assert_eq!(kept.first().unwrap().0, 5, "only the last blocks are kept");
    assert_eq!(kept.last().unwrap(), &(10, "0x0a".to_owned()));
    store.rewind("local", Some(7)).unwrap();
    assert_eq!(store.recent_blocks("local").unwrap().last().unwrap().0, 7);
    // Read again after the fork: the new block 8 replaces nothing stale.
    store.save_block("local", 8, "0xf8", 5).unwrap();
    assert_eq!(
        store.recent_blocks("local").unwrap().last().unwrap(),
        &(8, "0xf8".to_owned())
    );
    store.rewind("local", None).unwrap();
    assert!(store.recent_blocks("local").unwrap().is_empty());
}

fn handed_addresses_are_found_watched_or_not(store: &DieselStore, _url: &str) {
    let c = company(store);
    put(store, c, KEY_A, 1_000);
    let (_, first) = assign(store, c);
    // Watched until 100 s: long past at 1,000 s, still handed out.
    assert!(store
        .watched_addresses("local", ts(1_000_000))
        .unwrap()
        .is_empty());
    let (_, second) = assign(store, c);
    let asked = [
        first.clone(),
        "0x0000000000000000000000000000000000000001".to_owned(),
        second.clone(),
    ];
    let mut found: Vec<String> = store
        .handed_addresses(&asked)
        .unwrap()
        .into_iter()
        .map(|a| {
            assert_eq!(a.company_id, c);
            a.address
        })
        .collect();
    found.sort();
    let mut want = vec![first, second];
    want.sort();
    assert_eq!(found, want);
    assert!(store.handed_addresses(&[]).unwrap().is_empty());
}

fn the_watchers_record_reads_and_failures(store: &DieselStore, url: &str) {
    assert_eq!(
        store.watch_state("local").unwrap(),
        None,
        "before any round"
    );
    // Failing from the start: the first failure stays.
    store.record_failure("local", ts(1_000)).unwrap();
    store.record_failure("local", ts(2_000)).unwrap();
    let w = store.watch_state("local").unwrap().unwrap();
    assert_eq!(
        (w.head, w.read_at, w.failing_since),
        (None, None, Some(ts(1_000)))
    );
    // A read clears it; another instance of the store sees the same.
    store.record_read("local", 120, 100, ts(3_000)).unwrap();
    let other = open(url);
    let w = other.watch_state("local").unwrap().unwrap();
    assert_eq!(
        (w.head, w.read_to, w.read_at, w.failing_since),
        (Some(120), Some(100), Some(ts(3_000)), None)
    );
    store.record_failure("local", ts(4_000)).unwrap();
    let w = other.watch_state("local").unwrap().unwrap();
    assert_eq!(
        (w.read_at, w.failing_since),
        (Some(ts(3_000)), Some(ts(4_000)))
    );
    // The lease row is the same row: the lease still works beside it.
    assert!(store
        .claim_chain_lease("local", "a", ts(5_000), ts(15_000))
        .unwrap());
    assert_eq!(other.watch_state("local").unwrap().unwrap().head, Some(120));
}
