//! Small JSON helpers the whole crate uses.

use serde_json::{Map, Value};

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

/// The entries of an options object (the bindings pass keyword arguments this way); `null` is an
/// empty one.
pub(crate) fn option_map(value: Value) -> Result<Map<String, Value>> {
    match value {
        Value::Null => Ok(Map::new()),
        Value::Object(map) => Ok(map),
        other => Err(Error::invalid(format!("options must be an object, not {}", json_type(&other)))),
    }
}

/// The value of option `key`, or `INVALID_INPUT` naming it.
pub(crate) fn option_field<T: serde::de::DeserializeOwned>(key: &str, value: Value) -> Result<T> {
    serde_json::from_value(value).map_err(|e| Error::invalid_field(key, format!("bad value for option {key:?}: {e}")))
}

/// The `INVALID_INPUT` of an option not among `keys`.
pub(crate) fn unknown_option(key: &str, keys: &[&str]) -> Error {
    Error::invalid_field(key, format!("unknown option {key:?} (expected one of: {})", keys.join(", ")))
}

/// The serialized field names of a struct (a [`crate::Block`], [`crate::ToolRef`], [`crate::Options`], …),
/// as its `Deserialize` implementation names them, renames included: what the bindings rename
/// their own spelling to. Empty for a type that is not a struct.
pub fn field_names<T: serde::de::DeserializeOwned>() -> &'static [&'static str] {
    // Read by asking the type to deserialize from a deserializer that records the names it is told
    // and gives up.
    use serde::de::{Deserializer, Visitor};

    #[derive(Debug)]
    struct Stop;
    impl std::fmt::Display for Stop {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("field names read")
        }
    }
    impl std::error::Error for Stop {}
    impl serde::de::Error for Stop {
        fn custom<M: std::fmt::Display>(_: M) -> Self {
            Stop
        }
    }

    struct Names<'a>(&'a mut &'static [&'static str]);
    impl<'de> Deserializer<'de> for Names<'_> {
        type Error = Stop;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> std::result::Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> std::result::Result<V::Value, Stop> {
            *self.0 = fields;
            Err(Stop)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
            unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }

    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Names(&mut fields));
    fields
}

/// How deep a record may nest and still be stored and read back: the store keeps it inside two
/// more levels, and reading JSON stops at 128.
pub(crate) const MAX_RECORD_DEPTH: usize = 100;

/// How deep a block's native data may nest (a record and the object around it).
pub(crate) const MAX_NATIVE_DEPTH: usize = 120;

/// The nesting depth of a value (a scalar is 0, `[]` is 1), without recursion.
pub(crate) fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((value, level)) = stack.pop() {
        match value {
            Value::Array(items) => {
                deepest = deepest.max(level + 1);
                stack.extend(items.iter().map(|v| (v, level + 1)));
            }
            Value::Object(map) => {
                deepest = deepest.max(level + 1);
                stack.extend(map.values().map(|v| (v, level + 1)));
            }
            _ => {}
        }
    }
    deepest
}
