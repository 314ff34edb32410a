//! The canonical model: a session is an ordered list of [`Block`]s, each with an actor and a kind.
//! Every native shape converts to and from this one; the field names here are the serialized names
//! used by every language (docs/design.md §1).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

pub(crate) mod ids;
mod models;
pub(crate) mod prices;
mod runtime;
mod time;
pub(crate) mod usage;

pub use runtime::{Encoding, Format, Runtime};
pub use models::{ModelLimits, ModelTable};
pub use prices::{Price, PriceTable};
pub use time::Timestamp;
pub use usage::Tokens;

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident, $what:literal, { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The serialized name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = Error;

            fn from_str(s: &str) -> Result<Self> {
                match s {
                    $($text => Ok($name::$variant),)+
                    other => Err(Error::invalid(format!(
                        concat!("unknown ", $what, " {:?} (expected one of: {})"),
                        other,
                        $name::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", ")
                    ))),
                }
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
                let text = std::borrow::Cow::<str>::deserialize(deserializer)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

mod compaction;
pub use compaction::{Compaction, CompactionMode, Trigger};

string_enum!(
    /// Who a block comes from.
    Actor, "actor", {
        /// The person (or the host speaking for them), and tool results fed back to the model.
        User => "user",
        /// The model.
        Assistant => "assistant",
        /// The runtime or host: instructions, bookkeeping, status lines.
        System => "system",
    }
);

string_enum!(
    /// What a block holds.
    Kind, "kind", {
        /// Plain text.
        Text => "text",
        /// Reasoning: readable text, with an opaque token in `reasoning` when the provider gave one.
        Thinking => "thinking",
        /// A tool call; `content` is the tool input exactly as the runtime gave it.
        ToolUse => "tool_use",
        /// The output of a tool call.
        ToolResult => "tool_result",
        /// A human-readable status line, or runtime bookkeeping kept with `native` passthrough.
        Status => "status",
        /// An error line (including a malformed native record kept verbatim).
        Error => "error",
    }
);


/// The tool side of a `tool_use` (`call_id`, `name`) or `tool_result` (`call_id`, `is_error`) block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolRef {
    /// The call id, shared by a call and its result.
    pub call_id: String,
    /// tool_use: the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// tool_result: whether the tool reported an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

impl ToolRef {
    /// The tool side of a call.
    pub fn call(call_id: impl Into<String>, name: impl Into<String>) -> Self {
        ToolRef { call_id: call_id.into(), name: Some(name.into()), is_error: None }
    }

    /// The tool side of a result.
    pub fn result(call_id: impl Into<String>, is_error: bool) -> Self {
        ToolRef { call_id: call_id.into(), name: None, is_error: Some(is_error) }
    }
}

/// Where an opaque reasoning token is valid.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scope {
    /// The runtime that produced the token (`claude-code`, `codex`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The vendor whose model produced it (`anthropic`, `openai`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_provider: Option<String>,
    /// The exact model slug.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// The opaque reasoning token of a `thinking` block (or, for Gemini's `thoughtSignature`, of the
/// `tool_use` or `text` block whose part it signs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reasoning {
    /// `anthropic-signature`, `anthropic-redacted`, `openai-encrypted`, or another producer's name.
    pub format: String,
    /// The token itself, byte for byte.
    pub data: String,
    /// Where the token may be replayed.
    #[serde(default)]
    pub scope: Scope,
}

impl Reasoning {
    /// An Anthropic thinking signature.
    pub const ANTHROPIC_SIGNATURE: &'static str = "anthropic-signature";
    /// The data of an Anthropic `redacted_thinking` block.
    pub const ANTHROPIC_REDACTED: &'static str = "anthropic-redacted";
    /// An OpenAI Responses `encrypted_content`.
    pub const OPENAI_ENCRYPTED: &'static str = "openai-encrypted";
    /// A Gemini `thoughtSignature`: on a thought part (a thinking block), or on the function call
    /// or text part it signs (a tool_use or text block).
    pub const GOOGLE_THOUGHT_SIGNATURE: &'static str = "google-thought-signature";
}

/// Binary content attached to a block (an image, a document). The bytes live in the store,
/// content-addressed by SHA-256; a block carries only this description.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Embed {
    /// Media type, e.g. `image/png`.
    pub mime: String,
    /// File name, when the runtime gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Size of the bytes.
    #[serde(default)]
    pub size: u64,
    /// SHA-256 of the bytes, lower-case hex.
    #[serde(default)]
    pub sha256: String,
    /// The bytes, when they travel with the block (on append). Never serialized; read stored bytes
    /// with `Session::embed`.
    #[serde(skip)]
    pub data: Option<Vec<u8>>,
}

