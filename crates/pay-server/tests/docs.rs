//! The documentation points only at files of this repository: every link target and every file
//! name written in backticks in `README.md`, `bench/README.md` and `docs/*.md` exists in the
//! checkout, inside it (a reader of a clone has nothing else).

use std::path::{Component, Path, PathBuf};

/// Extensions that make a backticked word a file name.
const FILE_EXTENSIONS: [&str; 9] = ["md", "rs", "py", "lua", "toml", "json", "sh", "yml", "yaml"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `path` with `.` and `..` resolved lexically; `None` when it climbs above its start.
fn normalise(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(p) => out.push(p),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// Every file of the repository (relative paths), without build output and VCS data.
fn repo_files(dir: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if [".git", "target", "out"].contains(&name.to_str().unwrap_or("")) {
            continue;
        }
        let path = rel.join(&name);
        if entry.file_type().unwrap().is_dir() {
            repo_files(&entry.path(), &path, out);
        } else {
            out.push(path);
        }
    }
}

/// The docs a reader of the repository reads.
fn docs() -> Vec<PathBuf> {
    let mut docs = vec![PathBuf::from("README.md"), PathBuf::from("bench/README.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let name = PathBuf::from("docs").join(entry.unwrap().file_name());
        if name.extension().is_some_and(|e| e == "md") {
            docs.push(name);
        }
    }
    docs
}

/// Markdown link targets (`](target)`) and backticked words that look like file names.
fn references(text: &str) -> Vec<(String, bool)> {
    let mut refs = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(')') {
            refs.push((rest[..end].to_owned(), true));
        }
    }
    for (i, span) in text.split('`').enumerate() {
        let looks_like_a_file = i % 2 == 1
            && !span.contains(char::is_whitespace)
            && !span.contains(['*', '<', '{', '$'])
            && span
                .rsplit_once('.')
                .is_some_and(|(_, ext)| FILE_EXTENSIONS.contains(&ext));
        if looks_like_a_file {
            refs.push((span.to_owned(), false));
        }
    }
    refs
}

/// Why `reference` (found in `doc`) does not name a file of the repository, if it does not.
fn problem(doc: &Path, reference: &str, is_link: bool, files: &[PathBuf]) -> Option<String> {
    if is_link
        && (reference.starts_with("http://")
            || reference.starts_with("https://")
            || reference.starts_with("mailto:")
            || reference.starts_with('#'))
    {
        return None;
    }
    // A route of the service (`/api/partner/v1/openapi.json`), not a file.
    if !is_link && reference.starts_with("/api/") {
        return None;
    }
    if reference.starts_with('/') {
        return Some("an absolute path".into());
    }
    let path = reference.split('#').next().unwrap_or(reference);
    // Written while the benchmarks run, never committed.
    if path.starts_with("bench/out/") {
        return None;
    }
    let dir = doc.parent().unwrap_or(Path::new(""));
    let Some(resolved) = normalise(&dir.join(path)) else {
        return Some("a path outside the repository".into());
    };
    let exists = |p: &Path| files.iter().any(|f| f == p) || root().join(p).is_dir();
    if exists(&resolved) {
        return None;
    }
    if is_link {
        return Some("a link to nothing in the repository".into());
    }
    // A file name in prose: relative to the document, the repository, or a suffix of a path
    // in it (`pay-server/src/mailer.rs`).
    let suffix = Path::new(path);
    if normalise(suffix).is_some_and(|p| exists(&p)) || files.iter().any(|f| f.ends_with(suffix)) {
        return None;
    }
    Some("a file that is not in the repository".into())
}

#[test]
fn the_docs_name_only_files_of_the_repository() {
    let mut files = Vec::new();
    repo_files(&root(), Path::new(""), &mut files);
    assert!(files.iter().any(|f| f == Path::new("Cargo.toml")));
    let mut problems = Vec::new();
    let mut checked = 0;
    for doc in docs() {
        let text = std::fs::read_to_string(root().join(&doc)).unwrap();
        for (reference, is_link) in references(&text) {
            checked += 1;
            if let Some(why) = problem(&doc, &reference, is_link, &files) {
                problems.push(format!("{}: `{reference}`: {why}", doc.display()));
            }
        }
    }
    assert!(checked > 20, "the docs reference files ({checked} found)");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_check_catches_what_it_is_for() {
    let files = vec![
        PathBuf::from("README.md"),
        PathBuf::from("docs/api.md"),
        PathBuf::from("crates/pay-server/src/mailer.rs"),
    ];
    let readme = Path::new("README.md");
    let api = Path::new("docs/api.md");
    for (doc, reference, is_link) in [
        (readme, "../shared/design/roadmap.md", false),
        (readme, "../shared/design/roadmap.md", true),
        (api, "../../elsewhere.md", true),
        (api, "contract.md", false),
        (readme, "/etc/pay/config.toml", false),
        (readme, "docs/missing.md", true),
    ] {
        assert!(
            problem(doc, reference, is_link, &files).is_some(),
            "{reference} passed"
        );
    }
    for (doc, reference, is_link) in [
        (readme, "docs/api.md", true),
        (api, "api.md#errors", true),
        (api, "../README.md", true),
        (readme, "pay-server/src/mailer.rs", false),
        (readme, "https://example.com/x.md", true),
        (readme, "/api/partner/v1/openapi.json", false),
        (readme, "bench/out/foundation.json", false),
    ] {
        assert_eq!(
            problem(doc, reference, is_link, &files),
            None,
            "{reference}"
        );
    }
}
