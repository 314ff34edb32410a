//! The JSON answers of the routes, as typed structs (`Serialize`, and `ToSchema` for
//! `/openapi.json`). The order of a struct's fields is the order of the keys on the wire, which
//! clients read (`tests/conformance/serve_client.py`, the web UI in `cli/ui/`): keep it.
//!
//! Core's own types (a block, a compaction, a switch, the usage) are answered as core serializes
//! them; the document names them as objects and `docs/serve.md` lists their fields.

use serde::Serialize;
use serde_json::Value;
use sna_history::host::Agent;
use sna_history::{Actor, Block, Compaction, ReplayShape, Switch, Timestamp};
use utoipa::ToSchema;

/// An error: `{status: "error", code, message}`; the message starts with the field when a field
/// is at fault (`images[0].base64: not base64 …`).
#[derive(Serialize, ToSchema)]
pub(crate) struct ErrorBody {
    pub status: ErrorStatus,
    /// `INVALID_INPUT`, `UNAUTHORIZED`, `FORBIDDEN`, `NOT_FOUND`, `METHOD_NOT_ALLOWED`,
    /// `CONFLICT`, `TOO_LARGE`, `RUNTIME`, `TIMEOUT`, `INTERNAL`, …
    #[schema(example = "INVALID_INPUT")]
    pub code: &'static str,
    pub message: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ErrorStatus {
    Error,
}

/// `GET /info`: the server's version, whether it needs a token, and the runtimes.
#[derive(Serialize, ToSchema)]
pub(crate) struct Info {
    pub version: &'static str,
    /// Whether requests need the token.
    pub auth: bool,
    pub runtimes: Vec<RuntimeInfo>,
}

#[derive(Serialize, ToSchema)]
pub(crate) struct RuntimeInfo {
    #[schema(example = "claude-code")]
    pub id: &'static str,
    #[schema(example = "Claude Code")]
    pub name: &'static str,
    /// Whether its executable was found.
    pub available: bool,
}

/// A session as `GET /agent/sessions/{id}` answers it. The answers are made by
/// `crate::ui::session_json`, which `sna view` shares; this struct describes them, and the tests
/// read them back with it, so that the two cannot differ.
#[derive(Serialize, ToSchema)]
#[cfg_attr(test, derive(serde::Deserialize), serde(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // Made only by the tests: the handlers answer `session_json`.
pub(crate) struct Session {
    pub id: String,
    pub title: Option<String>,
    /// The title again (the name SNA's clients read).
    pub label: Option<String>,
    pub cwd: Option<String>,
    #[schema(format = DateTime)]
    pub created_at: String,
    #[schema(format = DateTime)]
    pub updated_at: String,
    pub block_count: u64,
    /// The runtimes its blocks came from.
    pub providers: Vec<String>,
    pub model_providers: Vec<String>,
    pub models: Vec<String>,
    /// Where it was imported from, when it was.
    pub origin: Option<String>,
    /// Its agent, when one was started since the server started.
    pub agent: Option<SessionAgent>,
}

#[derive(Serialize, ToSchema)]
#[cfg_attr(test, derive(serde::Deserialize), serde(deny_unknown_fields))]
#[allow(dead_code)] // As `Session`.
pub(crate) struct SessionAgent {
    pub alive: bool,
    pub busy: bool,
    pub provider: String,
    pub model: Option<String>,
    pub pid: Option<u32>,
}

/// `GET /agent/sessions`.
#[derive(Serialize, ToSchema)]
pub(crate) struct Sessions {
    #[schema(value_type = Vec<Session>)]
    pub sessions: Vec<Value>,
}

/// `DELETE /agent/sessions/{id}`.
#[derive(Serialize, ToSchema)]
pub(crate) struct Deleted {
    pub status: DeletedStatus,
    pub id: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DeletedStatus {
    Deleted,
}

/// The answer of `start`, `resume` and `restart`: the agent as it runs now, and how it was
/// started (`via`, `replay`: present when the call started a process).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Started {
    pub status: StartStatus,
    #[schema(example = "claude-code")]
    pub provider: &'static str,
    pub session_id: String,
    pub model: Option<String>,
    pub pid: Option<u32>,
    /// The runtime's own id of the thread.
    pub native_id: Option<String>,
    /// `native` (the runtime's own resume) or `replay` (rebuilt from the stored blocks).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub via: Option<Value>,
    /// What shaped a replay: `{from_seq, compaction_seq, folded}`, or null.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub replay: Option<Value>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StartStatus {
    Started,
    AlreadyRunning,
    Resumed,
    Restarted,
}

impl Started {
    pub fn new(agent: &Agent, status: StartStatus) -> Started {
        let s = agent.status();
        Started {
            status,
            provider: s.runtime.as_str(),
            session_id: s.session_id,
            model: s.model,
            pid: s.pid,
            native_id: s.native_id,
            via: None,
            replay: None,
        }
    }
}

/// An answer that is only a status word.
#[derive(Serialize, ToSchema)]
pub(crate) struct Done {
    pub status: DoneStatus,
}

/// `sent` (`/agent/send`), `interrupted`, `killed`, or `no_session` when no agent runs.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DoneStatus {
    Sent,
    Interrupted,
    Killed,
    NoSession,
}

