//! What the live driver reads in the ACP `session/update` notifications of `gemini --acp`
//! (gemini-cli.md §6.2): text and thought chunks become deltas; a finished tool call says that the
//! session log has gained records. Nothing here becomes a block: the updates lose a tool call's
//! input and output and every signature, so the blocks come from the session log (`live`), and
//! `event_blocks` stays unsupported for Gemini CLI.

use serde_json::Value;

/// What one `session/update` means to the driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Update {
    /// Text arriving: the answer (`agent_message_chunk`) or a thought (`agent_thought_chunk`).
    Delta { thinking: bool, text: String },
    /// A tool call finished (`tool_call_update` with status `completed` or `failed`): the log holds
    /// its step.
    ToolDone,
    /// `available_commands_update`: sent once a session is open (after a `session/load`, once its
    /// history replay has been queued).
    Commands,
    /// Anything else (`tool_call`, `user_message_chunk` of a replay, `plan`, …).
    Other,
}

/// Prefix of the chunk the CLI sends when the approval mode changes; not model output.
const MODE_UPDATE: &str = "[MODE_UPDATE] ";

/// Reads the `params` of a `session/update` notification.
pub(super) fn update(params: &Value) -> Update {
    let update = &params["update"];
    let text = || update["content"]["text"].as_str().unwrap_or("").to_string();
    match update["sessionUpdate"].as_str().unwrap_or("") {
        "agent_message_chunk" if update["content"]["type"] == "text" => {
            let text = text();
            if text.starts_with(MODE_UPDATE) || text.is_empty() {
                Update::Other
            } else {
                Update::Delta { thinking: false, text }
            }
        }
        "agent_thought_chunk" if update["content"]["type"] == "text" => {
            let text = thought_text(&text());
            if text.is_empty() {
                Update::Other
            } else {
                Update::Delta { thinking: true, text }
            }
        }
        "tool_call_update" if matches!(update["status"].as_str(), Some("completed" | "failed")) => Update::ToolDone,
        "available_commands_update" => Update::Commands,
        _ => Update::Other,
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
