//! A seeded mutation fuzz suite over the real fixtures of every runtime: truncation, byte
//! flips, invalid UTF-8, deep nesting, cycles in parent chains, wrong types, duplicated and
//! swapped lines, huge lines. Each mutated input goes through a lenient and a strict import, the
//! read-back, the import report and every export format of every runtime. The suite fails on a
//! panic, an `INTERNAL` error, a case that takes too long (a hang), or lenient and strict imports
//! that disagree.
//!
//! Bounded for the test command (`SNA_FUZZ_CASES`, default 240, `SNA_FUZZ_SEED`, default 17);
//! `scripts/fuzz.sh` runs it longer with any seed.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use sna_history::{Options, Runtime, Source, Store};

/// A small deterministic generator (xorshift64*), so that a seed names a run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn fixtures() -> Vec<(Runtime, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut out = Vec::new();
    for &runtime in Runtime::ALL {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join(runtime.as_str())).unwrap().map(|e| e.unwrap().path()).collect();
        dirs.sort();
        for dir in dirs {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
            files.sort();
            for file in files {
                let name = file.file_name().unwrap().to_str().unwrap().to_string();
                let native = match runtime {
                    Runtime::OpenCode => name == "export.json",
                    _ => name.ends_with(".jsonl") && name != "events.jsonl" && name != "requests.jsonl",
                };
                if native {
                    out.push((runtime, file));
                }
            }
        }
    }
    out
}

/// The mutations, each a function of the input bytes.
const MUTATIONS: &[&str] = &[
    "truncate", "flip", "invalid-utf8", "deep", "parent-cycle", "wrong-type", "duplicate-line", "swap-lines", "huge-line",
    "drop-field", "nul-bytes", "lone-surrogate",
];

fn lines_of(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()).map(<[u8]>::to_vec).collect()
}

fn join(lines: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in lines {
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out
}

/// A value somewhere in `value` replaced by `f` of it (the `at`-th value met, depth first).
fn replace_nth(value: &mut Value, at: &mut usize, f: &mut dyn FnMut(&mut Value)) -> bool {
    if *at == 0 {
        f(value);
        return true;
    }
    *at -= 1;
    match value {
        Value::Array(items) => items.iter_mut().any(|v| replace_nth(v, at, f)),
        Value::Object(map) => map.values_mut().any(|v| replace_nth(v, at, f)),
        _ => false,
    }
}

fn mutate(bytes: &[u8], mutation: &str, rng: &mut Rng) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let mut lines = lines_of(bytes);
    match mutation {
        "truncate" => out.truncate(rng.below(bytes.len())),
        "flip" => {
            for _ in 0..1 + rng.below(8) {
                let at = rng.below(out.len());
                out[at] ^= 1 << rng.below(8);
            }
        }
        "invalid-utf8" => {
            let at = rng.below(out.len());
            out.splice(at..at, [0xff, 0xfe, 0xc3]);
        }
        "nul-bytes" => {
            let at = rng.below(out.len());
            out.splice(at..at, [0, 0, 0]);
        }
        "lone-surrogate" => {
            let text = String::from_utf8_lossy(bytes).into_owned();
            let from = rng.below(text.len());
            let from = (from..=text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(0);
            let mut text = text;
            if let Some(at) = text[from..].find(":\"").map(|p| p + from + 2) {
                text.insert_str(at, "\\udc00");
            }
            out = text.into_bytes();
        }
        "deep" | "wrong-type" | "drop-field" | "parent-cycle" => {
            // Applied to one parsed line (or to the whole document for OpenCode).
            let whole = lines.len() <= 1 || serde_json::from_slice::<Value>(bytes).is_ok();
            let pick = if whole { None } else { Some(rng.below(lines.len())) };
            let text = match pick {
                Some(i) => lines[i].clone(),
                None => bytes.to_vec(),
            };
            let Ok(mut value) = serde_json::from_slice::<Value>(&text) else { return out };
            match mutation {
                "deep" => {
                    // Around the limits: what parses, what is stored two levels deeper, what does not parse.
                    let depth = [40, 98, 99, 100, 101, 120, 124, 125, 126, 130, 300][rng.below(11)];
                    let nested: Value = serde_json::from_str(&format!("{}1{}", "[".repeat(depth), "]".repeat(depth))).unwrap_or(Value::Null);
                    match (&mut value, rng.below(2)) {
                        (Value::Object(map), 0) if !map.is_empty() => {
                            let key = map.keys().nth(rng.below(map.len())).cloned().unwrap_or_default();
                            map.insert(key, nested);
                        }
                        _ => {
                            let mut at = rng.below(40);
                            replace_nth(&mut value, &mut at, &mut |v| *v = nested.clone());
                        }
                    }
                }
                "wrong-type" => {
                    let replacement = [Value::Null, Value::from(7), Value::from("x"), serde_json::json!([1, {}]), serde_json::json!({"a": []})][rng.below(5)].clone();
                    let mut at = rng.below(60);
                    replace_nth(&mut value, &mut at, &mut |v| *v = replacement.clone());
                }
                "drop-field" => {
                    let mut at = rng.below(60);
                    replace_nth(&mut value, &mut at, &mut |v| {
                        if let Value::Object(map) = v {
                            if let Some(key) = map.keys().next().cloned() {
                                map.remove(&key);
                            }
                        }
                    });
                }
                _ => {
                    // A record made its own ancestor: its parent is a record after it.
                    if let (Some(i), Value::Object(map)) = (pick, &mut value) {
                        let later = lines.get(i + 1 + rng.below(lines.len() - i)).and_then(|l| serde_json::from_slice::<Value>(l).ok());
                        if let Some(uuid) = later.as_ref().and_then(|l| l.get("uuid")).cloned() {
                            map.insert("parentUuid".into(), uuid);
                        }
                    }
                }
            }
            let text = serde_json::to_vec(&value).unwrap_or_default();
            match pick {
                Some(i) => {
                    lines[i] = text;
                    out = join(&lines);
                }
                None => out = text,
            }
        }
        "duplicate-line" if !lines.is_empty() => {
            let i = rng.below(lines.len());
            let line = lines[i].clone();
            lines.insert(rng.below(lines.len() + 1), line);
            out = join(&lines);
        }
        "swap-lines" if lines.len() > 1 => {
            let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
            lines.swap(a, b);
            out = join(&lines);
        }
        "huge-line" => {
            let huge = format!("{{\"type\":\"progress\",\"data\":\"{}\"}}", "x".repeat(2 << 20)).into_bytes();
            lines.insert(rng.below(lines.len() + 1), huge);
            out = join(&lines);
        }
        _ => {}
    }
    out
}

/// Fails the case on an `INTERNAL` error (a bug), keeps any other error as an outcome.
fn checked<T>(what: &str, result: sna_history::Result<T>) -> Result<Option<T>, String> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(e) if e.code() == "INTERNAL" => Err(format!("{what}: INTERNAL: {e}")),
        Err(_) => Ok(None),
    }
}