impl Done {
    pub const NO_SESSION: Done = Done { status: DoneStatus::NoSession };
}

/// `POST /agent/send?wait=1`: the turn, once it ended.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TurnAnswer {
    pub status: TurnStatus,
    /// The last assistant text of the turn.
    pub text: String,
    /// The blocks stored during the turn (the user's message first), as `/sessions/{id}/blocks`.
    #[schema(value_type = Vec<Object>)]
    pub blocks: Vec<Block>,
    /// The usage the runtime reported.
    pub usage: Option<Value>,
    /// `native` or `replay` when the turn's process was started for it.
    pub resumed_via: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub replay: Option<ReplayShape>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TurnStatus {
    Completed,
    Interrupted,
}

/// `POST /agent/send`: `{status: "sent"}` at once, or the turn with `wait=1`.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub(crate) enum SendAnswer {
    Sent(Done),
    Turn(TurnAnswer),
}

/// `POST /agent/compact`: the compaction as `/sessions/{id}/compactions` lists it.
#[derive(Serialize, ToSchema)]
pub(crate) struct Compacted {
    pub status: CompactedStatus,
    #[schema(value_type = Option<Object>)]
    pub compaction: Option<Compaction>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CompactedStatus {
    Compacted,
}

#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub(crate) enum CompactAnswer {
    Compacted(Compacted),
    NoSession(Done),
}

/// `POST /agent/set-model`.
#[derive(Serialize, ToSchema)]
pub(crate) struct ModelSet {
    pub status: ModelStatus,
    pub model: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ModelStatus {
    Updated,
}

#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub(crate) enum ModelAnswer {
    Updated(ModelSet),
    NoSession(Done),
}

/// `GET /agent/status`: the agent and its session.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AgentState {
    pub alive: bool,
    pub agent_status: Activity,
    pub session_id: String,
    pub event_count: usize,
    /// The session's blocks.
    pub message_count: u64,
    /// The last text block that is not the system's, among the last 50.
    pub last_message: Option<LastMessage>,
    pub config: AgentConfig,
    #[schema(example = "claude-code")]
    pub provider: Option<&'static str>,
    pub model: Option<String>,
    pub pid: Option<u32>,
    /// How many processes were started for the agent.
    pub spawns: u32,
    pub native_id: Option<String>,
    /// The cursor of the last event.
    pub cursor: Option<u64>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Activity {
    Idle,
    Busy,
    Disconnected,
}

#[derive(Serialize, ToSchema)]
pub(crate) struct LastMessage {
    pub seq: u64,
    #[schema(value_type = String, example = "assistant")]
    pub actor: Actor,
    pub content: String,
}

#[derive(Serialize, ToSchema)]
pub(crate) struct AgentConfig {
    pub provider: Option<&'static str>,
    pub model: Option<String>,
    pub cwd: Option<String>,
}

/// One event of `GET /agent/events` (the `data:` of a server-sent event; its `id:` is the cursor).
#[derive(Serialize, ToSchema)]
pub(crate) struct EventBody {
    /// `started`, `assistant_delta`, `tool_use`, `complete`, … (see the host's events).
    #[serde(rename = "type")]
    pub kind: String,
    pub cursor: u64,
    #[schema(value_type = String, format = DateTime)]
    pub timestamp: Timestamp,
    pub data: Value,
    /// A delta's text (`*_delta` events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<Value>,
    /// The content of the event's block, or its message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Value>,
}

/// `GET /sessions/{id}/blocks`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Blocks {
    pub session_id: String,
    /// The blocks, as `schema/block.schema.json` describes them.
    #[schema(value_type = Vec<Object>)]
    pub blocks: Vec<Block>,
}

/// `GET /sessions/{id}/switches`: where the runtime or model changed.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Switches {
    pub session_id: String,
    /// `{seq, block_id, from, to}` each.
    #[schema(value_type = Vec<Object>)]
    pub switches: Vec<Switch>,
}

/// `GET /sessions/{id}/compactions`, oldest first.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Compactions {
    pub session_id: String,
    /// `{runtime, boundary_seq, summary_seq, summary, preserved, trigger, tokens_before,
    /// created_at}` each.
    #[schema(value_type = Vec<Object>)]
    pub compactions: Vec<Compaction>,
}
