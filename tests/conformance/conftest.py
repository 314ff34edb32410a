"""Shared helpers of the conformance suite: the pinned runtime CLIs, the scripted mock model servers,
and runs of a CLI with a private HOME and every auto-update and non-essential traffic switched off."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
BIN = HERE / "node_modules" / ".bin"

# Set for every CLI run: no self-update, no telemetry or other traffic, nothing of the real user's.
QUIET_ENV = {
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


def make_project(root: Path) -> Path:
    """The project directory of the fixtures' scenarios: notes.txt and data.csv."""
    project = root / "project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "notes.txt").write_text("hello from notes\n")
    (project / "data.csv").write_text("a,b\n1,2\n")
    return project.resolve()


def cli(name: str) -> Path:
    """A pinned CLI installed by `npm ci` in tests/conformance (the test command does that)."""
    path = BIN / name
    if not path.exists():
        raise RuntimeError(f"{path} is missing: run `npm ci` in {HERE} (./scripts/test.sh does)")
    return path


@dataclass
class Mock:
    url: str
    log: Path

    def requests(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]

    def responses_requests(self) -> list[dict[str, Any]]:
        """The bodies of the Responses calls (requests that carry `input`)."""
        return [
            r["body"]
            for r in self.requests()
            if r["method"] == "POST" and isinstance(r["body"], dict) and "input" in r["body"]
        ]

    def model_requests(self) -> list[dict[str, Any]]:
        """The bodies of the model calls (requests that carry `messages`), without a harness's side
        requests (OpenCode's title generation)."""
        from mock_anthropic import is_side_request

        return [
            r["body"]
            for r in self.requests()
            if r["method"] == "POST" and isinstance(r["body"], dict) and "messages" in r["body"] and not is_side_request(r["body"])
        ]

    def gemini_requests(self) -> list[dict[str, Any]]:
        """The bodies of Gemini CLI's main-turn calls (`:streamGenerateContent` with `tools`), without
        its side requests (router, summaries, classifiers, `:countTokens`)."""
        from mock_gemini import is_main_turn

        return [r["body"] for r in self.requests() if r["method"] == "POST" and is_main_turn(r["path"], r["body"])]


