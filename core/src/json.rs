//! Small JSON helpers the whole crate uses.

use serde_json::Value;

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
