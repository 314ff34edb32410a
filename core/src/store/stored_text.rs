//! Stored text read as it is: the scanner that finds the members of a stored JSON object without
//! parsing it, and what an export written from stored text keeps of each record
//! ([`crate::native::splice`] writes it out).
//!
//! The store writes every native column with `serde_json`'s compact writer (`to_json`), and
//! compact JSON is compositional: the text of a value inside a record is the text that value
//! serializes to on its own. So "record text with the hole's span replaced by the serialized
//! payload" is byte for byte what serializing the rebuilt record gives.
//!
//! The scanner reads text the store wrote. Where it reads tokens (a record's members, the data's
//! members after it) anything else — whitespace, a key without its quote, a literal that is not
//! one — makes it answer `None`, and the caller parses that record in full (which reports real
//! corruption). Inside a member it only finds the member's end: a column edited by hand so that a
//! nested value is spaced out or broken is written out as it is stored, where the values path
//! would respace it or refuse it.

use std::ops::Range;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::{Actor, Block, Kind, Native};

use super::db::Row;
use super::layout::{id_from_column, json_column, timestamp};

/// The stored text of one passthrough record and the span that the export fills in.
#[derive(Debug)]
pub(crate) struct Splice {
    /// The stored text holding the record (a native column's `data`).
    pub text: String,
    /// Where the record is in `text`.
    pub record: Range<usize>,
    /// Where the value to be replaced is in `text`, inside `record`, and where (a JSON pointer)
    /// the record's value holds what replaces it; `None` writes the record as it is.
    pub hole: Option<Hole>,
}

/// The splices of a session's blocks, by `seq`.
#[derive(Debug, Default)]
pub(crate) struct Splices(Vec<Option<Splice>>);

impl Splices {
    pub(crate) fn set(&mut self, seq: u64, splice: Splice) {
        let Ok(at) = usize::try_from(seq) else { return };
        if self.0.len() <= at {
            self.0.resize_with(at + 1, || None);
        }
        self.0[at] = Some(splice);
    }

    /// The splice of the block at `seq`, taken out.
    pub(crate) fn take(&mut self, seq: u64) -> Option<Splice> {
        usize::try_from(seq).ok().and_then(|at| self.0.get_mut(at)).and_then(Option::take)
    }
}

/// How a runtime readies one block loaded with its native data as stored text (a JSON string)
/// for an export written from that text: returns the block's [`Splice`] and leaves in the data
/// what the export reads; without a splice, the data is parsed in full.
pub(crate) type Lighten = fn(&mut Block) -> Result<Option<Splice>>;

impl Splice {
    /// The record, the hole filled with the payload in `value` (the record's rebuilt parts),
    /// serialized in `buf`.
    pub(crate) fn render(&self, value: &Value, buf: &mut Vec<u8>, put: &mut dyn FnMut(&str) -> Result<()>) -> Result<()> {
        match &self.hole {
            None => put(&self.text[self.record.clone()]),
            Some((hole, at)) => {
                put(&self.text[self.record.start..hole.start])?;
                put(compact(value.pointer(at).unwrap_or(&Value::Null), buf)?)?;
                put(&self.text[hole.end..self.record.end])
            }
        }
    }
}

/// `value` as compact JSON, in `buf` (reused from one value to the next).
pub(crate) fn compact<'b>(value: &Value, buf: &'b mut Vec<u8>) -> Result<&'b str> {
    buf.clear();
    serde_json::to_writer(&mut *buf, value).map_err(|e| Error::Internal(format!("cannot serialize the export: {e}")))?;
    std::str::from_utf8(buf).map_err(|e| Error::Internal(format!("an export is not UTF-8: {e}")))
}

/// A stored native data `{"record": {…}, …}` read for an export written from it: the record's
/// members (spans in `text`) and the data's other members, parsed.
pub(crate) struct StoredRecord<'a> {
    pub text: &'a str,
    pub members: Members<'a>,
    pub span: Range<usize>,
    pub rest: serde_json::Map<String, Value>,
}

