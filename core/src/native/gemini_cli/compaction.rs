//! Gemini CLI's chat compression (`/compress`, or automatic past a share of the model's window):
//! the CLI writes no record of its own for it. It sets the session's message list anew
//! (`$set.messages`, as a resume does): the session context, a user message holding the model's
//! `<state_snapshot>` summary, the CLI's own acknowledgement, then copies (new ids) of the newest
//! turns it kept. An import loads that list, so the summary message is the first block of the
//! conversation after the compression, and everything older is kept as status blocks.

use crate::model::{Actor, Block, Kind, Trigger};
use crate::native::adapter::{Found, Needle, Preserved};

/// The text every summary message starts with.
const SNAPSHOT: &str = "<state_snapshot>";

/// Every summary message's content holds the snapshot tag.
pub(super) const NEEDLES: &[Needle] = &[Needle::Content(SNAPSHOT)];

/// The compression `window[0]` records, if it is the summary message of one.
pub(super) fn read(window: &[Block]) -> Option<Found> {
    let first = window.first()?;
    if first.actor != Actor::User || first.kind != Kind::Text || !first.content.trim_start().starts_with(SNAPSHOT) {
        return None;
    }
    Some(Found {
        summary_at: 0,
        summary: first.content.clone(),
        // The summary and the turns kept follow in the session as the CLI loads it.
        stand_in: Vec::new(),
        replaced: Vec::new(),
        preserved: Preserved::None,
        trigger: Trigger::Unknown,
        tokens_before: None,
        loss: None,
    })
}
