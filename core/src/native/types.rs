//! The values the conversion calls take and return: options, sources, exports, resume plans and
//! what an import of a file did. Core parses the options the bindings pass as JSON, so every
//! language accepts the same keys and gives the same errors.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::json::json_type;
use crate::model::{Format, Runtime};
use crate::report::Report;
use crate::store::Session;

/// What to do with opaque reasoning whose scope does not match the target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForeignReasoning {
    /// Leave it out (the report says so). The default.
    #[default]
    Drop,
    /// Render its readable text as plain text.
    Text,
}

/// Options of the conversion calls. Every field is optional; unknown keys are refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// The native format; `None` is the runtime's default (the first of [`Runtime::formats`]).
    pub format: Option<String>,
    /// Turn any loss (a drop, degradation, synthesized block or remap) into a `LOSSY` error, and on
    /// import any malformed record into an `INVALID_INPUT` error.
    pub strict: bool,
    /// The model the target runtime will resume with; opaque reasoning travels only where its scope matches.
    pub target_model: Option<String>,
    /// What to do with reasoning from another scope.
    pub foreign_reasoning: ForeignReasoning,
    /// The model provider to name in the native files (for instance Codex's `session_meta.model_provider`).
    pub model_provider: Option<String>,
    /// On import: the id of the session to create (default: the native session id, else a new UUIDv7);
    /// for an `opencode.db` source, which of its sessions to read.
    pub session_id: Option<String>,
}

impl Options {
    /// Options from a JSON object (the bindings pass keyword arguments this way). Unknown keys and
    /// wrong types are `INVALID_INPUT` naming the key.
    pub fn from_value(value: Value) -> Result<Options> {
        let map = match value {
            Value::Null => return Ok(Options::default()),
            Value::Object(map) => map,
            other => return Err(Error::invalid(format!("options must be an object, not {}", json_type(&other)))),
        };
        let mut options = Options::default();
        for (key, value) in map {
            match key.as_str() {
                "format" => options.format = option_field(&key, value)?,
                "strict" => options.strict = option_field::<Option<bool>>(&key, value)?.unwrap_or(false),
                "target_model" => options.target_model = option_field(&key, value)?,
                "foreign_reasoning" => {
                    options.foreign_reasoning = option_field::<Option<ForeignReasoning>>(&key, value)?.unwrap_or_default()
                }
                "model_provider" => options.model_provider = option_field(&key, value)?,
                "session_id" => options.session_id = option_field(&key, value)?,
                _ => {
                    return Err(Error::invalid_field(
                        key.as_str(),
                        format!("unknown option {key:?} (expected one of: {})", Options::KEYS.join(", ")),
                    ))
                }
            }
        }
        Ok(options)
    }

    /// The option names [`Options::from_value`] accepts.
    pub const KEYS: &'static [&'static str] =
        &["format", "strict", "target_model", "foreign_reasoning", "model_provider", "session_id"];

    /// The format these options name for `runtime`, checked against [`Runtime::formats`].
    pub fn format_for(&self, runtime: Runtime) -> Result<Format> {
        let formats = runtime.formats();
        match &self.format {
            None => Ok(formats[0]),
            Some(name) => formats.iter().copied().find(|f| f.as_str() == name).ok_or_else(|| {
                let names: Vec<&str> = formats.iter().map(|f| f.as_str()).collect();
                Error::invalid_field(
                    "format",
                    format!("unknown format {name:?} for {runtime} (expected one of: {})", names.join(", ")),
                )
            }),
        }
    }
}

/// The result of [`Session::export`]: the native data and its fidelity report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Export {
    /// The native data: a list of records, an object, or text, depending on the format.
    pub data: Value,
    /// What the conversion lost, altered or added.
    pub report: Report,
}

/// Native input to an import.
#[derive(Debug, Clone)]
pub enum Source {
    /// Native text (JSONL, a JSON document).
    Text(String),
    /// Native bytes, UTF-8 expected.
    Bytes(Vec<u8>),
    /// Already parsed native data (a list of records or items, a session document).
    Value(Value),
    /// A file to read.
    Path(PathBuf),
}

