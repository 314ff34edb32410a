//! Runs the shared vectors of `tests/vectors/` against the Rust API (the Python and Node runners
//! run the same files).

use std::collections::BTreeMap;
use std::path::PathBuf;

use base64::Engine;
use serde_json::{json, Value};
use sna_history::{Block, Error, NewSession, Options, ResumeOptions, Runtime, Source, Store};

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors")
}

/// Matches `actual` against `expected` as tests/vectors/README.md describes; returns the path of the
/// first mismatch.
fn mismatch(expected: &Value, actual: Option<&Value>, path: &str) -> Option<String> {
    if let Some(obj) = expected.as_object() {
        if obj.get("$absent") == Some(&Value::Bool(true)) && obj.len() == 1 {
            return actual.map(|a| format!("{path}: expected no value, got {a}"));
        }
        if let (Some(Value::String(needle)), 1) = (obj.get("$contains"), obj.len()) {
            return match actual {
                Some(Value::String(s)) if s.contains(needle.as_str()) => None,
                other => Some(format!("{path}: expected a string containing {needle:?}, got {other:?}")),
            };
        }
    }
    let Some(actual) = actual else {
        return Some(format!("{path}: missing, expected {expected}"));
    };
    match (expected, actual) {
        (Value::Object(exp), Value::Object(act)) => {
            exp.iter().find_map(|(key, value)| mismatch(value, act.get(key), &format!("{path}.{key}")))
        }
        (Value::Array(exp), Value::Array(act)) => {
            if exp.len() != act.len() {
                return Some(format!("{path}: expected {} elements, got {}: {actual}", exp.len(), act.len()));
            }
            exp.iter().zip(act).enumerate().find_map(|(i, (e, a))| mismatch(e, Some(a), &format!("{path}[{i}]")))
        }
        (e, a) if e == a => None,
        (e, a) => Some(format!("{path}: expected {e}, got {a}")),
    }
}

/// A block of a vector: `data_base64` of each embed becomes its bytes.
fn block_from_vector(value: &Value) -> Result<Block, Error> {
    let mut value = value.clone();
    let mut bytes = BTreeMap::new();
    if let Some(embeds) = value.get_mut("embeds").and_then(Value::as_object_mut) {
        for (id, embed) in embeds.iter_mut() {
            if let Some(b64) = embed.as_object_mut().and_then(|e| e.remove("data_base64")) {
                let data = base64::engine::general_purpose::STANDARD.decode(b64.as_str().unwrap()).unwrap();
                bytes.insert(id.clone(), data);
            }
        }
    }
    let mut block = Block::from_value(value)?;
    for (id, data) in bytes {
        if let Some(embed) = block.embeds.get_mut(&id) {
            embed.data = Some(data);
        }
    }
    Ok(block)
}

fn arg<'a>(step: &'a Value, key: &str) -> &'a str {
    step[key].as_str().unwrap_or_else(|| panic!("step {step} needs a string {key:?}"))
}

fn run_step(store: &Store, step: &Value) -> Result<Value, Error> {
    let op = arg(step, "op");
    let session = || store.session(arg(step, "session"));
    let runtime = || arg(step, "runtime").parse::<Runtime>();
    Ok(match op {
        "create_session" => {
            let mut new = NewSession::new();
            new.id = step["id"].as_str().map(String::from);
            new.title = step["title"].as_str().map(String::from);
            new.cwd = step["cwd"].as_str().map(String::from);
            json!({"id": store.create_session(new)?.id()})
        }
        "session" => json!({"id": session()?.id()}),
        "sessions" => serde_json::to_value(store.sessions()?).unwrap(),
        "delete_session" => {
            store.delete_session(arg(step, "session"))?;
            Value::Null
        }
        "append" => {
            let session = session()?;
            session.append(block_from_vector(&step["block"])?)?.to_value()
        }
        "extend" => {
            let session = session()?;
            let blocks =
                step["blocks"].as_array().unwrap().iter().map(block_from_vector).collect::<Result<Vec<_>, _>>()?;
            Value::Array(session.extend(blocks)?.iter().map(Block::to_value).collect())
        }
        "blocks" => {
            let session = session()?;
            let blocks = match (step.get("from"), step.get("to")) {
                (None, None) => session.blocks()?,
                (from, to) => session.blocks_range(
                    from.and_then(Value::as_u64).unwrap_or(0),
                    to.and_then(Value::as_u64).unwrap_or(u64::MAX),
                )?,
            };
            Value::Array(blocks.iter().map(Block::to_value).collect())
        }
        "block" => session()?.block(arg(step, "id"))?.to_value(),
        "embed" => {
            let data = session()?.embed(arg(step, "embed_id"))?;
            json!({"base64": base64::engine::general_purpose::STANDARD.encode(data)})
        }
        "switches" => serde_json::to_value(session()?.switches()?).unwrap(),
        "bind" => {
            let session = session()?;
            let through = step["through_seq"].as_u64().unwrap();
            serde_json::to_value(session.bind(runtime()?, arg(step, "native_id"), through)?).unwrap()
        }
        "continuation" => serde_json::to_value(session()?.continuation(runtime()?)?).unwrap(),
        "import_native" => {
            let source = match &step["source"] {
                Value::String(text) => Source::Text(text.clone()),
                other => Source::Value(other.clone()),
            };
            let options = Options::from_value(step.get("options").cloned().unwrap_or_else(|| json!({})))?;
            let session = store.import_native(runtime()?, source, &options)?;
            json!({"id": session.id(), "length": session.len()?})
        }
        "to_native" => {
            let options = Options::from_value(step.get("options").cloned().unwrap_or_else(|| json!({})))?;
            session()?.to_native(runtime()?, &options)?
        }
        "prepare_resume" => {
            let home = tempfile::tempdir().unwrap();
            let mut options = step.get("options").cloned().unwrap_or_else(|| json!({}));
            options["home"] = json!(home.path());
            let options = ResumeOptions::from_value(options)?;
            serde_json::to_value(session()?.prepare_resume(runtime()?, &options)?).unwrap()
        }
        other => panic!("unknown op {other:?}"),
    })
}

