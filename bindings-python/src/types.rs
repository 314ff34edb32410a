//! Python classes for the core's value types: `Block` and what the store returns about sessions.
//! Each wraps the core value; `to_dict()` gives its serialized form (JSON-compatible Python data).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use serde::Serialize;
use serde_json::{Map, Value};
use sna_history as core;

use crate::convert::{to_bytes, to_json, to_py, type_name};
use crate::errors::{bad, Failure, IntoPy};

fn serialized<T: Serialize>(value: &T) -> Value {
    // Core value types hold only strings, numbers, maps and JSON values.
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn short(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        format!("{text:?}")
    } else {
        let cut: String = text.chars().take(max).collect();
        format!("{:?}…", cut)
    }
}

/// One canonical block of a session. Immutable; compare with `==`.
///
/// Args:
///     actor: "user", "assistant" or "system".
///     kind: "text", "thinking", "tool_use", "tool_result", "status" or "error".
///     content: The text (for tool_use the tool input exactly as given).
///     id: A unique id; generated on append when omitted.
///     tool: `{"call_id", "name"}` on tool_use, `{"call_id", "is_error"}` on tool_result.
///     reasoning: `{"format", "data", "scope"}` on thinking only.
///     embeds: `{embed_id: {"mime", "data": bytes, "name"}}`; content refers to them as `![name](embed://id)`.
///     provider: The runtime that produced the block.
///     model_provider: The vendor of the model.
///     model: The exact model slug.
///     message_id: Groups the blocks of one native message.
///     turn_id: Groups the blocks of one user turn.
///     created_at: An aware `datetime`, an RFC 3339 string or milliseconds since the epoch; default now.
///     native: `{"runtime", "data"}` passthrough of the origin runtime's own data.
///
/// Raises:
///     InvalidInputError: The block breaks a rule (unknown actor or kind, missing call_id, malformed
///         embed, …); the message names the field.
#[pyclass(frozen, module = "sna_history", name = "Block")]
#[derive(Clone)]
pub struct PyBlock {
    pub inner: core::Block,
}

impl PyBlock {
    pub fn new(inner: core::Block) -> Self {
        PyBlock { inner }
    }
}

/// A block from a dict of its fields; `embeds[*]["data"]` are bytes.
pub fn block_from_dict(dict: &Bound<'_, PyDict>) -> Result<core::Block, Failure> {
    let mut fields = Map::with_capacity(dict.len());
    let mut bytes: Vec<(String, Vec<u8>)> = Vec::new();
    for (key, value) in dict.iter() {
        let Ok(key) = key.cast::<PyString>() else {
            return Err(bad("", format!("block field names must be str, not {}", type_name(&key))));
        };
        let key = key.to_string();
        if value.is_none() {
            continue; // None means "not given": the field takes its default.
        }
        if key == "embeds" {
            let Ok(embeds) = value.cast::<PyDict>() else {
                return Err(bad("embeds", format!("embeds must be a dict of embed id to embed, not {}", type_name(&value))));
            };
            let mut map = Map::with_capacity(embeds.len());
            for (embed_id, embed) in embeds.iter() {
                let embed_id: String = embed_id
                    .extract()
                    .map_err(|_| bad("embeds", format!("embed ids must be str, not {}", type_name(&embed_id))))?;
                let path = format!("embeds.{embed_id}");
                let Ok(embed) = embed.cast::<PyDict>() else {
                    return Err(bad(&path, format!("an embed must be a dict with mime and data, not {}", type_name(&embed))));
                };
                let mut entry = Map::new();
                for (name, item) in embed.iter() {
                    let name: String = name.extract().map_err(|_| bad(&path, "embed keys must be str"))?;
                    if name == "data" {
                        if !item.is_none() {
                            bytes.push((embed_id.clone(), to_bytes(&item, &format!("{path}.data"))?));
                        }
                    } else {
                        entry.insert(name.clone(), to_json(&item, &format!("{path}.{name}"))?);
                    }
                }
                map.insert(embed_id, Value::Object(entry));
            }
            fields.insert(key, Value::Object(map));
        } else {
            let value = to_json(&value, &key)?;
            fields.insert(key, value);
        }
    }
    let mut block = core::Block::from_value(Value::Object(fields))?;
    for (embed_id, data) in bytes {
        if let Some(embed) = block.embeds.get_mut(&embed_id) {
            embed.data = Some(data);
        }
    }
    block.validate()?;
    Ok(block)
}

