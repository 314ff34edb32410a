//! Live drivers: a runtime's long-lived mode (Claude Code's stream-json on stdin, Codex's
//! app-server, OpenCode's HTTP server), one process per running session. Each runtime's driver
//! lives in its folder (`native/<runtime>/live.rs`) and reports what happens as [`Signal`]s; the
//! host (`crate::host`) records them. What they share is here: the process group every runtime
//! runs in, and how it ends.
//!
//! Every process is started in its own process group, with `PR_SET_PDEATHSIG` so that it dies
//! with the host process, from one long-lived thread (the death signal follows the thread that
//! forked, so a caller's short-lived thread must not be that thread). Stopping is SIGTERM to the
//! group, then SIGKILL after a grace period, then reaping the leader: no zombie and no orphan.
//! A process still running when the host process exits normally (Python or Node exiting without
//! closing the host) is killed by an `atexit` handler.

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::{Block, Runtime};

/// How long a stopped process has between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(3);

/// How a status block begins that records a runtime's refusal to compact, followed by the
/// runtime's reason: what the host reports when asked to compact and nothing was compacted.
pub(crate) const COMPACTION_FAILED: &str = "compaction failed: ";

/// The status line of what a runtime's own command printed (Claude Code's `/compact`
/// answering "Error: No messages to compact"): `/command: output`. No model said it, so it is
/// bookkeeping, never an answer.
pub(crate) fn command_line(command: &str, output: &str) -> String {
    format!("/{command}: {}", output.trim())
}

/// What `command` printed, from a status line made by [`command_line`].
pub(crate) fn command_output<'a>(line: &'a str, command: &str) -> Option<&'a str> {
    line.strip_prefix('/')?.strip_prefix(command)?.strip_prefix(": ")
}

/// What a driver needs to start its runtime.
#[derive(Debug, Clone)]
pub struct LiveSpec {
    /// The runtime's executable.
    pub program: PathBuf,
    /// The working directory.
    pub cwd: PathBuf,
    /// The whole environment of the process.
    pub env: BTreeMap<String, String>,
    /// The model to run, when chosen.
    pub model: Option<String>,
    /// The permission mode (`default`, `acceptEdits`, `bypassPermissions`, `plan`), when chosen.
    pub permission_mode: Option<String>,
    /// More arguments for the runtime's command line.
    pub args: Vec<String>,
    /// The native thread to continue (a Claude Code session id, a Codex thread id, an OpenCode
    /// session id); none for a new one.
    pub resume: Option<String>,
    /// Codex: the rollout file of the thread to continue.
    pub resume_path: Option<PathBuf>,
    /// True: the runtime's requests to run a tool are reported as [`Signal::Permission`] and wait
    /// for [`Live::answer_permission`]; false: the permission mode's own policy answers them.
    pub ask_permissions: bool,
}

/// A runtime asking whether one of its tools may run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PermissionRequest {
    /// The driver's id of the request (the one to answer).
    pub id: String,
    /// The tool (`Bash`, `commandExecution`, `bash`, …), as the runtime names it.
    pub tool: String,
    /// What the tool would be called with, as the runtime gives it.
    pub input: Value,
    /// The tool call's id, when the runtime names it (the `call_id` of its tool_use block).
    pub call_id: Option<String>,
    /// A line for a person: what would run.
    pub title: String,
}

/// An image of a user message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Its media type (`image/png`).
    pub mime: String,
    /// Its bytes.
    pub data: Vec<u8>,
}

impl Image {
    /// The image as a `data:` URL.
    pub fn data_url(&self) -> String {
        crate::native::common::data_url(&self.mime, &self.data)
    }
    /// The bytes in base64.
    pub fn base64(&self) -> String {
        use base64::Engine as _;
        crate::native::common::B64.encode(&self.data)
    }
    /// The image as an embed of a user block.
    pub fn embed(&self) -> crate::model::Embed {
        crate::model::Embed::from_bytes(self.mime.clone(), None, self.data.clone())
    }

    /// Checks the image before it reaches a runtime: it needs an `image/…` type and some bytes
    /// (every runtime sends it to the model as an image). The error names the field, `mime` or
    /// `data`.
    pub fn check(&self) -> crate::Result<()> {
        match self.problem() {
            Some((field, message)) => Err(crate::Error::invalid_field(field, message)),
            None => Ok(()),
        }
    }

    /// [`Image::check`] for each image of a message; the error names `images[i].mime` or
    /// `images[i].data`.
    pub fn check_all(images: &[Image]) -> crate::Result<()> {
        match images.iter().enumerate().find_map(|(i, image)| Some((i, image.problem()?))) {
            Some((i, (field, message))) => Err(crate::Error::invalid_field(format!("images[{i}].{field}"), message)),
            None => Ok(()),
        }
    }

