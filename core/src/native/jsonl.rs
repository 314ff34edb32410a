//! Reading native JSONL one line at a time (memory is bounded by the longest line, not the input),
//! and the check every file passes before it is read: a regular file, not a directory, FIFO or device.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};

use serde_json::Value;

use crate::error::{Error, Location, Result};
use crate::json::json_type;
use crate::native::types::Source;
use crate::store::{source_sha256, ReadRecord};

/// One line of a JSONL input, parsed or not.
pub(crate) struct Line<'a> {
    /// 1-based line number.
    pub number: u64,
    /// Byte offset of the line's first byte.
    pub offset: u64,
    /// The line without its end-of-line bytes (and without leading NUL bytes an unclean shutdown
    /// can leave).
    pub raw: &'a [u8],
    /// The parsed JSON, or why it is not JSON.
    pub parsed: std::result::Result<Value, LineError>,
    /// True when the line held `\u` escapes of lone UTF-16 surrogates (JavaScript writes them for
    /// cut emoji), which were read as U+FFFD.
    pub sanitized: bool,
}

/// Why a line is not a JSON value.
#[derive(Debug, Clone)]
pub(crate) struct LineError {
    pub reason: String,
    /// Byte offset within the line.
    pub column_offset: u64,
}

impl Line<'_> {
    /// An `INVALID_INPUT` error naming this line.
    pub fn error(&self, reason: impl Into<String>, field: Option<String>, column_offset: u64) -> Error {
        Error::InvalidInput {
            message: format!("not a valid record: {}", reason.into()),
            location: Location { line: Some(self.number), offset: Some(self.offset + column_offset), index: None, field },
        }
    }

    /// The raw line as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(self.raw).into_owned()
    }
}

enum Input {
    Reader(Box<dyn BufRead>),
    Values(std::vec::IntoIter<Value>),
}

/// A JSONL input read line by line. A `Source::Value` list is read element by element, as if each
/// were a line.
pub(crate) struct Lines {
    input: Input,
    buf: Vec<u8>,
    number: u64,
    offset: u64,
    /// What the source was, for messages.
    pub shown: String,
    /// The digest of the bytes consumed so far, when what was read is to be recorded.
    digest: Option<sha2::Sha256>,
    /// A last line without its newline that does not read as JSON is left unread (still being
    /// written), not taken for a malformed record.
    hold_partial: bool,
    /// The longest line read, in bytes.
    limit: u64,
}

/// The longest record (one JSONL line) read by default: 256 MiB (the `max_record_bytes` option
/// sets another). A longer line is refused with its line number rather than read into memory
/// without bound.
pub const MAX_RECORD_BYTES: u64 = 256 << 20;

const MAX_RECORD_NOTE: &str = "records this long are not written by any runtime";

impl Lines {
    pub fn open(source: Source) -> Result<Lines> {
        let (input, shown) = match source {
            Source::Text(text) => (Input::Reader(Box::new(std::io::Cursor::new(text.into_bytes()))), "the text".to_string()),
            Source::Bytes(bytes) => (Input::Reader(Box::new(std::io::Cursor::new(bytes))), "the bytes".to_string()),
            Source::Path(path) => {
                let file = File::open(&path)
                    .map_err(|source| Error::Io { context: format!("cannot read {}", path.display()), source })?;
                (Input::Reader(Box::new(BufReader::with_capacity(1 << 16, file))), path.display().to_string())
            }
            Source::Value(Value::Array(items)) => (Input::Values(items.into_iter()), "the list".to_string()),
            Source::Value(other) => {
                return Err(Error::invalid(format!(
                    "expected a list of records (or JSONL text, bytes or a path), not {}",
                    json_type(&other)
                )))
            }
        };
        Ok(Lines { input, buf: Vec::new(), number: 0, offset: 0, shown, digest: None, hold_partial: false, limit: MAX_RECORD_BYTES })
    }

    /// Keeps a digest of every byte read, for [`Lines::read_record`]; with `hold_partial`, an
    /// unfinished last line is not read.
    pub fn recording(mut self, hold_partial: bool) -> Lines {
        self.digest = Some(<sha2::Sha256 as sha2::Digest>::new());
        self.hold_partial = hold_partial;
        self
    }

    /// Reads lines of at most `limit` bytes (default [`MAX_RECORD_BYTES`]).
    pub fn limited(mut self, limit: Option<u64>) -> Lines {
        self.limit = limit.unwrap_or(MAX_RECORD_BYTES);
        self
    }

    /// What was read, when recording: bytes, lines and their SHA-256.
    pub fn read_record(&self) -> Option<ReadRecord> {
        let digest = self.digest.clone()?;
        let sha256 = source_sha256(&sha2::Digest::finalize(digest));
        Some(ReadRecord { size: self.offset, lines: self.number, sha256 })
    }