/// A block from a `Block` or a dict of fields.
pub fn block_from_py(obj: &Bound<'_, PyAny>, what: &str) -> Result<core::Block, Failure> {
    if let Ok(block) = obj.cast::<PyBlock>() {
        return Ok(block.get().inner.clone());
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        return block_from_dict(dict);
    }
    Err(bad(what, format!("expected a Block or a dict of block fields, not {}", type_name(obj))))
}

#[pymethods]
impl PyBlock {
    #[new]
    #[pyo3(signature = (actor, kind, content = None, *, id = None, tool = None, reasoning = None, embeds = None,
        provider = None, model_provider = None, model = None, message_id = None, turn_id = None,
        created_at = None, native = None))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        py: Python<'_>,
        actor: Bound<'_, PyAny>,
        kind: Bound<'_, PyAny>,
        content: Option<Bound<'_, PyAny>>,
        id: Option<Bound<'_, PyAny>>,
        tool: Option<Bound<'_, PyAny>>,
        reasoning: Option<Bound<'_, PyAny>>,
        embeds: Option<Bound<'_, PyAny>>,
        provider: Option<Bound<'_, PyAny>>,
        model_provider: Option<Bound<'_, PyAny>>,
        model: Option<Bound<'_, PyAny>>,
        message_id: Option<Bound<'_, PyAny>>,
        turn_id: Option<Bound<'_, PyAny>>,
        created_at: Option<Bound<'_, PyAny>>,
        native: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let dict = PyDict::new(py);
        dict.set_item("actor", actor)?;
        dict.set_item("kind", kind)?;
        let optional = [
            ("content", content),
            ("id", id),
            ("tool", tool),
            ("reasoning", reasoning),
            ("embeds", embeds),
            ("provider", provider),
            ("model_provider", model_provider),
            ("model", model),
            ("message_id", message_id),
            ("turn_id", turn_id),
            ("created_at", created_at),
            ("native", native),
        ];
        for (name, value) in optional {
            if let Some(value) = value {
                dict.set_item(name, value)?;
            }
        }
        Ok(PyBlock::new(block_from_dict(&dict)?))
    }

    /// A block from the dict `to_dict()` returns (or any dict of block fields).
    #[staticmethod]
    fn from_dict(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let Ok(dict) = data.cast::<PyDict>() else {
            return Err(bad("", format!("expected a dict, not {}", type_name(data))).into());
        };
        Ok(PyBlock::new(block_from_dict(dict)?))
    }

    /// A block from its JSON text (the serialized form).
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        let block = core::Block::from_json(text).py()?;
        block.validate().py()?;
        Ok(PyBlock::new(block))
    }

    /// The serialized form as JSON-compatible Python data (`created_at` as an RFC 3339 string;
    /// embeds without their bytes).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner.to_value())
    }

    /// The serialized form as JSON text.
    fn to_json(&self) -> String {
        self.inner.to_value().to_string()
    }

    #[getter]
    fn id(&self) -> &str {
        &self.inner.id
    }
    #[getter]
    fn seq(&self) -> u64 {
        self.inner.seq
    }
    #[getter]
    fn actor(&self) -> &'static str {
        self.inner.actor.as_str()
    }
    #[getter]
    fn kind(&self) -> &'static str {
        self.inner.kind.as_str()
    }
    #[getter]
    fn content(&self) -> &str {
        &self.inner.content
    }
    #[getter]
    fn tool<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &serialized(&self.inner.tool))
    }
    #[getter]
    fn reasoning<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &serialized(&self.inner.reasoning))
    }
    #[getter]
    fn embeds<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &serialized(&self.inner.embeds))
    }
    #[getter]
    fn provider(&self) -> Option<&str> {
        self.inner.provider.as_deref()
    }
    #[getter]
    fn model_provider(&self) -> Option<&str> {
        self.inner.model_provider.as_deref()
    }
    #[getter]
    fn model(&self) -> Option<&str> {
        self.inner.model.as_deref()
    }
    #[getter]
    fn message_id(&self) -> Option<&str> {
        self.inner.message_id.as_deref()
    }
    #[getter]
    fn turn_id(&self) -> Option<&str> {
        self.inner.turn_id.as_deref()
    }
    /// When the block was made, an aware UTC `datetime`.
    #[getter]
    fn created_at(&self) -> chrono::DateTime<chrono::Utc> {
        self.inner.created_at.to_datetime()
    }
    #[getter]
    fn native<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &serialized(&self.inner.native))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyBlock>().is_ok_and(|o| o.get().inner.to_value() == self.inner.to_value())
    }

    fn __hash__(&self) -> u64 {
        let mut hasher = DefaultHasher::new();
        self.inner.to_value().to_string().hash(&mut hasher);
        hasher.finish()
    }

    fn __repr__(&self) -> String {
        let b = &self.inner;
        let mut out = format!("Block(seq={}, id={:?}, actor={:?}, kind={:?}, content={}", b.seq, b.id, b.actor.as_str(), b.kind.as_str(), short(&b.content, 40));
        if let Some(tool) = &b.tool {
            out.push_str(&format!(", call_id={:?}", tool.call_id));
        }
        if let Some(model) = &b.model {
            out.push_str(&format!(", model={model:?}"));
        }
        out.push(')');
        out
    }
}

