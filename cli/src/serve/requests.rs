//! The JSON bodies the routes take, as typed structs (`Deserialize`, and `ToSchema` for
//! `/openapi.json`), and how a body is read: an empty body is `{}`, a key the route does not take
//! is refused, and a bad value is a 400 whose message starts with the field (`extraArgs[1]: expected
//! a string`). Each field's own check is a `deserialize_with` function here; the fields are checked
//! in the order their struct declares them, whatever the order of the body.

use std::fmt::Display;
use std::path::PathBuf;

use axum::body::Body;
use axum::http::StatusCode;
use base64::Engine as _;
use serde::de::{DeserializeOwned, Deserializer};
use serde::Deserialize;
use serde_json::{Map, Value};
use sna_history::host::{Image, ResumeOptions, StartOptions};
use sna_history::Runtime;
use utoipa::{IntoParams, ToSchema};

use super::{ApiError, Shared};

/// A route's JSON body.
pub(crate) trait JsonBody: DeserializeOwned {
    /// The keys the route takes, in the order the message about an unknown key lists them: the
    /// struct's fields unless the route lists them otherwise (the same keys either way).
    fn takes() -> &'static [&'static str] {
        sna_history::field_names::<Self>()
    }
}

/// Reads the body (up to the server's limit: 413 beyond it) as a `T`.
pub(crate) async fn read<T: JsonBody>(app: &Shared, body: Body) -> Result<T, ApiError> {
    let bytes = axum::body::to_bytes(body, app.max_body).await.map_err(|_| {
        ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "TOO_LARGE", format!("the body is larger than {} bytes", app.max_body))
    })?;
    let mut map = Map::new();
    if !bytes.iter().all(u8::is_ascii_whitespace) {
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| ApiError::bad_field("body", format!("not JSON: {e}")))?;
        let Value::Object(object) = value else { return Err(ApiError::bad_field("body", "expected a JSON object")) };
        map = object;
    }
    let takes = T::takes();
    if let Some(unknown) = map.keys().find(|k| !takes.contains(&k.as_str())) {
        let hint = if unknown == "meta" { " (sna serve keeps no metadata)" } else { "" };
        return Err(ApiError::bad_field(unknown, format!("unknown field{hint}; this route takes {}", takes.join(", "))));
    }
    let mut ordered = Map::new();
    for name in sna_history::field_names::<T>() {
        if let Some(value) = map.remove(*name) {
            ordered.insert(name.to_string(), value);
        }
    }
    serde_path_to_error::deserialize(Value::Object(ordered)).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        match message.strip_prefix(OWN).and_then(|rest| rest.split_once(OWN)) {
            Some((inside, own)) => ApiError::bad_field(&format!("{path}{inside}"), own),
            None => ApiError::bad_field(&path, message),
        }
    })
}

// ---- the fields' checks --------------------------------------------------------------------------

/// Marks a field's own message, and the part of the field it is about (`[1]`, `[0].base64`).
const OWN: char = '\u{1f}';

fn own<E: serde::de::Error>(inside: &str, message: impl Display) -> E {
    E::custom(format_args!("{OWN}{inside}{OWN}{message}"))
}

/// The field's value; `null` is none.
fn given<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Ok(Option::<Value>::deserialize(deserializer)?.filter(|v| !v.is_null()))
}

fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    match given(deserializer)? {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(own("", "expected a string")),
    }
}

fn texts<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<String>>, D::Error> {
    match given(deserializer)? {
        None => Ok(None),
        Some(Value::Array(items)) => items
            .into_iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) => Ok(s),
                _ => Err(own(&format!("[{i}]"), "expected a string")),
            })
            .collect::<Result<_, _>>()
            .map(Some),
        Some(_) => Err(own("", "expected a list of strings")),
    }
}

fn flag<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    match given(deserializer)? {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(b),
        Some(_) => Err(own("", "expected true or false")),
    }
}

/// A whole number above 0 (a count of tokens).
fn count<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    match given(deserializer)? {
        None => Ok(None),
        Some(Value::Number(n)) => n.as_u64().filter(|n| *n > 0).map(Some).ok_or_else(|| own("", "expected a whole number above 0")),
        Some(_) => Err(own("", "expected a whole number above 0")),
    }
}

fn runtime<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Runtime>, D::Error> {
    text(deserializer)?.map(|r| r.parse::<Runtime>().map_err(|e| own("", e))).transpose()
}

