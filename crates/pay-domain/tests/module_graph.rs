//! One direction between the domain's contexts (`docs/architecture.md`, "Dependency
//! direction"): reads every source file of the crate, collects the `crate::<module>` and
//! `super::` paths that cross from one top-level module to another (comments, string literals
//! and `#[cfg(test)]` parts left out), and fails naming the cycle if there is one. Inside a
//! context the same holds between its files. `testing` and `app` compose everything: they may
//! import any module, and nothing imports them (except `testing`, which builds `app`).
//!
//! Run it alone with `cargo test -p pay-domain --test module_graph`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`["subscriptions", "service"]`) -> the module paths it names.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The composition modules: they may import anything; only `testing` may import `app`.
const COMPOSITION: [&str; 2] = ["testing", "app"];

#[test]
fn the_contexts_import_each_other_in_one_direction() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let refs = references(&src);
    let (top, inner) = graphs(&refs);
    assert!(
        top.len() > 10,
        "the crate's top-level modules were not found: {top:?}"
    );
    if let Some(cycle) = find_cycle(&top) {
        panic!(
            "the domain's contexts import each other in a cycle: {} ({})",
            cycle.join(" -> "),
            witnesses(&refs, &cycle, 1)
        );
    }
    for (context, graph) in &inner {
        if let Some(cycle) = find_cycle(graph) {
            panic!(
                "the files of `{context}` import each other in a cycle: {} ({})",
                cycle.join(" -> "),
                witnesses(&refs, &cycle, 2)
            );
        }
    }
}

#[test]
fn nothing_imports_the_composition_modules_and_the_kernel_imports_no_context() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (top, _) = graphs(&references(&src));
    for (from, targets) in &top {
        for to in targets {
            let allowed = !COMPOSITION.contains(&to.as_str()) || (from == "testing" && to == "app");
            assert!(allowed, "`{from}` imports the composition module `{to}`");
        }
    }
    assert_eq!(
        top.get("kernel").cloned().unwrap_or_default(),
        BTreeSet::new(),
        "`kernel` imports contexts"
    );
}

/// One reference: the file it is in, that file's module path, and the module path it names.
struct Reference {
    file: PathBuf,
    from: Vec<String>,
    to: Vec<String>,
}

/// Every path from one module to another in the crate's non-test code.
fn references(src: &Path) -> Vec<Reference> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut test_only: Vec<Vec<String>> = Vec::new();
    let mut sources = Vec::new();
    for file in files {
        let module = module_path(src, &file);
        let text = std::fs::read_to_string(&file).expect("a source file reads");
        let (code, test_modules) = strip_tests(&strip_comments_and_strings(&text));
        for name in test_modules {
            let mut path = module.clone();
            path.push(name);
            test_only.push(path);
        }
        sources.push((file, module, code));
    }
    // Only paths that name a module (a file) count: `crate::Fault` or `super::Cycle` name an
    // item, re-exported by the module above, and are not edges between files.
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|(_, m, _)| m.clone()).collect();
    let mut refs = Vec::new();
    for (file, module, code) in sources {
        if test_only.iter().any(|t| module.starts_with(t)) {
            continue;
        }
        for mut to in named_paths(&module, &code) {
            while !to.is_empty() && !modules.contains(&to) {
                to.pop();
            }
            if to.is_empty() {
                continue;
            }
            refs.push(Reference {
                file: file.clone(),
                from: module.clone(),
                to,
            });
        }
    }
    refs
}

/// The graph between top-level modules, and per context the graph between its files.
fn graphs(refs: &[Reference]) -> (Graph, BTreeMap<String, Graph>) {
    let mut top = Graph::new();
    let mut inner: BTreeMap<String, Graph> = BTreeMap::new();
    for r in refs {
        let (Some(from), Some(to)) = (r.from.first(), r.to.first()) else {
            continue;
        };
        top.entry(from.clone()).or_default();
        if from != to {
            top.entry(from.clone()).or_default().insert(to.clone());
        } else if r.from.len() >= 2 && r.to.len() >= 2 && r.from[1] != r.to[1] {
            inner
                .entry(from.clone())
                .or_default()
                .entry(r.from[1].clone())
                .or_default()
                .insert(r.to[1].clone());
        }
    }
    (top, inner)
}

