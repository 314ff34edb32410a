//! `Store` and `Session`: thin wrappers that convert arguments, release the GIL and call core.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde_json::{Map, Value};
use sna_history as core;

use crate::convert::{to_json, to_py_large, type_name};
use crate::errors::{detached, invalid, IntoPy};
use crate::types::{
    block_from_dict, block_from_py, PyBinding, PyBlock, PyCompaction, PyContinuation, PyExport, PyReport, PyResumePlan,
    PySearchHit, PySessionInfo, PySessionUsage, PySwitch, PySyncReport, PyUsageReport,
};

fn runtime(name: &str) -> PyResult<core::Runtime> {
    name.parse::<core::Runtime>().py()
}

/// Keyword arguments as an options object for core, which parses it and refuses unknown keys.
fn keyword_map(extra: Option<&Bound<'_, PyDict>>) -> PyResult<Map<String, Value>> {
    match extra {
        Some(extra) => match to_json(extra.as_any(), "")? {
            Value::Object(map) => Ok(map),
            _ => Ok(Map::new()),
        },
        None => Ok(Map::new()),
    }
}

/// Conversion options from `format` and keyword arguments.
fn options(format: Option<String>, extra: Option<&Bound<'_, PyDict>>) -> PyResult<core::Options> {
    let mut map = keyword_map(extra)?;
    if let Some(format) = format {
        map.insert("format".into(), Value::String(format));
    }
    core::Options::from_value(Value::Object(map)).py()
}

/// What a caller's summarizer raised, kept to be raised again as it was once the conversion
/// (which it stopped) returns.
#[derive(Clone, Default)]
struct Raised(Arc<Mutex<Option<PyErr>>>);

impl Raised {
    /// The result of a conversion, its error replaced by what the summarizer raised, if it raised.
    fn or<T>(&self, result: PyResult<T>) -> PyResult<T> {
        result.map_err(|err| self.0.lock().unwrap_or_else(|p| p.into_inner()).take().unwrap_or(err))
    }
}

/// A Python callable as core's summarizer of the turns a replay folds to fit its context budget:
/// called with the GIL taken again (the conversion runs detached) and a `list[Block]` of the
/// folded blocks, it returns the `str` that stands in for them. What it raises is kept in
/// `raised` and core is told the conversion failed, so nothing is written; a result that is not
/// a `str` is an `INVALID_INPUT` error naming `summarizer`.
fn summarizer(callable: Option<&Bound<'_, PyAny>>, raised: &Raised) -> PyResult<Option<core::replay::budget::Summarizer>> {
    let Some(callable) = callable.filter(|c| !c.is_none()) else { return Ok(None) };
    if !callable.is_callable() {
        return Err(invalid("summarizer", format!("expected a callable taking list[Block] and returning str, not {}", type_name(callable))));
    }
    let callable = callable.clone().unbind();
    let kept = raised.0.clone();
    Ok(Some(core::replay::budget::Summarizer::new(move |blocks: &[core::Block]| {
        Python::attach(|py| {
            let blocks: Vec<PyBlock> = blocks.iter().cloned().map(PyBlock::new).collect();
            let text = match callable.bind(py).call1((blocks,)) {
                Ok(text) => text,
                Err(err) => {
                    let message = format!("the summarizer raised {}", err);
                    *kept.lock().unwrap_or_else(|p| p.into_inner()) = Some(err);
                    return Err(core::Error::invalid_field("summarizer", message));
                }
            };
            let Ok(text) = text.cast::<PyString>() else {
                return Err(core::Error::invalid_field("summarizer", format!("the summarizer must return a str, not {}", type_name(&text))));
            };
            text.to_str()
                .map(str::to_owned)
                .map_err(|_| core::Error::invalid_field("summarizer", "the summarizer returned a str that is not valid Unicode (it holds a lone surrogate)"))
        })
    })))
}

/// Conversion options from `format`, `summarizer` and keyword arguments, with the slot where what
/// the summarizer raises is kept.
fn conversion(format: Option<String>, summarizer: Option<&Bound<'_, PyAny>>, extra: Option<&Bound<'_, PyDict>>) -> PyResult<(core::Options, Raised)> {
    let raised = Raised::default();
    let mut options = options(format, extra)?;
    options.summarizer = self::summarizer(summarizer, &raised)?;
    Ok((options, raised))
}

fn path_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<PathBuf> {
    obj.extract::<PathBuf>().map_err(|_| invalid(what, format!("expected a path (str or os.PathLike), not {}", type_name(obj))))
}

