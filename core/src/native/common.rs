//! What the runtime adapters and the pipeline share: reading JSONL lines into blocks (malformed
//! lines kept as `error` blocks or refused in strict mode), field readers that say what is wrong,
//! data URLs and base64, pairing calls with their results, a resume's data directory and working
//! directory, and the strict check.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::json::{depth, json_type, MAX_RECORD_DEPTH};
use crate::model::{Actor, Block, Embed, Kind, Native, Timestamp};
use crate::model::ids::{embed_id, embed_link};
use crate::native::jsonl::Line;
use crate::native::types::Options;
use crate::report::ReportEntry;

/// Standard base64, as the runtimes write image data.
pub(crate) const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Why a record cannot be read as what its `type` says.
pub(crate) struct Malformed {
    pub reason: String,
    pub field: Option<String>,
}

/// A [`Malformed`] naming the field at fault.
pub(crate) fn malformed(field: impl Into<String>, reason: impl Into<String>) -> Malformed {
    Malformed { reason: reason.into(), field: Some(field.into()) }
}

/// At most `max` characters of `text`, with an ellipsis when cut.
pub(crate) fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// An error about a block of `line` located at that line (the location says so; the message
/// does not repeat it).
pub(crate) fn at_line(e: Error, line: &Line<'_>) -> Error {
    match e {
        Error::InvalidInput { message, mut location } => {
            location.index = None;
            location.line = Some(line.number);
            location.offset = Some(line.offset);
            Error::InvalidInput { message, location }
        }
        other => other,
    }
}

/// The blocks of one JSONL line of `runtime`: a line that is not JSON or fails `check` gives one
/// `error` block (or, in strict mode, an `INVALID_INPUT` naming the line); otherwise `convert`'s
/// blocks, the first marked when the line's text had to be repaired.
pub(crate) fn read_line_blocks(
    runtime: &str,
    line: &mut Line<'_>,
    strict: bool,
    last_time: Option<Timestamp>,
    check: impl FnOnce(&Value) -> std::result::Result<(), Malformed>,
    convert: impl FnOnce(Value) -> Vec<Block>,
) -> Result<Vec<Block>> {
    let value = match std::mem::replace(&mut line.parsed, Ok(Value::Null)) {
        Ok(value) => value,
        Err(e) => {
            if strict {
                return Err(line.error(format!("not JSON: {}", e.reason), None, e.column_offset));
            }
            return Ok(vec![malformed_block(runtime, line, &e.reason, None, None, last_time)]);
        }
    };
    if let Some(block) = too_deep(runtime, line, &value, strict, last_time)? {
        return Ok(vec![block]);
    }
    if let Err(m) = check(&value) {
        if strict {
            return Err(line.error(&m.reason, m.field.clone(), 0));
        }
        return Ok(vec![malformed_block(runtime, line, &m.reason, m.field.as_deref(), Some(value), last_time)]);
    }
    let mut blocks = convert(value);
    if line.sanitized {
        if let Some(Value::Object(data)) = blocks.first_mut().and_then(|b| b.native.as_mut()).map(|n| &mut n.data) {
            data.insert("sanitized".into(), json!({ "line": line.number }));
        }
    }
    Ok(blocks)
}

/// A record nested deeper than [`MAX_RECORD_DEPTH`] would not read back once stored: in strict mode
/// it is refused naming its line; otherwise it is kept as text in an error block (never as native
/// data). `None` for a record within the limit. Every runtime's records are checked here.
pub(crate) fn too_deep(runtime: &str, line: &Line<'_>, value: &Value, strict: bool, last_time: Option<Timestamp>) -> Result<Option<Block>> {
    if depth(value) <= MAX_RECORD_DEPTH {
        return Ok(None);
    }
    let reason = format!("the record is nested more than {MAX_RECORD_DEPTH} levels deep");
    if strict {
        return Err(line.error(&reason, None, 0));
    }
    let mut block = malformed_block(runtime, line, &reason, None, None, last_time);
    if line.raw.is_empty() {
        block.content = value.to_string();
    }
    Ok(Some(block))
}

/// The `error` block that keeps a line that could not be read: its text (or the parsed record),
/// the raw bytes as base64 when they are not UTF-8, and where and why it failed.
pub(crate) fn malformed_block(runtime: &str, line: &Line<'_>, reason: &str, field: Option<&str>, record: Option<Value>, last_time: Option<Timestamp>) -> Block {
    let mut info = Map::new();
    info.insert("line".into(), json!(line.number));
    info.insert("offset".into(), json!(line.offset));
    info.insert("reason".into(), json!(reason));
    if let Some(field) = field {
        info.insert("field".into(), json!(field));
    }
    let mut data = Map::new();
    data.insert("malformed".into(), Value::Object(info));
    let content = match record {
        Some(record) => {
            let content = if line.raw.is_empty() { record.to_string() } else { line.text() };
            data.insert("record".into(), record);
            content
        }
        None => {
            if std::str::from_utf8(line.raw).is_err() {
                data.insert("raw_base64".into(), json!(B64.encode(line.raw)));
            }
            line.text()
        }
    };
    let mut block = Block::new(Actor::System, Kind::Error, content);
    block.created_at = last_time.unwrap_or_else(Timestamp::now);
    block.native = Some(Native { runtime: runtime.into(), data: Value::Object(data) });
    block
}

