//! TypeScript declarations of the plain objects the API takes and returns. These structs exist only
//! for `index.d.ts` (no conversion code is generated for them): the values themselves are the
//! serialized core types, converted by `convert`. Field names are Rust snake_case, which napi-rs
//! writes as camelCase, exactly as `convert::Js` renames the serialized keys. The string
//! unions (`Runtime`, `Actor`, …) are declared in `types-header.d.ts`.

#![allow(dead_code)]

use std::collections::HashMap;

use napi_derive::napi;
use serde_json::Value;

/// A block as stored, as `append`, `blocks` and the other readers return it.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct Block {
    /// Unique, stable id.
    pub id: String,
    /// Dense position in the session: 0, 1, 2, …
    pub seq: u32,
    /// Who the block comes from.
    #[napi(ts_type = "Actor")]
    pub actor: String,
    /// What it holds.
    #[napi(ts_type = "Kind")]
    pub kind: String,
    /// Text; for `tool_use` the tool input exactly as the runtime gave it, for `tool_result` the output.
    pub content: String,
    /// `tool_use` (`callId`, `name`) and `tool_result` (`callId`, `isError`) only.
    pub tool: Option<ToolRef>,
    /// `thinking` only: the opaque reasoning token.
    pub reasoning: Option<Reasoning>,
    /// Embed id → embed; `content` refers to one as `![name](embed://<id>)`. Read the bytes with
    /// `Session.embed(id)`.
    #[napi(ts_type = "Record<string, Embed>")]
    pub embeds: Option<HashMap<String, Embed>>,
    /// The runtime that produced the block (`claude-code`, `codex`, `opencode`, or a host's name).
    pub provider: Option<String>,
    /// The vendor that owned the model (`anthropic`, `openai`, …).
    pub model_provider: Option<String>,
    /// The exact model slug.
    pub model: Option<String>,
    /// Groups the blocks of one native message / model response.
    pub message_id: Option<String>,
    /// Groups the blocks of one user turn.
    pub turn_id: Option<String>,
    /// When the block was made: RFC 3339, milliseconds, UTC (`2026-11-30T10:00:00.000Z`).
    pub created_at: String,
    /// What the origin runtime stored beyond the canonical fields; its `data` is kept verbatim.
    pub native: Option<Native>,
}

/// A block to append. `id` is generated when omitted, `seq` is assigned by the store, `createdAt`
/// defaults to now. Unknown fields are refused with `INVALID_INPUT`.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct BlockInput {
    /// Unique, stable id (generated, time-ordered, when omitted).
    pub id: Option<String>,
    /// Ignored: the store assigns it.
    pub seq: Option<u32>,
    /// Who the block comes from.
    #[napi(ts_type = "Actor")]
    pub actor: String,
    /// What it holds.
    #[napi(ts_type = "Kind")]
    pub kind: String,
    /// Text (default empty).
    pub content: Option<String>,
    /// Required on `tool_use` (`callId`, `name`) and `tool_result` (`callId`, `isError`).
    pub tool: Option<ToolRef>,
    /// `thinking` only.
    pub reasoning: Option<Reasoning>,
    /// Embed id → embed with its bytes in `data` (the bytes may be left out when the store already
    /// holds them under that `sha256`).
    #[napi(ts_type = "Record<string, EmbedInput>")]
    pub embeds: Option<HashMap<String, EmbedInput>>,
    /// The runtime that produced the block.
    pub provider: Option<String>,
    /// The vendor that owned the model.
    pub model_provider: Option<String>,
    /// The exact model slug.
    pub model: Option<String>,
    /// Groups the blocks of one native message.
    pub message_id: Option<String>,
    /// Groups the blocks of one user turn.
    pub turn_id: Option<String>,
    /// RFC 3339 text, milliseconds since the epoch, or a `Date` (default: now).
    #[napi(ts_type = "string | number | Date")]
    pub created_at: Option<String>,
    /// Passthrough of the origin runtime's own data.
    pub native: Option<Native>,
}