/// Defines a frozen class around a core value with `to_dict()`, `==` and a `repr` of chosen fields.
macro_rules! value_class {
    ($rust:ident, $py:literal, $core:ty, [$($field:ident),*]) => {
        #[pyclass(frozen, module = "sna_history", name = $py)]
        #[derive(Clone)]
        pub struct $rust(pub $core);

        #[pymethods]
        impl $rust {
            /// The serialized form as JSON-compatible Python data.
            fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                to_py(py, &serialized(&self.0))
            }

            fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
                other.cast::<$rust>().is_ok_and(|o| serialized(&o.get().0) == serialized(&self.0))
            }

            fn __repr__(&self) -> String {
                let value = serialized(&self.0);
                let parts: Vec<String> = [$(stringify!($field)),*]
                    .iter()
                    .map(|name| format!("{}={}", name.trim_end_matches('_'), value.get(name.trim_end_matches('_')).cloned().unwrap_or(Value::Null)))
                    .collect();
                format!("{}({})", $py, parts.join(", "))
            }
        }
    };
}

value_class!(PySessionInfo, "SessionInfo", core::SessionInfo, [id, title, block_count, models]);
value_class!(PyAttribution, "Attribution", core::Attribution, [provider, model_provider, model]);
value_class!(PySwitch, "Switch", core::Switch, [seq, block_id, to]);
value_class!(PyBinding, "Binding", core::Binding, [runtime, native_id, through_seq]);
value_class!(PyContinuation, "Continuation", core::Continuation, [mode]);
value_class!(PyResumePlan, "ResumePlan", core::ResumePlan, [session_id, files, argv, cwd]);
value_class!(PyReportEntry, "ReportEntry", core::ReportEntry, [action, block_id, message]);
value_class!(PyReport, "Report", core::Report, [entries]);
value_class!(PySearchHit, "SearchHit", core::SearchHit, [session_id, seq, kind, score, snippet]);
value_class!(PySyncReport, "SyncReport", core::SyncReport, [sessions, created, extended, unchanged, blocks, embeds, conflicts]);
value_class!(PySyncConflict, "SyncConflict", core::SyncConflict, [session_id, seq, source_block_id, target_block_id]);
value_class!(PyCompaction, "Compaction", core::Compaction, [runtime, boundary_seq, summary_seq, trigger, tokens_before]);

