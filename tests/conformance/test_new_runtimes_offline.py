"""Issue 40's two runtimes run here offline, as pinned in package.json: Qwen Code (Chat Completions,
reasoning as `reasoning_content`) and GitHub Copilot CLI (bring-your-own-key Anthropic, no GitHub
account), both on the Node 22 installed from npm. Each answers a tool turn from the mock, runs the
tool, and writes its history where the formats say: Qwen's chats file under
`~/.qwen/projects/<cwd slug>/chats/`, Copilot's `events.jsonl` under `~/.copilot/session-state/<id>/`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from helpers.common import make_project
from helpers.runtimes import QWEN_MODEL, run_copilot, run_qwen


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_qwen_code_runs_a_tool_turn_and_writes_its_chats_file(tmp_path: Path, openai_chat_mock: Any) -> None:
    home, cwd = tmp_path / "home", make_project(tmp_path)
    mock = openai_chat_mock([
        # read_file, not the shell: Qwen Code's shell tool now and then reports a command's output
        # empty under load (seen once in a clean-clone run with two workers).
        [{"type": "reasoning", "text": "I will read the notes."}, {"type": "tool_call", "id": "call_qw1", "name": "read_file", "arguments": {"file_path": str(cwd / "notes.txt")}}],
        [{"type": "text", "text": "The notes say hello."}],
    ], side_text="Mock title")
    out = run_qwen(["What does notes.txt say?"], home=home, cwd=cwd, mock=mock)
    result = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")][-1]
    assert (result["type"], result["result"]) == ("result", "The notes say hello."), out.stdout[-2000:]
    # The folder is the cwd with every character but letters, digits and `-` made a `-` (`/` and
    # `_` seen here: pytest's folders have `_`).
    (chats,) = (home / ".qwen" / "projects" / re.sub(r"[^A-Za-z0-9-]", "-", str(cwd)) / "chats").glob("*.jsonl")
    assert chats.stem == result["session_id"]
    written = records(chats)
    types = [r["type"] for r in written]
    assert {"user", "assistant", "tool_result"} <= set(types), types
    call = next(p["functionCall"] for r in written if r["type"] == "assistant" for p in r["message"]["parts"] if "functionCall" in p)
    assert (call["id"], call["name"]) == ("call_qw1", "read_file")
    assert any(p.get("thought") and "read the notes" in p["text"] for r in written if r["type"] == "assistant" for p in r["message"]["parts"])
    assert all(r.get("model") == QWEN_MODEL for r in written if r["type"] == "assistant")
    # The second model request carried the call's result: the tool ran.
    second = [r for r in mock.requests() if r["method"] == "POST" and isinstance(r["body"], dict) and r["body"].get("tools")][1]["body"]
    assert any(m["role"] == "tool" and "hello from notes" in json.dumps(m) for m in second["messages"]), json.dumps(second["messages"])[-1500:]


def test_copilot_runs_a_tool_turn_and_writes_its_event_log(tmp_path: Path, anthropic_mock: Any) -> None:
    mock = anthropic_mock([
        [{"type": "thinking", "thinking": "I will read the notes.", "signature": "c2lnLWNvcGlsb3Q="},
         {"type": "tool_use", "id": "toolu_cp1", "name": "bash", "input": {"command": "cat notes.txt", "description": "Show notes"}}],
        [{"type": "text", "text": "The notes say hello."}],
    ])
    home, cwd = tmp_path / "home", make_project(tmp_path)
    out = run_copilot(["-p", "What does notes.txt say?"], home=home, cwd=cwd, mock=mock)
    session_id = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")][-1]["sessionId"]
    folder = home / ".copilot" / "session-state" / session_id
    events = records(folder / "events.jsonl")
    types = [e["type"] for e in events]
    assert types[0] == "session.start" and "user.message" in types and "tool.execution_complete" in types, types
    answer = [e["data"] for e in events if e["type"] == "assistant.message"]
    assert any(a.get("content") == "The notes say hello." for a in answer), answer
    blocks = next(a["reasoningBlocks"] for a in answer if a.get("reasoningBlocks"))
    assert blocks["provider"] == "anthropic-messages" and blocks["blocks"][0]["signature"] == "c2lnLWNvcGlsb3Q="
    done = next(e["data"] for e in events if e["type"] == "tool.execution_complete")
    assert "hello from notes" in json.dumps(done), done
    assert (folder / "workspace.yaml").exists()
