//! The session file a resume needs, under `<agent dir>/sessions/--<cwd>--/<time>_<id>.jsonl`, and
//! the `pi --session <file>` that resumes it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::json::jsonl_text;
use crate::model::{Block, Timestamp};
use crate::native::adapter::{Reported, ResumeFiles};
use crate::native::common::{absolute_cwd, runtime_dir};
use crate::native::types::ResumeOptions;
use crate::store::Session;

use super::export::{entries, is_acceptable_id, EntryContext};
use super::records::HEADER;

/// The folder Pi keeps a working directory's sessions in: `--` + the cwd without its leading `/`
/// (or `\`), every `/`, `\` and `:` made `-`, + `--`.
pub fn session_dir_name(cwd: &str) -> String {
    let trimmed = cwd.strip_prefix(['/', '\\']).unwrap_or(cwd);
    let body: String = trimmed.chars().map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c }).collect();
    format!("--{body}--")
}

/// The file-name form of a header timestamp: `:` and `.` made `-`; `None` when the text holds
/// anything but digits, `-`, `:`, `.`, `T` and `Z`.
fn file_time(timestamp: &str) -> Option<String> {
    let ok = !timestamp.is_empty() && timestamp.chars().all(|c| c.is_ascii_digit() || matches!(c, '-' | ':' | '.' | 'T' | 'Z'));
    ok.then(|| timestamp.replace([':', '.'], "-"))
}

/// Pi's agent directory (`~/.pi/agent`) and the environment that names it for the resumed command.
fn agent_dir(options: &ResumeOptions) -> Result<(PathBuf, BTreeMap<String, String>)> {
    runtime_dir(options.config_dir.as_deref(), options.home.as_deref(), "PI_CODING_AGENT_DIR", ".pi/agent")
}

/// The file of Pi session `native_id` under the agent directory the environment `env` names
/// (`PI_CODING_AGENT_SESSION_DIR`, `PI_CODING_AGENT_DIR`, else `$HOME/.pi/agent`), in any working
/// directory's folder; `None` when there is none.
pub(super) fn find_session_file(env: &BTreeMap<String, String>, native_id: &str) -> Option<PathBuf> {
    if !is_acceptable_id(native_id) {
        return None;
    }
    let root = match (env.get("PI_CODING_AGENT_SESSION_DIR"), env.get("PI_CODING_AGENT_DIR"), env.get("HOME")) {
        (Some(dir), _, _) => PathBuf::from(dir),
        (None, Some(dir), _) => Path::new(dir).join("sessions"),
        (None, None, Some(home)) => Path::new(home).join(".pi/agent/sessions"),
        (None, None, None) => crate::native::common::home_dir().ok()?.join(".pi/agent/sessions"),
    };
    let suffix = format!("_{native_id}.jsonl");
    let mut found: Vec<PathBuf> = std::fs::read_dir(root)
        .ok()?
        .filter_map(|dir| std::fs::read_dir(dir.ok()?.path()).ok())
        .flatten()
        .filter_map(|f| f.ok().map(|f| f.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(&suffix)))
        .collect();
    found.sort();
    found.pop()
}

/// Makes the first record a header Pi accepts (a `session` line with the string `id` and the
/// `cwd` of the resume), so that `--session` never takes the file for empty and truncates it.
fn check_header(records: &mut [Value], ctx: &EntryContext) -> Result<()> {
    let Some(Value::Object(header)) = records.first_mut() else {
        return Err(Error::invalid("the session has nothing to write"));
    };
    if header.get("type").and_then(Value::as_str) != Some(HEADER) {
        return Err(Error::invalid("the first line of the written file would not be a Pi session header (Pi would truncate the file)"));
    }
    if header.get("id").and_then(Value::as_str) != Some(ctx.session_id.as_str()) {
        header.insert("id".into(), Value::String(ctx.session_id.clone()));
    }
    if header.get("cwd").and_then(Value::as_str) != Some(ctx.cwd.as_str()) {
        header.insert("cwd".into(), Value::String(ctx.cwd.clone()));
    }
    if !header.get("version").is_some_and(Value::is_u64) {
        header.insert("version".into(), Value::from(3));
    }
    Ok(())
}

