//! Conversion between JavaScript values and the serialized (JSON) form of core's types.
//!
//! In: a JavaScript value becomes a `serde_json::Value` that core deserializes and validates
//! (`Block::from_value`, `Options::from_value`), so the binding decides nothing about what is valid.
//! On the way, a camelCase key becomes snake_case when that names a field of the core input the
//! object stands for ([`Shape`]; the names come from core's own types and option lists); every
//! other key passes unchanged, so that core names it as written. `native.data` and embed ids are
//! never renamed. An embed's `data` (a Buffer or Uint8Array) is taken out and
//! handed to core as bytes, a conversion's `summarizer` (a function) is taken out and handed to
//! core as code (`summarizer`), and a `Date` becomes an RFC 3339 string.
//!
//! Out: core's types are serialized with serde, and [`Js`] writes them as JSON text with their keys
//! in camelCase (one rule for every type, with the same exceptions) and turns the text into
//! JavaScript values with `JSON.parse`, which builds large object graphs much faster than one N-API
//! call per property.

use std::collections::BTreeMap;
use std::ptr;

use napi::bindgen_prelude::{BigInt, JsObjectValue, Object, ToNapiValue, Unknown};
use napi::{check_status, sys, JsDate, JsValue, KeyCollectionMode, KeyConversion, KeyFilter, ValueType};
use serde_json::{Map, Number, Value};
use sna_history as core;

use crate::error::{bad_argument, from_core, from_napi, Error, Result};

/// Deepest nesting accepted; deeper input is most likely a cycle.
const MAX_DEPTH: usize = 256;

/// Largest integer a JavaScript number holds exactly.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Which of core's inputs a JavaScript object stands for: its keys are core's (read from core's own
/// types and option lists), and some of its fields hold other inputs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Block,
    Tool,
    Reasoning,
    Scope,
    /// The `embeds` map: keys are embed ids, values [`Shape::Embed`].
    EmbedIds,
    /// One embed: its `data` (bytes) is taken out.
    Embed,
    Native,
    /// Conversion options.
    Options,
    /// Resume options: their own keys and the conversion options'.
    Resume,
    /// The options of a new session.
    NewSession,
    /// Anything else: keys stay as they are, all the way down.
    Verbatim,
}

impl Shape {
    /// True when `name` (core's spelling) is a key of this input.
    fn knows(self, name: &str) -> bool {
        /// The field names of core's structs, read from core once.
        struct Fields {
            block: &'static [&'static str],
            tool: &'static [&'static str],
            reasoning: &'static [&'static str],
            scope: &'static [&'static str],
            embed: &'static [&'static str],
            native: &'static [&'static str],
        }
        static FIELDS: std::sync::OnceLock<Fields> = std::sync::OnceLock::new();
        let fields = FIELDS.get_or_init(|| Fields {
            block: core::field_names::<core::Block>(),
            tool: core::field_names::<core::ToolRef>(),
            reasoning: core::field_names::<core::Reasoning>(),
            scope: core::field_names::<core::Scope>(),
            embed: core::field_names::<core::Embed>(),
            native: core::field_names::<core::Native>(),
        });
        let lists: [&[&str]; 2] = match self {
            Shape::Block => [fields.block, &[]],
            Shape::Tool => [fields.tool, &[]],
            Shape::Reasoning => [fields.reasoning, &[]],
            Shape::Scope => [fields.scope, &[]],
            Shape::Embed => [fields.embed, &[]],
            Shape::Native => [fields.native, &[]],
            Shape::Options => [core::Options::KEYS, &[]],
            Shape::Resume => [core::ResumeOptions::KEYS, core::Options::KEYS],
            Shape::NewSession => [core::NewSession::KEYS, &[]],
            Shape::EmbedIds | Shape::Verbatim => [&[], &[]],
        };
        lists.iter().any(|list| list.contains(&name))
    }

    /// The input the value of field `name` (core's spelling) stands for.
    fn child(self, name: &str) -> Shape {
        match (self, name) {
            (Shape::Block, "tool") => Shape::Tool,
            (Shape::Block, "reasoning") => Shape::Reasoning,
            (Shape::Block, "embeds") => Shape::EmbedIds,
            (Shape::Block, "native") => Shape::Native,
            (Shape::Reasoning, "scope") => Shape::Scope,
            _ => Shape::Verbatim,
        }
    }
}