/// The tool side of a `tool_use` or `tool_result` block.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct ToolRef {
    /// The call id, shared by a call and its result.
    pub call_id: String,
    /// `tool_use`: the tool's name.
    pub name: Option<String>,
    /// `tool_result`: whether the tool reported an error.
    pub is_error: Option<bool>,
}

/// The opaque reasoning token of a `thinking` block.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct Reasoning {
    /// `anthropic-signature`, `anthropic-redacted`, `openai-encrypted`, or another producer's name.
    pub format: String,
    /// The token itself, byte for byte.
    pub data: String,
    /// Where the token may be replayed.
    pub scope: Option<Scope>,
}

/// Where an opaque reasoning token is valid.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct Scope {
    /// The runtime that produced the token.
    pub provider: Option<String>,
    /// The vendor whose model produced it.
    pub model_provider: Option<String>,
    /// The exact model slug.
    pub model: Option<String>,
}

/// Binary content attached to a block, as stored (the bytes are read with `Session.embed`).
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct Embed {
    /// Media type, e.g. `image/png`.
    pub mime: String,
    /// File name, when there is one.
    pub name: Option<String>,
    /// Size of the bytes.
    pub size: u32,
    /// SHA-256 of the bytes, lower-case hex.
    pub sha256: String,
}

/// Binary content to attach to a new block.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct EmbedInput {
    /// Media type, e.g. `image/png`.
    pub mime: String,
    /// File name.
    pub name: Option<String>,
    /// Checked against the bytes when given.
    pub size: Option<u32>,
    /// Checked against the bytes when given; names stored bytes when `data` is left out.
    pub sha256: Option<String>,
    /// The bytes.
    #[napi(ts_type = "Buffer | Uint8Array")]
    pub data: Option<Value>,
}

/// What the origin runtime stored beyond the canonical fields.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct Native {
    /// The runtime that wrote `data`.
    pub runtime: String,
    /// Its data, as the runtime wrote it (keys never renamed).
    #[napi(ts_type = "unknown")]
    pub data: Value,
}

/// Options of `Store.createSession`.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct CreateSessionOptions {
    /// The id (default: a time-ordered UUID).
    pub id: Option<String>,
    /// A title.
    pub title: Option<String>,
    /// The working directory the conversation runs in.
    pub cwd: Option<String>,
}

/// What `Store.sessions` lists about one session.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct SessionInfo {
    /// The session id.
    pub id: String,
    /// Its title, or `null`.
    #[napi(ts_type = "string | null")]
    pub title: Option<String>,
    /// Its working directory, or `null`.
    #[napi(ts_type = "string | null")]
    pub cwd: Option<String>,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// When a block was last appended (RFC 3339).
    pub updated_at: String,
    /// Number of blocks.
    pub block_count: u32,
    /// Runtimes that produced blocks, sorted.
    pub providers: Vec<String>,
    /// Model vendors seen, sorted.
    pub model_providers: Vec<String>,
    /// Models seen, sorted.
    pub models: Vec<String>,
    /// The machine the session came from when a sync brought it here; `null` if made here.
    #[napi(ts_type = "string | null")]
    pub origin: Option<String>,
}

/// The options of `Store.search`.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct SearchOptions {
    /// Only blocks of this runtime (`provider`).
    #[napi(ts_type = "string | null")]
    pub runtime: Option<String>,
    /// Only blocks of this model.
    #[napi(ts_type = "string | null")]
    pub model: Option<String>,
    /// Only this session.
    #[napi(ts_type = "string | null")]
    pub session: Option<String>,
    /// Only these kinds.
    #[napi(ts_type = "Kind[] | null")]
    pub kinds: Option<Vec<String>>,
    /// Only blocks created at or after this time (a Date, RFC 3339, `YYYY-MM-DD` or milliseconds).
    #[napi(ts_type = "Date | string | number | null")]
    pub since: Option<String>,
    /// Only blocks created before this time.
    #[napi(ts_type = "Date | string | number | null")]
    pub until: Option<String>,
    /// At most this many hits (1 to 10,000; default 50).
    pub limit: Option<u32>,
    /// Search runtime bookkeeping too (default false).
    pub bookkeeping: Option<bool>,
}

