"""Compaction through the host (`Agent.compact`) and the context budget of its replays, with the real
CLIs against the mock model servers.

- Claude Code, Codex, OpenCode and Pi compact on request with their own mechanism (`/compact`,
  `thread/compact/start`, summarize, RPC `compact`); the compaction is recorded like a turn, so that
  `Session.compactions()` finds it; a switch to another runtime then starts from the runtime's own
  summary: the target's first request carries what the compacting runtime itself sent after its
  compaction, not the history the summary replaced. Gemini CLI refuses, saying why.
- A session far over a target's window (100 turns of 12,000-byte tool results) is folded to fit
  `context_window` when the host replays it (start, and resume in a new host): the newest turn
  whole, the oldest turns in a digest; `prepare_resume` says so, and refuses in strict mode.
- The same from Node (`host_compact.mjs`): `contextWindow` on start, `agent.compact(instructions)`.
- A turn the provider refuses as over the context window: Claude Code and Pi compact by themselves
  and send it again; Codex stops, `send` raises saying to compact, and `compact()` then `send` works.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import sna_history
from helpers.common import bins, cli, make_project, said
from helpers.host import A2, INSTRUCTIONS, P1, P2, P3, P4
from helpers.mocks import OVERFLOW, Mock, summary_reply, text_reply
from helpers.processes import assert_gone
from helpers.runtimes import GEMINI_MODEL, OPENCODE_MODEL, PI_ANTHROPIC_MODEL, PI_ANTHROPIC_PROVIDER, runtime_env

MODELS: dict[str, str | None] = {
    "claude-code": "claude-opus-5-5",
    "codex": None,
    "opencode": OPENCODE_MODEL,
    "pi": f"{PI_ANTHROPIC_PROVIDER}/{PI_ANTHROPIC_MODEL}",
    "gemini-cli": GEMINI_MODEL,
}
# Where each compacting runtime's session goes on: every runtime is a target once.
TARGET = {"claude-code": "codex", "codex": "pi", "opencode": "claude-code", "pi": "opencode"}
# What each runtime's own records say started the compaction (Codex's `compacted` line and Pi's
# `compaction` entry do not say).
TRIGGER = {"claude-code": "manual", "codex": "unknown", "opencode": "manual", "pi": "unknown"}
CALL = {"codex": "call_compact_ls", "other": "toolu_compact_ls_000000000001"}


def tool(runtime: str, call_id: str) -> list[dict[str, Any]]:
    if runtime == "codex":
        return [{"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": "ls"}), "call_id": call_id}]
    if runtime == "claude-code":
        return [{"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": "ls", "description": "List the files"}}]
    if runtime == "pi":
        return [{"type": "tool_use", "id": call_id, "name": "bash", "input": {"command": "ls"}}]
    return [{"type": "tool_use", "id": call_id, "name": "bash", "input": {"command": "ls", "description": "List the files"}}]


class Rigs:
    """One HOME, project, store and a mock per runtime; the host that runs them; the PIDs it started."""

    def __init__(self, tmp: Path, mocks: dict[str, Mock]) -> None:
        self.tmp = tmp
        self.cwd = make_project(tmp)
        self.home = tmp / "home"
        self.mocks = mocks
        self.env: dict[str, str] = {}
        for runtime, mock in mocks.items():
            self.env.update(runtime_env(runtime, self.home, mock))
        self.store = sna_history.Store(tmp / "history.db")
        self.pids: set[int] = set()

    def host(self) -> sna_history.Host:
        return sna_history.Host(self.store, bins=bins(self.mocks), env=self.env, home=str(self.home))

    def track(self, agent: sna_history.Agent) -> None:
        pid = agent.status().pid
        if pid:
            self.pids.add(pid)

    def requests(self, runtime: str) -> list[dict[str, Any]]:
        return self.mocks[runtime].runtime_requests(runtime)

    def gone(self) -> None:
        for pid in self.pids:
            assert_gone(pid)


def pi_settings(home: Path, keep_recent_tokens: int) -> None:
    """Pi's settings with `compaction.keepRecentTokens` lowered (as in tests/fixtures/pi/compact), so
    that its cut falls inside a small session: with the default 20000 it keeps everything."""
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    settings = {"defaultProvider": PI_ANTHROPIC_PROVIDER, "defaultModel": PI_ANTHROPIC_MODEL, "compaction": {"keepRecentTokens": keep_recent_tokens}}
    (agent / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")


@pytest.mark.parametrize("runtime", ["claude-code", "codex", "opencode", "pi"])
def test_compact_then_switch_starts_from_the_runtime_summary(runtime: str, tmp_path: Path, anthropic_mock: Any, openai_mock: Any) -> None:
    target = TARGET[runtime]
    call = CALL["codex" if runtime == "codex" else "other"]
    replies = [tool(runtime, call), text_reply(runtime, "First: two files."), text_reply(runtime, A2), summary_reply(runtime), text_reply(runtime, "Third answer.")]
    mocks = {runtime: (openai_mock if runtime == "codex" else anthropic_mock)(replies, name=runtime)}
    mocks[target] = (openai_mock if target == "codex" else anthropic_mock)([text_reply(target, "Fourth answer, switched.")], name=target)
    if "pi" in mocks:
        pi_settings(tmp_path / "home", 10)
    rigs = Rigs(tmp_path, mocks)
    takes_instructions = runtime in ("claude-code", "pi")
    with rigs.host() as host:
        args = ["--allowedTools", "Bash Read"] if runtime == "claude-code" else None
        agent = host.start("compact", runtime, model=MODELS[runtime], cwd=str(rigs.cwd), args=args)
        rigs.track(agent)
        agent.send(P1, timeout=120)
        agent.send(P2, timeout=120)
        since = agent.status().cursor
        turn = agent.compact(INSTRUCTIONS if takes_instructions else None, timeout=120)
        rigs.track(agent)
        compactions = agent.session.compactions()
        assert [(c.runtime, c.trigger) for c in compactions] == [(runtime, TRIGGER[runtime])], [c.to_dict() for c in compactions]
        compaction = compactions[0]
        assert f"SUMMARY-MARKER-{runtime}" in compaction.summary, compaction.summary
        # The compaction was captured as the turn's blocks, and announced.
        assert compaction.boundary_seq in [b.seq for b in turn.blocks], [(b.seq, b.kind, b.content[:60]) for b in turn.blocks]
        compacted = [e.data for e in agent.events(since=since) if e.type == "compacted"]
        assert [c["compaction"]["boundary_seq"] for c in compacted] == [compaction.boundary_seq]
        # The runtime's own summary request: the fourth model request, over the turns so far (and
        # the instructions, where the runtime takes them).
        summarizing = said(rigs.requests(runtime)[3])
        assert "FIRST-PROMPT-MARK" in summarizing and "PELICAN" in summarizing
        if takes_instructions:
            assert INSTRUCTIONS in summarizing
        # One more turn in the compacting runtime: what it sends itself after its compaction.
        agent.send(P3, timeout=120)
        own = said(rigs.requests(runtime)[-1])
        agent.switch(target, MODELS[target])
        rigs.track(agent)
        switched = [e.data for e in agent.events(since=since) if e.type == "switched"]
        assert len(switched) == 1 and switched[0]["replay"]["compaction_seq"] == compaction.boundary_seq, switched
        after = agent.send(P4, timeout=180)
        rigs.track(agent)
        assert after.resumed_via == "replay" and after.replay is not None
        assert after.replay["compaction_seq"] == compaction.boundary_seq, after.replay
        assert after.replay["folded"] is None
    rigs.gone()
    first = said(rigs.requests(target)[0])
    assert f"SUMMARY-MARKER-{runtime}" in own
    for needed in (f"SUMMARY-MARKER-{runtime}", P3, "Third answer.", P4):
        assert needed in first, (needed, first[:3000])
    # What the summary replaced reaches the target only where the runtime itself still sends it:
    # Codex keeps the user's prompts in its replacement history (not its tool calls); Claude Code,
    # OpenCode and Pi send the first turn no more (Pi keeps the second turn verbatim).
    for replaced in ("FIRST-PROMPT-MARK", call, "First: two files.", P2, A2):
        assert (replaced in first) == (replaced in own), (replaced, replaced in first, replaced in own)
    assert ("FIRST-PROMPT-MARK" in first) == (runtime == "codex")
    assert call not in first and "First: two files." not in first


def test_gemini_cli_cannot_be_asked_to_compact(tmp_path: Path, gemini_mock: Any) -> None:
    rigs = Rigs(tmp_path, {"gemini-cli": gemini_mock([], name="gemini")})
    with rigs.host() as host:
        agent = host.start("no-compact", "gemini-cli", model=GEMINI_MODEL, cwd=str(rigs.cwd))
        rigs.track(agent)
        with pytest.raises(sna_history.UnsupportedError, match="interactive screen") as raised:
            agent.compact("Keep it short.", timeout=60)
        assert raised.value.code == "UNSUPPORTED"
        status = agent.status()
        assert status.alive and not status.busy
        assert agent.session.compactions() == []
        assert not [e for e in agent.events() if e.type == "compacted"]
    rigs.gone()


def test_compacting_nothing_says_what_the_runtime_said(tmp_path: Path, anthropic_mock: Any) -> None:
    """Claude Code asked to compact a session without a message: RUNTIME, in Claude Code's words;
    the agent stays usable. Asked again right after a compaction, it declines ("Not enough
    messages to compact.", streamed as a `<synthetic>` assistant message): RUNTIME again, and the
    decline is stored as bookkeeping, not as an answer that a replay elsewhere would carry."""
    replies = [text_reply("claude-code", "Still here."), summary_reply("claude-code"), text_reply("claude-code", "After both.")]
    rigs = Rigs(tmp_path, {"claude-code": anthropic_mock(replies, name="claude-code")})
    with rigs.host() as host:
        agent = host.start("empty", "claude-code", model=MODELS["claude-code"], cwd=str(rigs.cwd))
        rigs.track(agent)
        with pytest.raises(sna_history.RuntimeFailedError, match="Claude Code ended the compaction without recording one: .*[Nn]o messages to compact"):
            agent.compact(None, timeout=120)
        assert agent.session.compactions() == []
        assert agent.send("Are you there?", timeout=120).text == "Still here."
        agent.compact(None, timeout=120)
        assert len(agent.session.compactions()) == 1
        with pytest.raises(sna_history.RuntimeFailedError, match="Claude Code ended the compaction without recording one: Not enough messages to compact[.]$"):
            agent.compact(None, timeout=120)
        assert len(agent.session.compactions()) == 1
        declined = [b for b in agent.session.blocks() if "Not enough messages" in b.content]
        assert declined and all(b.actor == "system" and b.kind == "status" for b in declined), [(b.actor, b.kind, b.content) for b in declined]
        assert agent.send("And now?", timeout=120).text == "After both."
    rigs.gone()


# The budget: a session far over the target's window, replayed by the host.
TURNS = 100
RESULT_BYTES = 12_000
WINDOW = 100_000


def result_of(i: int) -> str:
    head, tail = f"RESULT-{i:03d}-BEGIN ", f" RESULT-{i:03d}-END"
    line = f"log line of turn {i:03d}: nothing happened here\n"
    body = (line * (RESULT_BYTES // len(line) + 1))[: RESULT_BYTES - len(head) - len(tail)]
    return head + body + tail


def big_session(store: sna_history.Store, cwd: Path) -> sna_history.Session:
    """100 turns attributed to Claude Code: a prompt, a Bash call, a 12,000-byte result, an answer."""
    session = store.create_session(id="budget", cwd=cwd)
    by = {"provider": "claude-code", "model_provider": "anthropic", "model": "claude-opus-5-5"}
    for i in range(TURNS):
        tag = "OLDEST-TURN" if i == 0 else f"TURN-{i:03d}"
        session.extend([
            {"actor": "user", "kind": "text", "content": f"Prompt {tag}: show the log of step {i:03d}."},
            {"actor": "assistant", "kind": "tool_use", "content": json.dumps({"command": f"cat step-{i:03d}.log"}), "tool": {"call_id": f"toolu_budget_{i:03d}", "name": "Bash"}, **by},
            {"actor": "user", "kind": "tool_result", "content": result_of(i), "tool": {"call_id": f"toolu_budget_{i:03d}"}},
            {"actor": "assistant", "kind": "text", "content": f"Answer {tag}: step {i:03d} logged nothing.", **by},
        ])
    return session


def estimated_tokens(blocks: list[sna_history.Block]) -> int:
    """The library's estimate (core/src/replay/budget.rs): one token a 3 bytes of text and tool name,
    plus 8 a block."""
    return sum(-(-(len(b.content.encode()) + len(((b.tool or {}).get("name") or "").encode())) // 3) + 8 for b in blocks)


def test_a_replay_over_the_context_window_is_folded_to_fit(tmp_path: Path, anthropic_mock: Any) -> None:
    target = "pi"
    rigs = Rigs(tmp_path, {target: anthropic_mock([text_reply(target, "Folded answer.")], name=target)})
    session = big_session(rigs.store, rigs.cwd)
    assert estimated_tokens(session.blocks()) >= 300_000
    # The plan alone: folded, and refused in strict mode with the budget named.
    plan = session.prepare_resume(target, home=tmp_path / "plan-home", cwd=rigs.cwd, context_window=WINDOW)
    folded = plan.replay["folded"]
    assert folded is not None and folded[0] == 0, plan.to_dict()["replay"]
    with pytest.raises(sna_history.LossyError, match=r"the context budget of \d+ tokens") as lossy:
        session.prepare_resume(target, home=tmp_path / "strict-home", cwd=rigs.cwd, context_window=WINDOW, strict=True)
    budget = re.search(r"the context budget of (\d+) tokens \(the context_window option: window (\d+) less (\d+) reserved\)", str(lossy.value))
    assert budget, str(lossy.value)
    limit, window, reserve = (int(g) for g in budget.groups())
    assert window == WINDOW and limit == window - reserve and reserve > 0
    with rigs.host() as host:
        agent = host.start("budget", target, model=MODELS[target], cwd=str(rigs.cwd), context_window=WINDOW)
        rigs.track(agent)
        started = [e.data for e in agent.events() if e.type == "started"]
        assert started[0]["via"] == "replay" and started[0]["replay"]["folded"] == folded, started
        turn = agent.send("Newest prompt after the fold.", timeout=120)
        assert turn.resumed_via == "replay" and turn.replay is not None and turn.replay["folded"] == folded
    rigs.gone()
    (first,) = rigs.requests(target)
    whole = said(first)
    newest = TURNS - 1
    for needed in (f"Prompt TURN-{newest:03d}", f"toolu_budget_{newest:03d}", json.dumps(result_of(newest))[1:-1], f"Answer TURN-{newest:03d}", "Newest prompt after the fold."):
        assert needed in whole, needed[:80]
    assert "folded to fit the context window" in whole and "are in the history store: session budget" in whole
    assert "OLDEST-TURN" not in whole and "RESULT-000-" not in whole and "toolu_budget_000" not in whole
    # The conversation the target sent (its messages, without its own system prompt and tools) fits
    # the budget the library named, at its own 3 bytes a token.
    conversation = len(json.dumps(first["messages"], ensure_ascii=False).encode())
    assert conversation / 3 < limit, (conversation, limit)
    kept = sum(1 for i in range(TURNS) if f"RESULT-{i:03d}-END" in whole)
    assert kept < TURNS // 2, kept


def test_compact_and_the_context_window_from_node(tmp_path: Path, anthropic_mock: Any) -> None:
    """Node: `host.start({contextWindow})` folds a replay to fit (the turn's `replay`), a bad window is
    refused at once, and `agent.compact(instructions)` records Claude Code's compaction."""
    mock = anthropic_mock([text_reply("claude-code", "Folded, from Node."), text_reply("claude-code", A2), summary_reply("claude-code")], name="node")
    rigs = Rigs(tmp_path, {"claude-code": mock})
    out = subprocess.run(
        ["node", str(Path(__file__).parent / "host_compact.mjs"), str(cli("claude")), str(rigs.home), str(rigs.cwd), str(tmp_path / "node.db"), mock.url],
        capture_output=True, text=True, timeout=300, check=False,
    )
    result = json.loads(out.stdout) if out.returncode == 0 else {}
    rigs.pids.update(result.get("pids", []))
    rigs.gone()
    assert out.returncode == 0, out.stderr
    assert result["refused"] == {"code": "INVALID_INPUT", "field": "contextWindow"}
    budget = result["budget"]
    assert budget["resumedVia"] == "replay" and budget["text"] == "Folded, from Node."
    assert budget["replay"]["folded"] is not None and budget["replay"]["folded"][0] == 0 and budget["replay"]["compactionSeq"] is None
    assert budget["started"]["folded"] == budget["replay"]["folded"]
    first = said(mock.model_requests()[0])
    # 24 turns are folded, all listed in the digest by their prompts; their results and answers are gone.
    assert "folded to fit the context window" in first and "Answer NODE-TURN-29." in first and "RESULT-29 " in first
    assert "RESULT-0 " not in first and "Answer NODE-OLDEST." not in first
    assert result["compact"]["keys"] == ["blocks", "interrupted", "replay", "resumedVia", "text", "usage"] and result["compact"]["blocks"] > 0
    (compaction,) = result["compactions"]
    assert compaction["runtime"] == "claude-code" and compaction["trigger"] == "manual" and "SUMMARY-MARKER-claude-code" in compaction["summary"]
    assert result["events"].count("compacted") == 1
    assert "Keep the word PELICAN." in said(mock.model_requests()[2])


def test_resume_in_a_new_host_folds_to_the_context_window(tmp_path: Path, anthropic_mock: Any) -> None:
    """`Host.resume(..., context_window=...)` for a session the host has no agent of yet: the replay
    fits the window given there."""
    target = "pi"
    rigs = Rigs(tmp_path, {target: anthropic_mock([text_reply(target, "Resumed, folded.")], name=target)})
    big_session(rigs.store, rigs.cwd)
    with rigs.host() as host:
        agent = host.resume("budget", runtime=target, model=MODELS[target], context_window=WINDOW)
        rigs.track(agent)
        resumed = [e.data for e in agent.events() if e.type == "resumed"]
        assert resumed[0]["via"] == "replay" and resumed[0]["replay"]["folded"] is not None, resumed
        turn = agent.send("Newest prompt after the resume.", timeout=120)
        assert turn.replay is not None and turn.replay["folded"] == resumed[0]["replay"]["folded"]
    rigs.gone()
    (first,) = rigs.requests(target)
    assert "folded to fit the context window" in said(first) and "OLDEST-TURN" not in said(first)


OVER = "Second prompt, the one over the window (OVERFLOW-MARK)."


@pytest.mark.parametrize("runtime", ["claude-code", "pi", "codex"])
def test_a_turn_over_the_context_window(runtime: str, tmp_path: Path, anthropic_mock: Any, openai_mock: Any) -> None:
    """The mock answers the second turn's model request with the provider's context-overflow error.
    Claude Code and Pi compact by themselves and send the request again: the turn succeeds, the
    compaction is recorded, and the prompt is answered from the summary. Codex stops: `send` raises
    RUNTIME naming the context window and the next step (compact), and after `compact()` the same
    agent answers."""
    error = OVERFLOW["openai" if runtime == "codex" else "anthropic"]
    replies = [text_reply(runtime, "First answer."), error, summary_reply(runtime), text_reply(runtime, "Answered after the compaction.")]
    mocks = {runtime: (openai_mock if runtime == "codex" else anthropic_mock)(replies, name=runtime)}
    if runtime == "pi":
        pi_settings(tmp_path / "home", 10)
    rigs = Rigs(tmp_path, mocks)
    with rigs.host() as host:
        agent = host.start("overflow", runtime, model=MODELS[runtime], cwd=str(rigs.cwd))
        rigs.track(agent)
        agent.send(P1, timeout=120)
        if runtime == "codex":
            with pytest.raises(sna_history.RuntimeFailedError) as raised:
                agent.send(OVER, timeout=120)
            message = str(raised.value)
            assert raised.value.code == "RUNTIME"
            assert "Codex ran out of room in the model's context window" in message, message
            assert message.endswith("the conversation no longer fits the model's context window; compact it (Agent::compact) and send again"), message
            status = agent.status()
            assert status.alive and not status.busy and agent.session.compactions() == []
            agent.compact(None, timeout=120)
            turn = agent.send(P3, timeout=120)
            assert turn.text == "Answered after the compaction."
        else:
            turn = agent.send(OVER, timeout=120)
            assert turn.text == "Answered after the compaction."
        rigs.track(agent)
        assert agent.status().spawns == 1  # one process throughout
        (compaction,) = agent.session.compactions()
        blocks = agent.session.blocks()
        # The turn that recorded the compaction published it, asked for or the runtime's own.
        compacted = [e.data["compaction"]["boundary_seq"] for e in agent.events() if e.type == "compacted"]
        assert compacted == [compaction.boundary_seq], compacted
    rigs.gone()
    assert compaction.runtime == runtime and f"SUMMARY-MARKER-{runtime}" in compaction.summary
    assert compaction.trigger == {"claude-code": "auto", "pi": "unknown", "codex": "unknown"}[runtime]
    requests = rigs.requests(runtime)
    assert len(requests) == 4
    overflowed, summarizing, after = (said(r) for r in requests[1:])
    assert OVER in overflowed and "First answer." in overflowed
    # Nothing was lost: the store keeps every prompt once and the first answer, before the boundary;
    # the request after the compaction carries the summary and the prompt that did not fit.
    prompts = [b.content for b in blocks if b.actor == "user" and b.kind == "text"]
    assert prompts.count(P1) == 1 and prompts.count(OVER) == 1, prompts
    first_answer = next(b.seq for b in blocks if b.actor == "assistant" and b.content == "First answer.")
    assert first_answer < compaction.boundary_seq
    assert f"SUMMARY-MARKER-{runtime}" in after and OVER in after
    if runtime == "claude-code":
        # Claude Code left the head of the conversation out of its summary request (as much as the
        # error said was over the window): the first prompt went into no summary; the prompt that
        # overflowed is kept verbatim after the boundary.
        assert "[earlier conversation truncated for compaction retry]" in summarizing and "FIRST-PROMPT-MARK" not in summarizing
        assert "First answer." in summarizing and "FIRST-PROMPT-MARK" not in after
        by_seq = {b.seq: b for b in blocks}
        assert [by_seq[s].content for s in compaction.preserved] == [OVER]
    elif runtime == "pi":
        # Pi records the provider's error in the turn, then its compaction (the first turn
        # summarized; the prompt that overflowed and the error kept), then the answer to the
        # request sent again.
        assert "FIRST-PROMPT-MARK" in summarizing and "First answer." in summarizing and OVER not in summarizing
        assert "FIRST-PROMPT-MARK" not in after and "First answer." not in after
        (failed,) = [b for b in turn.blocks if b.kind == "error"]
        assert "prompt is too long" in failed.content and failed.seq < compaction.boundary_seq
        by_seq = {b.seq: b for b in blocks}
        assert [by_seq[s].content for s in compaction.preserved] == [OVER, failed.content]
    else:
        # Codex summarized both prompts and keeps the user's prompts in its replacement history.
        assert "FIRST-PROMPT-MARK" in summarizing and OVER in summarizing and P3 in after