impl Embed {
    /// An embed that carries its bytes; `size` and `sha256` are computed.
    pub fn from_bytes(mime: impl Into<String>, name: Option<String>, data: Vec<u8>) -> Self {
        Embed { mime: mime.into(), name, size: data.len() as u64, sha256: sha256_hex(&data), data: Some(data) }
    }
}

/// SHA-256 as lower-case hex.
pub fn sha256_hex(data: &[u8]) -> String {
    let digest = Sha256::digest(data);
    let mut out = String::with_capacity(64);
    for byte in digest {
        use fmt::Write;
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// What the origin runtime stored beyond the canonical fields, kept so that exporting back to that
/// runtime is lossless.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Native {
    /// The runtime that wrote `data`.
    pub runtime: String,
    /// Its data, as the runtime wrote it.
    pub data: serde_json::Value,
}

/// One block of a session.
///
/// On append, `id` may be empty (one is generated, time-ordered) and `seq` is ignored (the store assigns
/// it); everything else is stored as given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Block {
    /// Unique, stable id.
    #[serde(default)]
    pub id: String,
    /// Dense position in the session, 0, 1, 2, …
    #[serde(default)]
    pub seq: u64,
    /// Who the block comes from.
    pub actor: Actor,
    /// What it holds.
    pub kind: Kind,
    /// Text; for tool_use the tool input exactly as given; see docs/design.md §1.
    #[serde(default)]
    pub content: String,
    /// tool_use / tool_result only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolRef>,
    /// thinking only: the opaque token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Reasoning>,
    /// Embed id → embed; content refers to them as `![name](embed://<id>)`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub embeds: BTreeMap<String, Embed>,
    /// The runtime that produced the block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The vendor that owned the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_provider: Option<String>,
    /// The exact model slug.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Groups the blocks of one native message / model response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Groups the blocks of one user turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    /// When the block was made.
    #[serde(default = "Timestamp::now")]
    pub created_at: Timestamp,
    /// Passthrough of the origin runtime's own data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native: Option<Native>,
}

impl Block {
    /// True for runtime bookkeeping: system blocks, status blocks, and the user-side text a runtime
    /// writes itself though the person never typed it (Claude Code's meta records, Codex's
    /// environment context and instruction files). Search leaves it out unless asked; the views
    /// fold it away.
    pub fn is_bookkeeping(&self) -> bool {
        if self.actor == Actor::System || self.kind == Kind::Status {
            return true;
        }
        if self.actor != Actor::User || self.kind != Kind::Text {
            return false;
        }
        let meta = self.native.as_ref().and_then(|n| n.data.get("record")).and_then(|r| r.get("isMeta"));
        if meta == Some(&serde_json::Value::Bool(true)) {
            return true;
        }
        let text = self.content.trim();
        let wrapped = |open: &str, close: &str| text.starts_with(open) && text.ends_with(close);
        wrapped("<environment_context>", "</environment_context>")
            || wrapped("<user_instructions>", "</user_instructions>")
            || text.starts_with("# AGENTS.md instructions for ")
    }

