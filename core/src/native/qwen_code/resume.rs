//! The chat file a resume needs, `<Qwen home>/projects/<cwd folder>/chats/<id>.jsonl`, and the
//! `qwen --resume <id>` that goes on from it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::json::jsonl_text;
use crate::model::Block;
use crate::native::adapter::{Reported, ResumeFiles};
use crate::native::common::{absolute_cwd, runtime_dir};
use crate::native::types::ResumeOptions;
use crate::store::Session;

use super::export::{records, Context};
use super::records::is_session_id;

/// The folder Qwen Code keeps a working directory's chats under: the path with every character
/// but ASCII letters, digits and `-` made `-` (`/home/dev/project` → `-home-dev-project`).
pub fn project_folder(cwd: &str) -> String {
    cwd.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' }).collect()
}

/// Qwen Code's home (`QWEN_HOME`, else `~/.qwen`) and the environment that names it.
fn qwen_home(options: &ResumeOptions) -> Result<(PathBuf, BTreeMap<String, String>)> {
    runtime_dir(options.config_dir.as_deref(), options.home.as_deref(), "QWEN_HOME", ".qwen")
}

/// The chat file of session `native_id` under the Qwen home the environment `env` names
/// (`QWEN_HOME`, else `$HOME/.qwen`), in any project's folder; `None` when there is none.
pub(super) fn find_chat_file(env: &BTreeMap<String, String>, native_id: &str) -> Option<PathBuf> {
    if !is_session_id(native_id) {
        return None;
    }
    let home = match (env.get("QWEN_HOME"), env.get("HOME")) {
        (Some(dir), _) => PathBuf::from(dir),
        (None, Some(home)) => Path::new(home).join(".qwen"),
        (None, None) => crate::native::common::home_dir().ok()?.join(".qwen"),
    };
    let name = format!("{native_id}.jsonl");
    let mut found: Vec<PathBuf> = std::fs::read_dir(home.join("projects"))
        .ok()?
        .filter_map(|dir| Some(dir.ok()?.path().join("chats").join(&name)))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found.pop()
}

/// The chat file for `<Qwen home>/projects/<cwd folder>/chats/<id>.jsonl` and the command that
/// resumes it.
pub(super) fn resume_files(session: &Session, blocks: Vec<Block>, options: &ResumeOptions) -> Result<Reported<ResumeFiles>> {
    let mut ctx = Context::for_session(session);
    if let Some(id) = &options.options.session_id {
        ctx.session_id = id.clone();
    }
    if !is_session_id(&ctx.session_id) {
        return Err(Error::invalid_field("session_id", format!("{:?} cannot name a Qwen Code session: Qwen Code's session ids are UUIDs of version 1 to 5", ctx.session_id)));
    }
    let cwd = options.cwd.clone().or_else(|| (!ctx.cwd.is_empty()).then(|| PathBuf::from(&ctx.cwd))).ok_or_else(|| {
        Error::invalid_field("cwd", "the session has no working directory: name one (Qwen Code keeps a chat under its project folder)")
    })?;
    ctx.cwd = absolute_cwd(&cwd)?.to_string();
    let mut report = Vec::new();
    let mut records = records(session, &blocks, &options.options, &ctx, &mut report)?;
    if records.is_empty() {
        return Err(Error::invalid("the session has nothing to write"));
    }
    // Every record names the session it belongs to, the one resumed, and its working directory:
    // Qwen Code loads a chat only when the first record's `cwd` is the project it runs in.
    for record in records.iter_mut().filter_map(Value::as_object_mut) {
        for (key, value) in [("sessionId", &ctx.session_id), ("cwd", &ctx.cwd)] {
            if let Some(Value::String(text)) = record.get_mut(key) {
                if text != value {
                    *text = value.clone();
                }
            }
        }
    }
    let (home, env) = qwen_home(options)?;
    let file = home.join("projects").join(project_folder(&ctx.cwd)).join("chats").join(format!("{}.jsonl", ctx.session_id));
    let text = jsonl_text(records.iter())?;
    let mut argv = vec!["qwen".to_string(), "--resume".to_string(), ctx.session_id.clone()];
    if let Some(model) = &options.options.target_model {
        argv.extend(["--model".to_string(), model.clone()]);
    }
    let files = ResumeFiles { native_id: ctx.session_id, file, text, replaces: Vec::new(), argv, cwd: Some(cwd), env, setup: Vec::new(), notes: Vec::new() };
    Ok(Reported { value: files, report })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_follow_qwen_code() {
        assert_eq!(project_folder("/home/dev/project"), "-home-dev-project");
        assert_eq!(project_folder("/tmp/pytest_of root/x.y"), "-tmp-pytest-of-root-x-y");
    }

    #[test]
    fn a_bound_session_is_found_by_its_id() {
        let home = tempfile::tempdir().unwrap();
        let chats = home.path().join(".qwen/projects/-home-dev-project/chats");
        std::fs::create_dir_all(&chats).unwrap();
        let id = "ffd30471-6175-4f0c-b592-7f181077b9b7";
        let file = chats.join(format!("{id}.jsonl"));
        std::fs::write(&file, "{}\n").unwrap();
        let env = BTreeMap::from([("HOME".to_string(), home.path().display().to_string())]);
        assert_eq!(find_chat_file(&env, id), Some(file));
        assert_eq!(find_chat_file(&env, "ffd30471"), None, "an id, not a prefix");
        assert_eq!(find_chat_file(&env, "../x"), None);
        let env = BTreeMap::from([("QWEN_HOME".to_string(), home.path().join("none").display().to_string())]);
        assert_eq!(find_chat_file(&env, id), None);
    }
}
