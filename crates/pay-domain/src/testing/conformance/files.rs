//! The file store port's contract, one function every adapter runs (memory, local disk,
//! S3-compatible storage): round trip, overwrite, a missing key, idempotent delete, keys that
//! would leave the store refused, and an object of a few MiB. `prefix` keeps runs against a
//! shared store (one bucket) apart.

use crate::bookkeeping::FileStore;

/// Runs every case against `store`.
pub fn file_store_keeps_its_contract<S: FileStore + ?Sized>(store: &S, prefix: &str) {
    let key = format!("{prefix}/evidence/a/0192f0c4-1a2b-7c3d-8e4f-0123456789ab");
    // Round trip.
    assert_eq!(store.get(&key).unwrap(), None, "a missing key is None");
    store.put(&key, b"%PDF-1.7 first").unwrap();
    assert_eq!(
        store.get(&key).unwrap().as_deref(),
        Some(&b"%PDF-1.7 first"[..])
    );
    // Overwrite: the new bytes whole, even when shorter.
    store.put(&key, b"%PDF-2").unwrap();
    assert_eq!(store.get(&key).unwrap().as_deref(), Some(&b"%PDF-2"[..]));
    // Another key is another object.
    let other = format!("{prefix}/evidence/b/x.y_z-1");
    assert_eq!(store.get(&other).unwrap(), None);
    store.put(&other, b"").unwrap();
    assert_eq!(store.get(&other).unwrap().as_deref(), Some(&b""[..]));
    // Delete, twice: the second finds nothing and succeeds.
    store.delete(&key).unwrap();
    assert_eq!(store.get(&key).unwrap(), None);
    store.delete(&key).unwrap();
    store.delete(&other).unwrap();
    store.delete(&format!("{prefix}/never/written")).unwrap();
    // Keys that could leave the root, or are not plain segments, are refused by every method.
    for bad in [
        "../escape".to_owned(),
        format!("{prefix}/../../etc/passwd"),
        format!("/{prefix}/abs"),
        format!("{prefix}//double"),
        format!("{prefix}\\back"),
        String::new(),
    ] {
        assert!(store.put(&bad, b"x").is_err(), "put {bad:?}");
        assert!(store.get(&bad).is_err(), "get {bad:?}");
        assert!(store.delete(&bad).is_err(), "delete {bad:?}");
    }
    // A few MiB, byte for byte.
    let big: Vec<u8> = (0..6 * 1024 * 1024 + 7)
        .map(|i| (i * 31 % 251) as u8)
        .collect();
    let big_key = format!("{prefix}/evidence/big/object");
    store.put(&big_key, &big).unwrap();
    assert_eq!(store.get(&big_key).unwrap().as_deref(), Some(&big[..]));
    store.delete(&big_key).unwrap();
    assert_eq!(store.get(&big_key).unwrap(), None);
}
