//! The runtimes sna-history converts to and from, and the native formats each one has.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Result};

/// A coding-agent runtime whose native history sna-history reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Runtime {
    /// Anthropic's Claude Code (`claude`).
    ClaudeCode,
    /// OpenAI's Codex CLI (`codex`).
    Codex,
    /// OpenCode (`opencode`).
    OpenCode,
    /// Google's Gemini CLI (`gemini`).
    GeminiCli,
    /// Pi, the coding agent of `@mariozechner/pi-coding-agent` (`pi`).
    Pi,
    /// Qwen Code (`qwen`).
    QwenCode,
    /// GitHub Copilot CLI (`copilot`).
    CopilotCli,
}

impl Runtime {
    /// Every runtime.
    pub const ALL: &'static [Runtime] = &[Runtime::ClaudeCode, Runtime::Codex, Runtime::OpenCode, Runtime::GeminiCli, Runtime::Pi, Runtime::QwenCode, Runtime::CopilotCli];

    /// The runtime's name as used in every API: `claude-code`, `codex`, `opencode`, `gemini-cli`,
    /// `pi`, `qwen-code`, `copilot-cli`.
    pub fn as_str(self) -> &'static str {
        match self {
            Runtime::ClaudeCode => "claude-code",
            Runtime::Codex => "codex",
            Runtime::OpenCode => "opencode",
            Runtime::GeminiCli => "gemini-cli",
            Runtime::Pi => "pi",
            Runtime::QwenCode => "qwen-code",
            Runtime::CopilotCli => "copilot-cli",
        }
    }

    /// The native formats `to_native` can produce for this runtime; the first is the default.
    pub fn formats(self) -> &'static [Format] {
        match self {
            Runtime::ClaudeCode => &[Format::Transcript, Format::Messages],
            Runtime::Codex => &[Format::Items, Format::Rollout],
            Runtime::OpenCode => &[Format::Session, Format::Prelude],
            Runtime::GeminiCli => &[Format::Log, Format::Contents],
            Runtime::Pi => &[Format::Entries],
            Runtime::QwenCode => &[Format::Chat],
            Runtime::CopilotCli => &[Format::Events],
        }
    }

    /// The runtime's name for people: `Claude Code`, `Codex`, `OpenCode`, `Gemini CLI`, `Pi`,
    /// `Qwen Code`, `Copilot CLI`.
    pub fn display_name(self) -> &'static str {
        match self {
            Runtime::ClaudeCode => "Claude Code",
            Runtime::Codex => "Codex",
            Runtime::OpenCode => "OpenCode",
            Runtime::GeminiCli => "Gemini CLI",
            Runtime::Pi => "Pi",
            Runtime::QwenCode => "Qwen Code",
            Runtime::CopilotCli => "Copilot CLI",
        }
    }
}

/// A native format: what `to_native` writes for a runtime, and how it is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// Claude Code's session transcript: one record per line.
    Transcript,
    /// The Anthropic Messages API body a Claude Code resume sends (`system`, `messages`).
    Messages,
    /// The `ResponseItem`s a Codex resume sends the model.
    Items,
    /// A Codex rollout file: one line per record.
    Rollout,
    /// An OpenCode session document, as `opencode export` prints and `opencode import` reads.
    Session,
    /// The conversation as the text of a first prompt (OpenCode, when an import is not possible).
    Prelude,
    /// A Gemini CLI session file: its JSONL append log (`~/.gemini/tmp/<project>/chats/`).
    Log,
    /// The Gemini API `contents` a Gemini CLI resume sends the model.
    Contents,
    /// A Pi session file: its tree of entries, one per line (`~/.pi/agent/sessions/`).
    Entries,
    /// A Qwen Code chat file: its chain of records, one per line (`~/.qwen/projects/<cwd>/chats/`).
    Chat,
    /// A Copilot CLI session log: its events, one per line (`~/.copilot/session-state/<id>/events.jsonl`).
    Events,
}

/// How a format is written to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// A list of records, one JSON text per line.
    Jsonl,
    /// One JSON document.
    Json,
    /// Plain text.
    Text,
}

impl Format {
    /// Every format, runtime by runtime (each runtime's default first).
    pub const ALL: &'static [Format] =
        &[Format::Transcript, Format::Messages, Format::Items, Format::Rollout, Format::Session, Format::Prelude, Format::Log, Format::Contents, Format::Entries, Format::Chat, Format::Events];

    /// The format's name as used in every API: `transcript`, `messages`, `items`, `rollout`,
    /// `session`, `prelude`, `log`, `contents`, `entries`, `chat`, `events`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Transcript => "transcript",
            Format::Messages => "messages",
            Format::Items => "items",
            Format::Rollout => "rollout",
            Format::Session => "session",
            Format::Prelude => "prelude",
            Format::Log => "log",
            Format::Contents => "contents",
            Format::Entries => "entries",
            Format::Chat => "chat",
            Format::Events => "events",
        }
    }

    /// The runtime the format belongs to.
    pub fn runtime(self) -> Runtime {
        match self {
            Format::Transcript | Format::Messages => Runtime::ClaudeCode,
            Format::Items | Format::Rollout => Runtime::Codex,
            Format::Session | Format::Prelude => Runtime::OpenCode,
            Format::Log | Format::Contents => Runtime::GeminiCli,
            Format::Entries => Runtime::Pi,
            Format::Chat => Runtime::QwenCode,
            Format::Events => Runtime::CopilotCli,
        }
    }

    /// How the format is written to a file.
    pub fn encoding(self) -> Encoding {
        match self {
            Format::Transcript | Format::Rollout | Format::Log | Format::Entries | Format::Chat | Format::Events => Encoding::Jsonl,
            Format::Messages | Format::Items | Format::Session | Format::Contents => Encoding::Json,
            Format::Prelude => Encoding::Text,
        }
    }

    /// Native data of this format (what `to_native` returns) as the text of a file, in the format's
    /// encoding: one record per line, an indented document, or the text itself.
    pub fn to_text(self, data: &serde_json::Value) -> Result<String> {
        match (self.encoding(), data) {
            (Encoding::Jsonl, serde_json::Value::Array(records)) => crate::json::jsonl_text(records),
            (_, serde_json::Value::String(text)) => Ok(text.clone()),
            _ => serde_json::to_string_pretty(data)
                .map(|text| text + "\n")
                .map_err(|e| Error::Internal(format!("cannot write {self}: {e}"))),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Runtime {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "claude-code" => Ok(Runtime::ClaudeCode),
            "codex" => Ok(Runtime::Codex),
            "opencode" => Ok(Runtime::OpenCode),
            "gemini-cli" => Ok(Runtime::GeminiCli),
            "pi" => Ok(Runtime::Pi),
            "qwen-code" => Ok(Runtime::QwenCode),
            "copilot-cli" => Ok(Runtime::CopilotCli),
            other => Err(Error::invalid(format!(
                "unknown runtime {other:?} (expected one of: {})",
                Runtime::ALL.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ")
            ))),
        }
    }
}

impl Serialize for Runtime {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Runtime {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}
