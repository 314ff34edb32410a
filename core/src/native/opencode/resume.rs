//! The document a resume needs and the `opencode import` that loads it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::native::adapter::ResumeFiles;
use crate::native::common::home_dir;
use crate::native::types::{CommandOutcome, ResumeOptions, ResumePlan};
use crate::store::Session;

fn valid_session_id(id: &str) -> bool {
    id.starts_with("ses") && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The session document for `<home>/.local/share/sna-history/opencode/<ses_id>.json` and the
/// commands: `opencode import <file>` (run in the cwd), then `opencode run --session <id>`.
pub(super) fn resume_files(session: &Session, document: Value, options: &ResumeOptions) -> Result<ResumeFiles> {
    let id = document["info"]["id"].as_str().unwrap_or("").to_string();
    if !valid_session_id(&id) {
        return Err(Error::invalid_field("session_id", format!("{id:?} is not an OpenCode session id (ses_ followed by letters and digits)")));
    }
    let home = match &options.home {
        Some(home) => home.clone(),
        None => home_dir()?,
    };
    let cwd = options.cwd.clone().or_else(|| session.info().ok().and_then(|i| i.cwd.map(PathBuf::from)));
    let file = home.join(".local").join("share").join("sna-history").join("opencode").join(format!("{id}.json"));
    let text = serde_json::to_string_pretty(&document).map_err(|e| Error::Internal(format!("cannot write the document: {e}")))?;
    let program = program(options);
    let import = vec![program.clone(), "import".into(), file.display().to_string()];
    let mut env = BTreeMap::new();
    if options.home.is_some() {
        env.insert("HOME".into(), home.display().to_string());
    }
    let notes = vec![format!(
        "`opencode import` adds to a session OpenCode already has: if it has {id}, delete it first (`opencode session delete {id}`), or each message in both is there twice (a resume that runs the import does this)"
    )];
    Ok(ResumeFiles {
        native_id: id.clone(),
        file,
        text,
        replaces: Vec::new(),
        argv: vec![program, "run".into(), "--session".into(), id],
        cwd,
        env,
        setup: vec![import],
        notes,
    })
}

/// The `opencode` program to name and run.
fn program(options: &ResumeOptions) -> String {
    options.opencode_bin.clone().map(|p| p.display().to_string()).unwrap_or_else(|| "opencode".into())
}

/// With `run_import` (and the `opencode` binary named by `opencode_bin`, else found on `PATH`),
/// runs the plan's `opencode import` and records its outcome in place of the setup step.
///
/// The document replaces a session of the same id that OpenCode already has, as a replay into
/// Claude Code or Codex replaces the thread's file: `opencode import` adds the document's messages
/// to such a session, so each message OpenCode wrote there would be in it twice (its own, and the
/// replayed one under another id), and its model would be sent both. That session is deleted first
/// (`opencode session delete`; "Session not found" is the answer when there is none).
pub(super) fn run_import(plan: &mut ResumePlan, options: &ResumeOptions) -> Result<()> {
    if !options.run_import {
        return Ok(());
    }
    let Some(import) = plan.setup.first().cloned() else { return Ok(()) };
    let program = program(options);
    let delete = vec![program.clone(), "session".into(), "delete".into(), plan.session_id.clone()];
    let deleted = run(&program, &delete, plan)?;
    if deleted.status == Some(0) {
        plan.ran.push(deleted);
    } else if !format!("{}{}", deleted.stdout, deleted.stderr).contains("Session not found") {
        return Err(failed(&deleted));
    }
    let outcome = run(&program, &import, plan)?;
    if outcome.status != Some(0) {
        return Err(failed(&outcome));
    }
    plan.setup.clear();
    plan.ran.push(outcome);
    Ok(())
}

/// Runs `argv` (its first item being `program`) in the plan's directory and environment, in a
/// process group of its own.
fn run(program: &str, argv: &[String], plan: &ResumePlan) -> Result<CommandOutcome> {
    let mut command = std::process::Command::new(program);
    command.args(&argv[1..]).stdin(std::process::Stdio::null());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    if let Some(cwd) = &plan.cwd {
        command.current_dir(cwd);
    }
    for (key, value) in &plan.env {
        command.env(key, value);
    }
    for key in ["OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_DISABLE_MODELS_FETCH", "OPENCODE_DISABLE_SHARE"] {
        command.env(key, "1");
    }
    let output = command.output().map_err(|source| Error::Io { context: format!("cannot run {program}"), source })?;
    Ok(CommandOutcome {
        argv: argv.to_vec(),
        status: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

fn failed(outcome: &CommandOutcome) -> Error {
    Error::Io {
        context: format!("`{}` failed ({})", outcome.argv.join(" "), outcome.status.map(|c| format!("exit {c}")).unwrap_or_else(|| "killed".into())),
        source: std::io::Error::other(outcome.stderr.trim().to_string()),
    }
}
