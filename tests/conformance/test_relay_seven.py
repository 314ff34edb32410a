"""One agent through all seven runtimes, each a real CLI against its mock: Claude Code → Gemini CLI →
Pi → Qwen Code → Copilot CLI → Codex → OpenCode, a turn each with a tool call. Each runtime's first
request carries every text, call and result so far; the agent switched six times; every block keeps
the attribution of the runtime that made it; no process outlives the test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import sna_history

from helpers.common import cli, make_project, said
from helpers.processes import assert_gone
from helpers.runtimes import (
    COPILOT_CACHE,
    COPILOT_MODEL,
    GEMINI_MODEL,
    OPENCODE_MODEL,
    PI_ANTHROPIC_MODEL,
    PI_ANTHROPIC_PROVIDER,
    QWEN_MODEL,
    copilot_env,
    pi_home,
    qwen_env,
    runtime_env,
)


def main_turns(mock: Any) -> list[dict[str, Any]]:
    """The bodies of a mock's main-turn requests (those that offer tools)."""
    return [r["body"] for r in mock.requests() if r["method"] == "POST" and isinstance(r["body"], dict) and r["body"].get("tools")]




def test_one_agent_through_seven_runtimes(tmp_path: Path, anthropic_mock: Any, gemini_mock: Any, openai_mock: Any, openai_chat_mock: Any) -> None:
    cwd = make_project(tmp_path)
    home = tmp_path / "home"
    claude = anthropic_mock([
        [{"type": "tool_use", "id": "toolu_relay_ls_00000000000001", "name": "Bash", "input": {"command": "ls", "description": "List"}}],
        [{"type": "text", "text": "Leg one done."}],
    ], name="claude")
    gemini = gemini_mock([
        [{"functionCall": {"id": "call_relay_read", "name": "read_file", "args": {"file_path": "notes.txt"}}, "thoughtSignature": "R0VNSU5JLVNJRw=="}],
        [{"text": "Leg two done."}],
    ], name="gemini")
    pi = anthropic_mock([
        [{"type": "thinking", "thinking": "Where are we?", "signature": "UEktU0lH"},
         {"type": "tool_use", "id": "toolu_relay_pwd_0000000000003", "name": "bash", "input": {"command": "pwd"}}],
        [{"type": "text", "text": "Leg three done."}],
    ], name="pi")
    qwen = openai_chat_mock([
        [{"type": "reasoning", "text": "The data file has the numbers."},
         {"type": "tool_call", "id": "call_relay_data", "name": "read_file", "arguments": {"file_path": str(cwd / "data.csv")}}],
        [{"type": "text", "text": "Leg four done."}],
    ], name="qwen", side_text="Mock title")
    copilot = anthropic_mock([
        [{"type": "thinking", "thinking": "Look at the notes again.", "signature": "Q09QSUxPVC1TSUc="},
         {"type": "tool_use", "id": "toolu_relay_view_000000000005", "name": "view", "input": {"path": str(cwd / "notes.txt")}}],
        [{"type": "text", "text": "Leg five done."}],
    ], name="copilot")
    codex = openai_mock([
        [{"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": "echo leg-six-ok"}), "call_id": "call_relay_echo"}],
        [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Leg six done.", "annotations": []}], "phase": "final_answer"}],
    ], name="codex")
    opencode = anthropic_mock([
        [{"type": "tool_use", "id": "toolu_relay_echo_000000000007", "name": "bash", "input": {"command": "echo leg-seven-ok", "description": "Say ok"}}],
        [{"type": "text", "text": "Leg seven done."}],
    ], name="opencode")
    env: dict[str, str] = {}
    env.update(runtime_env("claude-code", home, claude))
    env.update(runtime_env("gemini-cli", home, gemini))
    env.update(runtime_env("codex", home, codex))
    env.update(runtime_env("pi", home, pi))
    env.update(runtime_env("opencode", home, opencode))
    pi_home(home, pi.url)
    # Qwen Code and Copilot CLI: Node 22 first on PATH for all; Copilot's unpacked runtime through
    # HOME's cache (not XDG_CACHE_HOME, which OpenCode reads too).
    env.update({k: v for k, v in qwen_env(home, qwen).items() if k != "HOME"})
    env.update({k: v for k, v in copilot_env(home, copilot).items() if k not in ("HOME", "XDG_CACHE_HOME")})
    (home / ".cache").mkdir(parents=True, exist_ok=True)
    (home / ".cache" / "copilot").symlink_to(COPILOT_CACHE / "copilot")
    bins = {r: str(cli(p)) for r, p in (("claude-code", "claude"), ("gemini-cli", "gemini"), ("pi", "pi"), ("qwen-code", "qwen"),
                                         ("copilot-cli", "copilot"), ("codex", "codex"), ("opencode", "opencode"))}
    store = sna_history.Store(tmp_path / "history.db")
    pids: set[int] = set()
    with sna_history.Host(store, bins=bins, env=env, home=str(home)) as host:
        agent = host.start("relay", "claude-code", model="claude-opus-5-5", cwd=str(cwd), args=["--allowedTools", "Bash Read"])
        agent.send("Leg one: list the files.", timeout=120)
        pids.add(agent.status().pid)
        agent.switch("gemini-cli", GEMINI_MODEL)
        assert agent.send("Leg two: read notes.txt.", timeout=120).resumed_via == "replay"
        pids.add(agent.status().pid)
        agent.switch("pi", f"{PI_ANTHROPIC_PROVIDER}/{PI_ANTHROPIC_MODEL}")
        agent.send("Leg three: where are we?", timeout=120)
        pids.add(agent.status().pid)
        agent.switch("qwen-code", QWEN_MODEL)
        agent.send("Leg four: read data.csv.", timeout=120)
        pids.add(agent.status().pid)
        agent.switch("copilot-cli", COPILOT_MODEL)
        agent.send("Leg five: look at notes.txt.", timeout=120)
        pids.add(agent.status().pid)
        agent.switch("codex")
        agent.send("Leg six: say ok.", timeout=120)
        pids.add(agent.status().pid)
        agent.switch("opencode", OPENCODE_MODEL)
        agent.send("Leg seven: say ok again.", timeout=120)
        pids.add(agent.status().pid)
        assert agent.status().spawns == 7
        assert [e.type for e in agent.events()].count("switched") == 6
    for pid in pids:
        assert_gone(pid)
    legs = [
        ["Leg one: list the files.", "toolu_relay_ls_00000000000001", "data.csv", "Leg one done."],
        ["Leg two: read notes.txt.", "call_relay_read", "hello from notes", "Leg two done."],
        ["Leg three: where are we?", "toolu_relay_pwd_0000000000003", str(cwd), "Leg three done."],
        ["Leg four: read data.csv.", "call_relay_data", "1,2", "Leg four done."],
        ["Leg five: look at notes.txt.", "toolu_relay_view_000000000005", "Leg five done."],
        ["Leg six: say ok.", "call_relay_echo", "leg-six-ok", "Leg six done."],
        ["Leg seven: say ok again."],
    ]
    firsts = {"gemini-cli": gemini.gemini_requests()[0], "pi": pi.model_requests()[0], "qwen-code": main_turns(qwen)[0],
              "copilot-cli": main_turns(copilot)[0], "codex": codex.responses_requests()[0], "opencode": main_turns(opencode)[0]}
    for leg, runtime in enumerate(firsts, start=1):
        so_far = sum(legs[:leg], []) + legs[leg][:1]
        missing = [s for s in so_far if s not in said(firsts[runtime])]
        assert missing == [], (runtime, missing)
    # Calls speak each target's tools; signatures stay with their own model.
    gemini_calls = [p["functionCall"]["name"] for t in firsts["gemini-cli"]["contents"] for p in t["parts"] if "functionCall" in p]
    assert gemini_calls == ["run_shell_command"], gemini_calls
    pi_calls = [c["name"] for m in firsts["pi"]["messages"] if isinstance(m["content"], list) for c in m["content"] if c.get("type") == "tool_use"]
    assert pi_calls == ["bash", "read"], pi_calls
    qwen_calls = [c["function"]["name"] for m in firsts["qwen-code"]["messages"] for c in m.get("tool_calls") or []]
    assert qwen_calls == ["run_shell_command", "read_file", "run_shell_command"], qwen_calls
    signatures = ["R0VNSU5JLVNJRw==", "UEktU0lH", "Q09QSUxPVC1TSUc="]
    for runtime, own in (("pi", "UEktU0lH"), ("qwen-code", None), ("copilot-cli", "Q09QSUxPVC1TSUc="), ("codex", None), ("opencode", None)):
        foreign = [s for s in signatures if s != own and s in said(firsts[runtime])]
        assert foreign == [], (runtime, foreign)
    session = store.session("relay")
    assert [s.to.provider for s in session.switches()] == ["claude-code", "gemini-cli", "pi", "qwen-code", "copilot-cli", "codex", "opencode"]
    by_text = {b.content: b.provider for b in session.blocks() if b.kind == "text" and b.actor == "assistant"}
    assert by_text == {"Leg one done.": "claude-code", "Leg two done.": "gemini-cli", "Leg three done.": "pi", "Leg four done.": "qwen-code",
                       "Leg five done.": "copilot-cli", "Leg six done.": "codex", "Leg seven done.": "opencode"}
    results = [b.content for b in session.blocks() if b.kind == "tool_result"]
    assert len(results) == 7 and "leg-seven-ok" in results[-1], results