    /// The text full-text search indexes: the content, and a tool call's tool name before its input.
    pub fn search_text(&self) -> std::borrow::Cow<'_, str> {
        match (&self.kind, &self.tool) {
            (Kind::ToolUse, Some(tool)) if !tool.name.as_deref().unwrap_or("").is_empty() => {
                std::borrow::Cow::Owned(format!("{} {}", tool.name.as_deref().unwrap_or(""), self.content))
            }
            _ => std::borrow::Cow::Borrowed(&self.content),
        }
    }

    /// A block with the given axes and content, created now, everything else empty.
    pub fn new(actor: Actor, kind: Kind, content: impl Into<String>) -> Self {
        Block {
            id: String::new(),
            seq: 0,
            actor,
            kind,
            content: content.into(),
            tool: None,
            reasoning: None,
            embeds: BTreeMap::new(),
            provider: None,
            model_provider: None,
            model: None,
            message_id: None,
            turn_id: None,
            created_at: Timestamp::now(),
            native: None,
        }
    }

    /// A text block.
    pub fn text(actor: Actor, content: impl Into<String>) -> Self {
        Block::new(actor, Kind::Text, content)
    }

    /// A tool call by the assistant.
    pub fn tool_use(call_id: impl Into<String>, name: impl Into<String>, input: impl Into<String>) -> Self {
        Block { tool: Some(ToolRef::call(call_id, name)), ..Block::new(Actor::Assistant, Kind::ToolUse, input) }
    }

    /// The result of a tool call.
    pub fn tool_result(call_id: impl Into<String>, output: impl Into<String>, is_error: bool) -> Self {
        Block { tool: Some(ToolRef::result(call_id, is_error)), ..Block::new(Actor::User, Kind::ToolResult, output) }
    }

    /// Sets the three attribution fields.
    pub fn attributed(
        mut self,
        provider: impl Into<String>,
        model_provider: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        self.provider = Some(provider.into());
        self.model_provider = Some(model_provider.into());
        self.model = Some(model.into());
        self
    }

    /// Parses a block from its JSON form; errors name the line and column.
    pub fn from_json(text: &str) -> Result<Self> {
        serde_json::from_str(text).map_err(|e| Error::InvalidInput {
            message: format!("invalid block: {e}"),
            location: crate::error::Location { line: Some(e.line() as u64), ..Default::default() },
        })
    }

    /// Builds a block from a JSON value (the serialized form); an error names the offending field
    /// (`created_at`, `tool.call_id`) when there is one.
    pub fn from_value(value: serde_json::Value) -> Result<Self> {
        serde_path_to_error::deserialize(value).map_err(|e| {
            let field = e.path().to_string();
            let message = format!("invalid block: {}", e.inner());
            if field.is_empty() || field == "." {
                Error::invalid(message)
            } else {
                Error::invalid_field(field, message)
            }
        })
    }

    /// The serialized form as a JSON value.
    pub fn to_value(&self) -> serde_json::Value {
        // A Block holds only strings, numbers, maps and JSON values: serialization cannot fail.
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// `(provider, model_provider, model)`.
    pub fn attribution(&self) -> Attribution {
        Attribution {
            provider: self.provider.clone(),
            model_provider: self.model_provider.clone(),
            model: self.model.clone(),
        }
    }

    /// Embed ids referred to from `content` as `![name](embed://<id>)`, in order of appearance. Only
    /// ids of this block's `embeds` are references; any other such text is plain text (a transcript
    /// may well quote the syntax).
    pub fn embed_references(&self) -> Vec<&str> {
        embed_references(&self.content).into_iter().filter(|id| self.embeds.contains_key(*id)).collect()
    }

    /// Checks the rules every stored block obeys: a `tool_use` has `tool.call_id` and `tool.name`, a
    /// `tool_result` has `tool.call_id`, `tool` appears only on those two kinds, `reasoning` only on
    /// `thinking` (and a Gemini thought signature on `tool_use` or `text`), and embed ids and mime types are well-formed.
    /// Errors name the field.
    pub fn validate(&self) -> Result<()> {
        if self.id.len() > MAX_ID_LEN || self.id.chars().any(char::is_control) {
            return Err(Error::invalid_field("id", format!("block id must be at most {MAX_ID_LEN} bytes without control characters")));
        }
        match (self.kind, &self.tool) {
            (Kind::ToolUse | Kind::ToolResult, None) => {
                return Err(Error::invalid_field("tool.call_id", format!("a {} block needs tool.call_id", self.kind)));
            }
            (Kind::ToolUse | Kind::ToolResult, Some(tool)) => {
                if tool.call_id.is_empty() {
                    return Err(Error::invalid_field("tool.call_id", format!("a {} block needs a non-empty tool.call_id", self.kind)));
                }
                if self.kind == Kind::ToolUse {
                    if tool.name.as_deref().unwrap_or("").is_empty() {
                        return Err(Error::invalid_field("tool.name", "a tool_use block needs tool.name"));
                    }
                    if tool.is_error.is_some() {
                        return Err(Error::invalid_field("tool.is_error", "tool.is_error belongs on a tool_result block, not on tool_use"));
                    }
                }
            }
            (_, Some(_)) => {
                return Err(Error::invalid_field("tool", format!("tool is only allowed on tool_use and tool_result blocks, not on {}", self.kind)));
            }
            (_, None) => {}
        }
        if let Some(reasoning) = &self.reasoning {
            let signed_part = matches!(self.kind, Kind::ToolUse | Kind::Text) && reasoning.format == Reasoning::GOOGLE_THOUGHT_SIGNATURE;
            if self.kind != Kind::Thinking && !signed_part {
                return Err(Error::invalid_field(
                    "reasoning",
                    format!(
                        "reasoning is only allowed on thinking blocks, not on {} (a {} may also sign a tool_use or text block)",
                        self.kind,
                        Reasoning::GOOGLE_THOUGHT_SIGNATURE
                    ),
                ));
            }
            if reasoning.format.is_empty() {
                return Err(Error::invalid_field("reasoning.format", "reasoning.format must not be empty"));
            }
        }
        for (embed_id, embed) in &self.embeds {
            if embed_id.is_empty() || !embed_id.chars().all(is_embed_id_char) {
                return Err(Error::invalid_field(
                    format!("embeds.{embed_id}"),
                    format!("embed id {embed_id:?} must be non-empty and use only letters, digits, '-', '_', '.', ':'"),
                ));
            }
            if embed.mime.is_empty() {
                return Err(Error::invalid_field(format!("embeds.{embed_id}.mime"), "an embed needs a mime type"));
            }
        }
        if let Some(native) = &self.native {
            if native.runtime.is_empty() {
                return Err(Error::invalid_field("native.runtime", "native.runtime must not be empty"));
            }
        }
        Ok(())
    }
}