impl<'a> StoredRecord<'a> {
    /// Splits `text`; `None` unless it is laid out as an import writes it (the record, an object,
    /// first).
    pub(crate) fn read(text: &'a str) -> Option<StoredRecord<'a>> {
        const HEAD: &[u8] = b"{\"record\":{";
        if !text.as_bytes().starts_with(HEAD) {
            return None;
        }
        let (members, end) = members_at(text, HEAD.len() - 1)?;
        let mut rest = serde_json::Map::new();
        // The data's other members follow the record: `,"key":value…}`.
        let b = text.as_bytes();
        let mut i = end;
        while b.get(i) == Some(&b',') {
            if b.get(i + 1) != Some(&b'"') {
                return None;
            }
            let key_end = string_end(b, i + 1)?;
            let key = text.get(i + 2..key_end - 1)?;
            if key.contains('\\') || key == "record" || b.get(key_end) != Some(&b':') {
                return None;
            }
            let value_end = value_end(b, key_end + 1)?;
            rest.insert(key.to_string(), serde_json::from_str(&text[key_end + 1..value_end]).ok()?);
            i = value_end;
        }
        (i + 1 == text.len() && b[i] == b'}').then_some(StoredRecord { text, members, span: HEAD.len() - 1..end, rest })
    }

    /// The span of the record's member `key`.
    pub(crate) fn member(&self, key: &str) -> Option<Range<usize>> {
        self.members.iter().find(|(k, _)| *k == key).map(|(_, span)| span.clone())
    }

    /// The value at `span`, parsed.
    pub(crate) fn parse(&self, span: Range<usize>) -> Option<Value> {
        serde_json::from_str(&self.text[span]).ok()
    }

    /// The record's members named in `keys`, parsed.
    pub(crate) fn pick(&self, keys: &[&str]) -> Option<serde_json::Map<String, Value>> {
        let mut map = serde_json::Map::with_capacity(keys.len() + 1);
        for (key, span) in &self.members {
            if keys.contains(key) {
                map.insert(key.to_string(), self.parse(span.clone())?);
            }
        }
        Some(map)
    }

    /// The members of the object at `span` (spans in `text`).
    pub(crate) fn members_of(&self, span: Range<usize>) -> Option<Members<'a>> {
        let (members, end) = members_at(self.text, span.start)?;
        (end == span.end).then_some(members)
    }
}

/// Where a grouped record's rebuilt payload goes: its span in the stored text, and the JSON
/// pointer to it in the record's value.
pub(crate) type Hole = (Range<usize>, &'static str);

/// What a runtime reads of a stored record for its writer: the light record, and its [`Hole`].
/// `None` reads it in full.
pub(crate) type LightRecord = fn(&StoredRecord<'_>) -> Option<(Value, Option<Hole>)>;

/// Readies a block loaded with its native data as stored text: the data becomes the light record
/// `light` makes (with the data's other members) and the text its [`Splice`]; data the scanner does
/// not follow, or that `light` declines, is parsed in full. A grouped record (one whose `parts` is
/// a count, as the writers read it) needs its hole; any other is written as it is.
pub(crate) fn lighten_with(block: &mut Block, light: LightRecord) -> Result<Option<Splice>> {
    let Some(native) = block.native.as_mut() else { return Ok(None) };
    let Value::String(text) = &mut native.data else { return Ok(None) };
    let text = std::mem::take(text);
    let read = StoredRecord::read(&text).and_then(|stored| {
        let (record, hole) = light(&stored)?;
        // Grouped as the writers decide it (a count of parts); otherwise written as it is.
        let hole = match stored.rest.get("parts").and_then(Value::as_u64) {
            Some(_) => Some(hole?),
            None => None,
        };
        let mut data = serde_json::Map::with_capacity(1 + stored.rest.len());
        data.insert("record".into(), record);
        data.extend(stored.rest);
        Some((Value::Object(data), stored.span, hole))
    });
    Ok(match read {
        Some((data, record, hole)) => {
            native.data = data;
            Some(Splice { text, record, hole })
        }
        None => {
            native.data = parse_stored(&text, &block.id)?;
            None
        }
    })
}

/// The members of an object: each one's raw key (between the quotes, escapes as written) and the
/// span of its value.
pub(crate) type Members<'a> = Vec<(&'a str, Range<usize>)>;

/// The members of the JSON object that `text` is, spans in `text`. `None` when `text` is not a
/// compact object.
#[cfg(test)]
fn object_members(text: &str) -> Option<Members<'_>> {
    let start = skip_ws(text.as_bytes(), 0);
    let (members, end) = members_at(text, start)?;
    (skip_ws(text.as_bytes(), end) == text.len()).then_some(members)
}

