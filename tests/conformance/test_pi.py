"""Smoke tests: the real Pi coding agent (pinned in package.json) runs offline against mock_anthropic.py
(a `models.json` provider `mockant` with the `anthropic-messages` api, model `mock-claude`).

a) the `tools-thinking` scenario of the shared fixtures (pi/tools-thinking: its replies and its command
   line) runs to the end, writes its session under `~/.pi/agent/sessions/--<cwd slug>--/` and sends
   what the fixture's requests show;
b) `pi -p … --session <that file>` resumes it: the model gets the earlier messages, thinking
   signatures included, and Pi appends to the same file;
c) the same file resumed on the Chat Completions provider `mockoai` (mock_openai_chat.py): the mock
   serves Pi's `openai-completions` client (reasoning, a tool call, text), and the Anthropic turn
   reaches it downgraded as pi.md §4.2 says.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.common import make_project
from helpers.processes import processes_with_home
from helpers.runtimes import (
    PI_ANTHROPIC_MODEL,
    PI_ANTHROPIC_PROVIDER,
    PI_OPENAI_MODEL,
    PI_OPENAI_PROVIDER,
    pi_home,
    pi_session_dir,
    run_pi,
    without_cache_control,
)

PROMPT = "Read notes.txt, then list the project files with ls, and tell me what you found."
SIGNATURES = [
    "bW9jay1zaWduYXR1cmU6cHQxOm1vY2stc2lnbmF0dXJlOnB0MTptb2NrLXNpZ25hdHVyZTpwdDE6",
    "bW9jay1zaWduYXR1cmU6cHQyOm1vY2stc2lnbmF0dXJlOnB0Mjptb2NrLXNpZ25hdHVyZTpwdDI6",
]
FINAL = 'notes.txt says "hello from notes", and the project holds `data.csv` and `notes.txt`.'
READ_ID = "toolu_01PiRead00000000000000001"
BASH_ID = "toolu_01PiBash00000000000000002"
# The scripted replies of pi/tools-thinking (its scenario.json).
TOOLS_THINKING: list[list[dict[str, Any]]] = [
    [
        {"type": "thinking", "thinking": "The user wants notes.txt first. I'll use the read tool.", "signature": SIGNATURES[0]},
        {"type": "tool_use", "id": READ_ID, "name": "read", "input": {"path": "notes.txt"}},
    ],
    [
        {"type": "thinking", "thinking": "Now list the files with bash.", "signature": SIGNATURES[1]},
        {"type": "text", "text": "Listing the files now."},
        {"type": "tool_use", "id": BASH_ID, "name": "bash", "input": {"command": "ls"}},
    ],
    [{"type": "text", "text": FINAL}],
]
# What the model saw of that turn (pi/tools-thinking's third request, without cache_control).
CONVERSATION = [
    {"role": "user", "content": [{"type": "text", "text": PROMPT}]},
    {"role": "assistant", "content": TOOLS_THINKING[0]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": READ_ID, "content": "hello from notes\n", "is_error": False}]},
    {"role": "assistant", "content": TOOLS_THINKING[1]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": BASH_ID, "content": "data.csv\nnotes.txt\n", "is_error": False}]},
]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_scenario(tmp_path: Path, anthropic_mock: Any, extra: list[list[dict[str, Any]]] | None = None) -> tuple[Any, Path, Path, Path]:
    """Runs pi/tools-thinking as the fixture did; the mock, HOME, cwd and the session file."""
    mock = anthropic_mock([*TOOLS_THINKING, *(extra or [])])
    home, cwd = tmp_path / "home", make_project(tmp_path)
    pi_home(home, mock.url)
    out = run_pi(
        ["-p", "--mode", "json", "--provider", PI_ANTHROPIC_PROVIDER, "--model", PI_ANTHROPIC_MODEL, "--thinking", "high", PROMPT],
        home=home,
        cwd=cwd,
    )
    assert processes_with_home(home) == []
    header = json.loads(out.stdout.splitlines()[0])
    assert header["type"] == "session"
    (path,) = pi_session_dir(home, cwd).glob("*.jsonl")
    assert path.name.endswith(f"_{header['id']}.jsonl")
    events = [json.loads(line) for line in out.stdout.splitlines()[1:] if line.startswith("{")]
    assert events[-1]["type"] == "agent_end"
    return mock, home, cwd, path


def test_tools_thinking_scenario(tmp_path: Path, anthropic_mock: Any) -> None:
    mock, home, cwd, path = run_scenario(tmp_path, anthropic_mock)
    assert path.parent == home / ".pi" / "agent" / "sessions" / ("--" + str(cwd).lstrip("/").replace("/", "-") + "--")
    header, *entries = lines(path)
    assert header["version"] == 3 and header["cwd"] == str(cwd)
    # One chain: each entry's parent is the previous one.
    assert [e["parentId"] for e in entries] == [None] + [e["id"] for e in entries[:-1]]
    assert entries[0] == {**entries[0], "type": "model_change", "provider": PI_ANTHROPIC_PROVIDER, "modelId": PI_ANTHROPIC_MODEL}
    assert entries[1]["type"] == "thinking_level_change" and entries[1]["thinkingLevel"] == "high"
    messages = [e["message"] for e in entries if e["type"] == "message"]
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant", "toolResult", "assistant"]
    assert messages[0]["content"] == [{"type": "text", "text": PROMPT}]
    assert messages[1]["content"] == [
        {"type": "thinking", "thinking": TOOLS_THINKING[0][0]["thinking"], "thinkingSignature": SIGNATURES[0]},
        {"type": "toolCall", "id": READ_ID, "name": "read", "arguments": {"path": "notes.txt"}},
    ]
    assert messages[3]["content"] == [
        {"type": "thinking", "thinking": "Now list the files with bash.", "thinkingSignature": SIGNATURES[1]},
        {"type": "text", "text": "Listing the files now."},
        {"type": "toolCall", "id": BASH_ID, "name": "bash", "arguments": {"command": "ls"}},
    ]
    results = [(m["toolCallId"], m["toolName"], m["content"], m["isError"]) for m in messages if m["role"] == "toolResult"]
    assert results == [
        (READ_ID, "read", [{"type": "text", "text": "hello from notes\n"}], False),
        (BASH_ID, "bash", [{"type": "text", "text": "data.csv\nnotes.txt\n"}], False),
    ]
    assert messages[-1]["content"] == [{"type": "text", "text": FINAL}]
    assistants = [m for m in messages if m["role"] == "assistant"]
    assert {(m["api"], m["provider"], m["model"]) for m in assistants} == {("anthropic-messages", PI_ANTHROPIC_PROVIDER, PI_ANTHROPIC_MODEL)}
    assert [m["stopReason"] for m in assistants] == ["toolUse", "toolUse", "stop"]

    # The model got one request per step, no side request; the last one carried the whole turn.
    requests = mock.requests()
    assert [(r["method"], r["path"]) for r in requests] == [("POST", "/v1/messages")] * 3
    assert requests[0]["headers"].get("x-api-key") == "dummy"
    bodies = mock.model_requests()
    assert bodies[2]["model"] == PI_ANTHROPIC_MODEL and bodies[2]["stream"] is True
    assert bodies[2]["thinking"]["type"] == "enabled"
    assert without_cache_control(bodies[2]["messages"]) == CONVERSATION
    assert without_cache_control(bodies[1]["messages"]) == CONVERSATION[:3]


def test_resume_of_the_session_file(tmp_path: Path, anthropic_mock: Any) -> None:
    mock, home, cwd, path = run_scenario(tmp_path, anthropic_mock, extra=[[{"type": "text", "text": "Resumed."}]])
    before = lines(path)
    out = run_pi(["-p", "Next question", "--session", str(path), "--mode", "json"], home=home, cwd=cwd)
    assert processes_with_home(home) == []
    assert json.loads(out.stdout.splitlines()[0])["id"] == before[0]["id"]
    requests = mock.model_requests()
    assert len(requests) == 4
    sent = without_cache_control(requests[-1]["messages"])
    # The earlier turn as it was, thinking signatures included, then the new prompt.
    assert sent == [
        *CONVERSATION,
        {"role": "assistant", "content": [{"type": "text", "text": FINAL}]},
        {"role": "user", "content": [{"type": "text", "text": "Next question"}]},
    ]
    assert [b.get("signature") for m in sent for b in m["content"] if b["type"] == "thinking"] == SIGNATURES
    # The model came from the file (no --provider/--model given).
    assert requests[-1]["model"] == PI_ANTHROPIC_MODEL
    # Pi appended to the same file, on the same chain.
    after = lines(path)
    assert after[: len(before)] == before
    added = after[len(before) :]
    assert [e["parentId"] for e in added] == [before[-1]["id"]] + [e["id"] for e in added[:-1]]
    new_messages = [e["message"] for e in added if e["type"] == "message"]
    assert [(m["role"], m["content"]) for m in new_messages] == [
        ("user", [{"type": "text", "text": "Next question"}]),
        ("assistant", [{"type": "text", "text": "Resumed."}]),
    ]
    assert list(pi_session_dir(home, cwd).glob("*.jsonl")) == [path]


def test_resume_on_a_chat_completions_provider(tmp_path: Path, anthropic_mock: Any, openai_chat_mock: Any) -> None:
    _, home, cwd, path = run_scenario(tmp_path, anthropic_mock)
    chat = openai_chat_mock(
        [
            [
                {"type": "reasoning", "text": "chat-reasoning"},
                {"type": "tool_call", "id": "call_oai_1", "name": "bash", "arguments": {"command": "echo chat-ok"}},
            ],
            [{"type": "text", "text": "Chat done."}],
        ],
        name="chat",  # not the default: each mock needs its own folder (port file, log)
    )
    pi_home(home, "http://127.0.0.1:9", chat.url)  # the Anthropic mock is not needed any more
    run_pi(
        ["-p", "Next question", "--session", str(path), "--mode", "json", "--provider", PI_OPENAI_PROVIDER, "--model", PI_OPENAI_MODEL],
        home=home,
        cwd=cwd,
    )
    assert processes_with_home(home) == []
    first, second = (r["body"] for r in chat.requests())
    assert [r["path"] for r in chat.requests()] == ["/v1/chat/completions"] * 2
    assert first["model"] == PI_OPENAI_MODEL and first["stream"] is True
    sent = first["messages"]
    assert sent[0]["role"] == "system"
    # The Anthropic turn arrives as plain assistant text (its thinking downgraded, signatures gone),
    # the tool calls and results kept.
    assert sent[1] == {"role": "user", "content": [{"type": "text", "text": PROMPT}]}
    assert sent[2]["role"] == "assistant" and "The user wants notes.txt first" in json.dumps(sent[2])
    assert not any(sig in json.dumps(sent) for sig in SIGNATURES)
    assert [m.get("tool_call_id") for m in sent if m["role"] == "tool"] == [READ_ID, BASH_ID]
    assert sent[-1] == {"role": "user", "content": [{"type": "text", "text": "Next question"}]}
    # The second request carries Pi's own Chat Completions turn back under `reasoning_content`.
    own = second["messages"][-2:]
    assert own[0]["role"] == "assistant" and own[0]["reasoning_content"] == "chat-reasoning"
    assert own[0]["tool_calls"] == [{"id": "call_oai_1", "type": "function", "function": {"name": "bash", "arguments": '{"command":"echo chat-ok"}'}}]
    assert own[1] == {"role": "tool", "content": "chat-ok\n", "tool_call_id": "call_oai_1"}
    # And the file records that turn on the same chain.
    messages = [e["message"] for e in lines(path) if e["type"] == "message"]
    call, result, answer = messages[-3:]
    assert call["content"] == [
        {"type": "thinking", "thinking": "chat-reasoning", "thinkingSignature": "reasoning_content"},
        {"type": "toolCall", "id": "call_oai_1", "name": "bash", "arguments": {"command": "echo chat-ok"}},
    ]
    assert (call["api"], call["provider"], call["model"]) == ("openai-completions", PI_OPENAI_PROVIDER, PI_OPENAI_MODEL)
    assert result["content"] == [{"type": "text", "text": "chat-ok\n"}]
    assert answer["content"] == [{"type": "text", "text": "Chat done."}]