/// A block that matched `Store.search`.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct SearchHit {
    /// The session it is in.
    pub session_id: String,
    /// Its position there.
    pub seq: u32,
    /// Its id.
    pub block_id: String,
    /// Who it is from.
    #[napi(ts_type = "Actor")]
    pub actor: String,
    /// What it holds.
    #[napi(ts_type = "Kind")]
    pub kind: String,
    /// The runtime that produced it, or `null`.
    #[napi(ts_type = "string | null")]
    pub provider: Option<String>,
    /// The model, or `null`.
    #[napi(ts_type = "string | null")]
    pub model: Option<String>,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// Higher is better; comparable within one store.
    pub score: f64,
    /// The text around the first match, each match between `«` and `»`.
    pub snippet: String,
}

/// The options of `Store.usage`.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct UsageOptions {
    /// `day` (default), `week` (from Monday, named by it), `month`, `session`, `project`, `model` or `provider`.
    #[napi(ts_type = "'day' | 'week' | 'month' | 'session' | 'project' | 'model' | 'provider' | null")]
    pub by: Option<String>,
    /// From this day (`YYYY-MM-DD`, a calendar day in `tz`) or time (a Date, RFC 3339) on.
    #[napi(ts_type = "Date | string | null")]
    pub since: Option<String>,
    /// Up to this day, included (`YYYY-MM-DD`), or before this time.
    #[napi(ts_type = "Date | string | null")]
    pub until: Option<String>,
    /// Only this runtime's responses.
    #[napi(ts_type = "string | null")]
    pub runtime: Option<String>,
    /// Only this model's responses.
    #[napi(ts_type = "string | null")]
    pub model: Option<String>,
    /// The IANA time zone of days, weeks and months (default: the system's, `TZ` when set).
    #[napi(ts_type = "string | null")]
    pub tz: Option<String>,
    /// A price file read over the shipped table (default: `$XDG_CONFIG_HOME/sna/prices.json` when it exists).
    #[napi(ts_type = "string | null")]
    pub prices: Option<String>,
}

/// One model's part of a `UsageRow`.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct ModelUsage {
    /// The model, or `null` when the runtime did not say.
    #[napi(ts_type = "string | null")]
    pub model: Option<String>,
    /// Prompt tokens at full price (cache reads and writes are not in it).
    pub input: f64,
    /// Generated tokens, reasoning included.
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    /// Of the output, the reasoning tokens.
    pub reasoning: f64,
    /// Input, output, cache reads and cache writes.
    pub total: f64,
    /// USD, or `null` when the model has no price.
    #[napi(ts_type = "number | null")]
    pub cost_usd: Option<f64>,
    /// Model responses counted.
    pub responses: f64,
}

/// One group of a `UsageReport`.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct UsageRow {
    /// The day, week (its Monday), month, session id, project directory, model or provider;
    /// `null` for the totals and when the runtime did not say.
    #[napi(ts_type = "string | null")]
    pub key: Option<String>,
    /// By session: the session's title.
    #[napi(ts_type = "string | undefined")]
    pub title: Option<String>,
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub reasoning: f64,
    pub total: f64,
    /// USD of the priced responses, or `null` when none could be priced.
    #[napi(ts_type = "number | null")]
    pub cost_usd: Option<f64>,
    /// Models of the row without a price (their tokens counted, their cost not).
    pub unpriced_models: Vec<String>,
    pub responses: f64,
    /// The first and last response (RFC 3339).
    pub first_at: String,
    pub last_at: String,
    /// The row by model, most expensive first.
    pub models: Vec<ModelUsage>,
}

/// Where a `UsageReport`'s prices come from.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct PriceSource {
    /// The shipped table's date.
    pub date: String,
    /// Where the shipped table's prices come from.
    pub source: String,
    /// The user price files read over it.
    pub files: Vec<String>,
}

/// What `Store.usage` gives.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct UsageReport {
    #[napi(ts_type = "'day' | 'week' | 'month' | 'session' | 'project' | 'model' | 'provider'")]
    pub by: String,
    /// The time zone of days, weeks and months.
    pub tz: String,
    pub rows: Vec<UsageRow>,
    /// Every row together.
    pub totals: UsageRow,
    /// Every model without a price.
    pub unpriced_models: Vec<String>,
    pub prices: PriceSource,
}

