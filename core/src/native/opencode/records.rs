//! What makes a document malformed: the shape OpenCode itself requires of messages and parts,
//! refused with the JSON path of the offending value.

use serde_json::{Map, Value};

use crate::error::{Error, Location, Result};
use crate::model::Timestamp;

/// An `INVALID_INPUT` naming the JSON path of the offending value.
pub(super) fn bad(path: &str, message: impl Into<String>) -> Error {
    Error::InvalidInput {
        message: message.into(),
        location: Location { field: Some(path.to_string()), ..Default::default() },
    }
}

pub(super) fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>> {
    value.as_object().ok_or_else(|| bad(path, format!("expected an object, not {}", super::json_type(value))))
}

pub(super) fn string<'a>(map: &'a Map<String, Value>, key: &str, path: &str) -> Result<&'a str> {
    match map.get(key) {
        Some(Value::String(s)) => Ok(s),
        None => Err(bad(&format!("{path}.{key}"), "missing")),
        Some(other) => Err(bad(&format!("{path}.{key}"), format!("expected a string, not {}", super::json_type(other)))),
    }
}

pub(super) fn opt_string<'a>(map: &'a Map<String, Value>, key: &str, path: &str) -> Result<Option<&'a str>> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(bad(&format!("{path}.{key}"), format!("expected a string, not {}", super::json_type(other)))),
    }
}

pub(super) fn millis(value: Option<&Value>) -> Option<Timestamp> {
    let ms = value?.as_f64()?;
    Timestamp::from_millis(ms as i64).ok()
}

/// Checks the shape OpenCode itself requires of a message before anything of it is stored.
pub(super) fn check_message(message: &Value, i: usize) -> Result<()> {
    let path = format!("messages[{i}]");
    let map = object(message, &path)?;
    let info = object(map.get("info").unwrap_or(&Value::Null), &format!("{path}.info"))?;
    string(info, "id", &format!("{path}.info"))?;
    string(info, "role", &format!("{path}.info"))?;
    opt_string(info, "parentID", &format!("{path}.info"))?;
    let parts = match map.get("parts") {
        Some(Value::Array(parts)) => parts,
        None => return Err(bad(&format!("{path}.parts"), "missing")),
        Some(other) => return Err(bad(&format!("{path}.parts"), format!("expected an array, not {}", super::json_type(other)))),
    };
    for (j, part) in parts.iter().enumerate() {
        check_part(part, &format!("{path}.parts[{j}]"))?;
    }
    Ok(())
}

pub(super) fn check_part(part: &Value, path: &str) -> Result<()> {
    let map = object(part, path)?;
    let ty = string(map, "type", path)?;
    match ty {
        "text" | "reasoning" => {
            string(map, "text", path)?;
        }
        "tool" => {
            string(map, "callID", path)?;
            string(map, "tool", path)?;
            let state = object(map.get("state").unwrap_or(&Value::Null), &format!("{path}.state"))?;
            let status = string(state, "status", &format!("{path}.state"))?;
            match status {
                "completed" => {
                    string(state, "output", &format!("{path}.state"))?;
                }
                "error" => {
                    string(state, "error", &format!("{path}.state"))?;
                }
                _ => {}
            }
            if let Some(attachments) = state.get("attachments") {
                let Value::Array(list) = attachments else {
                    return Err(bad(&format!("{path}.state.attachments"), "expected an array"));
                };
                for (k, a) in list.iter().enumerate() {
                    check_part(a, &format!("{path}.state.attachments[{k}]"))?;
                }
            }
        }
        "file" => {
            string(map, "url", path)?;
            string(map, "mime", path)?;
        }
        _ => {}
    }
    Ok(())
}