/// What went wrong while reading a JavaScript value; the path is collected while unwinding, so a
/// conversion that succeeds pays nothing for it.
enum Problem {
    Invalid { message: String, path: Vec<String> },
    Napi(napi::Error),
}

type Step<T> = std::result::Result<T, Problem>;

impl From<napi::Error> for Problem {
    fn from(error: napi::Error) -> Self {
        Problem::Napi(error)
    }
}

impl Problem {
    fn invalid(message: impl Into<String>) -> Self {
        Problem::Invalid { message: message.into(), path: Vec::new() }
    }

    /// Records that the problem lies inside `segment` (a key, or `[index]`).
    fn within(mut self, segment: String) -> Self {
        if let Problem::Invalid { path, .. } = &mut self {
            path.push(segment);
        }
        self
    }

    fn into_core(self) -> std::result::Result<core::Error, napi::Error> {
        match self {
            Problem::Napi(error) => Err(error),
            Problem::Invalid { message, path } => {
                let mut field = String::new();
                for segment in path.iter().rev() {
                    if !field.is_empty() && !segment.starts_with('[') {
                        field.push('.');
                    }
                    field.push_str(segment);
                }
                Ok(if field.is_empty() { core::Error::invalid(message) } else { core::Error::invalid_field(field, message) })
            }
        }
    }
}

fn problem_to_error(problem: Problem, index: Option<usize>) -> Error {
    match problem.into_core() {
        Ok(error) => from_core(match index {
            Some(index) => error.at_index(index),
            None => error,
        }),
        Err(error) => from_napi(error),
    }
}

/// Reads JavaScript values into JSON; keeps the embed bytes it takes out of a block.
#[derive(Default)]
struct Reader {
    /// Embed id → bytes, from `embeds[id].data`.
    embed_bytes: BTreeMap<String, Vec<u8>>,
}

impl Reader {
    fn value(&mut self, value: Unknown<'_>, shape: Shape, depth: usize) -> Step<Value> {
        match value.get_type()? {
            ValueType::Undefined | ValueType::Null => Ok(Value::Null),
            ValueType::Boolean => Ok(Value::Bool(unsafe { value.cast::<bool>() }?)),
            ValueType::Number => number(unsafe { value.cast::<f64>() }?),
            ValueType::String => Ok(Value::String(unsafe { value.cast::<String>() }?)),
            ValueType::BigInt => bigint(unsafe { value.cast::<BigInt>() }?),
            ValueType::Object => self.object(value, shape, depth),
            ValueType::Function => Err(Problem::invalid("a function cannot be converted to JSON")),
            ValueType::Symbol => Err(Problem::invalid("a symbol cannot be converted to JSON")),
            _ => Err(Problem::invalid("this value cannot be converted to JSON")),
        }
    }

    fn object(&mut self, value: Unknown<'_>, shape: Shape, depth: usize) -> Step<Value> {
        if depth >= MAX_DEPTH {
            return Err(Problem::invalid(format!("nested more than {MAX_DEPTH} levels deep (is there a cycle?)")));
        }
        if value.is_date()? {
            return date(value);
        }
        if value.is_typedarray()? || value.is_arraybuffer()? || value.is_dataview()? {
            return Err(Problem::invalid("binary data is accepted only as the data of an embed (embeds.<id>.data)"));
        }
        let object: Object<'_> = unsafe { value.cast() }?;
        if value.is_array()? {
            let len = object.get_array_length()?;
            let mut items = Vec::with_capacity(len as usize);
            for i in 0..len {
                let item: Unknown<'_> = object.get_element(i)?;
                items.push(self.value(item, Shape::Verbatim, depth + 1).map_err(|p| p.within(format!("[{i}]")))?);
            }
            return Ok(Value::Array(items));
        }
        let names = object.get_all_property_names(
            KeyCollectionMode::OwnOnly,
            KeyFilter::Enumerable,
            KeyConversion::NumbersToStrings,
        )?;
        let len = names.get_array_length()?;
        let mut map = Map::new();
        for i in 0..len {
            let name: Unknown<'_> = names.get_element(i)?;
            if name.get_type()? != ValueType::String {
                continue; // symbol keys, as JSON.stringify skips them
            }
            let key: String = unsafe { name.cast() }?;
            let item: Unknown<'_> = object.get_property(name)?;
            if item.get_type()? == ValueType::Undefined {
                continue; // as JSON.stringify does
            }
            if let Some((key, value)) = self.field(shape, key, item, depth)? {
                map.insert(key, value);
            }
        }
        Ok(Value::Object(map))
    }