#[cfg(feature = "pg-tests")]
use sna_test_support as pg;

#[test]
fn shared_vectors() {
    run_vectors(&mut |_| Store::open_in_memory().unwrap());
}

/// The same vectors on PostgreSQL, each in a database of its own.
#[cfg(feature = "pg-tests")]
#[test]
fn shared_vectors_on_postgres() {
    let mut dbs = Vec::new();
    run_vectors(&mut |name| {
        let tag: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        let db = pg::TestDb::new(&format!("vec_{tag}"));
        let store = Store::open(&db.url).unwrap();
        dbs.push(db);
        store
    });
}

/// Runs every vector on a store `open` gives for it (given the vector's file stem).
fn run_vectors(open: &mut dyn FnMut(&str) -> Store) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(vectors_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "expected the shared vectors in {}", vectors_dir().display());
    let mut steps_run = 0;
    for file in files {
        let case: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let store = open(&file.file_stem().unwrap().to_string_lossy());
        for (i, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            let at = format!("{} step {i} ({})", file.file_name().unwrap().to_string_lossy(), step["op"]);
            let result = run_step(&store, step);
            match (step.get("expect_error"), result) {
                (Some(expected), Err(err)) => {
                    assert_eq!(err.code(), expected["code"].as_str().unwrap(), "{at}: {err}");
                    for needle in expected["contains"].as_array().into_iter().flatten() {
                        let needle = needle.as_str().unwrap();
                        assert!(err.to_string().contains(needle), "{at}: {err:?} does not contain {needle:?}");
                    }
                    if let Some(where_) = expected.get("at") {
                        let location = err.location().cloned().unwrap_or_default();
                        let actual = json!({"line": location.line, "offset": location.offset, "index": location.index, "field": location.field});
                        for key in ["line", "offset", "index", "field"] {
                            assert_eq!(actual[key], where_.get(key).cloned().unwrap_or(Value::Null), "{at}: location {key} of {err}");
                        }
                    }
                }
                (Some(expected), Ok(value)) => panic!("{at}: expected error {expected}, got {value}"),
                (None, Err(err)) => panic!("{at}: unexpected error {} {err}", err.code()),
                (None, Ok(value)) => {
                    if let Some(expected) = step.get("expect") {
                        if let Some(problem) = mismatch(expected, Some(&value), "result") {
                            panic!("{at}: {problem}");
                        }
                    }
                }
            }
            steps_run += 1;
        }
    }
    assert!(steps_run > 40, "only {steps_run} steps ran");
}

#[test]
fn matcher_rejects_what_it_should() {
    assert!(mismatch(&json!({"a": 1}), Some(&json!({"a": 2})), "r").is_some());
    assert!(mismatch(&json!([1]), Some(&json!([1, 2])), "r").is_some());
    assert!(mismatch(&json!({"a": {"$absent": true}}), Some(&json!({"a": 1})), "r").is_some());
    assert!(mismatch(&json!({"a": {"$contains": "xy"}}), Some(&json!({"a": "x"})), "r").is_some());
    assert!(mismatch(&json!({"a": 1}), Some(&json!({"a": 1, "b": 2})), "r").is_none());
}