/// A cycle of `graph` as the nodes walked (the first repeated at the end), if it has one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &Graph,
        marks: &mut BTreeMap<String, Mark>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let start = stack.iter().position(|n| n == node).unwrap_or(0);
                let mut cycle = stack[start..].to_vec();
                cycle.push(node.to_owned());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node.to_owned(), Mark::Open);
        stack.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, marks, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        marks.insert(node.to_owned(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        let mut stack = Vec::new();
        if let Some(cycle) = visit(node, graph, &mut marks, &mut stack) {
            return Some(cycle);
        }
    }
    None
}

/// For each edge of `cycle`, one file that makes it (paths compared on their first `depth`
/// segments below the cycle's context).
fn witnesses(refs: &[Reference], cycle: &[String], depth: usize) -> String {
    let key = |path: &[String]| -> Option<String> { path.get(depth - 1).cloned() };
    cycle
        .windows(2)
        .filter_map(|pair| {
            refs.iter()
                .find(|r| {
                    key(&r.from).as_deref() == Some(pair[0].as_str())
                        && key(&r.to).as_deref() == Some(pair[1].as_str())
                        && (depth == 1 || r.from.first() == r.to.first())
                })
                .map(|r| format!("{} -> {}: {}", pair[0], pair[1], r.file.display()))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("the source folder reads")
        .map(|e| e.expect("a folder entry reads").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/subscriptions/service.rs` -> `["subscriptions", "service"]`; `mod.rs` and `lib.rs`
/// name their folder.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).expect("a file under src");
    let mut path: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = path.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        path.push(stem.to_owned());
    }
    path
}

/// The module paths `code` (in the module `module`) names with `crate::`, `super::` or
/// `self::`, grouped `{...}` imports expanded.
fn named_paths(module: &[String], code: &str) -> Vec<Vec<String>> {
    let tokens = tokens(code);
    let at = |k: usize| tokens.get(k).map(String::as_str).unwrap_or("");
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let preceded_by_path = i > 0 && at(i - 1) == "::";
        let mut base = match at(i) {
            "crate" if !preceded_by_path => Vec::new(),
            "self" | "super" if !preceded_by_path => module.to_vec(),
            _ => {
                i += 1;
                continue;
            }
        };
        while at(i) == "super" || at(i) == "self" {
            if at(i) == "super" {
                base.pop();
            }
            if at(i + 1) == "::" && (at(i + 2) == "super" || at(i + 2) == "self") {
                i += 2;
            } else {
                break;
            }
        }
        i += 1;
        if at(i) != "::" {
            continue;
        }
        i = use_tree(&tokens, i + 1, base, &mut out);
    }
    out
}

/// Reads the path or `{...}` group at `tokens[i]` below `prefix` into `out`; returns the
/// position after it.
fn use_tree(
    tokens: &[String],
    mut i: usize,
    prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    let at = |k: usize| tokens.get(k).map(String::as_str).unwrap_or("");
    match at(i) {
        "{" => {
            i += 1;
            while i < tokens.len() && at(i) != "}" {
                if at(i) == "," {
                    i += 1;
                    continue;
                }
                let before = i;
                i = use_tree(tokens, i, prefix.clone(), out);
                if i == before {
                    i += 1;
                }
            }
            i + 1
        }
        name if is_ident(name) && name != "as" => {
            let mut path = prefix;
            path.push(name.to_owned());
            if at(i + 1) == "::" {
                use_tree(tokens, i + 2, path, out)
            } else {
                out.push(path);
                i + 1
            }
        }
        _ => {
            if !prefix.is_empty() {
                out.push(prefix);
            }
            i
        }
    }
}

fn is_ident(token: &str) -> bool {
    token
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// Identifiers, `::` and single punctuation characters.
fn tokens(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push("::".to_owned());
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push(c.to_string());
            }
            i += 1;
        }
    }
    out
}

/// `text` with comments removed and string and character literals emptied.
fn strip_comments_and_strings(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !chars
                .get(i.wrapping_sub(1))
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                match chars.get(j) {
                    None => break,
                    Some('"') if (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) => {
                        j += 1 + hashes;
                        break;
                    }
                    Some(_) => j += 1,
                }
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A character literal ('a', '\n', '\u{..}') or a lifetime ('a).
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push_str("' '");
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// `code` without the items under `#[cfg(test)]`, and the names of the `#[cfg(test)] mod x;`
/// declarations (whose files are tests too).
fn strip_tests(code: &str) -> (String, Vec<String>) {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut test_modules = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let item = &rest[at + MARK.len()..];
        let mut depth = 0usize;
        let mut end = item.len();
        for (k, ch) in item.char_indices() {
            match ch {
                '{' | '[' | '(' => depth += 1,
                '}' | ']' | ')' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 && ch == '}' {
                        end = k + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    let toks = tokens(&item[..k]);
                    if let [.., m, name] = toks.as_slice() {
                        if m == "mod" {
                            test_modules.push(name.clone());
                        }
                    }
                    end = k + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    (out, test_modules)
}

#[cfg(test)]
mod graph_function {
    use super::*;

    fn graph(edges: &[(&str, &str)]) -> Graph {
        let mut g = Graph::new();
        for (from, to) in edges {
            g.entry((*from).to_owned())
                .or_default()
                .insert((*to).to_owned());
            g.entry((*to).to_owned()).or_default();
        }
        g
    }

    #[test]
    fn a_cycle_is_found_and_named() {
        let g = graph(&[
            ("kernel", "kernel"),
            ("links", "kernel"),
            ("webhooks", "links"),
            ("links", "checkout"),
            ("checkout", "webhooks"),
        ]);
        let cycle = find_cycle(&g).expect("the cycle is found");
        assert_eq!(cycle.first(), cycle.last());
        assert_eq!(cycle.len(), 4, "{cycle:?}");
        for name in ["links", "checkout", "webhooks"] {
            assert!(cycle.iter().any(|n| n == name), "{cycle:?}");
        }
    }

    #[test]
    fn one_direction_has_no_cycle() {
        let g = graph(&[
            ("links", "kernel"),
            ("webhooks", "links"),
            ("checkout", "links"),
            ("checkout", "webhooks"),
        ]);
        assert_eq!(find_cycle(&g), None);
    }

    #[test]
    fn paths_across_modules_are_read_from_code_not_comments_or_tests() {
        let code = r##"
            use crate::links::{LinkUid, Link};
            use super::scheduler::Scheduler;
            use crate::{kernel::ids::CompanyId, settings};
            // use crate::webhooks::Hidden;
            /* crate::mail::Hidden */
            let s = "crate::oauth::Hidden";
            let r = r#"crate::oauth::Hidden"#;
            let c = '"';
            fn f<'a>(x: &'a str) -> crate::chains::Chain { todo!() }
            #[cfg(test)]
            mod tests { use crate::bookkeeping::Hidden; }
            #[cfg(test)]
            mod more;
        "##;
        let module = vec!["subscriptions".to_owned(), "service".to_owned()];
        let (code, test_modules) = strip_tests(&strip_comments_and_strings(code));
        let named: BTreeSet<String> = named_paths(&module, &code)
            .into_iter()
            .map(|p| p.join("::"))
            .collect();
        let expected: BTreeSet<String> = [
            "links::LinkUid",
            "links::Link",
            "kernel::ids::CompanyId",
            "subscriptions::scheduler::Scheduler",
            "settings",
            "chains::Chain",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect();
        assert_eq!(named, expected);
        assert_eq!(test_modules, vec!["more".to_owned()]);
    }
}
