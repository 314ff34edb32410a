//! The module graph of the core crate, read from its sources: which module names which (every
//! `crate::…` and `super::…` path), checked for the directions the design fixes — error → json →
//! model → report → redact → store → replay → native → api → host, no module reaching one that
//! reaches it back, no runtime folder naming another runtime or the pipeline, the store naming no
//! runtime — and no file over 700 lines. The same is checked module by module (every file a node):
//! no circle anywhere in the crate, a module's use of its own submodules aside (it assembles them),
//! and nothing above `store/db/` naming the database's backend. Every public method of `Store` is
//! declared in `api/store.rs`, of `Session` in `api/session.rs`. `cargo test -p sna-history --test
//! it layering:: -- --nocapture` prints both graphs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sna_test_support::modules::{code_of, cycle, module_graph, module_of, print, references, rust_files, Edges};

/// The top-level modules, lowest first: each may use only those before it.
const LAYERS: [&str; 10] = ["error", "json", "model", "report", "redact", "store", "replay", "native", "api", "host"];

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
/// The files of every runtime's folder.
const RUNTIME_FILES: [&str; 7] = ["FORMAT.md", "compaction.rs", "export.rs", "import.rs", "mod.rs", "records.rs", "resume.rs"];
/// The files of a runtime the host runs (its live driver, and what it reads of the runtime's
/// output): both or neither.
const DRIVER_FILES: [&str; 2] = ["events.rs", "live.rs"];

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
        let driver: Vec<&str> = DRIVER_FILES.iter().copied().filter(|f| names.iter().any(|n| n == f)).collect();
        assert!(driver.is_empty() || driver == DRIVER_FILES, "native/{runtime} has {driver:?} of {DRIVER_FILES:?}: a driver has both");
        names.retain(|n| !DRIVER_FILES.contains(&n.as_str()));
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
fn no_backend_above_db() {
    let edges = module_graph(&src());
    println!("store/ (mod.rs is `store`):");
    for (from, to) in edges.iter().filter(|(from, _)| from.starts_with("store::")) {
        let inside: Vec<&str> = to.iter().filter(|t| t.starts_with("store")).map(String::as_str).collect();
        println!("  {from} -> {}", inside.join(", "));
    }
    for file in rust_files(&src().join("store")) {
        let rel = file.strip_prefix(src()).unwrap().to_str().unwrap().to_string();
        if rel.starts_with("store/db") {
            continue;
        }
        let code = code_of(&file);
        for word in ["Backend::", ".backend()", "rusqlite", "postgres::"] {
            assert!(!code.contains(word), "{rel} names {word}: what differs between the databases is store/db's dialect");
        }
    }
}

/// The handles whose public methods are declared in one file each, and that file.
const SURFACE: [(&str, &str); 2] = [("Store", "api/store.rs"), ("Session", "api/session.rs")];

/// A method of a handle: its type and its name.
type Method = (String, String);

/// The `pub fn`s declared in inherent `impl Store` / `impl Session` blocks of `code`, as (type,
/// method): a block is the lines from its `impl` line to the `}` at the same indent, and a method
/// is a line one indent (four spaces) in that starts with `pub fn` (`pub(crate) fn` and the like
/// are not public). Also returns how many inherent blocks of each type the code has.
fn public_methods(code: &str) -> (Vec<Method>, Vec<(String, usize)>) {
    let head = regex::Regex::new(r"^(\s*)impl(?:<[^>]*>)?\s+(?:[\w:]+::)?(Store|Session)(?:<[^>]*>)?\s*\{").unwrap();
    let method = regex::Regex::new(r"^pub (?:const |async |unsafe )*fn (\w+)").unwrap();
    let mut methods = Vec::new();
    let mut blocks: Vec<(String, usize)> = SURFACE.iter().map(|(t, _)| (t.to_string(), 0)).collect();
    let lines: Vec<&str> = code.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let Some(c) = head.captures(lines[i]) else {
            i += 1;
            continue;
        };
        let (indent, ty) = (c[1].to_string(), c[2].to_string());
        blocks.iter_mut().find(|(t, _)| *t == ty).unwrap().1 += 1;
        let inner = format!("{indent}    ");
        let end = format!("{indent}}}");
        i += 1;
        while i < lines.len() && !lines[i].starts_with(&end) {
            if let Some(m) = lines[i].strip_prefix(&inner).and_then(|l| method.captures(l)) {
                methods.push((ty.clone(), m[1].to_string()));
            }
            i += 1;
        }
    }
    (methods, blocks)
}

#[test]
fn public_methods_of_store_and_session_are_declared_in_one_file_per_type() {
    // Every `pub fn` of `Store` is in api/store.rs, of `Session` in api/session.rs, each file
    // holding the one inherent block of its type; elsewhere only crate-private helpers.
    let mut declared: Vec<(String, usize)> = Vec::new();
    for file in rust_files(&src()) {
        let rel = file.strip_prefix(src()).unwrap().to_str().unwrap().to_string();
        let (methods, blocks) = public_methods(&code_of(&file));
        for (ty, name) in &methods {
            let home = SURFACE.iter().find(|(t, _)| t == ty).unwrap().1;
            assert_eq!(rel, home, "{rel} declares the public method {ty}::{name}: every public method of {ty} is declared in {home}");
        }
        if let Some((ty, home)) = SURFACE.iter().find(|(_, home)| *home == rel) {
            let n = blocks.iter().find(|(t, _)| t == ty).unwrap().1;
            assert_eq!(n, 1, "{home} has {n} `impl {ty}` blocks: it declares {ty}'s public methods in one");
            declared.push((ty.to_string(), methods.len()));
        }
    }
    println!("public methods: {declared:?}");
    assert_eq!(declared.len(), SURFACE.len(), "a file of {SURFACE:?} is missing");
    assert!(declared.iter().all(|(_, n)| *n > 0), "the parser found no public method in {declared:?}");
}

#[test]
fn public_methods_are_found_where_they_are_declared() {
    let code = "impl Store {\n    pub fn open() {}\n    pub(crate) fn helper() {}\n    fn private() {\n        pub fn nested() {}\n    }\n}\n\
                impl std::fmt::Debug for Store {\n    fn fmt() {}\n}\n\
                mod inner {\n    impl crate::store::Session {\n        pub fn id() {}\n    }\n    pub fn free() {}\n}\n\
                impl SessionInfo {\n    pub fn other() {}\n}\n";
    let (methods, blocks) = public_methods(code);
    let pairs: Vec<(&str, &str)> = methods.iter().map(|(t, m)| (t.as_str(), m.as_str())).collect();
    assert_eq!(pairs, [("Store", "open"), ("Session", "id")]);
    assert_eq!(blocks, [("Store".to_string(), 1), ("Session".to_string(), 1)]);
}
