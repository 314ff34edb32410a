//! The `sna` command: import whole histories of Claude Code, Codex, OpenCode, Gemini CLI and Pi,
//! inspect them, convert them, resume them in any of the five, and view them as one HTML file.
//!
//! Every decision is sna-history's (the core crate); this crate parses arguments, walks
//! directories and prints. Errors are one line on stderr: exit code 2 for usage errors, 1 for
//! failures.

mod search;
mod acp;
mod serve;
mod show;
mod usage;
mod view;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use serde_json::Value;
use sna_history::{Options, Runtime, SourceOutcome, Store};

#[derive(Parser)]
#[command(name = "sna", version, about = "Coding-agent conversation history: import, inspect, convert, resume", max_term_width = 100)]
struct Cli {
    /// The history database: a file, or a postgres:// URL (default: $SNA_HISTORY_DB, else
    /// $XDG_DATA_HOME/sna/history.db, else ~/.local/share/sna/history.db).
    #[arg(long, global = true, value_name = "PATH|URL")]
    db: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Import Claude Code transcripts, Codex rollouts, OpenCode exports and opencode.db files,
    /// Gemini CLI session logs and Pi session files, or directories of them (~/.claude/projects,
    /// ~/.codex/sessions, OpenCode's data dir, ~/.gemini/tmp, ~/.pi/agent/sessions). A file
    /// imported before adds only what it gained.
    Import {
        /// Files or directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The runtime, when detection is not wanted.
        #[arg(long, value_name = "RUNTIME")]
        runtime: Option<String>,
        /// Refuse a file with a malformed line (naming it) instead of keeping the line as an error block.
        #[arg(long)]
        strict: bool,
    },
    /// List the sessions.
    Ls {
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print a session as a timeline.
    Show {
        id: String,
        /// As JSON (the blocks).
        #[arg(long)]
        json: bool,
        /// Only the block at this seq (marked) and the blocks around it (see --context).
        #[arg(long, value_name = "SEQ")]
        at: Option<u64>,
        /// With --at: how many blocks on each side.
        #[arg(long, value_name = "N", default_value_t = 3)]
        context: u64,
    },
    /// Full-text search over every session: words, "phrases", prefix*, AND, OR, a NOT b,
    /// parentheses; case and accents do not matter. Prints each block's session and seq (open it
    /// with `sna show ID --at SEQ`) and a snippet with the matches highlighted.
    Search {
        query: String,
        /// Only blocks of this runtime.
        #[arg(long, value_name = "RUNTIME")]
        runtime: Option<String>,
        /// Only blocks of this model.
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
        /// Only this session.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Only blocks of this kind (repeatable): text, thinking, tool_use, tool_result, status, error.
        #[arg(long = "kind", value_name = "KIND")]
        kinds: Vec<String>,
        /// Only blocks created at or after this time (YYYY-MM-DD or RFC 3339).
        #[arg(long, value_name = "DATE")]
        since: Option<String>,
        /// Only blocks created before this time.
        #[arg(long, value_name = "DATE")]
        until: Option<String>,
        /// At most this many hits.
        #[arg(long, value_name = "N", default_value_t = 50)]
        limit: u64,
        /// Search runtime bookkeeping (system and status lines, runtime-written context) too.
        #[arg(long)]
        bookkeeping: bool,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Token usage and cost by day, week, month, session, project, model or provider, with
    /// totals: each model response counted once, priced with the runtime's own cost or the price
    /// table (a model without a price is listed, never counted as $0).
    Usage {
        /// Files or directories to import first, as `sna import` does (a file imported before is
        /// only looked at, and read again only when it changed).
        paths: Vec<PathBuf>,
        /// day, week, month, session, project, model or provider.
        #[arg(long, value_name = "GROUP", default_value = "day")]
        by: String,
        /// From this day (YYYY-MM-DD, in --tz) or time (RFC 3339) on.
        #[arg(long, value_name = "DATE")]
        since: Option<String>,
        /// Up to this day, included, or before this time.
        #[arg(long, value_name = "DATE")]
        until: Option<String>,
        /// Only this runtime's responses.
        #[arg(long, value_name = "RUNTIME")]
        runtime: Option<String>,
        /// Only this model's responses.
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
        /// The time zone of days (an IANA name; default: the system's, TZ when set).
        #[arg(long, value_name = "ZONE")]
        tz: Option<String>,
        /// A price file read over the shipped table (default: $XDG_CONFIG_HOME/sna/prices.json when it exists).
        #[arg(long, value_name = "FILE")]
        prices: Option<PathBuf>,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write a session in a runtime's native shape.
    Export {
        id: String,
        #[command(flatten)]
        to: Target,
        /// Write to this file instead of stdout.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Convert a native file to another runtime's shape, in memory (no database is touched).
    Convert {
        file: PathBuf,
        #[command(flatten)]
        to: Target,
        /// Write to this file instead of stdout.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Write the files a runtime needs to resume a session, and print (or run) the command.
    Resume {
        id: String,
        /// The runtime to resume in.
        #[arg(long = "in", value_name = "RUNTIME")]
        runtime: String,
        /// The home directory the runtime keeps its data under (default: $HOME).
        #[arg(long, value_name = "DIR")]
        home: Option<PathBuf>,
        /// The working directory to resume in (default: the session's).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// The model the runtime will resume with (reasoning of other models stays out).
        #[arg(long, value_name = "MODEL")]
        target_model: Option<String>,
        /// Codex: the model provider to name in the rollout.
        #[arg(long, value_name = "PROVIDER")]
        model_provider: Option<String>,
        /// Run the command (and, for OpenCode, the import before it).
        #[arg(long)]
        run: bool,
        #[arg(long, help = "Replace secrets by [REDACTED:<kind>] in the files written")]
        redact: bool,
        #[command(flatten)]
        bound: Bound,
    },
    /// Print what converting a session to a runtime drops, degrades or adds.
    Report {
        id: String,
        #[command(flatten)]
        to: Target,
    },
    /// Delete a session.
    Rm { id: String },
    /// Write a session as one self-contained HTML file.
    View {
        id: String,
        /// The HTML file to write.
        #[arg(short, long, value_name = "FILE.html")]
        output: PathBuf,
        #[arg(long, help = "Replace secrets by [REDACTED:<kind>]")]
        redact: bool,
    },
    /// Serve the agent HTTP API (SNA's routes, server-sent events) and the web UI: runs the runtimes
    /// (Claude Code, Codex, OpenCode, Gemini CLI, Pi) for the stored sessions, turn by turn.
    Serve {
        /// The address to listen on; anything but loopback needs a token.
        #[arg(long, value_name = "ADDRESS", default_value = "127.0.0.1")]
        host: std::net::IpAddr,
        /// The port (0: any free one; the address is printed on stdout).
        #[arg(long, default_value_t = 7777)]
        port: u16,
        /// Every request must carry `Authorization: Bearer TOKEN` (or the login's cookie).
        #[arg(long, env = "SNA_TOKEN", value_name = "TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// The executable of a runtime, e.g. `--bin codex=/opt/codex/bin/codex` (repeatable).
        #[arg(long = "bin", value_name = "RUNTIME=PATH")]
        bins: Vec<String>,
        /// The HOME of the runtime processes (where their own files go; default: $HOME).
        #[arg(long, value_name = "DIR")]
        home: Option<PathBuf>,
        /// The largest request body accepted, in MiB (images travel in bodies).
        #[arg(long, value_name = "MIB", default_value_t = 32)]
        max_body_mib: usize,
    },
    /// Be an Agent Client Protocol agent on stdin/stdout (for Zed and other ACP editors): list every
    /// stored session, open any of them, and continue it in the runtime of your choice.
    ///
    /// Protocol version 1. stdout carries only the protocol; logs go to stderr. The editor's file
    /// system and terminal are not used; MCP servers it names are not passed on.
    Acp {
        /// The runtime of new sessions (default: the first installed of claude-code, codex,
        /// opencode, gemini-cli, pi).
        #[arg(long, value_name = "RUNTIME")]
        runtime: Option<String>,
        /// The model of new sessions (default: the runtime's own; OpenCode: provider/model).
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
        /// `default`: each tool that needs permission is asked of the editor
        /// (session/request_permission); `bypass`: every tool runs without asking.
        #[arg(long, value_name = "MODE", default_value = "default", value_parser = ["default", "bypass"])]
        permission_mode: String,
        /// The executable of a runtime, e.g. `--bin codex=/opt/codex/bin/codex` (repeatable).
        #[arg(long = "bin", value_name = "RUNTIME=PATH")]
        bins: Vec<String>,
        /// The HOME of the runtime processes (where their own files go; default: $HOME).
        #[arg(long, value_name = "DIR")]
        home: Option<PathBuf>,
        /// How many sessions a session/list page holds.
        #[arg(long, value_name = "N", default_value_t = 100, hide = true)]
        page_size: usize,
    },
    /// List the secrets stored sessions hold (API keys, tokens, private keys, passwords), masked;
    /// nothing is changed.
    Scan {
        /// The sessions (default: all).
        ids: Vec<String>,
    },
    /// Copy into one store the sessions and blocks it lacks from another (database files and
    /// postgres:// URLs alike), with their ids, times, attribution and embeds; a second run copies
    /// nothing. A session whose two histories differ is listed and left alone on both sides (exit 1).
    Sync {
        /// The store to copy from (default: the database, --db).
        #[arg(long, value_name = "PATH|URL")]
        from: Option<PathBuf>,
        /// The store to copy into (default: the database, --db).
        #[arg(long, value_name = "PATH|URL")]
        to: Option<PathBuf>,
        /// The machine name recorded on the sessions made in the source (default: this machine's
        /// host name; for a postgres:// source, the server).
        #[arg(long, value_name = "NAME")]
        origin: Option<String>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    #[command(about = "Replace the secrets a stored session holds by [REDACTED:<kind>], for good (one transaction)")]
    Redact {
        id: String,
        /// Rewrite the stored session (required: this cannot be undone).
        #[arg(long)]
        in_place: bool,
    },
}

#[derive(clap::Args)]
struct Target {
    /// The runtime: claude-code, codex, opencode, gemini-cli or pi.
    #[arg(long = "to", value_name = "RUNTIME")]
    runtime: String,
    /// The native format (claude-code: transcript, messages; codex: items, rollout; opencode:
    /// session, prelude; gemini-cli: log, contents; pi: entries).
    #[arg(long, value_name = "FORMAT")]
    format: Option<String>,
    /// The model the target will resume with.
    #[arg(long, value_name = "MODEL")]
    target_model: Option<String>,
    /// Codex: the model provider to name.
    #[arg(long, value_name = "PROVIDER")]
    model_provider: Option<String>,
    /// Fail instead of dropping or degrading anything.
    #[arg(long)]
    strict: bool,
    #[arg(long, help = "Replace secrets (API keys, tokens, private keys, passwords) by [REDACTED:<kind>]")]
    redact: bool,
    #[command(flatten)]
    bound: Bound,
}

/// How a replay is bounded: by the latest compaction, and by the target's context window.
#[derive(clap::Args)]
struct Bound {
    /// The target's context window in tokens: the replay is folded (its oldest whole turns into
    /// one summary) to fit it, less a reserve for the target's own prompt, tools and answer
    /// (default: the target model's window from the model table, when --target-model names a
    /// model it knows and the replay is rebuilt for another runtime).
    #[arg(long, value_name = "TOKENS")]
    context_window: Option<u64>,
    /// Which compaction the replay starts at: latest (the runtime's summary stands in for what
    /// came before it) or none (the whole history).
    #[arg(long, value_name = "latest|none", default_value = "latest")]
    compaction: String,
    /// A model file read over the shipped model table (default: $XDG_CONFIG_HOME/sna/models.json
    /// when it exists).
    #[arg(long, value_name = "FILE")]
    models: Option<PathBuf>,
}

impl Bound {
    /// `options` bounded so.
    fn apply(&self, options: Options) -> Result<Options, Failure> {
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
    fn options(&self) -> Result<Options, Failure> {
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

/// A failure: its message is printed as one line.
struct Failure(String);

impl From<sna_history::Error> for Failure {
    fn from(e: sna_history::Error) -> Self {
        Failure(e.to_string())
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            // The reader went away (`sna show … | head`): nothing left to say.
            return Failure(String::new());
        }
        Failure(e.to_string())
    }
}

type Outcome = Result<(), Failure>;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) if message.is_empty() => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            eprintln!("sna: {}", show::visible(&message));
            ExitCode::from(1)
        }
    }
}

fn database(given: Option<PathBuf>) -> Result<PathBuf, Failure> {
    if let Some(path) = given {
        return Ok(path);
    }
    if let Some(path) = std::env::var_os("SNA_HISTORY_DB").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let data = match std::env::var_os("XDG_DATA_HOME").filter(|p| !p.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => match std::env::var_os("HOME").filter(|p| !p.is_empty()) {
            Some(home) => PathBuf::from(home).join(".local").join("share"),
            None => return Err(Failure("no database: give --db, or set SNA_HISTORY_DB or HOME".into())),
        },
    };
    let dir = data.join("sna");
    std::fs::create_dir_all(&dir).map_err(|e| Failure(format!("cannot create {}: {e}", dir.display())))?;
    Ok(dir.join("history.db"))
}

fn open(db: Option<PathBuf>) -> Result<Store, Failure> {
    Ok(Store::open(database(db)?)?)
}

/// The executable of each runtime named with `--bin RUNTIME=PATH`.
type Bins = std::collections::BTreeMap<Runtime, PathBuf>;

/// The runtimes' executables (`--bin RUNTIME=PATH`), their HOME and the database (its directory
/// made) of a command that runs the host.
fn host_setup(bins: Vec<String>, home: Option<PathBuf>, db: Option<PathBuf>) -> Result<(Bins, Option<PathBuf>, PathBuf), Failure> {
    let mut runtimes = std::collections::BTreeMap::new();
    for bin in bins {
        let (name, path) = bin.split_once('=').ok_or_else(|| Failure(format!("--bin {bin:?}: expected RUNTIME=PATH")))?;
        let path = std::path::absolute(path).map_err(|e| Failure(format!("--bin {bin:?}: {e}")))?;
        runtimes.insert(runtime(name)?, path);
    }
    let home = home.map(|h| std::path::absolute(&h).map_err(|e| Failure(format!("--home: {e}")))).transpose()?;
    let db = database(db)?;
    let file = !db.to_str().is_some_and(sna_history::is_postgres_url);
    if let Some(dir) = db.parent().filter(|d| file && !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Failure(format!("cannot create {}: {e}", dir.display())))?;
    }
    Ok((runtimes, home, db))
}

fn runtime(name: &str) -> Result<Runtime, Failure> {
    Ok(name.parse::<Runtime>()?)
}

fn run(cli: Cli) -> Outcome {
    match cli.command {
        Command::Import { paths, runtime: rt, strict } => {
            let options = Options { strict, ..Options::default() };
            import(&open(cli.db)?, &paths, rt.as_deref().map(runtime).transpose()?, &options)
        }
        Command::Ls { json } => ls(&open(cli.db)?, json),
        Command::Sync { from, to, origin, json } => {
            if from.is_none() && to.is_none() {
                return Err(Failure("sync needs --from or --to (the other one defaults to the database)".into()));
            }
            let from = match from {
                Some(path) => Store::open(path)?,
                None => open(cli.db.clone())?,
            };
            let to = match to {
                Some(path) => Store::open(path)?,
                None => open(cli.db)?,
            };
            sync(&from, &to, origin, json)
        }
        Command::Search { query, runtime, model, session, kinds, since, until, limit, bookkeeping, json } => {
            let options = sna_history::SearchOptions::from_value(serde_json::json!({
                "runtime": runtime, "model": model, "session": session, "kinds": (!kinds.is_empty()).then_some(kinds),
                "since": since, "until": until, "limit": limit, "bookkeeping": bookkeeping,
            }))?;
            let hits = open(cli.db)?.search(&query, &options)?;
            Ok(search::print(&hits, json, std::io::stdout().is_terminal())?)
        }
        Command::Usage { paths, by, since, until, runtime: rt, model, tz, prices, json } => {
            let options = sna_history::UsageOptions::from_value(serde_json::json!({
                "by": by, "since": since, "until": until, "runtime": rt, "model": model, "tz": tz,
                "prices": prices.map(|p| p.display().to_string()),
            }))?;
            let store = open(cli.db)?;
            // Files that could not be imported are named on stderr and make the exit status 1;
            // the report of what the store holds is printed all the same.
            let imported = if paths.is_empty() { Ok(()) } else { import_quietly(&store, &paths) };
            usage::print(&store.usage(&options)?, json)?;
            imported
        }
        Command::Show { id, json, at, context } => {
            let store = open(cli.db)?;
            let session = store.session(&id)?;
            let around = at.map(|seq| (seq, context));
            if let Some(seq) = at {
                let len = session.len()?;
                if seq >= len {
                    return Err(Failure(format!("session {} has {len} blocks: no block at seq {seq}", show::visible(&id))));
                }
            }
            let mut out = std::io::stdout().lock();
            if json {
                let blocks = match around {
                    Some((seq, n)) => session.blocks_range(seq.saturating_sub(n), seq.saturating_add(n).saturating_add(1))?,
                    None => session.blocks()?,
                };
                writeln!(out, "{}", serde_json::to_string_pretty(&blocks).map_err(|e| Failure(e.to_string()))?)?;
            } else {
                show::timeline(&session, &mut out, std::io::stdout().is_terminal(), around)?;
            }
            Ok(())
        }
        Command::Export { id, to, output } => {
            let store = open(cli.db)?;
            let session = store.session(&id)?;
            let rt = runtime(&to.runtime)?;
            write_native(&session, rt, &to.options()?, output.as_deref()).map(drop)
        }
        Command::Convert { file, to, output } => {
            let store = Store::open_in_memory()?;
            let session = store.import_file(&file, None, &Options::default())?;
            let rt = runtime(&to.runtime)?;
            let report = write_native(&session, rt, &to.options()?, output.as_deref())?;
            for entry in &report.entries {
                eprintln!("sna: {}: {}", entry.action, show::visible(&entry.message));
            }
            Ok(())
        }
        Command::Resume { id, runtime: rt, home, cwd, target_model, model_provider, run, redact, bound } => {
            let store = open(cli.db)?;
            let session = store.session(&id)?;
            let rt = runtime(&rt)?;
            let options = bound.apply(Options { target_model, model_provider, redact, ..Options::default() })?;
            let absolute = |p: PathBuf| std::path::absolute(&p).map_err(|e| Failure(format!("{}: {e}", p.display())));
            let home = home.map(absolute).transpose()?;
            let cwd = cwd.map(absolute).transpose()?;
            let resume = sna_history::ResumeOptions { home, cwd, options, ..Default::default() };
            let plan = session.prepare_resume(rt, &resume)?;
            for file in &plan.files {
                eprintln!("wrote {}", file.display());
            }
            if let Some(seq) = plan.replay.compaction_seq {
                eprintln!("the replay starts at the compaction at seq {seq}: the runtime's summary stands in for what came before");
            }
            if let Some((first, last)) = plan.replay.folded {
                eprintln!("seq {first}–{last} folded into one summary to fit the context window");
            }
            let env: String = plan.env.iter().map(|(k, v)| format!("{k}={} ", quote(v))).collect();
            let cd = plan.cwd.as_ref().map(|c| format!("cd {} && ", quote(&c.display().to_string()))).unwrap_or_default();
            for command in plan.setup.iter().chain(std::iter::once(&plan.argv)) {
                println!("{cd}{env}{}", command.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" "));
            }
            if run {
                for command in plan.setup.iter().chain(std::iter::once(&plan.argv)) {
                    let mut child = std::process::Command::new(&command[0]);
                    child.args(&command[1..]).envs(&plan.env);
                    if let Some(cwd) = &plan.cwd {
                        child.current_dir(cwd);
                    }
                    let status = child.status().map_err(|e| Failure(format!("cannot run {}: {e}", command[0])))?;
                    if !status.success() {
                        return Err(Failure(format!("{} exited with {status}", command.join(" "))));
                    }
                }
            }
            Ok(())
        }
        Command::Report { id, to } => {
            let store = open(cli.db)?;
            let session = store.session(&id)?;
            let rt = runtime(&to.runtime)?;
            let options = Options { strict: false, ..to.options()? };
            let export = session.export(rt, &options)?;
            if export.report.entries.is_empty() {
                println!("lossless: nothing dropped, degraded, added or remapped");
            }
            for entry in &export.report.entries {
                println!("{:<12} {:<38} {}", entry.action, show::visible(entry.block_id.as_deref().unwrap_or("-")), show::visible(&entry.message));
            }
            let losses = export.report.entries.iter().filter(|e| e.is_loss()).count();
            if to.strict && losses > 0 {
                return Err(Failure(format!("{losses} conversion losses")));
            }
            Ok(())
        }
        Command::Rm { id } => {
            let store = open(cli.db)?;
            store.delete_session(&id)?;
            eprintln!("deleted {id}");
            Ok(())
        }
        Command::View { id, output, redact } => {
            let store = open(cli.db)?;
            let session = store.session(&id)?;
            let html = view::html(&session, redact)?;
            std::fs::write(&output, html).map_err(|e| Failure(format!("cannot write {}: {e}", output.display())))?;
            eprintln!("wrote {}", output.display());
            Ok(())
        }
        Command::Acp { runtime: rt, model, permission_mode, bins, home, page_size } => {
            let (bins, home, db) = host_setup(bins, home, cli.db)?;
            let config = acp::Config { db, runtime: rt.as_deref().map(runtime).transpose()?, model, bypass: permission_mode == "bypass", bins, home, page: page_size };
            acp::run(config).map_err(Failure)
        }
        Command::Serve { host, port, token, bins, home, max_body_mib } => {
            let (runtimes, home, db) = host_setup(bins, home, cli.db)?;
            let config = serve::Config { db, host, port, token, bins: runtimes, home, max_body: max_body_mib.saturating_mul(1 << 20) };
            serve::run(config).map_err(Failure)
        }
        Command::Scan { ids } => {
            let store = open(cli.db)?;
            let ids = if ids.is_empty() { store.sessions()?.into_iter().map(|s| s.id).collect() } else { ids };
            let mut found = 0;
            for id in ids {
                let session = store.session(&id)?;
                for finding in session.scan_secrets()? {
                    found += 1;
                    println!("{}  {:>5}  {:<16} {}", show::visible(&id), finding.seq, finding.kind, show::visible(&finding.preview));
                }
            }
            eprintln!("{found} secrets found");
            Ok(())
        }
        Command::Redact { id, in_place } => {
            if !in_place {
                return Err(Failure("sna redact rewrites the stored session for good: say --in-place (sna scan lists what it would replace; --redact on export, view and resume leaves the store as it is)".into()));
            }
            let store = open(cli.db)?;
            let report = store.session(&id)?.redact_in_place()?;
            for entry in &report.entries {
                println!("{:<38} {}", show::visible(entry.block_id.as_deref().unwrap_or("-")), show::visible(&entry.message));
            }
            eprintln!("{} blocks redacted", report.entries.len());
            Ok(())
        }
    }
}

/// A shell word.
fn quote(text: &str) -> String {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:@+,".contains(&b)) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// Native data as the runtime keeps it: JSONL for transcripts and rollouts, text for the prelude,
/// JSON otherwise.
/// Writes the session in `rt`'s format to `output` (replaced whole), else to stdout.
fn write_native(session: &sna_history::Session, rt: Runtime, options: &Options, output: Option<&Path>) -> Result<sna_history::Report, Failure> {
    match output {
        Some(path) => Ok(session.export_to_path(path, rt, options)?),
        None => session.export_to(std::io::stdout().lock(), rt, options).map_err(|e| match e {
            // The reader went away (`sna export … | head`): nothing left to say.
            sna_history::Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe => Failure(String::new()),
            e => e.into(),
        }),
    }
}

/// The files under `paths` that may hold history: files as given, and below directories every
/// `.jsonl`, `.json` and `.db` file (sorted, so that runs are repeatable). Links to directories are
/// not followed (a link to a parent would make the walk endless); only regular files are taken,
/// others are reported; the database being written (`skip`, with its `-wal` and `-shm`) is left out.
fn candidates(paths: &[PathBuf], skip: Option<&Path>) -> Result<Vec<PathBuf>, Failure> {
    let skipped: Vec<PathBuf> = skip
        .and_then(|db| std::fs::canonicalize(db).ok())
        .map(|db| ["", "-wal", "-shm", "-journal"].iter().map(|s| PathBuf::from(format!("{}{s}", db.display()))).collect())
        .unwrap_or_default();
    let is_ours = |path: &Path| std::fs::canonicalize(path).is_ok_and(|p| skipped.contains(&p));
    let mut out = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| Failure(format!("cannot read {}: {e}", path.display())))?;
        if !meta.is_dir() {
            // A file named explicitly goes to core, which says what is wrong with it.
            out.push(path.clone());
            continue;
        }
        let mut stack = vec![path.clone()];
        while let Some(dir) = stack.pop() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
                .map_err(|e| Failure(format!("cannot read {}: {e}", dir.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .collect();
            entries.sort();
            for entry in entries {
                let Ok(own) = std::fs::symlink_metadata(&entry) else { continue };
                if own.is_dir() {
                    stack.push(entry);
                    continue;
                }
                if !matches!(entry.extension().and_then(|e| e.to_str()), Some("jsonl" | "json" | "db")) || is_ours(&entry) {
                    continue;
                }
                // A link to a file is read as that file; a link to a directory is not followed.
                match std::fs::metadata(&entry) {
                    Ok(meta) if meta.is_file() => out.push(entry),
                    Ok(meta) if meta.is_dir() => {}
                    _ => eprintln!("sna: {}: not a regular file, skipped", show::visible(&entry.display().to_string())),
                }
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

#[derive(Default)]
struct Tally {
    imported: usize,
    appended: usize,
    added_blocks: u64,
    replaced: usize,
    unchanged: usize,
    skipped: usize,
    failed: usize,
    /// Lines kept as error blocks (or repaired), each reported.
    kept_malformed: usize,
}

fn import(store: &Store, paths: &[PathBuf], rt: Option<Runtime>, options: &Options) -> Outcome {
    import_files(store, paths, rt, options, false)
}

/// `sna usage`'s import: the summary only when something changed.
fn import_quietly(store: &Store, paths: &[PathBuf]) -> Outcome {
    import_files(store, paths, None, &Options::default(), true)
}

fn import_files(store: &Store, paths: &[PathBuf], rt: Option<Runtime>, options: &Options, quiet: bool) -> Outcome {
    let files = candidates(paths, store.path())?;
    let bar = if std::io::stderr().is_terminal() && files.len() > 1 {
        let bar = indicatif::ProgressBar::new(files.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {wide_msg}").unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(bar)
    } else {
        None
    };
    let explicit: Vec<&PathBuf> = paths.iter().filter(|p| !p.is_dir()).collect();
    let mut tally = Tally::default();
    for file in &files {
        if let Some(bar) = &bar {
            bar.set_message(file.display().to_string());
        }
        // A file imported before that looks as it did then is not opened.
        if store.source_unchanged(file).unwrap_or(false) {
            tally.unchanged += 1;
            if let Some(bar) = &bar {
                bar.inc(1);
            }
            continue;
        }
        // A database of many sessions (`opencode.db`), by its header.
        let database = sna_history::native::detect::detect_database(file).ok().flatten();
        let result = if let Some(db_runtime) = database {
            store.import_database(file, Some(db_runtime)).map(|sessions| {
                if sessions.is_empty() {
                    tally.unchanged += 1;
                } else {
                    tally.imported += sessions.len();
                }
            })
        } else {
            // Detected once here and handed on; a file found below a directory that is not
            // history of any runtime is left alone (one named explicitly gets core's error).
            let detected = match rt {
                Some(rt) => Some(rt),
                None => sna_history::native::detect_runtime(file).ok().flatten(),
            };
            if detected.is_none() && !explicit.contains(&file) {
                tally.skipped += 1;
                if let Some(bar) = &bar {
                    bar.inc(1);
                }
                continue;
            }
            store.import_source(file, detected, options).map(|done| {
                match done.outcome {
                    SourceOutcome::Imported => tally.imported += 1,
                    SourceOutcome::Unchanged => tally.unchanged += 1,
                    SourceOutcome::Appended(_) => {
                        tally.appended += 1;
                        tally.added_blocks += done.blocks_added;
                    }
                    SourceOutcome::Replaced => tally.replaced += 1,
                }
                // What this import kept but could not read, each line named.
                for entry in &done.report.entries {
                    let line = show::visible(&format!("sna: {}: {}: {}", file.display(), entry.action, entry.message)).into_owned();
                    match &bar {
                        Some(bar) => bar.println(line),
                        None => eprintln!("{line}"),
                    }
                    tally.kept_malformed += 1;
                }
            })
        };
        if let Err(e) = result {
            tally.failed += 1;
            let line = show::visible(&format!("sna: {}: {e}", file.display())).into_owned();
            match &bar {
                Some(bar) => bar.println(line),
                None => eprintln!("{line}"),
            }
        }
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let mut summary = format!("{} imported, {} grown (+{} blocks), {} replaced, {} unchanged", tally.imported, tally.appended, tally.added_blocks, tally.replaced, tally.unchanged);
    if tally.skipped > 0 {
        summary.push_str(&format!(", {} not history", tally.skipped));
    }
    if tally.kept_malformed > 0 {
        summary.push_str(&format!(", {} lines kept as error blocks or repaired (above; --strict refuses such files)", tally.kept_malformed));
    }
    if tally.failed > 0 {
        summary.push_str(&format!(", {} failed", tally.failed));
    }
    if !quiet || tally.unchanged + tally.skipped != files.len() {
        eprintln!("{summary}");
    }
    if tally.failed > 0 {
        return Err(Failure(format!("{} of {} files could not be imported", tally.failed, files.len())));
    }
    Ok(())
}

/// A store as the user named it: its file, or its URL without the password.
fn shown_store(store: &Store) -> String {
    match (store.url(), store.path()) {
        (Some(url), _) => url.to_string(),
        (None, Some(path)) => path.display().to_string(),
        (None, None) => ":memory:".into(),
    }
}

fn sync(from: &Store, to: &Store, origin: Option<String>, json: bool) -> Outcome {
    let report = from.sync_to(to, &sna_history::SyncOptions { origin })?;
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report).map_err(|e| Failure(e.to_string()))?)?;
    } else {
        let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        writeln!(
            out,
            "{} -> {}: {} ({} created, {} extended, {} unchanged), {} copied, {} ({})",
            show::visible(&shown_store(from)),
            show::visible(&shown_store(to)),
            plural(report.sessions, "session", "sessions"),
            report.created,
            report.extended,
            report.unchanged,
            plural(report.blocks, "block", "blocks"),
            plural(report.embeds, "embed", "embeds"),
            plural(report.embed_bytes, "byte", "bytes"),
        )?;
        if !report.target_ahead.is_empty() {
            let ids: Vec<_> = report.target_ahead.iter().map(|id| show::visible(id).into_owned()).collect();
            writeln!(out, "the target holds more blocks of {} (a sync the other way brings them): {}", plural(ids.len() as u64, "session", "sessions"), ids.join(", "))?;
        }
        for c in &report.conflicts {
            writeln!(
                out,
                "conflict: session {} differs from seq {} on (source block {}, target block {}; the source holds {}, the target {}): left as it is on both sides",
                show::visible(&c.session_id),
                c.seq,
                show::visible(&c.source_block_id),
                show::visible(&c.target_block_id),
                plural(c.source_blocks, "block", "blocks"),
                c.target_blocks,
            )?;
        }
    }
    match report.conflicts.len() {
        0 => Ok(()),
        n => Err(Failure(format!(
            "{} histories that differ in the two stores (listed above); nothing of {} was copied",
            if n == 1 { "1 session has".to_string() } else { format!("{n} sessions have") },
            if n == 1 { "it" } else { "them" }
        ))),
    }
}

fn ls(store: &Store, json: bool) -> Outcome {
    let sessions = store.sessions()?;
    let mut out = std::io::stdout().lock();
    if json {
        let list: Vec<Value> = sessions
            .iter()
            .map(|s| {
                serde_json::json!({
                    "id": s.id, "title": s.title, "cwd": s.cwd, "runtimes": s.providers, "model_providers": s.model_providers,
                    "models": s.models, "blocks": s.block_count, "origin": s.origin, "created_at": s.created_at.to_rfc3339(), "updated_at": s.updated_at.to_rfc3339(),
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&list).map_err(|e| Failure(e.to_string()))?)?;
        return Ok(());
    }
    let rows: Vec<[String; 6]> = sessions
        .iter()
        .map(|s| {
            [
                show::visible(&s.id).into_owned(),
                show::clip(s.title.as_deref().unwrap_or(""), 40),
                show::visible(&s.providers.join(",")).into_owned(),
                show::clip(&s.models.join(","), 30),
                s.block_count.to_string(),
                s.updated_at.to_rfc3339()[..16].replace('T', " "),
            ]
        })
        .collect();
    let header = ["ID", "TITLE", "RUNTIMES", "MODELS", "BLOCKS", "UPDATED"];
    let mut widths = header.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 6]| -> String {
        cells.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect::<Vec<_>>().join("  ").trim_end().to_string()
    };
    writeln!(out, "{}", line(header))?;
    for row in &rows {
        writeln!(out, "{}", line([&row[0], &row[1], &row[2], &row[3], &row[4], &row[5]]))?;
    }
    Ok(())
}
