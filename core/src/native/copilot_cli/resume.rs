//! The session log a resume needs, `<Copilot home>/session-state/<id>/events.jsonl`, and the
//! `copilot --resume <id>` that goes on from it. The log is all the CLI needs: it makes the rest of
//! the folder (`workspace.yaml`, checkpoints) itself.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::json::jsonl_text;
use crate::model::ids::is_uuid;
use crate::model::Block;
use crate::native::adapter::{Reported, ResumeFiles};
use crate::native::common::{absolute_cwd, runtime_dir};
use crate::native::types::ResumeOptions;
use crate::store::Session;

use super::export::{events, Context};

/// Copilot CLI's home (`COPILOT_HOME`, else `~/.copilot`) and the environment that names it.
fn copilot_home(options: &ResumeOptions) -> Result<(PathBuf, BTreeMap<String, String>)> {
    runtime_dir(options.config_dir.as_deref(), options.home.as_deref(), "COPILOT_HOME", ".copilot")
}

/// The session log of `native_id` under the Copilot home the environment `env` names
/// (`COPILOT_HOME`, else `$HOME/.copilot`); `None` when there is none.
pub(super) fn find_log(env: &BTreeMap<String, String>, native_id: &str) -> Option<PathBuf> {
    if !is_uuid(native_id) {
        return None;
    }
    let home = match (env.get("COPILOT_HOME"), env.get("HOME")) {
        (Some(dir), _) => PathBuf::from(dir),
        (None, Some(home)) => Path::new(home).join(".copilot"),
        (None, None) => crate::native::common::home_dir().ok()?.join(".copilot"),
    };
    let log = home.join("session-state").join(native_id).join("events.jsonl");
    log.is_file().then_some(log)
}

/// The session log and the command that resumes it.
pub(super) fn resume_files(session: &Session, blocks: Vec<Block>, options: &ResumeOptions) -> Result<Reported<ResumeFiles>> {
    let mut ctx = Context::for_session(session);
    if let Some(id) = &options.options.session_id {
        ctx.session_id = id.clone();
    }
    if !is_uuid(&ctx.session_id) {
        return Err(Error::invalid_field("session_id", format!("{:?} cannot name a Copilot CLI session: its session ids are UUIDs", ctx.session_id)));
    }
    let cwd = options.cwd.clone().or_else(|| (!ctx.cwd.is_empty()).then(|| PathBuf::from(&ctx.cwd))).ok_or_else(|| {
        Error::invalid_field("cwd", "the session has no working directory: name one (Copilot CLI runs a session in its cwd)")
    })?;
    ctx.cwd = absolute_cwd(&cwd)?.to_string();
    let mut report = Vec::new();
    let mut records = events(&blocks, &options.options, &ctx, &mut report);
    // The log names the session resumed (in its start) and the working directory (in its start
    // and each resume).
    for record in records.iter_mut().filter(|r| r["type"] == "session.start" || r["type"] == "session.resume") {
        let start = record["type"] == "session.start";
        if let Some(data) = record.get_mut("data").and_then(Value::as_object_mut) {
            if start {
                data.insert("sessionId".into(), Value::String(ctx.session_id.clone()));
            }
            if let Some(context) = data.get_mut("context").and_then(Value::as_object_mut) {
                context.insert("cwd".into(), Value::String(ctx.cwd.clone()));
            }
        }
    }
    let (home, env) = copilot_home(options)?;
    let folder = home.join("session-state").join(&ctx.session_id);
    let file = folder.join("events.jsonl");
    let text = jsonl_text(records.iter())?;
    let mut argv = vec!["copilot".to_string(), "--resume".to_string(), ctx.session_id.clone()];
    if let Some(model) = &options.options.target_model {
        argv.extend(["--model".to_string(), model.clone()]);
    }
    let files = ResumeFiles { native_id: ctx.session_id, file, text, replaces: Vec::new(), argv, cwd: Some(cwd), env, setup: Vec::new(), notes: Vec::new() };
    Ok(Reported { value: files, report })
}
