//! What the live driver reads of `qwen --acp` beyond the protocol itself: the record that closes a
//! turn in the chat file (the CLI appends its records a moment after what it streams, so a turn's
//! last records may land after the prompt's response), and the answer to its mid-turn queue
//! request. The blocks come from the chat file (`live`); the ACP updates only stream deltas.

use serde_json::{json, Value};

use crate::model::{Block, Kind};

/// The `system` records that close a turn: `branch_checkpoint` (after a turn's last answer) and
/// `slash_command` (after `/compress`, which has no checkpoint).
const TURN_ENDS: [&str; 2] = ["branch_checkpoint", "slash_command"];

/// True for the block of a record that closes a turn.
pub(super) fn ends_turn(block: &Block) -> bool {
    let record = block.native.as_ref().and_then(|n| n.data.get("record"));
    block.kind == Kind::Status
        && record.and_then(|r| r.get("type")).and_then(Value::as_str) == Some("system")
        && record.and_then(|r| r.get("subtype")).and_then(Value::as_str).is_some_and(|t| TURN_ENDS.contains(&t))
}

/// The result of a request Qwen Code sends its client besides permission requests:
/// `craft/drainMidTurnQueue` (after each batch of tools, for prompts queued in the client while the
/// turn runs) gets an empty queue; the host queues its messages itself.
pub(super) fn answer(method: &str) -> Option<Value> {
    (method == "craft/drainMidTurnQueue").then(|| json!({"messages": []}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Actor, Native};

    fn status(record: Value) -> Block {
        let mut block = Block::new(Actor::System, Kind::Status, "system");
        block.native = Some(Native { runtime: "qwen-code".into(), data: json!({"record": record, "blocks": 1}) });
        block
    }

    #[test]
    fn a_turn_ends_with_its_checkpoint_or_a_slash_command() {
        assert!(ends_turn(&status(json!({"type": "system", "subtype": "branch_checkpoint", "systemPayload": {"v": 1}}))));
        assert!(ends_turn(&status(json!({"type": "system", "subtype": "slash_command", "systemPayload": {"phase": "result", "rawCommand": "/compress"}}))));
        assert!(!ends_turn(&status(json!({"type": "system", "subtype": "ui_telemetry"}))));
        assert!(!ends_turn(&status(json!({"type": "user", "subtype": "branch_checkpoint"}))));
    }

    #[test]
    fn the_mid_turn_queue_is_empty() {
        assert_eq!(answer("craft/drainMidTurnQueue"), Some(json!({"messages": []})));
        assert_eq!(answer("fs/read_text_file"), None);
    }
}