def start_mock(tmp: Path, script: dict[str, Any], server: str) -> tuple[Mock, subprocess.Popen[bytes]]:
    tmp.mkdir(parents=True, exist_ok=True)
    script_file = tmp / "script.json"
    script_file.write_text(json.dumps(script))
    log = tmp / "requests.jsonl"
    port_file = tmp / "port"
    proc = subprocess.Popen(
        [sys.executable, str(HERE / server), "--script", str(script_file), "--log", str(log), "--port-file", str(port_file)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 15
    while not port_file.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            raise RuntimeError(f"the mock server did not start: {proc.stderr.read().decode() if proc.stderr else ''}")
        time.sleep(0.05)
    return Mock(f"http://127.0.0.1:{port_file.read_text()}", log), proc


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Ends a process and its group, by PID."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    if proc.stderr:
        proc.stderr.close()


def mock_factory(tmp_path: Path, server: str) -> Iterator[Any]:
    procs: list[subprocess.Popen[bytes]] = []

    def start(replies: list[list[dict[str, Any]]], name: str = "mock") -> Mock:
        mock, proc = start_mock(tmp_path / name, {"replies": replies}, server)
        procs.append(proc)
        return mock

    yield start
    for proc in procs:
        stop(proc)


@pytest.fixture
def anthropic_mock(tmp_path: Path) -> Iterator[Any]:
    """A factory: `anthropic_mock(replies)` starts a mock Messages API; all are stopped afterwards."""
    yield from mock_factory(tmp_path, "mock_anthropic.py")


@pytest.fixture
def openai_mock(tmp_path: Path) -> Iterator[Any]:
    """A factory: `openai_mock(replies)` starts a mock Responses API; all are stopped afterwards."""
    yield from mock_factory(tmp_path, "mock_openai.py")


@pytest.fixture
def gemini_mock(tmp_path: Path) -> Iterator[Any]:
    """A factory: `gemini_mock(replies)` starts a mock Gemini API (replies are lists of Gemini parts,
    mock_gemini.py); all are stopped afterwards."""
    yield from mock_factory(tmp_path, "mock_gemini.py")


@pytest.fixture
def openai_chat_mock(tmp_path: Path) -> Iterator[Any]:
    """A factory: `openai_chat_mock(replies)` starts a mock Chat Completions API (mock_openai_chat.py,
    for Pi's `openai-completions` provider); all are stopped afterwards."""
    yield from mock_factory(tmp_path, "mock_openai_chat.py")


def run_claude(
    args: list[str],
    *,
    home: Path,
    cwd: Path,
    mock: Mock,
    stdin: str | None = None,
    config_dir: Path | None = None,
    extra_env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Runs the pinned `claude` non-interactively against `mock`, with HOME=home."""
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": mock.url,
        "ANTHROPIC_API_KEY": "sk-ant-mock-key",
        "NO_PROXY": "127.0.0.1,localhost",
        **QUIET_ENV,
    }
    if config_dir is not None:
        env["CLAUDE_CONFIG_DIR"] = str(config_dir)
    env.update(extra_env or {})
    return run_cli("claude", args, env=env, cwd=cwd, stdin=stdin)


def run_cli(name: str, args: list[str], *, env: dict[str, str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Runs a pinned CLI in its own process group (killed by PID group on timeout); fails on a
    non-zero exit with the CLI's output."""
    proc = subprocess.Popen(
        [str(cli(name)), *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(stdin, timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"{name} {' '.join(args)} timed out\nstdout: {out}\nstderr: {err}") from None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    result = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    if result.returncode != 0:
        raise AssertionError(f"{name} {' '.join(args)} exited {result.returncode}\nstdout: {out[-4000:]}\nstderr: {err[-4000:]}")
    return result


CODEX_MODEL = "gpt-5.5"
CODEX_PROVIDER = "mock"


def codex_home(path: Path, mock: Mock) -> Path:
    """A CODEX_HOME whose config points the `mock` provider at the mock server, as the fixtures had."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.toml").write_text(
        f"""model = "{CODEX_MODEL}"
model_provider = "{CODEX_PROVIDER}"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false

[model_providers.{CODEX_PROVIDER}]
name = "Mock"
base_url = "{mock.url}/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"""
    )
    return path


def codex_env(home: Path, codex: Path) -> dict[str, str]:
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CODEX_HOME": str(codex),
        "TMPDIR": str(home / "tmp"),
        "LANG": "C.UTF-8",
        "MOCK_API_KEY": "mock-key",
        "NO_PROXY": "127.0.0.1,localhost",
        **QUIET_ENV,
    }


def run_codex(args: list[str], *, home: Path, codex: Path, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Runs the pinned `codex` with HOME=home and CODEX_HOME=codex."""
    return run_cli("codex", args, env=codex_env(home, codex), cwd=cwd, stdin=stdin)


def harness_free(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A request's messages without what Claude Code generates afresh for every request: the
    mid-conversation `system` messages and `<system-reminder>` text parts; `cache_control` removed;
    neighbours of one role merged."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "system":
            continue
        content = message["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        items = []
        for item in content:
            if item.get("type") == "text" and item.get("text", "").startswith("<system-reminder>"):
                continue
            item = {k: v for k, v in item.items() if k != "cache_control"}
            items.append(item)
        if out and out[-1]["role"] == message["role"]:
            out[-1]["content"].extend(items)
        else:
            out.append({"role": message["role"], "content": items})
    return [m for m in out if m["content"]]


OPENCODE_MODEL = "anthropic/claude-sonnet-4-5"


def opencode_home(home: Path, mock: Mock) -> Path:
    """A HOME whose OpenCode config points the bundled Anthropic provider at the mock, as the
    fixtures had (and an empty plugin install, so OpenCode starts no npm install)."""
    config = home / ".config" / "opencode"
    (config / "node_modules").mkdir(parents=True, exist_ok=True)
    (config / "opencode.json").write_text(json.dumps({
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "model": OPENCODE_MODEL,
        "small_model": "anthropic/claude-haiku-4-5",
        "provider": {"anthropic": {"options": {"baseURL": f"{mock.url}/v1", "apiKey": "sk-test"}}},
    }))
    plugin = {"dependencies": {"@opencode-ai/plugin": "1.18.33"}}
    (config / "package.json").write_text(json.dumps(plugin))
    (config / "package-lock.json").write_text(json.dumps({"name": "opencode", "lockfileVersion": 3, "requires": True, "packages": {"": plugin}}))
    return home


def opencode_env(home: Path) -> dict[str, str]:
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "LANG": "C.UTF-8",
        "NO_PROXY": "127.0.0.1,localhost",
        "OPENCODE_DISABLE_SHARE": "1",
        **QUIET_ENV,
    }


def run_opencode(args: list[str], *, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Runs the pinned `opencode` with HOME=home (its config from `opencode_home`)."""
    return run_cli("opencode", args, env=opencode_env(home), cwd=cwd)


# Set for every Gemini CLI and Pi run besides QUIET_ENV: no self-relaunch (the process started is the
# one talking to the model), no start-up network actions or telemetry, a plain terminal.
GEMINI_PI_QUIET_ENV = {
    "GEMINI_CLI_NO_RELAUNCH": "true",
    "PI_OFFLINE": "1",
    "PI_TELEMETRY": "0",
    "TERM": "dumb",
}

GEMINI_MODEL = "gemini-3.1-pro-preview"

# ~/.gemini/settings.json as in the fixtures' runs (shared/formats/gemini-cli.md §1.2): no updates, no
# usage statistics or telemetry, API-key auth, no folder trust prompt, and no session cleanup (with
# the default retention a later run deletes resumed sessions).
GEMINI_SETTINGS: dict[str, Any] = {
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False, "sessionRetention": {"enabled": False}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
}


def gemini_home(home: Path, mock: Mock) -> Path:
    """A HOME with Gemini CLI's settings (GEMINI_SETTINGS). The mock is reached through the env
    (`gemini_env`), so nothing in the file depends on it."""
    config = home / ".gemini"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(json.dumps(GEMINI_SETTINGS, indent=2) + "\n")
    return home


def gemini_env(home: Path, mock: Mock) -> dict[str, str]:
    """The environment of a `gemini` run against `mock` with HOME=home."""
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "LANG": "C.UTF-8",
        "GEMINI_API_KEY": "mock-key",
        "GOOGLE_GEMINI_BASE_URL": mock.url,
        "NO_PROXY": "127.0.0.1,localhost",
        **QUIET_ENV,
        **GEMINI_PI_QUIET_ENV,
    }


def run_gemini(
    args: list[str],
    *,
    home: Path,
    cwd: Path,
    mock: Mock,
    stdin: str | None = None,
    extra_env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Runs the pinned `gemini` with HOME=home against `mock` (writes the settings of `gemini_home`
    first when HOME has none). Pass `--skip-trust`, and `-m` to skip the model router."""
    if not (home / ".gemini" / "settings.json").exists():
        gemini_home(home, mock)
    env = gemini_env(home, mock)
    env.update(extra_env or {})
    return run_cli("gemini", args, env=env, cwd=cwd, stdin=stdin)


def gemini_short_name(cwd: Path) -> str:
    """Gemini CLI's slug of a project root's basename (before any `-1`, `-2` for a clash)."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]", "-", Path(cwd).name.lower())).strip("-") or "project"


def gemini_project_hash(cwd: Path) -> str:
    """A session header's `projectHash`: sha256 of the absolute project root."""
    return hashlib.sha256(str(Path(cwd).resolve()).encode()).hexdigest()


def gemini_project_dir(home: Path, cwd: Path) -> Path:
    """`~/.gemini/tmp/<short>` of a project, registering the project as the CLI does when it is not yet
    (`projects.json` maps the root to its short name; `.project_root` markers in `tmp/<short>/` and
    `history/<short>/` prove the ownership)."""
    root = str(Path(cwd).resolve())
    gemini = home / ".gemini"
    gemini.mkdir(parents=True, exist_ok=True)
    registry = gemini / "projects.json"
    projects: dict[str, str] = {}
    if registry.exists():
        projects = json.loads(registry.read_text()).get("projects", {})
    short = projects.get(root)
    if short is None:
        base = gemini_short_name(Path(root))
        taken = {v for k, v in projects.items() if k != root}
        short, n = base, 0
        while short in taken or _owned_by_other(gemini, short, root):
            n += 1
            short = f"{base}-{n}"
        projects[root] = short
        registry.write_text(json.dumps({"projects": projects}, indent=2))
    for kind in ("tmp", "history"):
        folder = gemini / kind / short
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ".project_root").write_text(root)
    return gemini / "tmp" / short


def _owned_by_other(gemini: Path, short: str, root: str) -> bool:
    marker = gemini / "tmp" / short / ".project_root"
    return marker.exists() and marker.read_text().strip() != root


def gemini_sessions(home: Path) -> list[Path]:
    """Every main session file the CLI wrote under HOME (`~/.gemini/tmp/<short>/chats/session-*`)."""
    return sorted((home / ".gemini" / "tmp").glob("*/chats/session-*.json*"))


def place_gemini_session(home: Path, cwd: Path, session_id: str, lines: Sequence[dict[str, Any] | str]) -> Path:
    """Writes a session for `gemini --resume <session_id>` run in `cwd` (route B of
    shared/formats/gemini-cli.md; settings from `gemini_home`, whose retention off keeps the file):

    - the project registered (`projects.json`, `.project_root` markers) and its `tmp/<short>/chats/`;
    - the file `session-<YYYY-MM-DDTHH-MM>-<first 8 of session_id>.jsonl`, its minute the header's
      `startTime` but never the current one: a resume first creates `session-<now minute>-<id8>.jsonl`,
      which in the same minute would be this file and wipe its messages;
    - a header `{sessionId, projectHash (sha256 of the cwd), startTime, lastUpdated, kind:"main"}`
      first, unless `lines` starts with one (a record with `sessionId` and `projectHash`);
    - then `lines` as given (records, or already serialised lines).
    """
    now = datetime.now(timezone.utc)
    records = [json.loads(line) if isinstance(line, str) else line for line in lines]
    if not (records and "sessionId" in records[0] and "projectHash" in records[0]):
        stamps = [r["timestamp"] for r in records if isinstance(r.get("timestamp"), str)]
        start = stamps[0] if stamps else _iso(now - timedelta(minutes=5))
        header = {
            "sessionId": session_id,
            "projectHash": gemini_project_hash(cwd),
            "startTime": start,
            "lastUpdated": stamps[-1] if stamps else start,
            "kind": "main",
        }
        records.insert(0, header)
    try:
        started = datetime.fromisoformat(str(records[0].get("startTime")).replace("Z", "+00:00"))
    except ValueError:
        started = now
    if started.tzinfo is None:
        started = started.replace(tzinfo=timezone.utc)
    latest = now - timedelta(minutes=1)
    minute = min(started, latest).strftime("%Y-%m-%dT%H-%M")
    chats = gemini_project_dir(home, cwd) / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    path = chats / f"session-{minute}-{session_id[:8]}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records), encoding="utf-8")
    return path


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def load_gemini_session(path: Path) -> dict[str, Any]:
    """A Gemini CLI session file read with the CLI's loader rules (gemini-cli.md §3.1): headers and
    `$set` merge into the metadata (`$set.messages` replaces the list), a message id seen again replaces
    the earlier version in place, `$rewindTo` drops that message and all after it. Returns the
    metadata with `messages`."""
    meta: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        if isinstance(record.get("$rewindTo"), str):
            ids = list(messages)
            cut = ids.index(record["$rewindTo"]) if record["$rewindTo"] in ids else 0
            messages = {k: messages[k] for k in ids[:cut]}
        elif isinstance(record.get("id"), str):
            messages[record["id"]] = record
        elif isinstance(record.get("$set"), dict):
            update = dict(record["$set"])
            if isinstance(update.get("messages"), list):
                messages = {m["id"]: m for m in update.pop("messages")}
            meta.update(update)
        elif isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str):
            header = dict(record)
            for m in header.pop("messages", None) or []:
                messages[m["id"]] = m
            meta.update(header)
    if not meta and path.suffix == ".json":
        return dict(json.loads(path.read_text()))
    return {**meta, "messages": list(messages.values())}


