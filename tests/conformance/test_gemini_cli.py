"""Smoke tests: the real Gemini CLI (pinned in package.json) runs offline against mock_gemini.py.

a) the `tools-thinking` scenario of the shared fixtures (gemini-cli/tools-thinking: its replies and its
   command line) runs to the end, writes its session file where gemini-cli.md says, and sends what the
   fixture's requests show;
b) a session file we place by hand (`place_gemini_session`, route B) resumes with `--resume <id>`, and
   the model gets our history: our functionCall with our thoughtSignature, its result once;
c) without `-m` the CLI's side requests (the model router) are answered by the mock without eating a
   scripted reply.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.common import make_project
from helpers.gemini_files import (
    gemini_project_hash,
    gemini_sessions,
    gemini_short_name,
    load_gemini_session,
    place_gemini_session,
)
from helpers.processes import processes_with_home
from helpers.runtimes import GEMINI_MODEL, run_gemini

PROMPT = "Read notes.txt, then list the project files with ls, and tell me what you found."
THOUGHTS = [
    "The user wants notes.txt first. I'll read it with read_file.",
    "notes.txt says hello. Now list the files with a shell command.",
    "I have both results; time to answer.",
]
SIGNATURES = [
    "bW9jay1zaWduYXR1cmU6Z3QxOm1vY2stc2lnbmF0dXJlOmd0MTptb2NrLXNpZ25hdHVyZTpndDE6",
    "bW9jay1zaWduYXR1cmU6Z3QyOm1vY2stc2lnbmF0dXJlOmd0Mjptb2NrLXNpZ25hdHVyZTpndDI6",
    "bW9jay1zaWduYXR1cmU6Z3QzOm1vY2stc2lnbmF0dXJlOmd0Mzptb2NrLXNpZ25hdHVyZTpndDM6",
]
FINAL = 'notes.txt says "hello from notes", and the project holds `data.csv` and `notes.txt`.'
# The scripted replies of gemini-cli/tools-thinking (its scenario.json).
TOOLS_THINKING = [
    [
        {"text": THOUGHTS[0], "thought": True},
        {"functionCall": {"name": "read_file", "args": {"file_path": "notes.txt"}}, "thoughtSignature": SIGNATURES[0]},
    ],
    [
        {"text": THOUGHTS[1], "thought": True},
        {
            "functionCall": {"name": "run_shell_command", "args": {"command": "ls", "description": "List project files"}},
            "thoughtSignature": SIGNATURES[1],
        },
    ],
    [
        {"text": THOUGHTS[2], "thought": True},
        {"text": FINAL, "thoughtSignature": SIGNATURES[2]},
    ],
]


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_tools_thinking_scenario(tmp_path: Path, gemini_mock: Any) -> None:
    mock = gemini_mock(TOOLS_THINKING)
    home, cwd = tmp_path / "home", make_project(tmp_path)
    out = run_gemini(
        ["-p", PROMPT, "--skip-trust", "--approval-mode", "yolo", "-o", "stream-json", "-m", GEMINI_MODEL],
        home=home,
        cwd=cwd,
        mock=mock,
    )
    assert processes_with_home(home) == []
    stream = events(out.stdout)
    session_id = stream[0]["session_id"]
    assert [e["tool_name"] for e in stream if e["type"] == "tool_use"] == ["read_file", "run_shell_command"]
    assert [e["status"] for e in stream if e["type"] == "tool_result"] == ["success", "success"]
    assert stream[-1]["type"] == "result" and stream[-1]["status"] == "success"
    assert "".join(e["content"] for e in stream if e["type"] == "message" and e["role"] == "assistant") == FINAL

    # The session file: ~/.gemini/tmp/<short>/chats/session-<minute>-<id8>.jsonl, the project registered.
    (path,) = gemini_sessions(home)
    short = gemini_short_name(cwd)
    assert path.parent == home / ".gemini" / "tmp" / short / "chats"
    assert path.name.startswith("session-") and path.name.endswith(f"-{session_id[:8]}.jsonl")
    assert json.loads((home / ".gemini" / "projects.json").read_text())["projects"] == {str(cwd): short}
    assert (home / ".gemini" / "tmp" / short / ".project_root").read_text().strip() == str(cwd)
    session = load_gemini_session(path)
    assert session["sessionId"] == session_id
    assert session["projectHash"] == gemini_project_hash(cwd)
    messages = session["messages"]
    assert messages[0]["content"][0]["text"].startswith("<session_context>")
    assert [m["content"] for m in messages if m["type"] == "user"][1] == [{"text": PROMPT}]
    steps = [m for m in messages if m["type"] == "gemini"]
    assert [m["model"] for m in steps] == [GEMINI_MODEL] * 3
    assert [[t["description"] for t in m["thoughts"]] for m in steps] == [[t] for t in THOUGHTS]
    calls = [call for m in steps for call in m.get("toolCalls", [])]
    assert [(c["name"], c["args"], c["status"]) for c in calls] == [
        ("read_file", {"file_path": "notes.txt"}, "success"),
        ("run_shell_command", {"command": "ls", "description": "List project files"}, "success"),
    ]
    assert calls[0]["id"].startswith("read_file__")
    assert calls[0]["result"][0]["functionResponse"]["response"] == {"output": "hello from notes\n"}
    shell_output = calls[1]["result"][0]["functionResponse"]["response"]["output"]
    assert "data.csv\nnotes.txt" in shell_output
    # Each result is also its own user record (gemini-cli.md §3.4).
    responses = [p["functionResponse"] for m in messages if m["type"] == "user" for p in m["content"] if "functionResponse" in p]
    assert [r["id"] for r in responses] == [c["id"] for c in calls]
    assert steps[-1]["content"] == FINAL
    # The CLI keeps no signature of its own turns.
    assert not any(s in path.read_text() for s in SIGNATURES)

    # What the model got: three main turns and nothing else (`-m` skips the router).
    assert [r["path"] for r in mock.requests()] == [f"/v1beta/models/{GEMINI_MODEL}:streamGenerateContent?alt=sse"] * 3
    assert {r["headers"].get("x-goog-api-key") for r in mock.requests()} == {"mock-key"}
    first, second, third = mock.gemini_requests()
    assert first["contents"][-1]["parts"][-1] == {"text": PROMPT}
    assert len(first["contents"]) == 1
    read_call, read_result = second["contents"][1:]
    assert read_call["role"] == "model"
    (part,) = read_call["parts"]
    assert part["thoughtSignature"] == SIGNATURES[0]
    assert part["functionCall"]["name"] == "read_file" and part["functionCall"]["args"] == {"file_path": "notes.txt"}
    call_id = part["functionCall"]["id"]
    assert calls[0]["id"] == f"read_file__{call_id}"  # the API sees the id without the prefix
    assert read_result == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "read_file", "response": {"output": "hello from notes\n"}, "id": call_id}}],
    }
    assert third["contents"][1:3] == second["contents"][1:3]
    (shell_call,) = third["contents"][3]["parts"]
    assert shell_call["thoughtSignature"] == SIGNATURES[1]
    assert shell_call["functionCall"]["name"] == "run_shell_command"
    # Thought parts never go back to the model.
    assert not any(p.get("thought") for c in third["contents"] for p in c["parts"])


SESSION_ID = "5a5a5a5a-1111-4222-8333-444444444444"
CALL_SIGNATURE = "U05BLUNBTEwtU0lHTkFUVVJF"
HISTORY: list[dict[str, Any]] = [
    {"id": "u1", "timestamp": "2026-12-01T10:00:00.000Z", "type": "user", "content": [{"text": "SNA-USER: what is in notes.txt?"}]},
    {
        "id": "g1",
        "timestamp": "2026-12-01T10:00:01.000Z",
        "type": "gemini",
        "model": GEMINI_MODEL,
        "content": [
            {"text": "SNA-THOUGHT: read it", "thought": True, "thoughtSignature": "U05BLVRIT1VHSFQ="},
            {"functionCall": {"id": "call_sna_1", "name": "read_file", "args": {"file_path": "notes.txt"}}, "thoughtSignature": CALL_SIGNATURE},
        ],
    },
    {
        "id": "u2",
        "timestamp": "2026-12-01T10:00:02.000Z",
        "type": "user",
        "content": [{"functionResponse": {"id": "call_sna_1", "name": "read_file", "response": {"output": "SNA-TOOL-OUTPUT"}}}],
    },
    {"id": "g2", "timestamp": "2026-12-01T10:00:03.000Z", "type": "gemini", "model": GEMINI_MODEL, "content": "SNA-ASSISTANT: it says SNA-TOOL-OUTPUT"},
]


def test_resume_of_a_placed_session(tmp_path: Path, gemini_mock: Any) -> None:
    mock = gemini_mock([[{"text": "Resumed."}]])
    home, cwd = tmp_path / "home", make_project(tmp_path)
    path = place_gemini_session(home, cwd, SESSION_ID, HISTORY)
    assert path.parent == home / ".gemini" / "tmp" / gemini_short_name(cwd) / "chats"
    assert path.name.startswith("session-") and path.name.endswith(f"-{SESSION_ID[:8]}.jsonl")
    out = run_gemini(
        ["--resume", SESSION_ID, "-p", "Next question", "--skip-trust", "-o", "stream-json", "-m", GEMINI_MODEL],
        home=home,
        cwd=cwd,
        mock=mock,
    )
    assert processes_with_home(home) == []
    stream = events(out.stdout)
    assert stream[0]["session_id"] == SESSION_ID
    assert stream[-1]["status"] == "success"
    (request,) = mock.gemini_requests()
    assert len(mock.requests()) == 1
    contents = request["contents"]
    # The CLI's fresh session context, merged with our first user turn; then our history as written
    # (our signature on our call, the result once, the thought part dropped), then the new prompt.
    assert contents[0]["role"] == "user" and contents[0]["parts"][0]["text"].startswith("<session_context>")
    assert contents[0]["parts"][1:] == [{"text": "SNA-USER: what is in notes.txt?"}]
    assert contents[1:] == [
        {
            "role": "model",
            "parts": [
                {"functionCall": {"id": "call_sna_1", "args": {"file_path": "notes.txt"}, "name": "read_file"}, "thoughtSignature": CALL_SIGNATURE}
            ],
        },
        {"role": "user", "parts": [{"functionResponse": {"id": "call_sna_1", "name": "read_file", "response": {"output": "SNA-TOOL-OUTPUT"}}}]},
        {"role": "model", "parts": [{"text": "SNA-ASSISTANT: it says SNA-TOOL-OUTPUT"}]},
        {"role": "user", "parts": [{"text": "Next question"}]},
    ]
    # The CLI went on in our file, under our id.
    session = load_gemini_session(path)
    assert session["sessionId"] == SESSION_ID
    ids = [m["id"] for m in session["messages"]]
    assert ids[ids.index("u1") : ids.index("u1") + 4] == ["u1", "g1", "u2", "g2"]
    assert session["messages"][-1]["type"] == "gemini" and session["messages"][-1]["content"] == "Resumed."
    assert session["messages"][-2]["content"] == [{"text": "Next question"}]


def test_side_requests_take_no_scripted_reply(tmp_path: Path, gemini_mock: Any) -> None:
    """Without `-m` the CLI asks its router (`:generateContent` with a JSON schema) first; the mock's
    answer is valid (no Zod error) and the one scripted reply goes to the main turn."""
    mock = gemini_mock([[{"text": "Routed reply."}]])
    home, cwd = tmp_path / "home", make_project(tmp_path)
    out = run_gemini(["-p", "Say hello", "--skip-trust", "-o", "stream-json"], home=home, cwd=cwd, mock=mock)
    assert "greater than or equal" not in out.stderr
    stream = events(out.stdout)
    assert "".join(e["content"] for e in stream if e["type"] == "message" and e["role"] == "assistant") == "Routed reply."
    side = [r for r in mock.requests() if ":generateContent" in r["path"]]
    assert side, "no router request"
    assert "responseJsonSchema" in side[0]["body"]["generationConfig"]
    (main,) = mock.gemini_requests()
    assert main["contents"][-1]["parts"][-1] == {"text": "Say hello"}
