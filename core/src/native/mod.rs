//! Conversion between canonical blocks and each runtime's native shape.
//!
//! The entry points are declared here with their final signatures, so that every language binds the
//! same surface: [`Session::to_native`], [`Session::export`], [`Store::import_native`],
//! [`Store::import_file`], [`Session::ingest`] and [`Session::prepare_resume`]. The per-runtime adapters
//! fill them in; until a runtime has one, its calls fail with `UNSUPPORTED` (after the runtime, the
//! format and the options have been checked, so that a caller's mistakes are reported as such).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::{Block, Runtime};
use crate::store::{ImportTarget, Session, Store};

/// A JSON object from owned values, in the order given. Unlike `json!`, which serializes (deep
/// copies) every interpolated value, this moves them.
macro_rules! obj {
    ($($key:literal => $value:expr),* $(,)?) => {{
        let mut map = serde_json::Map::new();
        $( map.insert($key.to_string(), serde_json::Value::from($value)); )*
        serde_json::Value::Object(map)
    }};
}

pub mod claude_code;
pub mod codex;
pub(crate) mod common;
pub(crate) mod jsonl;
pub mod opencode;

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
    pub fn format_for(&self, runtime: Runtime) -> Result<&'static str> {
        let formats = runtime.formats();
        match &self.format {
            None => Ok(formats[0]),
            Some(name) => formats.iter().copied().find(|f| f == name).ok_or_else(|| {
                Error::invalid_field(
                    "format",
                    format!("unknown format {name:?} for {runtime} (expected one of: {})", formats.join(", ")),
                )
            }),
        }
    }
}

/// One entry of a fidelity report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportEntry {
    /// What happened.
    pub action: ReportAction,
    /// The block it concerns, if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_id: Option<String>,
    /// A readable explanation.
    pub message: String,
}

/// The kinds of fidelity loss a conversion can report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportAction {
    /// Left out of the output.
    Dropped,
    /// Carried in a weaker form (for instance an image as a text placeholder).
    Degraded,
    /// Added by the conversion (for instance an error result for an unanswered tool call).
    Synthesized,
    /// An id changed to meet the target's constraints.
    Remapped,
    /// On import: a malformed native record kept as an `error` block.
    Malformed,
}

/// What a conversion lost, altered or added.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// The entries, in the order of the blocks they concern.
    pub entries: Vec<ReportEntry>,
}

impl Report {
    /// True when nothing was lost, altered or added.
    pub fn is_lossless(&self) -> bool {
        self.entries.is_empty()
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

pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// In strict mode any report entry is a `LOSSY` error.
pub(crate) fn check_strict(options: &Options, entries: &[ReportEntry]) -> Result<()> {
    if options.strict {
        if let Some(first) = entries.first() {
            let block = first.block_id.as_deref().map(|id| format!(" (block {id})")).unwrap_or_default();
            return Err(Error::Lossy(format!(
                "{} conversion loss{}: {}{block}",
                entries.len(),
                if entries.len() == 1 { "" } else { "es" },
                first.message
            )));
        }
    }
    Ok(())
}

/// `$HOME`.
pub(crate) fn home_dir() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| Error::invalid_field("home", "no home directory given and $HOME is not set"))
}

/// Writes a file readable only by its owner, atomically (a temporary file renamed into place),
/// creating the parent directories.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |what: &str, source: std::io::Error| Error::Io { context: format!("cannot {what} {}", path.display()), source };
    let dir = path.parent().ok_or_else(|| Error::invalid(format!("{} has no parent directory", path.display())))?;
    std::fs::create_dir_all(dir).map_err(|e| io("create the directory of", e))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("sna"),
        std::process::id()
    ));
    {
        use std::io::Write;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&tmp).map_err(|e| io("write", e))?;
        file.write_all(bytes).map_err(|e| io("write", e))?;
        file.sync_all().map_err(|e| io("write", e))?;
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io("write", e)
    })
}

impl Session {
    /// The session in `runtime`'s native shape (`options.format`, else the runtime's default).
    pub fn to_native(&self, runtime: Runtime, options: &Options) -> Result<Value> {
        Ok(self.export(runtime, options)?.data)
    }

    /// Like [`Session::to_native`], with the fidelity report. With `options.strict`, any loss is a
    /// `LOSSY` error instead.
    pub fn export(&self, runtime: Runtime, options: &Options) -> Result<Export> {
        let format = options.format_for(runtime)?;
        match runtime {
            Runtime::ClaudeCode => {
                let (mut blocks, replayed) = crate::replay::load(self, runtime)?;
                let ctx = claude_code::Context::for_session(self, &blocks)?;
                let (records, mut entries) = claude_code::transcript(self, &mut blocks, options, &ctx)?;
                entries.splice(0..0, replayed);
                let data = if format == "messages" {
                    claude_code::messages(records, options, &mut entries)
                } else {
                    Value::Array(records.into_iter().map(|r| r.value).collect())
                };
                check_strict(options, &entries)?;
                Ok(Export { data, report: Report { entries } })
            }
            Runtime::Codex => {
                let (data, entries) = codex::export(self, options, format)?;
                check_strict(options, &entries)?;
                Ok(Export { data, report: Report { entries } })
            }
            Runtime::OpenCode => {
                let (data, entries) = opencode::export(self, options, format)?;
                check_strict(options, &entries)?;
                Ok(Export { data, report: Report { entries } })
            }
        }
    }