PI_ANTHROPIC_PROVIDER = "mockant"
PI_ANTHROPIC_MODEL = "mock-claude"
PI_OPENAI_PROVIDER = "mockoai"
PI_OPENAI_MODEL = "mock-gpt"


def pi_home(home: Path, anthropic_mock_url: str, openai_mock_url: str | None = None) -> Path:
    """A HOME whose `~/.pi/agent/models.json` has the fixtures' providers: `mockant` (`anthropic-messages`,
    model `mock-claude`) at `anthropic_mock_url` (a mock_anthropic.py server), and with
    `openai_mock_url` (a mock_openai_chat.py server) `mockoai` (`openai-completions`, model
    `mock-gpt`). `settings.json` makes `mockant/mock-claude` the default model, so a Pi started without
    `--provider/--model` talks to the mock too.

    No `openai-responses` provider: Pi's Responses client builds its blocks from
    `response.output_item.added` and the text/reasoning deltas, which mock_openai.py (Codex's mock,
    `output_item.done` events only) does not send, so every reply would come out empty."""
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    providers: dict[str, Any] = {
        PI_ANTHROPIC_PROVIDER: {
            "baseUrl": anthropic_mock_url.rstrip("/"),
            "api": "anthropic-messages",
            "apiKey": "dummy",
            "models": [
                {"id": PI_ANTHROPIC_MODEL, "name": "Mock Claude", "reasoning": True, "input": ["text", "image"], "contextWindow": 200000, "maxTokens": 8192}
            ],
        }
    }
    if openai_mock_url is not None:
        providers[PI_OPENAI_PROVIDER] = {
            "baseUrl": openai_mock_url.rstrip("/") + "/v1",
            "api": "openai-completions",
            "apiKey": "dummy",
            "compat": {"supportsDeveloperRole": False},
            "models": [
                {"id": PI_OPENAI_MODEL, "name": "Mock GPT", "reasoning": True, "input": ["text", "image"], "contextWindow": 128000, "maxTokens": 4096}
            ],
        }
    (agent / "models.json").write_text(json.dumps({"providers": providers}, indent=2) + "\n")
    settings = agent / "settings.json"
    if not settings.exists():
        settings.write_text(json.dumps({"defaultProvider": PI_ANTHROPIC_PROVIDER, "defaultModel": PI_ANTHROPIC_MODEL}, indent=2) + "\n")
    return home