#[pymethods]
impl PySearchHit {
    /// The session the block is in.
    #[getter]
    fn session_id(&self) -> &str {
        &self.0.session_id
    }
    /// The block's position in it.
    #[getter]
    fn seq(&self) -> u64 {
        self.0.seq
    }
    #[getter]
    fn block_id(&self) -> &str {
        &self.0.block_id
    }
    #[getter]
    fn actor(&self) -> &'static str {
        self.0.actor.as_str()
    }
    #[getter]
    fn kind(&self) -> &'static str {
        self.0.kind.as_str()
    }
    /// The runtime that produced the block.
    #[getter]
    fn provider(&self) -> Option<&str> {
        self.0.provider.as_deref()
    }
    #[getter]
    fn model(&self) -> Option<&str> {
        self.0.model.as_deref()
    }
    #[getter]
    fn created_at(&self) -> chrono::DateTime<chrono::Utc> {
        self.0.created_at.to_datetime()
    }
    /// Higher is better; comparable within one store.
    #[getter]
    fn score(&self) -> f64 {
        self.0.score
    }
    /// The text around the first match, each match between « and ».
    #[getter]
    fn snippet(&self) -> &str {
        &self.0.snippet
    }
}

#[pymethods]
impl PySyncReport {
    /// Sessions of the source looked at.
    #[getter]
    fn sessions(&self) -> u64 {
        self.0.sessions
    }
    /// Sessions the target did not have, created.
    #[getter]
    fn created(&self) -> u64 {
        self.0.created
    }
    /// Sessions the target held fewer blocks of, extended.
    #[getter]
    fn extended(&self) -> u64 {
        self.0.extended
    }
    /// Sessions that were the same on both sides already.
    #[getter]
    fn unchanged(&self) -> u64 {
        self.0.unchanged
    }
    /// Blocks copied.
    #[getter]
    fn blocks(&self) -> u64 {
        self.0.blocks
    }
    /// Embed contents the target lacked, copied.
    #[getter]
    fn embeds(&self) -> u64 {
        self.0.embeds
    }
    /// Bytes of those embeds.
    #[getter]
    fn embed_bytes(&self) -> u64 {
        self.0.embed_bytes
    }
    /// Ids of the sessions the target holds more blocks of (a sync the other way brings them).
    #[getter]
    fn target_ahead(&self) -> Vec<String> {
        self.0.target_ahead.clone()
    }
    /// Sessions whose histories differ in the two stores, left as they are.
    #[getter]
    fn conflicts(&self) -> Vec<PySyncConflict> {
        self.0.conflicts.iter().cloned().map(PySyncConflict).collect()
    }
}

#[pymethods]
impl PySyncConflict {
    #[getter]
    fn session_id(&self) -> &str {
        &self.0.session_id
    }
    /// The first position at which the two histories differ.
    #[getter]
    fn seq(&self) -> u64 {
        self.0.seq
    }
    #[getter]
    fn source_block_id(&self) -> &str {
        &self.0.source_block_id
    }
    #[getter]
    fn target_block_id(&self) -> &str {
        &self.0.target_block_id
    }
    #[getter]
    fn source_blocks(&self) -> u64 {
        self.0.source_blocks
    }
    #[getter]
    fn target_blocks(&self) -> u64 {
        self.0.target_blocks
    }
}

#[pymethods]
impl PySessionInfo {
    #[getter]
    fn id(&self) -> &str {
        &self.0.id
    }
    #[getter]
    fn title(&self) -> Option<&str> {
        self.0.title.as_deref()
    }
    #[getter]
    fn cwd(&self) -> Option<&str> {
        self.0.cwd.as_deref()
    }
    #[getter]
    fn created_at(&self) -> chrono::DateTime<chrono::Utc> {
        self.0.created_at.to_datetime()
    }
    #[getter]
    fn updated_at(&self) -> chrono::DateTime<chrono::Utc> {
        self.0.updated_at.to_datetime()
    }
    #[getter]
    fn block_count(&self) -> u64 {
        self.0.block_count
    }
    #[getter]
    fn providers(&self) -> Vec<String> {
        self.0.providers.clone()
    }
    #[getter]
    fn model_providers(&self) -> Vec<String> {
        self.0.model_providers.clone()
    }
    #[getter]
    fn models(&self) -> Vec<String> {
        self.0.models.clone()
    }
    /// The machine the session came from when a sync brought it here; None if made here.
    #[getter]
    fn origin(&self) -> Option<&str> {
        self.0.origin.as_deref()
    }
}