    /// One property of an object of `shape`: its core name and value, or `None` when it is taken
    /// out of the JSON (an embed's bytes). A camelCase key becomes snake_case when that is one of
    /// the shape's keys (the rule [`Keys`] applies the other way on output); any other key passes
    /// as written, so that core names it so.
    fn field(&mut self, shape: Shape, key: String, item: Unknown<'_>, depth: usize) -> Step<Option<(String, Value)>> {
        match shape {
            // Taken out as bytes by `embed`.
            Shape::Embed if key == "data" => Ok(None),
            // Taken out as code by `conversion_options`.
            Shape::Options | Shape::Resume if key == SUMMARIZER => Ok(None),
            Shape::Verbatim => {
                let value = self.value(item, Shape::Verbatim, depth + 1).map_err(|p| p.within(key.clone()))?;
                Ok(Some((key, value)))
            }
            Shape::EmbedIds => {
                let value = self.embed(&key, item, depth + 1).map_err(|p| p.within(key.clone()))?;
                Ok(Some((key, value)))
            }
            _ => {
                if shape.knows(&key) && camel_case(&key) != key {
                    let js = camel_case(&key).into_owned();
                    return Err(Problem::invalid(format!("unknown field {key:?} (its JavaScript name is {js:?})")).within(key));
                }
                let name = match snake_case(&key) {
                    snake if shape.knows(&snake) => snake.into_owned(),
                    _ => key.clone(),
                };
                let child = shape.child(&name);
                let value = self.value(item, child, depth + 1).map_err(|p| p.within(key.clone()))?;
                Ok(Some((name, value)))
            }
        }
    }

    /// One embed of a block's `embeds`: its fields, with `data` taken out as bytes.
    fn embed(&mut self, embed_id: &str, value: Unknown<'_>, depth: usize) -> Step<Value> {
        if value.get_type()? != ValueType::Object || value.is_array()? {
            return self.value(value, Shape::Verbatim, depth);
        }
        let object: Object<'_> = unsafe { value.cast() }?;
        let data: Option<Unknown<'_>> = object.get("data")?;
        if let Some(data) = data.filter(|d| !matches!(d.get_type(), Ok(ValueType::Null))) {
            let bytes = bytes(data).map_err(|p| p.within("data".to_string()))?;
            self.embed_bytes.insert(embed_id.to_string(), bytes);
        }
        self.object(value, Shape::Embed, depth)
    }
}

fn number(x: f64) -> Step<Value> {
    if x.fract() == 0.0 && x.abs() <= MAX_SAFE_INTEGER {
        // An integral number: core reads integers (seq, size, timestamps in ms) only as integers.
        return Ok(Value::Number(Number::from(x as i64)));
    }
    Number::from_f64(x).map(Value::Number).ok_or_else(|| Problem::invalid(format!("{x} cannot be converted to JSON")))
}

fn bigint(value: BigInt) -> Step<Value> {
    if value.sign_bit {
        let (n, lossless) = value.get_i64();
        if lossless {
            return Ok(Value::Number(Number::from(n)));
        }
    } else {
        let (_, n, lossless) = value.get_u64();
        if lossless {
            return Ok(Value::Number(Number::from(n)));
        }
    }
    Err(Problem::invalid("a BigInt outside the 64-bit range cannot be converted to JSON"))
}