/// A path argument as text: core takes paths in options as strings, so one that is not valid
/// UTF-8 is refused rather than altered.
fn path_text(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    path_arg(obj, what)?.into_os_string().into_string().map_err(|path| invalid(what, format!("{} must be valid UTF-8", path.to_string_lossy())))
}

/// A Python file object as a writer: each write takes the GIL and calls `file.write(bytes)`; what
/// that raises is kept to be raised again as it was.
struct PyWriter {
    file: Py<PyAny>,
    raised: Option<PyErr>,
}

impl std::io::Write for PyWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.raised.is_some() {
            // Once `write` raised, the file is not called again (a flush on the way out would).
            return Err(std::io::Error::other("the file's write raised"));
        }
        Python::attach(|py| {
            let wrote = self.file.bind(py).call_method1("write", (pyo3::types::PyBytes::new(py, buf),));
            match wrote {
                // A raw file may write less than it was given and says how much; buffered files and
                // BytesIO take it all. `None` is a non-blocking raw file that took nothing.
                Ok(n) if n.is_none() => Err(std::io::Error::new(std::io::ErrorKind::WouldBlock, "the file's write took nothing (a non-blocking file?)")),
                Ok(n) => Ok(n.extract::<usize>().ok().filter(|&n| n <= buf.len()).unwrap_or(buf.len())),
                Err(err) => {
                    let message = err.to_string();
                    self.raised = Some(err);
                    Err(std::io::Error::other(message))
                }
            }
        })
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn blocks_to_py(blocks: Vec<core::Block>) -> Vec<PyBlock> {
    blocks.into_iter().map(PyBlock::new).collect()
}

/// A database of sessions.
///
/// Args:
///     path: The database file (created if missing); `None` for an in-memory store.
///
/// Raises:
///     InvalidInputError: `path` is a directory, not SQLite, or another application's database.
///     SchemaTooNewError: The database was written by a newer sna-history (it is left untouched).
///     IoError: The directory of `path` does not exist.
///
/// A `Store` is a context manager; leaving the `with` block closes it.
#[pyclass(frozen, module = "sna_history", name = "Store")]
pub struct PyStore {
    pub(crate) inner: core::Store,
}

#[pymethods]
impl PyStore {
    #[new]
    #[pyo3(signature = (path = None))]
    fn py_new(py: Python<'_>, path: Option<Bound<'_, PyAny>>) -> PyResult<Self> {
        let path = path.filter(|p| !p.is_none()).map(|p| path_arg(&p, "path")).transpose()?;
        let inner = detached(py, move || match path {
            Some(path) => core::Store::open(path),
            None => core::Store::open_in_memory(),
        })?;
        Ok(PyStore { inner })
    }

