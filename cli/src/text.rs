//! Text that reaches a terminal: stored text made harmless ([`visible`]), clipped to a line, and the
//! labels of the markers a timeline shows (a runtime or model switch, a compaction).

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