fn date(value: Unknown<'_>) -> Step<Value> {
    let millis = unsafe { value.cast::<JsDate<'_>>() }?.value_of()?;
    if !millis.is_finite() {
        return Err(Problem::invalid("an invalid Date cannot be converted"));
    }
    let timestamp = core::Timestamp::from_millis(millis as i64).map_err(|e| Problem::invalid(e.to_string()))?;
    Ok(Value::String(timestamp.to_rfc3339()))
}

fn bytes(value: Unknown<'_>) -> Step<Vec<u8>> {
    if value.get_type()? == ValueType::Object && value.is_typedarray()? {
        // A Buffer is a Uint8Array; other typed arrays are refused by the cast.
        if let Ok(slice) = unsafe { value.cast::<&[u8]>() } {
            return Ok(slice.to_vec());
        }
    }
    Err(Problem::invalid(format!("the bytes of an embed must be a Buffer or Uint8Array, not {}", type_name(value))))
}

/// How a JavaScript value is named in an error message: `a string`, `an array`, `null`, …
pub fn type_name(value: Unknown<'_>) -> String {
    let name = match value.get_type() {
        Ok(ValueType::Undefined) => "undefined",
        Ok(ValueType::Null) => "null",
        Ok(ValueType::Boolean) => "a boolean",
        Ok(ValueType::Number) => "a number",
        Ok(ValueType::String) => "a string",
        Ok(ValueType::Symbol) => "a symbol",
        Ok(ValueType::BigInt) => "a BigInt",
        Ok(ValueType::Function) => "a function",
        Ok(ValueType::Object) => {
            if value.is_array().unwrap_or(false) {
                "an array"
            } else if value.is_buffer().unwrap_or(false) {
                "a Buffer"
            } else if value.is_typedarray().unwrap_or(false) {
                "a typed array"
            } else if value.is_date().unwrap_or(false) {
                "a Date"
            } else {
                "an object"
            }
        }
        _ => "a value of unknown type",
    };
    name.to_string()
}

fn is_plain_object(value: Unknown<'_>) -> Result<bool> {
    let napi = |e: napi::Error| from_napi(e);
    Ok(value.get_type().map_err(napi)? == ValueType::Object
        && !value.is_array().map_err(napi)?
        && !value.is_typedarray().map_err(napi)?
        && !value.is_date().map_err(napi)?)
}

fn read(value: Unknown<'_>, shape: Shape, reader: &mut Reader, index: Option<usize>) -> Result<Value> {
    reader.value(value, shape, 0).map_err(|p| problem_to_error(p, index))
}

/// A block given by JavaScript (camelCase, `createdAt` as string, number or Date, embed bytes as
/// Buffer), validated by core. `index` is its position in a batch.
pub fn block(value: Unknown<'_>, arg: &str, index: Option<usize>) -> Result<core::Block> {
    if !is_plain_object(value)? {
        let error = bad_argument(arg, "a block object", &type_name(value));
        return Err(error);
    }
    let mut reader = Reader::default();
    let json = read(value, Shape::Block, &mut reader, index)?;
    let mut block = core::Block::from_value(json).map_err(|e| {
        from_core(match index {
            Some(index) => e.at_index(index),
            None => e,
        })
    })?;
    for (embed_id, bytes) in reader.embed_bytes {
        if let Some(embed) = block.embeds.get_mut(&embed_id) {
            embed.data = Some(bytes);
        }
    }
    Ok(block)
}

/// Blocks given as a JavaScript array.
pub fn blocks(value: Unknown<'_>, arg: &str) -> Result<Vec<core::Block>> {
    if !value.is_array().map_err(from_napi)? {
        return Err(bad_argument(arg, "an array of blocks", &type_name(value)));
    }
    let array: Object<'_> = unsafe { value.cast() }.map_err(from_napi)?;
    let len = array.get_array_length().map_err(from_napi)?;
    let mut out = Vec::with_capacity(len as usize);
    for i in 0..len {
        let item: Unknown<'_> = array.get_element(i).map_err(from_napi)?;
        let index = i as usize;
        if !is_plain_object(item)? {
            let message = format!("invalid argument {arg:?}: expected a block object, got {}", type_name(item));
            return Err(from_core(core::Error::invalid(message).at_index(index)));
        }
        out.push(block(item, arg, Some(index))?);
    }
    Ok(out)
}

/// Any JavaScript data as JSON, keys unchanged (native records, live events).
pub fn json(value: Unknown<'_>) -> Result<Value> {
    read(value, Shape::Verbatim, &mut Reader::default(), None)
}

/// An options object of `shape` (`undefined` and `null` mean none) with its keys in core's spelling.
pub fn options(value: Option<Unknown<'_>>, arg: &str, shape: Shape) -> Result<Map<String, Value>> {
    debug_assert!(!matches!(shape, Shape::Options | Shape::Resume), "conversion options go through conversion_options");
    object_argument(value, arg, shape)
}

/// The option of a conversion that is code, not JSON: the function that writes the summary of
/// the turns a replay folds to fit its context budget.
pub const SUMMARIZER: &str = "summarizer";

/// The options object of a conversion call ([`Shape::Options`] or [`Shape::Resume`]) with its keys
/// in core's spelling, and its `summarizer` taken out (`undefined` and `null` mean none): a
/// function is not JSON, and core takes it as code.
pub fn conversion_options<'env>(value: Option<Unknown<'env>>, arg: &str, shape: Shape) -> Result<(Map<String, Value>, Option<Unknown<'env>>)> {
    let map = object_argument(value, arg, shape)?;
    let summarizer = match value {
        Some(value) if is_plain_object(value)? => {
            // SAFETY: the value is an object.
            let object: Object<'env> = unsafe { value.cast() }.map_err(from_napi)?;
            object.get::<Unknown<'env>>(SUMMARIZER).map_err(from_napi)?
        }
        _ => None,
    };
    let given = |s: &Unknown<'_>| !matches!(s.get_type(), Ok(ValueType::Undefined | ValueType::Null));
    Ok((map, summarizer.filter(given)))
}

