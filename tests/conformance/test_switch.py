"""Switching runtime mid-thread, against the real CLIs: a real transcript of each runtime (with
tools and reasoning, and one with an image where the runtime's fixtures have one) is imported,
written for each runtime by `prepare_resume`, and resumed there by the real CLI against a mock
model. The request must carry every user and assistant text, every tool call with its result, the
images in the target's native form and no opaque reasoning of another scope, and must follow the
target API's rules (checked by the validators below)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import sna_history
from conftest import (
    FIXTURES,
    GEMINI_MODEL,
    LANGUAGES,
    PI_ANTHROPIC_MODEL,
    PI_ANTHROPIC_PROVIDER,
    cli,
    codex_home,
    gemini_home,
    make_project,
    opencode_home,
    pi_home,
    run_claude,
    run_codex,
    run_gemini,
    run_opencode,
    run_pi,
)

ORIGINS = {
    "claude-tools": ("claude-code", FIXTURES / "claude-code" / "tools-thinking"),
    "claude-image": ("claude-code", FIXTURES / "claude-code" / "image"),
    "codex-tools": ("codex", FIXTURES / "codex" / "reasoning-exec"),
    "codex-image": ("codex", FIXTURES / "codex" / "image"),
    "opencode-tools": ("opencode", FIXTURES / "opencode" / "tools-reasoning"),
    "gemini-tools": ("gemini-cli", FIXTURES / "gemini-cli" / "tools-thinking"),
    "gemini-image": ("gemini-cli", FIXTURES / "gemini-cli" / "image"),
    "pi-tools": ("pi", FIXTURES / "pi" / "tools-thinking"),
    "pi-image": ("pi", FIXTURES / "pi" / "image"),
}
TARGETS = ["claude-code", "codex", "opencode", "gemini-cli", "pi"]
# The first three runtimes' cells run through every language's binding; the cells that involve Gemini
# CLI or Pi through Python (test_languages_agree shows the bindings give the same export for every cell).
FIRST = {"claude-code", "codex", "opencode"}
TARGET_MODEL = {"claude-code": "claude-opus-5-5", "codex": "gpt-5.5", "opencode": "claude-sonnet-4-5", "gemini-cli": GEMINI_MODEL, "pi": PI_ANTHROPIC_MODEL}
GEMINI_FLAGS = ["--skip-trust", "--approval-mode", "yolo", "-o", "json", "-m", GEMINI_MODEL]
PROMPT = "Next question, please."


def origin_file(runtime: str, folder: Path) -> Path:
    if runtime == "opencode":
        return folder / "export.json"
    if runtime == "codex":
        return next(folder.glob("rollout-*.jsonl"))
    if runtime == "gemini-cli":
        return next(folder.glob("session-*.jsonl"))
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
              prompt: str = PROMPT, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
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
    mock = anthropic_mock([])
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


def cells() -> list[Any]:
    out = []
    for origin in sorted(ORIGINS):
        for target in TARGETS:
            first = ORIGINS[origin][0] in FIRST and target in FIRST
            for language in LANGUAGES if first else ["python"]:
                out.append(pytest.param(origin, target, language, id=f"{origin}-{target}-{language}"))
    return out


@pytest.mark.parametrize(("origin", "target", "language"), cells())
def test_switch_matrix(origin: str, target: str, language: str, drivers: dict[str, Any], tmp_path: Path, anthropic_mock: Any, openai_mock: Any, gemini_mock: Any) -> None:
    """The same checks whichever language's binding imported, exported and wrote the session."""
    runtime, folder = ORIGINS[origin]
    request, result = resume_in(target, drivers[language], origin_file(runtime, folder), tmp_path, anthropic_mock, openai_mock, gemini_mock)
    sent = json.dumps(request, ensure_ascii=False)
    if target == "codex":
        check_responses_rules(request["input"])
    elif target == "gemini-cli":
        check_gemini_rules(request["contents"], cli_duplicates=runtime == "gemini-cli")
    else:
        check_anthropic_rules(request["messages"])
    blocks = result["blocks"]
    report = result["export"]["report"]["entries"]
    dropped = {e["block_id"] for e in report if e["action"] == "dropped"}
    for block in blocks:
        content = block.get("content", "")
        # Gemini CLI's session context is made afresh by the CLI for each process (and dropped, reported,
        # toward the other runtimes).
        regenerated = content.startswith("<session_context>")
        if block["kind"] == "text" and block["id"] not in dropped and not regenerated:
            # Embed links become native images; the text around them travels.
            for piece in content.split("![")[0:1] + [p.split(")", 1)[-1] for p in content.split("![")[1:]]:
                if piece.strip():
                    assert json.dumps(piece.strip(), ensure_ascii=False)[1:-1] in sent, f"{origin} → {target}: text {piece.strip()[:60]!r}"
        if block["kind"] == "tool_result":
            output = content.split("\n![")[0].strip()
            assert json.dumps(output, ensure_ascii=False)[1:-1][:200] in sent, f"{origin} → {target}: result of {block.get('tool')}"
        if block["kind"] == "tool_use":
            assert block.get("tool") and block["tool"].get("call_id")
        if block.get("reasoning") is not None:
            reasoning = block["reasoning"]
            same_scope = reasoning["scope"].get("model") == TARGET_MODEL[target] and (
                (reasoning["format"] == "openai-encrypted") == (target == "codex"))
            assert (reasoning["data"] in sent) == same_scope, f"{origin} → {target}: reasoning token of {reasoning['scope']}"
        for embed_id, embed in (block.get("embeds") or {}).items():
            if embed["mime"].startswith("image/") and block["id"] not in dropped:
                data = result["embeds"][embed_id]
                native = f"data:{embed['mime']};base64,{data}" if target == "codex" else data
                assert native in sent, f"{origin} → {target}: image {embed_id}"
    # As many tool calls went out as the origin made (each with its result, by the validators).
    calls = [b for b in blocks if b["kind"] == "tool_use"]
    if target == "codex":
        assert len([i for i in request["input"] if i.get("type") in ("function_call", "custom_tool_call")]) == len(calls)
    elif target == "gemini-cli":
        assert len([p for t in request["contents"] for p in t["parts"] if "functionCall" in p]) == len(calls)
    else:
        uses = [c for m in request["messages"] if isinstance(m["content"], list) for c in m["content"] if c["type"] == "tool_use"]
        assert len(uses) == len(calls)
    # The report says what was left out: the origin's harness context and foreign reasoning only.
    for entry in report:
        assert entry["action"] in ("dropped", "degraded", "remapped", "synthesized"), entry
    assert result["export"]["data"] == result["export_again"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("origin", sorted(ORIGINS))
def test_languages_agree(origin: str, target: str, drivers: dict[str, Any], tmp_path: Path) -> None:
    """Rust, Python and Node give the same blocks (ids included: an import derives the ids a record
    lacks), embeds, export and report for the same input: the bindings only convert."""
    runtime, folder = ORIGINS[origin]
    job = {"import": {"path": str(origin_file(runtime, folder))}, "export": {"runtime": target, "options": export_options(target)}}
    results = {language: drivers[language](job, tmp_path) for language in LANGUAGES}
    assert results["python"]["blocks"], "the import gave blocks"
    for language in ("node", "rust"):
        for key in ("session_id", "blocks", "embeds", "export", "export_again"):
            assert results[language][key] == results["python"][key], f"{language} differs from python in {key}"


def test_relay_through_all_three_runtimes(tmp_path: Path, anthropic_mock: Any, openai_mock: Any) -> None:
    """A live Claude Code run, resumed and continued in Codex, then in OpenCode, then in Claude Code
    again, each leg captured with `ingest`: the last request carries all four legs, `switches()`
    shows the three switches, and every block keeps its own attribution."""
    cwd = make_project(tmp_path)
    home = tmp_path / "home"
    store = sna_history.Store(tmp_path / "history.db")
    session = store.create_session(cwd=cwd, title="Relay")

    # Leg 1: Claude Code, live.
    signature = base64.b64encode(b"relay-signature").decode()
    mock = anthropic_mock([
        [
            {"type": "thinking", "thinking": "List them.", "signature": signature},
            {"type": "tool_use", "id": "toolu_relay_ls_000000000001", "name": "Bash", "input": {"command": "ls", "description": "List files"}},
        ],
        [{"type": "text", "text": "Leg one: data.csv and notes.txt."}],
    ], name="leg1")
    prompt = {"type": "user", "session_id": "", "parent_tool_use_id": None,
              "message": {"role": "user", "content": [{"type": "text", "text": "Leg one: list the files."}]}}
    out = run_claude(
        ["-p", "--input-format", "stream-json", "--replay-user-messages", "--output-format", "stream-json", "--verbose",
         "--allowedTools", "Bash", "--model", TARGET_MODEL["claude-code"]],
        home=home, cwd=cwd, mock=mock, stdin=json.dumps(prompt) + "\n",
    ).stdout
    for line in out.splitlines():
        if line.strip():
            session.ingest("claude-code", json.loads(line))

    # Leg 2: Codex. `exec --json` does not echo the prompt: the host records it.
    mock = openai_mock([
        [{"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\": \"cat notes.txt\"}", "call_id": "call_relay_cat"}],
        [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Leg two: it says hello from notes.", "annotations": []}], "phase": "final_answer"}],
    ], name="leg2")
    codex = codex_home(home / ".codex", mock)
    plan = session.prepare_resume("codex", codex_home=codex, cwd=cwd, model_provider="mock", target_model=TARGET_MODEL["codex"])
    session.append(actor="user", kind="text", content="Leg two: read notes.txt.")
    out = run_codex(["exec", "resume", "--skip-git-repo-check", "--json", plan.session_id, "Leg two: read notes.txt."], home=home, codex=codex, cwd=cwd).stdout
    codex_request = mock.responses_requests()[0]
    for line in out.splitlines():
        if line.strip().startswith("{"):
            session.ingest("codex", json.loads(line))

    # Leg 3: OpenCode.
    mock = anthropic_mock([
        [{"type": "tool_use", "id": "toolu_relay_pwd_00000000003", "name": "bash", "input": {"command": "pwd", "description": "Where"}}],
        [{"type": "text", "text": "Leg three: we are in the project."}],
    ], name="leg3")
    opencode_home(home, mock)
    plan = session.prepare_resume("opencode", home=home, cwd=cwd, target_model=TARGET_MODEL["opencode"], run_import=True, opencode_bin=cli("opencode"))
    session.append(actor="user", kind="text", content="Leg three: where are we?")
    out = run_opencode(["run", "--session", plan.session_id, "--format", "json", "Leg", "three:", "where", "are", "we?"], home=home, cwd=cwd).stdout
    opencode_request = mock.model_requests()[0]
    for line in out.splitlines():
        if line.startswith("{"):
            session.ingest("opencode", json.loads(line))

    # Leg 4: Claude Code again.
    mock = anthropic_mock([[{"type": "text", "text": "Leg four: all done."}]], name="leg4")
    plan = session.prepare_resume("claude-code", home=home, cwd=cwd, target_model=TARGET_MODEL["claude-code"])
    prompt = {"type": "user", "session_id": "", "parent_tool_use_id": None,
              "message": {"role": "user", "content": [{"type": "text", "text": "Leg four: sum it up."}]}}
    out = run_claude(
        ["-p", "--resume", plan.session_id, "--input-format", "stream-json", "--replay-user-messages", "--output-format", "stream-json",
         "--verbose", "--model", TARGET_MODEL["claude-code"]],
        home=home, cwd=cwd, mock=mock, stdin=json.dumps(prompt) + "\n",
    ).stdout
    for line in out.splitlines():
        if line.strip():
            session.ingest("claude-code", json.loads(line))
    (final,) = mock.model_requests()
    check_anthropic_rules(final["messages"])
    sent = json.dumps(final, ensure_ascii=False)
    for text in ["Leg one: list the files.", "Leg one: data.csv and notes.txt.", "Leg two: read notes.txt.",
                 "Leg two: it says hello from notes.", "Leg three: where are we?", "Leg three: we are in the project.",
                 "Leg four: sum it up.", "hello from notes", "toolu_relay_ls_000000000001"]:
        assert text in sent, text
    uses = [c for m in final["messages"] if isinstance(m["content"], list) for c in m["content"] if c["type"] == "tool_use"]
    assert [u["name"] for u in uses] == ["Bash", "Bash", "Bash"], "ls, cat and pwd, each in Claude Code's shell tool"
    # The first leg's thinking is for the same model: it travels back to Claude Code, and only there.
    assert signature in sent and signature not in json.dumps(codex_request) and signature not in json.dumps(opencode_request)
    check_responses_rules(codex_request["input"])
    check_anthropic_rules(opencode_request["messages"])

    # Three switches, each block with its own attribution.
    providers = [s.to.provider for s in session.switches()]
    assert providers == ["claude-code", "codex", "opencode", "claude-code"], session.switches()
    by_text = {b.content: b for b in session.blocks() if b.kind == "text"}
    assert by_text["Leg one: data.csv and notes.txt."].provider == "claude-code"
    assert by_text["Leg two: it says hello from notes."].provider == "codex"
    assert by_text["Leg three: we are in the project."].provider == "opencode"
    assert by_text["Leg four: all done."].provider == "claude-code"
