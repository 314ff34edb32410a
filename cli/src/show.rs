//! `sna show`: a session as a readable timeline — actor, kind and attribution per block, tool
//! calls with their results, thinking collapsed to its first line, and a marker line where the
//! runtime or the model changes and where a runtime compacted the conversation.

use std::io::Write;

use sna_history::{Actor, Block, Kind, Session};

/// At most `max` characters of the first line of `text`, with an ellipsis when cut; control
/// characters shown as escapes ([`visible`]).
pub fn clip(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    let mut out: String = line.chars().take(max).collect();
    if line.chars().count() > max || text.lines().nth(1).is_some() {
        out.push('…');
    }
    visible(&out).into_owned()
}

/// Stored text as it may reach a terminal: control characters (C0 but newline and tab, DEL, C1)
/// written as escapes (`\x1b`, `\u{9b}`), so that a hostile transcript cannot move the cursor,
/// set the window title, write the clipboard or clear the screen. JSON output is not passed
/// through this; it stays exact.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| (c.is_control() && c != '\n' && c != '\t') || ('\u{80}'..='\u{9f}').contains(&c);
    if !text.chars().any(hidden) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if hidden(c) && (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if hidden(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.into()
}

/// The marker text of a switch: "switched to codex · openai gpt-5.4"; the session's first
/// attribution (`first`) is just "claude-code · anthropic claude-opus-5-5".
pub fn switch_label(first: bool, provider: Option<&str>, model_provider: Option<&str>, model: Option<&str>) -> String {
    let runtime = provider.unwrap_or("another runtime");
    let mut label = if first { runtime.to_string() } else { format!("switched to {runtime}") };
    let model: Vec<&str> = [model_provider, model].into_iter().flatten().collect();
    if !model.is_empty() {
        label.push_str(" · ");
        label.push_str(&model.join(" "));
    }
    label
}

/// The marker text of a compaction: "compacted by claude-code (manual, 15,321 tokens before):
/// summary at seq 5, 1 block preserved".
pub fn compaction_label(compaction: &sna_history::Compaction) -> String {
    let mut how = vec![compaction.trigger.to_string()];
    if let Some(tokens) = compaction.tokens_before {
        how.push(format!("{tokens} tokens before"));
    }
    let preserved = match compaction.preserved.len() {
        0 => String::new(),
        1 => ", 1 block preserved".to_string(),
        n => format!(", {n} blocks preserved"),
    };
    format!("compacted by {} ({}): summary at seq {}{preserved}", compaction.runtime, how.join(", "), compaction.summary_seq)
}

struct Paint(bool);

impl Paint {
    fn wrap(&self, code: &str, text: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

fn head(block: &Block) -> String {
    let who = block.actor.to_string();
    let what = match block.kind {
        Kind::ToolUse => format!("tool call {}", block.tool.as_ref().and_then(|t| t.name.as_deref()).unwrap_or("?")),
        Kind::ToolResult => {
            let failed = block.tool.as_ref().and_then(|t| t.is_error).unwrap_or(false);
            if failed { "tool error".to_string() } else { "tool result".to_string() }
        }
        other => other.to_string(),
    };
    format!("{who} {what}")
}

/// Writes the timeline; `color` for a terminal. `around` = (seq, n): only block `seq` (marked)
/// and the `n` blocks on each side of it.
pub fn timeline(session: &Session, out: &mut impl Write, color: bool, around: Option<(u64, u64)>) -> std::io::Result<()> {
    let paint = Paint(color);
    let info = session.info().map_err(std::io::Error::other)?;
    let blocks = match around {
        Some((seq, n)) => session.blocks_range(seq.saturating_sub(n), seq.saturating_add(n).saturating_add(1)),
        None => session.blocks(),
    }
    .map_err(std::io::Error::other)?;
    let switches = session.switches().map_err(std::io::Error::other)?;
    let compactions = session.compactions().map_err(std::io::Error::other)?;
    writeln!(out, "{}", paint.wrap("1", &visible(&format!("{} — {}", info.id, info.title.as_deref().unwrap_or("(untitled)")))))?;
    let (providers, models) = (info.providers.join(", "), info.models.join(", "));
    writeln!(out, "runtimes: {}   models: {}   blocks: {}", visible(&providers), visible(&models), info.block_count)?;
    for block in &blocks {
        if let Some(switch) = switches.iter().find(|s| s.seq == block.seq) {
            let label = switch_label(switch.from.is_none(), switch.to.provider.as_deref(), switch.to.model_provider.as_deref(), switch.to.model.as_deref());
            writeln!(out, "{}", paint.wrap("35", &visible(&format!("── {label} ──"))))?;
        }
        if let Some(compaction) = compactions.iter().find(|c| c.boundary_seq == block.seq) {
            writeln!(out, "{}", paint.wrap("33", &visible(&format!("══ {} ══", compaction_label(compaction)))))?;
        }
        let time = &block.created_at.to_rfc3339()[11..19];
        let colour = match (block.actor, block.kind) {
            (_, Kind::Status) => "2",
            (_, Kind::Error) => "31",
            (Actor::User, _) => "36",
            (Actor::Assistant, _) => "32",
            _ => "33",
        };
        let body = match block.kind {
            Kind::Thinking => format!("[thinking] {}", clip(&block.content, 80)),
            Kind::Status => clip(&block.content, 100),
            _ => block.content.trim_end().to_string(),
        };
        let by = block.model.as_deref().map(|m| format!(" ({})", visible(m))).unwrap_or_default();
        let embeds = if block.embeds.is_empty() {
            String::new()
        } else {
            format!("  [{}]", block.embeds.values().map(|e| format!("{} {} bytes", visible(&e.mime), e.size)).collect::<Vec<_>>().join(", "))
        };
        let status = if block.kind == Kind::Status { format!(": {body}") } else { String::new() };
        let mark = match around {
            Some((seq, _)) if seq == block.seq => paint.wrap("1;33", "▶"),
            Some(_) => " ".to_string(),
            None => String::new(),
        };
        writeln!(out, "{mark}{} {}{}{}{}", paint.wrap("2", &format!("{:>4} {time}", block.seq)), paint.wrap(colour, &visible(&head(block))), paint.wrap("2", &by), paint.wrap("2", &visible(&status)), embeds)?;
        if block.kind != Kind::Status {
            for line in body.lines() {
                writeln!(out, "{}          {}", if around.is_some() { " " } else { "" }, visible(line))?;
            }
        }
    }
    Ok(())
}
