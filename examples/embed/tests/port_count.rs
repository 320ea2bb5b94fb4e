//! `docs/architecture.md` (Embedding) says how many port traits and methods this host writes:
//! counted here the way the page says, from the `impl <Trait> for <Type>` blocks in `src/`
//! (standard-library traits left out) and the `fn`s in each, so the figure cannot drift.

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// (trait, methods) of each top-level `impl Trait for Type` block of `text`.
fn port_impls(text: &str) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    let mut open: Option<(String, usize)> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("impl ") {
            if let Some((name, _)) = rest.split_once(" for ") {
                open = Some((name.to_owned(), 0));
            }
        } else if line.starts_with("    fn ") {
            if let Some((_, n)) = open.as_mut() {
                *n += 1;
            }
        } else if line == "}" {
            found.extend(open.take());
        }
    }
    found.retain(|(name, _)| !name.starts_with("std::"));
    found
}

#[test]
fn the_architecture_page_states_what_the_host_implements() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    let impls: Vec<(String, usize)> = files
        .iter()
        .flat_map(|f| port_impls(&std::fs::read_to_string(f).unwrap()))
        .collect();
    let traits = impls.len();
    let methods: usize = impls.iter().map(|(_, n)| n).sum();
    assert!(traits > 0 && methods > traits, "{impls:?}");
    let page = std::fs::read_to_string(root.join("../../docs/architecture.md")).unwrap();
    let row = format!("| **written by the host** | **{traits}** | **{methods}** |");
    assert!(
        page.contains(&row),
        "docs/architecture.md should say `{row}`: {impls:?}"
    );
}
