//! The module graph of the CLI crate, read from its sources: which module names which (every
//! `crate::…` and `super::…` path, and a module's own submodules by name), checked for the layout
//! the crate keeps — no circle among its modules, one module per command and no command naming
//! another, `sna view` not reaching into the server, the shared modules naming no command, and
//! every file of the web UI embedded. `cargo test -p sna-cli --test layering -- --nocapture`
//! prints the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

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

/// The module path of a source file: `commands/show.rs` → `["commands", "show"]`, `main.rs` → `[]`.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).unwrap();
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_str().unwrap().to_string()).collect();
    let last = parts.pop().unwrap();
    if !matches!(last.as_str(), "mod.rs" | "main.rs") {
        parts.push(last.trim_end_matches(".rs").to_string());
    }
    parts
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

/// The source of a file without comments and without its unit tests.
fn code_of(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// Every module path a file names, from the crate root.
fn references(file: &Path) -> Vec<Vec<String>> {
    let module = module_of(file);
    let code = code_of(file);
    let children: Vec<String> = code
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix("pub(crate) mod ").or_else(|| l.strip_prefix("pub mod ")).or_else(|| l.strip_prefix("mod "))?;
            rest.strip_suffix(';').map(str::to_string)
        })
        .collect();
    let bytes = code.as_bytes();
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if !is_ident(bytes[at]) || (at > 0 && (is_ident(bytes[at - 1]) || bytes[at - 1] == b':')) {
            at += 1;
            continue;
        }
        let end = (at..bytes.len()).find(|&i| !is_ident(bytes[i])).unwrap_or(bytes.len());
        let word = &code[at..end];
        if code[end..].starts_with("::") {
            match word {
                "crate" => paths_at(&code[end + 2..], Vec::new(), &mut out),
                "super" => paths_at(&code[end + 2..], module[..module.len().saturating_sub(1)].to_vec(), &mut out),
                child if children.iter().any(|c| c == child) => paths_at(&code[at..], module.clone(), &mut out),
                _ => {}
            }
        }
        at = end;
    }
    // A module declared here is named here too.
    for child in children {
        let mut path = module.clone();
        path.push(child);
        out.push(path);
    }
    out
}

/// The paths at the start of `text` (`a::b`, `a::{b, c::d}`), each appended to `base`.
fn paths_at(text: &str, mut base: Vec<String>, out: &mut Vec<Vec<String>>) {
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
                        paths_at(member.trim(), base.clone(), out);
                        member.clear();
                        continue;
                    }
                    _ => {}
                }
                member.push(c);
            }
            paths_at(member.trim(), base, out);
            return;
        }
        let ident: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if ident.is_empty() || ident == "self" {
            break;
        }
        base.push(ident.clone());
        rest = &rest[ident.len()..];
        match rest.strip_prefix("::") {
            Some(next) => rest = next,
            None => break,
        }
    }
    if !base.is_empty() {
        out.push(base);
    }
}

/// The graph: node → the nodes it names (itself left out).
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let from = node(&module_of(file));
        let targets = edges.entry(from.clone()).or_default();
        for path in references(file) {
            let to = node(&path);
            // `commands` (its mod.rs) only declares the commands.
            if to != from && to != "commands" {
                targets.insert(to);
            }
        }
    }
    edges
}

/// A circle through `start`, if there is one.
fn circle(edges: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    fn walk(edges: &BTreeMap<String, BTreeSet<String>>, start: &str, at: &str, path: &mut Vec<String>, seen: &mut BTreeSet<String>) -> bool {
        for next in edges.get(at).into_iter().flatten() {
            if next == start {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(edges, start, next, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.to_string()];
    walk(edges, start, start, &mut path, &mut BTreeSet::new()).then_some(path)
}

/// Every node `from` reaches.
fn reach(edges: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(at) = stack.pop() {
        for next in edges.get(&at).into_iter().flatten() {
            if seen.insert(next.clone()) {
                stack.push(next.clone());
            }
        }
    }
    seen
}

#[test]
fn the_graph_has_no_circle() {
    let edges = graph();
    for (from, to) in &edges {
        println!("{from} -> {}", to.iter().cloned().collect::<Vec<_>>().join(", "));
    }
    let circles: Vec<String> = edges.keys().filter_map(|n| circle(&edges, n)).map(|c| c.join(" -> ")).collect();
    assert!(circles.is_empty(), "circles among the CLI's modules:\n{}", circles.join("\n"));
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
