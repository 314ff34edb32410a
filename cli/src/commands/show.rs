//! `sna show`: a session as a readable timeline — actor, kind and attribution per block, tool
//! calls with their results, thinking collapsed to its first line, and a marker line where the
//! runtime or the model changes and where a runtime compacted the conversation.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use sna_history::{Actor, Block, Kind, Session};

use crate::args::ShowArgs;
use crate::failure::{Failure, Outcome};
use crate::setup::open;
use crate::text::{clip, compaction_label, switch_label, visible};

pub fn run(args: ShowArgs, db: Option<PathBuf>) -> Outcome {
    let ShowArgs { id, json, at, context } = args;
    let store = open(db)?;
    let session = store.session(&id)?;
    let around = at.map(|seq| (seq, context));
    if let Some(seq) = at {
        let len = session.len()?;
        if seq >= len {
            return Err(Failure(format!("session {} has {len} blocks: no block at seq {seq}", visible(&id))));
        }
    }
    let mut out = std::io::stdout().lock();
    if json {
        let blocks = match around {
            Some((seq, n)) => session.blocks_range(seq.saturating_sub(n), seq.saturating_add(n).saturating_add(1))?,
            None => session.blocks()?,
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&blocks).map_err(|e| Failure(e.to_string()))?)?;
    } else {
        timeline(&session, &mut out, std::io::stdout().is_terminal(), around)?;
    }
    Ok(())
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
fn timeline(session: &Session, out: &mut impl Write, color: bool, around: Option<(u64, u64)>) -> std::io::Result<()> {
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