    fn problem(&self) -> Option<(&'static str, String)> {
        let subtype = self.mime.strip_prefix("image/").unwrap_or("");
        if subtype.is_empty() || !subtype.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) {
            return Some(("mime", format!("{:?} is not an image type (such as image/png or image/jpeg)", self.mime)));
        }
        if self.data.is_empty() {
            return Some(("data", "an image needs its bytes".to_string()));
        }
        None
    }
}

/// How a turn ended, as the runtime said.
#[derive(Debug, Clone, Default)]
pub struct TurnEnd {
    /// The usage the runtime reported for the turn.
    pub usage: Option<Value>,
    /// The error the turn ended with.
    pub error: Option<String>,
    /// True when the turn was interrupted.
    pub interrupted: bool,
}

/// What a driver reports, in the order it happened.
#[derive(Debug)]
pub enum Signal {
    /// A native event whose blocks the adapter's live capture makes (`Session::ingest`).
    Event(Value),
    /// Blocks the driver made itself (Codex: the lines its rollout gained).
    Blocks(Vec<Block>),
    /// Text arriving (not recorded; for live subscribers).
    Delta { thinking: bool, text: String },
    /// The runtime's own id of the thread.
    NativeId(String),
    /// The runtime asks whether a tool may run (only with [`LiveSpec::ask_permissions`]); the
    /// tool waits until [`Live::answer_permission`] is called.
    Permission(PermissionRequest),
    /// The turn ended.
    TurnEnd(TurnEnd),
    /// Every block recorded so far is in the runtime's own thread: sent by a driver that records
    /// from the runtime's file, once it read the file to its end after the process died in a
    /// turn, so that the host goes on with the runtime's own resume, as after a turn's end.
    Synced,
    /// The process is gone (reaped), with its exit code and the end of what it wrote on stderr.
    Exited { code: Option<i32>, stderr: String },
}

/// Where a driver's signals go; called from the driver's reader threads.
pub type Sink = Arc<dyn Fn(Signal) + Send + Sync>;

/// A running runtime process.
pub trait Live: Send {
    /// The process id (the process group's id).
    fn pid(&self) -> u32;
    /// Starts a turn with this user message.
    fn send(&mut self, text: &str, images: &[Image]) -> Result<()>;
    /// Stops the running turn.
    fn interrupt(&mut self) -> Result<()>;
    /// Makes the next turns use `model`.
    fn set_model(&mut self, model: &str) -> Result<()>;
    /// Answers the permission request `id` (see [`Signal::Permission`]): the tool runs or is
    /// refused.
    fn answer_permission(&mut self, id: &str, allow: bool) -> Result<()> {
        let _ = allow;
        Err(Error::NotFound(format!("no permission request {id:?} waits for an answer")))
    }
    /// Asks the runtime to compact its conversation with its own mechanism (with `instructions`
    /// for the summary, where it takes them); the compaction runs as a turn, ended by
    /// [`Signal::TurnEnd`], and what the runtime records of it is captured as for any turn. A
    /// runtime that cannot compact on request keeps the default, `UNSUPPORTED`. A runtime that
    /// declines (nothing to compact) is captured as a status block `compaction failed: ` and why,
    /// never as an answer.
    fn compact(&mut self, instructions: Option<&str>) -> Result<()> {
        let _ = instructions;
        Err(Error::Unsupported("this runtime cannot be asked to compact its conversation".into()))
    }
    /// Ends the process: SIGTERM, SIGKILL after the grace period, reaped.
    fn stop(&mut self);
}

/// A spawned runtime process and its process group.
pub struct Group {
    pid: i32,
    child: Mutex<Child>,
    status: Mutex<Option<ExitStatus>>,
    stderr_tail: Arc<Mutex<Vec<u8>>>,
}

/// The pipes of a spawned process.
pub struct Pipes {
    pub stdin: Option<ChildStdin>,
    pub stdout: Option<ChildStdout>,
}

fn live_groups() -> &'static Mutex<HashSet<i32>> {
    static GROUPS: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
    GROUPS.get_or_init(|| {
        extern "C" fn kill_all() {
            if let Ok(groups) = live_groups().lock() {
                for &pid in groups.iter() {
                    // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
                    unsafe { libc::kill(-pid, libc::SIGKILL) };
                }
            }
        }
        // SAFETY: registers a plain function; it only sends signals.
        unsafe { libc::atexit(kill_all) };
        Mutex::new(HashSet::new())
    })
}

type SpawnRequest = (Command, mpsc::Sender<std::io::Result<Child>>);

/// The one long-lived thread every runtime process is forked from (see the module docs).
fn spawner() -> &'static Mutex<mpsc::Sender<SpawnRequest>> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<SpawnRequest>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        std::thread::Builder::new()
            .name("sna-spawner".into())
            .spawn(move || {
                for (mut command, reply) in rx {
                    let _ = reply.send(command.spawn());
                }
            })
            .expect("cannot start the spawner thread");
        Mutex::new(tx)
    })
}

