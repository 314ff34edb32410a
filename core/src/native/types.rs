//! The values the conversion calls take and return: options, sources, exports, resume plans and
//! what an import of a file did. Core parses the options the bindings pass as JSON, so every
//! language accepts the same keys and gives the same errors.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::json::{null_is_default, options, own_error, unknown_option};
use crate::model::{CompactionMode, Format, Runtime};
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

impl ForeignReasoning {
    /// Every choice.
    pub const ALL: &'static [ForeignReasoning] = &[ForeignReasoning::Drop, ForeignReasoning::Text];

    /// The choice's name as serialized: `drop` or `text`.
    pub fn as_str(self) -> &'static str {
        match self {
            ForeignReasoning::Drop => "drop",
            ForeignReasoning::Text => "text",
        }
    }
}

/// Options of the conversion calls. Every field is optional; unknown keys are refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// The native format; `None` is the runtime's default (the first of [`Runtime::formats`]).
    pub format: Option<String>,
    /// Turn any loss (a drop, degradation, synthesized block or remap) into a `LOSSY` error, and on
    /// import any malformed record into an `INVALID_INPUT` error.
    #[serde(deserialize_with = "null_is_default")]
    pub strict: bool,
    /// The model the target runtime will resume with; opaque reasoning travels only where its scope matches.
    pub target_model: Option<String>,
    /// What to do with reasoning from another scope.
    #[serde(deserialize_with = "null_is_default")]
    pub foreign_reasoning: ForeignReasoning,
    /// The model provider to name in the native files (for instance Codex's `session_meta.model_provider`).
    pub model_provider: Option<String>,
    /// On import: the id of the session to create (default: the native session id, else a new UUIDv7);
    /// for an `opencode.db` source, which of its sessions to read.
    pub session_id: Option<String>,
    /// On export: replace secrets (API keys, tokens, private keys, passwords) by
    /// `[REDACTED:<kind>]` wherever text appears, each block changed a report entry
    /// ([`crate::redact`]).
    #[serde(deserialize_with = "null_is_default")]
    pub redact: bool,
    /// On import: the longest record (one JSONL line) read, in bytes; `None` is
    /// [`crate::native::MAX_RECORD_BYTES`] (256 MiB). A longer line is refused with its line number.
    pub max_record_bytes: Option<u64>,
    /// On export and resume into another runtime: which compaction the replay honours —
    /// `latest` (the default: the latest compaction's summary, its preserved blocks, then every
    /// later block, as the runtime that compacted sends) or `none` (the whole history).
    #[serde(deserialize_with = "null_is_default")]
    pub compaction: CompactionMode,
    /// On export and resume: the target's context window in tokens. A replay rebuilt from
    /// canonical blocks is bounded by it less a reserve for the target's own system prompt, tools
    /// and answer, folding its oldest whole turns into one summary when it does not fit. `None`:
    /// the target model's window from the model table (`models.json`, overridden by `models`)
    /// when the replay is rebuilt for another runtime and the model is known; otherwise no bound.
    #[serde(deserialize_with = "tokens_above_zero")]
    pub context_window: Option<u64>,
    /// A model file read over the shipped table (default: `$XDG_CONFIG_HOME/sna/models.json`
    /// when it exists).
    pub models: Option<String>,
    /// Writes the summary of turns folded to fit the budget, instead of the digest. Not
    /// serialized: given in code.
    #[serde(skip)]
    pub summarizer: Option<crate::replay::budget::Summarizer>,
}

/// `context_window`: a number of tokens above 0, or none.
fn tokens_above_zero<'de, D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Option<u64>, D::Error> {
    match Option::<u64>::deserialize(deserializer)? {
        Some(0) => Err(own_error("context_window is a number of tokens above 0")),
        tokens => Ok(tokens),
    }
}

impl Options {
    /// Options from a JSON object (the bindings pass keyword arguments this way). Unknown keys and
    /// wrong types are `INVALID_INPUT` naming the key.
    pub fn from_value(value: Value) -> Result<Options> {
        options(value, Options::KEYS)
    }