def pi_env(home: Path) -> dict[str, str]:
    """The environment of a `pi` run with HOME=home (its providers from `pi_home`)."""
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "LANG": "C.UTF-8",
        "NO_PROXY": "127.0.0.1,localhost",
        **QUIET_ENV,
        **GEMINI_PI_QUIET_ENV,
    }


def run_pi(
    args: list[str],
    *,
    home: Path,
    cwd: Path,
    stdin: str | None = None,
    extra_env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Runs the pinned `pi` with HOME=home (its config from `pi_home`)."""
    env = pi_env(home)
    env.update(extra_env or {})
    return run_cli("pi", args, env=env, cwd=cwd, stdin=stdin)


def pi_session_dir(home: Path, cwd: Path) -> Path:
    """Where Pi puts the new sessions of `cwd`: `~/.pi/agent/sessions/--<cwd, "/" "\\" ":" → "-">--/`."""
    slug = re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", str(Path(cwd).resolve())))
    return home / ".pi" / "agent" / "sessions" / f"--{slug}--"


def assert_gone(pid: int, timeout: float = 15) -> None:
    """Neither the process nor anything of its group runs any more (a zombie counts as running)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return
        assert time.monotonic() < deadline, f"the process group {pid} is still there"
        time.sleep(0.1)


def processes_with_home(home: Path, timeout: float = 5) -> list[int]:
    """The PIDs of processes still running with HOME=home (a CLI run's leftovers), after waiting up to
    `timeout` seconds for them to go; zombies do not count."""
    needle = f"HOME={home}".encode()
    deadline = time.monotonic() + timeout
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except (OSError, IndexError):
                continue
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def runtime_env(runtime: str, home: Path, mock: Mock) -> dict[str, str]:
    """What a runtime process needs besides PATH and HOME to run against `mock` with its files under
    `home` (the config files are written there)."""
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env = {"TMPDIR": str(home / "tmp"), "NO_PROXY": "127.0.0.1,localhost", **QUIET_ENV}
    if runtime == "claude-code":
        env.update(ANTHROPIC_BASE_URL=mock.url, ANTHROPIC_API_KEY="sk-ant-mock-key")
    elif runtime == "codex":
        codex = codex_home(home / ".codex", mock)
        env.update({k: v for k, v in codex_env(home, codex).items() if k not in ("PATH", "HOME", "LANG")})
    elif runtime == "gemini-cli":
        gemini_home(home, mock)
        env.update({k: v for k, v in gemini_env(home, mock).items() if k not in ("PATH", "HOME", "LANG")})
    elif runtime == "pi":
        pi_home(home, mock.url)
        env.update({k: v for k, v in pi_env(home).items() if k not in ("PATH", "HOME", "LANG")})
    else:
        opencode_home(home, mock)
        env.update({k: v for k, v in opencode_env(home).items() if k not in ("PATH", "HOME", "LANG")})
    return env


# The library under test, in each language: a job (drivers/README.md) goes in, its result comes out.
LANGUAGES = ["python", "node", "rust"]


def cargo_executable(package: str, kind: str, name: str) -> Path:
    """Builds a target of the workspace (`kind` is `example` or `bin`) and returns its executable."""
    out = subprocess.run(
        ["cargo", "build", "-q", "-p", package, f"--{kind}", name, "--message-format=json"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"cannot build {name}:\n{out.stderr}")
    for line in out.stdout.splitlines():
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message.get("executable") and message["target"]["name"] == name:
            return Path(message["executable"])
    raise RuntimeError(f"cargo built no {name} executable")


def _rust_driver() -> Path:
    """Builds the Rust driver (an example of the core crate) and returns its executable."""
    return cargo_executable("sna-history", "example", "conformance_job")


def _run_driver(argv: list[str], job: dict[str, Any], tmp: Path) -> dict[str, Any]:
    path = tmp / "job.json"
    path.write_text(json.dumps(job))
    out = subprocess.run([*argv, str(path)], capture_output=True, text=True, timeout=120, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({out.returncode}): {out.stderr.strip()}")
    result: dict[str, Any] = json.loads(out.stdout)
    return result


@pytest.fixture(scope="session")
def drivers() -> dict[str, Any]:
    """`drivers[language](job, tmp)`: the job's result from that language's binding."""
    from drivers.job import run_job

    built: dict[str, Path] = {}

    def rust(job: dict[str, Any], tmp: Path) -> dict[str, Any]:
        if "exe" not in built:
            built["exe"] = _rust_driver()
        return _run_driver([str(built["exe"])], job, tmp)

    return {
        "python": lambda job, tmp: run_job(job),
        "node": lambda job, tmp: _run_driver(["node", str(HERE / "drivers" / "job.mjs")], job, tmp),
        "rust": rust,
    }


# Replies of the host scenarios (test_host.py, test_acp.py).
RED_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg=="
)
MODEL = {"claude-code": "claude-opus-5-5", "codex": None, "opencode": "anthropic/claude-sonnet-4-5"}


def text_reply(runtime: str, text: str) -> list[dict[str, Any]]:
    if runtime == "codex":
        return [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}], "phase": "final_answer"}]
    return [{"type": "text", "text": text}]


