//! Tool translation between the runtimes, for replaying a conversation in another runtime than
//! the one that ran it.
//!
//! A call is translated only where the target has a tool that does the same thing with the same
//! meaning of its inputs; the result text stays as it was (each runtime's tool prints in its own
//! way, and the model reads it as text either way). Where the target has no equivalent, the call
//! keeps its name and input: the model still sees what was done, and a call of a tool the target
//! does not offer is harmless in history. Names are read in the runtime that made the call (Pi's
//! `read` is not OpenCode's `read`); a call a host made itself is read as the first runtime, in the
//! table's order, that has a tool of that name.
//!
//! | family | Claude Code | Codex | OpenCode | Gemini CLI | Pi | Qwen Code | Copilot CLI |
//! |---|---|---|---|---|---|---|---|
//! | shell | `Bash {command, description?, timeout?}` | `exec_command {cmd, workdir?}`, `shell {command: [argv]}`, `local_shell` | `bash {command, description?, timeout?}` | `run_shell_command {command, description?, dir_path?}` | `bash {command, timeout?}` (seconds) | `run_shell_command {command, description?, timeout?, directory?}` | `bash {command, description}` |
//! | read | `Read {file_path, offset?, limit?}` | — (Codex reads with the shell) | `read {filePath, offset?, limit?}` | `read_file {file_path, start_line?, end_line?}` | `read {path, offset?, limit?}` | `read_file {file_path, offset?, limit?}` (`offset` 0-based) | `view {path, view_range?: [first, last]}` (1-based, inclusive) |
//! | write | `Write {file_path, content}` | — (`apply_patch` adds files, but as a patch) | `write {filePath, content}` | `write_file {file_path, content}` | `write {path, content}` | `write_file {file_path, content}` | `create {path, file_text}` |
//! | edit | `Edit {file_path, old_string, new_string, replace_all?}` | — (`apply_patch` is a different language) | `edit {filePath, oldString, newString, replaceAll?}` | `replace {file_path, old_string, new_string, allow_multiple?, instruction}` | `edit {path, edits: [{oldText, newText}]}` (one edit; several, or `replace_all`, stay as they are) | `edit {file_path, old_string, new_string, replace_all?}` | `edit {path, old_str, new_str}` (`replace_all` stays as it is) |
//! | glob | `Glob {pattern, path?}` | — | `glob {pattern, path?}` | `glob {pattern, dir_path?}` | — (`find` is off by default) | `glob {pattern, path?}` | `glob {pattern, paths?}` |
//! | grep | `Grep {pattern, path?, glob?}` | — | `grep {pattern, path?, include?}` | `grep_search {pattern, dir_path?, include_pattern?}` | — (off by default) | `grep_search {pattern, path?, glob?}` | `grep {pattern, paths?, glob?}` |
//! | web fetch | `WebFetch {url, prompt}` | — | `webfetch {url, format}` | — (`web_fetch {prompt}` holds the URLs in its prompt) | — | — | — |
//! | web search | `WebSearch {query}` | `web_search_call` (a built-in item, not a function) | `websearch {query}` | `google_web_search {query}` | — | — | — |
//!
//! Line ranges: Claude Code's and Pi's `offset` is the first line (1-based) and `limit` a count;
//! Qwen Code's `offset` is 0-based; Gemini CLI's `start_line`/`end_line` are both inclusive. Gemini CLI's `replace` asks for an
//! `instruction`, which a translated call gets as `Replace text in <file>`. Timeouts are
//! milliseconds except Pi's seconds.

use serde_json::{Map, Value};

use crate::model::Runtime;

/// What a tool call does, independent of the runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Shell,
    Read,
    Write,
    Edit,
    Glob,
    Grep,
    WebFetch,
    WebSearch,
}

