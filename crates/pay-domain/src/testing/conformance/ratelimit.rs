//! Rate limits: hits counted per bucket and window, and a limit never passed by concurrent hits.

use std::thread;

use time::Duration;

use super::fixtures::*;
use crate::kernel::ratelimit::RateLimitStore;

/// The ports these cases need.
pub trait Ports: RateLimitStore + Sync {}

impl<T: RateLimitStore + Sync> Ports for T {}

pub fn rate_hits_count_per_bucket_and_window<S: Ports>(store: &S) {
    let minute = Duration::minutes(1);
    // Several hits in the same millisecond are all counted.
    for at in [T0, T0, T0, T0 + 30_000, T0 + 59_999] {
        assert!(store.hit("a", ts(at), minute, 5).unwrap());
    }
    // Full: refused, and a refusal writes nothing.
    assert!(!store.hit("a", ts(T0 + 59_999), minute, 5).unwrap());
    assert!(!store.hit("a", ts(T0 + 59_999), minute, 5).unwrap());
    // The window is inclusive: at T0 + 60 s the three hits at T0 still count ...
    assert!(!store.hit("a", ts(T0 + 60_000), minute, 5).unwrap());
    // ... one millisecond later only the two later ones do.
    assert!(store.hit("a", ts(T0 + 60_001), minute, 3).unwrap());
    assert!(!store.hit("a", ts(T0 + 60_001), minute, 3).unwrap());
    // Buckets are apart and match exactly, not by prefix or case.
    assert!(store.hit("b", ts(T0 + 10), minute, 1).unwrap());
    assert!(!store.hit("b", ts(T0 + 10), minute, 1).unwrap());
    assert!(store.hit("B", ts(T0 + 10), minute, 1).unwrap());
    assert!(store.hit("", ts(T0 + 10), minute, 1).unwrap());
    // Clearing forgets one bucket only.
    store.clear_hits("b").unwrap();
    assert!(store.hit("b", ts(T0 + 10), minute, 1).unwrap());
    assert!(!store.hit("B", ts(T0 + 10), minute, 1).unwrap());
}

/// Forgetting a hit removes exactly one hit of that bucket at that instant: a success counted
/// before it was checked no longer counts.
pub fn a_forgotten_hit_no_longer_counts<S: Ports>(store: &S) {
    let minute = Duration::minutes(1);
    for _ in 0..3 {
        assert!(store.hit("f", ts(T0), minute, 3).unwrap());
    }
    assert!(!store.hit("f", ts(T0), minute, 3).unwrap());
    store.forget_hit("f", ts(T0)).unwrap();
    assert!(
        store.hit("f", ts(T0), minute, 3).unwrap(),
        "one place freed"
    );
    assert!(!store.hit("f", ts(T0), minute, 3).unwrap(), "only one");
    // Another instant, another bucket, or nothing to forget: nothing changes.
    store.forget_hit("f", ts(T0 + 1)).unwrap();
    store.forget_hit("F", ts(T0)).unwrap();
    store.forget_hit("none", ts(T0)).unwrap();
    assert!(!store.hit("f", ts(T0), minute, 3).unwrap());
}

/// Hits of one bucket from many threads at once never pass the limit together (the count and
/// the decision are one atomic step; two statements let a burst through on PostgreSQL).
pub fn concurrent_hits_never_pass_the_limit<S: Ports>(store: &S) {
    let counted: usize = thread::scope(|scope| {
        let threads: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(move || {
                    (0..10)
                        .filter(|_| {
                            store
                                .hit("burst", ts(T0), Duration::minutes(1), 25)
                                .unwrap()
                        })
                        .count()
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).sum()
    });
    assert_eq!(counted, 25);
}
