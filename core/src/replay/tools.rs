//! Tool translation between the runtimes, for replaying a conversation in another runtime than
//! the one that ran it.
//!
//! A call is translated only where the target has a tool that does the same thing with the same
//! meaning of its inputs; the result text stays as it was (each runtime's tool prints in its own
//! way, and the model reads it as text either way). Where the target has no equivalent, the call
//! keeps its name and input: the model still sees what was done, and a call of a tool the target
//! does not offer is harmless in history.
//!
//! | family | Claude Code | Codex | OpenCode | why these and not more |
//! |---|---|---|---|---|
//! | shell | `Bash {command, description?, timeout?}` | `exec_command {cmd, workdir?}`, `shell {command: [argv]}`, `local_shell` | `bash {command, description?, timeout?}` | every runtime runs a shell command line; Codex's argv form is `bash -lc <line>` or a plain argv, joined back into a line |
//! | read | `Read {file_path, offset?, limit?}` | — (Codex reads with the shell) | `read {filePath, offset?, limit?}` | same inputs, camelCase in OpenCode |
//! | write | `Write {file_path, content}` | — (`apply_patch` adds files, but as a patch) | `write {filePath, content}` | |
//! | edit | `Edit {file_path, old_string, new_string, replace_all?}` | — (`apply_patch` is a different language) | `edit {filePath, oldString, newString, replaceAll?}` | `apply_patch` stays `apply_patch` |
//! | glob | `Glob {pattern, path?}` | — | `glob {pattern, path?}` | |
//! | grep | `Grep {pattern, path?, glob?}` | — | `grep {pattern, path?, include?}` | Claude's `glob` filter is OpenCode's `include` |
//! | web fetch | `WebFetch {url, prompt}` | — | `webfetch {url, format}` | OpenCode's `format` defaults to `markdown`; Claude's `prompt` has no OpenCode counterpart and is dropped from the input |
//! | web search | `WebSearch {query}` | `web_search_call` (a built-in item, not a function) | `websearch {query}` | Codex searches are items the model itself runs, so a search call toward Codex keeps its name |

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

/// The family of a tool name and the runtime whose name it is.
fn family(name: &str) -> Option<(Family, Runtime)> {
    Some(match name {
        "Bash" => (Family::Shell, Runtime::ClaudeCode),
        "Read" => (Family::Read, Runtime::ClaudeCode),
        "Write" => (Family::Write, Runtime::ClaudeCode),
        "Edit" => (Family::Edit, Runtime::ClaudeCode),
        "Glob" => (Family::Glob, Runtime::ClaudeCode),
        "Grep" => (Family::Grep, Runtime::ClaudeCode),
        "WebFetch" => (Family::WebFetch, Runtime::ClaudeCode),
        "WebSearch" => (Family::WebSearch, Runtime::ClaudeCode),
        "exec_command" | "shell" | "local_shell" | "container.exec" => (Family::Shell, Runtime::Codex),
        "bash" => (Family::Shell, Runtime::OpenCode),
        "read" => (Family::Read, Runtime::OpenCode),
        "write" => (Family::Write, Runtime::OpenCode),
        "edit" => (Family::Edit, Runtime::OpenCode),
        "glob" => (Family::Glob, Runtime::OpenCode),
        "grep" => (Family::Grep, Runtime::OpenCode),
        "webfetch" => (Family::WebFetch, Runtime::OpenCode),
        "websearch" => (Family::WebSearch, Runtime::OpenCode),
        _ => return None,
    })
}

/// The neutral form of a call's input: field names of Claude Code (snake_case), a shell command
/// as one line.
fn neutral(family: Family, from: Runtime, input: &Map<String, Value>) -> Option<Map<String, Value>> {
    let mut out = Map::new();
    let copy = |out: &mut Map<String, Value>, to: &str, from_key: &str| {
        if let Some(v) = input.get(from_key) {
            out.insert(to.to_string(), v.clone());
        }
    };
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
            copy(&mut out, "workdir", "workdir");
        }
        (Family::Shell, _) => {
            copy(&mut out, "command", "command");
            copy(&mut out, "description", "description");
            copy(&mut out, "timeout", "timeout");
        }
        (_, Runtime::OpenCode) => {
            for (key, value) in input {
                let key = match key.as_str() {
                    "filePath" => "file_path",
                    "oldString" => "old_string",
                    "newString" => "new_string",
                    "replaceAll" => "replace_all",
                    "include" => "glob",
                    other => other,
                };
                out.insert(key.to_string(), value.clone());
            }
        }
        _ => out = input.clone(),
    }
    if out.is_empty() {
        return None;
    }
    Some(out)
}

