"""Switching runtime mid-thread, against the real CLIs: a real transcript of each runtime (with
tools and reasoning, and one with an image where the runtime's fixtures have one) is imported,
written for each runtime by `prepare_resume`, and resumed there by the real CLI against a mock
model. The request must carry every user and assistant text, every tool call with its result, the
images in the target's native form and no opaque reasoning of another scope, and must follow the
target API's rules (checked by the validators of helpers/switch.py)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import sna_history
from helpers.common import FIRST_THREE, FIXTURES, cli, make_project
from helpers.drivers import LANGUAGES
from helpers.runtimes import codex_home, opencode_home, run_claude, run_codex, run_opencode
from helpers.switch import (
    TARGET_MODEL,
    TARGETS,
    check_anthropic_rules,
    check_chat_rules,
    check_gemini_rules,
    check_responses_rules,
    export_options,
    origin_file,
    resume_in,
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
    "qwen-tools": ("qwen-code", FIXTURES / "qwen-code" / "tools-thinking"),
    "qwen-image": ("qwen-code", FIXTURES / "qwen-code" / "image"),
    "copilot-tools": ("copilot-cli", FIXTURES / "copilot-cli" / "tools-thinking"),
}
# The first three runtimes' cells run through every language's binding; the cells that involve Gemini
# CLI, Pi, Qwen Code or Copilot CLI through Python (test_languages_agree shows the bindings give the same export for every cell).
FIRST = set(FIRST_THREE)


def cells() -> list[Any]:
    out = []
    for origin in sorted(ORIGINS):
        for target in TARGETS:
            first = ORIGINS[origin][0] in FIRST and target in FIRST
            for language in LANGUAGES if first else ["python"]:
                out.append(pytest.param(origin, target, language, id=f"{origin}-{target}-{language}"))
    return out


@pytest.mark.parametrize(("origin", "target", "language"), cells())
def test_switch_matrix(origin: str, target: str, language: str, drivers: dict[str, Any], tmp_path: Path, anthropic_mock: Any, openai_mock: Any,
                       gemini_mock: Any, openai_chat_mock: Any) -> None:
    """The same checks whichever language's binding imported, exported and wrote the session."""
    runtime, folder = ORIGINS[origin]
    request, result = resume_in(target, drivers[language], origin_file(runtime, folder), tmp_path, anthropic_mock, openai_mock, gemini_mock,
                                chat_mock=openai_chat_mock)
    sent = json.dumps(request, ensure_ascii=False)
    if target == "codex":
        check_responses_rules(request["input"])
    elif target == "qwen-code":
        check_chat_rules(request["messages"])
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
            if target == "copilot-cli" and embed["mime"].startswith("image/"):
                # A Copilot CLI log keeps no image data: a placeholder names it, reported.
                assert any(e["action"] == "degraded" and e["block_id"] == block["id"] for e in report), f"{origin} → {target}: image {embed_id} not reported"
                continue
            if embed["mime"].startswith("image/") and block["id"] not in dropped:
                data = result["embeds"][embed_id]
                native = f"data:{embed['mime']};base64,{data}" if target in ("codex", "qwen-code") else data
                assert native in sent, f"{origin} → {target}: image {embed_id}"
    # As many tool calls went out as the origin made (each with its result, by the validators).
    calls = [b for b in blocks if b["kind"] == "tool_use"]
    if target == "codex":
        assert len([i for i in request["input"] if i.get("type") in ("function_call", "custom_tool_call")]) == len(calls)
    elif target == "gemini-cli":
        assert len([p for t in request["contents"] for p in t["parts"] if "functionCall" in p]) == len(calls)
    elif target == "qwen-code":
        assert len([c for m in request["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]) == len(calls)
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