/// A string field; `Malformed` when present with another type.
pub(crate) fn str_field<'a>(map: &'a Map<String, Value>, key: &str) -> std::result::Result<Option<&'a str>, Malformed> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(malformed(key, format!("\"{key}\" must be a string, not {}", json_type(other)))),
    }
}

/// A string field, or None when absent or of another type (for metadata that decides nothing).
pub(crate) fn lenient_str<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

/// `data:<mime>;base64,<bytes>`.
pub(crate) fn data_url(mime: &str, bytes: &[u8]) -> String {
    format!("data:{mime};base64,{}", B64.encode(bytes))
}

/// A text block of `actor` that shows `embed` (a link labelled `label`) and holds it.
pub(crate) fn embed_block(actor: Actor, label: &str, embed: Embed) -> Block {
    let id = embed_id(&embed);
    let mut block = Block::text(actor, embed_link(label, &id));
    block.embeds.insert(id, embed);
    block
}

/// `data:<mime>;base64,<data>` as an embed, and whether the text is the canonical encoding.
pub(crate) fn data_url_embed(url: &str) -> Option<(Embed, bool)> {
    let rest = url.strip_prefix("data:")?;
    let (mime, data) = rest.split_once(";base64,")?;
    let bytes = B64.decode(data.as_bytes()).ok()?;
    let canonical = B64.encode(&bytes) == data;
    Some((Embed::from_bytes(mime, None, bytes), canonical))
}

/// Takes the string at `map[key]` out, leaving `null` (the residual's payload slot); empty when
/// the key holds no string.
pub(crate) fn take_string(map: &mut Map<String, Value>, key: &str) -> String {
    match map.get_mut(key) {
        Some(slot @ Value::String(_)) => match std::mem::take(slot) {
            Value::String(s) => s,
            _ => String::new(),
        },
        _ => String::new(),
    }
}

/// The vendor of a model, by its name: for runtimes that run models of many vendors through one API
/// (Qwen Code, Copilot CLI) and record only the model.
pub(crate) fn model_vendor(model: &str) -> Option<&'static str> {
    let model = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    let starts = |prefixes: &[&str]| prefixes.iter().any(|p| model.starts_with(p));
    if starts(&["qwen", "qwq", "qvq", "coder-model"]) {
        Some("alibaba")
    } else if starts(&["claude"]) {
        Some("anthropic")
    } else if starts(&["gpt-", "o1", "o3", "o4", "codex"]) {
        Some("openai")
    } else if starts(&["gemini", "gemma"]) {
        Some("google")
    } else if starts(&["deepseek"]) {
        Some("deepseek")
    } else if starts(&["kimi", "moonshot"]) {
        Some("moonshotai")
    } else if starts(&["glm"]) {
        Some("zai")
    } else {
        None
    }
}

/// `$HOME`.
pub(crate) fn home_dir() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| Error::invalid_field("home", "no home directory given and $HOME is not set"))
}



/// The calls among `blocks[start..=end]` not yet `answered`, each once (a call id repeated in the
/// group is answered by its first call), with the first unused `tool_result` after `end` that
/// answers it (marked used), or `None` when nothing does: what a writer puts right after an
/// assistant message's calls.
pub(crate) fn pending_results(
    blocks: &[Block],
    start: usize,
    end: usize,
    used: &mut [bool],
    answered: &std::collections::HashSet<String>,
) -> Vec<(usize, String, Option<usize>)> {
    let mut seen = std::collections::HashSet::new();
    let calls: Vec<(usize, String)> = (start..=end)
        .filter(|&j| blocks[j].kind == Kind::ToolUse)
        .filter_map(|j| blocks[j].tool.as_ref().map(|t| (j, t.call_id.clone())))
        .filter(|(_, call_id)| !answered.contains(call_id) && seen.insert(call_id.clone()))
        .collect();
    calls
        .into_iter()
        .map(|(j, call_id)| {
            let found = (end + 1..blocks.len()).find(|&k| {
                !used[k] && blocks[k].kind == Kind::ToolResult && blocks[k].tool.as_ref().is_some_and(|t| t.call_id == call_id)
            });
            if let Some(k) = found {
                used[k] = true;
            }
            (j, call_id, found)
        })
        .collect()
}

