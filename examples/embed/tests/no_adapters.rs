//! The embedding example's dependency tree holds no HTTP server, database driver, HTTP client
//! or native crypto: `cargo tree` of the example names none of them. Nor does it build the
//! domain's in-memory adapters: `pay-domain` comes without its `testing` feature.

use std::process::Command;

#[test]
fn cargo_tree_shows_no_actix_diesel_reqwest_or_ring() {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "-p",
            "pay-embed-example",
            "-e",
            "normal,build",
            "--prefix",
            "none",
            "--format",
            "{p} [{f}]",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8(out.stdout).unwrap();
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.contains(&"pay-domain"), "{tree}");
    for line in tree.lines().filter(|l| l.starts_with("pay-domain ")) {
        let features = line.rsplit_once('[').map_or("", |(_, f)| f);
        assert!(
            !features.contains("testing"),
            "pay-domain is built with its testing feature: {line}"
        );
    }
    for banned in [
        "actix-web",
        "actix-rt",
        "diesel",
        "reqwest",
        "ring",
        "hyper",
        "tokio",
    ] {
        assert!(
            !names.contains(&banned),
            "{banned} is in the example's tree:\n{tree}"
        );
    }
}
