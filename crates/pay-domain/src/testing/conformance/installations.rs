//! Native platform templates: inserted once (a second insert of the identifier writes nothing
//! and says so, even two at once), read back exactly, unknown identifiers absent.

use std::sync::Barrier;
use std::thread;

use super::fixtures::*;
use crate::installations::ports::PlatformStore;
use crate::installations::{NativePlatform, NATIVE_SCOPES};

fn template(platform: &str, name: &str) -> NativePlatform {
    NativePlatform {
        platform: platform.into(),
        name: name.into(),
        icon_url: Some("https://cdn.example/icon.png".into()),
        support_url: None,
        scopes: NATIVE_SCOPES.to_vec(),
        created_at: ts(1_700_000_000_123),
    }
}

pub fn a_platform_template_is_written_once<S: PlatformStore + Sync>(store: &S) {
    let slug = format!("shop-{}", random_alnum(8).to_lowercase());
    let first = template(&slug, "Shop é Plugin");
    assert_eq!(store.platform(&slug).unwrap(), None);
    assert!(store.insert_platform(&first).unwrap());
    assert_eq!(store.platform(&slug).unwrap(), Some(first.clone()));
    // The same identifier again: nothing written, the first kept.
    assert!(!store
        .insert_platform(&template(&slug, "Another name"))
        .unwrap());
    assert_eq!(store.platform(&slug).unwrap(), Some(first));
    // Two at once: exactly one is written.
    let racing = format!("race-{}", random_alnum(8).to_lowercase());
    let barrier = Barrier::new(2);
    let wins: usize = thread::scope(|s| {
        let handles: Vec<_> = ["A", "B"]
            .into_iter()
            .map(|name| {
                let (barrier, racing) = (&barrier, &racing);
                s.spawn(move || {
                    barrier.wait();
                    usize::from(store.insert_platform(&template(racing, name)).unwrap())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(wins, 1);
    let stored = store.platform(&racing).unwrap().unwrap();
    assert!(["A", "B"].contains(&stored.name.as_str()));
    assert_eq!(stored.support_url, None);
    assert_eq!(stored.scopes, NATIVE_SCOPES.to_vec());
}
