//! A crate's module graph read from its sources, for the layering tests of `core` and `cli`: every
//! file is a module (`native/codex/export.rs` is `native::codex::export`, a `mod.rs`, `lib.rs` or
//! `main.rs` the module of its folder), and a module names another through a `crate::…` or
//! `super::…` path, a path through one of its own submodules, or by declaring it. Comments and
//! unit tests (`#[cfg(test)]` at the end of a file) are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module → the modules it names.
pub type Edges = BTreeMap<String, BTreeSet<String>>;

/// Every `.rs` file under `dir`, sorted.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

/// The module path of `file` under the crate's `src`: `commands/show.rs` → `["commands", "show"]`,
/// `store/mod.rs` → `["store"]`, `lib.rs` or `main.rs` → `[]`.
pub fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap_or_else(|_| panic!("{} is not under {}", file.display(), src.display()));
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_str().unwrap().to_string()).collect();
    let last = parts.pop().unwrap();
    if !matches!(last.as_str(), "mod.rs" | "lib.rs" | "main.rs") {
        parts.push(last.trim_end_matches(".rs").to_string());
    }
    parts
}

/// The source of a file without its comments and its unit tests.
pub fn code_of(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// Every path a file names, from the crate root (`crate::a::{b, c::d}` gives `a::b` and `a::c::d`),
/// and the submodules it declares. A path may go on past the module into an item
/// (`store::Store`); [`module_graph`] cuts it back to the module.
pub fn references(src: &Path, file: &Path) -> Vec<Vec<String>> {
    let module = module_of(src, file);
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

/// Every module of the crate under `src` (a file) and the modules it names, each reference cut
/// back to the longest module path it starts with. A module's references to its own submodules
/// are left out: a parent declares, re-exports and assembles its children.
pub fn module_graph(src: &Path) -> Edges {
    let files = rust_files(src);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src, f)).collect();
    let mut edges = Edges::new();
    for file in &files {
        let from = module_of(src, file);
        let entry = edges.entry(from.join("::")).or_default();
        for mut to in references(src, file) {
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

/// A circle in the graph (its nodes, the first repeated at the end), if there is one.
pub fn cycle(edges: &Edges) -> Option<Vec<String>> {
    fn visit(n: &str, edges: &Edges, stack: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|s| s == n) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(n.to_string());
            return Some(cycle);
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.to_string());
        for next in edges.get(n).into_iter().flatten() {
            if let Some(c) = visit(next, edges, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges.keys().find_map(|n| visit(n, edges, &mut Vec::new(), &mut done))
}

/// Every node `from` reaches.
pub fn reach(edges: &Edges, from: &str) -> BTreeSet<String> {
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

/// Prints a graph, a node and what it names per line (seen with `-- --nocapture`).
pub fn print(edges: &Edges) {
    for (from, to) in edges {
        println!("{from} -> {}", to.iter().cloned().collect::<Vec<_>>().join(", "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edges(list: &[(&str, &[&str])]) -> Edges {
        list.iter().map(|(from, to)| (from.to_string(), to.iter().map(|t| t.to_string()).collect())).collect()
    }

    #[test]
    fn a_circle_is_found_and_a_chain_is_not_one() {
        let chain = edges(&[("a", &["b"]), ("b", &["c"]), ("c", &[])]);
        assert_eq!(cycle(&chain), None);
        let circle = edges(&[("a", &["b"]), ("b", &["c"]), ("c", &["a"])]);
        assert_eq!(cycle(&circle), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
        assert_eq!(reach(&chain, "a"), ["b".to_string(), "c".to_string()].into_iter().collect());
    }

    #[test]
    fn paths_and_groups_are_read_from_the_root() {
        let mut out = Vec::new();
        paths_at("store::{layout::Row, self, db::{Conn, Tx}};", vec!["x".into()], &mut out);
        let got: Vec<String> = out.iter().map(|p| p.join("::")).collect();
        assert_eq!(got, ["x::store::layout::Row", "x::store", "x::store::db::Conn", "x::store::db::Tx"]);
    }
}