#[pymethods]
impl PyAttribution {
    #[getter]
    fn provider(&self) -> Option<&str> {
        self.0.provider.as_deref()
    }
    #[getter]
    fn model_provider(&self) -> Option<&str> {
        self.0.model_provider.as_deref()
    }
    #[getter]
    fn model(&self) -> Option<&str> {
        self.0.model.as_deref()
    }
}

#[pymethods]
impl PySwitch {
    /// The first block with the new attribution.
    #[getter]
    fn seq(&self) -> u64 {
        self.0.seq
    }
    #[getter]
    fn block_id(&self) -> &str {
        &self.0.block_id
    }
    /// The attribution before (None at the first attributed block). `from` in `to_dict()`.
    #[getter]
    fn from_(&self) -> Option<PyAttribution> {
        self.0.from.clone().map(PyAttribution)
    }
    /// The attribution from here on.
    #[getter]
    fn to(&self) -> PyAttribution {
        PyAttribution(self.0.to.clone())
    }
}

#[pymethods]
impl PyBinding {
    #[getter]
    fn runtime(&self) -> &'static str {
        self.0.runtime.as_str()
    }
    #[getter]
    fn native_id(&self) -> &str {
        &self.0.native_id
    }
    #[getter]
    fn through_seq(&self) -> u64 {
        self.0.through_seq
    }
    #[getter]
    fn updated_at(&self) -> chrono::DateTime<chrono::Utc> {
        self.0.updated_at.to_datetime()
    }
}

#[pymethods]
impl PyContinuation {
    /// "continue" (send only `pending` to the thread `native_id`) or "replay" (rebuild; see `reason`).
    #[getter]
    fn mode(&self) -> &'static str {
        self.0.mode()
    }
    #[getter]
    fn native_id(&self) -> Option<&str> {
        match &self.0 {
            core::Continuation::Continue { native_id, .. } => Some(native_id),
            core::Continuation::Replay { .. } => None,
        }
    }
    #[getter]
    fn through_seq(&self) -> Option<u64> {
        match &self.0 {
            core::Continuation::Continue { through_seq, .. } => Some(*through_seq),
            core::Continuation::Replay { .. } => None,
        }
    }
    #[getter]
    fn pending(&self) -> Vec<PyBlock> {
        match &self.0 {
            core::Continuation::Continue { pending, .. } => pending.iter().cloned().map(PyBlock::new).collect(),
            core::Continuation::Replay { .. } => Vec::new(),
        }
    }
    #[getter]
    fn reason(&self) -> Option<&str> {
        match &self.0 {
            core::Continuation::Continue { .. } => None,
            core::Continuation::Replay { reason } => Some(reason),
        }
    }
}

#[pymethods]
impl PyResumePlan {
    /// The runtime's own id of the session to resume.
    #[getter]
    fn session_id(&self) -> &str {
        &self.0.session_id
    }
    /// The files written.
    #[getter]
    fn files(&self) -> Vec<String> {
        self.0.files.iter().map(|p| p.to_string_lossy().into_owned()).collect()
    }
    /// The command to run, program first.
    #[getter]
    fn argv(&self) -> Vec<String> {
        self.0.argv.clone()
    }
    /// The directory to run it in, if one matters.
    #[getter]
    fn cwd(&self) -> Option<String> {
        self.0.cwd.as_ref().map(|p| p.to_string_lossy().into_owned())
    }
    /// Environment variables the command needs (e.g. CLAUDE_CONFIG_DIR), beside the caller's own.
    #[getter]
    fn env(&self) -> std::collections::BTreeMap<String, String> {
        self.0.env.clone()
    }
    /// Commands to run first, in order, in `cwd` with `env` (OpenCode: `opencode import <file>`).
    #[getter]
    fn setup(&self) -> Vec<Vec<String>> {
        self.0.setup.clone()
    }
    /// Commands `prepare_resume` ran itself (OpenCode with `run_import=True`), each as a dict with
    /// `argv`, `status`, `stdout` and `stderr`.
    #[getter]
    fn ran<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.0.ran.iter().map(|r| crate::convert::to_py(py, &serde_json::to_value(r).unwrap_or_default())).collect()
    }
    /// What the caller should know about this resume (Gemini CLI: the route taken and why).
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.0.notes.clone()
    }
    /// What shaped the replay written: `{"from_seq": int, "compaction_seq": int | None,
    /// "folded": [first_seq, last_seq] | None}`.
    #[getter]
    fn replay<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::convert::to_py(py, &serde_json::to_value(&self.0.replay).unwrap_or_default())
    }
}