/// Starts `spec.program` with `args` in its own process group, with `spec`'s cwd and environment
/// (nothing else inherited), stdin and stdout piped, stderr kept (its last 16 KiB). A missing
/// program is `NOT_FOUND` naming the npm `package` it comes in.
pub fn spawn(runtime: Runtime, package: &str, spec: &LiveSpec, args: &[String]) -> Result<(Arc<Group>, Pipes)> {
    let mut command = Command::new(&spec.program);
    command
        .args(args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(&spec.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
            Ok(())
        });
    }
    let (tx, rx) = mpsc::channel();
    let groups = live_groups();
    spawner().lock().map_err(|_| Error::Internal("the spawner is poisoned".into()))?.send((command, tx)).map_err(|_| Error::Internal("the spawner thread is gone".into()))?;
    let mut child = rx.recv().map_err(|_| Error::Internal("the spawner thread is gone".into()))?.map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::NotFound(format!(
                "cannot run {} ({}): no such program; install it with `npm install -g {}` or name its path in `bins`",
                runtime.display_name(),
                spec.program.display(),
                package
            ))
        } else {
            Error::Io { context: format!("cannot run {}", spec.program.display()), source: e }
        }
    })?;
    let pid = child.id() as i32;
    groups.lock().map_err(|_| Error::Internal("the process list is poisoned".into()))?.insert(pid);
    let stderr_tail = Arc::new(Mutex::new(Vec::new()));
    if let Some(stderr) = child.stderr.take() {
        keep_tail(stderr, stderr_tail.clone());
    }
    let pipes = Pipes { stdin: child.stdin.take(), stdout: child.stdout.take() };
    Ok((Arc::new(Group { pid, child: Mutex::new(child), status: Mutex::new(None), stderr_tail }), pipes))
}

fn keep_tail(mut stderr: ChildStderr, tail: Arc<Mutex<Vec<u8>>>) {
    let _ = std::thread::Builder::new().name("sna-stderr".into()).spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            if let Ok(mut tail) = tail.lock() {
                tail.extend_from_slice(&buf[..n]);
                let len = tail.len();
                if len > 16384 {
                    tail.drain(..len - 16384);
                }
            }
        }
    });
}

impl Group {
    /// The process id, which is also the group id.
    pub fn pid(&self) -> u32 {
        self.pid as u32
    }

    /// The end of what the process wrote on stderr.
    pub fn stderr_tail(&self) -> String {
        self.stderr_tail.lock().map(|t| String::from_utf8_lossy(&t).into_owned()).unwrap_or_default()
    }

    /// True once the leader has exited (it may not be reaped yet).
    fn has_exited(&self) -> bool {
        if self.status.lock().map(|s| s.is_some()).unwrap_or(true) {
            return true;
        }
        // SAFETY: waitid with WNOWAIT only inspects; the info struct is ours.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let r = libc::waitid(libc::P_PID, self.pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT);
            r != 0 || info.si_pid() != 0
        }
    }

    /// Signals the whole group while its leader is not reaped (so the id cannot be another's).
    fn signal(&self, signal: i32) {
        if let Ok(status) = self.status.lock() {
            if status.is_none() {
                // SAFETY: kill(2) on our own, unreaped process group.
                unsafe { libc::kill(-self.pid, signal) };
            }
        }
    }

    /// Reaps the leader once it has exited: kills what is left of its group first (a launcher's
    /// child), then collects the status. None while it runs.
    pub fn try_reap(&self) -> Option<ExitStatus> {
        if let Some(status) = *self.status.lock().ok()? {
            return Some(status);
        }
        if !self.has_exited() {
            return None;
        }
        self.signal(libc::SIGKILL);
        let mut child = self.child.lock().ok()?;
        let mut status = self.status.lock().ok()?;
        if status.is_none() {
            if let Ok(Some(s)) = child.try_wait() {
                *status = Some(s);
                if let Ok(mut groups) = live_groups().lock() {
                    groups.remove(&self.pid);
                }
            }
        }
        *status
    }

    /// Waits until the leader has exited and is reaped, at most `timeout`.
    pub fn wait(&self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.try_reap() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// SIGTERM to the group, SIGKILL after `grace`, then reaped.
    pub fn stop(&self, grace: Duration) {
        if self.try_reap().is_some() {
            return;
        }
        self.signal(libc::SIGTERM);
        if self.wait(grace).is_some() {
            return;
        }
        self.signal(libc::SIGKILL);
        self.wait(Duration::from_secs(10));
    }

    /// Kills the group at once (SIGKILL), then reaps it.
    pub fn kill(&self) {
        self.signal(libc::SIGKILL);
        self.wait(Duration::from_secs(10));
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.try_reap().is_none() {
            self.kill();
        }
    }
}

