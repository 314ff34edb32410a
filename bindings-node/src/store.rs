//! The `Store` and `Session` classes: each method converts its arguments, calls core once and
//! converts the result. Every body runs inside [`guard`], so a panic becomes an `INTERNAL` error.

use napi::bindgen_prelude::{AsyncTask, Buffer, BufferSlice, Function, JsObjectValue, Object, Unknown};
use napi::{Env, JsValue, ValueType};
use napi_derive::napi;
use serde_json::{Map, Value};
use sna_history as core;

use crate::convert::{self, camel, Js, JsonText, Shape, SUMMARIZER};
use crate::error::{bad_argument, from_core, from_napi, guard, pending, CoreResult, Result};
use crate::host::{awaiting, Call};
use crate::summarizer::{summarizer, Thrown};

fn options(map: Map<String, Value>) -> Result<core::Options> {
    core::Options::from_value(Value::Object(map)).js()
}

/// Refuses a summarizer given to a synchronous call: it may answer with a Promise, which only the
/// event loop settles, while the call holds the JavaScript thread.
fn no_summarizer(summarizer: Option<Unknown<'_>>) -> Result<()> {
    match summarizer {
        None => Ok(()),
        Some(_) => Err(from_core(core::Error::invalid_field(
            SUMMARIZER,
            "a synchronous call cannot await a summarizer: use exportAsync or prepareResumeAsync, which take one",
        ))),
    }
}

/// The conversion options of a synchronous call (a summarizer is refused).
fn sync_options(value: Option<Unknown<'_>>) -> Result<core::Options> {
    let (map, summarizer) = convert::conversion_options(value, "options", Shape::Options)?;
    no_summarizer(summarizer)?;
    options(map)
}

/// The conversion options of an async call, with the summarizer they give (its failure kept in
/// the returned slot).
fn async_options(value: Option<Unknown<'_>>) -> Result<(core::Options, Thrown)> {
    let (map, given) = convert::conversion_options(value, "options", Shape::Options)?;
    let mut options = options(map)?;
    let thrown = Thrown::default();
    options.summarizer = given.map(|f| summarizer(f, &thrown)).transpose()?;
    Ok((options, thrown))
}

fn export_js((data, report): (String, core::Report)) -> Result<JsonText> {
    JsonText::export(data, &report)
}

fn plan_js(plan: core::ResumePlan) -> Result<Js> {
    camel(&plan)
}

/// A writable stream as a writer: each write calls `stream.write(Buffer)` on this thread.
struct StreamWriter<'a, 'env> {
    env: &'a Env,
    stream: &'a Object<'env>,
    write: Function<'env, BufferSlice<'env>, Unknown<'env>>,
    /// `write` threw: its exception is pending.
    threw: bool,
}

