"""One agent through four runtimes, each a real CLI against its mock: Claude Code → Gemini CLI → Pi →
Codex, a turn each with a tool call. Each runtime's first request carries every text, call and result
so far; the agent switched three times; every block keeps the attribution of the runtime that made it;
no process outlives the test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import sna_history

from helpers.common import cli, make_project, said
from helpers.processes import assert_gone
from helpers.runtimes import GEMINI_MODEL, PI_ANTHROPIC_MODEL, PI_ANTHROPIC_PROVIDER, pi_home, runtime_env




def test_claude_code_then_gemini_cli_then_pi_then_codex(tmp_path: Path, anthropic_mock: Any, gemini_mock: Any, openai_mock: Any) -> None:
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
    codex = openai_mock([
        [{"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": "echo leg-four-ok"}), "call_id": "call_relay_echo"}],
        [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Leg four done.", "annotations": []}], "phase": "final_answer"}],
    ], name="codex")
    env: dict[str, str] = {}
    env.update(runtime_env("claude-code", home, claude))
    env.update(runtime_env("gemini-cli", home, gemini))
    env.update(runtime_env("codex", home, codex))
    env.update(runtime_env("pi", home, pi))
    pi_home(home, pi.url)
    bins = {"claude-code": str(cli("claude")), "gemini-cli": str(cli("gemini")), "pi": str(cli("pi")), "codex": str(cli("codex"))}
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
        agent.switch("codex")
        agent.send("Leg four: say ok.", timeout=120)
        pids.add(agent.status().pid)
        assert agent.status().spawns == 4
        assert [e.type for e in agent.events()].count("switched") == 3
    for pid in pids:
        assert_gone(pid)
    legs = [
        ["Leg one: list the files.", "toolu_relay_ls_00000000000001", "data.csv", "Leg one done."],
        ["Leg two: read notes.txt.", "call_relay_read", "hello from notes", "Leg two done."],
        ["Leg three: where are we?", "toolu_relay_pwd_0000000000003", str(cwd), "Leg three done."],
        ["Leg four: say ok."],
    ]
    firsts = {"gemini-cli": gemini.gemini_requests()[0], "pi": pi.model_requests()[0], "codex": codex.responses_requests()[0]}
    for runtime, so_far in (("gemini-cli", legs[0] + legs[1][:1]), ("pi", legs[0] + legs[1] + legs[2][:1]), ("codex", sum(legs, []))):
        missing = [s for s in so_far if s not in said(firsts[runtime])]
        assert missing == [], (runtime, missing)
    # Calls speak each target's tools; signatures stay with their own model.
    gemini_calls = [p["functionCall"]["name"] for t in firsts["gemini-cli"]["contents"] for p in t["parts"] if "functionCall" in p]
    assert gemini_calls == ["run_shell_command"], gemini_calls
    pi_calls = [c["name"] for m in firsts["pi"]["messages"] if isinstance(m["content"], list) for c in m["content"] if c.get("type") == "tool_use"]
    assert pi_calls == ["bash", "read"], pi_calls
    assert "R0VNSU5JLVNJRw==" not in said(firsts["pi"]) and "UEktU0lH" not in said(firsts["codex"])
    session = store.session("relay")
    assert [s.to.provider for s in session.switches()] == ["claude-code", "gemini-cli", "pi", "codex"]
    by_text = {b.content: b.provider for b in session.blocks() if b.kind == "text" and b.actor == "assistant"}
    assert by_text == {"Leg one done.": "claude-code", "Leg two done.": "gemini-cli", "Leg three done.": "pi", "Leg four done.": "codex"}
    results = [b.content for b in session.blocks() if b.kind == "tool_result"]
    assert len(results) == 4 and "leg-four-ok" in results[-1], results