/// One model response of a session, as `Store.usage` counts it.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct ResponseUsage {
    /// The block that reports it.
    pub seq: u32,
    /// When it was made (RFC 3339).
    pub at: String,
    #[napi(ts_type = "string | null")]
    pub model: Option<String>,
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub reasoning: f64,
    pub total: f64,
    /// USD, or `null` when the model has no price.
    #[napi(ts_type = "number | null")]
    pub cost_usd: Option<f64>,
}

/// What `Session.usage` gives.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct SessionUsage {
    pub responses: Vec<ResponseUsage>,
    /// The session's row of a report by session (`key` is `null`).
    pub totals: UsageRow,
    pub prices: PriceSource,
}

/// The options of `Store.syncTo`.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct SyncOptions {
    /// The machine name recorded on the sessions made in the source store (default: this
    /// machine's host name; for a PostgreSQL store, the server).
    #[napi(ts_type = "string | null")]
    pub origin: Option<String>,
}

/// What `Store.syncTo` did.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct SyncReport {
    /// Sessions of the source looked at.
    pub sessions: u32,
    /// Sessions the target did not have, created.
    pub created: u32,
    /// Sessions the target held fewer blocks of, extended.
    pub extended: u32,
    /// Sessions that were the same on both sides already.
    pub unchanged: u32,
    /// Blocks copied.
    pub blocks: u32,
    /// Embed contents the target lacked, copied.
    pub embeds: u32,
    /// Bytes of those embeds.
    pub embed_bytes: u32,
    /// Ids of the sessions the target holds more blocks of (a sync the other way brings them).
    pub target_ahead: Vec<String>,
    /// Sessions whose histories differ in the two stores, left as they are.
    pub conflicts: Vec<SyncConflict>,
}

/// A session whose histories in two stores differ from `seq` on.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct SyncConflict {
    /// The session id.
    pub session_id: String,
    /// The first position at which the two histories differ.
    pub seq: u32,
    /// The source's block there.
    pub source_block_id: String,
    /// The target's block there.
    pub target_block_id: String,
    /// Blocks the source holds.
    pub source_blocks: u32,
    /// Blocks the target holds.
    pub target_blocks: u32,
}

/// `(provider, modelProvider, model)` of a block; `null` where unknown.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct Attribution {
    /// Runtime.
    #[napi(ts_type = "string | null")]
    pub provider: Option<String>,
    /// Model vendor.
    #[napi(ts_type = "string | null")]
    pub model_provider: Option<String>,
    /// Model slug.
    #[napi(ts_type = "string | null")]
    pub model: Option<String>,
}

/// One point where the attribution changes, as listed by `Session.switches`.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct Switch {
    /// The first block with the new attribution.
    pub seq: u32,
    /// Its id.
    pub block_id: String,
    /// The attribution before (`null` for the first attributed block).
    #[napi(ts_type = "Attribution | null")]
    pub from: Option<Attribution>,
    /// The attribution from here on.
    pub to: Attribution,
}

/// One compaction of a session, as `Session.compactions` lists them: a point where a runtime
/// replaced the conversation it sends its model by a summary.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct Compaction {
    /// The runtime that compacted.
    #[napi(ts_type = "Runtime")]
    pub runtime: String,
    /// The block that records the compaction; nothing before it but the preserved blocks is sent
    /// to a model after it.
    pub boundary_seq: u32,
    /// The block that holds the summary (the boundary itself when the summary has no block of its own).
    pub summary_seq: u32,
    /// The summary, as the runtime sends it to its model.
    pub summary: String,
    /// Seqs of the blocks before the boundary that the runtime keeps sending verbatim after the summary.
    pub preserved: Vec<u32>,
    /// What started it.
    #[napi(ts_type = "'manual' | 'auto' | 'unknown'")]
    pub trigger: String,
    /// The size of the conversation when it was compacted, in tokens, as the runtime reported it
    /// (absent when it did not).
    pub tokens_before: Option<f64>,
    /// When it happened: the boundary block's time (RFC 3339).
    pub created_at: String,
}