    /// The next non-empty line, or `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<Line<'_>>> {
        match &mut self.input {
            Input::Values(items) => {
                let Some(value) = items.next() else { return Ok(None) };
                self.number += 1;
                Ok(Some(Line { number: self.number, offset: 0, raw: &[], parsed: Ok(value), sanitized: false }))
            }
            Input::Reader(reader) => {
                let (from, to, line_start) = loop {
                    self.buf.clear();
                    let start = self.offset;
                    let n = read_line(reader.as_mut(), &mut self.buf, self.limit)
                        .map_err(|source| Error::Io { context: format!("cannot read {}", self.shown), source })?;
                    if n == 0 {
                        return Ok(None);
                    }
                    if n as u64 > self.limit {
                        return Err(Error::InvalidInput {
                            message: format!(
                                "a record longer than {} bytes (the limit of one record; {MAX_RECORD_NOTE})",
                                self.limit
                            ),
                            location: Location { line: Some(self.number + 1), offset: Some(start), ..Default::default() },
                        });
                    }
                    if self.hold_partial && is_unfinished(&self.buf) {
                        // The writer has not finished this line: it is read when it is complete.
                        return Ok(None);
                    }
                    if let Some(digest) = &mut self.digest {
                        sha2::Digest::update(digest, &self.buf);
                    }
                    self.number += 1;
                    self.offset += n as u64;
                    let mut to = self.buf.len();
                    while to > 0 && matches!(self.buf[to - 1], b'\n' | b'\r') {
                        to -= 1;
                    }
                    let mut from = 0;
                    while from < to && self.buf[from] == 0 {
                        from += 1;
                    }
                    // A UTF-8 byte order mark before the first record is not part of it.
                    if start == 0 && self.buf[from..to].starts_with(b"\xEF\xBB\xBF") {
                        from += 3;
                    }
                    if self.buf[from..to].iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    // The offset of the line's first byte counts the NULs that were skipped.
                    break (from, to, start + from as u64);
                };
                let line = &self.buf[from..to];
                let mut sanitized = false;
                let parsed = match serde_json::from_slice::<Value>(line) {
                    Ok(value) => Ok(value),
                    Err(e) => {
                        let retry = replace_lone_surrogates(line)
                            .and_then(|fixed| serde_json::from_slice::<Value>(&fixed).ok());
                        match retry {
                            Some(value) => {
                                sanitized = true;
                                Ok(value)
                            }
                            None => Err(LineError {
                                column_offset: column_to_offset(line, e.line(), e.column()),
                                reason: json_reason(&e),
                            }),
                        }
                    }
                };
                Ok(Some(Line { number: self.number, offset: line_start, raw: line, parsed, sanitized }))
            }
        }
    }
}

/// The line with every `\uXXXX` escape of a lone surrogate replaced by `\ufffd`; `None` when it
/// has none.
fn replace_lone_surrogates(line: &[u8]) -> Option<Vec<u8>> {
    fn hex4(bytes: &[u8]) -> Option<u16> {
        let text = std::str::from_utf8(bytes.get(..4)?).ok()?;
        u16::from_str_radix(text, 16).ok()
    }
    let escape_at = |i: usize| -> Option<u16> {
        if line.get(i) == Some(&b'\\') && line.get(i + 1) == Some(&b'u') { hex4(&line[i + 2..]) } else { None }
    };
    let mut out = Vec::with_capacity(line.len());
    let mut changed = false;
    let mut i = 0;
    while i < line.len() {
        if line[i] != b'\\' {
            out.push(line[i]);
            i += 1;
            continue;
        }
        match escape_at(i) {
            Some(high @ 0xD800..=0xDBFF) => match escape_at(i + 6) {
                Some(0xDC00..=0xDFFF) => {
                    out.extend_from_slice(&line[i..i + 12]);
                    i += 12;
                }
                _ => {
                    let _ = high;
                    out.extend_from_slice(b"\\ufffd");
                    changed = true;
                    i += 6;
                }
            },
            Some(0xDC00..=0xDFFF) => {
                out.extend_from_slice(b"\\ufffd");
                changed = true;
                i += 6;
            }
            _ => {
                // Any other escape: copy the backslash and the escaped character.
                out.extend_from_slice(&line[i..(i + 2).min(line.len())]);
                i += 2;
            }
        }
    }
    changed.then_some(out)
}

/// True for a last line (one without its newline) that does not read as JSON: one a writer has
/// not finished.
pub(crate) fn is_unfinished(line: &[u8]) -> bool {
    line.last() != Some(&b'\n') && serde_json::from_slice::<serde::de::IgnoredAny>(line).is_err()
}

