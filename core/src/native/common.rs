//! What the runtime adapters share: reading JSONL lines into blocks (malformed lines kept as
//! `error` blocks or refused in strict mode), field readers that say what is wrong, data URLs and
//! base64, the home directory, and records as JSONL text.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::json::json_type;
use crate::model::{Actor, Block, Embed, Kind, Native, Timestamp};
use crate::native::jsonl::Line;

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

/// `$HOME`.
pub(crate) fn home_dir() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| Error::invalid_field("home", "no home directory given and $HOME is not set"))
}


/// Refuses a path that cannot be read or is a directory.
pub(crate) fn check_readable(path: &Path) -> Result<()> {
    let meta = std::fs::metadata(path)
        .map_err(|source| Error::Io { context: format!("cannot read {}", path.display()), source })?;
    if meta.is_dir() {
        return Err(Error::invalid(format!("{} is a directory, not a native history file", path.display())));
    }
    Ok(())
}
