//! The requests' counts and latencies (`pay_http_requests`, `pay_http_request_duration`),
//! kept per worker thread and added up when scraped.
//!
//! Each thread records into a shard of its own (by the order threads first recorded, modulo
//! `SHARDS`): a mutex no other worker takes, so a request costs one uncontended lock, one
//! look-up of its route template (hashed with FNV-1a: templates, not paths, so no caller
//! chooses the keys) and a few additions; no label is allocated once a route was seen. A
//! scrape locks each shard in turn and adds them up. The exposition is what two
//! `prometheus-client` families wrote: a counter by route, method and status, a histogram by
//! route and method, each left out while it has no series.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;

/// Request latency buckets, in seconds: 1 ms to 30 s (then `+Inf`).
pub(super) const LATENCY_BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];
/// The buckets with `+Inf` (`f64::MAX`, as `prometheus-client` writes it).
const BUCKETS: usize = LATENCY_BUCKETS.len() + 1;
/// Shards: more than the workers a server runs on any machine it is meant for (threads beyond
/// share one, which stays correct, only contended).
const SHARDS: usize = 16;

/// FNV-1a (64 bit): short keys, hashed in a few nanoseconds.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// One method of one route in one shard.
#[derive(Debug, Clone)]
struct Series {
    method: &'static str,
    sum: f64,
    count: u64,
    /// Observations per bucket (not cumulative).
    buckets: [u64; BUCKETS],
    /// Requests per status, in the order first seen (a handful per route).
    statuses: Vec<(u16, u64)>,
}

impl Series {
    fn new(method: &'static str) -> Series {
        Series {
            method,
            sum: 0.0,
            count: 0,
            buckets: [0; BUCKETS],
            statuses: Vec::new(),
        }
    }

    /// `prometheus-client`'s `Histogram::observe` and `Counter::inc`.
    fn record(&mut self, status: u16, seconds: f64) {
        self.sum += seconds;
        self.count += 1;
        let bucket = LATENCY_BUCKETS
            .iter()
            .chain(std::iter::once(&f64::MAX))
            .position(|upper| *upper >= seconds);
        if let Some(i) = bucket {
            self.buckets[i] += 1;
        }
        match self.statuses.iter_mut().find(|(s, _)| *s == status) {
            Some((_, n)) => *n += 1,
            None => self.statuses.push((status, 1)),
        }
    }

    fn add(&mut self, other: &Series) {
        self.sum += other.sum;
        self.count += other.count;
        for (mine, theirs) in self.buckets.iter_mut().zip(other.buckets) {
            *mine += theirs;
        }
        for &(status, n) in &other.statuses {
            match self.statuses.iter_mut().find(|(s, _)| *s == status) {
                Some((_, m)) => *m += n,
                None => self.statuses.push((status, n)),
            }
        }
    }
}

/// One thread's series: by route template, then method (a handful per route, searched).
type Shard = HashMap<String, Vec<Series>, BuildHasherDefault<Fnv>>;

/// A shard on a cache line of its own.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Padded(Mutex<Shard>);

/// The recording thread's shard: the order it first recorded in, modulo `SHARDS`.
fn shard_index() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static INDEX: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    INDEX.with(|i| *i)
}

/// The labels, owned (made when scraped only).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: String,
    method: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LatencyLabels {
    route: String,
    method: &'static str,
}

/// The requests answered: recorded by the metrics middleware, encoded as a collector.
#[derive(Debug)]
pub(super) struct Requests {
    shards: Box<[Padded]>,
}

impl Default for Requests {
    fn default() -> Requests {
        Requests {
            shards: (0..SHARDS).map(|_| Padded::default()).collect(),
        }
    }
}

impl Requests {
    /// One request answered: its route template, method label, status and time.
    pub(super) fn record(&self, route: &str, method: &'static str, status: u16, seconds: f64) {
        let mut shard = self.shards[shard_index()]
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let methods = match shard.get_mut(route) {
            Some(m) => m,
            None => shard.entry(route.to_owned()).or_default(),
        };
        let series = match methods.iter().position(|s| s.method == method) {
            Some(i) => &mut methods[i],
            None => {
                methods.push(Series::new(method));
                methods.last_mut().expect("just pushed")
            }
        };
        series.record(status, seconds);
    }

