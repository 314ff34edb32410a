"""A compacted session switching runtime, against the real CLIs: each runtime's compaction fixture
(made by its real CLI: a turn that reads notes.txt, "Remember the word PELICAN.", a compaction whose
summary holds SUMMARY-MARKER, then "What was the word?" → "PELICAN.") is imported, written for every
other runtime by `prepare_resume`, and resumed there by the real CLI with a new prompt. The first
request that CLI sends must start at the origin's compaction: the summary, what the origin kept
after it, every later turn and the new prompt, in that order, and nothing else from before (the
turn-1 prompt only where the origin itself still sends it, never turn 1's answer or its tool call).
The export's report says so ("compacted")."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sna_history
from helpers.common import FIXTURES
from helpers.switch import (
    TARGETS,
    check_anthropic_rules,
    check_chat_rules,
    check_gemini_rules,
    check_responses_rules,
    export_options,
    origin_file,
    resume_in,
)

TURN_1 = "Read notes.txt and tell me what it says."
TURN_2 = "Remember the word PELICAN."
TURN_3 = "What was the word?"
SUMMARY = "SUMMARY-MARKER"
# Turn 1's answer, in every fixture: what each runtime's compaction summarised away.
ANSWER_1 = "notes.txt says"
# Turn 3's answer, in every fixture (a text of its own, hence the quotes of its JSON form).
ANSWER_3 = '"PELICAN."'
PROMPT = "NEXT-PROMPT: which word was it?"


@dataclass(frozen=True)
class Compacted:
    folder: str
    # What the origin's own first request after its compaction carries from before it (the
    # summary among it), in its order.
    kept: tuple[str, ...]
    # What it no longer sends.
    gone: tuple[str, ...]


ORIGINS = {
    # Claude Code preserves only the assistant row of turn 2 after its summary.
    "claude-code": Compacted("claude-code/compact", (SUMMARY, "Got it, I'll remember PELICAN."), (TURN_1, TURN_2, ANSWER_1)),
    # Codex's replacement history keeps the user prompts, then the summary as a user message.
    "codex": Compacted("codex/compact", (TURN_1, TURN_2, SUMMARY), (ANSWER_1, "Got it, I will remember PELICAN.")),
    # OpenCode's tail keeps turn 2, sent after the summary.
    "opencode": Compacted("opencode/compact-tail", (SUMMARY, TURN_2, "Got it, I will remember PELICAN."), (TURN_1, ANSWER_1)),
    # Pi keeps from turn 2's prompt on.
    "pi": Compacted("pi/compact", (SUMMARY, TURN_2, "Got it, I'll remember PELICAN."), (TURN_1, ANSWER_1)),
    # Gemini CLI's state snapshot, then turn 2.
    "gemini-cli": Compacted("gemini-cli/compact", (SUMMARY, TURN_2, "Noted: PELICAN."), (TURN_1, ANSWER_1)),
}


def native(text: str) -> str:
    """`text` as it shows inside a JSON string."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def conversation(runtime: str, request: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation part of a model request (the system prompt and tools left aside)."""
    key = {"codex": "input", "gemini-cli": "contents"}.get(runtime, "messages")
    items: list[dict[str, Any]] = request[key]
    return items


