//! The module graph of the core crate, read from its sources: which module names which (every
//! `crate::…` and `super::…` path), checked for the directions the design fixes — error → json →
//! model → report → store → replay → native, no module reaching one that reaches it back, no runtime
//! folder naming another runtime or the pipeline, the store naming no runtime — and no file over
//! 700 lines. The same is checked module by module (every file a node): no circle anywhere in the
//! crate, a module's use of its own submodules aside (it assembles them); inside `store/`, `Store`'s
//! methods are declared in `store/mod.rs` alone, `Session`'s in `store/session.rs`, and nothing
//! above `store/db/` names the database's backend; outside `store/`, their methods (the
//! conversions) are declared in `native/mod.rs` alone. `cargo test -p sna-history --test it layering:: -- --nocapture` prints both graphs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules, lowest first: each may use only those before it.
const LAYERS: [&str; 9] = ["error", "json", "model", "report", "redact", "store", "replay", "native", "host"];

/// The runtime folders under `native/`: every directory there.
fn runtimes() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(src().join("native"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

/// The files of a runtime folder: the same in every one, and `request.rs` in those whose runtime has
/// a model request format of its own (Claude Code's Messages, Codex's items, Gemini's contents).
const RUNTIME_FILES: [&str; 9] = ["FORMAT.md", "compaction.rs", "events.rs", "export.rs", "import.rs", "live.rs", "mod.rs", "records.rs", "resume.rs"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a source file: `native/codex/export.rs` → `["native", "codex", "export"]`.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).unwrap();
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_str().unwrap().to_string()).collect();
    let last = parts.pop().unwrap();
    match last.as_str() {
        "mod.rs" | "lib.rs" => {}
        name => parts.push(name.trim_end_matches(".rs").to_string()),
    }
    parts
}

/// The node a module path counts as: a top-level module, or one level into `native` (a runtime
/// folder is one node; `native` itself is the pipeline in `native/mod.rs`).
fn node(path: &[String], native_children: &BTreeSet<String>) -> Option<String> {
    let first = path.first()?;
    if first == "native" {
        return Some(match path.get(1) {
            Some(child) if native_children.contains(child) => format!("native::{child}"),
            _ => "native".to_string(),
        });
    }
    Some(first.clone())
}

/// Every module path a file names (`crate::…`, `super::…`, and its own submodules by name), with
/// comments left out; a `{…}` group gives one path per member.
fn references(file: &Path) -> Vec<Vec<String>> {
    let module = module_of(file);
    let text = std::fs::read_to_string(file).unwrap();
    // Unit tests (`#[cfg(test)] mod tests` at the end of a file) are not part of the graph.
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    let code: String = text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    let children: Vec<String> = code
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix("pub(crate) mod ").or_else(|| l.strip_prefix("pub mod ")).or_else(|| l.strip_prefix("mod "))?;
            rest.strip_suffix(';').map(str::to_string)
        })
        .collect();
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut at = 0;
    while at < bytes.len() {
        if !is_ident(bytes[at]) || (at > 0 && (is_ident(bytes[at - 1]) || bytes[at - 1] == b':')) {
            at += 1;
            continue;
        }
        let end = (at..bytes.len()).find(|&i| !is_ident(bytes[i])).unwrap_or(bytes.len());
        let word = &code[at..end];
        let followed = code[end..].starts_with("::");
        let base = match word {
            "crate" if followed => Some(Vec::new()),
            "super" if followed => Some(module[..module.len().saturating_sub(1)].to_vec()),
            child if followed && children.iter().any(|c| c == child) => {
                let mut base = module.clone();
                base.push(child.to_string());
                Some(base)
            }
            _ => None,
        };
        match base {
            Some(base) => {
                let start = if word == "crate" || word == "super" { end + 2 } else { at };
                path_at(&code[start..], base, &mut out);
                at = end;
            }
            None => at = end,
        }
    }
    out
}

/// The paths at the start of `text` (after `crate::`), each appended to `base`.
fn path_at(text: &str, mut base: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut rest = text;
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut member = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        path_at(member.trim(), base.clone(), out);
                        member.clear();
                        continue;
                    }
                    _ => {}
                }
                member.push(c);
            }
            path_at(member.trim(), base, out);
            return;
        }
        let ident: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if ident.is_empty() {
            break;
        }
        base.push(ident.clone());
        rest = &rest[ident.len()..];
        match rest.strip_prefix("::") {
            Some(next) => rest = next,
            None => break,
        }
    }
    out.push(base);
}

struct Graph {
    edges: BTreeMap<String, BTreeSet<String>>,
}

fn graph() -> Graph {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.sort();
    let native_children: BTreeSet<String> = std::fs::read_dir(src().join("native"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || (p.extension().is_some_and(|e| e == "rs") && !p.ends_with("mod.rs")))
        .map(|p| p.file_stem().unwrap().to_str().unwrap().to_string())
        .collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let Some(from) = node(&module_of(file), &native_children) else { continue };
        let entry = edges.entry(from.clone()).or_default();
        for reference in references(file) {
            // `crate::Item` names the crate root's re-exports, not a module.
            if !reference.first().is_some_and(|m| LAYERS.contains(&m.as_str())) {
                continue;
            }
            if let Some(to) = node(&reference, &native_children) {
                if to != from {
                    entry.insert(to);
                }
            }
        }
    }
    Graph { edges }
}

