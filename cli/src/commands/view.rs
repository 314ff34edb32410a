//! `sna view`: a session as one self-contained HTML file (no network resources). The page is the
//! timeline of the web UI (`crate::ui`, shared with `sna serve`): its stylesheet and timeline
//! scripts are inlined, the session's blocks and switches travel as JSON in
//! `<script type="application/json" id="sna-data">`, each text with its Markdown rendered to HTML
//! (`crate::markdown`, as `sna serve` renders it), and the scripts draw them (thinking and tool
//! calls collapsible with their results, a marker wherever the runtime or the model changes).
//! Images are inlined as data URLs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use base64::Engine as _;
use serde_json::{json, Value};
use sna_history::Session;

use crate::args::ViewArgs;
use crate::failure::{Failure, Outcome};
use crate::markdown::{self, escape};
use crate::setup::open;
use crate::ui;

pub fn run(args: ViewArgs, db: Option<PathBuf>) -> Outcome {
    let ViewArgs { id, output, redact } = args;
    let store = open(db)?;
    let session = store.session(&id)?;
    let html = html(&session, redact)?;
    std::fs::write(&output, html).map_err(|e| Failure(format!("cannot write {}: {e}", output.display())))?;
    eprintln!("wrote {}", output.display());
    Ok(())
}

/// JSON that can sit inside a `<script>` element: no `<` at all (so neither `</script>` nor
/// `<!--` can end or change the element), written as the JSON escape `\u003c`. `<` only occurs
/// inside JSON strings, where the escape means the same character.
fn script_json(value: &Value) -> String {
    value.to_string().replace('<', "\\u003c")
}

/// A script's text inside `<script>`: `</script` cannot occur in our own files, but make sure.
fn script_text(code: &str) -> String {
    code.replace("</script", "<\\/script")
}

/// The HTML of the session; with `redact`, secrets replaced by `[REDACTED:<kind>]`.
fn html(session: &Session, redact: bool) -> sna_history::Result<String> {
    let info = session.info()?;
    let mut blocks = session.blocks()?;
    if redact {
        sna_history::redact::redact_blocks(&mut blocks);
    }
    let switches = session.switches()?;
    let compactions = session.compactions()?;
    // Image bytes as data URLs, by embed id; other embeds are named, not inlined.
    let mut embeds: BTreeMap<String, String> = BTreeMap::new();
    for block in &blocks {
        for (id, embed) in &block.embeds {
            if embeds.contains_key(id) || !embed.mime.starts_with("image/") {
                continue;
            }
            let data = base64::engine::general_purpose::STANDARD.encode(session.embed(id)?);
            embeds.insert(id.clone(), format!("data:{};base64,{data}", embed.mime));
        }
    }
    // The runtimes' own records and reasoning tokens stay out of the page; the Markdown of the
    // text comes rendered (`html`).
    let blocks: Vec<Value> = blocks
        .iter()
        .map(|block| {
            let mut value = serde_json::to_value(block).unwrap_or(Value::Null);
            if let Some(fields) = value.as_object_mut() {
                fields.remove("native");
                fields.remove("reasoning");
                if let Some(html) = ui::block_html(block) {
                    fields.insert("html".into(), html.into());
                }
            }
            value
        })
        .collect();
    let compactions: Vec<Value> = compactions
        .iter()
        .map(|compaction| {
            let mut value = serde_json::to_value(compaction).unwrap_or(Value::Null);
            if let Some(fields) = value.as_object_mut() {
                fields.insert("html".into(), markdown::to_html(&compaction.summary).into());
            }
            value
        })
        .collect();
    let data = json!({
        "session": ui::session_json(&info, None),
        "blocks": blocks,
        "switches": switches,
        "compactions": compactions,
        "embeds": embeds,
        "redacted": redact,
        "usage": session.usage(None)?,
        "generator": concat!("sna view ", env!("CARGO_PKG_VERSION")),
    });
    let title = info.title.clone().unwrap_or_else(|| info.id.clone());
    // The timeline's scripts in one element, in their order (each is a function of its own).
    let scripts: String = ui::TIMELINE_SCRIPTS.iter().map(|(_, code)| script_text(code)).collect();
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · sna</title>\n<style>\n{}</style></head>\n<body class=\"view-page\">\n\
         <header class=\"page-header\" id=\"page-header\"><div class=\"bar\"><h1 id=\"title\">{}</h1></div></header>\n\
         <main id=\"timeline\" class=\"timeline\"></main>\n\
         <noscript><p class=\"page-error\">This page shows the conversation with JavaScript; without it, the data is in the element sna-data of the page source.</p></noscript>\n\
         <script type=\"application/json\" id=\"sna-data\">{}</script>\n\
         <script>\n{}</script>\n<script>SnaTimeline.mountView();</script>\n</body></html>\n",
        escape(&title),
        ui::STYLE,
        escape(&title),
        script_json(&data),
        scripts,
    );
    Ok(out)
}