    /// Appends the blocks a live event of `runtime` completes; returns them (often none, while deltas
    /// accumulate).
    pub fn ingest(&self, runtime: Runtime, event: &Value) -> Result<Vec<Block>> {
        if !event.is_object() {
            return Err(Error::invalid(format!("an event must be an object, not {}", json_type(event))));
        }
        match runtime {
            Runtime::ClaudeCode => {
                let blocks = claude_code::event_blocks(event)?;
                self.extend(blocks)
            }
            Runtime::Codex => {
                let blocks = codex::event_blocks(event)?;
                self.extend(blocks)
            }
            Runtime::OpenCode => {
                let blocks = opencode::event_blocks(self, event)?;
                self.extend(blocks)
            }
        }
    }

    /// Writes the native files `runtime` needs to resume this session and returns how to run it.
    /// Records a binding of the written native session through the last block.
    pub fn prepare_resume(&self, runtime: Runtime, options: &ResumeOptions) -> Result<ResumePlan> {
        options.options.format_for(runtime)?;
        match runtime {
            Runtime::ClaudeCode => claude_code::prepare_resume(self, options),
            Runtime::Codex => codex::prepare_resume(self, options),
            Runtime::OpenCode => opencode::prepare_resume(self, options),
        }
    }

    /// What an import kept but could not read: one `malformed` entry per native line stored as an
    /// `error` block, naming the line and the reason, and one `degraded` entry per line whose text
    /// had to be repaired to be read (lone UTF-16 surrogates read as U+FFFD).
    pub fn import_report(&self) -> Result<Report> {
        let mut entries = Vec::new();
        // Only error blocks and blocks whose native text names `sanitized` can hold an entry.
        let candidates = self.blocks_where(0, u64::MAX, "kind = 'error' OR instr(native, '\"sanitized\"') > 0")?;
        for block in candidates {
            let Some(native) = &block.native else { continue };
            if let Some(line) = native.data.get("sanitized").and_then(|s| s.get("line")).and_then(Value::as_u64) {
                entries.push(ReportEntry {
                    action: ReportAction::Degraded,
                    block_id: Some(block.id.clone()),
                    message: format!("{} line {line}: lone UTF-16 surrogates read as U+FFFD", native.runtime),
                });
            }
            if block.kind != crate::model::Kind::Error {
                continue;
            }
            let Some(info) = native.data.get("malformed") else { continue };
            let line = info.get("line").and_then(Value::as_u64).unwrap_or(0);
            let reason = info.get("reason").and_then(Value::as_str).unwrap_or("malformed");
            entries.push(ReportEntry {
                action: ReportAction::Malformed,
                block_id: Some(block.id.clone()),
                message: format!("{} line {line}: {reason}", native.runtime),
            });
        }
        Ok(Report { entries })
    }
}

/// The runtime whose history a file holds, from its first bytes; `None` when none matches.
pub fn detect_runtime(path: &Path) -> Result<Option<Runtime>> {
    let head = jsonl::head(path, 1 << 20)?;
    let text = String::from_utf8_lossy(&head);
    let trimmed = text.trim_start_matches(['\u{feff}', '\0']).trim_start();
    if trimmed.starts_with("SQLite format 3") {
        return Ok(Some(Runtime::OpenCode));
    }
    for line in trimmed.lines().filter(|l| !l.trim().is_empty()).take(5) {
        let Ok(value) = serde_json::from_str::<Value>(line) else { continue };
        let Some(map) = value.as_object() else { continue };
        if codex::looks_like_line(&value) {
            return Ok(Some(Runtime::Codex));
        }
        if map.contains_key("info") && map.contains_key("messages") {
            return Ok(Some(Runtime::OpenCode));
        }
        if claude_code::looks_like_record(&value) {
            return Ok(Some(Runtime::ClaudeCode));
        }
    }
    if trimmed.starts_with('{') && trimmed.contains("\"messages\"") && trimmed.contains("\"info\"") {
        return Ok(Some(Runtime::OpenCode));
    }
    Ok(None)
}

impl Store {
    /// Imports native history of `runtime` as a new session, atomically: on any error nothing is
    /// stored. Malformed records are kept as `error` blocks (see [`Session::import_report`]), or with
    /// `options.strict` fail the import naming the line.
    pub fn import_native(&self, runtime: Runtime, source: Source, options: &Options) -> Result<Session> {
        if let Source::Path(path) = &source {
            check_readable(path)?;
        }
        if let Some(id) = &options.session_id {
            crate::store::validate_session_id(id)?;
        }
        match runtime {
            Runtime::ClaudeCode => claude_code::import(self, source, options, ImportTarget::New(options.session_id.clone())),
            Runtime::Codex => codex::import(self, source, options, ImportTarget::New(options.session_id.clone())),
            Runtime::OpenCode => opencode::import(self, source, options),
        }
    }