/// How many of `bytes` reading their lines takes now: all but a last line still being written
/// ([`is_unfinished`]).
pub(crate) fn complete_len(bytes: &[u8]) -> usize {
    let start = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    if start < bytes.len() && is_unfinished(&bytes[start..]) {
        start
    } else {
        bytes.len()
    }
}

/// Reads one line (with its newline) into `buf`, at most `limit` bytes of it: a longer line is
/// read no further (the caller refuses it by its length).
fn read_line(reader: &mut dyn BufRead, buf: &mut Vec<u8>, limit: u64) -> std::io::Result<usize> {
    reader.take(limit + 1).read_until(b'\n', buf)
}

/// The byte offset within `line` of the 1-based line and column serde_json reports (the line is
/// more than 1 only for text that itself holds newlines, such as a document given whole).
fn column_to_offset(line: &[u8], err_line: usize, column: usize) -> u64 {
    if err_line <= 1 {
        return column.saturating_sub(1) as u64;
    }
    let mut seen = 1;
    for (i, b) in line.iter().enumerate() {
        if *b == b'\n' {
            seen += 1;
            if seen == err_line {
                return (i + column) as u64;
            }
        }
    }
    line.len() as u64
}

/// Reads up to `limit` bytes of the start of a file (for format detection).
pub(crate) fn head(path: &std::path::Path, limit: usize) -> Result<Vec<u8>> {
    // A FIFO or a device would block or never end: only regular files are read.
    check_readable(path)?;
    let file = File::open(path).map_err(|source| Error::Io { context: format!("cannot read {}", path.display()), source })?;
    let mut out = Vec::new();
    file.take(limit as u64)
        .read_to_end(&mut out)
        .map_err(|source| Error::Io { context: format!("cannot read {}", path.display()), source })?;
    Ok(out)
}

/// Why serde_json refused a text, without its "at line L column C": the error's location says
/// where, in the caller's terms (a line of the whole input, a byte offset).
pub(crate) fn json_reason(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&position).map(str::to_string).unwrap_or(text)
}

/// Refuses a path that cannot be read, or is not a regular file (a directory, a FIFO, a device).
pub(crate) fn check_readable(path: &std::path::Path) -> Result<()> {
    readable_meta(path).map(drop)
}

/// The metadata of a regular file to read as history; see [`check_readable`].
pub(crate) fn readable_meta(path: &std::path::Path) -> Result<std::fs::Metadata> {
    let meta = std::fs::metadata(path)
        .map_err(|source| Error::Io { context: format!("cannot read {}", path.display()), source })?;
    if meta.is_dir() {
        return Err(Error::invalid(format!("{} is a directory, not a native history file", path.display())));
    }
    if !meta.is_file() {
        return Err(Error::invalid(format!(
            "{} is not a regular file (a FIFO, socket or device is not read as history)",
            path.display()
        )));
    }
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogate_escapes_become_replacement_characters_and_pairs_stay() {
        let repaired = replace_lone_surrogates(br#"{"t":"a\ud800b"}"#).unwrap();
        let value: Value = serde_json::from_slice(&repaired).unwrap();
        assert_eq!(value["t"], "a\u{fffd}b");
        // A valid pair and an escaped backslash before "u" are left alone.
        assert!(replace_lone_surrogates(br#"{"t":"\ud83d\ude00"}"#).is_none());
        assert!(replace_lone_surrogates(br#"{"t":"\\ud800"}"#).is_none());
        let low_first = replace_lone_surrogates(br#"["\udc00\ud800"]"#).unwrap();
        assert_eq!(serde_json::from_slice::<Value>(&low_first).unwrap()[0], "\u{fffd}\u{fffd}");
    }

    #[test]
    fn json_errors_lose_serdes_own_position() {
        let e = serde_json::from_str::<Value>("{\"a\": ").unwrap_err();
        assert_eq!(json_reason(&e), "EOF while parsing a value");
    }

    #[test]
    fn a_line_longer_than_the_limit_is_refused_with_its_line() {
        let text = format!("{{}}\n{}\n{{}}\n", "x".repeat(100));
        let mut lines = Lines::open(Source::Text(text)).unwrap();
        lines.limit = 64;
        assert!(lines.next_line().unwrap().is_some());
        let err = lines.next_line().err().unwrap();
        assert_eq!(err.code(), "INVALID_INPUT");
        assert_eq!(err.location().unwrap().line, Some(2));
        assert_eq!(err.location().unwrap().offset, Some(3));
        assert!(err.to_string().contains("longer than 64 bytes"), "{err}");
        // A line of exactly the limit (newline included) is read.
        let mut lines = Lines::open(Source::Text(format!("\"{}\"\n", "y".repeat(61)))).unwrap();
        lines.limit = 64;
        assert!(lines.next_line().unwrap().is_some());
    }
}