#[pymethods]
impl PyCompaction {
    /// The runtime that compacted ("claude-code", "codex", …).
    #[getter]
    fn runtime(&self) -> &str {
        &self.0.runtime
    }
    /// The block that records the compaction; nothing before it but the preserved blocks is sent
    /// to a model after it.
    #[getter]
    fn boundary_seq(&self) -> u64 {
        self.0.boundary_seq
    }
    /// The block that holds the summary (the boundary itself when the summary has no block of its own).
    #[getter]
    fn summary_seq(&self) -> u64 {
        self.0.summary_seq
    }
    /// The summary, as the runtime sends it to its model.
    #[getter]
    fn summary(&self) -> &str {
        &self.0.summary
    }
    /// Seqs of the blocks before the boundary the runtime keeps sending verbatim after the summary.
    #[getter]
    fn preserved(&self) -> Vec<u64> {
        self.0.preserved.clone()
    }
    /// What started it: "manual", "auto" or "unknown".
    #[getter]
    fn trigger(&self) -> &'static str {
        self.0.trigger.as_str()
    }
    /// The size of the conversation when it was compacted, in tokens, as the runtime reported it.
    #[getter]
    fn tokens_before(&self) -> Option<u64> {
        self.0.tokens_before
    }
    /// When it happened (the boundary block's time), an aware UTC `datetime`.
    #[getter]
    fn created_at(&self) -> chrono::DateTime<chrono::Utc> {
        self.0.created_at.to_datetime()
    }
}

#[pymethods]
impl PyReportEntry {
    /// "dropped", "degraded", "synthesized", "remapped", "malformed", "redacted" or "compacted".
    #[getter]
    fn action(&self) -> &'static str {
        self.0.action.as_str()
    }
    #[getter]
    fn block_id(&self) -> Option<&str> {
        self.0.block_id.as_deref()
    }
    #[getter]
    fn message(&self) -> &str {
        &self.0.message
    }
}

#[pymethods]
impl PyReport {
    #[getter]
    fn entries(&self) -> Vec<PyReportEntry> {
        self.0.entries.iter().cloned().map(PyReportEntry).collect()
    }
    /// True when nothing was lost, altered or added.
    #[getter]
    fn lossless(&self) -> bool {
        self.0.is_lossless()
    }
    fn __len__(&self) -> usize {
        self.0.entries.len()
    }
}

/// What `Session.export` returns: the native `data` and the fidelity `report`.
#[pyclass(frozen, module = "sna_history", name = "Export")]
pub struct PyExport {
    /// The native data (list, dict or str, by format).
    #[pyo3(get)]
    pub data: Py<PyAny>,
    /// What the conversion lost, altered or added.
    #[pyo3(get)]
    pub report: Py<PyReport>,
}

#[pymethods]
impl PyExport {
    fn __repr__(&self) -> String {
        format!("Export(report={})", self.report.get().__repr__())
    }
}

value_class!(PyModelUsage, "ModelUsage", core::ModelUsage, [model, total, cost_usd]);
value_class!(PyUsageRow, "UsageRow", core::UsageRow, [key, total, cost_usd, responses]);
value_class!(PyUsageReport, "UsageReport", core::UsageReport, [by, tz, rows]);
value_class!(PyResponseUsage, "ResponseUsage", core::ResponseUsage, [seq, model, total, cost_usd]);
value_class!(PySessionUsage, "SessionUsage", core::SessionUsage, [totals]);

