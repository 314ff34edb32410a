//! The web UI's files (`cli/ui/`), embedded in the binary so that it stays self-contained, and the
//! JSON of a session the pages read: what `sna view` (one static page) and `sna serve` (the live
//! app) share. Neither reaches into the other; both come here.
//!
//! The scripts are classic scripts that each define one global and load in a fixed order: the
//! timeline's ([`TIMELINE_SCRIPTS`]: highlighting, labels and summaries, the timeline) first, then the live app's
//! ([`APP_SCRIPTS`]: the API client, page helpers, the list page, the session page, the router
//! last).
//!
//! Markdown is rendered here, on the server (`crate::markdown`): `sna view` puts the HTML of each
//! block beside its text in the page's data ([`block_html`]), and the live app asks `sna serve`
//! for it (`POST /ui/markdown`).

use serde_json::{json, Value};
use sna_history::host::Agent;
use sna_history::{Block, Kind, SessionInfo};

use crate::markdown;

/// The stylesheet of every page.
pub const STYLE: &str = include_str!("../ui/style.css");
/// The live app's shell (`/` and `/s/{id}`).
#[cfg_attr(not(feature = "serve"), allow(dead_code))]
pub const INDEX: &str = include_str!("../ui/index.html");
/// The login page of a server with a token.
#[cfg_attr(not(feature = "serve"), allow(dead_code))]
pub const LOGIN: &str = include_str!("../ui/login.html");
/// The page of a session the store does not hold (`/s/{id}`, a 404); `{{id}}` stands for its id.
#[cfg_attr(not(feature = "serve"), allow(dead_code))]
pub const MISSING: &str = include_str!("../ui/missing.html");

/// The scripts that render a timeline, in load order (name, text): shared by both pages.
pub const TIMELINE_SCRIPTS: [(&str, &str); 3] = [
    ("highlight.js", include_str!("../ui/highlight.js")),
    ("format.js", include_str!("../ui/format.js")),
    ("timeline.js", include_str!("../ui/timeline.js")),
];

/// The live app's scripts after the timeline's, in load order (name, text); `login.js` is the
/// login page's.
#[cfg_attr(not(feature = "serve"), allow(dead_code))]
pub const APP_SCRIPTS: [(&str, &str); 6] = [
    ("api.js", include_str!("../ui/api.js")),
    ("page.js", include_str!("../ui/page.js")),
    ("list.js", include_str!("../ui/list.js")),
    ("session.js", include_str!("../ui/session.js")),
    ("app.js", include_str!("../ui/app.js")),
    ("login.js", include_str!("../ui/login.js")),
];

/// A file of the UI by its name under `/assets/`, with its content type.
#[cfg_attr(not(feature = "serve"), allow(dead_code))]
pub fn asset(name: &str) -> Option<(&'static str, &'static str)> {
    if name == "style.css" {
        return Some((STYLE, "text/css; charset=utf-8"));
    }
    TIMELINE_SCRIPTS.iter().chain(&APP_SCRIPTS).find(|(file, _)| *file == name).map(|(_, text)| (*text, "text/javascript; charset=utf-8"))
}

/// A session as the API (and `sna view`'s data) gives it.
pub fn session_json(info: &SessionInfo, agent: Option<&Agent>) -> Value {
    json!({
        "id": info.id,
        "title": info.title,
        "label": info.title,
        "cwd": info.cwd,
        "createdAt": info.created_at,
        "updatedAt": info.updated_at,
        "blockCount": info.block_count,
        "providers": info.providers,
        "modelProviders": info.model_providers,
        "models": info.models,
        "origin": info.origin,
        "agent": agent.map(|a| {
            let s = a.status();
            json!({"alive": s.alive, "busy": s.busy, "provider": s.runtime.as_str(), "model": s.model, "pid": s.pid})
        }),
    })
}

/// The HTML of a block's text when the timeline shows it as Markdown (as `showsMarkdown` in
/// `timeline.js` decides, less its test for runtime bookkeeping): every block but errors, status
/// lines and the tool calls and results that name their tool, which show as plain text.
pub fn block_html(block: &Block) -> Option<String> {
    let plain = match block.kind {
        Kind::Error | Kind::Status => true,
        Kind::ToolUse | Kind::ToolResult => block.tool.is_some(),
        _ => false,
    };
    (!plain).then(|| markdown::to_html(&block.content))
}

#[cfg(test)]
mod tests {
    use sna_history::{Actor, Block, Kind, ToolRef};

    use super::block_html;

    #[test]
    fn text_and_thinking_come_as_html_errors_status_and_tool_blocks_as_text() {
        let said = Block::text(Actor::Assistant, "**yes**");
        assert_eq!(block_html(&said).as_deref(), Some("<p><strong>yes</strong></p>"));
        assert_eq!(block_html(&Block::new(Actor::Assistant, Kind::Thinking, "- a")).as_deref(), Some("<ul>\n<li>a</li>\n</ul>"));
        for kind in [Kind::Error, Kind::Status] {
            assert_eq!(block_html(&Block::new(Actor::System, kind, "**no**")), None, "{kind:?}");
        }
        let mut call = Block::new(Actor::Assistant, Kind::ToolUse, "{}");
        call.tool = Some(ToolRef { call_id: "c1".into(), name: Some("Bash".into()), is_error: None });
        assert_eq!(block_html(&call), None);
        // Without its tool the timeline draws it as a message: Markdown.
        call.tool = None;
        assert_eq!(block_html(&call).as_deref(), Some("<p>{}</p>"));
    }
}
