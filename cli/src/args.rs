//! The command line: every command, option and help text (clap), and the options a few of them
//! share (`Target`, `Bound`). What each command does is in `commands/`.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use sna_history::Options;

use crate::failure::Failure;

#[derive(Parser)]
#[command(name = "sna", version, about = "Coding-agent conversation history: import, inspect, convert, resume", max_term_width = 100)]
pub struct Cli {
    /// The history database: a file, or a postgres:// URL (default: $SNA_HISTORY_DB, else
    /// $XDG_DATA_HOME/sna/history.db, else ~/.local/share/sna/history.db).
    #[arg(long, global = true, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Import Claude Code transcripts, Codex rollouts, OpenCode exports and opencode.db files,
    /// Gemini CLI session logs and Pi session files, or directories of them (~/.claude/projects,
    /// ~/.codex/sessions, OpenCode's data dir, ~/.gemini/tmp, ~/.pi/agent/sessions). A file
    /// imported before adds only what it gained.
    Import(ImportArgs),
    /// List the sessions.
    Ls(LsArgs),
    /// Print a session as a timeline.
    Show(ShowArgs),
    /// Full-text search over every session: words, "phrases", prefix*, AND, OR, a NOT b,
    /// parentheses; case and accents do not matter. Prints each block's session and seq (open it
    /// with `sna show ID --at SEQ`) and a snippet with the matches highlighted.
    Search(SearchArgs),
    /// Token usage and cost by day, week, month, session, project, model or provider, with
    /// totals: each model response counted once, priced with the runtime's own cost or the price
    /// table (a model without a price is listed, never counted as $0).
    Usage(UsageArgs),
    /// Write a session in a runtime's native shape.
    Export(ExportArgs),
    /// Convert a native file to another runtime's shape, in memory (no database is touched).
    Convert(ConvertArgs),
    /// Write the files a runtime needs to resume a session, and print (or run) the command.
    Resume(ResumeArgs),
    /// Print what converting a session to a runtime drops, degrades or adds.
    Report(ReportArgs),
    /// Delete a session.
    Rm(RmArgs),
    /// Write a session as one self-contained HTML file.
    View(ViewArgs),
    /// Serve the agent HTTP API (SNA's routes, server-sent events) and the web UI: runs the runtimes
    /// (Claude Code, Codex, OpenCode, Gemini CLI, Pi) for the stored sessions, turn by turn.
    Serve(ServeArgs),
    /// Be an Agent Client Protocol agent on stdin/stdout (for Zed and other ACP editors): list every
    /// stored session, open any of them, and continue it in the runtime of your choice.
    ///
    /// Protocol version 1. stdout carries only the protocol; logs go to stderr. The editor's file
    /// system and terminal are not used; MCP servers it names are not passed on.
    Acp(AcpArgs),
    /// List the secrets stored sessions hold (API keys, tokens, private keys, passwords), masked;
    /// nothing is changed.
    Scan(ScanArgs),
    /// Copy into one store the sessions and blocks it lacks from another (database files and
    /// postgres:// URLs alike), with their ids, times, attribution and embeds; a second run copies
    /// nothing. A session whose two histories differ is listed and left alone on both sides (exit 1).
    Sync(SyncArgs),
    #[command(about = "Replace the secrets a stored session holds by [REDACTED:<kind>], for good (one transaction)")]
    Redact(RedactArgs),
}

#[derive(clap::Args)]
pub struct ImportArgs {
    /// Files or directories.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The runtime, when detection is not wanted.
    #[arg(long, value_name = "RUNTIME")]
    pub runtime: Option<String>,
    /// Refuse a file with a malformed line (naming it) instead of keeping the line as an error block.
    #[arg(long)]
    pub strict: bool,
}

