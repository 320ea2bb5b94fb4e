//! A micro-cache of rendered first screens (`GET /pay/{uid}` without a session): the page a
//! link's payers open is the same for all of them but for its CSP nonce, so each worker keeps
//! the rendered HTML for at most `TTL` (never past the link's expiry) and answers from it on the
//! event loop with a fresh nonce, without a database read or a thread hop. Staleness is bounded
//! like the store's hot-read cache: a link paused elsewhere shows its choose-asset form for at
//! most `TTL`, and the start it posts is refused by the use case (which reads the link afresh).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use pay_domain::links::ports::LinkObserver;

/// How long a rendered first screen is served.
pub const TTL: Duration = Duration::from_secs(1);
/// Entries per worker; a full cache is emptied (links rarely number more hot pages than this).
pub const CAPACITY: usize = 4096;
/// Bytes of HTML per worker. Entries live one `TTL`, so this holds every page rendered within
/// the last second on a busy server; past it, expired entries go first, then everything.
pub const MAX_BYTES: usize = 2 * 1024 * 1024;

/// How many link changes this process has made: the links service tells it of each (it is a
/// `LinkObserver`), and an entry rendered before the latest change is stale at once.
#[derive(Debug, Default)]
pub struct LinkEpoch(AtomicU64);

impl LinkEpoch {
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

impl LinkObserver for LinkEpoch {
    fn links_changed(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// One rendered first screen. `html` carries `marker` where each response's nonce goes.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub status: actix_web::http::StatusCode,
    pub html: String,
    pub logo_origin: Option<String>,
    pub until: Instant,
    /// `LinkEpoch` read before the link was: a status change in this process since
    /// makes the entry stale at once.
    pub epoch: u64,
}

/// One worker's cache (actix runs one per worker thread; no lock is taken).
#[derive(Debug)]
pub struct PageCache {
    /// A random stand-in for the nonce in cached HTML; unguessable, so no page text can
    /// contain it by accident or design.
    pub marker: String,
    entries: RefCell<HashMap<String, Rendered>>,
    /// The HTML bytes the entries hold.
    bytes: Cell<usize>,
    /// When expired entries were last dropped.
    swept: Cell<Instant>,
}

impl PageCache {
    pub fn new(marker: String) -> PageCache {
        PageCache {
            marker,
            entries: RefCell::new(HashMap::new()),
            bytes: Cell::new(0),
            swept: Cell::new(Instant::now()),
        }
    }

    /// Entries and HTML bytes held.
    pub fn size(&self) -> (usize, usize) {
        (self.entries.borrow().len(), self.bytes.get())
    }

    /// The cached page of `uid` with `nonce` in place of the marker, while it is fresh and no
    /// link changed status in this process since it was rendered (`epoch`).
    pub fn get(&self, uid: &str, nonce: &str, now: Instant, epoch: u64) -> Option<Rendered> {
        let entries = self.entries.borrow();
        let hit = entries
            .get(uid)
            .filter(|r| r.until > now && r.epoch == epoch)?;
        Some(Rendered {
            html: hit.html.replace(&self.marker, nonce),
            ..hit.clone()
        })
    }

    /// Keeps `rendered` for `uid`. Expired entries are dropped at most once per `TTL` (so a
    /// crawl over many links leaves no pages behind once it stops), and whenever the cache
    /// would pass `CAPACITY` entries or `MAX_BYTES`; if that is not enough it starts over.
    pub fn put(&self, uid: String, rendered: Rendered) {
        let now = Instant::now();
        let mut entries = self.entries.borrow_mut();
        let size = rendered.html.len();
        let full = |e: &HashMap<String, Rendered>, bytes: usize| {
            e.len() >= CAPACITY || bytes + size > MAX_BYTES
        };
        if now.duration_since(self.swept.get()) >= TTL || full(&entries, self.bytes.get()) {
            entries.retain(|_, r| r.until > now);
            self.bytes.set(entries.values().map(|r| r.html.len()).sum());
            self.swept.set(now);
        }
        if full(&entries, self.bytes.get()) {
            entries.clear();
            self.bytes.set(0);
        }
        if let Some(old) = entries.insert(uid, rendered) {
            self.bytes.set(self.bytes.get() - old.html.len());
        }
        self.bytes.set(self.bytes.get() + size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::StatusCode;

    fn page(until: Instant) -> Rendered {
        Rendered {
            status: StatusCode::OK,
            html: "<style nonce=\"MARK\"></style><script nonce=\"MARK\"></script>".into(),
            logo_origin: None,
            until,
            epoch: 7,
        }
    }

    #[test]
    fn serves_fresh_entries_with_the_new_nonce_and_forgets_stale_ones() {
        let c = PageCache::new("MARK".into());
        let now = Instant::now();
        c.put("u1".into(), page(now + TTL));
        let hit = c.get("u1", "n0nce", now, 7).unwrap();
        assert_eq!(
            hit.html,
            "<style nonce=\"n0nce\"></style><script nonce=\"n0nce\"></script>"
        );
        assert!(
            c.get("u1", "x", now + TTL, 7).is_none(),
            "expired at `until`"
        );
        assert!(
            c.get("u1", "x", now, 8).is_none(),
            "a link changed status since"
        );
        assert!(c.get("u2", "x", now, 7).is_none());
    }

    #[test]
    fn expired_pages_are_dropped_once_a_ttl_has_passed() {
        let c = PageCache::new("MARK".into());
        let now = Instant::now();
        for i in 0..100 {
            c.put(format!("u{i}"), page(now));
        }
        let one = page(now).html.len();
        assert_eq!(c.size(), (100, 100 * one), "swept at most once per TTL");
        c.swept.set(now - TTL);
        c.put("fresh".into(), page(Instant::now() + TTL));
        assert_eq!(
            c.size(),
            (1, one),
            "the expired pages went, the new one stayed"
        );
        c.put("fresh".into(), page(Instant::now() + TTL));
        assert_eq!(c.size(), (1, one), "a replaced page is counted once");
    }

    #[test]
    fn the_html_held_stays_under_the_byte_budget() {
        let c = PageCache::new("MARK".into());
        let big = |until| Rendered {
            html: "x".repeat(100 * 1024),
            ..page(until)
        };
        let until = Instant::now() + TTL;
        for i in 0..50 {
            c.put(format!("u{i}"), big(until));
            assert!(c.size().1 <= MAX_BYTES, "{:?} after {i}", c.size());
        }
        assert!(c.get("u49", "x", Instant::now(), 7).is_some());
    }

    #[test]
    fn a_full_cache_starts_over() {
        let c = PageCache::new("MARK".into());
        let now = Instant::now();
        for i in 0..CAPACITY {
            c.put(format!("u{i}"), page(now + TTL));
        }
        assert!(c.get("u0", "x", now, 7).is_some());
        c.put("one-more".into(), page(now + TTL));
        assert!(c.get("u0", "x", now, 7).is_none());
        assert!(c.get("one-more", "x", now, 7).is_some());
    }
}