/// The session file for `<agent dir>/sessions/--<cwd>--/<time>_<id>.jsonl` and the command that
/// resumes it.
pub(super) fn resume_files(session: &Session, mut blocks: Vec<Block>, options: &ResumeOptions) -> Result<Reported<ResumeFiles>> {
    let mut ctx = EntryContext::for_session(session, &blocks)?;
    if let Some(id) = &options.options.session_id {
        ctx.session_id = id.clone();
    }
    if !is_acceptable_id(&ctx.session_id) {
        return Err(Error::invalid_field(
            "session_id",
            format!("{:?} cannot name a Pi session file (1 to 128 of A-Z a-z 0-9 . _ -)", ctx.session_id),
        ));
    }
    let cwd = options.cwd.clone().unwrap_or_else(|| PathBuf::from(&ctx.cwd));
    ctx.cwd = absolute_cwd(&cwd)?.to_string();
    let first_time = blocks.first().map_or_else(Timestamp::now, |b| b.created_at);
    let (mut records, report) = entries(session, &mut blocks, &options.options, &ctx)?;
    check_header(&mut records, &ctx)?;
    let time = records[0]
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(file_time)
        .unwrap_or_else(|| file_time(&first_time.to_rfc3339()).unwrap_or_default());
    let (agent, env) = agent_dir(options)?;
    let dir = agent.join("sessions").join(session_dir_name(&ctx.cwd));
    let name = format!("{time}_{}.jsonl", ctx.session_id);
    let file = dir.join(&name);
    if file.parent() != Some(dir.as_path()) {
        return Err(Error::invalid_field("session_id", "the session id would escape the sessions folder"));
    }
    // An earlier file of the same session (another header time) would be a second copy.
    let suffix = format!("_{}.jsonl", ctx.session_id);
    let mut replaces: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(&suffix) && n != name))
        .collect();
    replaces.sort();
    let text = jsonl_text(records.iter())?;
    let mut argv = vec!["pi".to_string(), "--session".to_string(), file.display().to_string()];
    if let Some(model) = &options.options.target_model {
        if let Some(provider) = &options.options.model_provider {
            argv.extend(["--provider".to_string(), provider.clone()]);
        }
        argv.extend(["--model".to_string(), model.clone()]);
    }
    let files = ResumeFiles { native_id: ctx.session_id, file, text, replaces, argv, cwd: Some(cwd), env, setup: Vec::new(), notes: Vec::new() };
    Ok(Reported { value: files, report })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_follow_pi() {
        assert_eq!(session_dir_name("/home/dev/project"), "--home-dev-project--");
        assert_eq!(session_dir_name("C:\\work\\x"), "--C--work-x--");
        assert_eq!(session_dir_name("/a-b"), session_dir_name("/a/b"), "the mapping is lossy, as Pi's");
    }

    #[test]
    fn a_bound_session_is_found_by_its_id() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(".pi/agent/sessions/--home-dev-project--");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("2026-12-04T14-51-46-454Z_01a2418a-3596-72ce-b1dd-f362a724cc59.jsonl");
        std::fs::write(&file, "{}\n").unwrap();
        let env = BTreeMap::from([("HOME".to_string(), home.path().display().to_string())]);
        assert_eq!(find_session_file(&env, "01a2418a-3596-72ce-b1dd-f362a724cc59"), Some(file));
        assert_eq!(find_session_file(&env, "01a2418a"), None, "an id, not a prefix");
        assert_eq!(find_session_file(&env, "../x"), None);
        let env = BTreeMap::from([("PI_CODING_AGENT_DIR".to_string(), home.path().join("none").display().to_string())]);
        assert_eq!(find_session_file(&env, "01a2418a-3596-72ce-b1dd-f362a724cc59"), None);
    }

    #[test]
    fn file_times_replace_colons_and_dots() {
        assert_eq!(file_time("2026-12-04T14:51:46.454Z").as_deref(), Some("2026-12-04T14-51-46-454Z"));
        assert_eq!(file_time("../x"), None);
        assert_eq!(file_time(""), None);
    }
}