    /// The option names [`Options::from_value`] accepts.
    pub const KEYS: &'static [&'static str] =
        &["format", "strict", "target_model", "foreign_reasoning", "model_provider", "session_id", "redact", "max_record_bytes", "compaction", "context_window", "models"];

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
    /// What the caller should know about this resume (Gemini CLI: which route was taken and why,
    /// and what its session cleanup would do).
    #[serde(default)]
    pub notes: Vec<String>,
    /// What shaped the replay written: the compaction it starts at, the turns folded to fit.
    #[serde(default)]
    pub replay: ReplayShape,
}

/// What shaped a replay rebuilt from canonical blocks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayShape {
    /// The first stored block the replay carries as it is (after what stands in for older ones).
    pub from_seq: u64,
    /// The boundary of the compaction the replay starts at, when one does.
    #[serde(default)]
    pub compaction_seq: Option<u64>,
    /// The first and last seqs of the blocks folded into one summary to fit the target's window.
    #[serde(default)]
    pub folded: Option<(u64, u64)>,
}

/// A command `prepare_resume` ran and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandOutcome {
    /// The command, program first.
    pub argv: Vec<String>,
    /// Its exit code (`None` when a signal ended it).
    pub status: Option<i32>,
    /// What it printed on stdout.
    pub stdout: String,
    /// What it printed on stderr.
    pub stderr: String,
}

/// What [`Store::import_source`](crate::Store::import_source) did with a file.
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

/// A file's session and what [`Store::import_source`](crate::Store::import_source) did.
#[derive(Debug, Clone)]
pub struct SourceImport {
    pub session: Session,
    pub outcome: SourceOutcome,
    /// How many blocks this import stored (all of the session's for a new or fresh import).
    pub blocks_added: u64,
    /// What this import kept but could not read ([`Session::import_report`] of the blocks it
    /// stored; empty when it stored none).
    pub report: crate::report::Report,
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
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ResumeOptions {
    /// The user's home directory: Claude Code's files go under `<home>/.claude`, Codex's under
    /// `<home>/.codex`, OpenCode's document under `<home>/.local/share/sna-history/opencode` (and
    /// `opencode import` runs with `HOME` set to it), Gemini CLI's log under `<home>/.gemini` (or
    /// `<home>/.local/share/sna-history/gemini-cli`), Pi's file under `<home>/.pi/agent`. Default:
    /// `$HOME`.
    pub home: Option<PathBuf>,
    /// The working directory the resumed runtime runs in. Default: the session's `cwd`.
    pub cwd: Option<PathBuf>,
    /// Claude Code: the config dir to write under instead of `<home>/.claude` (what
    /// `CLAUDE_CONFIG_DIR` names). Pi: the agent directory instead of `<home>/.pi/agent` (what
    /// `PI_CODING_AGENT_DIR` names).
    pub config_dir: Option<PathBuf>,
    /// Codex: the Codex home to write under instead of `<home>/.codex` (what `CODEX_HOME` names).
    pub codex_home: Option<PathBuf>,
    /// OpenCode: run `opencode import` of the written document (in `cwd`, with `HOME` set to `home`
    /// when given) instead of leaving it to the caller.
    #[serde(deserialize_with = "null_is_default")]
    pub run_import: bool,
    /// OpenCode: the `opencode` program to name in the commands and to run (default: `opencode` on `PATH`).
    pub opencode_bin: Option<PathBuf>,
    /// Conversion options (given beside the others: their keys are [`Options::KEYS`]).
    #[serde(skip)]
    pub options: Options,
}

impl ResumeOptions {
    /// The option names [`ResumeOptions::from_value`] accepts besides [`Options::KEYS`].
    pub const KEYS: &'static [&'static str] = &["home", "cwd", "config_dir", "codex_home", "run_import", "opencode_bin"];