/// The family of `runtime`'s tool `name`.
fn family(name: &str, runtime: Runtime) -> Option<Family> {
    Some(match (runtime, name) {
        (Runtime::ClaudeCode, "Bash") => Family::Shell,
        (Runtime::ClaudeCode, "Read") => Family::Read,
        (Runtime::ClaudeCode, "Write") => Family::Write,
        (Runtime::ClaudeCode, "Edit") => Family::Edit,
        (Runtime::ClaudeCode, "Glob") => Family::Glob,
        (Runtime::ClaudeCode, "Grep") => Family::Grep,
        (Runtime::ClaudeCode, "WebFetch") => Family::WebFetch,
        (Runtime::ClaudeCode, "WebSearch") => Family::WebSearch,
        (Runtime::Codex, "exec_command" | "shell" | "local_shell" | "container.exec") => Family::Shell,
        (Runtime::OpenCode, "bash") => Family::Shell,
        (Runtime::OpenCode, "read") => Family::Read,
        (Runtime::OpenCode, "write") => Family::Write,
        (Runtime::OpenCode, "edit") => Family::Edit,
        (Runtime::OpenCode, "glob") => Family::Glob,
        (Runtime::OpenCode, "grep") => Family::Grep,
        (Runtime::OpenCode, "webfetch") => Family::WebFetch,
        (Runtime::OpenCode, "websearch") => Family::WebSearch,
        (Runtime::GeminiCli, "run_shell_command") => Family::Shell,
        (Runtime::GeminiCli, "read_file") => Family::Read,
        (Runtime::GeminiCli, "write_file") => Family::Write,
        (Runtime::GeminiCli, "replace") => Family::Edit,
        (Runtime::GeminiCli, "glob") => Family::Glob,
        (Runtime::GeminiCli, "grep_search") => Family::Grep,
        (Runtime::GeminiCli, "google_web_search") => Family::WebSearch,
        (Runtime::Pi, "bash") => Family::Shell,
        (Runtime::Pi, "read") => Family::Read,
        (Runtime::Pi, "write") => Family::Write,
        (Runtime::Pi, "edit") => Family::Edit,
        (Runtime::QwenCode, "run_shell_command") => Family::Shell,
        (Runtime::QwenCode, "read_file") => Family::Read,
        (Runtime::QwenCode, "write_file") => Family::Write,
        (Runtime::QwenCode, "edit") => Family::Edit,
        (Runtime::QwenCode, "glob") => Family::Glob,
        (Runtime::QwenCode, "grep_search") => Family::Grep,
        (Runtime::CopilotCli, "bash") => Family::Shell,
        (Runtime::CopilotCli, "view") => Family::Read,
        (Runtime::CopilotCli, "create") => Family::Write,
        (Runtime::CopilotCli, "edit") => Family::Edit,
        (Runtime::CopilotCli, "glob") => Family::Glob,
        (Runtime::CopilotCli, "grep") => Family::Grep,
        _ => return None,
    })
}

/// Copies `input[from]` to `out[to]` when present.
fn copy(out: &mut Map<String, Value>, input: &Map<String, Value>, to: &str, from: &str) {
    if let Some(v) = input.get(from) {
        out.insert(to.to_string(), v.clone());
    }
}

/// `input` with the keys of `pairs` renamed (`(from, to)`), the others kept.
fn rename(input: Map<String, Value>, pairs: &[(&str, &str)]) -> Map<String, Value> {
    input.into_iter().map(|(k, v)| (pairs.iter().find(|(from, _)| *from == k).map(|(_, to)| to.to_string()).unwrap_or(k), v)).collect()
}

/// A number scaled by `factor` (a timeout between seconds and milliseconds).
fn scaled(value: &Value, factor: f64) -> Value {
    value.as_f64().map(|n| n * factor).and_then(|n| serde_json::Number::from_f64(n.round())).map(|n| match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 9e15 => Value::from(f as i64),
        _ => Value::Number(n),
    }).unwrap_or_else(|| value.clone())
}