/// What [`Session::prepare_resume`] did and how to resume.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResumePlan {
    /// The runtime's own id of the session to resume.
    pub session_id: String,
    /// The files written.
    pub files: Vec<PathBuf>,
    /// The command to run, program first.
    pub argv: Vec<String>,
    /// The directory to run it in.
    pub cwd: Option<PathBuf>,
    /// Environment variables the command needs (for instance `CLAUDE_CONFIG_DIR` when the files were
    /// written under a config dir of the caller's choosing).
    pub env: std::collections::BTreeMap<String, String>,
    /// Commands to run first, in order, in `cwd` with `env` (OpenCode: `opencode import <file>`);
    /// empty when none is needed or they already ran (`ran`).
    pub setup: Vec<Vec<String>>,
    /// Commands `prepare_resume` ran itself (OpenCode with `run_import`), with their outcome.
    pub ran: Vec<CommandOutcome>,
}

/// A command `prepare_resume` ran and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandOutcome {
    /// The command, program first.
    pub argv: Vec<String>,
    /// Its exit code (`None` when a signal ended it).
    pub status: Option<i32>,
    /// What it printed.
    pub stdout: String,
    pub stderr: String,
}

/// What [`Store::import_source`] did with a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome", content = "blocks")]
pub enum SourceOutcome {
    /// Imported as a new session.
    Imported,
    /// The file is as it was when it was imported: nothing done.
    Unchanged,
    /// The file grew: the blocks of its new lines (this many) were appended to its session.
    Appended(u64),
    /// The file changed otherwise: its session was imported afresh under the same id.
    Replaced,
}

/// A file's session and what [`Store::import_source`] did.
#[derive(Debug, Clone)]
pub struct SourceImport {
    pub session: Session,
    pub outcome: SourceOutcome,
    /// How many blocks this import stored (all of the session's for a new or fresh import).
    pub blocks_added: u64,
}

impl SourceOutcome {
    /// The outcome's name: `imported`, `unchanged`, `appended` or `replaced`.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceOutcome::Imported => "imported",
            SourceOutcome::Unchanged => "unchanged",
            SourceOutcome::Appended(_) => "appended",
            SourceOutcome::Replaced => "replaced",
        }
    }
}

/// Where [`Session::prepare_resume`] writes.
#[derive(Debug, Clone, Default)]
pub struct ResumeOptions {
    /// The user's home directory under which the runtime keeps its data (`~/.claude`, `~/.codex`,
    /// OpenCode's data dir). Default: `$HOME`.
    pub home: Option<PathBuf>,
    /// The working directory the resumed runtime runs in. Default: the session's `cwd`.
    pub cwd: Option<PathBuf>,
    /// Claude Code: the config dir to write under instead of `<home>/.claude` (what
    /// `CLAUDE_CONFIG_DIR` names).
    pub config_dir: Option<PathBuf>,
    /// Codex: the Codex home to write under instead of `<home>/.codex` (what `CODEX_HOME` names).
    pub codex_home: Option<PathBuf>,
    /// OpenCode: run `opencode import` of the written document (in `cwd`, with `HOME` set to `home`
    /// when given) instead of leaving it to the caller.
    pub run_import: bool,
    /// OpenCode: the `opencode` program to name in the commands and to run (default: `opencode` on `PATH`).
    pub opencode_bin: Option<PathBuf>,
    /// Conversion options.
    pub options: Options,
}

fn option_field<T: serde::de::DeserializeOwned>(key: &str, value: Value) -> Result<T> {
    serde_json::from_value(value).map_err(|e| Error::invalid_field(key, format!("bad value for option {key:?}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn options_refuse_unknown_keys_and_wrong_types() {
        let err = Options::from_value(json!({"fromat": "items"})).unwrap_err();
        assert_eq!(err.code(), "INVALID_INPUT");
        assert!(err.to_string().contains("unknown option \"fromat\""), "{err}");
        assert_eq!(err.location().unwrap().field.as_deref(), Some("fromat"));
        let err = Options::from_value(json!({"strict": "yes"})).unwrap_err();
        assert!(err.to_string().contains("option \"strict\": invalid type"), "{err}");
        let err = Options::from_value(json!(["strict"])).unwrap_err();
        assert!(err.to_string().contains("an array"), "{err}");
        let options = Options::from_value(json!({"strict": true, "foreign_reasoning": "text"})).unwrap();
        assert!(options.strict);
        assert_eq!(options.foreign_reasoning, ForeignReasoning::Text);
    }

    #[test]
    fn formats_are_checked_per_runtime() {
        let options = Options { format: Some("rollout".into()), ..Options::default() };
        assert_eq!(options.format_for(Runtime::Codex).unwrap(), Format::Rollout);
        let err = options.format_for(Runtime::ClaudeCode).unwrap_err();
        assert!(err.to_string().contains("transcript, messages"), "{err}");
        assert_eq!(Options::default().format_for(Runtime::OpenCode).unwrap(), Format::Session);
    }
}