impl std::io::Write for StreamWriter<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let chunk = BufferSlice::copy_from(self.env, buf).map_err(|e| std::io::Error::other(e.reason.clone()))?;
        match self.write.apply(self.stream, chunk) {
            Ok(_) => Ok(buf.len()),
            Err(e) => {
                self.threw = true;
                Err(std::io::Error::other(format!("the stream's write threw: {}", e.reason)))
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn blocks_out(blocks: Vec<core::Block>) -> Result<Js> {
    camel(&blocks)
}

/// A database of sessions: a SQLite file, or an in-memory database when no path is given.
///
/// A `Store` belongs to the thread (main or worker) that opened it; open one per worker on the
/// same file, and SQLite keeps them consistent.
#[napi]
pub struct Store {
    inner: core::Store,
}

#[napi]
impl Store {
    /// Opens (creating if needed) the database at `path`, or an in-memory database when `path` is
    /// omitted or `null`. A `postgres://` or `postgresql://` URL opens that PostgreSQL database.
    ///
    /// Every call on a store is synchronous, a PostgreSQL one too: it blocks the event loop for
    /// the round trips to the server (a local one answers within a millisecond or so; the connect
    /// gives up after 5 s). Use a worker thread for a distant server under load.
    ///
    /// Throws `INVALID_INPUT` when `path` is a directory, not SQLite or another application's
    /// database, `SCHEMA_TOO_NEW` when a newer sna-history wrote it (the file is left untouched),
    /// and `IO` when its directory does not exist.
    #[napi(constructor, ts_args_type = "path?: string | null")]
    pub fn new(env: Env, path: Option<Unknown>) -> Result<Self> {
        guard(&env, || {
            let inner = match convert::optional_string(path, "path")? {
                Some(path) => core::Store::open(path),
                None => core::Store::open_in_memory(),
            }
            .js()?;
            Ok(Store { inner })
        })
    }

    /// The database file, or `null` for an in-memory store.
    #[napi(getter, ts_return_type = "string | null")]
    pub fn path(&self, env: Env) -> Result<Option<String>> {
        guard(&env, || Ok(self.inner.path().map(|p| p.to_string_lossy().into_owned())))
    }

    /// A PostgreSQL store's URL without its password, or `null` for SQLite.
    #[napi(getter, ts_return_type = "string | null")]
    pub fn url(&self, env: Env) -> Result<Option<String>> {
        guard(&env, || Ok(self.inner.url().map(str::to_string)))
    }

    /// True once `close()` was called.
    #[napi(getter)]
    pub fn closed(&self, env: Env) -> Result<bool> {
        guard(&env, || Ok(self.inner.is_closed()))
    }

    /// Closes the database; every later call on this store and its sessions throws `CLOSED`.
    /// Closing twice is harmless. A store that is not closed is closed when it is garbage-collected.
    #[napi]
    pub fn close(&self, env: Env) -> Result<()> {
        guard(&env, || self.inner.close().js())
    }

    /// Creates an empty session: `id` (default: a time-ordered UUID), `title`, `cwd`.
    ///
    /// Throws `CONFLICT` when a session with this id exists.
    #[napi(ts_args_type = "options?: CreateSessionOptions | null")]
    pub fn create_session(&self, env: Env, options: Option<Unknown>) -> Result<Session> {
        guard(&env, || {
            let new = core::NewSession::from_value(Value::Object(convert::options(options, "options", Shape::NewSession)?)).js()?;
            let inner = self.inner.create_session(new).js()?;
            Ok(Session { inner })
        })
    }

    /// The session with this id; throws `NOT_FOUND` when there is none.
    #[napi(ts_args_type = "id: string")]
    pub fn session(&self, env: Env, id: Unknown) -> Result<Session> {
        guard(&env, || {
            let id = convert::string(id, "id")?;
            Ok(Session { inner: self.inner.session(&id).js()? })
        })
    }

    /// Every session, most recently updated first.
    #[napi(ts_return_type = "SessionInfo[]")]
    pub fn sessions(&self, env: Env) -> Result<Js> {
        guard(&env, || camel(&self.inner.sessions().js()?))
    }

    /// Deletes a session with its blocks and bindings; embed bytes no other session uses are freed.
    /// Throws `NOT_FOUND` when there is no such session.
    #[napi(ts_args_type = "id: string")]
    pub fn delete_session(&self, env: Env, id: Unknown) -> Result<()> {
        guard(&env, || {
            let id = convert::string(id, "id")?;
            self.inner.delete_session(&id).js()
        })
    }

    /// Full-text search over every session's blocks, best first. The query: words (any case and
    /// accents), `"phrases"`, `prefix*`, `AND` (also between words side by side), `OR`, `a NOT b`,
    /// parentheses; CJK text and emoji are searched character by character. A malformed query
    /// throws `INVALID_INPUT` on field `query`, saying what and where.
    #[napi(ts_args_type = "query: string, options?: SearchOptions | null", ts_return_type = "SearchHit[]")]
    pub fn search(&self, env: Env, query: Unknown, options: Option<Unknown>) -> Result<Js> {
        guard(&env, || {
            let query = convert::string(query, "query")?;
            let options = core::SearchOptions::from_value(Value::Object(convert::options(options, "options", Shape::Verbatim)?)).js()?;
            camel(&self.inner.search(&query, &options).js()?)
        })
    }

    /// Token usage and cost of every session, grouped by `options.by` (`day` by default; `week`,
    /// `month`, `session`, `project`, `model`, `provider`), each row broken down by model, with
    /// the totals. A response written more than once counts once; its cost is the runtime's own
    /// when it reported one, else from the price table; a model with neither is listed in
    /// `unpricedModels` and adds nothing to `costUsd` (`null` when nothing could be priced).
    #[napi(ts_args_type = "options?: UsageOptions | null", ts_return_type = "UsageReport")]
    pub fn usage(&self, env: Env, options: Option<Unknown>) -> Result<Js> {
        guard(&env, || {
            let options = core::UsageOptions::from_value(Value::Object(convert::options(options, "options", Shape::Verbatim)?)).js()?;
            camel(&self.inner.usage(&options).js()?)
        })
    }

    /// The random id (32 hex digits) that names this store to the stores it syncs with.
    #[napi]
    pub fn store_id(&self, env: Env) -> Result<String> {
        guard(&env, || self.inner.store_id().js())
    }

    /// Copies into `target` the sessions and blocks it lacks, with their ids, times, attribution
    /// and embed bytes; a second call copies nothing, and a call that was stopped is completed by
    /// the next. Sessions whose histories differ in the two stores are listed in `conflicts` and
    /// left as they are on both sides. `origin`: the machine name recorded on the sessions made in
    /// this store (default: this machine's host name; for a PostgreSQL store, the server).
    /// Synchronous, like every call of a store (see the README on PostgreSQL).
    #[napi(ts_args_type = "target: Store, options?: SyncOptions | null", ts_return_type = "SyncReport")]
    pub fn sync_to(&self, env: Env, target: &Store, options: Option<Unknown>) -> Result<Js> {
        guard(&env, || {
            let options = core::SyncOptions::from_value(Value::Object(convert::options(options, "options", Shape::Verbatim)?)).js()?;
            camel(&self.inner.sync_to(&target.inner, &options).js()?)
        })
    }

    /// Number of distinct embed blobs stored (each distinct content once).
    #[napi]
    pub fn blob_count(&self, env: Env) -> Result<i64> {
        guard(&env, || Ok(self.inner.blob_count().js()? as i64))
    }

    /// Imports native history of `runtime` as a new session. `source` is native text (JSONL or a
    /// JSON document), its bytes, or the already parsed records (an array) or document (an object).
    #[napi(ts_args_type = "runtime: Runtime, source: string | Buffer | Uint8Array | object | unknown[], options?: ConvertOptions | null")]
    pub fn import_native(&self, env: Env, runtime: Unknown, source: Unknown, options: Option<Unknown>) -> Result<Session> {
        guard(&env, || {
            let runtime = convert::runtime(runtime)?;
            let source = match source.get_type().map_err(from_napi)? {
                ValueType::String => core::Source::Text(convert::string(source, "source")?),
                ValueType::Object if source.is_typedarray().map_err(from_napi)? => {
                    match unsafe { source.cast::<&[u8]>() } {
                        Ok(bytes) => core::Source::Bytes(bytes.to_vec()),
                        Err(_) => return Err(bad_argument("source", "a Buffer or Uint8Array", &convert::type_name(source))),
                    }
                }
                ValueType::Object => core::Source::Value(convert::json(source)?),
                _ => {
                    return Err(bad_argument(
                        "source",
                        "native text, a Buffer, an array of records or a document object",
                        &convert::type_name(source),
                    ))
                }
            };
            let options = sync_options(options)?;
            Ok(Session { inner: self.inner.import_native(runtime, source, &options).js()? })
        })
    }

    /// Imports a native history file; the runtime is detected from the content when `runtime` is
    /// omitted or `null`.
    #[napi(ts_args_type = "path: string, runtime?: Runtime | null, options?: ConvertOptions | null")]
    pub fn import_file(&self, env: Env, path: Unknown, runtime: Option<Unknown>, options: Option<Unknown>) -> Result<Session> {
        guard(&env, || {
            let path = convert::string(path, "path")?;
            let runtime = match runtime {
                Some(value) if !matches!(value.get_type().map_err(from_napi)?, ValueType::Undefined | ValueType::Null) => {
                    Some(convert::runtime(value)?)
                }
                _ => None,
            };
            let options = sync_options(options)?;
            Ok(Session { inner: self.inner.import_file(path, runtime, &options).js()? })
        })
    }

    /// Imports a native file and remembers it: importing the same path again adds only what the
    /// file gained. Returns `{ session, outcome, blocks }` (`outcome`: `imported`, `unchanged`,
    /// `appended` or `replaced`; `blocks`: how many were added).
    #[napi(ts_args_type = "path: string, runtime?: Runtime | null, options?: ConvertOptions | null", ts_return_type = "SourceImport")]
    pub fn import_source(&self, env: Env, path: Unknown, runtime: Option<Unknown>, options: Option<Unknown>) -> Result<SourceImport> {
        guard(&env, || {
            let path = convert::string(path, "path")?;
            let runtime = convert::optional_runtime(runtime)?;
            let options = sync_options(options)?;
            let done = self.inner.import_source(path, runtime, &options).js()?;
            let (outcome, blocks) = (done.outcome.as_str().to_string(), done.blocks_added as f64);
            Ok(SourceImport { session: Session { inner: done.session }, outcome, blocks })
        })
    }

    /// True when the file at `path` was imported and still looks as it did then (length, modification
    /// time, inode and device, and not written within 2 s of that read): importing it again would
    /// do nothing, and deciding so read none of its bytes. False when it has to be read to tell.
    #[napi(ts_args_type = "path: string")]
    pub fn source_unchanged(&self, env: Env, path: Unknown) -> Result<bool> {
        guard(&env, || {
            let path = convert::string(path, "path")?;
            self.inner.source_unchanged(path).js()
        })
    }

    /// Imports every session of a database file (`opencode.db`, read-only) not yet in the store,
    /// most recently updated first; the runtime is detected from the file's header unless given.
    /// Returns the sessions imported.
    #[napi(ts_args_type = "path: string, runtime?: Runtime | null")]
    pub fn import_database(&self, env: Env, path: Unknown, runtime: Option<Unknown>) -> Result<Vec<Session>> {
        guard(&env, || {
            let path = convert::string(path, "path")?;
            let runtime = convert::optional_runtime(runtime)?;
            Ok(self.inner.import_database(path, runtime).js()?.into_iter().map(|inner| Session { inner }).collect())
        })
    }

    /// Imports every session of an `opencode.db` (read-only), most recently updated first;
    /// sessions already in the store are skipped. Returns the sessions imported.
    #[napi(ts_args_type = "path: string")]
    pub fn import_opencode_db(&self, env: Env, path: Unknown) -> Result<Vec<Session>> {
        guard(&env, || {
            let path = convert::string(path, "path")?;
            Ok(self.inner.import_opencode_db(path).js()?.into_iter().map(|inner| Session { inner }).collect())
        })
    }
}

/// One session of a store: an ordered list of blocks. Get one from `Store.createSession`,
/// `Store.session` or an import.
#[napi]
pub struct Session {
    inner: core::Session,
}

impl Session {
    /// The JavaScript `Session` of a core session.
    pub(crate) fn from_core(inner: core::Session) -> Self {
        Session { inner }
    }
}

impl Store {
    /// The core store.
    pub(crate) fn core(&self) -> &core::Store {
        &self.inner
    }
}

#[napi]
impl Session {
    /// The session id.
    #[napi(getter)]
    pub fn id(&self, env: Env) -> Result<String> {
        guard(&env, || Ok(self.inner.id().to_string()))
    }

    /// Number of blocks; throws `NOT_FOUND` once the session was deleted.
    #[napi(getter)]
    pub fn length(&self, env: Env) -> Result<i64> {
        guard(&env, || Ok(self.inner.len().js()? as i64))
    }

    /// Appends one block and returns it as stored, with `seq` and `id` filled in.
    ///
    /// Throws `INVALID_INPUT` for an invalid block (the message names the field), `CONFLICT` when
    /// its id, or an embed id with other bytes, exists already.
    #[napi(ts_args_type = "block: BlockInput", ts_return_type = "Block")]
    pub fn append(&self, env: Env, block: Unknown) -> Result<Js> {
        guard(&env, || {
            let block = convert::block(block, "block", None)?;
            camel(&self.inner.append(block).js()?)
        })
    }

    /// Appends blocks in one transaction: all are stored, or none. Errors name the block's index.
    #[napi(ts_args_type = "blocks: BlockInput[]", ts_return_type = "Block[]")]
    pub fn extend(&self, env: Env, blocks: Unknown) -> Result<Js> {
        guard(&env, || {
            let blocks = convert::blocks(blocks, "blocks")?;
            blocks_out(self.inner.extend(blocks).js()?)
        })
    }

    /// Every block, in `seq` order.
    #[napi(ts_return_type = "Block[]")]
    pub fn blocks(&self, env: Env) -> Result<Js> {
        guard(&env, || blocks_out(self.inner.blocks().js()?))
    }

    /// The blocks with `from <= seq < to`, in order (`to` may be `Infinity`).
    #[napi(ts_args_type = "from: number, to: number", ts_return_type = "Block[]")]
    pub fn blocks_range(&self, env: Env, from: Unknown, to: Unknown) -> Result<Js> {
        guard(&env, || {
            let from = convert::index(from, "from", false)?;
            let to = convert::index(to, "to", true)?;
            blocks_out(self.inner.blocks_range(from, to).js()?)
        })
    }

    /// The block with this id; throws `NOT_FOUND` when this session has none.
    #[napi(ts_args_type = "id: string", ts_return_type = "Block")]
    pub fn block(&self, env: Env, id: Unknown) -> Result<Js> {
        guard(&env, || {
            let id = convert::string(id, "id")?;
            camel(&self.inner.block(&id).js()?)
        })
    }

    /// The bytes of an embed of this session; throws `NOT_FOUND` when no embed has this id.
    #[napi(ts_args_type = "embedId: string")]
    pub fn embed(&self, env: Env, embed_id: Unknown) -> Result<Buffer> {
        guard(&env, || {
            let embed_id = convert::string(embed_id, "embedId")?;
            Ok(Buffer::from(self.inner.embed(&embed_id).js()?))
        })
    }

    /// What `Store.sessions()` lists about this session (title, cwd, counts, models).
    #[napi(ts_return_type = "SessionInfo")]
    pub fn info(&self, env: Env) -> Result<Js> {
        guard(&env, || camel(&self.inner.info().js()?))
    }

    /// What the import of this session kept but could not read: one `malformed` entry per native
    /// line stored as an `error` block, naming the line and the reason, and one `degraded` entry
    /// per line whose text had to be repaired to be read.
    #[napi(ts_return_type = "Report")]
    pub fn import_report(&self, env: Env) -> Result<Js> {
        guard(&env, || camel(&self.inner.import_report().js()?))
    }

    /// The secrets the session holds (API keys, tokens, private keys, passwords):
    /// `{seq, blockId, kind, preview}` with the preview masked; nothing is changed.
    #[napi(ts_return_type = "Array<{ seq: number, blockId: string, kind: string, preview: string }>")]
    pub fn scan_secrets(&self, env: Env) -> Result<Js> {
        guard(&env, || camel(&self.inner.scan_secrets().js()?))
    }

    /// Rewrites the stored session with its secrets replaced by `[REDACTED:<kind>]`, in one
    /// transaction (the old text is not left in the file); one `redacted` entry per block changed.
    /// This cannot be undone.
    #[napi(ts_return_type = "Report")]
    pub fn redact_in_place(&self, env: Env) -> Result<Js> {
        guard(&env, || camel(&self.inner.redact_in_place().js()?))
    }

    /// The session's token usage, response by response, priced as `Store.usage` prices it
    /// (`prices`: a price file read over the shipped table): `{responses: [{seq, at, model, input,
    /// output, cacheRead, cacheWrite, reasoning, total, costUsd}], totals, prices}`.
    #[napi(ts_args_type = "options?: { prices?: string | null } | null", ts_return_type = "SessionUsage")]
    pub fn usage(&self, env: Env, options: Option<Unknown>) -> Result<Js> {
        guard(&env, || {
            let options = convert::options(options, "options", Shape::Verbatim)?;
            let mut prices = None;
            for (key, value) in options {
                match (key.as_str(), value) {
                    ("prices", Value::Null) => {}
                    ("prices", Value::String(path)) => prices = Some(std::path::PathBuf::from(path)),
                    ("prices", _) => return Err::<Js, _>(core::Error::invalid_field("prices", "a price file's path (a string)")).js(),
                    (other, _) => return Err::<Js, _>(core::Error::invalid_field(other, format!("unknown option {other:?} (expected: prices)"))).js(),
                }
            }
            camel(&self.inner.usage(prices.as_deref()).js()?)
        })
    }

    /// Every point where `(provider, modelProvider, model)` changes, in order.
    #[napi(ts_return_type = "Switch[]")]
    pub fn switches(&self, env: Env) -> Result<Js> {
        guard(&env, || camel(&self.inner.switches().js()?))
    }

    /// Every compaction a runtime made in this session, oldest first: where its boundary and its
    /// summary are, what it preserved, what started it, the tokens before it and when.
    #[napi(ts_return_type = "Compaction[]")]
    pub fn compactions(&self, env: Env) -> Result<Js> {
        guard(&env, || camel(&self.inner.compactions().js()?))
    }

    /// Records that the native thread `nativeId` of `runtime` holds the blocks up to `throughSeq`
    /// (replacing an earlier binding for that runtime).
    #[napi(ts_args_type = "runtime: Runtime, nativeId: string, throughSeq: number", ts_return_type = "Binding")]
    pub fn bind(&self, env: Env, runtime: Unknown, native_id: Unknown, through_seq: Unknown) -> Result<Js> {
        guard(&env, || {
            let runtime = convert::runtime(runtime)?;
            let native_id = convert::string(native_id, "nativeId")?;
            let through_seq = convert::index(through_seq, "throughSeq", false)?;
            camel(&self.inner.bind(runtime, &native_id, through_seq).js()?)
        })
    }

    /// The binding recorded for `runtime`, or `null`.
    #[napi(ts_args_type = "runtime: Runtime", ts_return_type = "Binding | null")]
    pub fn binding(&self, env: Env, runtime: Unknown) -> Result<Js> {
        guard(&env, || {
            let runtime = convert::runtime(runtime)?;
            camel(&self.inner.binding(runtime).js()?)
        })
    }

    /// How to go on in `runtime`: continue the bound native thread and send only the pending
    /// blocks, or replay from the canonical blocks.
    #[napi(ts_args_type = "runtime: Runtime", ts_return_type = "Continuation")]
    pub fn continuation(&self, env: Env, runtime: Unknown) -> Result<Js> {
        guard(&env, || {
            let runtime = convert::runtime(runtime)?;
            camel(&self.inner.continuation(runtime).js()?)
        })
    }

    /// The session in `runtime`'s native shape (`options.format`, else the runtime's default), as
    /// plain JavaScript data exactly as the runtime writes it (keys are not renamed).
    ///
    /// Throws `INVALID_INPUT` for an unknown runtime, format or option (a `summarizer` too: only
    /// `exportAsync` and `prepareResumeAsync` take one), `LOSSY` when `strict` is set and the
    /// conversion would lose something.
    #[napi(ts_args_type = "runtime: Runtime, options?: ConvertOptions | null", ts_return_type = "unknown")]
    pub fn to_native(&self, env: Env, runtime: Unknown, options: Option<Unknown>) -> Result<JsonText> {
        guard(&env, || {
            let runtime = convert::runtime(runtime)?;
            let options = sync_options(options)?;
            // Core writes the data's JSON (from the stored text where it can); V8's JSON.parse
            // builds the objects.
            Ok(JsonText(self.inner.export_json(runtime, &options).js()?.0.into_bytes()))
        })
    }

    /// The session as the text of a file in `runtime`'s native format (JSONL for transcripts and
    /// rollouts, a JSON document for the others): the text `toNative`'s data is written as, made
    /// from the stored records without building JavaScript objects.
    #[napi(ts_args_type = "runtime: Runtime, options?: ConvertOptions | null")]
    pub fn to_native_text(&self, env: Env, runtime: Unknown, options: Option<Unknown>) -> Result<String> {
        guard(&env, || {
            let runtime = convert::runtime(runtime)?;
            let options = sync_options(options)?;
            self.inner.to_native_text(runtime, &options).js()
        })
    }

    /// Writes the session in `runtime`'s native format to `dest` and returns the fidelity report.
    /// `dest` is a path (the file is replaced whole once the text is complete; a failure leaves it
    /// as it was) or a writable stream (anything with `write(chunk)`), handed the bytes of
    /// `toNativeText` in Buffers (64 KiB, or a larger piece as it is) as they are made. The call is synchronous: a stream buffers
    /// what its destination has not taken yet (wait for its `'finish'` after `end()`). What the
    /// stream's `write` throws is thrown as it was.
    ///
    /// Throws `INVALID_INPUT` for an unknown runtime, format or option, or a `dest` that is neither,
    /// `LOSSY` when `strict` is set and the conversion would lose something (nothing is written),
    /// `IO` when the file cannot be written.
    #[napi(ts_args_type = "dest: string | { write(chunk: Buffer): unknown }, runtime: Runtime, options?: ConvertOptions | null", ts_return_type = "Report")]
    pub fn export_to(&self, env: Env, dest: Unknown, runtime: Unknown, options: Option<Unknown>) -> Result<Js> {
        guard(&env, || {
            let runtime = convert::runtime(runtime)?;
            let options = sync_options(options)?;
            let report = match dest.get_type().map_err(from_napi)? {
                ValueType::String => {
                    let path = convert::string(dest, "dest")?;
                    self.inner.export_to_path(&path, runtime, &options).js()?
                }
                ValueType::Object => {
                    // SAFETY: the value is an object.
                    let stream: Object<'_> = unsafe { dest.cast() }.map_err(from_napi)?;
                    let write = match stream.get_named_property::<Unknown>("write").map_err(from_napi)?.get_type().map_err(from_napi)? {
                        ValueType::Function => stream.get_named_property::<Function<BufferSlice<'_>, Unknown>>("write").map_err(from_napi)?,
                        _ => return Err(bad_argument("dest", "a path or a writable stream", "an object without write()")),
                    };
                    let mut writer = StreamWriter { env: &env, stream: &stream, write, threw: false };
                    match self.inner.export_to(&mut writer, runtime, &options) {
                        Err(e) if writer.threw => return Err(pending(e.to_string())),
                        other => other.js()?,
                    }
                }
                _ => return Err(bad_argument("dest", "a path or a writable stream", &convert::type_name(dest))),
            };
            camel(&report)
        })
    }

    /// Like `toNative`, with the fidelity report of what the conversion lost, altered or added.
    #[napi(ts_args_type = "runtime: Runtime, options?: ConvertOptions | null", ts_return_type = "Export")]
    pub fn export(&self, env: Env, runtime: Unknown, options: Option<Unknown>) -> Result<JsonText> {
        guard(&env, || {
            let runtime = convert::runtime(runtime)?;
            let options = sync_options(options)?;
            let (data, report) = self.inner.export_json(runtime, &options).js()?;
            JsonText::export(data, &report)
        })
    }

    /// `export` on a worker thread: resolves to `{data, report}`. The one export that takes a
    /// `summarizer`, `(blocks: Block[]) => Promise<string> | string`: when the replay does not fit
    /// its context budget (`contextWindow`, or the target model's window), its oldest whole turns
    /// are folded and the summarizer writes the text standing in for them (default: a digest).
    /// It is called on the JavaScript thread and awaited. What it throws, or its Promise rejects
    /// with, rejects the returned Promise with an `INVALID_INPUT` `Error` on field `summarizer`
    /// whose `cause` is what was thrown; nothing is written. Bad arguments throw at once, as in
    /// `export`.
    #[napi(ts_args_type = "runtime: Runtime, options?: ConvertOptions | null", ts_return_type = "Promise<Export>")]
    pub fn export_async(&self, env: Env, runtime: Unknown, options: Option<Unknown>) -> Result<AsyncTask<Call<(String, core::Report), JsonText>>> {
        guard(&env, || {
            let runtime = convert::runtime(runtime)?;
            let (options, thrown) = async_options(options)?;
            let session = self.inner.clone();
            Ok(awaiting(move || session.export_json(runtime, &options), export_js, thrown))
        })
    }

    /// Appends the blocks a live event of `runtime` completes and returns them (often none, while
    /// streamed deltas accumulate). The event is passed to core as it is.
    #[napi(ts_args_type = "runtime: Runtime, event: object", ts_return_type = "Block[]")]
    pub fn ingest(&self, env: Env, runtime: Unknown, event: Unknown) -> Result<Js> {
        guard(&env, || {
            let runtime = convert::runtime(runtime)?;
            let event = convert::json(event)?;
            blocks_out(self.inner.ingest(runtime, &event).js()?)
        })
    }

    /// Writes the native files `runtime` needs to resume this session (under `home`, default
    /// `$HOME`, for the working directory `cwd`, default the session's) and returns how to run it.
    #[napi(ts_args_type = "runtime: Runtime, options?: ResumeOptions | null", ts_return_type = "ResumePlan")]
    pub fn prepare_resume(&self, env: Env, runtime: Unknown, options: Option<Unknown>) -> Result<Js> {
        guard(&env, || {
            let runtime = convert::runtime(runtime)?;
            let (map, summarizer) = convert::conversion_options(options, "options", Shape::Resume)?;
            no_summarizer(summarizer)?;
            let resume = core::ResumeOptions::from_value(Value::Object(map)).js()?;
            camel(&self.inner.prepare_resume(runtime, &resume).js()?)
        })
    }

    /// `prepareResume` on a worker thread, resolving to the `ResumePlan`; it takes a `summarizer`
    /// as `exportAsync` does. When the summarizer fails, the Promise rejects (its `cause` is what
    /// was thrown), no file is written and no binding recorded.
    #[napi(ts_args_type = "runtime: Runtime, options?: ResumeOptions | null", ts_return_type = "Promise<ResumePlan>")]
    pub fn prepare_resume_async(&self, env: Env, runtime: Unknown, options: Option<Unknown>) -> Result<AsyncTask<Call<core::ResumePlan, Js>>> {
        guard(&env, || {
            let runtime = convert::runtime(runtime)?;
            let (map, given) = convert::conversion_options(options, "options", Shape::Resume)?;
            let mut resume = core::ResumeOptions::from_value(Value::Object(map)).js()?;
            let thrown = Thrown::default();
            resume.options.summarizer = given.map(|f| summarizer(f, &thrown)).transpose()?;
            let session = self.inner.clone();
            Ok(awaiting(move || session.prepare_resume(runtime, &resume), plan_js, thrown))
        })
    }
}

/// What `Store.importSource` did with a file.
#[napi(object, object_from_js = false)]
pub struct SourceImport {
    /// The file's session.
    pub session: Session,
    /// `imported`, `unchanged`, `appended` or `replaced`.
    #[napi(ts_type = "'imported' | 'unchanged' | 'appended' | 'replaced'")]
    pub outcome: String,
    /// How many blocks were added.
    pub blocks: f64,
}