/// The neutral form of a call's input: field names of Claude Code (snake_case), a shell command
/// as one line, line ranges as offset and count, timeouts in milliseconds.
fn neutral(family: Family, from: Runtime, input: &Map<String, Value>) -> Option<Map<String, Value>> {
    let mut out = Map::new();
    match (family, from) {
        (Family::Shell, Runtime::Codex) => {
            let line = match input.get("cmd").or_else(|| input.get("command")) {
                Some(Value::String(line)) => line.clone(),
                Some(Value::Array(argv)) => {
                    let argv: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
                    match argv.as_slice() {
                        ["bash" | "sh" | "zsh", "-lc" | "-c", line] => line.to_string(),
                        other => other.join(" "),
                    }
                }
                _ => return None,
            };
            out.insert("command".into(), Value::String(line));
            copy(&mut out, input, "workdir", "workdir");
        }
        (Family::Shell, Runtime::GeminiCli) => {
            copy(&mut out, input, "command", "command");
            copy(&mut out, input, "description", "description");
            copy(&mut out, input, "workdir", "dir_path");
        }
        (Family::Shell, Runtime::Pi) => {
            copy(&mut out, input, "command", "command");
            if let Some(timeout) = input.get("timeout") {
                out.insert("timeout".into(), scaled(timeout, 1000.0));
            }
        }
        (Family::Shell, Runtime::QwenCode) => {
            copy(&mut out, input, "command", "command");
            copy(&mut out, input, "description", "description");
            copy(&mut out, input, "timeout", "timeout");
            copy(&mut out, input, "workdir", "directory");
        }
        (Family::Read, Runtime::QwenCode) => {
            copy(&mut out, input, "file_path", "file_path");
            if let Some(offset) = input.get("offset").and_then(Value::as_i64) {
                out.insert("offset".into(), offset.saturating_add(1).into());
            }
            copy(&mut out, input, "limit", "limit");
        }
        (_, Runtime::QwenCode) => out = input.clone(),
        (Family::Read, Runtime::CopilotCli) => {
            copy(&mut out, input, "file_path", "path");
            let range: Vec<Option<i64>> = input.get("view_range").and_then(Value::as_array).map(|r| r.iter().map(Value::as_i64).collect()).unwrap_or_default();
            if let [Some(first), last] = range.as_slice() {
                out.insert("offset".into(), (*first).into());
                if let Some(last) = last.filter(|l| l >= first) {
                    out.insert("limit".into(), last.saturating_sub(*first).saturating_add(1).into());
                }
            }
        }
        (_, Runtime::CopilotCli) => {
            out = rename(input.clone(), &[("path", "file_path"), ("file_text", "content"), ("old_str", "old_string"), ("new_str", "new_string")]);
            match out.remove("paths") {
                Some(Value::String(path)) => {
                    out.insert("path".into(), Value::String(path));
                }
                Some(_) => return None,
                None => {}
            }
        }
        (Family::Shell, _) => {
            copy(&mut out, input, "command", "command");
            copy(&mut out, input, "description", "description");
            copy(&mut out, input, "timeout", "timeout");
        }
        (_, Runtime::OpenCode) => {
            out = rename(input.clone(), &[("filePath", "file_path"), ("oldString", "old_string"), ("newString", "new_string"), ("replaceAll", "replace_all"), ("include", "glob")]);
        }
        (Family::Read, Runtime::GeminiCli) => {
            copy(&mut out, input, "file_path", "file_path");
            if let Some(start) = input.get("start_line").and_then(Value::as_i64) {
                out.insert("offset".into(), start.into());
                if let Some(end) = input.get("end_line").and_then(Value::as_i64) {
                    out.insert("limit".into(), (end - start + 1).max(0).into());
                }
            } else if let Some(end) = input.get("end_line").and_then(Value::as_i64) {
                out.insert("limit".into(), end.into());
            }
        }
        (Family::Edit, Runtime::GeminiCli) => {
            out = rename(input.clone(), &[("allow_multiple", "replace_all")]);
            out.remove("instruction");
        }
        (_, Runtime::GeminiCli) => out = rename(input.clone(), &[("dir_path", "path"), ("include_pattern", "glob")]),
        (Family::Edit, Runtime::Pi) => {
            let [edit] = input.get("edits").and_then(Value::as_array).map(Vec::as_slice)? else { return None };
            copy(&mut out, input, "file_path", "path");
            copy(&mut out, edit.as_object()?, "old_string", "oldText");
            copy(&mut out, edit.as_object()?, "new_string", "newText");
        }
        (_, Runtime::Pi) => out = rename(input.clone(), &[("path", "file_path")]),
        _ => out = input.clone(),
    }
    if out.is_empty() {
        return None;
    }
    Some(out)
}

