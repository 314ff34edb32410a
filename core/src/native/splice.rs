//! Exports written from the stored text: a passthrough record goes out as the bytes the store
//! holds, with only the hole of its canonical payload (a message's content) filled in, instead of
//! being parsed into values and serialized again ([`crate::store::stored_text`] finds the hole).
//! The golden tests check the text against the value path's, byte for byte.

use std::io::Write;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::Format;
use crate::store::stored_text::compact;
pub(crate) use crate::store::stored_text::{lighten_with, Hole, Lighten, Splice, Splices, StoredRecord};

/// One record of a JSONL export: its value (complete, or the part an export reads when `splice`
/// is given), and the stored text it is written from.
#[derive(Debug)]
pub(crate) struct TextRecord {
    pub value: Value,
    pub splice: Option<Splice>,
}

impl TextRecord {
    pub(crate) fn value(value: Value) -> TextRecord {
        TextRecord { value, splice: None }
    }
}

/// An export ready to be written as text.
pub(crate) enum NativeText {
    /// JSONL: one record per line.
    Lines(Vec<TextRecord>),
    /// One JSON document, pretty-printed.
    Document(Value),
    /// Text as it is.
    Text(String),
}

impl NativeText {
    /// The text `Format::to_text` writes for `data`, to be written.
    pub(crate) fn from_value(format: Format, data: Value) -> NativeText {
        match (format.encoding(), data) {
            (crate::model::Encoding::Jsonl, Value::Array(records)) => {
                NativeText::Lines(records.into_iter().map(TextRecord::value).collect())
            }
            (_, Value::String(text)) => NativeText::Text(text),
            (_, data) => NativeText::Document(data),
        }
    }

    /// Writes the text to `out` through a buffer, flushed; gives `out` back. The same bytes as
    /// `Format::to_text` of the values.
    pub(crate) fn write_buffered<W: Write>(&self, out: W) -> Result<W> {
        let io = |source| Error::Io { context: "cannot write the export".into(), source };
        let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
        self.render(&mut |piece| out.write_all(piece.as_bytes()).map_err(io))?;
        out.into_inner().map_err(|e| io(e.into_error()))
    }

    /// The whole text in memory.
    pub(crate) fn into_string(self) -> Result<String> {
        if let NativeText::Text(text) = self {
            return Ok(text);
        }
        let mut out = String::with_capacity(self.size_hint());
        self.render(&mut |piece| {
            out.push_str(piece);
            Ok(())
        })?;
        Ok(out)
    }

    /// The data as one compact JSON text (JSONL records as an array): the text of the values
    /// [`crate::store::Session::to_native`] gives, for a binding to hand to its language's JSON
    /// parser.
    pub(crate) fn into_json(self) -> Result<String> {
        let json = |e: serde_json::Error| Error::Internal(format!("cannot serialize the export: {e}"));
        match self {
            NativeText::Lines(records) => {
                let mut out = String::with_capacity(stored_size(&records) + 2);
                out.push('[');
                render_records(&records, ",", "", &mut |piece| {
                    out.push_str(piece);
                    Ok(())
                })?;
                out.push(']');
                Ok(out)
            }
            NativeText::Document(value) => serde_json::to_string(&value).map_err(json),
            NativeText::Text(text) => serde_json::to_string(&text).map_err(json),
        }
    }

    /// The text, piece by piece.
    fn render(&self, put: &mut dyn FnMut(&str) -> Result<()>) -> Result<()> {
        match self {
            NativeText::Lines(records) => render_records(records, "", "\n", put)?,
            NativeText::Document(value) => {
                let text = serde_json::to_string_pretty(value).map_err(|e| Error::Internal(format!("cannot serialize the export: {e}")))?;
                put(&text)?;
                put("\n")?;
            }
            NativeText::Text(text) => put(text)?,
        }
        Ok(())
    }

    /// About how long the text is: the stored text it copies.
    fn size_hint(&self) -> usize {
        match self {
            NativeText::Lines(records) => stored_size(records),
            NativeText::Document(_) => 0,
            NativeText::Text(text) => text.len(),
        }
    }
}

/// Records, each followed by `after`, `between` separating them.
fn render_records(records: &[TextRecord], between: &str, after: &str, put: &mut dyn FnMut(&str) -> Result<()>) -> Result<()> {
    let mut buf = Vec::new();
    for (i, record) in records.iter().enumerate() {
        if i > 0 {
            put(between)?;
        }
        match &record.splice {
            None => put(compact(&record.value, &mut buf)?)?,
            Some(splice) => splice.render(&record.value, &mut buf, put)?,
        }
        put(after)?;
    }
    Ok(())
}

/// About how long records are written: the stored text they copy.
fn stored_size(records: &[TextRecord]) -> usize {
    records.iter().map(|r| r.splice.as_ref().map_or(256, |s| s.record.len() + 1)).sum()
}
