//! The rollout a resume needs, under `<codex home>/sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::Block;
use crate::model::ids::is_uuid;
use crate::native::adapter::{Reported, ResumeFiles};
use crate::native::common::{absolute_cwd, runtime_dir};
use crate::native::splice::{NativeText, Splices};
use crate::native::types::ResumeOptions;
use crate::store::Session;

use super::export::{rollout, RolloutContext};

/// The rollout for `<codex home>/sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl`, the rollouts of the
/// same thread written earlier under other dates (replaced: one file per thread), and the command.
pub(super) fn resume_files(session: &Session, mut blocks: Vec<Block>, splices: Splices, options: &ResumeOptions) -> Result<Reported<ResumeFiles>> {
    let mut ctx = RolloutContext::for_session(session, &blocks, &options.options)?;
    if let Some(id) = &options.options.session_id {
        if !is_uuid(id) {
            return Err(Error::invalid_field("session_id", format!("Codex thread ids are UUIDs, not {id:?}")));
        }
        ctx.thread_id = id.to_ascii_lowercase();
    }
    if let Some(cwd) = &options.cwd {
        ctx.cwd = Some(absolute_cwd(cwd)?.to_string());
    }
    let (codex_home, env) = runtime_dir(options.codex_home.as_deref(), options.home.as_deref(), "CODEX_HOME", ".codex")?;
    let (lines, report) = rollout(session, &mut blocks, splices, &options.options, &ctx)?;
    // Use the thread id the file names itself, when it has one.
    let thread_id = lines
        .iter()
        .map(|l| &l.value)
        .find(|l| l.get("type").and_then(Value::as_str) == Some("session_meta"))
        .and_then(|l| l["payload"].get("id").and_then(Value::as_str))
        .filter(|id| is_uuid(id))
        .map(str::to_string)
        .unwrap_or(ctx.thread_id.clone());
    let created = ctx.created.to_datetime();
    let dir = codex_home.join("sessions").join(created.format("%Y").to_string()).join(created.format("%m").to_string()).join(created.format("%d").to_string());
    let named = dir.join(format!("rollout-{}-{thread_id}.jsonl", created.format("%Y-%m-%dT%H-%M-%S")));
    if named.parent() != Some(dir.as_path()) {
        return Err(Error::invalid_field("session_id", "the thread id would escape the sessions folder"));
    }
    // A thread Codex already has a rollout of is written back under that rollout's name: Codex's
    // own index keeps the path of each thread, and refuses to resume it from another
    // ("cannot resume paginated thread ... with stale path"). The replayed blocks' first time,
    // which names a new rollout, changes between replays (a compaction, a switch in between).
    let mut earlier = other_rollouts(&codex_home.join("sessions"), &thread_id, &named);
    earlier.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    let file = if named.exists() { named } else { earlier.pop().unwrap_or(named) };
    let replaces = other_rollouts(&codex_home.join("sessions"), &thread_id, &file);
    let text = NativeText::Lines(lines).into_string()?;
    let files = ResumeFiles {
        native_id: thread_id.clone(),
        file,
        text,
        replaces,
        argv: vec!["codex".into(), "exec".into(), "resume".into(), thread_id],
        cwd: ctx.cwd.map(PathBuf::from),
        env,
        setup: Vec::new(),
        notes: Vec::new(),
    };
    Ok(Reported { value: files, report })
}

/// The rollouts of `thread_id` under `sessions` other than `keep`.
fn other_rollouts(sessions: &Path, thread_id: &str, keep: &Path) -> Vec<PathBuf> {
    let suffix = format!("-{thread_id}.jsonl");
    let mut found = Vec::new();
    let Ok(years) = std::fs::read_dir(sessions) else { return found };
    for year in years.flatten() {
        for month in std::fs::read_dir(year.path()).into_iter().flatten().flatten() {
            for day in std::fs::read_dir(month.path()).into_iter().flatten().flatten() {
                for file in std::fs::read_dir(day.path()).into_iter().flatten().flatten() {
                    let path = file.path();
                    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    if name.starts_with("rollout-") && name.ends_with(&suffix) && path != keep {
                        found.push(path);
                    }
                }
            }
        }
    }
    found
}