    /// Resume options from a JSON object: the keys of [`ResumeOptions::KEYS`] (paths as strings,
    /// `run_import` a boolean) and of [`Options::KEYS`]. Unknown keys and wrong types are
    /// `INVALID_INPUT` naming the key.
    pub fn from_value(value: Value) -> Result<ResumeOptions> {
        let Value::Object(map) = value else { return options(value, &[]) };
        let (conversion, own): (serde_json::Map<String, Value>, serde_json::Map<String, Value>) =
            map.into_iter().partition(|(key, _)| Options::KEYS.contains(&key.as_str()));
        if let Some(key) = own.keys().find(|key| !ResumeOptions::KEYS.contains(&key.as_str())) {
            return Err(unknown_option(key, &[ResumeOptions::KEYS, Options::KEYS].concat()));
        }
        let mut resume: ResumeOptions = options(Value::Object(own), ResumeOptions::KEYS)?;
        resume.options = Options::from_value(Value::Object(conversion))?;
        Ok(resume)
    }
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

    #[test]
    fn resume_options_take_their_keys_and_the_conversion_keys() {
        let options = ResumeOptions::from_value(json!({
            "home": "/home/dev", "cwd": "/home/dev/project", "run_import": true, "opencode_bin": "/opt/opencode",
            "strict": true, "session_id": "ses_1", "config_dir": null
        }))
        .unwrap();
        assert_eq!(options.home.as_deref(), Some(std::path::Path::new("/home/dev")));
        assert_eq!(options.cwd.as_deref(), Some(std::path::Path::new("/home/dev/project")));
        assert!(options.run_import);
        assert_eq!(options.config_dir, None);
        assert!(options.options.strict);
        assert_eq!(options.options.session_id.as_deref(), Some("ses_1"));
        let err = ResumeOptions::from_value(json!({"colour": 1})).unwrap_err();
        assert_eq!(err.location().unwrap().field.as_deref(), Some("colour"));
        assert!(err.to_string().contains("unknown option \"colour\" (expected one of: home, cwd, config_dir, codex_home, run_import, opencode_bin, format, strict"), "{err}");
        let err = ResumeOptions::from_value(json!({"home": 7})).unwrap_err();
        assert!(err.to_string().contains("bad value for option \"home\""), "{err}");
        let err = ResumeOptions::from_value(json!({"run_import": "yes"})).unwrap_err();
        assert_eq!(err.location().unwrap().field.as_deref(), Some("run_import"));
        assert!(ResumeOptions::from_value(Value::Null).unwrap().home.is_none());
    }

    #[test]
    fn enum_names_are_their_serialized_names() {
        for reasoning in ForeignReasoning::ALL {
            assert_eq!(serde_json::to_value(reasoning).unwrap(), reasoning.as_str());
        }
        for outcome in [SourceOutcome::Imported, SourceOutcome::Unchanged, SourceOutcome::Appended(2), SourceOutcome::Replaced] {
            assert_eq!(serde_json::to_value(outcome).unwrap()["outcome"], outcome.as_str());
        }
        for action in crate::report::ReportAction::ALL {
            assert_eq!(serde_json::to_value(action).unwrap(), action.as_str());
        }
    }

    #[test]
    fn field_names_come_from_the_types() {
        use crate::json::field_names;
        use crate::model::{Block, Embed, Native, Reasoning, Scope, ToolRef};
        assert_eq!(field_names::<ToolRef>(), ["call_id", "name", "is_error"]);
        assert_eq!(field_names::<Scope>(), ["provider", "model_provider", "model"]);
        assert_eq!(field_names::<Reasoning>(), ["format", "data", "scope"]);
        assert_eq!(field_names::<Native>(), ["runtime", "data"]);
        assert!(field_names::<Embed>().contains(&"sha256"));
        let block = field_names::<Block>();
        for name in ["id", "created_at", "message_id", "turn_id", "model_provider", "native", "embeds"] {
            assert!(block.contains(&name), "{name} missing from {block:?}");
        }
        assert_eq!(field_names::<Options>(), Options::KEYS, "the parser's keys are the type's");
    }
}