/// `images: [{base64, mimeType}]` (`data`/`mime` accepted too; `base64` may be a `data:` URL).
fn images<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Image>, D::Error> {
    let Some(value) = given(deserializer)? else { return Ok(Vec::new()) };
    let Value::Array(items) = value else { return Err(own("", "expected a list of {base64, mimeType}")) };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let field = |key: &str, alt: &str| item.get(key).or_else(|| item.get(alt)).and_then(Value::as_str);
            let data = field("base64", "data").ok_or_else(|| own(&format!("[{i}].base64"), "expected base64 text"))?;
            let mime = field("mimeType", "mime").ok_or_else(|| own(&format!("[{i}].mimeType"), "expected a mime type such as image/png"))?;
            let data = data.split_once(";base64,").map(|(_, d)| d).unwrap_or(data);
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data.trim())
                .map_err(|e| own(&format!("[{i}].base64"), format!("not base64: {e}")))?;
            let image = Image { mime: mime.to_string(), data: bytes };
            match image.check() {
                Ok(()) => Ok(image),
                Err(sna_history::Error::InvalidInput { message, location }) => {
                    let key = if location.field.as_deref() == Some("data") { "base64" } else { "mimeType" };
                    Err(own(&format!("[{i}].{key}"), message))
                }
                Err(e) => Err(own(&format!("[{i}]"), e)),
            }
        })
        .collect()
}

// ---- the bodies ----------------------------------------------------------------------------------

/// `POST /agent/sessions`: a new session (every field optional; `label` is `title`'s other name).
#[derive(Deserialize, ToSchema)]
pub(crate) struct NewSessionBody {
    /// The session's id (a new UUIDv7 when not given); 409 when it is taken.
    #[serde(default, deserialize_with = "text")]
    pub id: Option<String>,
    /// The title (wins over `title` when both are given).
    #[serde(default, deserialize_with = "text")]
    pub label: Option<String>,
    #[serde(default, deserialize_with = "text")]
    pub title: Option<String>,
    /// The working directory.
    #[serde(default, deserialize_with = "text")]
    pub cwd: Option<String>,
}

impl JsonBody for NewSessionBody {}

/// `PATCH /agent/sessions/{id}`: a new title or working directory.
#[derive(Deserialize, ToSchema)]
pub(crate) struct SessionUpdate {
    /// The title (wins over `title` when both are given).
    #[serde(default, deserialize_with = "text")]
    pub label: Option<String>,
    #[serde(default, deserialize_with = "text")]
    pub title: Option<String>,
    #[serde(default, deserialize_with = "text")]
    pub cwd: Option<String>,
}

impl JsonBody for SessionUpdate {}

/// `POST /agent/start`: how to start the session's agent.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StartBody {
    /// The runtime (`claude-code`, `codex`, `opencode`, `gemini-cli`, `pi`, `qwen-code`,
    /// `copilot-cli`); `claude-code` when
    /// not given.
    #[serde(default, deserialize_with = "runtime")]
    #[schema(value_type = Option<String>, example = "claude-code")]
    pub provider: Option<Runtime>,
    #[serde(default, deserialize_with = "text")]
    pub model: Option<String>,
    /// The working directory of the runtime.
    #[serde(default, deserialize_with = "text")]
    pub cwd: Option<String>,
    #[serde(default, deserialize_with = "text")]
    pub permission_mode: Option<String>,
    /// The runtime's configuration folder (its `HOME`).
    #[serde(default, deserialize_with = "text")]
    pub config_dir: Option<String>,
    /// More arguments for the runtime's command line.
    #[serde(default, deserialize_with = "texts")]
    pub extra_args: Option<Vec<String>>,
    /// The model's context window in tokens (a whole number above 0).
    #[serde(default, deserialize_with = "count")]
    #[schema(minimum = 1)]
    pub context_window: Option<u64>,
    /// Kill a running agent and start anew (else a running one is kept: `already_running`).
    #[serde(default, deserialize_with = "flag")]
    pub force: bool,
    /// A first message, sent in the background.
    #[serde(default, deserialize_with = "text")]
    pub prompt: Option<String>,
}

impl JsonBody for StartBody {
    fn takes() -> &'static [&'static str] {
        &["provider", "model", "prompt", "cwd", "permissionMode", "configDir", "extraArgs", "force", "contextWindow"]
    }
}

impl StartBody {
    pub fn options(&mut self) -> StartOptions {
        let mut options = StartOptions::new(self.provider.unwrap_or(Runtime::ClaudeCode));
        options.model = self.model.take();
        options.cwd = self.cwd.take().map(PathBuf::from);
        options.permission_mode = self.permission_mode.take();
        options.home = self.config_dir.take().map(PathBuf::from);
        options.args = self.extra_args.take().unwrap_or_default();
        options.context_window = self.context_window;
        options
    }
}