/// One mutated input through every path.
fn run_case(runtime: Runtime, bytes: &[u8]) -> Result<(), String> {
    let store = Store::open_in_memory().map_err(|e| e.to_string())?;
    let lenient = checked("lenient import", store.import_native(runtime, Source::Bytes(bytes.to_vec()), &Options::default()))?;
    let strict_options = Options { strict: true, session_id: Some("strict".into()), ..Options::default() };
    let strict = checked("strict import", store.import_native(runtime, Source::Bytes(bytes.to_vec()), &strict_options))?;
    if let Some(strict) = &strict {
        let Some(lenient) = &lenient else { return Err("strict import succeeded where the lenient one failed".into()) };
        let (a, b) = (lenient.len().map_err(|e| e.to_string())?, strict.len().map_err(|e| e.to_string())?);
        if a != b {
            return Err(format!("lenient import stored {a} blocks, strict {b}"));
        }
    }
    let Some(session) = lenient else { return Ok(()) };
    let report = checked("import report", session.import_report())?.unwrap_or_default();
    if strict.is_none() && report.entries.is_empty() {
        // Strict refused an input in which the lenient import found nothing to report.
        let err = store.import_native(runtime, Source::Bytes(bytes.to_vec()), &Options { session_id: Some("again".into()), ..strict_options.clone() });
        if let Err(e) = err {
            if e.code() != "CONFLICT" {
                return Err(format!("strict refused ({e}) what the lenient import read without a report entry"));
            }
        }
    }
    let blocks = checked("blocks", session.blocks())?.ok_or("blocks: the session cannot be read back")?;
    if blocks.len() as u64 != session.len().map_err(|e| e.to_string())? {
        return Err("block count and blocks disagree".into());
    }
    for &target in Runtime::ALL {
        for format in target.formats() {
            let options = Options { format: Some(format.as_str().into()), ..Options::default() };
            checked(&format!("export {target} {format}"), session.export(target, &options))?;
        }
    }
    Ok(())
}

#[test]
fn mutated_fixtures_never_crash_hang_or_disagree() {
    let seed: u64 = std::env::var("SNA_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(17);
    let cases: usize = std::env::var("SNA_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(240);
    let limit = Duration::from_secs(std::env::var("SNA_FUZZ_CASE_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(60));
    let inputs: Vec<(Runtime, Vec<u8>)> = fixtures().into_iter().map(|(rt, path)| (rt, std::fs::read(path).unwrap())).collect();
    assert!(inputs.len() >= 24, "fixtures missing");
    // A watchdog: a case running longer than `limit` is a hang; the run stops with its name.
    let current = Arc::new(AtomicU64::new(u64::MAX));
    let started = Arc::new(std::sync::Mutex::new(Instant::now()));
    {
        let (current, started) = (current.clone(), started.clone());
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(500));
            let case = current.load(Ordering::SeqCst);
            if case == u64::MAX - 1 {
                return;
            }
            if case != u64::MAX && started.lock().unwrap().elapsed() > limit {
                eprintln!("fuzz: case {case} (seed {seed}) ran longer than {limit:?}: a hang");
                std::process::abort();
            }
        });
    }
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut failures = Vec::new();
    let mut imported = 0;
    for case in 0..cases {
        let (runtime, original) = &inputs[rng.below(inputs.len())];
        let mutation = MUTATIONS[rng.below(MUTATIONS.len())];
        let bytes = mutate(original, mutation, &mut rng);
        *started.lock().unwrap() = Instant::now();
        current.store(case as u64, Ordering::SeqCst);
        let outcome = catch_unwind(AssertUnwindSafe(|| run_case(*runtime, &bytes)));
        current.store(u64::MAX, Ordering::SeqCst);
        match outcome {
            Ok(Ok(())) => imported += 1,
            Ok(Err(problem)) => failures.push(format!("case {case} ({runtime}, {mutation}, seed {seed}): {problem}")),
            Err(panic) => {
                let message = panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
                failures.push(format!("case {case} ({runtime}, {mutation}, seed {seed}): panic: {}", message.unwrap_or_default()));
            }
        }
    }
    current.store(u64::MAX - 1, Ordering::SeqCst);
    assert!(failures.is_empty(), "{} of {cases} cases failed:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(imported, cases);
}