    /// Imports a native file and remembers it, so that importing the same path again adds only
    /// what the file gained: nothing when it is unchanged; for a Claude Code transcript or Codex
    /// rollout that grew by whole lines, the blocks of the new lines appended to its session; for
    /// any other change, the session imported afresh in place. The runtime is detected when
    /// `runtime` is `None`. (`opencode.db` files are [`Store::import_opencode_db`]'s.)
    pub fn import_source(&self, path: impl AsRef<Path>, runtime: Option<Runtime>, options: &Options) -> Result<SourceImport> {
        let path = path.as_ref();
        check_readable(path)?;
        let key = std::fs::canonicalize(path).map_err(|source| Error::Io { context: format!("cannot read {}", path.display()), source })?;
        let key = key.to_string_lossy().into_owned();
        let bytes = std::fs::read(path).map_err(|source| Error::Io { context: format!("cannot read {}", path.display()), source })?;
        let runtime = match runtime {
            Some(runtime) => runtime,
            None => detect_runtime(path)?.ok_or_else(|| {
                Error::invalid(format!("{} is not a Claude Code transcript, a Codex rollout or an OpenCode export (could not detect the runtime)", path.display()))
            })?,
        };
        let digest = |bytes: &[u8]| crate::model::sha256_hex(&<sha2::Sha256 as sha2::Digest>::digest(bytes));
        let lines = bytes.iter().filter(|b| **b == b'\n').count() as u64 + u64::from(bytes.last().is_some_and(|b| *b != b'\n'));
        let record = crate::store::SourceRecord { path: key.clone(), runtime, size: bytes.len() as u64, lines, sha256: digest(&bytes) };
        let known = self.source(&key)?;
        let (session, outcome) = match known {
            Some((session, old)) if old.size == record.size && old.sha256 == record.sha256 => {
                return Ok(SourceImport { session, outcome: SourceOutcome::Unchanged, blocks_added: 0 })
            }
            Some((session, old)) => {
                let grown = matches!(runtime, Runtime::ClaudeCode | Runtime::Codex)
                    && old.runtime == runtime
                    && record.size > old.size
                    && bytes[old.size as usize - 1] == b'\n'
                    && digest(&bytes[..old.size as usize]) == old.sha256;
                if grown {
                    let before = session.len()?;
                    let target = ImportTarget::Append { session, after_line: old.lines };
                    let source = Source::Path(path.to_path_buf());
                    let session = match runtime {
                        Runtime::ClaudeCode => claude_code::import(self, source, options, target)?,
                        _ => codex::import(self, source, options, target)?,
                    };
                    let added = session.len()? - before;
                    (session, SourceOutcome::Appended(added))
                } else {
                    let id = session.id().to_string();
                    self.delete_session(&id)?;
                    let options = Options { session_id: Some(id), ..options.clone() };
                    (self.import_native(runtime, Source::Path(path.to_path_buf()), &options)?, SourceOutcome::Replaced)
                }
            }
            None => (self.import_native(runtime, Source::Path(path.to_path_buf()), options)?, SourceOutcome::Imported),
        };
        self.remember_source(&session, &record)?;
        let blocks_added = match outcome {
            SourceOutcome::Appended(n) => n,
            SourceOutcome::Unchanged => 0,
            SourceOutcome::Imported | SourceOutcome::Replaced => session.len()?,
        };
        Ok(SourceImport { session, outcome, blocks_added })
    }

    /// Imports every session of an `opencode.db` (read-only), most recently updated first;
    /// sessions already in the store are skipped. Returns the sessions imported.
    pub fn import_opencode_db(&self, path: impl AsRef<Path>) -> Result<Vec<Session>> {
        let path = path.as_ref();
        check_readable(path)?;
        opencode::import_all_db(self, path)
    }

    /// Imports a native file; `runtime: None` detects the runtime from the content.
    pub fn import_file(&self, path: impl AsRef<Path>, runtime: Option<Runtime>, options: &Options) -> Result<Session> {
        let path = path.as_ref();
        check_readable(path)?;
        let runtime = match runtime {
            Some(runtime) => runtime,
            None => detect_runtime(path)?.ok_or_else(|| {
                Error::invalid(format!(
                    "{} is not a Claude Code transcript, a Codex rollout or an OpenCode export (could not detect the runtime)",
                    path.display()
                ))
            })?,
        };
        self.import_native(runtime, Source::Path(path.to_path_buf()), options)
    }
}

fn check_readable(path: &Path) -> Result<()> {
    let meta = std::fs::metadata(path)
        .map_err(|source| Error::Io { context: format!("cannot read {}", path.display()), source })?;
    if meta.is_dir() {
        return Err(Error::invalid(format!("{} is a directory, not a native history file", path.display())));
    }
    Ok(())
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
        assert_eq!(options.format_for(Runtime::Codex).unwrap(), "rollout");
        let err = options.format_for(Runtime::ClaudeCode).unwrap_err();
        assert!(err.to_string().contains("transcript, messages"), "{err}");
        assert_eq!(Options::default().format_for(Runtime::OpenCode).unwrap(), "session");
    }
}
