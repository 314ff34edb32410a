//! The module graph of the core crate, read from its sources: which module names which (every
//! `crate::…` and `super::…` path), checked for the directions the design fixes — error → json →
//! model → report → store → replay → native, no module reaching one that reaches it back, no runtime
//! folder naming another runtime or the pipeline, the store naming no runtime — and no file over
//! 700 lines. The same is checked module by module (every file a node): no circle anywhere in the
//! crate, a module's use of its own submodules aside (it assembles them); inside `store/`, `Store`'s
//! methods are declared in `store/mod.rs` alone, `Session`'s in `store/session.rs`, and nothing
//! above `store/db/` names the database's backend; outside `store/`, their methods (the
//! conversions) are declared in `native/mod.rs` alone. `cargo test -p sna-history --test it layering:: -- --nocapture` prints both graphs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sna_test_support::modules::{code_of, cycle, module_graph, module_of, print, references, rust_files, Edges};

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

/// The graph of top-level modules, with each runtime folder and each file of `native/` a node.
fn graph() -> Edges {
    let files = rust_files(&src());
    let native_children: BTreeSet<String> = std::fs::read_dir(src().join("native"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || (p.extension().is_some_and(|e| e == "rs") && !p.ends_with("mod.rs")))
        .map(|p| p.file_stem().unwrap().to_str().unwrap().to_string())
        .collect();
    let mut edges = Edges::new();
    for file in &files {
        let Some(from) = node(&module_of(&src(), file), &native_children) else { continue };
        let entry = edges.entry(from.clone()).or_default();
        for reference in references(&src(), file) {
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
    edges
}

#[test]
fn the_module_graph_has_no_loop_and_points_one_way() {
    let graph = graph();
    print(&graph);
    if let Some(cycle) = cycle(&graph) {
        panic!("module loop: {}", cycle.join(" -> "));
    }
    let rank = |n: &str| LAYERS.iter().position(|l| *l == n.split("::").next().unwrap());
    for (from, targets) in &graph {
        for to in targets {
            if let (Some(a), Some(b)) = (rank(from), rank(to)) {
                assert!(b <= a, "{from} uses {to}, which sits above it (order: {})", LAYERS.join(" → "));
            }
        }
    }
    for runtime in runtimes() {
        let node = format!("native::{runtime}");
        let uses = graph.get(&node).unwrap_or_else(|| panic!("no module {node}"));
        for other in runtimes().iter().filter(|r| **r != runtime) {
            assert!(!uses.contains(&format!("native::{other}")), "{node} uses native::{other}");
        }
        for forbidden in ["native", "native::detect", "native::registry", "native::pipeline", "native::imports"] {
            assert!(!uses.contains(forbidden), "{node} uses {forbidden}: a runtime reaches the pipeline only through the adapter trait");
        }
    }
    let store = &graph["store"];
    assert!(store.iter().all(|n| !n.starts_with("native") && n != "replay"), "the store uses {store:?}");
}

#[test]
fn the_store_names_no_runtime() {
    for file in rust_files(&src().join("store")) {
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
    for file in rust_files(&src()) {
        let lines = std::fs::read_to_string(&file).unwrap().lines().count();
        assert!(lines <= 700, "{} has {lines} lines (at most 700)", file.display());
    }
}

#[test]
fn no_module_anywhere_is_in_a_circle() {
    if let Some(cycle) = cycle(&module_graph(&src())) {
        panic!("module loop: {}", cycle.join(" -> "));
    }
}

#[test]
fn store_methods_are_declared_once_and_no_backend_above_db() {
    let edges = module_graph(&src());
    println!("store/ (mod.rs is `store`):");
    for (from, to) in edges.iter().filter(|(from, _)| from.starts_with("store::")) {
        let inside: Vec<&str> = to.iter().filter(|t| t.starts_with("store")).map(String::as_str).collect();
        println!("  {from} -> {}", inside.join(", "));
    }
    // Every method of `Store` is declared in mod.rs, of `Session` in session.rs.
    for file in rust_files(&src()) {
        let text = std::fs::read_to_string(&file).unwrap();
        let rel = file.strip_prefix(src()).unwrap().to_str().unwrap().to_string();
        if rel.starts_with("store/") {
            let store_impl = text.contains("impl Store {");
            let session_impl = text.contains("impl Session {");
            assert!(!store_impl || rel == "store/mod.rs", "{rel} has an `impl Store` block: Store's methods are declared in store/mod.rs");
            assert!(!session_impl || rel == "store/session.rs", "{rel} has an `impl Session` block: Session's methods are declared in store/session.rs");
        }
        if rel.starts_with("store/") && !rel.starts_with("store/db") {
            let code = code_of(&file);
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
    for file in rust_files(&src()) {
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
