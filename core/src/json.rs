//! Small JSON helpers the whole crate uses.

use serde_json::Value;

use crate::error::{Error, Result};

/// A JSON object from owned values, in the order given. Unlike `json!`, which serializes (deep
/// copies) every interpolated value, this moves them.
macro_rules! obj {
    ($($key:literal => $value:expr),* $(,)?) => {{
        let mut map = serde_json::Map::new();
        $( map.insert($key.to_string(), serde_json::Value::from($value)); )*
        serde_json::Value::Object(map)
    }};
}

/// The JSON type of a value, with its article, for messages ("not a string").
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Records as JSONL text: one JSON text per line, each line ended.
pub(crate) fn jsonl_text<'a>(records: impl IntoIterator<Item = &'a Value>) -> Result<String> {
    let mut text = String::new();
    for record in records {
        text.push_str(&serde_json::to_string(record).map_err(|e| Error::Internal(e.to_string()))?);
        text.push('\n');
    }
    Ok(text)
}
