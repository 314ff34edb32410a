//! The one error type of the crate. Every failure carries a stable code (`INVALID_INPUT`, …) that the
//! bindings map to their own exception classes, and a message that says what went wrong and where.

use std::fmt;

/// Where in some input a problem was found: enough for a person to go and look.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location {
    /// 1-based line of a JSONL or text input.
    pub line: Option<u64>,
    /// 0-based byte offset in the input.
    pub offset: Option<u64>,
    /// Index of the block in a batch (`extend`), 0-based.
    pub index: Option<usize>,
    /// Dotted field path, e.g. `tool.call_id`.
    pub field: Option<String>,
}

impl Location {
    /// A location that names only a field.
    pub fn field(field: impl Into<String>) -> Self {
        Location { field: Some(field.into()), ..Default::default() }
    }

    /// True when the location names nothing.
    pub fn is_empty(&self) -> bool {
        self.line.is_none() && self.offset.is_none() && self.index.is_none() && self.field.is_none()
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(index) = self.index {
            parts.push(format!("block {index} of the batch"));
        }
        if let Some(line) = self.line {
            parts.push(format!("line {line}"));
        }
        if let Some(offset) = self.offset {
            parts.push(format!("offset {offset}"));
        }
        if let Some(field) = &self.field {
            parts.push(format!("field \"{field}\""));
        }
        f.write_str(&parts.join(", "))
    }
}

/// The kind of an [`Error`]: a stable UPPER_SNAKE name (`INVALID_INPUT`, …) that the bindings map to
/// their own exception classes and every language shows alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Code {
    /// `INVALID_INPUT`: the caller's input (a block, a native record, a path, an option) is not acceptable.
    InvalidInput,
    /// `NOT_FOUND`: a session, block, embed or binding that does not exist.
    NotFound,
    /// `CONFLICT`: the operation clashes with what is stored.
    Conflict,
    /// `SCHEMA_TOO_NEW`: the database was written by a newer sna-history; it was left untouched.
    SchemaTooNew,
    /// `STORAGE`: the database failed (SQLite or PostgreSQL). A full disk, a database that cannot be
    /// written and an I/O error of the disk under an SQLite file say so, and name the file.
    Storage,
    /// `IO`: a file could not be read or written, or a command could not be run.
    Io,
    /// `UNSUPPORTED`: the runtime does not offer the operation (a capability its adapter lacks).
    Unsupported,
    /// `LOSSY`: strict mode, and a conversion would lose or alter something.
    Lossy,
    /// `CLOSED`: the store was closed.
    Closed,
    /// `TIMEOUT`: a runtime did not answer or finish in the time given.
    Timeout,
    /// `RUNTIME`: a runtime process failed: it exited during a turn or refused a request.
    Runtime,
    /// `INTERNAL`: a bug in sna-history.
    Internal,
}

impl Code {
    /// Every code, in a fixed order.
    pub const ALL: &'static [Code] = &[
        Code::InvalidInput,
        Code::NotFound,
        Code::Conflict,
        Code::SchemaTooNew,
        Code::Storage,
        Code::Io,
        Code::Unsupported,
        Code::Lossy,
        Code::Closed,
        Code::Timeout,
        Code::Runtime,
        Code::Internal,
    ];

    /// The code's name: `INVALID_INPUT`, `NOT_FOUND`, …
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidInput => "INVALID_INPUT",
            Code::NotFound => "NOT_FOUND",
            Code::Conflict => "CONFLICT",
            Code::SchemaTooNew => "SCHEMA_TOO_NEW",
            Code::Storage => "STORAGE",
            Code::Io => "IO",
            Code::Unsupported => "UNSUPPORTED",
            Code::Lossy => "LOSSY",
            Code::Closed => "CLOSED",
            Code::Timeout => "TIMEOUT",
            Code::Runtime => "RUNTIME",
            Code::Internal => "INTERNAL",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<str> for Code {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

/// Every error sna-history returns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The caller's input (a block, a native record, a path, an option) is not acceptable.
    #[error("{}", with_location(.message, .location))]
    InvalidInput { message: String, location: Location },

    /// A session, block, embed or binding that does not exist.
    #[error("{0}")]
    NotFound(String),

    /// The operation clashes with what is stored (a duplicate id, an embed id reused for other bytes).
    #[error("{0}")]
    Conflict(String),

    /// The database was written by a newer sna-history; it is left untouched.
    #[error("database {path} has schema version {found}, newer than {supported} which this version of sna-history supports; it was not modified")]
    SchemaTooNew { path: String, found: i64, supported: i64 },

    /// The database failed (SQLite or PostgreSQL): `source` is the driver's error.
    #[error("{context}: {source}")]
    Storage {
        context: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// A file could not be read or written.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// The runtime does not offer the operation (a capability its adapter does not implement).
    #[error("{0}")]
    Unsupported(String),
    /// Strict mode: a conversion would lose or alter something.
    #[error("{0}")]
    Lossy(String),

    /// The store was closed.
    #[error("{0}")]
    Closed(String),

    /// A runtime did not answer or finish in the time given.
    #[error("{0}")]
    Timeout(String),

    /// A runtime process failed: it exited during a turn or refused a request.
    #[error("{0}")]
    Runtime(String),

    /// A bug in sna-history (for instance a panic caught at a language boundary).
    #[error("internal error: {0}")]
    Internal(String),
}

fn with_location(message: &str, location: &Location) -> String {
    if location.is_empty() {
        message.to_string()
    } else {
        format!("{location}: {message}")
    }
}

impl Error {
    /// The stable code of this error, the same in every language.
    pub fn code(&self) -> Code {
        match self {
            Error::InvalidInput { .. } => Code::InvalidInput,
            Error::NotFound(_) => Code::NotFound,
            Error::Conflict(_) => Code::Conflict,
            Error::SchemaTooNew { .. } => Code::SchemaTooNew,
            Error::Storage { .. } => Code::Storage,
            Error::Io { .. } => Code::Io,
            Error::Unsupported(_) => Code::Unsupported,
            Error::Lossy(_) => Code::Lossy,
            Error::Closed(_) => Code::Closed,
            Error::Timeout(_) => Code::Timeout,
            Error::Runtime(_) => Code::Runtime,
            Error::Internal(_) => Code::Internal,
        }
    }

    /// An [`Error::InvalidInput`] without a location.
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::InvalidInput { message: message.into(), location: Location::default() }
    }

    /// An [`Error::InvalidInput`] about one field.
    pub fn invalid_field(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::InvalidInput { message: message.into(), location: Location::field(field) }
    }

    /// The location of an [`Error::InvalidInput`], if this is one.
    pub fn location(&self) -> Option<&Location> {
        match self {
            Error::InvalidInput { location, .. } => Some(location),
            _ => None,
        }
    }

    /// Adds the batch index to an [`Error::InvalidInput`]; other errors pass through.
    pub fn at_index(self, index: usize) -> Self {
        match self {
            Error::InvalidInput { message, mut location } => {
                location.index = Some(index);
                Error::InvalidInput { message, location }
            }
            other => other,
        }
    }

    /// Wraps a database driver's error with what was being done. The context becomes a `String`
    /// only when an error happens.
    pub(crate) fn storage<C: Into<String>, E: Into<Box<dyn std::error::Error + Send + Sync>>>(context: C) -> impl FnOnce(E) -> Error {
        move |source| Error::Storage { context: context.into(), source: source.into() }
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