/// The call in `to`'s terms: its name and input.
fn native(family: Family, to: Runtime, input: Map<String, Value>) -> Option<(&'static str, Map<String, Value>)> {
    match to {
        Runtime::ClaudeCode => {
            let name = match family {
                Family::Shell => "Bash",
                Family::Read => "Read",
                Family::Write => "Write",
                Family::Edit => "Edit",
                Family::Glob => "Glob",
                Family::Grep => "Grep",
                Family::WebFetch => "WebFetch",
                Family::WebSearch => "WebSearch",
            };
            let mut input = input;
            input.remove("workdir");
            Some((name, input))
        }
        Runtime::Codex => match family {
            Family::Shell => {
                let mut out = Map::new();
                out.insert("cmd".into(), input.get("command").cloned().unwrap_or(Value::Null));
                if let Some(workdir) = input.get("workdir") {
                    out.insert("workdir".into(), workdir.clone());
                }
                Some(("exec_command", out))
            }
            _ => None,
        },
        Runtime::OpenCode => {
            let pairs: &[(&str, &str)] = &[("file_path", "filePath"), ("old_string", "oldString"), ("new_string", "newString"), ("replace_all", "replaceAll")];
            let (name, mut input) = match family {
                Family::Shell => ("bash", input),
                Family::Read => ("read", rename(input, pairs)),
                Family::Write => ("write", rename(input, pairs)),
                Family::Edit => ("edit", rename(input, pairs)),
                Family::Glob => ("glob", input),
                Family::Grep => ("grep", rename(input, &[("glob", "include")])),
                Family::WebFetch => {
                    let mut out = Map::new();
                    out.insert("url".into(), input.get("url").cloned().unwrap_or(Value::Null));
                    out.insert("format".into(), input.get("format").cloned().unwrap_or_else(|| "markdown".into()));
                    ("webfetch", out)
                }
                Family::WebSearch => ("websearch", input),
            };
            input.remove("workdir");
            Some((name, input))
        }
        Runtime::GeminiCli => {
            let mut out = Map::new();
            let name = match family {
                Family::Shell => {
                    copy(&mut out, &input, "command", "command");
                    copy(&mut out, &input, "description", "description");
                    copy(&mut out, &input, "dir_path", "workdir");
                    "run_shell_command"
                }
                Family::Read => {
                    copy(&mut out, &input, "file_path", "file_path");
                    let offset = input.get("offset").and_then(Value::as_i64);
                    if let Some(offset) = offset {
                        out.insert("start_line".into(), offset.into());
                    }
                    if let Some(limit) = input.get("limit").and_then(Value::as_i64) {
                        out.insert("end_line".into(), (offset.unwrap_or(1) + limit - 1).into());
                    }
                    "read_file"
                }
                Family::Write => {
                    out = input;
                    "write_file"
                }
                Family::Edit => {
                    let file = input.get("file_path").and_then(Value::as_str).unwrap_or("the file").to_string();
                    out = rename(input, &[("replace_all", "allow_multiple")]);
                    out.insert("instruction".into(), Value::String(format!("Replace text in {file}")));
                    "replace"
                }
                Family::Glob => {
                    out = rename(input, &[("path", "dir_path")]);
                    "glob"
                }
                Family::Grep => {
                    out = rename(input, &[("path", "dir_path"), ("glob", "include_pattern")]);
                    "grep_search"
                }
                Family::WebSearch => {
                    out = input;
                    "google_web_search"
                }
                Family::WebFetch => return None,
            };
            Some((name, out))
        }
        Runtime::Pi => {
            let mut out = Map::new();
            let name = match family {
                Family::Shell => {
                    copy(&mut out, &input, "command", "command");
                    if let Some(timeout) = input.get("timeout") {
                        out.insert("timeout".into(), scaled(timeout, 0.001));
                    }
                    "bash"
                }
                Family::Read => {
                    out = rename(input, &[("file_path", "path")]);
                    "read"
                }
                Family::Write => {
                    out = rename(input, &[("file_path", "path")]);
                    "write"
                }
                Family::Edit => {
                    if input.get("replace_all").and_then(Value::as_bool) == Some(true) {
                        return None;
                    }
                    copy(&mut out, &input, "path", "file_path");
                    let mut edit = Map::new();
                    copy(&mut edit, &input, "oldText", "old_string");
                    copy(&mut edit, &input, "newText", "new_string");
                    out.insert("edits".into(), Value::Array(vec![Value::Object(edit)]));
                    "edit"
                }
                _ => return None,
            };
            Some((name, out))
        }
        Runtime::QwenCode => {
            let mut out = Map::new();
            let name = match family {
                Family::Shell => {
                    copy(&mut out, &input, "command", "command");
                    copy(&mut out, &input, "description", "description");
                    copy(&mut out, &input, "timeout", "timeout");
                    copy(&mut out, &input, "directory", "workdir");
                    "run_shell_command"
                }
                Family::Read => {
                    copy(&mut out, &input, "file_path", "file_path");
                    if let Some(offset) = input.get("offset").and_then(Value::as_i64) {
                        out.insert("offset".into(), offset.saturating_sub(1).max(0).into());
                    }
                    copy(&mut out, &input, "limit", "limit");
                    "read_file"
                }
                Family::Write => {
                    out = input;
                    "write_file"
                }
                Family::Edit => {
                    out = input;
                    "edit"
                }
                Family::Glob => {
                    out = input;
                    "glob"
                }
                Family::Grep => {
                    out = input;
                    "grep_search"
                }
                Family::WebFetch | Family::WebSearch => return None,
            };
            Some((name, out))
        }
        Runtime::CopilotCli => {
            let mut out = Map::new();
            let name = match family {
                Family::Shell => {
                    copy(&mut out, &input, "command", "command");
                    let description = input.get("description").cloned().unwrap_or_else(|| Value::String("Run a command".into()));
                    out.insert("description".into(), description);
                    "bash"
                }
                Family::Read => {
                    copy(&mut out, &input, "path", "file_path");
                    let offset = input.get("offset").and_then(Value::as_i64);
                    let limit = input.get("limit").and_then(Value::as_i64).filter(|n| *n >= 1);
                    if offset.is_some() || limit.is_some() {
                        let first = offset.unwrap_or(1).max(1);
                        let last = limit.map_or(-1, |n| first.saturating_add(n - 1));
                        out.insert("view_range".into(), Value::Array(vec![first.into(), last.into()]));
                    }
                    "view"
                }
                Family::Write => {
                    out = rename(input, &[("file_path", "path"), ("content", "file_text")]);
                    "create"
                }
                Family::Edit => {
                    if input.get("replace_all").and_then(Value::as_bool) == Some(true) {
                        return None;
                    }
                    out = rename(input, &[("file_path", "path"), ("old_string", "old_str"), ("new_string", "new_str")]);
                    out.remove("replace_all");
                    "edit"
                }
                Family::Glob => {
                    out = rename(input, &[("path", "paths")]);
                    "glob"
                }
                Family::Grep => {
                    out = rename(input, &[("path", "paths")]);
                    "grep"
                }
                Family::WebFetch | Family::WebSearch => return None,
            };
            Some((name, out))
        }
    }
}

