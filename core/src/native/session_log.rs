//! A runtime's own session file, read by a live driver for what it records: the blocks the
//! runtime's file gained, exactly as an import of the whole file gives them, so that live capture
//! and a later import agree (the ACP driver, `acp_live`, reads through it).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::model::Block;
use crate::native::adapter::{Growth, LineReader};
use crate::native::jsonl::complete_len;
use crate::native::live::LiveSpec;

/// The runtime's session file, read for what the driver records.
pub(crate) trait SessionLog: Send {
    /// Learns the id of a new session, once `session/new` answered.
    fn opened(&mut self, session: &str);
    /// After a `session/load` went quiet: whatever the file holds now counts as recorded, for a
    /// runtime that rewrites its file when it loads one. Default: nothing (what a load appends is
    /// recorded).
    fn loaded(&mut self) {}
    /// The blocks not recorded yet: all of them (`all`), or during a turn only those that are final.
    fn take(&mut self, all: bool) -> Vec<Block>;
    /// The next `take(true)` reads what is there without waiting for a turn's closing record (the
    /// process is gone). Default: nothing (a log that never waits).
    fn no_wait(&mut self) {}
    /// A turn starts: the blocks of what the file gained since the last turn ended (a record that
    /// closed it late), so that they go out before the turn's own. Default: none.
    fn turn_starts(&mut self) -> Vec<Block> {
        Vec::new()
    }
}

/// A JSONL session file the runtime only appends to (Qwen Code's chat file, Copilot CLI's
/// `events.jsonl`), read as it grows with the import's line reader `R`: the blocks of every
/// complete line not read before, exactly as an import of the whole file gives them.
pub(crate) struct TailLog<R: LineReader> {
    /// Finds the file of a session id in the runtime's environment.
    find: fn(&BTreeMap<String, String>, &str) -> Option<PathBuf>,
    env: BTreeMap<String, String>,
    session: String,
    path: Option<PathBuf>,
    offset: u64,
    growth: Growth<R>,
    /// The block of the record that closes a turn in the file, for a runtime that writes its file
    /// a moment after it answers the prompt: the end of a turn waits for it (at most
    /// [`END_WAIT`]).
    ends: Option<fn(&Block) -> bool>,
    /// True when the last record read closes a turn (a runtime may also write it after each model
    /// call of a turn: only the last one read counts, and at the turn's end only one read then).
    end_seen: bool,
    /// The next turn's end does not wait ([`SessionLog::no_wait`]).
    skip_wait: bool,
}

/// How long the end of a turn waits for the record that closes it in the file, and how long the
/// file may stay unchanged meanwhile (a cancelled turn may get no such record).
const END_WAIT: Duration = Duration::from_secs(2);
const END_QUIET: Duration = Duration::from_millis(300);

impl<R: LineReader> TailLog<R> {
    /// The log of `spec`'s session: for a resumed one, its file as it is now counts as recorded
    /// (`NOT_FOUND` when there is none, naming `what` and where it was looked for).
    pub(crate) fn new(spec: &LiveSpec, find: fn(&BTreeMap<String, String>, &str) -> Option<PathBuf>, what: &str) -> Result<TailLog<R>> {
        let mut log = TailLog { find, env: spec.env.clone(), session: String::new(), path: None, offset: 0, growth: Growth::default(), ends: None, end_seen: false, skip_wait: false };
        if let Some(id) = &spec.resume {
            let path = find(&spec.env, id).ok_or_else(|| Error::NotFound(format!("no {what} of session {id} in the runtime's home (HOME={})", spec.env.get("HOME").map_or("unset", String::as_str))))?;
            let mut recorded = std::fs::read(&path).map_err(|e| Error::Io { context: format!("cannot read {}", path.display()), source: e })?;
            recorded.truncate(complete_len(&recorded));
            log.offset = recorded.len() as u64;
            // Read for the state its lines set; their blocks are recorded already.
            let _ = log.growth.blocks(recorded);
            log.session = id.clone();
            log.path = Some(path);
        }
        Ok(log)
    }

    /// The end of a turn waits for the block `ends` recognises (see [`TailLog::ends`]).
    pub(crate) fn ended_by(mut self, ends: fn(&Block) -> bool) -> Self {
        self.ends = Some(ends);
        self
    }

    /// The blocks of the complete lines added since the last read.
    fn read(&mut self) -> Vec<Block> {
        if self.path.is_none() && !self.session.is_empty() {
            self.path = (self.find)(&self.env, &self.session);
        }
        let Some(path) = &self.path else { return Vec::new() };
        let blocks = self.growth.read_grown(path, &mut self.offset);
        if let (Some(ends), Some(last)) = (self.ends, blocks.iter().rev().find(|b| b.native.as_ref().is_some_and(|n| n.data.get("record").is_some()))) {
            self.end_seen = ends(last);
        }
        blocks
    }
}

impl<R: LineReader> SessionLog for TailLog<R>
where
    R::State: Send,
{
    fn opened(&mut self, session: &str) {
        self.session = session.to_string();
    }

    fn take(&mut self, all: bool) -> Vec<Block> {
        if all {
            // Only a closing record read from now on ends the turn: one read before may have
            // closed a model call of it, not the turn.
            self.end_seen = false;
        }
        let mut blocks = self.read();
        if all && self.ends.is_some() {
            let deadline = Instant::now() + if self.skip_wait { Duration::ZERO } else { END_WAIT };
            let mut changed = Instant::now();
            while !self.end_seen && Instant::now() < deadline && changed.elapsed() < END_QUIET {
                std::thread::sleep(Duration::from_millis(20));
                let more = self.read();
                if !more.is_empty() {
                    changed = Instant::now();
                }
                blocks.extend(more);
            }
            self.end_seen = false;
            self.skip_wait = false;
        }
        blocks
    }

    fn no_wait(&mut self) {
        self.skip_wait = true;
    }

    fn turn_starts(&mut self) -> Vec<Block> {
        let blocks = self.read();
        self.end_seen = false;
        blocks
    }
}
