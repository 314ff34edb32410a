//! The live driver: `copilot --acp --disable-client-telemetry` (Agent Client Protocol), through the
//! driver every ACP runtime shares (`native::acp_live`). What is Copilot CLI's own is here, as
//! found with 1.0.102 against a mock provider (bring-your-own-key, `COPILOT_OFFLINE`).
//!
//! - **What is recorded comes from `events.jsonl`**, read as it grows with the import's reader, so
//!   that live capture is what an import of the log gives. The CLI writes the log in batches tens
//!   of milliseconds behind the stream: a turn's end waits for the event that closes it
//!   (`assistant.turn_end`, or `session.compaction_complete` for `/compact`). The log does not
//!   exist before the first prompt.
//! - The model is `--model`; `session/set_model` changes it in place (any non-empty name is taken
//!   with a provider of one's own; the log gains `session.model_change`).
//! - Permission modes: `bypassPermissions` is `--allow-all` (no requests at all); `plan` is the
//!   ACP mode `…/session-modes#plan` (the CLI marks the prompt as planning; tools still ask);
//!   `acceptEdits` and `default` keep the agent mode, and requests are answered by the policy.
//! - `session/cancel` ends the turn with `cancelled`; the log gains `abort` and keeps the user's
//!   message, not what was streamed. A tool still running is killed by the CLI.
//! - An image of a prompt reaches the model, but the log keeps only the path of a temporary copy
//!   (`attachments`): the driver records the image it sent with the user's message.
//! - `/compact` as a prompt compacts (one model call for the summary); ACP has no method for it.
//! - `session/load` in a new process replays the history as updates and goes on in the same log
//!   (a `session.resume` event at the next prompt), after kill -9 too.
//! - SIGTERM ends the node process at once and the CLI's own process a moment later (after it
//!   ended its tools); the group is waited for until it is empty.

use crate::error::Result;
use crate::model::Runtime;
use crate::native::acp_live::{self, renamed_usage, Flavor, SessionLog, TailLog};
use crate::native::live::{Live, LiveSpec, Sink};

use super::events::ends_turn;
use super::import::EventReader;
use super::resume::find_log;

/// The ACP mode of planning.
const PLAN_MODE: &str = "https://agentclientprotocol.com/protocol/session-modes#plan";

/// ACP's usage counts and their names in the log's `session.usage_record`.
const USAGE_NAMES: &[(&str, &str)] = &[
    ("inputTokens", "inputTokens"),
    ("outputTokens", "outputTokens"),
    ("cachedReadTokens", "cacheReadTokens"),
    ("cachedWriteTokens", "cacheWriteTokens"),
];

/// Copilot CLI's part of the ACP driver.
struct Copilot;

impl Flavor for Copilot {
    fn runtime(&self) -> Runtime {
        Runtime::CopilotCli
    }

    fn package(&self) -> &'static str {
        super::NPM_PACKAGE
    }

    fn args(&self, spec: &LiveSpec) -> Vec<String> {
        let mut args = vec![
            "--acp".to_string(),
            "--disable-client-telemetry".to_string(),
        ];
        if let Some(model) = &spec.model {
            args.extend(["--model".into(), model.clone()]);
        }
        if spec.permission_mode.as_deref() == Some("bypassPermissions") {
            args.push("--allow-all".into());
        }
        args.extend(spec.args.iter().cloned());
        args
    }

    fn log(&self, spec: &LiveSpec) -> Result<Box<dyn SessionLog>> {
        Ok(Box::new(
            TailLog::<EventReader>::new(spec, find_log, "Copilot CLI session log")?
                .ended_by(ends_turn),
        ))
    }

    fn mode(&self, permission_mode: Option<&str>) -> Option<&'static str> {
        (permission_mode == Some("plan")).then_some(PLAN_MODE)
    }

    fn file_keeps_images(&self) -> bool {
        false
    }

    /// The prompt result's `usage`, as a `session.usage_record` of the log has it.
    fn usage(&self, result: &serde_json::Value, _streamed: Option<serde_json::Value>) -> Option<serde_json::Value> {
        renamed_usage(result.get("usage")?, USAGE_NAMES)
    }

    fn compact(&self, instructions: Option<&str>) -> Result<String> {
        Ok(
            match instructions.map(str::trim).filter(|i| !i.is_empty()) {
                Some(instructions) => format!("/compact {instructions}"),
                None => "/compact".to_string(),
            },
        )
    }
}

/// Starts `copilot --acp` and opens the session (new, or loaded by `spec.resume`).
pub(super) fn start(spec: LiveSpec, sink: Sink) -> Result<Box<dyn Live>> {
    acp_live::start(&Copilot, spec, sink)
}