/// The call `name(input)`, made in `from` (`None`: a call of the host's own, read as the first
/// runtime with a tool of that name), translated for `target` when the target has an equivalent:
/// the new name and the new input as JSON text. `None` leaves the call as it is.
pub fn translate(name: &str, input: &str, from: Option<Runtime>, target: Runtime) -> Option<(String, String)> {
    let (family, from) = match from {
        Some(from) => (family(name, from)?, from),
        // A call a host made itself, named as one of the target's tools, is the target's.
        None if family(name, target).is_some() => return None,
        None => Runtime::ALL.iter().find_map(|r| family(name, *r).map(|f| (f, *r)))?,
    };
    if from == target {
        return None;
    }
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(input) else { return None };
    let neutral = neutral(family, from, &map)?;
    let (name, input) = native(family, target, neutral)?;
    Some((name.to_string(), Value::Object(input).to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_calls_translate_every_way() {
        assert_eq!(translate("Bash", r#"{"command":"ls","description":"List"}"#, None, Runtime::Codex), Some(("exec_command".into(), r#"{"cmd":"ls"}"#.into())));
        assert_eq!(translate("Bash", r#"{"command":"ls","description":"List"}"#, None, Runtime::OpenCode), Some(("bash".into(), r#"{"command":"ls","description":"List"}"#.into())));
        assert_eq!(translate("exec_command", r#"{"cmd":"ls -a","workdir":"/p"}"#, None, Runtime::ClaudeCode), Some(("Bash".into(), r#"{"command":"ls -a"}"#.into())));
        assert_eq!(translate("shell", r#"{"command":["bash","-lc","echo hi"]}"#, None, Runtime::OpenCode), Some(("bash".into(), r#"{"command":"echo hi"}"#.into())));
        assert_eq!(translate("bash", r#"{"command":"pwd"}"#, None, Runtime::Codex), Some(("exec_command".into(), r#"{"cmd":"pwd"}"#.into())));
        // Same runtime, a tool without an equivalent, input that is not an object: unchanged.
        assert_eq!(translate("Bash", r#"{"command":"ls"}"#, None, Runtime::ClaudeCode), None);
        assert_eq!(translate("Read", r#"{"file_path":"/a"}"#, None, Runtime::Codex), None);
        assert_eq!(translate("apply_patch", "*** Begin Patch", None, Runtime::ClaudeCode), None);
        assert_eq!(translate("Bash", "not json", None, Runtime::Codex), None);
    }

    #[test]
    fn file_tools_rename_their_fields() {
        assert_eq!(translate("Read", r#"{"file_path":"/a","limit":5}"#, None, Runtime::OpenCode), Some(("read".into(), r#"{"filePath":"/a","limit":5}"#.into())));
        assert_eq!(translate("read", r#"{"filePath":"/a"}"#, None, Runtime::ClaudeCode), Some(("Read".into(), r#"{"file_path":"/a"}"#.into())));
        assert_eq!(
            translate("edit", r#"{"filePath":"/a","oldString":"x","newString":"y"}"#, None, Runtime::ClaudeCode),
            Some(("Edit".into(), r#"{"file_path":"/a","old_string":"x","new_string":"y"}"#.into()))
        );
        assert_eq!(translate("Grep", r#"{"pattern":"x","glob":"*.rs"}"#, None, Runtime::OpenCode), Some(("grep".into(), r#"{"pattern":"x","include":"*.rs"}"#.into())));
        assert_eq!(translate("WebFetch", r#"{"url":"https://e.x","prompt":"sum"}"#, None, Runtime::OpenCode), Some(("webfetch".into(), r#"{"url":"https://e.x","format":"markdown"}"#.into())));
    }

    #[test]
    fn gemini_and_pi_tools_translate_both_ways() {
        let gemini = Some(Runtime::GeminiCli);
        let pi = Some(Runtime::Pi);
        assert_eq!(
            translate("read_file", r#"{"file_path":"a.txt","start_line":3,"end_line":7}"#, gemini, Runtime::ClaudeCode),
            Some(("Read".into(), r#"{"file_path":"a.txt","offset":3,"limit":5}"#.into()))
        );
        assert_eq!(translate("Read", r#"{"file_path":"a.txt","offset":3,"limit":5}"#, None, Runtime::GeminiCli), Some(("read_file".into(), r#"{"file_path":"a.txt","start_line":3,"end_line":7}"#.into())));
        assert_eq!(translate("run_shell_command", r#"{"command":"ls","dir_path":"/p"}"#, gemini, Runtime::Codex), Some(("exec_command".into(), r#"{"cmd":"ls","workdir":"/p"}"#.into())));
        assert_eq!(translate("bash", r#"{"command":"ls","timeout":2}"#, pi, Runtime::ClaudeCode), Some(("Bash".into(), r#"{"command":"ls","timeout":2000}"#.into())));
        assert_eq!(translate("Bash", r#"{"command":"ls","timeout":2000}"#, None, Runtime::Pi), Some(("bash".into(), r#"{"command":"ls","timeout":2}"#.into())));
        // Pi's `read` is not OpenCode's: its `path` becomes OpenCode's `filePath`.
        assert_eq!(translate("read", r#"{"path":"a.txt"}"#, pi, Runtime::OpenCode), Some(("read".into(), r#"{"filePath":"a.txt"}"#.into())));
        assert_eq!(translate("read", r#"{"filePath":"a.txt"}"#, Some(Runtime::OpenCode), Runtime::Pi), Some(("read".into(), r#"{"path":"a.txt"}"#.into())));
        assert_eq!(
            translate("edit", r#"{"path":"a","edits":[{"oldText":"x","newText":"y"}]}"#, pi, Runtime::GeminiCli),
            Some(("replace".into(), r#"{"file_path":"a","old_string":"x","new_string":"y","instruction":"Replace text in a"}"#.into()))
        );
        assert_eq!(
            translate("replace", r#"{"file_path":"a","instruction":"fix","old_string":"x","new_string":"y"}"#, gemini, Runtime::Pi),
            Some(("edit".into(), r#"{"path":"a","edits":[{"oldText":"x","newText":"y"}]}"#.into()))
        );
        // Several edits at once, or a replace-all, have no one-call equivalent: unchanged.
        assert_eq!(translate("edit", r#"{"path":"a","edits":[{"oldText":"x","newText":"y"},{"oldText":"z","newText":"w"}]}"#, pi, Runtime::ClaudeCode), None);
        assert_eq!(translate("Edit", r#"{"file_path":"a","old_string":"x","new_string":"y","replace_all":true}"#, None, Runtime::Pi), None);
        assert_eq!(translate("grep_search", r#"{"pattern":"x","include_pattern":"*.rs"}"#, gemini, Runtime::OpenCode), Some(("grep".into(), r#"{"pattern":"x","include":"*.rs"}"#.into())));
        assert_eq!(translate("glob", r#"{"pattern":"*.rs"}"#, Some(Runtime::OpenCode), Runtime::Pi), None);
        assert_eq!(translate("google_web_search", r#"{"query":"q"}"#, gemini, Runtime::ClaudeCode), Some(("WebSearch".into(), r#"{"query":"q"}"#.into())));    }

    #[test]
    fn qwen_code_tools_translate_both_ways() {
        let qwen = Some(Runtime::QwenCode);
        // Qwen Code's `offset` is 0-based, Claude Code's 1-based.
        assert_eq!(translate("read_file", r#"{"file_path":"/a","offset":2,"limit":3}"#, qwen, Runtime::ClaudeCode), Some(("Read".into(), r#"{"file_path":"/a","offset":3,"limit":3}"#.into())));
        assert_eq!(translate("Read", r#"{"file_path":"/a","offset":3,"limit":3}"#, None, Runtime::QwenCode), Some(("read_file".into(), r#"{"file_path":"/a","offset":2,"limit":3}"#.into())));
        assert_eq!(translate("run_shell_command", r#"{"command":"ls","directory":"/p"}"#, qwen, Runtime::Codex), Some(("exec_command".into(), r#"{"cmd":"ls","workdir":"/p"}"#.into())));
        assert_eq!(translate("exec_command", r#"{"cmd":"ls","workdir":"/p"}"#, Some(Runtime::Codex), Runtime::QwenCode), Some(("run_shell_command".into(), r#"{"command":"ls","directory":"/p"}"#.into())));
        assert_eq!(
            translate("edit", r#"{"filePath":"/a","oldString":"x","newString":"y"}"#, Some(Runtime::OpenCode), Runtime::QwenCode),
            Some(("edit".into(), r#"{"file_path":"/a","old_string":"x","new_string":"y"}"#.into()))
        );
        // Qwen Code's `edit` is Gemini CLI's `replace`.
        assert_eq!(
            translate("edit", r#"{"file_path":"a","old_string":"x","new_string":"y"}"#, qwen, Runtime::GeminiCli),
            Some(("replace".into(), r#"{"file_path":"a","old_string":"x","new_string":"y","instruction":"Replace text in a"}"#.into()))
        );
        assert_eq!(translate("grep_search", r#"{"pattern":"x","glob":"*.rs"}"#, qwen, Runtime::OpenCode), Some(("grep".into(), r#"{"pattern":"x","include":"*.rs"}"#.into())));
        assert_eq!(translate("WebSearch", r#"{"query":"q"}"#, None, Runtime::QwenCode), None);
        // A call a host made itself with one of Qwen Code's names stays Qwen Code's (not read as
        // Gemini CLI's `read_file`, which has no `offset`).
        assert_eq!(translate("read_file", r#"{"file_path":"a","offset":10,"limit":5}"#, None, Runtime::QwenCode), None);
    }

    #[test]
    fn copilot_cli_tools_translate_both_ways() {
        let copilot = Some(Runtime::CopilotCli);
        assert_eq!(translate("bash", r#"{"command":"ls","description":"List"}"#, copilot, Runtime::Codex), Some(("exec_command".into(), r#"{"cmd":"ls"}"#.into())));
        // Copilot CLI's bash needs a description.
        assert_eq!(translate("exec_command", r#"{"cmd":"ls"}"#, Some(Runtime::Codex), Runtime::CopilotCli), Some(("bash".into(), r#"{"command":"ls","description":"Run a command"}"#.into())));
        assert_eq!(translate("view", r#"{"path":"/a","view_range":[3,7]}"#, copilot, Runtime::ClaudeCode), Some(("Read".into(), r#"{"file_path":"/a","offset":3,"limit":5}"#.into())));
        assert_eq!(translate("Read", r#"{"file_path":"/a","offset":3,"limit":5}"#, None, Runtime::CopilotCli), Some(("view".into(), r#"{"path":"/a","view_range":[3,7]}"#.into())));
        assert_eq!(translate("Write", r#"{"file_path":"/a","content":"x"}"#, None, Runtime::CopilotCli), Some(("create".into(), r#"{"path":"/a","file_text":"x"}"#.into())));
        assert_eq!(
            translate("edit", r#"{"path":"/a","old_str":"x","new_str":"y"}"#, copilot, Runtime::OpenCode),
            Some(("edit".into(), r#"{"filePath":"/a","oldString":"x","newString":"y"}"#.into()))
        );
        assert_eq!(translate("Edit", r#"{"file_path":"/a","old_string":"x","new_string":"y","replace_all":true}"#, None, Runtime::CopilotCli), None);
        assert_eq!(translate("grep", r#"{"pattern":"x","paths":"src","glob":"*.rs"}"#, copilot, Runtime::ClaudeCode), Some(("Grep".into(), r#"{"pattern":"x","glob":"*.rs","path":"src"}"#.into())));
        // Several paths have no one-path equivalent: unchanged.
        assert_eq!(translate("glob", r#"{"pattern":"*","paths":["a","b"]}"#, copilot, Runtime::ClaudeCode), None);
        // Numbers at the ends of their range do not overflow; a count below one gives no range end.
        assert_eq!(translate("Read", &format!(r#"{{"file_path":"/a","offset":{},"limit":2}}"#, i64::MAX), None, Runtime::CopilotCli).unwrap().0, "view");
        assert_eq!(translate("Read", r#"{"file_path":"/a","offset":3,"limit":0}"#, None, Runtime::CopilotCli), Some(("view".into(), r#"{"path":"/a","view_range":[3,-1]}"#.into())));
        assert_eq!(translate("view", &format!(r#"{{"path":"/a","view_range":[{},{}]}}"#, i64::MIN, i64::MAX), copilot, Runtime::QwenCode).unwrap().0, "read_file");
    }
}
