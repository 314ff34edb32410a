//! The files of a Gemini CLI resume (gemini-cli.md §5).
//!
//! When the user's `settings.json` turns session cleanup off (`general.sessionRetention.enabled:
//! false`), the log goes where `gemini --resume <id>` finds it: `~/.gemini/tmp/<short>/chats/
//! session-<minute>-<id8>.jsonl`, with the project registered in `projects.json` and its
//! `.project_root` markers. Otherwise the CLI's cleanup would delete that file on a later run (every
//! file sharing the resumed session's short id), so the log goes to sna-history's own directory
//! (`~/.local/share/sna-history/gemini-cli/<id>.jsonl`) and the command is `gemini --session-file
//! <file>`, which the CLI copies into its own store under a new session id. The user's settings
//! file is read, never written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::json::jsonl_text;
use crate::model::Timestamp;
use crate::native::adapter::ResumeFiles;
use crate::native::common::{absolute_cwd, home_dir};
use crate::native::types::{ResumeOptions, ResumePlan};
use crate::store::Session;

use super::export::project_hash;

/// The project short name the CLI makes of a root: the basename's slug.
pub(super) fn slug(root: &str) -> String {
    let base = Path::new(root).file_name().and_then(|n| n.to_str()).unwrap_or("").to_lowercase();
    let mut out = String::new();
    for c in base.chars() {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() { c } else { '-' };
        if !(c == '-' && out.ends_with('-')) {
            out.push(c);
        }
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() { "project".into() } else { out }
}

/// `~/.gemini/projects.json`'s map from roots to short names.
fn registry(gemini: &Path) -> serde_json::Map<String, Value> {
    std::fs::read_to_string(gemini.join("projects.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.get("projects").and_then(Value::as_object).cloned())
        .unwrap_or_default()
}

/// The short name of `root`: the registered one, else the one a marker claims, else a free slug.
pub(super) fn short_name(gemini: &Path, root: &str) -> String {
    let projects = registry(gemini);
    if let Some(short) = projects.get(root).and_then(Value::as_str) {
        return short.to_string();
    }
    let base = slug(root);
    for n in 0.. {
        let short = if n == 0 { base.clone() } else { format!("{base}-{n}") };
        let marker = std::fs::read_to_string(gemini.join("tmp").join(&short).join(".project_root")).ok();
        let taken = projects.values().any(|v| v.as_str() == Some(&short));
        match marker {
            Some(owner) if owner.trim() == root => return short,
            Some(_) => continue,
            None if taken => continue,
            None => return short,
        }
    }
    base
}

/// True when the settings turn session cleanup off.
fn retention_off(gemini: &Path) -> bool {
    std::fs::read_to_string(gemini.join("settings.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.get("general")?.get("sessionRetention")?.get("enabled")?.as_bool())
        == Some(false)
}

/// The log for the resume of `session` and how to run it.
pub(super) fn resume_files(session: &Session, mut records: Vec<Value>, options: &ResumeOptions) -> Result<ResumeFiles> {
    if records.is_empty() {
        return Err(Error::invalid("the session has no blocks to resume"));
    }
    let home = match &options.home {
        Some(home) => home.clone(),
        None => home_dir()?,
    };
    let cwd = options.cwd.clone().or_else(|| session.info().ok().and_then(|i| i.cwd.map(PathBuf::from))).ok_or_else(|| {
        Error::invalid_field("cwd", "a Gemini CLI session belongs to a project directory: give cwd (the session records none)")
    })?;
    let root = absolute_cwd(&cwd)?.trim_end_matches('/').to_string();
    let header = records[0].as_object_mut().ok_or_else(|| Error::Internal("the log has no header".into()))?;
    let id = header.get("sessionId").and_then(Value::as_str).unwrap_or("").to_string();
    if id.len() < 8 || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Err(Error::invalid_field("session_id", format!("{id:?} cannot name a Gemini CLI session file (letters, digits and '-', at least 8)")));
    }
    header.insert("projectHash".into(), json!(project_hash(&root)));
    let start = header.get("startTime").and_then(Value::as_str).and_then(|t| Timestamp::parse_rfc3339(t).ok()).unwrap_or_else(Timestamp::now);
    let text = jsonl_text(&records)?;
    let gemini = home.join(".gemini");
    let mut env = BTreeMap::new();
    if options.home.is_some() {
        env.insert("HOME".into(), home.display().to_string());
    }
    if !retention_off(&gemini) {
        let file = home.join(".local").join("share").join("sna-history").join("gemini-cli").join(format!("{id}.jsonl"));
        return Ok(ResumeFiles {
            native_id: id,
            argv: vec!["gemini".into(), "--session-file".into(), file.display().to_string()],
            file,
            text,
            replaces: Vec::new(),
            cwd: Some(cwd),
            env,
            setup: Vec::new(),
            notes: vec![format!(
                "{} does not turn Gemini CLI's session cleanup off (general.sessionRetention.enabled: false), which would delete a session file placed for `gemini --resume` on a later run; the log is kept in sna-history's directory and goes in by `--session-file`, under a session id the CLI makes (printed as session_id by `-o json` or `-o stream-json`)",
                gemini.join("settings.json").display()
            )],
        });
    }
    let chats = gemini.join("tmp").join(short_name(&gemini, &root)).join("chats");
    // A name in a minute other than now's: a resume in the minute of the file's name rewrites it.
    let now = Timestamp::now().as_millis() / 60_000;
    let minute = if start.as_millis() / 60_000 == now { Timestamp::from_millis((now - 1) * 60_000)? } else { start };
    let stamp: String = minute.to_rfc3339().chars().take(16).collect::<String>().replace(':', "-");
    let id8: String = id.chars().take(8).collect();
    let file = chats.join(format!("session-{stamp}-{id8}.jsonl"));
    let replaces = earlier_files(&chats, &id, &id8, &file);
    Ok(ResumeFiles {
        native_id: id.clone(),
        file,
        text,
        replaces,
        argv: vec!["gemini".into(), "--resume".into(), id],
        cwd: Some(cwd),
        env,
        setup: Vec::new(),
        notes: vec!["Gemini CLI's session cleanup is off in its settings, so the log was placed where `gemini --resume` finds it; turning cleanup on again would let a later run delete it".into()],
    })
}

/// Logs in `chats` of the same session written before under another name.
fn earlier_files(chats: &Path, id: &str, id8: &str, file: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(chats) else { return Vec::new() };
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p != file && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("session-") && n.ends_with(&format!("-{id8}.jsonl"))))
        .filter(|p| {
            let first = std::fs::read_to_string(p).ok().and_then(|t| t.lines().next().and_then(|l| serde_json::from_str::<Value>(l).ok()));
            first.and_then(|h| h.get("sessionId").and_then(Value::as_str).map(|s| s == id)).unwrap_or(false)
        })
        .collect()
}

/// Registers the project of a `--resume` log (written under `tmp/<short>/chats/`) as the CLI
/// does: its root in `projects.json` and `.project_root` markers in `tmp/<short>/` and
/// `history/<short>/`. Nothing to do for a `--session-file` log.
pub(super) fn register_project(plan: &mut ResumePlan, _options: &ResumeOptions) -> Result<()> {
    if plan.argv.get(1).map(String::as_str) != Some("--resume") {
        return Ok(());
    }
    let (Some(file), Some(cwd)) = (plan.files.first(), plan.cwd.as_ref()) else { return Ok(()) };
    let root = absolute_cwd(cwd)?.trim_end_matches('/').to_string();
    let Some(project) = file.parent().and_then(Path::parent) else { return Ok(()) };
    let Some(gemini) = project.parent().and_then(Path::parent) else { return Ok(()) };
    let short = project.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
    let io = |what: String| move |source: std::io::Error| Error::Io { context: what, source };
    for marker in [project.join(".project_root"), gemini.join("history").join(&short).join(".project_root")] {
        if !marker.exists() {
            std::fs::create_dir_all(marker.parent().unwrap_or(project)).map_err(io(format!("cannot create {}", marker.display())))?;
            std::fs::write(&marker, &root).map_err(io(format!("cannot write {}", marker.display())))?;
        }
    }
    let mut projects = registry(gemini);
    if projects.get(&root).and_then(Value::as_str) != Some(short.as_str()) {
        projects.insert(root, json!(short));
        let text = serde_json::to_string_pretty(&json!({"projects": projects})).map_err(|e| Error::Internal(e.to_string()))?;
        crate::native::common::write_private(&gemini.join("projects.json"), text.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_follow_the_cli() {
        assert_eq!(slug("/home/dev/project"), "project");
        assert_eq!(slug("/home/dev/My Repo.v2"), "my-repo-v2");
        assert_eq!(slug("/home/dev/--x__"), "x");
        assert_eq!(slug("/"), "project");
    }
}
