//! The live driver: `gemini --acp` (Agent Client Protocol, gemini-cli.md §6.2), through the driver
//! every ACP runtime shares (`native::acp_live`: the protocol, the permission policy, how a turn is
//! recorded and ended). What is Gemini CLI's own is here.
//!
//! **What is recorded comes from the session log**, `~/.gemini/tmp/<short>/chats/session-*.jsonl`
//! (under `GEMINI_CLI_HOME` when set), read with the import's loader (`import::file_messages`): the
//! ACP updates lose a tool call's input and output and every thought signature. The CLI rewrites a
//! model record once its tools ran, so during a turn only the messages up to the last tool result
//! record go out (each earlier one is final by then); at the end of a turn every message not sent
//! before, exactly as a file import gives it (the messages of a loaded session count as sent).
//!
//! Permission modes set these ACP modes: `bypassPermissions` `yolo` (no requests), `acceptEdits`
//! `autoEdit`, `plan` `plan` (read-only), `default` none. The turn's usage is the prompt result's
//! `_meta.quota.token_count`; `session/set_model` (the SDK's unstable method) switches the model.
//!
//! Quirks handled here:
//! - `session/load` replays the history as `session/update`s, partly after its response: updates
//!   before the first prompt are ignored, and `start` waits for the replay to go quiet.
//! - The same-minute quirk (§5.3): a `session/load` in the clock minute its log's name carries makes
//!   the CLI append a fresh start into that very file, and the load fails with `Invalid session
//!   identifier` (a retry cannot help: the message list is gone by then). A replay's log is already
//!   named in another minute (`resume.rs`); a log the CLI named itself (a process killed and resumed
//!   within a minute) is renamed to an earlier minute before the process starts. The CLI finds a
//!   session by the `sessionId` in the header, not by the name.
//! - ACP cannot load a session from elsewhere (no `--session-file`): a replay log written to
//!   sna-history's own directory (session cleanup on) is refused with what to change.
//! - Each process also writes a log of its own start-up session (only `<session_context>`); cleanup
//!   removes those when it is on.
//! - Without `GEMINI_CLI_NO_RELAUNCH` the CLI re-spawns itself and the process started is not the
//!   one that works: the driver sets it.
//! - A prompt whose text starts with `/` or `$` is taken for one of the CLI's commands (`/memory`,
//!   …) when it names one: the turn ends at once, with nothing in the log and no model request.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::{Actor, Block, Kind, Runtime, Timestamp};
use crate::native::acp_live::{self, Flavor, SessionLog, Update};
use crate::native::live::{Live, LiveSpec, Sink};

use super::events::update;
use super::import::file_messages;
use super::is_context;

/// The session log and which of its messages went out.
struct Log {
    /// `<home>/.gemini`.
    gemini: PathBuf,
    session: String,
    path: Option<PathBuf>,
    sent: HashSet<String>,
    /// The log's size when a read during a turn found nothing new: unchanged, it is not read again.
    idle_len: Option<u64>,
}

impl Log {
    /// The log's path, found once (see [`find_log`]).
    fn path(&mut self) -> Option<PathBuf> {
        if self.path.is_none() && !self.session.is_empty() {
            self.path = find_log(&self.gemini, &self.session);
        }
        self.path.clone()
    }

    /// Counts every message the log holds now as sent.
    fn mark_sent(&mut self) {
        if let Some(path) = self.path() {
            for (id, _) in file_messages(&path).unwrap_or_default() {
                self.sent.insert(id);
            }
        }
    }

    /// The blocks of the messages not sent yet: all of them (`all`), or those up to the last tool
    /// result record (during a turn: each earlier message is in its final version).
    fn take(&mut self, all: bool) -> Vec<Block> {
        let Some(path) = self.path() else { return Vec::new() };
        let len = std::fs::metadata(&path).map(|m| m.len()).ok();
        if !all && len.is_some() && len == self.idle_len {
            return Vec::new();
        }
        let messages = file_messages(&path).unwrap_or_default();
        let end = if all { messages.len() } else { messages.iter().rposition(|(_, blocks)| is_result_record(blocks)).map_or(0, |i| i + 1) };
        let mut out = Vec::new();
        for (id, blocks) in messages.into_iter().take(end) {
            if self.sent.insert(id) {
                out.extend(blocks);
            }
        }
        self.idle_len = if out.is_empty() { len } else { None };
        out
    }
}