    /// The database file, or `None` for an in-memory or PostgreSQL store.
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.inner.path().map(PathBuf::from)
    }

    /// A PostgreSQL store's URL without its password, `None` for SQLite.
    #[getter]
    fn url(&self) -> Option<String> {
        self.inner.url().map(str::to_string)
    }

    /// True once `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// Creates an empty session.
    ///
    /// Args:
    ///     id: The session id; a time-ordered UUID when omitted.
    ///     title: A title.
    ///     cwd: The working directory of the conversation.
    ///
    /// Raises:
    ///     ConflictError: A session with this id exists.
    #[pyo3(signature = (id = None, title = None, cwd = None))]
    fn create_session(
        &self,
        py: Python<'_>,
        id: Option<String>,
        title: Option<String>,
        cwd: Option<Bound<'_, PyAny>>,
    ) -> PyResult<PySession> {
        let mut map = Map::new();
        map.insert("id".into(), id.map_or(Value::Null, Value::String));
        map.insert("title".into(), title.map_or(Value::Null, Value::String));
        map.insert("cwd".into(), cwd.filter(|c| !c.is_none()).map(|c| path_text(&c, "cwd")).transpose()?.map_or(Value::Null, Value::String));
        let new = core::NewSession::from_value(Value::Object(map)).py()?;
        let inner = detached(py, || self.inner.create_session(new))?;
        Ok(PySession { inner })
    }

    /// The session with this id.
    ///
    /// Raises:
    ///     NotFoundError: There is none.
    fn session(&self, py: Python<'_>, id: &str) -> PyResult<PySession> {
        let inner = detached(py, || self.inner.session(id))?;
        Ok(PySession { inner })
    }

    /// Every session, most recently updated first.
    fn sessions(&self, py: Python<'_>) -> PyResult<Vec<PySessionInfo>> {
        let list = detached(py, || self.inner.sessions())?;
        Ok(list.into_iter().map(PySessionInfo).collect())
    }

    /// Deletes a session, its blocks and bindings; embed bytes no other session uses are freed.
    ///
    /// Raises:
    ///     NotFoundError: There is no such session.
    fn delete_session(&self, py: Python<'_>, id: &str) -> PyResult<()> {
        detached(py, || self.inner.delete_session(id))
    }

    /// Full-text search over every session's blocks, best first.
    ///
    /// Args:
    ///     query: Words (any case and accents), "phrases", prefix*, AND (also between words side by
    ///         side), OR, `a NOT b`, parentheses. CJK text and emoji are searched character by character.
    ///     runtime: Only blocks of this runtime (provider).
    ///     model: Only blocks of this model.
    ///     session: Only this session.
    ///     kinds: Only these kinds ("text", "thinking", "tool_use", "tool_result", "status", "error").
    ///     since: Only blocks created at or after this time (datetime, "YYYY-MM-DD" or RFC 3339).
    ///     until: Only blocks created before this time.
    ///     limit: At most this many hits (1 to 10,000).
    ///     bookkeeping: Search runtime bookkeeping too.
    ///
    /// Raises:
    ///     InvalidInputError: A malformed query (field `query`, saying what and where), or a bad option.
    #[pyo3(signature = (query, *, runtime = None, model = None, session = None, kinds = None, since = None, until = None, limit = 50, bookkeeping = false))]
    #[allow(clippy::too_many_arguments)]
    fn search(
        &self,
        py: Python<'_>,
        query: &str,
        runtime: Option<String>,
        model: Option<String>,
        session: Option<String>,
        kinds: Option<Vec<String>>,
        since: Option<Bound<'_, PyAny>>,
        until: Option<Bound<'_, PyAny>>,
        limit: u64,
        bookkeeping: bool,
    ) -> PyResult<Vec<PySearchHit>> {
        let time = |value: Option<Bound<'_, PyAny>>, name: &str| -> PyResult<Option<core::Timestamp>> {
            let Some(v) = value.filter(|v| !v.is_none()) else { return Ok(None) };
            if let Ok(t) = v.extract::<chrono::DateTime<chrono::Utc>>() {
                return Ok(Some(core::Timestamp::from_datetime(&t)));
            }
            match v.extract::<String>() {
                Ok(text) => core::SearchOptions::time_named(name, &text).map(Some).py(),
                Err(_) => Err(invalid(name, format!("{name} is a datetime (with a time zone) or a string, not {}", type_name(&v)))),
            }
        };
        let options = core::SearchOptions {
            runtime,
            model,
            session,
            kinds: kinds.map(|names| core::SearchOptions::kinds_named(&names)).transpose().py()?,
            since: time(since, "since")?,
            until: time(until, "until")?,
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
            bookkeeping,
        };
        let hits = detached(py, || self.inner.search(query, &options))?;
        Ok(hits.into_iter().map(PySearchHit).collect())
    }

    /// Token usage and cost of every session, grouped, each row broken down by model, with totals.
    ///
    /// A response written more than once counts once. Its cost is the runtime's own when it
    /// reported one, else from the price table; a model with neither is listed in
    /// `unpriced_models` and adds nothing to `cost_usd` (None when nothing could be priced).
    ///
    /// Args:
    ///     by: "day" (default), "week" (from Monday, named by it), "month", "session", "project",
    ///         "model" or "provider".
    ///     since: From this day (a date or "YYYY-MM-DD": a calendar day in `tz`) or time (a datetime
    ///         with a time zone, or RFC 3339) on.
    ///     until: Up to this day, included, or before this time.
    ///     runtime: Only this runtime's responses.
    ///     model: Only this model's responses.
    ///     tz: The IANA time zone of days, weeks and months (default: the system's, TZ when set).
    ///     prices: A price file read over the shipped table (default: $XDG_CONFIG_HOME/sna/prices.json
    ///         when it exists).
    ///
    /// Raises:
    ///     InvalidInputError: A bad option, naming it; a price file that cannot be read or is not one.
    #[pyo3(signature = (*, by = "day", since = None, until = None, runtime = None, model = None, tz = None, prices = None))]
    #[allow(clippy::too_many_arguments)]
    fn usage(
        &self,
        py: Python<'_>,
        by: &str,
        since: Option<Bound<'_, PyAny>>,
        until: Option<Bound<'_, PyAny>>,
        runtime: Option<String>,
        model: Option<String>,
        tz: Option<String>,
        prices: Option<std::path::PathBuf>,
    ) -> PyResult<PyUsageReport> {
        let day = |value: Option<Bound<'_, PyAny>>, name: &str| -> PyResult<Option<String>> {
            let Some(v) = value.filter(|v| !v.is_none()) else { return Ok(None) };
            if let Ok(t) = v.extract::<chrono::DateTime<chrono::Utc>>() {
                return Ok(Some(t.to_rfc3339()));
            }
            if v.is_instance_of::<pyo3::types::PyDateTime>() {
                return Err(invalid(name, format!("{name} is a datetime without a time zone: give it one (or a date for a whole day)")));
            }
            if let Ok(date) = v.extract::<chrono::NaiveDate>() {
                return Ok(Some(date.format("%Y-%m-%d").to_string()));
            }
            v.extract::<String>()
                .map(Some)
                .map_err(|_| invalid(name, format!("{name} is a date, a datetime (with a time zone) or a string, not {}", type_name(&v))))
        };
        let options = core::UsageOptions { by: by.parse().py()?, since: day(since, "since")?, until: day(until, "until")?, runtime, model, tz, prices };
        detached(py, || self.inner.usage(&options)).map(PyUsageReport)
    }

    /// The random id (32 hex digits) that names this store to the stores it syncs with.
    fn store_id(&self, py: Python<'_>) -> PyResult<String> {
        detached(py, || self.inner.store_id())
    }

    /// Copies into `target` the sessions and blocks it lacks, with their ids, times, attribution
    /// and embed bytes; a second call copies nothing, and a call that was stopped is completed by
    /// the next. Sessions whose histories differ in the two stores are listed in `conflicts` and
    /// left as they are on both sides.
    ///
    /// Args:
    ///     target: Another `Store` (a file or a PostgreSQL database).
    ///     origin: The machine name recorded on the sessions made in this store (default: this
    ///         machine's host name; for a PostgreSQL store, the server).
    ///
    /// Raises:
    ///     InvalidInputError: `target` is this store (or a copy of its file).
    #[pyo3(signature = (target, *, origin = None))]
    fn sync_to(&self, py: Python<'_>, target: PyRef<'_, PyStore>, origin: Option<String>) -> PyResult<PySyncReport> {
        let target = target.inner.clone();
        let options = core::SyncOptions { origin };
        detached(py, || self.inner.sync_to(&target, &options)).map(PySyncReport)
    }

    /// Number of distinct embed blobs stored.
    fn blob_count(&self, py: Python<'_>) -> PyResult<u64> {
        detached(py, || self.inner.blob_count())
    }

    /// Imports native history of `runtime` as a new session.
    ///
    /// Args:
    ///     runtime: "claude-code", "codex", "opencode", "gemini-cli", "pi", "qwen-code" or "copilot-cli".
    ///     source: Native text (`str`), bytes, a path (`os.PathLike`), or parsed data (list/dict).
    ///     **options: `strict`, `session_id`, … (see `to_native`).
    #[pyo3(signature = (runtime, source, **options))]
    fn import_native(
        &self,
        py: Python<'_>,
        runtime: &str,
        source: &Bound<'_, PyAny>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PySession> {
        let rt = self::runtime(runtime)?;
        let opts = self::options(None, options)?;
        let source = if let Ok(text) = source.cast::<PyString>() {
            core::Source::Text(text.to_str().map_err(|_| invalid("source", "text is not valid Unicode"))?.to_owned())
        } else if let Ok(bytes) = source.cast::<pyo3::types::PyBytes>() {
            core::Source::Bytes(bytes.as_bytes().to_vec())
        } else if source.cast::<PyDict>().is_ok() || source.cast::<PyList>().is_ok() {
            core::Source::Value(to_json(source, "source")?)
        } else if let Ok(path) = source.extract::<PathBuf>() {
            core::Source::Path(path)
        } else {
            return Err(invalid(
                "source",
                format!("expected str, bytes, os.PathLike, list or dict, not {}", type_name(source)),
            ));
        };
        let inner = detached(py, || self.inner.import_native(rt, source, &opts))?;
        Ok(PySession { inner })
    }

    /// Imports a native file; the runtime is detected from the content when `runtime` is None.
    #[pyo3(signature = (path, runtime = None, **options))]
    fn import_file(
        &self,
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        runtime: Option<&str>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PySession> {
        let path = path_arg(path, "path")?;
        let rt = runtime.map(self::runtime).transpose()?;
        let opts = self::options(None, options)?;
        let inner = detached(py, || self.inner.import_file(&path, rt, &opts))?;
        Ok(PySession { inner })
    }

    /// Imports a native file and remembers it: importing the same path again adds only what the
    /// file gained. Returns `(session, outcome, blocks_added)` with `outcome` one of "imported",
    /// "unchanged", "appended", "replaced".
    #[pyo3(signature = (path, runtime = None, **options))]
    fn import_source(
        &self,
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        runtime: Option<&str>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<(PySession, &'static str, u64)> {
        let path = path_arg(path, "path")?;
        let rt = runtime.map(self::runtime).transpose()?;
        let opts = self::options(None, options)?;
        let done = detached(py, || self.inner.import_source(&path, rt, &opts))?;
        Ok((PySession { inner: done.session }, done.outcome.as_str(), done.blocks_added))
    }

    /// True when the file at `path` was imported and still looks as it did then (length, modification
    /// time, inode and device, and not written within 2 s of that read): importing it again would
    /// do nothing, and deciding so read none of its bytes. False when it has to be read to tell.
    fn source_unchanged(&self, py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<bool> {
        let path = path_arg(path, "path")?;
        detached(py, || self.inner.source_unchanged(&path))
    }

    /// Imports every session of an `opencode.db` (read-only), most recently updated first;
    /// sessions already in the store are skipped. Returns the sessions imported.
    fn import_opencode_db(&self, py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<Vec<PySession>> {
        let path = path_arg(path, "path")?;
        let sessions = detached(py, || self.inner.import_opencode_db(&path))?;
        Ok(sessions.into_iter().map(|inner| PySession { inner }).collect())
    }

    /// Imports every session of a database file (`opencode.db`, read-only) not yet in the store,
    /// most recently updated first; the runtime is detected from the file's header unless given.
    /// Returns the sessions imported.
    #[pyo3(signature = (path, runtime = None))]
    fn import_database(&self, py: Python<'_>, path: &Bound<'_, PyAny>, runtime: Option<&str>) -> PyResult<Vec<PySession>> {
        let path = path_arg(path, "path")?;
        let rt = runtime.map(self::runtime).transpose()?;
        let sessions = detached(py, || self.inner.import_database(&path, rt))?;
        Ok(sessions.into_iter().map(|inner| PySession { inner }).collect())
    }

    /// Closes the database; later calls raise `ClosedError`. Closing twice is harmless.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        detached(py, || self.inner.close())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        match self.inner.path() {
            Some(path) => format!("Store({:?})", path.display().to_string()),
            None => "Store(None)".to_string(),
        }
    }
}

/// One session of a store: an ordered list of blocks.
///
/// A `Session` is a context manager (leaving it does nothing but end the `with` block; close the
/// store to release the database).
#[pyclass(frozen, module = "sna_history", name = "Session")]
pub struct PySession {
    pub(crate) inner: core::Session,
}

#[pymethods]
impl PySession {
    /// The session id.
    #[getter]
    fn id(&self) -> &str {
        self.inner.id()
    }

    /// Appends one block and returns it with `seq` and `id` filled in.
    ///
    /// Pass a `Block`, a dict of fields, or the fields as keyword arguments:
    /// `session.append(actor="user", kind="text", content="hi")`.
    ///
    /// Raises:
    ///     InvalidInputError: The block is invalid; the message names the field.
    ///     ConflictError: Its id, or an embed id with other bytes, exists already.
    ///     NotFoundError: The session was deleted.
    #[pyo3(signature = (block = None, **fields))]
    fn append(
        &self,
        py: Python<'_>,
        block: Option<&Bound<'_, PyAny>>,
        fields: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyBlock> {
        let block = match (block, fields) {
            (Some(_), Some(f)) if !f.is_empty() => {
                return Err(invalid("block", "pass a block or keyword fields, not both"));
            }
            (Some(block), _) => block_from_py(block, "block")?,
            (None, Some(fields)) => block_from_dict(fields)?,
            (None, None) => return Err(invalid("block", "append needs a block (or its fields as keyword arguments)")),
        };
        let stored = detached(py, || self.inner.append(block))?;
        Ok(PyBlock::new(stored))
    }

    /// Appends blocks (Blocks or dicts) in one transaction: all are stored or none.
    ///
    /// Raises:
    ///     InvalidInputError: A block is invalid; `index` says which one.
    fn extend(&self, py: Python<'_>, blocks: &Bound<'_, PyAny>) -> PyResult<Vec<PyBlock>> {
        let mut list = Vec::new();
        let iter = blocks.try_iter().map_err(|_| invalid("blocks", format!("expected an iterable of blocks, not {}", type_name(blocks))))?;
        for (index, item) in iter.enumerate() {
            let block = block_from_py(&item?, &format!("blocks[{index}]")).map_err(|e| e.at_index(index))?;
            list.push(block);
        }
        let stored = detached(py, || self.inner.extend(list))?;
        Ok(blocks_to_py(stored))
    }

    /// Every block, in order.
    fn blocks(&self, py: Python<'_>) -> PyResult<Vec<PyBlock>> {
        Ok(blocks_to_py(detached(py, || self.inner.blocks())?))
    }

    /// The blocks with `start <= seq < stop`.
    fn blocks_range(&self, py: Python<'_>, start: u64, stop: u64) -> PyResult<Vec<PyBlock>> {
        Ok(blocks_to_py(detached(py, || self.inner.blocks_range(start, stop))?))
    }

    /// The block with this id.
    ///
    /// Raises:
    ///     NotFoundError: This session has none.
    fn block(&self, py: Python<'_>, id: &str) -> PyResult<PyBlock> {
        Ok(PyBlock::new(detached(py, || self.inner.block(id))?))
    }

    /// The bytes of an embed of this session.
    ///
    /// Raises:
    ///     NotFoundError: No embed has this id.
    fn embed<'py>(&self, py: Python<'py>, embed_id: &str) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let data = detached(py, || self.inner.embed(embed_id))?;
        Ok(pyo3::types::PyBytes::new(py, &data))
    }

    /// What `Store.sessions()` lists about this session (title, cwd, counts, models).
    fn info(&self, py: Python<'_>) -> PyResult<PySessionInfo> {
        Ok(PySessionInfo(detached(py, || self.inner.info())?))
    }

    /// What the import of this session kept but could not read: one "malformed" entry per native
    /// line stored as an `error` block, naming the line and the reason, and one "degraded" entry
    /// per line whose text had to be repaired to be read.
    fn import_report(&self, py: Python<'_>) -> PyResult<PyReport> {
        Ok(PyReport(detached(py, || self.inner.import_report())?))
    }

    /// The secrets the session holds (API keys, tokens, private keys, passwords), as dicts with
    /// `seq`, `block_id`, `kind` and a masked `preview`; nothing is changed.
    fn scan_secrets<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let found = detached(py, || self.inner.scan_secrets())?;
        let value = serde_json::to_value(&found).map_err(|e| crate::errors::to_py_err(core::Error::Internal(e.to_string())))?;
        crate::convert::to_py(py, &value)
    }

    /// Rewrites the stored session with its secrets replaced by `[REDACTED:<kind>]`, in one
    /// transaction (the old text is not left in the file); returns one "redacted" entry per block
    /// changed. This cannot be undone.
    fn redact_in_place(&self, py: Python<'_>) -> PyResult<PyReport> {
        Ok(PyReport(detached(py, || self.inner.redact_in_place())?))
    }

    /// The session's token usage, response by response, priced as `Store.usage` prices it.
    ///
    /// Args:
    ///     prices: A price file read over the shipped table (default: $XDG_CONFIG_HOME/sna/prices.json
    ///         when it exists).
    #[pyo3(signature = (*, prices = None))]
    fn usage(&self, py: Python<'_>, prices: Option<std::path::PathBuf>) -> PyResult<PySessionUsage> {
        detached(py, || self.inner.usage(prices.as_deref())).map(PySessionUsage)
    }

    /// Every change of (provider, model_provider, model), with the seq where it happens.
    fn switches(&self, py: Python<'_>) -> PyResult<Vec<PySwitch>> {
        Ok(detached(py, || self.inner.switches())?.into_iter().map(PySwitch).collect())
    }

    /// Every compaction a runtime made in this session, oldest first: where its boundary and its
    /// summary are, what it preserved, what started it, the tokens before it and when.
    fn compactions(&self, py: Python<'_>) -> PyResult<Vec<PyCompaction>> {
        Ok(detached(py, || self.inner.compactions())?.into_iter().map(PyCompaction).collect())
    }

    /// Records that the native thread `native_id` of `runtime` holds the blocks up to `through_seq`.
    fn bind(&self, py: Python<'_>, runtime: &str, native_id: &str, through_seq: u64) -> PyResult<PyBinding> {
        let rt = self::runtime(runtime)?;
        Ok(PyBinding(detached(py, || self.inner.bind(rt, native_id, through_seq))?))
    }

    /// The binding recorded for `runtime`, or None.
    fn binding(&self, py: Python<'_>, runtime: &str) -> PyResult<Option<PyBinding>> {
        let rt = self::runtime(runtime)?;
        Ok(detached(py, || self.inner.binding(rt))?.map(PyBinding))
    }

    /// How to go on in `runtime`: continue the bound thread with the pending blocks, or replay.
    fn continuation(&self, py: Python<'_>, runtime: &str) -> PyResult<PyContinuation> {
        let rt = self::runtime(runtime)?;
        Ok(PyContinuation(detached(py, || self.inner.continuation(rt))?))
    }

    /// The session in `runtime`'s native shape, as plain Python data.
    ///
    /// Args:
    ///     runtime: "claude-code", "codex", "opencode", "gemini-cli", "pi", "qwen-code" or "copilot-cli".
    ///     format: One of `formats(runtime)`; the first is the default.
    ///     summarizer: A callable given the blocks of the oldest whole turns folded to fit the
    ///         context budget (`list[Block]`, oldest first) that returns the `str` standing in for
    ///         them (default: a digest of what each turn asked). It is called with the GIL held;
    ///         what it raises stops the conversion and is raised as it was.
    ///     **options: `strict`, `target_model`, `foreign_reasoning` ("drop" or "text"),
    ///         `model_provider`, `redact`, `compaction` ("latest", the default: a replay starts at
    ///         the latest compaction of another runtime; or "none": the whole history),
    ///         `context_window` (the target's window in tokens: a replay over it folds its oldest
    ///         whole turns), `models` (a model file read over the shipped table).
    ///
    /// Raises:
    ///     InvalidInputError: Unknown runtime, format or option; a summarizer that does not return a str.
    ///     LossyError: `strict=True` and the conversion would lose something.
    ///     Whatever `summarizer` raises, as it raised it.
    #[pyo3(signature = (runtime, format = None, *, summarizer = None, **options))]
    fn to_native<'py>(
        &self,
        py: Python<'py>,
        runtime: &str,
        format: Option<String>,
        summarizer: Option<&Bound<'_, PyAny>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let rt = self::runtime(runtime)?;
        let (opts, raised) = self::conversion(format, summarizer, options)?;
        let data = raised.or(detached(py, || self.inner.to_native(rt, &opts)))?;
        to_py_large(py, &data)
    }

    /// The session as the text of a file in `runtime`'s native format (JSONL for transcripts and
    /// rollouts, a JSON document for the others): the text `to_native`'s data is written as, made
    /// from the stored records without turning them into Python objects.
    ///
    /// Args:
    ///     runtime: The runtime, as in `to_native`.
    ///     format: One of `formats(runtime)`; the first is the default.
    ///     summarizer: As in `to_native`.
    ///     **options: As in `to_native`.
    ///
    /// Raises:
    ///     InvalidInputError: Unknown runtime, format or option.
    ///     LossyError: `strict=True` and the conversion would lose something.
    ///     Whatever `summarizer` raises, as it raised it.
    #[pyo3(signature = (runtime, format = None, *, summarizer = None, **options))]
    fn to_native_text(
        &self,
        py: Python<'_>,
        runtime: &str,
        format: Option<String>,
        summarizer: Option<&Bound<'_, PyAny>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<String> {
        let rt = self::runtime(runtime)?;
        let (opts, raised) = self::conversion(format, summarizer, options)?;
        raised.or(detached(py, || self.inner.to_native_text(rt, &opts)))
    }

    /// Writes the session in `runtime`'s native format to `dest`: a path (the file is replaced
    /// whole once the text is complete; a failure leaves it as it was) or a binary file object (anything with `write(bytes)`). The bytes are those of
    /// `to_native_text`, written as they are made. Returns the fidelity `Report`.
    ///
    /// Raises:
    ///     InvalidInputError: Unknown runtime, format or option; `dest` is a text-mode file.
    ///     LossyError: `strict=True` and the conversion would lose something (nothing is written).
    ///     IoError: The file cannot be created or written.
    ///     Whatever `dest.write` or `summarizer` (as in `to_native`) raises, as it raised it; a
    ///     summarizer that raises leaves nothing written.
    #[pyo3(signature = (dest, runtime, format = None, *, summarizer = None, **options))]
    fn export_to(
        &self,
        py: Python<'_>,
        dest: &Bound<'_, PyAny>,
        runtime: &str,
        format: Option<String>,
        summarizer: Option<&Bound<'_, PyAny>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyReport> {
        let rt = self::runtime(runtime)?;
        let (opts, raised) = self::conversion(format, summarizer, options)?;
        if !dest.hasattr("write")? {
            let path = path_arg(dest, "dest")?;
            return Ok(PyReport(raised.or(detached(py, || self.inner.export_to_path(&path, rt, &opts)))?));
        }
        if dest.hasattr("encoding")? {
            return Err(invalid("dest", "expected a binary file (open it with \"wb\"), not a text-mode file"));
        }
        let mut writer = PyWriter { file: dest.clone().unbind(), raised: None };
        let result = raised.or(detached(py, || self.inner.export_to(&mut writer, rt, &opts)));
        match (result, writer.raised) {
            (Err(_), Some(raised)) => Err(raised),
            (result, _) => Ok(PyReport(result?)),
        }
    }

    /// Like `to_native`, with the fidelity report: an `Export` with `data` and `report`.
    #[pyo3(signature = (runtime, format = None, *, summarizer = None, **options))]
    fn export(
        &self,
        py: Python<'_>,
        runtime: &str,
        format: Option<String>,
        summarizer: Option<&Bound<'_, PyAny>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyExport> {
        let rt = self::runtime(runtime)?;
        let (opts, raised) = self::conversion(format, summarizer, options)?;
        let export = raised.or(detached(py, || self.inner.export(rt, &opts)))?;
        Ok(PyExport { data: to_py_large(py, &export.data)?.unbind(), report: Py::new(py, PyReport(export.report))? })
    }

    /// Appends the blocks a live event of `runtime` completes; returns them.
    fn ingest(&self, py: Python<'_>, runtime: &str, event: &Bound<'_, PyAny>) -> PyResult<Vec<PyBlock>> {
        let rt = self::runtime(runtime)?;
        let event = to_json(event, "event")?;
        Ok(blocks_to_py(detached(py, || self.inner.ingest(rt, &event))?))
    }

    /// Writes the native files `runtime` needs to resume this session; returns a `ResumePlan`.
    ///
    /// Args:
    ///     runtime: The runtime to resume in.
    ///     home: The user's home directory under which the runtime keeps its data (default: $HOME).
    ///     cwd: The working directory of the resumed runtime (default: the session's).
    ///     config_dir: Claude Code: write under this config dir instead of `<home>/.claude` (what
    ///         CLAUDE_CONFIG_DIR names; the plan's `env` then sets it).
    ///     codex_home: Codex: write under this Codex home instead of `<home>/.codex` (what
    ///         CODEX_HOME names; the plan's `env` then sets it).
    ///     run_import: OpenCode: run `opencode import` of the written document now (its outcome
    ///         is in the plan's `ran`; a failure raises).
    ///     opencode_bin: OpenCode: the `opencode` program to run and name (default: on PATH).
    ///     summarizer: As for `to_native`; what it raises is raised as it was, nothing written
    ///         and no binding recorded.
    ///     **options: As for `to_native`.
    #[pyo3(signature = (runtime, home = None, cwd = None, config_dir = None, codex_home = None, run_import = false, opencode_bin = None, *, summarizer = None, **options))]
    #[allow(clippy::too_many_arguments)] // keyword arguments of the Python method
    fn prepare_resume(
        &self,
        py: Python<'_>,
        runtime: &str,
        home: Option<&Bound<'_, PyAny>>,
        cwd: Option<&Bound<'_, PyAny>>,
        config_dir: Option<&Bound<'_, PyAny>>,
        codex_home: Option<&Bound<'_, PyAny>>,
        run_import: bool,
        opencode_bin: Option<&Bound<'_, PyAny>>,
        summarizer: Option<&Bound<'_, PyAny>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyResumePlan> {
        let rt = self::runtime(runtime)?;
        let mut map = keyword_map(options)?;
        let paths = [("home", home), ("cwd", cwd), ("config_dir", config_dir), ("codex_home", codex_home), ("opencode_bin", opencode_bin)];
        for (key, value) in paths {
            if let Some(value) = value.filter(|v| !v.is_none()) {
                map.insert(key.into(), Value::String(path_text(value, key)?));
            }
        }
        map.insert("run_import".into(), Value::Bool(run_import));
        let mut resume = core::ResumeOptions::from_value(Value::Object(map)).py()?;
        let raised = Raised::default();
        resume.options.summarizer = self::summarizer(summarizer, &raised)?;
        Ok(PyResumePlan(raised.or(detached(py, || self.inner.prepare_resume(rt, &resume)))?))
    }

    /// Number of blocks.
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(detached(py, || self.inner.len())? as usize)
    }

    /// A session is true even when empty (`__len__` would make an empty one false).
    fn __bool__(&self) -> bool {
        true
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        false
    }

    fn __repr__(&self) -> String {
        format!("Session({:?})", self.inner.id())
    }
}