/// A live native thread that holds the session's history up to `throughSeq`.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct Binding {
    /// The runtime.
    #[napi(ts_type = "Runtime")]
    pub runtime: String,
    /// The runtime's own id of the thread.
    pub native_id: String,
    /// The last block the native thread holds.
    pub through_seq: u32,
    /// When the binding was recorded (RFC 3339).
    pub updated_at: String,
}

/// The answer of `Session.continuation`. `continue`: the bound native thread `nativeId` holds every
/// block up to `throughSeq`; continue it and send only `pending`, the blocks after it. `replay`: no
/// usable native thread (`reason` says why); rebuild the native history from the canonical blocks.
#[napi(discriminant = "mode", discriminant_case = "lowercase", object_from_js = false, object_to_js = false)]
pub enum Continuation {
    /// The bound thread `nativeId` holds everything up to `throughSeq`: continue it and send only
    /// `pending`, the blocks after it.
    Continue { native_id: String, through_seq: u32, pending: Vec<Block> },
    /// No usable native thread (`reason` says why): rebuild the native history from the canonical
    /// blocks.
    Replay { reason: String },
}

/// Options of the conversion calls; every field is optional and unknown keys are refused.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct ConvertOptions {
    /// The native format (one of `formats(runtime)`; default: the first).
    #[napi(ts_type = "NativeFormat")]
    pub format: Option<String>,
    /// Turn any loss into a `LOSSY` error (on import: any malformed record into `INVALID_INPUT`).
    pub strict: Option<bool>,
    /// The model the target runtime will resume with; opaque reasoning travels only where its scope matches.
    pub target_model: Option<String>,
    /// What to do with reasoning from another scope: leave it out (default) or render it as text.
    #[napi(ts_type = "'drop' | 'text'")]
    pub foreign_reasoning: Option<String>,
    /// The model provider to name in the native files.
    pub model_provider: Option<String>,
    /// On import: the id of the session to create (default: the native session id).
    pub session_id: Option<String>,
    /// Replace secrets (API keys, tokens, private keys, passwords) by `[REDACTED:<kind>]`, each
    /// block changed a `redacted` report entry.
    pub redact: Option<bool>,
    /// On import: the longest record (one JSONL line) read, in bytes (default 256 MiB).
    pub max_record_bytes: Option<f64>,
    /// On export and resume into another runtime: which compaction the replay honours: `latest`
    /// (the default: the latest compaction's summary, its preserved blocks, then every later
    /// block, as the runtime that compacted sends) or `none` (the whole history).
    #[napi(ts_type = "'latest' | 'none'")]
    pub compaction: Option<String>,
    /// On export and resume: the target's context window in tokens (above 0). A replay rebuilt
    /// from canonical blocks is bounded by it less a reserve for the target's own prompt, tools and
    /// answer, folding its oldest whole turns into one summary when it does not fit. Default: the
    /// target model's window from the model table, when the replay is rebuilt for another runtime
    /// and the model is known; otherwise no bound.
    pub context_window: Option<f64>,
    /// A model file read over the shipped model table (default: `$XDG_CONFIG_HOME/sna/models.json`
    /// when it exists).
    pub models: Option<String>,
    /// Writes the text standing in for the turns a replay folds to fit its context budget, given
    /// their blocks (whole turns, oldest first; default: a digest of what each turn asked). Only
    /// `exportAsync` and `prepareResumeAsync` take it (it is awaited); the other calls refuse it.
    #[napi(ts_type = "(blocks: Block[]) => Promise<string> | string")]
    pub summarizer: Option<Value>,
}

