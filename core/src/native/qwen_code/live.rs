//! The live driver: `qwen --acp` (Agent Client Protocol), through the driver every ACP runtime
//! shares (`native::acp_live`). What is Qwen Code's own is here, as found with 0.24.4 against a
//! mock Chat Completions server.
//!
//! - **What is recorded comes from the chat file**, `<Qwen home>/projects/<cwd folder>/chats/<id>.jsonl`,
//!   read as it grows with the import's reader, so that live capture is what an import of the file
//!   gives. The CLI appends each record a moment after what it streams: a turn's end waits for the
//!   record that closes it (`system/branch_checkpoint`, or `system/slash_command` for
//!   `/compress`). The file does not exist before the first prompt.
//! - `QWEN_CODE_NO_RELAUNCH` is set: otherwise the CLI starts itself again (three processes).
//! - Permission modes set the ACP modes `yolo` (`bypassPermissions`: no requests), `auto-edit`
//!   (`acceptEdits`), `plan` (read-only) and `default` (the rest): the CLI's own default, `auto`,
//!   asks the model to classify unclear commands, a model request of its own.
//! - `craft/drainMidTurnQueue`, which the CLI asks after each batch of tools, gets an empty queue.
//! - The model is `--model`; `session/set_model` takes only the models the CLI lists (`OPENAI_MODEL`,
//!   or `modelProviders` in its settings), and is asked not to save the model as the user's default
//!   (`qwen.session.modelPersistDefault: false`).
//! - The usage of a turn comes in updates (`_meta.usage` of each model call), summed.
//! - `session/cancel` ends the turn with `cancelled`; the file keeps the user's message and what was
//!   streamed of the answer.
//! - An image reaches the model, but the chat file keeps only the prompt's text: the driver records
//!   the image it sent with the user's message.
//! - `/compress` as a prompt compresses the chat (it takes no instructions); ACP has no method for it.
//! - `session/load` in a new process replays the history as updates and goes on in the same file,
//!   after kill -9 too.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::error::Result;
use crate::model::Runtime;
use crate::native::acp_live::{self, renamed_usage, Flavor, SessionLog, TailLog};
use crate::native::live::{Live, LiveSpec, Sink};

use super::events::{answer, ends_turn};
use super::import::RecordReader;
use super::resume::find_chat_file;

/// ACP's usage counts and their names in the chat file's `usageMetadata`.
const USAGE_NAMES: &[(&str, &str)] = &[
    ("inputTokens", "promptTokenCount"),
    ("outputTokens", "candidatesTokenCount"),
    ("thoughtTokens", "thoughtsTokenCount"),
    ("cachedReadTokens", "cachedContentTokenCount"),
    ("totalTokens", "totalTokenCount"),
];

/// Qwen Code's part of the ACP driver.
struct Qwen;

impl Flavor for Qwen {
    fn runtime(&self) -> Runtime {
        Runtime::QwenCode
    }

    fn package(&self) -> &'static str {
        super::NPM_PACKAGE
    }

    fn env(&self, env: &mut BTreeMap<String, String>) {
        env.entry("QWEN_CODE_NO_RELAUNCH".into()).or_insert_with(|| "true".into());
    }

    fn args(&self, spec: &LiveSpec) -> Vec<String> {
        let mut args = vec!["--acp".to_string()];
        if let Some(model) = &spec.model {
            args.extend(["--model".into(), model.clone()]);
        }
        args.extend(spec.args.iter().cloned());
        args
    }

    fn log(&self, spec: &LiveSpec) -> Result<Box<dyn SessionLog>> {
        Ok(Box::new(TailLog::<RecordReader>::new(spec, find_chat_file, "Qwen Code chat file")?.ended_by(ends_turn)))
    }

    fn mode(&self, permission_mode: Option<&str>) -> Option<&'static str> {
        Some(match permission_mode {
            Some("bypassPermissions") => "yolo",
            Some("acceptEdits") => "auto-edit",
            Some("plan") => "plan",
            _ => "default",
        })
    }

    fn file_keeps_images(&self) -> bool {
        false
    }

    fn answer(&self, method: &str, _params: &Value) -> Option<Value> {
        answer(method)
    }

    /// `/compress`, which takes no instructions: they are not sent.
    fn compact(&self, instructions: Option<&str>) -> Result<String> {
        let _ = instructions;
        Ok("/compress".to_string())
    }

    /// The sum of the updates' `_meta.usage`, as a `usageMetadata` of its chat file.
    fn usage(&self, _result: &Value, streamed: Option<Value>) -> Option<Value> {
        renamed_usage(&streamed?, USAGE_NAMES)
    }

    fn set_model(&self, session: &str, model: &str) -> (&'static str, Value) {
        ("session/set_model", json!({"sessionId": session, "modelId": model, "_meta": {"qwen.session.modelPersistDefault": false}}))
    }
}

/// Starts `qwen --acp` and opens the session (new, or loaded by `spec.resume`).
pub(super) fn start(spec: LiveSpec, sink: Sink) -> Result<Box<dyn Live>> {
    acp_live::start(&Qwen, spec, sink)
}