def tool_reply(runtime: str, call_id: str, command: str) -> list[dict[str, Any]]:
    if runtime == "codex":
        return [{"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": command}), "call_id": call_id}]
    name = "Bash" if runtime == "claude-code" else "bash"
    return [{"type": "tool_use", "id": call_id, "name": name, "input": {"command": command, "description": "Run it"}}]


def held(path: Path, items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"wait_for": str(path), "items": items}


def said(request: dict[str, Any]) -> str:
    return json.dumps(request, ensure_ascii=False)


def asked_and_answered(agent: Any, text: str, allow: bool) -> tuple[dict[str, Any], Any]:
    """Sends `text` on a thread, waits for the one `permission_needed` event the turn raises,
    answers it with `allow`, and gives the event's data and the turn (its `send` result)."""
    since = agent.status().cursor
    turns: list[Any] = []
    worker = threading.Thread(target=lambda: turns.append(agent.send(text, timeout=120)))
    worker.start()
    asked: list[Any] = []
    deadline = time.monotonic() + 60
    while not asked and time.monotonic() < deadline:
        time.sleep(0.05)
        asked = [e for e in agent.events(since=since) if e.type == "permission_needed"]
    assert len(asked) == 1, [e.type for e in agent.events(since=since)]
    agent.answer_permission(asked[0].data["id"], allow)
    worker.join(120)
    assert turns, "the turn did not end"
    return asked[0].data, turns[0]