/// The members of the object that starts at `start` in `text` (spans in `text`), and the index
/// after it.
pub(crate) fn members_at(text: &str, start: usize) -> Option<(Members<'_>, usize)> {
    let b = text.as_bytes();
    let mut i = start;
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(b, i + 1);
    let mut members = Vec::new();
    if b.get(i) == Some(&b'}') {
        return Some((members, i + 1));
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(b, i)?;
        let key = text.get(i + 1..key_end - 1)?;
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let start = skip_ws(b, i + 1);
        let end = value_end(b, start)?;
        members.push((key, start..end));
        i = skip_ws(b, end);
        match b.get(i)? {
            b',' => i = skip_ws(b, i + 1),
            b'}' => return Some((members, i + 1)),
            _ => return None,
        }
    }
}

/// Compact JSON has no whitespace between tokens: where the scanner reads tokens, whitespace
/// means the text was not written by the store, and it declines (the caller parses in full).
fn skip_ws(b: &[u8], i: usize) -> usize {
    if b.get(i).is_some_and(|c| matches!(c, b' ' | b'\n' | b'\r' | b'\t')) {
        usize::MAX
    } else {
        i
    }
}

/// The index after the string whose opening quote is at `i`.
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        // From quote to quote: text is full of escapes (`\n`), quotes inside it are rarer. A quote
        // after an odd number of backslashes is escaped.
        let k = j + memchr::memchr(b'"', b.get(j..)?)?;
        let backslashes = b[j..k].iter().rev().take_while(|&&c| c == b'\\').count();
        if backslashes % 2 == 0 {
            return Some(k + 1);
        }
        j = k + 1;
    }
}

/// The index after the JSON value that starts at `i`.
fn value_end(b: &[u8], mut i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => string_end(b, i),
        open @ (b'{' | b'[') => {
            // Outside strings, the brackets of the other kind are balanced inside this value: only
            // this kind is counted, jumping from one quote or bracket to the next.
            let close = if open == b'{' { b'}' } else { b']' };
            let mut depth = 0usize;
            loop {
                i += memchr::memchr3(b'"', open, close, b.get(i..)?)?;
                match b[i] {
                    b'"' => {
                        i = string_end(b, i)?;
                        continue;
                    }
                    c if c == open => depth += 1,
                    _ => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                }
                i += 1;
            }
        }
        _ => {
            let start = i;
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                i += 1;
            }
            let literal = &b[start..i];
            let number = literal.iter().all(|c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E'));
            (i > start && (number || matches!(literal, b"true" | b"false" | b"null"))).then_some(i)
        }
    }
}

/// A block from its row (the columns [`super::layout::BLOCK_COLUMNS`] names).
pub(crate) fn block_from_row(row: &Row<'_>) -> Result<Block> {
    block_from_row_raw(row, None)
}

/// A block from its row. With `raw` (a runtime's name), a native column of that runtime is not
/// parsed: its data's stored text becomes the data, as a JSON string, for an export that writes
/// stored text out as it is ([`crate::native::splice`]).
pub(crate) fn block_from_row_raw(row: &Row<'_>, raw: Option<&str>) -> Result<Block> {
    let actor = row.text(2).map_err(|e| Error::Internal(format!("stored actor: {e}")))?;
    let kind = row.text(3).map_err(|e| Error::Internal(format!("stored kind: {e}")))?;
    Ok(Block {
        seq: row.int(0)? as u64,
        id: id_from_column(row.cell(1)?)?,
        actor: actor.parse::<Actor>().map_err(|e| Error::Internal(format!("stored block: {e}")))?,
        kind: kind.parse::<Kind>().map_err(|e| Error::Internal(format!("stored block: {e}")))?,
        content: row.string(4)?,
        tool: json_column(row, 5, "tool")?,
        reasoning: json_column(row, 6, "reasoning")?,
        embeds: json_column(row, 7, "embeds")?.unwrap_or_default(),
        provider: row.opt_string(8)?,
        model_provider: row.opt_string(9)?,
        model: row.opt_string(10)?,
        message_id: row.opt_string(11)?,
        turn_id: row.opt_string(12)?,
        created_at: timestamp(row.int(13)?)?,
        native: match raw {
            None => json_column(row, 14, "native")?,
            Some(runtime) => native_column(row, runtime)?,
        },
    })
}