/// Read-only attributes of a wrapped core value, each `name: type => expression of `v``.
macro_rules! getters {
    ($class:ident, $($(#[doc = $doc:literal])* $name:ident: $ty:ty => |$v:ident| $get:expr;)*) => {
        #[pymethods]
        impl $class {
            $(
                $(#[doc = $doc])*
                #[getter]
                fn $name(&self) -> $ty {
                    let $v = &self.0;
                    $get
                }
            )*
        }
    };
}

/// [`getters!`] with the token counts of a value that has `tokens` and `total`.
macro_rules! token_getters {
    ($class:ident, $($rest:tt)*) => {
        getters!($class,
            /// Prompt tokens at full price (cache reads and writes are not in it).
            input: u64 => |v| v.tokens.input;
            /// Generated tokens, reasoning included.
            output: u64 => |v| v.tokens.output;
            cache_read: u64 => |v| v.tokens.cache_read;
            cache_write: u64 => |v| v.tokens.cache_write;
            /// Of the output, the reasoning tokens.
            reasoning: u64 => |v| v.tokens.reasoning;
            /// Input, output, cache reads and cache writes.
            total: u64 => |v| v.total;
            $($rest)*
        );
    };
}

token_getters!(PyModelUsage,
    /// The model, or None when the runtime did not say.
    model: Option<String> => |v| v.model.clone();
    /// USD, or None when the model has no price.
    cost_usd: Option<f64> => |v| v.cost_usd;
    /// Model responses counted.
    responses: u64 => |v| v.responses;
);

token_getters!(PyUsageRow,
    /// The day, week (its Monday), month, session id, project directory, model or provider; None
    /// for the totals and when the runtime did not say.
    key: Option<String> => |v| v.key.clone();
    /// By session: the session's title.
    title: Option<String> => |v| v.title.clone();
    /// USD of the priced responses, or None when none could be priced.
    cost_usd: Option<f64> => |v| v.cost_usd;
    /// Models of the row without a price (their tokens counted, their cost not).
    unpriced_models: Vec<String> => |v| v.unpriced_models.clone();
    /// Model responses counted.
    responses: u64 => |v| v.responses;
    /// The first response.
    first_at: chrono::DateTime<chrono::Utc> => |v| v.first_at.to_datetime();
    /// The last response.
    last_at: chrono::DateTime<chrono::Utc> => |v| v.last_at.to_datetime();
    /// The row by model, most expensive first.
    models: Vec<PyModelUsage> => |v| v.models.iter().cloned().map(PyModelUsage).collect();
);

getters!(PyUsageReport,
    /// "day", "week", "month", "session", "project", "model" or "provider".
    by: &'static str => |v| v.by.as_str();
    /// The time zone of days, weeks and months.
    tz: String => |v| v.tz.clone();
    /// One row per group.
    rows: Vec<PyUsageRow> => |v| v.rows.iter().cloned().map(PyUsageRow).collect();
    /// Every row together (its key is None).
    totals: PyUsageRow => |v| PyUsageRow(v.totals.clone());
    /// Every model without a price.
    unpriced_models: Vec<String> => |v| v.unpriced_models.clone();
    /// The shipped table's date.
    prices_date: String => |v| v.prices.date.clone();
    /// Where the shipped table's prices come from.
    prices_source: String => |v| v.prices.source.clone();
    /// The user price files read over it.
    price_files: Vec<String> => |v| v.prices.files.clone();
);

token_getters!(PyResponseUsage,
    /// The block that reports it.
    seq: u64 => |v| v.seq;
    /// When it was made.
    at: chrono::DateTime<chrono::Utc> => |v| v.at.to_datetime();
    /// The model, or None when the runtime did not say.
    model: Option<String> => |v| v.model.clone();
    /// USD, or None when the model has no price.
    cost_usd: Option<f64> => |v| v.cost_usd;
);

getters!(PySessionUsage,
    /// Each response, in order.
    responses: Vec<PyResponseUsage> => |v| v.responses.iter().cloned().map(PyResponseUsage).collect();
    /// The session's row of a report by session (its key is None).
    totals: PyUsageRow => |v| PyUsageRow(v.totals.clone());
    /// The shipped price table's date.
    prices_date: String => |v| v.prices.date.clone();
    /// The user price files read over it.
    price_files: Vec<String> => |v| v.prices.files.clone();
);