fn object_argument(value: Option<Unknown<'_>>, arg: &str, shape: Shape) -> Result<Map<String, Value>> {
    let Some(value) = value else { return Ok(Map::new()) };
    match value.get_type().map_err(from_napi)? {
        ValueType::Undefined | ValueType::Null => return Ok(Map::new()),
        _ if is_plain_object(value)? => {}
        _ => return Err(bad_argument(arg, "an options object", &type_name(value))),
    }
    match read(value, shape, &mut Reader::default(), None)? {
        Value::Object(map) => Ok(map),
        _ => Ok(Map::new()),
    }
}

/// A string argument.
pub fn string(value: Unknown<'_>, arg: &str) -> Result<String> {
    match value.get_type().map_err(from_napi)? {
        ValueType::String => unsafe { value.cast::<String>() }.map_err(from_napi),
        _ => Err(bad_argument(arg, "a string", &type_name(value))),
    }
}

/// An optional string argument: `undefined` and `null` are `None`.
pub fn optional_string(value: Option<Unknown<'_>>, arg: &str) -> Result<Option<String>> {
    match value {
        None => Ok(None),
        Some(value) => match value.get_type().map_err(from_napi)? {
            ValueType::Undefined | ValueType::Null => Ok(None),
            ValueType::String => unsafe { value.cast::<String>() }.map(Some).map_err(from_napi),
            _ => Err(bad_argument(arg, "a string or null", &type_name(value))),
        },
    }
}

/// An optional runtime argument: `undefined` and `null` mean none.
pub fn optional_runtime(value: Option<Unknown<'_>>) -> Result<Option<core::Runtime>> {
    match value {
        Some(value) if !matches!(value.get_type().map_err(from_napi)?, ValueType::Undefined | ValueType::Null) => runtime(value).map(Some),
        _ => Ok(None),
    }
}

/// A runtime name; core decides whether it is one.
pub fn runtime(value: Unknown<'_>) -> Result<core::Runtime> {
    let name = string(value, "runtime")?;
    name.parse::<core::Runtime>().map_err(from_core)
}

/// A non-negative integer argument (a seq); `Infinity` is accepted where `open_ended` says so.
pub fn index(value: Unknown<'_>, arg: &str, open_ended: bool) -> Result<u64> {
    let expected = if open_ended { "a non-negative integer or Infinity" } else { "a non-negative integer" };
    match value.get_type().map_err(from_napi)? {
        ValueType::Number => {
            let x = unsafe { value.cast::<f64>() }.map_err(from_napi)?;
            if open_ended && x == f64::INFINITY {
                Ok(u64::MAX)
            } else if x >= 0.0 && x.fract() == 0.0 && x <= MAX_SAFE_INTEGER {
                Ok(x as u64)
            } else {
                Err(crate::error::invalid(format!("invalid argument {arg:?}: expected {expected}, got {x}")))
            }
        }
        ValueType::BigInt => {
            let (negative, n, lossless) = unsafe { value.cast::<BigInt>() }.map_err(from_napi)?.get_u64();
            if !negative && lossless {
                Ok(n)
            } else {
                Err(crate::error::invalid(format!("invalid argument {arg:?}: expected {expected}, got a BigInt out of range")))
            }
        }
        _ => Err(bad_argument(arg, expected, &type_name(value))),
    }
}