/// The three-layer attribution of a block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Attribution {
    /// Runtime.
    pub provider: Option<String>,
    /// Model vendor.
    pub model_provider: Option<String>,
    /// Model slug.
    pub model: Option<String>,
}

impl Attribution {
    /// True when none of the three is known.
    pub fn is_empty(&self) -> bool {
        self.provider.is_none() && self.model_provider.is_none() && self.model.is_none()
    }
}

/// One point where `(provider, model_provider, model)` changes, as listed by `Session::switches`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Switch {
    /// The first block with the new attribution.
    pub seq: u64,
    /// Its id.
    pub block_id: String,
    /// The attribution before (None for the first attributed block of the session).
    pub from: Option<Attribution>,
    /// The attribution from here on.
    pub to: Attribution,
}

/// Longest block id accepted.
pub const MAX_ID_LEN: usize = 512;

const EMBED_SCHEME: &str = "](embed://";

/// True for characters allowed in an embed id.
pub(crate) fn is_embed_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':')
}

/// Finds `![…](embed://<id>)` references in text.
pub fn embed_references(content: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = content;
    while let Some(pos) = rest.find(EMBED_SCHEME) {
        let before = &rest[..pos];
        let after = &rest[pos + EMBED_SCHEME.len()..];
        rest = after;
        // The link text must be an image link `![…]` opened on the same line.
        let Some(open) = before.rfind("![") else { continue };
        if before[open..].contains('\n') || before[open + 2..].contains(']') {
            continue;
        }
        let len = after.find(|c: char| !is_embed_id_char(c)).unwrap_or(after.len());
        if len > 0 && after[len..].starts_with(')') {
            out.push(&after[..len]);
        }
    }
    out
}

/// A piece of a block's content, cut at its embed links.
pub enum Piece<'a> {
    /// Text between links.
    Text(&'a str),
    /// An embed a link names: its id and description.
    Embed(&'a str, &'a Embed),
}

/// The block's content cut at its embed links (`![label](embed://<id>)` of an embed it holds):
/// the text between them (blank text before a link left out) and the embeds, in order, then the
/// text after the last link when it is not blank or nothing came before it. What every writer that
/// puts text and media side by side starts from.
pub fn content_pieces(block: &Block) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    let mut rest = block.content.as_str();
    for id in block.embed_references() {
        let link_end = format!("](embed://{id})");
        let Some(pos) = rest.find(&link_end) else { continue };
        let Some(open) = rest[..pos].rfind("![") else { continue };
        let Some((id, embed)) = block.embeds.get_key_value(id) else { continue };
        let before = &rest[..open];
        if !before.trim().is_empty() {
            pieces.push(Piece::Text(before));
        }
        rest = &rest[pos + link_end.len()..];
        pieces.push(Piece::Embed(id, embed));
    }
    if !rest.trim().is_empty() || pieces.is_empty() {
        pieces.push(Piece::Text(rest));
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_embed_references() {
        let text = "see ![shot](embed://img-1) and ![](embed://b.2) but not [x](embed://c) nor ![y](embed://bad id)";
        assert_eq!(embed_references(text), vec!["img-1", "b.2"]);
    }

    #[test]
    fn runtime_round_trips() {
        for rt in Runtime::ALL {
            assert_eq!(rt.as_str().parse::<Runtime>().unwrap(), *rt);
        }
        let err = "claude".parse::<Runtime>().unwrap_err();
        assert_eq!(err.code(), "INVALID_INPUT");
        assert!(err.to_string().contains("\"claude\""), "{err}");
    }

    #[test]
    fn timestamps_serialize_as_rfc3339_millis() {
        let ts = Timestamp::from_millis(1_764_705_124_123).unwrap();
        assert_eq!(serde_json::to_string(&ts).unwrap(), "\"2025-12-02T19:52:04.123Z\"");
        let back: Timestamp = serde_json::from_str("\"2025-12-02T20:52:04.123+01:00\"").unwrap();
        assert_eq!(back, ts);
        let from_int: Timestamp = serde_json::from_str("1764705124123").unwrap();
        assert_eq!(from_int, ts);
    }

    #[test]
    fn unknown_actor_is_named() {
        let err = Block::from_json(r#"{"actor":"bot","kind":"text"}"#).unwrap_err();
        assert_eq!(err.code(), "INVALID_INPUT");
        assert!(err.to_string().contains("unknown actor \"bot\""), "{err}");
    }
}
