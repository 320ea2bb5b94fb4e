//! Command-line reading shared by the benchmarks (`-- --rounds 3 --smoke`).

/// The number after `name`, else `default`.
pub fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Whether `name` was given.
pub fn flag(name: &str) -> bool {
    std::env::args().any(|a| a == name)
}
