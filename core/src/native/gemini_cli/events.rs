//! What the live driver reads in the ACP `session/update` notifications of `gemini --acp`
//! (gemini-cli.md §6.2): text and thought chunks become deltas; a finished tool call says that the
//! session log has gained records. Nothing here becomes a block: the updates lose a tool call's
//! input and output and every signature, so the blocks come from the session log (`live`), and
//! `event_blocks` stays unsupported for Gemini CLI.

use serde_json::Value;

use crate::native::acp_live::{self, Update};

/// Prefix of the chunk the CLI sends when the approval mode changes; not model output.
const MODE_UPDATE: &str = "[MODE_UPDATE] ";

/// Reads the `params` of a `session/update` notification as the protocol defines it, but for
/// Gemini CLI's own chunks: a mode change is not model output, and a thought has its subject.
pub(super) fn update(params: &Value) -> Update {
    match acp_live::update(params) {
        Update::Delta { thinking: false, text } if text.starts_with(MODE_UPDATE) => Update::Other,
        Update::Delta { thinking: true, text } => {
            let text = thought_text(&text);
            if text.is_empty() {
                Update::Other
            } else {
                Update::Delta { thinking: true, text }
            }
        }
        other => other,
    }
}

/// A thought chunk as the CLI sends it, `**<subject>**\n<description>`, without the empty bold
/// (`****\n`) of a thought that has no subject.
fn thought_text(text: &str) -> String {
    text.strip_prefix("****\n").unwrap_or(text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(update: Value) -> Value {
        json!({"sessionId": "s", "update": update})
    }

    #[test]
    fn chunks_become_deltas() {
        let answer = params(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "The notes say hello."}}));
        assert_eq!(update(&answer), Update::Delta { thinking: false, text: "The notes say hello.".into() });
        let thought = params(json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "****\nLet me read."}}));
        assert_eq!(update(&thought), Update::Delta { thinking: true, text: "Let me read.".into() });
        let titled = params(json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "**Plan**\nRead it."}}));
        assert_eq!(update(&titled), Update::Delta { thinking: true, text: "**Plan**\nRead it.".into() });
    }

    #[test]
    fn mode_changes_tools_and_commands() {
        let mode = params(json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "[MODE_UPDATE] yolo"}}));
        assert_eq!(update(&mode), Update::Other);
        let done = params(json!({"sessionUpdate": "tool_call_update", "toolCallId": "read_file__1", "status": "completed", "content": []}));
        assert_eq!(update(&done), Update::ToolDone);
        let started = params(json!({"sessionUpdate": "tool_call", "toolCallId": "read_file__1", "status": "in_progress"}));
        assert_eq!(update(&started), Update::Other);
        assert_eq!(update(&params(json!({"sessionUpdate": "available_commands_update", "availableCommands": []}))), Update::Commands);
        assert_eq!(update(&params(json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hi"}}))), Update::Other);
    }
}
