//! `sna resume`: the files a runtime needs to resume a session, and the command (run with --run).

use std::path::PathBuf;

use sna_history::Options;

use crate::args::ResumeArgs;
use crate::failure::{Failure, Outcome};
use crate::setup::{open, runtime};

pub fn run(args: ResumeArgs, db: Option<PathBuf>) -> Outcome {
    let ResumeArgs { id, runtime: rt, home, cwd, target_model, model_provider, run, redact, bound } = args;
    let store = open(db)?;
    let session = store.session(&id)?;
    let rt = runtime(&rt)?;
    let options = bound.apply(Options { target_model, model_provider, redact, ..Options::default() })?;
    let absolute = |p: PathBuf| std::path::absolute(&p).map_err(|e| Failure(format!("{}: {e}", p.display())));
    let home = home.map(absolute).transpose()?;
    let cwd = cwd.map(absolute).transpose()?;
    let resume = sna_history::ResumeOptions { home, cwd, options, ..Default::default() };
    let plan = session.prepare_resume(rt, &resume)?;
    for file in &plan.files {
        eprintln!("wrote {}", file.display());
    }
    if let Some(seq) = plan.replay.compaction_seq {
        eprintln!("the replay starts at the compaction at seq {seq}: the runtime's summary stands in for what came before");
    }
    if let Some((first, last)) = plan.replay.folded {
        eprintln!("seq {first}–{last} folded into one summary to fit the context window");
    }
    let env: String = plan.env.iter().map(|(k, v)| format!("{k}={} ", quote(v))).collect();
    let cd = plan.cwd.as_ref().map(|c| format!("cd {} && ", quote(&c.display().to_string()))).unwrap_or_default();
    for command in plan.setup.iter().chain(std::iter::once(&plan.argv)) {
        println!("{cd}{env}{}", command.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" "));
    }
    if run {
        for command in plan.setup.iter().chain(std::iter::once(&plan.argv)) {
            let mut child = std::process::Command::new(&command[0]);
            child.args(&command[1..]).envs(&plan.env);
            if let Some(cwd) = &plan.cwd {
                child.current_dir(cwd);
            }
            let status = child.status().map_err(|e| Failure(format!("cannot run {}: {e}", command[0])))?;
            if !status.success() {
                return Err(Failure(format!("{} exited with {status}", command.join(" "))));
            }
        }
    }
    Ok(())
}

/// A shell word.
fn quote(text: &str) -> String {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:@+,".contains(&b)) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}