/// Reads `stdout` line by line on a thread named `name`, calling `line` for each (without the
/// newline); at the end of the output, waits for the process to exit and calls `end` with the
/// group.
pub fn read_lines(
    name: &str,
    stdout: ChildStdout,
    group: Arc<Group>,
    mut line: impl FnMut(&str) + Send + 'static,
    end: impl FnOnce(&Group) + Send + 'static,
) -> Result<()> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut buf = String::new();
            loop {
                buf.clear();
                match reader.read_line(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => line(buf.trim_end_matches(['\n', '\r'])),
                }
            }
            group.wait(Duration::from_secs(3600));
            end(&group);
        })
        .map(|_| ())
        .map_err(|e| Error::Io { context: "cannot start a reader thread".into(), source: e })
}

/// Writes one JSON line to a shared stdin.
pub fn write_line(stdin: &Mutex<Option<ChildStdin>>, value: &Value) -> Result<()> {
    let mut text = serde_json::to_string(value).map_err(|e| Error::Internal(format!("cannot write a line: {e}")))?;
    text.push('\n');
    let mut guard = stdin.lock().map_err(|_| Error::Internal("stdin is poisoned".into()))?;
    let Some(pipe) = guard.as_mut() else { return Err(Error::Conflict("the runtime process has ended".into())) };
    pipe.write_all(text.as_bytes()).and_then(|_| pipe.flush()).map_err(|e| Error::Io { context: "cannot write to the runtime process".into(), source: e })
}

/// The `Exited` signal of a group that ended.
pub fn exited(group: &Group) -> Signal {
    let code = group.try_reap().and_then(|s| {
        use std::os::unix::process::ExitStatusExt;
        s.code().or_else(|| s.signal().map(|sig| 128 + sig))
    });
    Signal::Exited { code, stderr: group.stderr_tail() }
}

/// Requests answered by id over a line protocol: each waiter gets the reply with its id.
#[derive(Default)]
pub struct Pending {
    waiting: Mutex<BTreeMap<String, mpsc::Sender<Value>>>,
}

impl Pending {
    /// Registers a waiter for `id`.
    pub fn expect(&self, id: &str) -> mpsc::Receiver<Value> {
        let (tx, rx) = mpsc::channel();
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.insert(id.to_string(), tx);
        }
        rx
    }
    /// Hands `reply` to the waiter of `id`; false when nobody waits for it.
    pub fn answer(&self, id: &str, reply: Value) -> bool {
        let waiter = self.waiting.lock().ok().and_then(|mut w| w.remove(id));
        waiter.is_some_and(|tx| tx.send(reply).is_ok())
    }
    /// Wakes every waiter with nothing (the process ended).
    pub fn fail_all(&self) {
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.clear();
        }
    }
}

/// Waits for the reply on `rx` at most `timeout`; `what` names the request in errors, which end
/// with the last lines the process wrote on stderr when it exited first.
pub fn await_reply(rx: &mpsc::Receiver<Value>, timeout: Duration, runtime: Runtime, group: &Group, what: &str) -> Result<Value> {
    match rx.recv_timeout(timeout) {
        Ok(value) => Ok(value),
        Err(mpsc::RecvTimeoutError::Timeout) => Err(Error::Timeout(format!("{} did not answer {what} within {}s", runtime.display_name(), timeout.as_secs()))),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Err(Error::Runtime(format!("{} exited before it answered {what}: {}", runtime.display_name(), last_lines(&group.stderr_tail()))))
        }
    }
}

/// The last lines of a process's stderr, for an error message.
pub fn last_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(5)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::Image;

    fn image(mime: &str, data: &[u8]) -> Image {
        Image { mime: mime.into(), data: data.to_vec() }
    }

    #[test]
    fn images_need_an_image_type_and_bytes() {
        assert!(Image::check_all(&[image("image/png", b"png"), image("image/svg+xml", b"<svg/>")]).is_ok());
        for (images, field) in [
            (vec![image("image/png", b"png"), image("application/pdf", b"%PDF")], "images[1].mime"),
            (vec![image("image/", b"x")], "images[0].mime"),
            (vec![image("image/png; charset=x", b"x")], "images[0].mime"),
            (vec![image("image/jpeg", b"")], "images[0].data"),
        ] {
            let err = Image::check_all(&images).unwrap_err();
            assert_eq!(err.location().and_then(|l| l.field.as_deref()), Some(field), "{err}");
        }
        let err = image("text/plain", b"x").check().unwrap_err();
        assert_eq!(err.location().and_then(|l| l.field.as_deref()), Some("mime"), "{err}");
        assert!(err.to_string().contains("\"text/plain\" is not an image type"), "{err}");
    }
}