/// True for the blocks of a user record holding tool results (the CLI writes it after the model
/// record that made the calls, which is complete then).
fn is_result_record(blocks: &[Block]) -> bool {
    blocks.iter().any(|b| b.kind == Kind::ToolResult) && blocks.iter().all(|b| b.actor != Actor::Assistant)
}

/// The session log of `session` under `<gemini>/tmp/*/chats/`: a `session-*-<id8>.jsonl` whose
/// header names the session; the largest when there are several (a `session/load` leaves a small
/// start-up file with the same id next to the real one).
fn find_log(gemini: &Path, session: &str) -> Option<PathBuf> {
    let suffix = format!("-{}.jsonl", session.chars().take(8).collect::<String>());
    let mut best: Option<(u64, PathBuf)> = None;
    for project in std::fs::read_dir(gemini.join("tmp")).ok()?.flatten() {
        let Ok(files) = std::fs::read_dir(project.path().join("chats")) else { continue };
        for file in files.flatten() {
            let path = file.path();
            let name = file.file_name().to_string_lossy().into_owned();
            if !name.starts_with("session-") || !name.ends_with(&suffix) || header_session(&path).as_deref() != Some(session) {
                continue;
            }
            let size = file.metadata().map(|m| m.len()).unwrap_or(0);
            if best.as_ref().is_none_or(|(s, _)| size > *s) {
                best = Some((size, path));
            }
        }
    }
    best.map(|(_, path)| path)
}

/// The `sessionId` of a log's first line.
fn header_session(path: &Path) -> Option<String> {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::BufReader::new(std::fs::File::open(path).ok()?).read_line(&mut line).ok()?;
    serde_json::from_str::<Value>(&line).ok()?.get("sessionId")?.as_str().map(str::to_string)
}

/// The minute stamp of a log name (`2026-12-05T08-51`) for a time.
fn minute_stamp(time: Timestamp) -> String {
    time.to_rfc3339().chars().take(16).collect::<String>().replace(':', "-")
}

/// Renames a log the CLI named in the current minute (or later) to a free earlier minute, so that a
/// `session/load` now does not hit the same-minute quirk (module docs). Returns the path to use.
fn avoid_this_minute(path: PathBuf) -> Result<PathBuf> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
    let (Some(stamp), Some(tail)) = (name.get(8..24), name.get(24..)) else { return Ok(path) };
    let now = Timestamp::now().as_millis() / 60_000 * 60_000;
    if stamp < minute_stamp(Timestamp::from_millis(now)?).as_str() {
        return Ok(path);
    }
    for back in 1..=1440 {
        let target = path.with_file_name(format!("session-{}{tail}", minute_stamp(Timestamp::from_millis(now - back * 60_000)?)));
        if !target.exists() {
            std::fs::rename(&path, &target).map_err(|e| Error::Io { context: format!("cannot rename {} (Gemini CLI cannot load a session in the minute its log is named for)", path.display()), source: e })?;
            return Ok(target);
        }
    }
    Ok(path)
}

impl SessionLog for Log {
    fn opened(&mut self, session: &str) {
        self.session = session.to_string();
    }

    /// The CLI rewrote the message list on loading (adding `<id>_response` records of tool
    /// results): what it holds now counts as sent.
    fn loaded(&mut self) {
        self.mark_sent();
    }

    fn take(&mut self, all: bool) -> Vec<Block> {
        Log::take(self, all)
    }
}

/// Gemini CLI's part of the ACP driver.
struct Gemini;

impl Flavor for Gemini {
    fn runtime(&self) -> Runtime {
        Runtime::GeminiCli
    }