/// How the keys of an object are renamed between core (snake_case) and JavaScript (camelCase):
/// one rule for every core type, both ways, with the same exceptions.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keys {
    /// A core type: keys in camelCase; `embeds`, `native` and `env` have their own rules.
    Camel,
    /// Embed id → embed: ids unchanged, each embed [`Keys::Camel`].
    EmbedIds,
    /// A block's `native`: `data` is [`Keys::Verbatim`].
    Native,
    /// Native data: every key unchanged, all the way down.
    Verbatim,
}

impl Keys {
    /// The rule for the value of `key` (its core name) in an object written with `self`.
    fn child(self, key: &str, is_object: bool) -> Keys {
        match (self, key) {
            (Keys::Verbatim, _) | (Keys::Native, "data") => Keys::Verbatim,
            (Keys::Camel, "embeds") if is_object => Keys::EmbedIds,
            (Keys::Camel, "native") if is_object => Keys::Native,
            // Environment variable names (a resume plan's `env`) are kept as they are.
            (Keys::Camel, "env") if is_object => Keys::Verbatim,
            _ => Keys::Camel,
        }
    }

    fn renames(self) -> bool {
        !matches!(self, Keys::Verbatim | Keys::EmbedIds)
    }
}

/// The core name of a JavaScript key: `callId` → `call_id`.
fn snake_case(key: &str) -> std::borrow::Cow<'_, str> {
    if !key.bytes().any(|b| b.is_ascii_uppercase()) {
        return key.into();
    }
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// The JavaScript name of a core key: `call_id` → `callId`.
fn camel_case(key: &str) -> std::borrow::Cow<'_, str> {
    if !key.contains('_') {
        return key.into();
    }
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' && !out.is_empty() {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// Writes `value` as JSON text, renaming keys as `keys` says: the serialized keys of core's types
/// become camelCase, except inside `native.data` and for the embed ids of `embeds`. Renaming while
/// writing saves rebuilding every map of the value.
fn write_json(out: &mut Vec<u8>, value: &Value, keys: Keys) -> serde_json::Result<()> {
    match value {
        Value::Array(items) if keys != Keys::Verbatim => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json(out, item, Keys::Camel)?;
            }
            out.push(b']');
        }
        Value::Object(map) if keys != Keys::Verbatim => {
            out.push(b'{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                let name = if keys.renames() { camel_case(key) } else { key.as_str().into() };
                serde_json::to_writer(&mut *out, name.as_ref())?;
                out.push(b':');
                write_json(out, item, keys.child(key, item.is_object()))?;
            }
            out.push(b'}');
        }
        // Scalars, and whole native subtrees: serde_json writes them in one go.
        other => serde_json::to_writer(&mut *out, other)?,
    }
    Ok(())
}

/// Non-ASCII bytes up to this share of the text are escaped (see [`escape_non_ascii`]); above
/// it the text goes to JavaScript as UTF-8, since escaping would make it up to three times larger.
const ESCAPE_AT_MOST: usize = 16;

/// Replaces every non-ASCII character of JSON text with its `\uXXXX` escape (surrogate pairs
/// beyond the BMP): the text then becomes a one-byte JavaScript string by a plain copy
/// (`napi_create_string_latin1`) instead of a UTF-8 decode into a two-byte string, and `JSON.parse`
/// reads one-byte strings faster. Non-ASCII characters only occur inside JSON strings, where the
/// escape means the same character.
fn escape_non_ascii(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 8);
    let mut start = 0;
    for (i, c) in text.char_indices().filter(|(_, c)| !c.is_ascii()) {
        out.extend_from_slice(&text.as_bytes()[start..i]);
        let mut units = [0u16; 2];
        for unit in c.encode_utf16(&mut units) {
            out.extend_from_slice(format!("\\u{unit:04x}").as_bytes());
        }
        start = i + c.len_utf8();
    }
    out.extend_from_slice(&text.as_bytes()[start..]);
    out
}