/// `POST /agent/resume` and `POST /agent/restart`: what to resume the session with (the
/// runtime and model it had when not given).
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResumeBody {
    #[serde(default, deserialize_with = "runtime")]
    #[schema(value_type = Option<String>, example = "codex")]
    pub provider: Option<Runtime>,
    #[serde(default, deserialize_with = "text")]
    pub model: Option<String>,
    #[serde(default, deserialize_with = "text")]
    pub permission_mode: Option<String>,
    #[serde(default, deserialize_with = "texts")]
    pub extra_args: Option<Vec<String>>,
    #[serde(default, deserialize_with = "text")]
    pub config_dir: Option<String>,
    #[serde(default, deserialize_with = "count")]
    #[schema(minimum = 1)]
    pub context_window: Option<u64>,
    /// A message, sent in the background once resumed.
    #[serde(default, deserialize_with = "text")]
    pub prompt: Option<String>,
}

impl JsonBody for ResumeBody {
    fn takes() -> &'static [&'static str] {
        &["provider", "model", "prompt", "permissionMode", "configDir", "extraArgs", "contextWindow"]
    }
}

impl ResumeBody {
    pub fn options(&mut self) -> ResumeOptions {
        ResumeOptions {
            runtime: self.provider,
            model: self.model.take(),
            permission_mode: self.permission_mode.take(),
            args: self.extra_args.take(),
            home: self.config_dir.take().map(PathBuf::from),
            ask_permissions: None,
            context_window: self.context_window,
        }
    }
}

/// An image of a message.
#[derive(ToSchema)]
#[schema(as = Image)]
#[allow(dead_code)] // Only its schema is used: `images` reads the items by hand (see there).
#[serde(rename_all = "camelCase")]
pub(crate) struct ImageBody {
    /// The bytes in base64, or a `data:` URL (`data` is accepted as its other name).
    base64: String,
    /// Its media type, `image/…` (`mime` is accepted as its other name).
    #[schema(example = "image/png")]
    mime_type: String,
}

/// `POST /agent/send`: a message, an image, or both.
#[derive(Deserialize, ToSchema)]
pub(crate) struct SendBody {
    #[serde(default, deserialize_with = "text")]
    pub message: Option<String>,
    #[serde(default, deserialize_with = "images")]
    #[schema(value_type = Option<Vec<ImageBody>>)]
    pub images: Vec<Image>,
}

impl JsonBody for SendBody {}

/// `POST /agent/compact`.
#[derive(Deserialize, ToSchema)]
pub(crate) struct CompactBody {
    /// What the summary should keep, for runtimes that take instructions (blank is none).
    #[serde(default, deserialize_with = "text")]
    pub instructions: Option<String>,
}

impl JsonBody for CompactBody {}

/// `POST /agent/set-model`.
#[derive(Deserialize, ToSchema)]
pub(crate) struct ModelBody {
    /// The model's name (required).
    #[serde(default, deserialize_with = "text")]
    #[schema(value_type = String)]
    pub model: Option<String>,
}

impl JsonBody for ModelBody {}

// ---- the queries ---------------------------------------------------------------------------------

/// `?session=ID` of every `/agent/...` route.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct SessionQuery {
    /// The session (default: `default`).
    pub session: Option<String>,
}

impl SessionQuery {
    pub fn id(&self) -> String {
        self.session.clone().unwrap_or_else(|| "default".into())
    }
}

/// The query of `POST /agent/send`.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct SendQuery {
    /// The session (default: `default`).
    pub session: Option<String>,
    /// `1` (anything but `0`, `false` or empty): answer when the turn ends, with its blocks.
    pub wait: Option<String>,
}

/// The query of `GET /agent/events`.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct EventsQuery {
    /// The session (default: `default`).
    pub session: Option<String>,
    /// The cursor after which to start (else the `Last-Event-ID` header; else from now on).
    pub since: Option<String>,
}

/// The query of `GET /sessions/{id}/blocks`.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct BlocksQuery {
    /// Only the blocks after this seq.
    pub since_seq: Option<String>,
}

/// The query of `GET /sessions/{id}/native/{runtime}`: as `sna export` takes them.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct NativeQuery {
    /// The runtime's format, when it has several.
    pub format: Option<String>,
    pub target_model: Option<String>,
    pub model_provider: Option<String>,
    /// `1` (anything but `0` or `false`): redact secrets.
    pub redact: Option<String>,
}
