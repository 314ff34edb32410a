//! The Rust driver of the conformance suite (`tests/conformance/drivers/README.md`): runs one job
//! (import a native file, export it for a runtime, prepare a resume there) through the Rust API
//! and prints what it got as JSON, in the same shape as the Python and Node drivers.
//!
//! Usage: `conformance_job <job.json>`; the result goes to stdout, an error to stderr with exit 1.

use std::path::PathBuf;
use std::process::ExitCode;

use base64::Engine;
use serde_json::{json, Map, Value};
use sna_history::{Error, Options, ResumeOptions, Runtime, Store};

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: conformance_job <job.json>");
        return ExitCode::from(2);
    };
    let job = match std::fs::read_to_string(&path).map_err(|e| e.to_string()).and_then(|t| serde_json::from_str::<Value>(&t).map_err(|e| e.to_string())) {
        Ok(job) => job,
        Err(e) => {
            eprintln!("conformance_job: cannot read {}: {e}", PathBuf::from(path).display());
            return ExitCode::from(2);
        }
    };
    match run(&job) {
        Ok(result) => {
            println!("{result}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("conformance_job: {}: {e}", e.code());
            ExitCode::from(1)
        }
    }
}

fn runtime(value: &Value) -> Result<Runtime, Error> {
    value.as_str().unwrap_or_default().parse()
}

fn options(value: Option<&Value>) -> Result<Options, Error> {
    Options::from_value(value.cloned().unwrap_or(Value::Null))
}

fn run(job: &Value) -> Result<Value, Error> {
    let store = Store::open_in_memory()?;
    let import = &job["import"];
    let from = match import.get("runtime") {
        Some(Value::String(name)) => Some(name.parse()?),
        _ => None,
    };
    let session = store.import_file(import["path"].as_str().unwrap_or_default(), from, &Options::default())?;
    let blocks = session.blocks()?;
    let mut embeds = Map::new();
    for block in &blocks {
        for id in block.embeds.keys() {
            embeds.insert(id.clone(), json!(base64::engine::general_purpose::STANDARD.encode(session.embed(id)?)));
        }
    }
    let mut result = json!({
        "session_id": session.id(),
        "blocks": blocks.iter().map(|b| b.to_value()).collect::<Vec<_>>(),
        "embeds": embeds,
    });
    if let Some(export) = job.get("export") {
        let target = runtime(&export["runtime"])?;
        let options = options(export.get("options"))?;
        result["export"] = serde_json::to_value(session.export(target, &options)?).map_err(|e| Error::Internal(e.to_string()))?;
        result["export_again"] = session.export(target, &options)?.data;
    }
    if let Some(resume) = job.get("resume") {
        let target = runtime(&resume["runtime"])?;
        let mut given = resume.get("options").and_then(Value::as_object).cloned().unwrap_or_default();
        let mut path = |key: &str| match given.remove(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(path)) => Ok(Some(PathBuf::from(path))),
            Some(other) => Err(Error::invalid_field(key, format!("expected a path, got {other}"))),
        };
        let (home, cwd, config_dir, codex_home, opencode_bin) =
            (path("home")?, path("cwd")?, path("config_dir")?, path("codex_home")?, path("opencode_bin")?);
        let run_import = given.remove("run_import").and_then(|v| v.as_bool()).unwrap_or(false);
        let options = Options::from_value(Value::Object(given))?;
        let plan = session.prepare_resume(target, &ResumeOptions { home, cwd, config_dir, codex_home, run_import, opencode_bin, options })?;
        result["plan"] = serde_json::to_value(plan).map_err(|e| Error::Internal(e.to_string()))?;
    }
    Ok(result)
}
