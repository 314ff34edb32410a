"""A session switched to another runtime: imported, written for the target by one language's driver
(`prepare_resume`) and resumed there by the real CLI against a mock; and the target API's rules the
request must follow (test_switch.py, test_compaction.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .common import cli, make_project
from .runtimes import (
    GEMINI_FLAGS,
    GEMINI_MODEL,
    PI_ANTHROPIC_MODEL,
    COPILOT_MODEL,
    PI_ANTHROPIC_PROVIDER,
    QWEN_MODEL,
    codex_home,
    gemini_home,
    opencode_home,
    pi_home,
    run_claude,
    run_codex,
    run_copilot,
    run_gemini,
    run_opencode,
    run_pi,
    run_qwen,
)

TARGETS = ["claude-code", "codex", "opencode", "gemini-cli", "pi", "qwen-code", "copilot-cli"]
TARGET_MODEL = {"claude-code": "claude-opus-5-5", "codex": "gpt-5.5", "opencode": "claude-sonnet-4-5", "gemini-cli": GEMINI_MODEL, "pi": PI_ANTHROPIC_MODEL,
                "qwen-code": QWEN_MODEL, "copilot-cli": COPILOT_MODEL}
# What a mock Chat Completions API answers a side request (no tools: Qwen Code's titles) with.
SIDE_TEXT = "Mock title"
# The prompt of every resume.
PROMPT = "Next question, please."


def origin_file(runtime: str, folder: Path) -> Path:
    if runtime == "opencode":
        return folder / "export.json"
    if runtime == "codex":
        return next(folder.glob("rollout-*.jsonl"))
    if runtime == "gemini-cli":
        return next(folder.glob("session-*.jsonl"))
    if runtime == "copilot-cli":
        return next(folder.glob("*.events.jsonl"))
    return next(p for p in folder.glob("*.jsonl") if p.name not in ("events.jsonl", "requests.jsonl"))


def check_gemini_rules(contents: list[dict[str, Any]], cli_duplicates: bool = False) -> None:
    """The Gemini API's rules on what was sent: user first and last, roles alternating, every
    functionCall of a model turn answered by exactly one functionResponse with its id in the next
    (user) turn, no functionResponse without its call. With `cli_duplicates`, a response repeated
    word for word is counted once: the Gemini CLI's own defect when it resumes a log it wrote
    (gemini-cli.md §4.4: each result from `toolCalls[].result` and again from the user record), which
    a log imported from the CLI and exported back keeps, being the same log."""
    assert contents[0]["role"] == "user" and contents[-1]["role"] == "user"
    open_calls: list[str] = []
    for i, turn in enumerate(contents):
        if i:
            assert turn["role"] != contents[i - 1]["role"], f"turn {i}: two {turn['role']} turns in a row"
        parts = [p for p in turn["parts"] if "functionResponse" in p]
        if cli_duplicates:
            parts = [p for k, p in enumerate(parts) if p not in parts[:k]]
        responses = [p["functionResponse"]["id"] for p in parts]
        assert sorted(responses) == sorted(open_calls), f"turn {i}: responses {responses} for calls {open_calls}"
        open_calls = [p["functionCall"]["id"] for p in turn["parts"] if "functionCall" in p] if turn["role"] == "model" else []
    assert not open_calls


def check_anthropic_rules(messages: list[dict[str, Any]]) -> None:
    """The Messages API's rules on what was sent: user first and last, every tool_use answered by
    a tool_result at the start of the next (user) message, no tool_result without its tool_use,
    thinking only with a signature. Claude Code's own mid-conversation `system` entries are left
    aside (the wire format it speaks allows them)."""
    messages = [m for m in messages if m["role"] != "system"]
    assert messages[0]["role"] == "user" and messages[-1]["role"] == "user"
    open_calls: list[str] = []
    for i, message in enumerate(messages):
        content = message["content"] if isinstance(message["content"], list) else [{"type": "text", "text": message["content"]}]
        results = [c["tool_use_id"] for c in content if c["type"] == "tool_result"]
        if open_calls:
            assert message["role"] == "user", f"message {i}: the calls {open_calls} are not answered next"
            leading = [c["tool_use_id"] for c in content[: len(results)] if c["type"] == "tool_result"]
            assert sorted(leading) == sorted(open_calls), f"message {i}: results {leading} for calls {open_calls}"
        else:
            assert not results, f"message {i}: tool_result without a tool_use before it"
        open_calls = []
        if message["role"] == "assistant":
            for c in content:
                if c["type"] == "tool_use":
                    open_calls.append(c["id"])
                if c["type"] == "thinking":
                    assert c.get("signature"), f"message {i}: thinking without a signature"
    assert not open_calls


def check_chat_rules(messages: list[dict[str, Any]]) -> None:
    """The Chat Completions API's rules on what was sent: after the system prompt, user first and
    last; every `tool_calls` entry of an assistant message answered by one `tool` message with its
    id right after it, no `tool` message without its call."""
    messages = [m for m in messages if m["role"] != "system"]
    assert messages[0]["role"] == "user" and messages[-1]["role"] == "user"
    open_calls: list[str] = []
    for i, message in enumerate(messages):
        if message["role"] == "tool":
            assert message["tool_call_id"] in open_calls, f"message {i}: a tool result for {message['tool_call_id']} without its call just before"
            open_calls.remove(message["tool_call_id"])
            continue
        assert not open_calls, f"message {i}: the calls {open_calls} are not answered next"
        if message["role"] == "assistant":
            open_calls = [c["id"] for c in message.get("tool_calls") or []]
    assert not open_calls


def chat_turns(mock: Any) -> list[dict[str, Any]]:
    """The bodies of the main-turn Chat Completions requests (those that offer tools)."""
    return [r["body"] for r in mock.requests() if r["method"] == "POST" and isinstance(r["body"], dict) and r["body"].get("tools")]


def check_responses_rules(items: list[dict[str, Any]]) -> None:
    """The Responses API's rule: every call has exactly one output after it, no output without
    its call."""
    calls: dict[str, int] = {}
    for item in items:
        if item.get("type") in ("function_call", "custom_tool_call", "local_shell_call"):
            calls[item["call_id"]] = 0
        elif item.get("type") in ("function_call_output", "custom_tool_call_output"):
            assert item["call_id"] in calls, f"output for {item['call_id']} before or without its call"
            calls[item["call_id"]] += 1
    assert all(n == 1 for n in calls.values()), calls


def export_options(target: str) -> dict[str, Any]:
    """What the matrix exports for `target`: the format a host would hand over, for its model."""
    options: dict[str, Any] = {"target_model": TARGET_MODEL[target]}
    if target == "codex":
        options.update(format="rollout", model_provider="mock")
    if target == "pi":
        options.update(model_provider=PI_ANTHROPIC_PROVIDER)
    return options


def resume_in(target: str, run: Any, origin: Path, tmp_path: Path, anthropic_mock: Any, openai_mock: Any, gemini_mock: Any,
              prompt: str = PROMPT, options: dict[str, Any] | None = None, chat_mock: Any = None) -> tuple[Any, dict[str, Any]]:
    """Imports `origin`, exports it and writes it for `target` through one language's driver, and
    resumes it with the real CLI and `prompt`; the request the CLI sent and the driver's result.
    `options` go to both the export and `prepare_resume` (e.g. `compaction`)."""
    cwd = make_project(tmp_path)
    home = tmp_path / "home"
    model = TARGET_MODEL[target]
    extra = dict(options or {})
    job: dict[str, Any] = {"import": {"path": str(origin)}, "export": {"runtime": target, "options": {**export_options(target), **extra}}}
    if target == "codex":
        mock = openai_mock([])
        codex = codex_home(home / ".codex", mock)
        job["resume"] = {"runtime": "codex", "options": {"codex_home": str(codex), "cwd": str(cwd), "model_provider": "mock", "target_model": model, **extra}}
        result = run(job, tmp_path)
        run_codex(["exec", "resume", "--skip-git-repo-check", "--json", result["plan"]["session_id"], prompt], home=home, codex=codex, cwd=cwd)
        (request,) = mock.responses_requests()
        return request, result
    if target == "gemini-cli":
        mock = gemini_mock([])
        gemini_home(home, mock)
        job["resume"] = {"runtime": "gemini-cli", "options": {"home": str(home), "cwd": str(cwd), "target_model": model, **extra}}
        result = run(job, tmp_path)
        assert result["plan"]["argv"][1] == "--resume", result["plan"]
        run_gemini([*result["plan"]["argv"][1:], "-p", prompt, *GEMINI_FLAGS], home=home, cwd=cwd, mock=mock)
        (request,) = mock.gemini_requests()
        return request, result
    if target == "qwen-code":
        mock = chat_mock([], side_text=SIDE_TEXT)
        job["resume"] = {"runtime": "qwen-code", "options": {"home": str(home), "cwd": str(cwd), "target_model": model, **extra}}
        result = run(job, tmp_path)
        assert result["plan"]["argv"][1] == "--resume", result["plan"]
        run_qwen([prompt, *result["plan"]["argv"][1:]], home=home, cwd=cwd, mock=mock)
        (request,) = chat_turns(mock)
        return request, result
    mock = anthropic_mock([])
    if target == "copilot-cli":
        job["resume"] = {"runtime": "copilot-cli", "options": {"home": str(home), "cwd": str(cwd), "target_model": model, **extra}}
        result = run(job, tmp_path)
        run_copilot(["--resume", result["plan"]["session_id"], "-p", prompt], home=home, cwd=cwd, mock=mock)
        (request,) = [r for r in mock.model_requests() if r.get("tools")]
        return request, result
    if target == "pi":
        pi_home(home, mock.url)
        job["resume"] = {"runtime": "pi", "options": {"home": str(home), "cwd": str(cwd), "target_model": model, "model_provider": PI_ANTHROPIC_PROVIDER, **extra}}
        result = run(job, tmp_path)
        run_pi([*result["plan"]["argv"][1:], "-p", prompt, "--mode", "json"], home=home, cwd=cwd)
        (request,) = mock.model_requests()
        return request, result
    if target == "claude-code":
        job["resume"] = {"runtime": "claude-code", "options": {"home": str(home), "cwd": str(cwd), "target_model": model, **extra}}
        result = run(job, tmp_path)
        run_claude(["-p", "--resume", result["plan"]["session_id"], prompt, "--model", model], home=home, cwd=cwd, mock=mock)
    else:
        opencode_home(home, mock)
        job["resume"] = {"runtime": "opencode", "options": {"home": str(home), "cwd": str(cwd), "target_model": model,
                                                            "run_import": True, "opencode_bin": str(cli("opencode")), **extra}}
        result = run(job, tmp_path)
        assert result["plan"]["ran"][0]["status"] == 0, result["plan"]["ran"]
        run_opencode(["run", "--session", result["plan"]["session_id"], *prompt.split()], home=home, cwd=cwd)
    (request,) = mock.model_requests()
    return request, result
