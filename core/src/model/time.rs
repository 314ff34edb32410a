//! Points in time as blocks carry them.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Result};

/// A point in time, UTC, with millisecond precision. Serialized as RFC 3339 (`2026-12-02T19:52:04.123Z`);
/// an integer (milliseconds since the Unix epoch) is accepted on input too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timestamp(i64);

impl Timestamp {
    /// The current time, truncated to milliseconds.
    pub fn now() -> Self {
        Timestamp(chrono::Utc::now().timestamp_millis())
    }

    /// From milliseconds since the Unix epoch. Fails outside the years -262143..=262142.
    pub fn from_millis(millis: i64) -> Result<Self> {
        chrono::DateTime::from_timestamp_millis(millis)
            .map(|_| Timestamp(millis))
            .ok_or_else(|| Error::invalid(format!("timestamp {millis} ms is out of range")))
    }

    /// Milliseconds since the Unix epoch.
    pub fn as_millis(self) -> i64 {
        self.0
    }

    /// As a chrono UTC date-time.
    pub fn to_datetime(self) -> chrono::DateTime<chrono::Utc> {
        // The constructors only admit values chrono can represent.
        chrono::DateTime::from_timestamp_millis(self.0).unwrap_or_default()
    }

    /// From a chrono date-time (sub-millisecond precision is dropped).
    pub fn from_datetime<Tz: chrono::TimeZone>(value: &chrono::DateTime<Tz>) -> Self {
        Timestamp(value.timestamp_millis())
    }

    /// RFC 3339 with milliseconds and `Z`.
    pub fn to_rfc3339(self) -> String {
        self.to_datetime().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    }

    /// Parses RFC 3339 (any offset; converted to UTC).
    pub fn parse_rfc3339(text: &str) -> Result<Self> {
        chrono::DateTime::parse_from_rfc3339(text)
            .map(|value| Timestamp::from_datetime(&value))
            .map_err(|e| Error::invalid(format!("invalid timestamp {text:?}: {e} (expected RFC 3339)")))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_rfc3339())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw<'a> {
            Millis(i64),
            #[serde(borrow)]
            Text(std::borrow::Cow<'a, str>),
        }
        match Raw::deserialize(deserializer)? {
            Raw::Millis(ms) => Timestamp::from_millis(ms).map_err(serde::de::Error::custom),
            Raw::Text(text) => Timestamp::parse_rfc3339(&text).map_err(serde::de::Error::custom),
        }
    }
}