fn cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(n: &str, graph: &Graph, stack: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|s| s == n) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(n.to_string());
            return Some(cycle);
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.to_string());
        for next in graph.edges.get(n).into_iter().flatten() {
            if let Some(c) = visit(next, graph, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for n in graph.edges.keys() {
        if let Some(c) = visit(n, graph, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn the_module_graph_has_no_loop_and_points_one_way() {
    let graph = graph();
    for (from, to) in &graph.edges {
        println!("{from} -> {}", to.iter().cloned().collect::<Vec<_>>().join(", "));
    }
    if let Some(cycle) = cycle(&graph) {
        panic!("module loop: {}", cycle.join(" -> "));
    }
    let rank = |n: &str| LAYERS.iter().position(|l| *l == n.split("::").next().unwrap());
    for (from, targets) in &graph.edges {
        for to in targets {
            if let (Some(a), Some(b)) = (rank(from), rank(to)) {
                assert!(b <= a, "{from} uses {to}, which sits above it (order: {})", LAYERS.join(" → "));
            }
        }
    }
    for runtime in runtimes() {
        let node = format!("native::{runtime}");
        let uses = graph.edges.get(&node).unwrap_or_else(|| panic!("no module {node}"));
        for other in runtimes().iter().filter(|r| **r != runtime) {
            assert!(!uses.contains(&format!("native::{other}")), "{node} uses native::{other}");
        }
        for forbidden in ["native", "native::detect", "native::registry", "native::pipeline", "native::imports"] {
            assert!(!uses.contains(forbidden), "{node} uses {forbidden}: a runtime reaches the pipeline only through the adapter trait");
        }
    }
    let store = &graph.edges["store"];
    assert!(store.iter().all(|n| !n.starts_with("native") && n != "replay"), "the store uses {store:?}");
}

#[test]
fn the_store_names_no_runtime() {
    let mut files = Vec::new();
    rust_files(&src().join("store"), &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for word in ["claude", "codex", "opencode", "gemini", "Claude", "Codex", "OpenCode", "Gemini"] {
            assert!(!text.contains(word), "{} names {word}", file.display());
        }
    }
}

#[test]
fn runtime_folders_have_the_same_files_and_no_file_is_long() {
    for runtime in runtimes() {
        let mut names: Vec<String> = std::fs::read_dir(src().join("native").join(&runtime))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_str().unwrap().to_string())
            .collect();
        names.retain(|n| n != "request.rs");
        names.sort();
        assert_eq!(names, RUNTIME_FILES, "native/{runtime}");
    }
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    for file in files {
        let lines = std::fs::read_to_string(&file).unwrap().lines().count();
        assert!(lines <= 700, "{} has {lines} lines (at most 700)", file.display());
    }
}

/// Every module of the crate (a file) and the modules it names, each reference resolved to the
/// longest module path it starts with. A module's references to its own submodules are left out:
/// a parent declares, re-exports and assembles its children.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.sort();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(f)).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let from = module_of(file);
        let entry = edges.entry(from.join("::")).or_default();
        for mut to in references(file) {
            while !to.is_empty() && !modules.contains(&to) {
                to.pop();
            }
            let inside = to.len() >= from.len() && to[..from.len()] == from[..];
            if !to.is_empty() && !inside {
                entry.insert(to.join("::"));
            }
        }
    }
    edges
}

#[test]
fn no_module_anywhere_is_in_a_circle() {
    let graph = Graph { edges: module_graph() };
    if let Some(cycle) = cycle(&graph) {
        panic!("module loop: {}", cycle.join(" -> "));
    }
}

#[test]
fn store_methods_are_declared_once_and_no_backend_above_db() {
    let edges = module_graph();
    println!("store/ (mod.rs is `store`):");
    for (from, to) in edges.iter().filter(|(from, _)| from.starts_with("store::")) {
        let inside: Vec<&str> = to.iter().filter(|t| t.starts_with("store")).map(String::as_str).collect();
        println!("  {from} -> {}", inside.join(", "));
    }
    // Every method of `Store` is declared in mod.rs, of `Session` in session.rs.
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let rel = file.strip_prefix(src()).unwrap().to_str().unwrap().to_string();
        if rel.starts_with("store/") {
            let store_impl = text.contains("impl Store {");
            let session_impl = text.contains("impl Session {");
            assert!(!store_impl || rel == "store/mod.rs", "{rel} has an `impl Store` block: Store's methods are declared in store/mod.rs");
            assert!(!session_impl || rel == "store/session.rs", "{rel} has an `impl Session` block: Session's methods are declared in store/session.rs");
        }
        if rel.starts_with("store/") && !rel.starts_with("store/db") {
            let code: String = text.split("#[cfg(test)]").next().unwrap_or("").lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
            for word in ["Backend::", ".backend()", "rusqlite", "postgres::"] {
                assert!(!code.contains(word), "{rel} names {word}: what differs between the databases is store/db's dialect");
            }
        }
    }
}

#[test]
fn conversions_of_store_and_session_are_declared_in_the_pipeline_alone() {
    // The store cannot name the runtimes, so the methods that convert (exports, imports, resumes)
    // are declared beside the pipeline, in one file, and delegate to the modules that do the work.
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    for file in files {
        let rel = file.strip_prefix(src()).unwrap().to_str().unwrap().to_string();
        if rel.starts_with("store/") || rel == "native/mod.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for block in ["impl Store {", "impl Session {"] {
            assert!(!text.contains(block), "{rel} has an `{block}` block: outside store/, Store's and Session's methods are declared in native/mod.rs");
        }
    }
}