    fn package(&self) -> &'static str {
        super::NPM_PACKAGE
    }

    fn env(&self, env: &mut BTreeMap<String, String>) {
        env.entry("GEMINI_CLI_NO_RELAUNCH".into()).or_insert_with(|| "true".into());
    }

    fn args(&self, spec: &LiveSpec) -> Vec<String> {
        let mut args = vec!["--acp".to_string(), "--skip-trust".to_string()];
        if let Some(model) = &spec.model {
            args.extend(["-m".into(), model.clone()]);
        }
        args.extend(spec.args.iter().cloned());
        args
    }

    fn log(&self, spec: &LiveSpec) -> Result<Box<dyn SessionLog>> {
        let home = spec.env.get("GEMINI_CLI_HOME").or_else(|| spec.env.get("HOME")).map(PathBuf::from);
        let gemini = home.ok_or_else(|| Error::invalid("Gemini CLI needs HOME (or GEMINI_CLI_HOME) in its environment: its session log lives there"))?.join(".gemini");
        let mut log = Log { gemini: gemini.clone(), session: spec.resume.clone().unwrap_or_default(), path: None, sent: HashSet::new(), idle_len: None };
        if let Some(id) = &spec.resume {
            let Some(path) = log.path() else {
                let elsewhere = spec.resume_path.as_ref().filter(|p| p.exists() && !p.starts_with(&gemini));
                return Err(match elsewhere {
                    Some(p) => Error::invalid(format!(
                        "Gemini CLI's ACP mode loads sessions only from {}: the replay log {} was written elsewhere because session cleanup is on; set general.sessionRetention.enabled to false in {}",
                        gemini.join("tmp").display(),
                        p.display(),
                        gemini.join("settings.json").display()
                    )),
                    None => Error::NotFound(format!("no Gemini CLI session log of {id} under {}", gemini.join("tmp").display())),
                });
            };
            log.path = Some(avoid_this_minute(path)?);
            log.mark_sent();
        }
        Ok(Box::new(log))
    }

    fn mode(&self, permission_mode: Option<&str>) -> Option<&'static str> {
        match permission_mode {
            Some("bypassPermissions") => Some("yolo"),
            Some("acceptEdits") => Some("autoEdit"),
            Some("plan") => Some("plan"),
            _ => None,
        }
    }

    fn update(&self, params: &Value) -> Update {
        update(params)
    }

    fn is_context(&self, block: &Block) -> bool {
        is_context(&block.content)
    }

    /// Gemini CLI compresses its chat only when `/compress` is typed into its interactive screen
    /// (or by itself near the model's limit): in `-p` and in ACP mode `/compress` is not a command,
    /// and ACP has no method for it. `UNSUPPORTED`, saying so.
    fn compact(&self, instructions: Option<&str>) -> Result<String> {
        let _ = instructions;
        Err(Error::Unsupported(
            "Gemini CLI cannot be asked to compact its conversation from a host: its compression (`/compress`) can only be started from its interactive screen (in `-p` and ACP mode `/compress` is not a command, and ACP has no method for it); Gemini CLI still compresses by itself when the chat nears the model's limit".into(),
        ))
    }

    /// `_meta.quota.token_count` of the prompt's result.
    fn usage(&self, result: &Value, _streamed: Option<Value>) -> Option<Value> {
        result["_meta"]["quota"].get("token_count").cloned()
    }
}

/// Starts `gemini --acp` and opens the session (new, or loaded by `spec.resume`).
pub(super) fn start(spec: LiveSpec, sink: Sink) -> Result<Box<dyn Live>> {
    acp_live::start(&Gemini, spec, sink)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_modes_are_gemini_modes() {
        assert_eq!(Gemini.mode(Some("bypassPermissions")), Some("yolo"));
        assert_eq!(Gemini.mode(Some("acceptEdits")), Some("autoEdit"));
        assert_eq!(Gemini.mode(Some("plan")), Some("plan"));
        assert_eq!(Gemini.mode(None), None);
    }

    #[test]
    fn a_log_of_this_minute_is_renamed_to_an_earlier_one() {
        let dir = std::env::temp_dir().join(format!("sna-gemini-live-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A name in this minute or later (a later one: the test does not race the clock).
        let path = dir.join("session-2999-01-01T00-00-abcdef12.jsonl");
        std::fs::write(&path, "{\"sessionId\":\"abcdef12-0000\",\"projectHash\":\"h\"}\n").unwrap();
        let moved = avoid_this_minute(path.clone()).unwrap();
        assert!(!path.exists() && moved.exists() && moved != path);
        let name = moved.file_name().unwrap().to_str().unwrap().to_string();
        assert!(name[8..24] < *minute_stamp(Timestamp::now()) && name.ends_with("-abcdef12.jsonl"), "{name}");
        // An older name stays.
        assert_eq!(avoid_this_minute(moved.clone()).unwrap(), moved);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
