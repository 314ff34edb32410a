//! The Gemini API's `Part`s, as the runtimes that keep their messages in that shape write them
//! (Gemini CLI, and Qwen Code inside its Claude-Code-like records): function responses, inline
//! data, function call arguments.

use base64::Engine as _;
use serde_json::{json, Value};

use crate::model::{Actor, Block, Embed, Kind};
use crate::native::common::{embed_block, B64};

/// The text of a function response and whether it reports an error: `{output}` is the output,
/// `{error}` an error; any other shape is its JSON text.
pub(crate) fn result_text(response: Option<&Value>) -> (String, bool) {
    match response {
        Some(Value::Object(map)) if map.len() == 1 && map.get("output").is_some_and(Value::is_string) => (map["output"].as_str().unwrap_or("").to_string(), false),
        Some(Value::Object(map)) if map.contains_key("error") => {
            let text = match &map["error"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (text, true)
        }
        Some(other) => (other.to_string(), false),
        None => (String::new(), false),
    }
}

/// A block holding an `inlineData` part as an embed (named by its `displayName`, when it has one;
/// a status block when the data does not decode).
pub(crate) fn inline_block(actor: Actor, inline: &Value) -> Block {
    let mime = inline.get("mimeType").and_then(Value::as_str).unwrap_or("application/octet-stream");
    let name = inline.get("displayName").and_then(Value::as_str).map(str::to_string);
    match inline.get("data").and_then(Value::as_str).and_then(|d| B64.decode(d.as_bytes()).ok()) {
        Some(bytes) => embed_block(actor, "image", Embed::from_bytes(mime, name, bytes)),
        None => Block::new(Actor::System, Kind::Status, format!("inline {mime} data that is not base64")),
    }
}

/// The `args` of a `functionCall` part from a tool call's input: the input when it is a JSON
/// object, else `{"input": <text>}` and `true` (degraded).
pub(crate) fn call_args(input: &str) -> (Value, bool) {
    match serde_json::from_str::<Value>(input) {
        Ok(Value::Object(args)) => (Value::Object(args), false),
        _ => (json!({"input": input}), true),
    }
}

/// What a degraded call input is written as, for reports.
pub(crate) const CALL_ARGS_DEGRADED: &str = "a tool input that is not a JSON object is written as {\"input\": <text>}";

/// The `functionResponse` part of `result`, the answer to the call `call_id` of the tool `name`:
/// `{output}`, or `{error}` for an error result.
pub(crate) fn response_part(call_id: &str, name: &str, result: &Block) -> Value {
    let key = if result.tool.as_ref().and_then(|t| t.is_error) == Some(true) { "error" } else { "output" };
    json!({"functionResponse": {"id": call_id, "name": name, "response": {key: result.content}}})
}

/// The last of the assistant blocks that make one model step with `blocks[i]` and are not yet
/// `used` (marked used here): the rest of its message, or, for a block without a message id,
/// the assistant blocks that follow up to its first tool call; `kept` blocks (records an import
/// kept, written back as they were) end the step.
pub(crate) fn step_end(blocks: &[Block], i: usize, used: &mut [bool], kept: impl Fn(&Block) -> bool) -> usize {
    let first = &blocks[i];
    let mut end = i;
    while end + 1 < blocks.len()
        && !used[end + 1]
        && blocks[end + 1].actor == Actor::Assistant
        && !kept(&blocks[end + 1])
        && (blocks[end + 1].message_id == first.message_id || first.message_id.is_none() && blocks[end].kind != Kind::ToolUse)
    {
        end += 1;
        used[end] = true;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_read_and_write_both_ways() {
        assert_eq!(result_text(Some(&json!({"output": "ok"}))), ("ok".to_string(), false));
        assert_eq!(result_text(Some(&json!({"error": "no such file"}))), ("no such file".to_string(), true));
        assert_eq!(result_text(Some(&json!({"output": "x", "extra": 1}))), (r#"{"output":"x","extra":1}"#.to_string(), false));
        let failed = Block::tool_result("c1", "boom", true);
        assert_eq!(response_part("c1", "read_file", &failed), json!({"functionResponse": {"id": "c1", "name": "read_file", "response": {"error": "boom"}}}));
        assert_eq!(call_args("not json"), (json!({"input": "not json"}), true));
        assert_eq!(call_args(r#"{"a":1}"#), (json!({"a": 1}), false));
    }
}
