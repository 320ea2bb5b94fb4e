//! Supported IANA time zones, from the tz database compiled into `chrono-tz`.

/// Every canonical zone and link name of the bundled tz database, sorted.
pub fn all() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = chrono_tz::TZ_VARIANTS.iter().map(|tz| tz.name()).collect();
    v.sort_unstable();
    v
}

/// Whether `name` is a supported zone (exact, case-sensitive).
pub fn is_supported(name: &str) -> bool {
    name.parse::<chrono_tz::Tz>().is_ok() && all().binary_search(&name).is_ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn lists_real_zones() {
        let all = super::all();
        assert!(all.len() > 400);
        assert!(all.contains(&"Europe/Paris"));
        assert!(all.contains(&"America/Argentina/Buenos_Aires"));
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        assert!(super::is_supported("Asia/Tokyo"));
        assert!(!super::is_supported("Mars/Olympus"));
        assert!(!super::is_supported("europe/paris"));
    }
}