/// The call in `to`'s terms: its name and input.
fn native(family: Family, to: Runtime, input: Map<String, Value>) -> Option<(&'static str, Map<String, Value>)> {
    let rename = |input: Map<String, Value>, pairs: &[(&str, &str)]| -> Map<String, Value> {
        input
            .into_iter()
            .map(|(k, v)| (pairs.iter().find(|(from, _)| *from == k).map(|(_, to)| to.to_string()).unwrap_or(k), v))
            .collect()
    };
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
    }
}

/// The call `name(input)` translated for `target`, when it is another runtime's tool with an
/// equivalent there: the new name and the new input as JSON text. `None` leaves the call as it is.
pub fn translate(name: &str, input: &str, target: Runtime) -> Option<(String, String)> {
    let (family, from) = family(name)?;
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
        assert_eq!(translate("Bash", r#"{"command":"ls","description":"List"}"#, Runtime::Codex), Some(("exec_command".into(), r#"{"cmd":"ls"}"#.into())));
        assert_eq!(translate("Bash", r#"{"command":"ls","description":"List"}"#, Runtime::OpenCode), Some(("bash".into(), r#"{"command":"ls","description":"List"}"#.into())));
        assert_eq!(translate("exec_command", r#"{"cmd":"ls -a","workdir":"/p"}"#, Runtime::ClaudeCode), Some(("Bash".into(), r#"{"command":"ls -a"}"#.into())));
        assert_eq!(translate("shell", r#"{"command":["bash","-lc","echo hi"]}"#, Runtime::OpenCode), Some(("bash".into(), r#"{"command":"echo hi"}"#.into())));
        assert_eq!(translate("bash", r#"{"command":"pwd"}"#, Runtime::Codex), Some(("exec_command".into(), r#"{"cmd":"pwd"}"#.into())));
        // Same runtime, a tool without an equivalent, input that is not an object: unchanged.
        assert_eq!(translate("Bash", r#"{"command":"ls"}"#, Runtime::ClaudeCode), None);
        assert_eq!(translate("Read", r#"{"file_path":"/a"}"#, Runtime::Codex), None);
        assert_eq!(translate("apply_patch", "*** Begin Patch", Runtime::ClaudeCode), None);
        assert_eq!(translate("Bash", "not json", Runtime::Codex), None);
    }

    #[test]
    fn file_tools_rename_their_fields() {
        assert_eq!(translate("Read", r#"{"file_path":"/a","limit":5}"#, Runtime::OpenCode), Some(("read".into(), r#"{"filePath":"/a","limit":5}"#.into())));
        assert_eq!(translate("read", r#"{"filePath":"/a"}"#, Runtime::ClaudeCode), Some(("Read".into(), r#"{"file_path":"/a"}"#.into())));
        assert_eq!(
            translate("edit", r#"{"filePath":"/a","oldString":"x","newString":"y"}"#, Runtime::ClaudeCode),
            Some(("Edit".into(), r#"{"file_path":"/a","old_string":"x","new_string":"y"}"#.into()))
        );
        assert_eq!(translate("Grep", r#"{"pattern":"x","glob":"*.rs"}"#, Runtime::OpenCode), Some(("grep".into(), r#"{"pattern":"x","include":"*.rs"}"#.into())));
        assert_eq!(translate("WebFetch", r#"{"url":"https://e.x","prompt":"sum"}"#, Runtime::OpenCode), Some(("webfetch".into(), r#"{"url":"https://e.x","format":"markdown"}"#.into())));
    }
}
