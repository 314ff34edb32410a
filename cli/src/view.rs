//! `sna view`: a session as one self-contained HTML file (no network resources): a header with
//! the session's runtimes and models, the blocks as a timeline by actor, thinking and tool calls
//! collapsible with their results, images inline as data URLs, and a visible marker wherever the
//! runtime or the model changes.

use std::collections::HashMap;
use std::fmt::Write as _;

use base64::Engine as _;
use sna_history::{Block, Kind, Session};

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
body{font:14px/1.45 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:16px 24px}header h1{margin:0 0 6px;font-size:18px}
header p{margin:2px 0;color:#c9d1e0}main{max-width:960px;margin:0 auto;padding:16px 24px}
.block{margin:8px 0;padding:8px 12px;border-radius:8px;background:#fff;border-left:4px solid #9aa5b8}
.block.user{border-color:#2f7de1}.block.assistant{border-color:#2ba673}.block.system{border-color:#b38f00}
.block.error{border-color:#d64545;background:#fff5f5}.block.status{background:transparent;border-color:#d5dae3;padding:2px 12px;color:#6b7385}
.meta{font-size:12px;color:#6b7385;margin-bottom:4px}.content{white-space:pre-wrap;word-break:break-word}
pre{white-space:pre-wrap;word-break:break-word;background:#f0f2f6;padding:6px 8px;border-radius:6px;margin:4px 0}
details summary{cursor:pointer;color:#44506a}.switch{margin:18px 0;text-align:center;color:#7a3db8;font-weight:600}
.switch:before,.switch:after{content:'';display:inline-block;width:18%;border-top:2px solid #cdb5ea;vertical-align:middle;margin:0 10px}
img.embed{max-width:100%;border:1px solid #d5dae3;border-radius:6px;margin-top:6px;image-rendering:pixelated;min-width:32px}
";

/// The HTML of the session; with `redact`, secrets replaced by `[REDACTED:<kind>]`.
pub fn html(session: &Session, redact: bool) -> sna_history::Result<String> {
    let info = session.info()?;
    let mut blocks = session.blocks()?;
    if redact {
        sna_history::redact::redact_blocks(&mut blocks);
    }
    let switches = session.switches()?;
    let title = info.title.clone().unwrap_or_else(|| info.id.clone());
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n",
        escape(&title)
    );
    let _ = write!(
        out,
        "<header><h1>{}</h1><p>session <code>{}</code> · {} blocks</p><p class=\"runtimes\">runtimes: {}</p><p class=\"models\">models: {}</p></header>\n<main>\n",
        escape(&title),
        escape(&info.id),
        info.block_count,
        escape(&info.providers.join(", ")),
        escape(&info.models.join(", "))
    );
    // Results go with their calls.
    let results: HashMap<&str, &Block> = blocks
        .iter()
        .filter(|b| b.kind == Kind::ToolResult)
        .filter_map(|b| b.tool.as_ref().map(|t| (t.call_id.as_str(), b)))
        .collect();
    let mut placed: std::collections::HashSet<u64> = std::collections::HashSet::new();
    for block in &blocks {
        if let Some(switch) = switches.iter().find(|s| s.seq == block.seq) {
            let label = crate::show::switch_label(switch.from.is_none(), switch.to.provider.as_deref(), switch.to.model_provider.as_deref(), switch.to.model.as_deref());
            let _ = writeln!(out, "<div class=\"switch\" data-seq=\"{}\">{}</div>", block.seq, escape(&label));
        }
        if placed.contains(&block.seq) {
            continue;
        }
        if block.kind == Kind::ToolUse {
            let result = block.tool.as_ref().and_then(|t| results.get(t.call_id.as_str())).filter(|r| r.seq > block.seq);
            out.push_str(&render(session, block, result.copied())?);
            if let Some(result) = result {
                placed.insert(result.seq);
            }
        } else {
            out.push_str(&render(session, block, None)?);
        }
    }
    out.push_str("</main></body></html>\n");
    Ok(out)
}

/// The block's text with its embeds where they are referenced (`![name](embed://id)`), and the
/// embeds no text refers to after it. References are found in the text once, left to right, and
/// never inside what replaced one (an embed's name is an attribute value, not text).
fn block_body(session: &Session, block: &Block) -> sna_history::Result<String> {
    let text = escape(block.content.trim_end());
    let mut shown_embeds: HashMap<String, String> = HashMap::new();
    for (id, embed) in &block.embeds {
        let shown = if embed.mime.starts_with("image/") {
            let data = base64::engine::general_purpose::STANDARD.encode(session.embed(id)?);
            format!(
                "<img class=\"embed\" data-embed=\"{}\" alt=\"{}\" src=\"data:{};base64,{data}\">",
                escape(id),
                escape(embed.name.as_deref().unwrap_or(id)),
                escape(&embed.mime)
            )
        } else {
            format!("<span class=\"attachment\" data-embed=\"{}\">[attachment {} ({}, {} bytes)]</span>", escape(id), escape(embed.name.as_deref().unwrap_or(id)), escape(&embed.mime), embed.size)
        };
        shown_embeds.insert(escape(id), shown);
    }
    let mut body = String::with_capacity(text.len());
    let mut cursor = 0;
    while let Some(found) = text[cursor..].find("](embed://") {
        let link_end = cursor + found;
        let id_start = link_end + "](embed://".len();
        let Some(id_len) = text[id_start..].find(')') else { break };
        let id = &text[id_start..id_start + id_len];
        let end = id_start + id_len + 1;
        match (text[cursor..link_end].rfind("!["), shown_embeds.remove(id)) {
            (Some(start), Some(shown)) => {
                body.push_str(&text[cursor..cursor + start]);
                body.push_str(&shown);
            }
            _ => body.push_str(&text[cursor..end]),
        }
        cursor = end;
    }
    body.push_str(&text[cursor..]);
    // Embeds no text refers to, in id order.
    let mut trailing: Vec<(String, String)> = shown_embeds.into_iter().collect();
    trailing.sort();
    let trailing: String = trailing.into_iter().map(|(_, shown)| shown).collect();
    Ok(format!("<div class=\"content\">{body}</div>{trailing}"))
}

fn meta(block: &Block) -> String {
    let by: Vec<&str> = [block.provider.as_deref(), block.model_provider.as_deref(), block.model.as_deref()].into_iter().flatten().collect();
    format!(
        "<div class=\"meta\">#{} · {} · {} · {}{}</div>",
        block.seq,
        block.actor,
        block.kind,
        escape(&block.created_at.to_rfc3339()),
        if by.is_empty() { String::new() } else { format!(" · {}", escape(&by.join(" "))) }
    )
}

fn render(session: &Session, block: &Block, result: Option<&Block>) -> sna_history::Result<String> {
    let classes = format!("block {} {}", block.actor, block.kind);
    let open = format!("<div class=\"{classes}\" data-seq=\"{}\" data-id=\"{}\" data-kind=\"{}\" data-actor=\"{}\">", block.seq, escape(&block.id), block.kind, block.actor);
    Ok(match block.kind {
        Kind::Thinking => format!("{open}{}<details><summary>thinking</summary>{}</details></div>\n", meta(block), block_body(session, block)?),
        Kind::Status => format!("{open}<details><summary>{}</summary><pre>{}</pre></details></div>\n", escape(&crate::show::clip(&block.content, 100)), escape(&block.content)),
        Kind::ToolUse => {
            let name = block.tool.as_ref().and_then(|t| t.name.as_deref()).unwrap_or("?");
            let mut html = format!("{open}{}<details><summary>tool call <b>{}</b></summary><pre>{}</pre>", meta(block), escape(name), escape(&block.content));
            if let Some(result) = result {
                let failed = result.tool.as_ref().and_then(|t| t.is_error).unwrap_or(false);
                let _ = write!(
                    html,
                    "<div class=\"block {} tool_result\" data-seq=\"{}\" data-id=\"{}\" data-kind=\"tool_result\" data-actor=\"{}\">{}<div class=\"meta\">{}</div>{}</div>",
                    result.actor,
                    result.seq,
                    escape(&result.id),
                    result.actor,
                    meta(result),
                    if failed { "error" } else { "result" },
                    block_body(session, result)?
                );
            }
            html.push_str("</details></div>\n");
            html
        }
        _ => format!("{open}{}{}</div>\n", meta(block), block_body(session, block)?),
    })
}