/// Options of `Session.prepareResume`: the conversion options, and where to write.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct ResumeOptions {
    /// The native format.
    #[napi(ts_type = "NativeFormat")]
    pub format: Option<String>,
    /// Turn any loss into a `LOSSY` error.
    pub strict: Option<bool>,
    /// The model the resumed runtime runs.
    pub target_model: Option<String>,
    /// What to do with reasoning from another scope.
    #[napi(ts_type = "'drop' | 'text'")]
    pub foreign_reasoning: Option<String>,
    /// The model provider to name in the native files.
    pub model_provider: Option<String>,
    /// The native session id to write.
    pub session_id: Option<String>,
    /// Replace secrets by `[REDACTED:<kind>]` in the files written.
    pub redact: Option<bool>,
    /// Which compaction the replay honours: `latest` (default) or `none` (the whole history).
    #[napi(ts_type = "'latest' | 'none'")]
    pub compaction: Option<String>,
    /// The resumed runtime's context window in tokens; a replay over it folds its oldest whole
    /// turns into one summary (default: the target model's window from the model table).
    pub context_window: Option<f64>,
    /// A model file read over the shipped model table.
    pub models: Option<String>,
    /// Writes the text standing in for the folded turns; only `prepareResumeAsync` takes it.
    #[napi(ts_type = "(blocks: Block[]) => Promise<string> | string")]
    pub summarizer: Option<Value>,
    /// The home directory under which the runtime keeps its data (default: `$HOME`).
    pub home: Option<String>,
    /// The working directory of the resumed runtime (default: the session's).
    pub cwd: Option<String>,
    /// Claude Code: write under this config dir instead of `<home>/.claude` (what
    /// `CLAUDE_CONFIG_DIR` names; the plan's `env` then sets it). Pi: the agent directory instead of
    /// `<home>/.pi/agent` (what `PI_CODING_AGENT_DIR` names).
    pub config_dir: Option<String>,
    /// Codex: write under this Codex home instead of `<home>/.codex` (what `CODEX_HOME` names;
    /// the plan's `env` then sets it).
    pub codex_home: Option<String>,
    /// OpenCode: run `opencode import` of the written document now (its outcome is in the plan's
    /// `ran`; a failure throws).
    pub run_import: Option<bool>,
    /// OpenCode: the `opencode` program to run and name (default: `opencode` on `PATH`).
    pub opencode_bin: Option<String>,
}

/// One entry of a fidelity report.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct ReportEntry {
    /// What happened.
    #[napi(ts_type = "'dropped' | 'degraded' | 'synthesized' | 'remapped' | 'malformed' | 'redacted' | 'compacted'")]
    pub action: String,
    /// The block it concerns, if one.
    pub block_id: Option<String>,
    /// A readable explanation.
    pub message: String,
}

/// What a conversion lost, altered or added.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct Report {
    /// The entries, in the order of the blocks they concern.
    pub entries: Vec<ReportEntry>,
}

/// The result of `Session.export`.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct Export {
    /// The native data, as `toNative` returns it.
    #[napi(ts_type = "unknown")]
    pub data: Value,
    /// What the conversion lost, altered or added.
    pub report: Report,
}

/// What `Session.prepareResume` wrote and how to resume.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct ResumePlan {
    /// The runtime's own id of the session to resume.
    pub session_id: String,
    /// The files written.
    pub files: Vec<String>,
    /// The command to run, program first.
    pub argv: Vec<String>,
    /// The directory to run it in, if one matters.
    pub cwd: Option<String>,
    /// Environment variables the command needs (e.g. `CLAUDE_CONFIG_DIR`), beside the caller's own.
    #[napi(ts_type = "Record<string, string>")]
    pub env: std::collections::HashMap<String, String>,
    /// Commands to run first, in order, in `cwd` with `env` (OpenCode: `opencode import <file>`).
    pub setup: Vec<Vec<String>>,
    /// Commands `prepareResume` ran itself (OpenCode with `runImport`), with their outcome.
    pub ran: Vec<CommandOutcome>,
    /// What the caller should know about this resume (Gemini CLI: the route taken and why).
    pub notes: Vec<String>,
}

/// A command `prepareResume` ran and how it ended.
#[napi(object, object_from_js = false, object_to_js = false)]
pub struct CommandOutcome {
    /// The command, program first.
    pub argv: Vec<String>,
    /// Its exit code (`null` when a signal ended it).
    pub status: Option<i32>,
    /// What it printed on stdout.
    pub stdout: String,
    /// What it printed on stderr.
    pub stderr: String,
}