/// A serialized core value in its JavaScript form (camelCase keys, see [`write_json`]).
pub fn camel<T: serde::Serialize>(value: &T) -> Result<Js> {
    serde_json::to_value(value)
        .map(|value| Js { value, keys: Keys::Camel })
        .map_err(|e| from_core(core::Error::Internal(format!("cannot serialize a result: {e}"))))
}

/// JSON data returned to JavaScript, built by `JSON.parse`.
pub struct Js {
    value: Value,
    keys: Keys,
}

impl Js {
    /// Native data, returned with its keys as they are.
    pub fn native(value: Value) -> Self {
        Js { value, keys: Keys::Verbatim }
    }
}

impl ToNapiValue for Js {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        let mut text = Vec::with_capacity(256);
        write_json(&mut text, &val.value, val.keys)
            .map_err(|e| napi::Error::from_reason(format!("cannot serialize a result: {e}")))?;
        unsafe { JsonText(text).into_napi_value(env) }
    }
}

/// A result already written as JSON text (by core, keys as they are), handed to JavaScript through
/// the engine's `JSON.parse`.
pub struct JsonText(pub Vec<u8>);

impl JsonText {
    /// `Session.export`'s result, `{data, report}`, from core's JSON text of the data (kept as it
    /// is) and the report (keys in camelCase).
    pub fn export(data: String, report: &core::Report) -> Result<JsonText> {
        let report = serde_json::to_value(report).map_err(|e| from_core(core::Error::Internal(format!("cannot serialize a report: {e}"))))?;
        let mut out = Vec::with_capacity(data.len() + 64);
        out.extend_from_slice(b"{\"data\":");
        out.extend_from_slice(data.as_bytes());
        drop(data);
        out.extend_from_slice(b",\"report\":");
        write_json(&mut out, &report, Keys::Camel).map_err(|e| from_core(core::Error::Internal(format!("cannot serialize a report: {e}"))))?;
        out.push(b'}');
        Ok(JsonText(out))
    }
}

impl napi::bindgen_prelude::TypeName for JsonText {
    fn type_name() -> &'static str {
        "Object"
    }
    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ToNapiValue for JsonText {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        unsafe { val.into_napi_value(env) }
    }
}

impl JsonText {
    unsafe fn into_napi_value(self, env: sys::napi_env) -> napi::Result<sys::napi_value> {
        let text = self.0;
        let text_len = text.len();
        let non_ascii = text.iter().filter(|b| !b.is_ascii()).count();
        let mut string = ptr::null_mut();
        let status = if non_ascii * ESCAPE_AT_MOST <= text_len {
            let ascii = if non_ascii == 0 {
                text
            } else {
                // serde_json writes only valid UTF-8.
                escape_non_ascii(std::str::from_utf8(&text).map_err(|e| napi::Error::from_reason(e.to_string()))?)
            };
            // ASCII bytes are their own Latin-1 characters.
            unsafe { sys::napi_create_string_latin1(env, ascii.as_ptr().cast(), ascii.len() as isize, &mut string) }
        } else {
            // serde_json writes only valid UTF-8 (napi_create_string_utf8 replaces what is not).
            unsafe { sys::napi_create_string_utf8(env, text.as_ptr().cast(), text_len as isize, &mut string) }
        };
        check_status!(status, "cannot hand a result of {} bytes of JSON to JavaScript (too large for one string?)", text_len)?;
        let text = string;
        let mut global = ptr::null_mut();
        let mut json = ptr::null_mut();
        let mut parse = ptr::null_mut();
        let mut out = ptr::null_mut();
        unsafe {
            check_status!(sys::napi_get_global(env, &mut global))?;
            check_status!(sys::napi_get_named_property(env, global, c"JSON".as_ptr(), &mut json))?;
            check_status!(sys::napi_get_named_property(env, json, c"parse".as_ptr(), &mut parse))?;
            check_status!(sys::napi_call_function(env, json, parse, 1, &text, &mut out))?;
        }
        Ok(out)
    }
}

impl napi::bindgen_prelude::TypeName for Js {
    fn type_name() -> &'static str {
        "Object"
    }
    fn value_type() -> ValueType {
        ValueType::Object
    }
}