    /// Every shard added up, by route and method.
    fn merged(&self) -> BTreeMap<(String, &'static str), Series> {
        let mut all: BTreeMap<(String, &'static str), Series> = BTreeMap::new();
        for shard in self.shards.iter() {
            let shard = shard.0.lock().unwrap_or_else(|e| e.into_inner());
            for (route, methods) in shard.iter() {
                for s in methods {
                    match all.get_mut(&(route.clone(), s.method)) {
                        Some(m) => m.add(s),
                        None => {
                            all.insert((route.clone(), s.method), s.clone());
                        }
                    }
                }
            }
        }
        all
    }
}

impl Collector for Requests {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let all = self.merged();
        if all.is_empty() {
            return Ok(());
        }
        // The help texts end in a period: `Registry::register` adds one to the families'.
        let mut family = encoder.encode_descriptor(
            "pay_http_requests",
            "HTTP requests answered, by route template, method and status.",
            None,
            MetricType::Counter,
        )?;
        for ((route, method), s) in &all {
            let mut statuses = s.statuses.clone();
            statuses.sort_unstable();
            for (status, n) in statuses {
                let labels = RequestLabels {
                    route: route.clone(),
                    method,
                    status,
                };
                family
                    .encode_family(&labels)?
                    .encode_counter::<NoLabelSet, _, u64>(&n, None)?;
            }
        }
        let mut family = encoder.encode_descriptor(
            "pay_http_request_duration",
            "Time to answer an HTTP request, by route template and method.",
            Some(&Unit::Seconds),
            MetricType::Histogram,
        )?;
        for ((route, method), s) in &all {
            let buckets: Vec<(f64, u64)> = LATENCY_BUCKETS
                .iter()
                .chain(std::iter::once(&f64::MAX))
                .copied()
                .zip(s.buckets)
                .collect();
            family
                .encode_family(&LatencyLabels {
                    route: route.clone(),
                    method,
                })?
                .encode_histogram::<NoLabelSet>(s.sum, s.count, &buckets, None)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::metrics::counter::Counter;
    use prometheus_client::metrics::family::Family;
    use prometheus_client::metrics::histogram::Histogram;
    use prometheus_client::registry::Registry;

    #[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
    struct OwnedRequest {
        route: String,
        method: &'static str,
        status: u16,
    }

    #[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
    struct OwnedLatency {
        route: String,
        method: &'static str,
    }

    /// The exposition's lines, sorted (families list their series in no set order).
    fn lines(text: &str) -> Vec<String> {
        let mut v: Vec<String> = text.lines().map(str::to_owned).collect();
        v.sort();
        v
    }

    /// The same requests, from several threads, give the lines the two families gave.
    #[test]
    fn sharded_series_encode_as_the_families_did() {
        let requests = std::sync::Arc::new(Requests::default());
        let mut ours = Registry::default();
        ours.register_collector(Box::new(requests.clone()));
        let mut theirs = Registry::default();
        let counts = Family::<OwnedRequest, Counter>::default();
        theirs.register(
            "pay_http_requests",
            "HTTP requests answered, by route template, method and status",
            counts.clone(),
        );
        let latency =
            Family::<OwnedLatency, Histogram, fn() -> Histogram>::new_with_constructor(|| {
                Histogram::new(LATENCY_BUCKETS)
            });
        theirs.register_with_unit(
            "pay_http_request_duration",
            "Time to answer an HTTP request, by route template and method",
            Unit::Seconds,
            latency.clone(),
        );
        let mut empty = String::new();
        prometheus_client::encoding::text::encode(&mut empty, &ours).unwrap();
        assert_eq!(empty, "# EOF\n");

        let calls: Vec<(&str, &'static str, u16, f64)> = vec![
            // Powers of two: their sums are exact in any order.
            ("/a/{id}", "GET", 200, 0.000_488_281_25),
            ("/a/{id}", "GET", 404, 0.003_906_25),
            ("/a/{id}", "POST", 201, 0.75),
            ("unmatched", "GET", 404, 64.0),
            ("/b", "DELETE", 204, 0.000_976_562_5),
        ];
        std::thread::scope(|scope| {
            for t in 0..4u32 {
                let (requests, calls) = (&requests, &calls);
                scope.spawn(move || {
                    for (i, (route, method, status, secs)) in calls.iter().enumerate() {
                        for _ in 0..=(i as u32 + t) {
                            requests.record(route, method, *status, *secs);
                        }
                    }
                });
            }
        });
        for t in 0..4u32 {
            for (i, (route, method, status, secs)) in calls.iter().enumerate() {
                for _ in 0..=(i as u32 + t) {
                    latency
                        .get_or_create(&OwnedLatency {
                            route: route.to_string(),
                            method,
                        })
                        .observe(*secs);
                    counts
                        .get_or_create(&OwnedRequest {
                            route: route.to_string(),
                            method,
                            status: *status,
                        })
                        .inc();
                }
            }
        }
        let (mut a, mut b) = (String::new(), String::new());
        prometheus_client::encoding::text::encode(&mut a, &ours).unwrap();
        prometheus_client::encoding::text::encode(&mut b, &theirs).unwrap();
        assert!(
            a.contains(r#"pay_http_requests_total{route="/a/{id}",method="GET",status="404"} 14"#),
            "{a}"
        );
        assert_eq!(lines(&a), lines(&b));
    }
}
