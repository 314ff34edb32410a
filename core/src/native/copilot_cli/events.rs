//! What the live driver reads of `copilot --acp` beyond the protocol itself: the event that closes
//! a turn in `events.jsonl` (the CLI writes its log in batches, a moment behind what it streams, so
//! a turn's last events may land after the prompt's response).
//! The blocks come from the log (`live`); the ACP updates only stream deltas.

use serde_json::Value;

use crate::model::{Block, Kind};

/// The events that close a turn in the log: `assistant.turn_end` (also after an abort) and
/// `session.compaction_complete` (a `/compact`, which has no turn of its own).
const TURN_ENDS: [&str; 2] = ["assistant.turn_end", "session.compaction_complete"];

/// True for the block of an event that closes a turn.
pub(super) fn ends_turn(block: &Block) -> bool {
    block.kind == Kind::Status
        && block
            .native
            .as_ref()
            .and_then(|n| n.data.get("record"))
            .and_then(|r| r.get("type"))
            .and_then(Value::as_str)
            .is_some_and(|t| TURN_ENDS.contains(&t))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::{Actor, Native};

    fn status(record: Value) -> Block {
        let mut block = Block::new(
            Actor::System,
            Kind::Status,
            record["type"].as_str().unwrap_or(""),
        );
        block.native = Some(Native {
            runtime: "copilot-cli".into(),
            data: json!({"record": record, "blocks": 1}),
        });
        block
    }

    #[test]
    fn a_turn_ends_with_its_turn_end_or_a_compaction() {
        assert!(ends_turn(&status(
            json!({"type": "assistant.turn_end", "data": {"turnId": "0"}})
        )));
        assert!(ends_turn(&status(
            json!({"type": "session.compaction_complete", "data": {"success": true}})
        )));
        assert!(!ends_turn(&status(
            json!({"type": "assistant.turn_start", "data": {}})
        )));
        assert!(!ends_turn(&Block::text(
            Actor::Assistant,
            "assistant.turn_end"
        )));
    }
}
