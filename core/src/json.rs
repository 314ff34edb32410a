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
fn option_map(value: Value) -> Result<Map<String, Value>> {
    match value {
        Value::Null => Ok(Map::new()),
        Value::Object(map) => Ok(map),
        other => Err(Error::invalid(format!("options must be an object, not {}", json_type(&other)))),
    }
}

/// Starts the message of an option's own check (a field's `deserialize_with`), which is given as
/// it is rather than as serde's "bad value" of the option.
pub(crate) const OWN_MESSAGE: char = '\u{1f}';

/// An option's own error, for a `deserialize_with` function: `message` is what the caller sees,
/// naming the option by its key.
pub(crate) fn own_error<E: serde::de::Error>(message: impl std::fmt::Display) -> E {
    E::custom(format_args!("{OWN_MESSAGE}{message}"))
}

/// [`own_error`] of a core error about the option (its message, without a location).
pub(crate) fn own_error_of<E: serde::de::Error>(error: Error) -> E {
    match error {
        Error::InvalidInput { message, .. } => own_error(message),
        other => own_error(other),
    }
}

/// Typed options from a JSON object (the bindings pass keyword arguments this way; `null` is no
/// option): `T` deserializes with unknown fields denied. An unknown key is `INVALID_INPUT` listing
/// `keys`; a value of the wrong type `INVALID_INPUT` naming its key (`bad value for option "strict":
/// invalid type: …`), or with the option's own message (see [`own_error`]).
pub(crate) fn options<T: serde::de::DeserializeOwned>(value: Value, keys: &[&str]) -> Result<T> {
    serde_path_to_error::deserialize(Value::Object(option_map(value)?)).map_err(|e| {
        let key = e.path().iter().next().map(|segment| segment.to_string()).unwrap_or_default();
        let message = e.into_inner().to_string();
        if let Some(rest) = message.strip_prefix("unknown field `") {
            return unknown_option(rest.split('`').next().unwrap_or(rest), keys);
        }
        match message.strip_prefix(OWN_MESSAGE) {
            Some(own) => Error::invalid_field(key, own),
            None => Error::invalid_field(&key, format!("bad value for option {key:?}: {message}")),
        }
    })
}

/// For a `deserialize_with` of an option that is not an `Option`: `null` is its default.
pub(crate) fn null_is_default<'de, D, T>(deserializer: D) -> std::result::Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de> + Default,
{
    use serde::Deserialize;
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
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

#[cfg(test)]
mod option_tests {
    use serde_json::json;

    use crate::{NewSession, Options, ResumeOptions, SearchOptions, SyncOptions, UsageOptions};

    use super::field_names;

    /// Each options type's `KEYS` (what an unknown-option message lists) are its fields.
    #[test]
    fn keys_are_the_fields() {
        assert_eq!(field_names::<Options>(), Options::KEYS);
        assert_eq!(field_names::<NewSession>(), NewSession::KEYS);
        assert_eq!(field_names::<SearchOptions>(), SearchOptions::KEYS);
        assert_eq!(field_names::<UsageOptions>(), UsageOptions::KEYS);
        assert_eq!(field_names::<SyncOptions>(), SyncOptions::KEYS);
        // `options` is given beside the others (Options::KEYS), not under its own key.
        assert_eq!(field_names::<ResumeOptions>(), ResumeOptions::KEYS);
    }

    #[test]
    fn typed_options_name_the_key_and_keep_their_own_messages() {
        let err = SearchOptions::from_value(json!({"limt": 3})).unwrap_err();
        assert_eq!(err.location().unwrap().field.as_deref(), Some("limt"));
        assert!(err.to_string().contains("unknown option \"limt\" (expected one of: runtime, model, session, kinds, since, until, limit, bookkeeping)"), "{err}");
        let err = SearchOptions::from_value(json!({"since": "yesterday"})).unwrap_err();
        assert_eq!(err.location().unwrap().field.as_deref(), Some("since"));
        assert!(err.to_string().ends_with("\"yesterday\" is neither an RFC 3339 time nor a YYYY-MM-DD date"), "{err}");
        let err = SearchOptions::from_value(json!({"kinds": ["text", "nope"]})).unwrap_err();
        assert_eq!(err.location().unwrap().field.as_deref(), Some("kinds"));
        let err = SearchOptions::from_value(json!({"limit": "ten"})).unwrap_err();
        assert!(err.to_string().contains("bad value for option \"limit\": invalid type: string \"ten\""), "{err}");
        let options = SearchOptions::from_value(json!({"limit": null, "bookkeeping": null, "since": "2026-12-01"})).unwrap();
        assert_eq!((options.limit, options.bookkeeping), (50, false));
        let err = UsageOptions::from_value(json!({"by": "year"})).unwrap_err();
        assert_eq!(err.location().unwrap().field.as_deref(), Some("by"));
        assert!(err.to_string().ends_with("unknown grouping \"year\" (expected one of: day, week, month, session, project, model, provider)"), "{err}");
        let err = Options::from_value(json!({"context_window": 0})).unwrap_err();
        assert_eq!(err.to_string(), "field \"context_window\": context_window is a number of tokens above 0");
        let err = ResumeOptions::from_value(json!({"home": "/h", "colour": 1})).unwrap_err();
        assert!(err.to_string().contains("unknown option \"colour\" (expected one of: home, cwd, config_dir, codex_home, run_import, opencode_bin, format,"), "{err}");
        let resume = ResumeOptions::from_value(json!({"home": "/h", "strict": true, "run_import": null})).unwrap();
        assert!(resume.options.strict && !resume.run_import);
        let err = NewSession::from_value(json!("s")).unwrap_err();
        assert!(err.to_string().contains("options must be an object, not a string"), "{err}");
    }
}