/// The native column, its data left as stored text when it is `runtime`'s.
pub(super) fn native_column(row: &Row<'_>, runtime: &str) -> Result<Option<Native>> {
    let Some(text) = row.opt_text(14).map_err(|_| Error::Internal("stored native column is not text".into()))? else {
        return Ok(None);
    };
    // `to_json` of a `Native` writes `{"runtime":<name>,"data":<data>}`.
    if let Some(data) = text
        .strip_prefix("{\"runtime\":\"")
        .and_then(|rest| rest.strip_prefix(runtime))
        .and_then(|rest| rest.strip_prefix("\",\"data\":"))
        .and_then(|rest| rest.strip_suffix('}'))
    {
        return Ok(Some(Native { runtime: runtime.to_string(), data: serde_json::Value::String(data.to_string()) }));
    }
    // Written some other way: parsed, and `runtime`'s data given back as text all the same, so
    // that every such block holds its data the one way.
    let mut native: Native = serde_json::from_str(text).map_err(|e| Error::Internal(format!("stored native column is corrupt: {e}")))?;
    if native.runtime == runtime {
        let data = serde_json::to_string(&native.data).map_err(|e| Error::Internal(format!("stored native column: {e}")))?;
        native.data = serde_json::Value::String(data);
    }
    Ok(Some(native))
}

/// A stored value parsed in full (the fallback when the scanner does not follow it).
pub(crate) fn parse_stored(text: &str, block_id: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| Error::Internal(format!("stored native data of block {block_id} is corrupt: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_found_with_their_spans() {
        let text = r#"{"a":1,"b\"c":"x\\\"}y","d":{"e":[1,{"f":"]}"}]},"g":null}"#;
        let members = object_members(text).unwrap();
        let shown: Vec<(&str, &str)> = members.iter().map(|(k, r)| (*k, &text[r.clone()])).collect();
        assert_eq!(
            shown,
            vec![("a", "1"), (r#"b\"c"#, r#""x\\\"}y""#), ("d", r#"{"e":[1,{"f":"]}"}]}"#), ("g", "null")]
        );
        assert_eq!(object_members("{}").unwrap().len(), 0);
        assert_eq!(object_members("{\"a\":true}").unwrap()[0].0, "a");
    }

    #[test]
    fn what_is_not_an_object_is_refused() {
        for text in [
            "[1]", "\"a\"", "{\"a\":1", "{\"a\" 1}", "{\"a\":1}x", "{\"a\":\"open}", "{a:1}", "", " {\"a\":1}", "{\"a\": 1}",
            "{\"a\":tru}", "{\"a\":1,b\":2}",
        ] {
            assert!(object_members(text).is_none(), "{text}");
        }
    }

    #[test]
    fn a_spliced_record_is_the_serialized_record() {
        let record = serde_json::json!({"type": "user", "message": {"role": "user", "content": null}, "uuid": "u"});
        let text = serde_json::to_string(&serde_json::json!({"record": record, "parts": 1})).unwrap();
        let members = object_members(&text).unwrap();
        let span = members[0].1.clone();
        let message = object_members(&text[span.clone()]).unwrap()[1].1.clone();
        let content = object_members(&text[span.start + message.start..span.start + message.end]).unwrap()[1].1.clone();
        let hole = span.start + message.start + content.start..span.start + message.start + content.end;
        let mut filled = record.clone();
        filled["message"]["content"] = Value::String("héllo \"q\"\n".into());
        let splice = Splice { text: text.clone(), record: span, hole: Some((hole, "/message/content")) };
        let mut out = String::new();
        splice
            .render(&filled, &mut Vec::new(), &mut |piece| {
                out.push_str(piece);
                Ok(())
            })
            .unwrap();
        assert_eq!(out, serde_json::to_string(&filled).unwrap());
    }
}
