//! The module graph of the CLI crate, read from its sources: which module names which (every
//! `crate::…` and `super::…` path, and a module's own submodules by name), checked for the layout
//! the crate keeps — no circle among its modules, one module per command and no command naming
//! another, `sna view` not reaching into the server, the shared modules naming no command, and
//! every file of the web UI embedded. `cargo test -p sna-cli --test it layering:: -- --nocapture`
//! prints the graph.

use std::path::{Path, PathBuf};

use sna_test_support::modules::{cycle, module_graph, module_of, print, reach, references, rust_files, Edges};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The node a module path counts as: each command is one (`commands::show`), every other
/// top-level module is one with everything below it (`serve`, `acp`, `ui`…), the crate root is
/// `main`.
fn node(path: &[String]) -> String {
    match path {
        [] => "main".into(),
        [first, command, ..] if first == "commands" => format!("commands::{command}"),
        [first, ..] => first.clone(),
    }
}

/// The graph: node → the nodes it names (itself left out).
fn graph() -> Edges {
    let mut edges = Edges::new();
    for file in rust_files(&src()) {
        let from = node(&module_of(&src(), &file));
        let targets = edges.entry(from.clone()).or_default();
        for path in references(&src(), &file) {
            let to = node(&path);
            // `commands` (its mod.rs) only declares the commands.
            if to != from && to != "commands" {
                targets.insert(to);
            }
        }
    }
    edges
}

#[test]
fn the_graph_has_no_circle() {
    let edges = graph();
    print(&edges);
    if let Some(circle) = cycle(&edges) {
        panic!("a circle among the CLI's modules: {}", circle.join(" -> "));
    }
}

/// The same module by module (every file a node), a module's use of its own submodules aside.
#[test]
fn no_module_anywhere_is_in_a_circle() {
    if let Some(circle) = cycle(&module_graph(&src())) {
        panic!("a circle among the CLI's modules: {}", circle.join(" -> "));
    }
}

#[test]
fn every_command_has_its_module_and_names_no_other_command() {
    let edges = graph();
    let commands: Vec<&String> = edges.keys().filter(|n| n.starts_with("commands::")).collect();
    assert!(commands.len() >= 16, "one module per command: {commands:?}");
    let mut wrong = Vec::new();
    for from in &commands {
        for to in &edges[*from] {
            if to.starts_with("commands::") {
                wrong.push(format!("{from} -> {to}"));
            }
        }
    }
    assert!(wrong.is_empty(), "a command names another (what they share goes beside commands/): {wrong:?}");
}

#[test]
fn view_does_not_reach_the_server() {
    let edges = graph();
    let reached = reach(&edges, "commands::view");
    assert!(!reached.contains("serve") && !reached.contains("acp"), "sna view reaches {reached:?}");
    // Nor does the module the two pages share.
    let reached = reach(&edges, "ui");
    assert!(!reached.contains("serve"), "ui reaches {reached:?}");
}

#[test]
fn shared_modules_name_no_command_and_only_their_command_names_the_server() {
    let edges = graph();
    for (from, to) in &edges {
        // The root and `commands` (its mod.rs) declare the modules below them.
        if from == "main" || from == "commands" || from.starts_with("commands::") {
            continue;
        }
        let named: Vec<&String> = to.iter().filter(|t| t.starts_with("commands::") || *t == "args").collect();
        assert!(named.is_empty(), "{from} names {named:?}: commands and args are above the shared modules");
    }
    for feature in ["serve", "acp"] {
        let by: Vec<&String> = edges.iter().filter(|(_, to)| to.contains(feature)).map(|(from, _)| from).collect();
        let allowed = ["main".to_string(), format!("commands::{feature}")];
        assert!(by.iter().all(|f| allowed.contains(f)), "{feature} is named by {by:?}; only by main and its command");
    }
}

#[test]
fn main_stays_short() {
    let lines = std::fs::read_to_string(src().join("main.rs")).unwrap().lines().count();
    assert!(lines < 100, "main.rs has {lines} lines: commands go to commands/, arguments to args.rs");
}

/// Every file of the web UI (`cli/ui/`) is inside the binary, through `ui.rs`.
#[test]
fn every_ui_file_is_embedded() {
    let ui = std::fs::read_to_string(src().join("ui.rs")).unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !ui.contains(&format!("include_str!(\"../ui/{name}\")")) {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "not embedded by cli/src/ui.rs: {missing:?}");
}