/// Where a runtime keeps its data for a resume, and the environment the resumed command needs to
/// find it: the directory the caller named for it (then `var` names it), else `<home>/<folder>`
/// (then `HOME` is `home`), else the directory `var` names in this process, else `$HOME/<folder>`.
pub(crate) fn runtime_dir(named: Option<&Path>, home: Option<&Path>, var: &str, folder: &str) -> Result<(PathBuf, BTreeMap<String, String>)> {
    let mut env = BTreeMap::new();
    let dir = match (named, home) {
        (Some(dir), _) => {
            env.insert(var.to_string(), dir.display().to_string());
            dir.to_path_buf()
        }
        (None, Some(home)) => {
            env.insert("HOME".to_string(), home.display().to_string());
            home.join(folder)
        }
        (None, None) => match std::env::var_os(var) {
            Some(dir) => PathBuf::from(dir),
            None => home_dir()?.join(folder),
        },
    };
    Ok((dir, env))
}

/// A working directory a resumed runtime can be given: UTF-8 and absolute.
pub(crate) fn absolute_cwd(cwd: &Path) -> Result<&str> {
    let text = cwd.to_str().ok_or_else(|| Error::invalid_field("cwd", "cwd must be valid UTF-8"))?;
    if !cwd.is_absolute() {
        return Err(Error::invalid_field("cwd", format!("cwd {text:?} must be an absolute path")));
    }
    Ok(text)
}

/// In strict mode any report entry is a `LOSSY` error, but for redactions: they were asked for.
pub(crate) fn check_strict(options: &Options, entries: &[ReportEntry]) -> Result<()> {
    if options.strict {
        let entries: Vec<&ReportEntry> = entries.iter().filter(|e| e.is_loss()).collect();
        if let Some(first) = entries.first() {
            let block = first.block_id.as_deref().map(|id| format!(" (block {id})")).unwrap_or_default();
            return Err(Error::Lossy(format!(
                "{} conversion loss{}: {}{block}",
                entries.len(),
                if entries.len() == 1 { "" } else { "es" },
                first.message
            )));
        }
    }
    Ok(())
}

/// Writes a file readable only by its owner, atomically (a temporary file renamed into place),
/// creating the parent directories. The temporary file has an unpredictable name and is created
/// anew (never opened through an existing file or link) with mode 0600; the rename replaces a link
/// at `path` itself, never the file it points to.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().ok_or_else(|| Error::invalid(format!("{} has no parent directory", path.display())))?;
    std::fs::create_dir_all(dir).map_err(|source| Error::Io { context: format!("cannot create the directory of {}", path.display()), source })?;
    replace_whole(path, Some(0o600), |file| {
        use std::io::Write;
        file.write_all(bytes).map_err(|source| Error::Io { context: format!("cannot write {}", path.display()), source })
    })
}

/// Replaces the file at `path` whole: `fill` writes a new file beside it (made anew, never through
/// an existing entry or link), which is synced and renamed over `path`, so readers see the old file
/// or the new one and a failure leaves `path` as it was. `mode` gives the new file's permission
/// bits (unix), else it gets the default ones.
pub(crate) fn replace_whole(path: &Path, mode: Option<u32>, fill: impl FnOnce(&mut std::fs::File) -> Result<()>) -> Result<()> {
    let io = |source: std::io::Error| Error::Io { context: format!("cannot write {}", path.display()), source };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("sna");
    let (tmp, mut file) = {
        let mut attempt = 0;
        loop {
            let tmp = dir.join(format!(".{name}.{}.tmp", uuid::Uuid::now_v7().simple()));
            let mut options = std::fs::OpenOptions::new();
            // O_CREAT | O_EXCL: fails on any existing entry, a symbolic link included.
            options.write(true).create_new(true);
            #[cfg(unix)]
            if let Some(mode) = mode {
                use std::os::unix::fs::OpenOptionsExt;
                options.mode(mode);
            }
            match options.open(&tmp) {
                Ok(file) => break (tmp, file),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 8 => attempt += 1,
                Err(e) => return Err(io(e)),
            }
        }
    };
    let written = (|| {
        #[cfg(unix)]
        if let Some(mode) = mode {
            // The umask may have taken bits the mode asks for.
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(mode)).map_err(io)?;
        }
        fill(&mut file)?;
        file.sync_all().map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

pub(crate) use crate::model::{content_pieces, Piece};

/// The text that stands for an embed a format cannot carry where it is.
pub(crate) fn attachment_placeholder(id: &str, embed: &Embed) -> String {
    let name = embed.name.as_deref().unwrap_or(id);
    format!("[attachment {name} ({}, {} bytes)]", embed.mime, embed.size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendors_follow_the_model_name() {
        assert_eq!(model_vendor("qwen3.5-plus"), Some("alibaba"));
        assert_eq!(model_vendor("openrouter/anthropic/claude-sonnet-4.5"), Some("anthropic"));
        assert_eq!(model_vendor("gpt-5"), Some("openai"));
        assert_eq!(model_vendor("mock-model"), None);
    }
}