#[derive(clap::Args)]
pub struct LsArgs {
    /// As JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
pub struct ShowArgs {
    pub id: String,
    /// As JSON (the blocks).
    #[arg(long)]
    pub json: bool,
    /// Only the block at this seq (marked) and the blocks around it (see --context).
    #[arg(long, value_name = "SEQ")]
    pub at: Option<u64>,
    /// With --at: how many blocks on each side.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub context: u64,
}

#[derive(clap::Args)]
pub struct SearchArgs {
    pub query: String,
    /// Only blocks of this runtime.
    #[arg(long, value_name = "RUNTIME")]
    pub runtime: Option<String>,
    /// Only blocks of this model.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Only this session.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only blocks of this kind (repeatable): text, thinking, tool_use, tool_result, status, error.
    #[arg(long = "kind", value_name = "KIND")]
    pub kinds: Vec<String>,
    /// Only blocks created at or after this time (YYYY-MM-DD or RFC 3339).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only blocks created before this time.
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// At most this many hits.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub limit: u64,
    /// Search runtime bookkeeping (system and status lines, runtime-written context) too.
    #[arg(long)]
    pub bookkeeping: bool,
    /// As JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
pub struct UsageArgs {
    /// Files or directories to import first, as `sna import` does (a file imported before is
    /// only looked at, and read again only when it changed).
    pub paths: Vec<PathBuf>,
    /// day, week, month, session, project, model or provider.
    #[arg(long, value_name = "GROUP", default_value = "day")]
    pub by: String,
    /// From this day (YYYY-MM-DD, in --tz) or time (RFC 3339) on.
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Up to this day, included, or before this time.
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Only this runtime's responses.
    #[arg(long, value_name = "RUNTIME")]
    pub runtime: Option<String>,
    /// Only this model's responses.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// The time zone of days (an IANA name; default: the system's, TZ when set).
    #[arg(long, value_name = "ZONE")]
    pub tz: Option<String>,
    /// A price file read over the shipped table (default: $XDG_CONFIG_HOME/sna/prices.json when it exists).
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// As JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
pub struct ExportArgs {
    pub id: String,
    #[command(flatten)]
    pub to: Target,
    /// Write to this file instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct ConvertArgs {
    pub file: PathBuf,
    #[command(flatten)]
    pub to: Target,
    /// Write to this file instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct ResumeArgs {
    pub id: String,
    /// The runtime to resume in.
    #[arg(long = "in", value_name = "RUNTIME")]
    pub runtime: String,
    /// The home directory the runtime keeps its data under (default: $HOME).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// The working directory to resume in (default: the session's).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// The model the runtime will resume with (reasoning of other models stays out).
    #[arg(long, value_name = "MODEL")]
    pub target_model: Option<String>,
    /// Codex: the model provider to name in the rollout.
    #[arg(long, value_name = "PROVIDER")]
    pub model_provider: Option<String>,
    /// Run the command (and, for OpenCode, the import before it).
    #[arg(long)]
    pub run: bool,
    #[arg(long, help = "Replace secrets by [REDACTED:<kind>] in the files written")]
    pub redact: bool,
    #[command(flatten)]
    pub bound: Bound,
}

#[derive(clap::Args)]
pub struct ReportArgs {
    pub id: String,
    #[command(flatten)]
    pub to: Target,
}

#[derive(clap::Args)]
pub struct RmArgs {
    pub id: String,
}

#[derive(clap::Args)]
pub struct ViewArgs {
    pub id: String,
    /// The HTML file to write.
    #[arg(short, long, value_name = "FILE.html")]
    pub output: PathBuf,
    #[arg(long, help = "Replace secrets by [REDACTED:<kind>]")]
    pub redact: bool,
}

#[derive(clap::Args)]
pub struct ServeArgs {
    /// The address to listen on; anything but loopback needs a token.
    #[arg(long, value_name = "ADDRESS", default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// The port (0: any free one; the address is printed on stdout).
    #[arg(long, default_value_t = 7777)]
    pub port: u16,
    /// Every request must carry `Authorization: Bearer TOKEN` (or the login's cookie).
    #[arg(long, env = "SNA_TOKEN", value_name = "TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// The executable of a runtime, e.g. `--bin codex=/opt/codex/bin/codex` (repeatable).
    #[arg(long = "bin", value_name = "RUNTIME=PATH")]
    pub bins: Vec<String>,
    /// The HOME of the runtime processes (where their own files go; default: $HOME).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// The largest request body accepted, in MiB (images travel in bodies).
    #[arg(long, value_name = "MIB", default_value_t = 32)]
    pub max_body_mib: usize,
}

#[derive(clap::Args)]
pub struct AcpArgs {
    /// The runtime of new sessions (default: the first installed of claude-code, codex,
    /// opencode, gemini-cli, pi, qwen-code, copilot-cli).
    #[arg(long, value_name = "RUNTIME")]
    pub runtime: Option<String>,
    /// The model of new sessions (default: the runtime's own; OpenCode: provider/model).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// `default`: each tool that needs permission is asked of the editor
    /// (session/request_permission); `bypass`: every tool runs without asking.
    #[arg(long, value_name = "MODE", default_value = "default", value_parser = ["default", "bypass"])]
    pub permission_mode: String,
    /// The executable of a runtime, e.g. `--bin codex=/opt/codex/bin/codex` (repeatable).
    #[arg(long = "bin", value_name = "RUNTIME=PATH")]
    pub bins: Vec<String>,
    /// The HOME of the runtime processes (where their own files go; default: $HOME).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// How many sessions a session/list page holds.
    #[arg(long, value_name = "N", default_value_t = 100, hide = true)]
    pub page_size: usize,
}

#[derive(clap::Args)]
pub struct ScanArgs {
    /// The sessions (default: all).
    pub ids: Vec<String>,
}

#[derive(clap::Args)]
pub struct SyncArgs {
    /// The store to copy from (default: the database, --db).
    #[arg(long, value_name = "PATH|URL")]
    pub from: Option<PathBuf>,
    /// The store to copy into (default: the database, --db).
    #[arg(long, value_name = "PATH|URL")]
    pub to: Option<PathBuf>,
    /// The machine name recorded on the sessions made in the source (default: this machine's
    /// host name; for a postgres:// source, the server).
    #[arg(long, value_name = "NAME")]
    pub origin: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
pub struct RedactArgs {
    pub id: String,
    /// Rewrite the stored session (required: this cannot be undone).
    #[arg(long)]
    pub in_place: bool,
}

#[derive(clap::Args)]
pub struct Target {
    /// The runtime: claude-code, codex, opencode, gemini-cli, pi, qwen-code or copilot-cli.
    #[arg(long = "to", value_name = "RUNTIME")]
    pub runtime: String,
    /// The native format (claude-code: transcript, messages; codex: items, rollout; opencode:
    /// session, prelude; gemini-cli: log, contents; pi: entries; qwen-code: chat;
    /// copilot-cli: events).
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// The model the target will resume with.
    #[arg(long, value_name = "MODEL")]
    pub target_model: Option<String>,
    /// Codex: the model provider to name.
    #[arg(long, value_name = "PROVIDER")]
    pub model_provider: Option<String>,
    /// Fail instead of dropping or degrading anything.
    #[arg(long)]
    pub strict: bool,
    #[arg(long, help = "Replace secrets (API keys, tokens, private keys, passwords) by [REDACTED:<kind>]")]
    pub redact: bool,
    #[command(flatten)]
    pub bound: Bound,
}

/// How a replay is bounded: by the latest compaction, and by the target's context window.
#[derive(clap::Args)]
pub struct Bound {
    /// The target's context window in tokens: the replay is folded (its oldest whole turns into
    /// one summary) to fit it, less a reserve for the target's own prompt, tools and answer
    /// (default: the target model's window from the model table, when --target-model names a
    /// model it knows and the replay is rebuilt for another runtime).
    #[arg(long, value_name = "TOKENS")]
    pub context_window: Option<u64>,
    /// Which compaction the replay starts at: latest (the runtime's summary stands in for what
    /// came before it) or none (the whole history).
    #[arg(long, value_name = "latest|none", default_value = "latest")]
    pub compaction: String,
    /// A model file read over the shipped model table (default: $XDG_CONFIG_HOME/sna/models.json
    /// when it exists).
    #[arg(long, value_name = "FILE")]
    pub models: Option<PathBuf>,
}

impl Bound {
    /// `options` bounded so.
    pub fn apply(&self, options: Options) -> Result<Options, Failure> {
        if self.context_window == Some(0) {
            return Err(Failure("--context-window: a number of tokens above 0".into()));
        }
        Ok(Options {
            context_window: self.context_window,
            compaction: self.compaction.parse().map_err(|e: sna_history::Error| Failure(format!("--compaction: {e}")))?,
            models: self.models.as_ref().map(|p| p.display().to_string()),
            ..options
        })
    }
}

impl Target {
    pub fn options(&self) -> Result<Options, Failure> {
        self.bound.apply(Options {
            format: self.format.clone(),
            strict: self.strict,
            target_model: self.target_model.clone(),
            model_provider: self.model_provider.clone(),
            redact: self.redact,
            ..Options::default()
        })
    }
}
