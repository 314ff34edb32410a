//! The prompt prelude (`prelude` format): the conversation as the text of a first prompt, for a
//! fresh session when an import is not possible.

use serde_json::Value;

use crate::model::{Block, Kind};
use crate::native::types::{ForeignReasoning, Options};
use crate::report::{ReportAction, ReportEntry};

use super::find_embed_link;

/// The prompt prelude: the conversation as text for the first prompt of a fresh session, when an
/// import is not possible. Format 1 (README, "OpenCode"):
///
/// ```text
/// <conversation-history format="sna-history prelude 1">
/// [user]
/// …text…
///
/// [assistant]
/// …text…
///
/// [assistant tool call bash id=call_1]
/// {"command":"ls"}
///
/// [tool result id=call_1]            ([tool error id=…] for a failed call)
/// …output…
///
/// [attachment shot.png image/png 1234 bytes sha256:…]
/// </conversation-history>
/// ```
///
/// Reasoning, status and error blocks are left out (reported), embeds are listed as attachments.
pub(super) fn prelude(blocks: &[Block], options: &Options, report: &mut Vec<ReportEntry>) -> Value {
    let mut out = String::from("<conversation-history format=\"sna-history prelude 1\">\n");
    let mut first = true;
    for block in blocks {
        let header = match (block.actor, block.kind) {
            (_, Kind::Status) => continue,
            (_, Kind::Error) | (_, Kind::Thinking) => {
                if block.kind == Kind::Thinking && options.foreign_reasoning == ForeignReasoning::Text {
                    "[assistant reasoning]".to_string()
                } else {
                    let what = if block.kind == Kind::Error { "error block" } else { "reasoning" };
                    report.push(ReportEntry { action: ReportAction::Dropped, block_id: Some(block.id.clone()), message: format!("{what} is not part of the prelude") });
                    continue;
                }
            }
            (actor, Kind::Text) => format!("[{actor}]"),
            (_, Kind::ToolUse) => {
                let tool = block.tool.as_ref();
                format!("[assistant tool call {} id={}]", tool.and_then(|t| t.name.as_deref()).unwrap_or("?"), tool.map(|t| t.call_id.as_str()).unwrap_or("?"))
            }
            (_, Kind::ToolResult) => {
                let tool = block.tool.as_ref();
                let word = if tool.is_some_and(|t| t.is_error == Some(true)) { "error" } else { "result" };
                format!("[tool {word} id={}]", tool.map(|t| t.call_id.as_str()).unwrap_or("?"))
            }
        };
        if !first {
            out.push('\n');
        }
        first = false;
        out.push_str(&header);
        out.push('\n');
        let mut text = block.content.clone();
        let mut attachments = Vec::new();
        for id in block.embed_references() {
            let Some(embed) = block.embeds.get(id) else { continue };
            if let Some((at, len)) = find_embed_link(&text, id) {
                let name = embed.name.clone().unwrap_or_else(|| id.to_string());
                text.replace_range(at..at + len, &format!("[attachment {name}]"));
            }
            attachments.push(format!("[attachment {} {} {} bytes sha256:{}]", embed.name.as_deref().unwrap_or(id), embed.mime, embed.size, embed.sha256));
        }
        out.push_str(text.trim_end());
        out.push('\n');
        for line in attachments {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out.push_str("</conversation-history>\n");
    Value::String(out)
}