def tool_items(runtime: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool calls and results of a conversation."""
    if runtime == "codex":
        return [i for i in items if i.get("type") in ("function_call", "function_call_output", "custom_tool_call",
                                                       "custom_tool_call_output", "local_shell_call")]
    if runtime == "gemini-cli":
        return [p for t in items for p in t["parts"] if "functionCall" in p or "functionResponse" in p]
    if runtime == "qwen-code":
        return [m for m in items if m["role"] == "tool" or m.get("tool_calls")]
    return [c for m in items if isinstance(m["content"], list) for c in m["content"] if c.get("type") in ("tool_use", "tool_result")]


def in_order(text: str, needles: list[str], where: str) -> None:
    """Each needle once in `text`, in the given order."""
    at = -1
    for needle in needles:
        assert text.count(needle) == 1, f"{where}: {needle!r} appears {text.count(needle)} times"
        found = text.index(needle)
        assert found > at, f"{where}: {needle!r} is out of order"
        at = found


def origin_request(origin: str) -> dict[str, Any]:
    """The origin CLI's own first model request after its compaction (the first that carries turn 3)."""
    lines = (FIXTURES / ORIGINS[origin].folder / "requests.jsonl").read_text().splitlines()
    bodies = [json.loads(line)["body"] for line in lines if line.strip()]
    return next(b for b in bodies if isinstance(b, dict) and native(TURN_3) in json.dumps(b, ensure_ascii=False))


@pytest.mark.parametrize("origin", sorted(ORIGINS))
def test_the_expectations_are_what_the_origin_itself_sent(origin: str) -> None:
    """The table above is read off each origin's own post-compaction request."""
    spec = ORIGINS[origin]
    items = conversation(origin, origin_request(origin))
    said = json.dumps(items, ensure_ascii=False)
    in_order(said, [native(t) for t in (*spec.kept, TURN_3)], origin)
    for gone in spec.gone:
        assert native(gone) not in said, f"{origin} itself still sends {gone!r}"
    assert not tool_items(origin, items), f"{origin} itself sends no tool call after its compaction"


def cells() -> list[Any]:
    return [pytest.param(origin, target, id=f"{origin}-{target}") for origin in sorted(ORIGINS) for target in TARGETS if target != origin]


@pytest.mark.parametrize(("origin", "target"), cells())
def test_a_compacted_session_resumes_from_its_compaction(origin: str, target: str, drivers: dict[str, Any], tmp_path: Path,
                                                         anthropic_mock: Any, openai_mock: Any, gemini_mock: Any, openai_chat_mock: Any) -> None:
    spec = ORIGINS[origin]
    folder = FIXTURES / spec.folder
    request, result = resume_in(target, drivers["python"], origin_file(origin, folder), tmp_path,
                                anthropic_mock, openai_mock, gemini_mock, prompt=PROMPT, chat_mock=openai_chat_mock)
    items = conversation(target, request)
    if target == "codex":
        check_responses_rules(items)
    elif target == "gemini-cli":
        check_gemini_rules(items)
    elif target == "qwen-code":
        check_chat_rules(items)
    else:
        check_anthropic_rules(items)
    said = json.dumps(items, ensure_ascii=False)
    where = f"{origin} → {target}"
    # The summary, what the origin kept, turn 3 and its answer, then the new prompt: each once, in
    # that order.
    in_order(said, [*(native(t) for t in spec.kept), native(TURN_3), ANSWER_3, native(PROMPT)], where)
    assert said.rindex(native(PROMPT)) > said.rindex(ANSWER_3), f"{where}: the new prompt comes last"
    # Nothing from before the compaction that the origin no longer sends: no earlier prompt, not
    # turn 1's answer, not turn 1's tool call and result.
    for gone in spec.gone:
        assert native(gone) not in said, f"{where}: {gone!r} is from before the compaction"
    assert not tool_items(target, items), f"{where}: turn 1's tool call went out"
    # The report of that export says the history before the compaction was left out.
    entries = result["export"]["report"]["entries"]
    compacted = [e for e in entries if e["action"] == "compacted"]
    assert len(compacted) == 1, entries
    assert all(e["action"] in ("dropped", "degraded", "remapped", "synthesized", "compacted") for e in entries), entries


@pytest.mark.parametrize("origin", sorted(ORIGINS))
def test_compaction_none_restores_the_whole_history(origin: str) -> None:
    """`compaction="none"` through the Python binding: the export into another runtime has turn 1
    again and no "compacted" entry (Gemini CLI's log, as the CLI loads it, has no turn 1 left to
    restore: its compression replaced the message list)."""
    session = sna_history.Store().import_file(origin_file(origin, FIXTURES / ORIGINS[origin].folder))
    target = "pi" if origin != "pi" else "claude-code"
    latest = session.export(target, **export_options(target))
    whole = session.export(target, compaction="none", **export_options(target))
    assert [e.action for e in latest.report.entries].count("compacted") == 1
    assert "compacted" not in [e.action for e in whole.report.entries]
    data = json.dumps(whole.data, ensure_ascii=False)
    assert (native(ANSWER_1) in data) == (origin != "gemini-cli"), origin
    assert native(ANSWER_1) not in json.dumps(latest.data, ensure_ascii=False)
