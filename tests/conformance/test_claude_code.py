"""Conformance with the real Claude Code CLI (pinned in package.json) against a mock Messages API.

a) resume equivalence: `claude -p --resume` on a fixture transcript and on our export of it send the
   same conversation to the model, and our `messages` rebuild is what the CLI sent;
b) a session built through the Python API, written by `prepare_resume`, resumes with exactly that
   conversation in the request;
c) a live run captured with `Session.ingest` from stream-json equals the import of the transcript
   the run wrote.
"""

from __future__ import annotations

import base64
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import sna_history
from helpers.common import FIXTURES, RED_PNG_8X8, jsonl, make_project
from helpers.runtimes import harness_free, run_claude

MODEL = "claude-opus-5-5"


def transcripts() -> list[Path]:
    found = sorted(
        p for p in (FIXTURES / "claude-code").glob("*/*.jsonl") if p.name not in ("events.jsonl", "requests.jsonl")
    )
    assert len(found) >= 6
    return found


def slug(path: Path) -> str:
    """Claude Code's project folder name for an ASCII path shorter than 200 characters."""
    text = str(path)
    assert len(text) <= 200 and text.isascii()
    return re.sub(r"[^A-Za-z0-9]", "-", text)


def install(home: Path, cwd: Path, session_id: str, text: str) -> Path:
    folder = home / ".claude" / "projects" / slug(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session_id}.jsonl"
    path.write_text(text)
    return path


@pytest.mark.parametrize("transcript", transcripts(), ids=lambda p: p.parent.name)
def test_resume_equivalence(transcript: Path, tmp_path: Path, anthropic_mock: Any) -> None:
    store = sna_history.Store()
    session = store.import_file(transcript)
    exported = session.to_native("claude-code")
    assert exported == [json.loads(line) for line in transcript.read_text().splitlines() if line.strip()]
    cwd = make_project(tmp_path)
    sent: dict[str, list[dict[str, Any]]] = {}
    for variant, text in (("original", transcript.read_text()), ("exported", jsonl(exported))):
        home = tmp_path / variant
        mock = anthropic_mock([[{"type": "text", "text": "Resumed."}]], name=variant)
        install(home, cwd, session.id, text)
        run_claude(
            ["-p", "--resume", session.id, "Next question, please.", "--model", MODEL, "--output-format", "json"],
            home=home,
            cwd=cwd,
            mock=mock,
        )
        requests = mock.model_requests()
        assert len(requests) == 1, requests
        sent[variant] = requests[0]["messages"]
    # Everything before the new turn is the same; the new turn is Claude Code's own.
    assert sent["exported"][:-1] == sent["original"][:-1]
    assert harness_free(sent["exported"][-1:]) == harness_free(sent["original"][-1:])
    # And our Messages rebuild is the conversation the CLI sent, minus its harness context.
    ours = session.to_native("claude-code", format="messages", target_model=MODEL)["messages"]
    resumed = harness_free(sent["original"])
    assert strip_text(resumed[:-1]) == strip_text(harness_free(ours))
    assert resumed[-1]["content"][-1] == {"type": "text", "text": "Next question, please."}


def strip_text(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Text parts with trailing whitespace removed: the CLI ends a prompt with a newline when one of
    its own meta rows follows it in the same message."""
    out = []
    for message in messages:
        items = []
        for item in message["content"]:
            if item.get("type") == "text":
                item = {**item, "text": item["text"].rstrip()}
            items.append(item)
        out.append({"role": message["role"], "content": items})
    return out


def test_api_built_session_resumes_with_that_conversation(tmp_path: Path, anthropic_mock: Any) -> None:
    cwd = make_project(tmp_path)
    home = tmp_path / "home"
    store = sna_history.Store(tmp_path / "history.db")
    session = store.create_session(cwd=str(cwd))
    by = {"provider": "claude-code", "model_provider": "anthropic", "model": MODEL}
    signature = base64.b64encode(b"mock-signature-for-" + MODEL.encode()).decode()
    session.extend(
        [
            {
                "actor": "user",
                "kind": "text",
                "content": "What colour is ![this](embed://red) and what is in the project?",
                "embeds": {"red": {"mime": "image/png", "name": "red.png", "data": RED_PNG_8X8}},
            },
            {
                "actor": "assistant",
                "kind": "thinking",
                "content": "Red image. I should look at the files.",
                "reasoning": {
                    "format": "anthropic-signature",
                    "data": signature,
                    "scope": {"provider": "claude-code", "model_provider": "anthropic", "model": MODEL},
                },
                "message_id": "reply-1",
                **by,
            },
            {"actor": "assistant", "kind": "text", "content": "It is red. Let me look around.", "message_id": "reply-1", **by},
            {
                "actor": "assistant",
                "kind": "tool_use",
                "content": json.dumps({"command": "ls", "description": "List files"}),
                "tool": {"call_id": "toolu_api_ls_0001", "name": "Bash"},
                "message_id": "reply-1",
                **by,
            },
            {
                "actor": "assistant",
                "kind": "tool_use",
                "content": json.dumps({"file_path": str(cwd / "notes.txt")}),
                "tool": {"call_id": "toolu_api_read_0002", "name": "Read"},
                "message_id": "reply-1",
                **by,
            },
            {"actor": "user", "kind": "tool_result", "content": "data.csv\nnotes.txt", "tool": {"call_id": "toolu_api_ls_0001", "is_error": False}},
            {"actor": "user", "kind": "tool_result", "content": "1\thello from notes", "tool": {"call_id": "toolu_api_read_0002", "is_error": False}},
            {"actor": "assistant", "kind": "text", "content": "Red; two files, notes.txt says hello.", "message_id": "reply-2", **by},
        ]
    )
    plan = session.prepare_resume("claude-code", home=home, cwd=cwd)
    assert plan.argv == ["claude", "--resume", plan.session_id]
    assert plan.files[0].startswith(str(home / ".claude" / "projects"))
    mock = anthropic_mock([[{"type": "text", "text": "Anything else?"}]])
    run_claude(["-p", *plan.argv[1:], "Thanks. One more thing?", "--model", MODEL], home=home, cwd=cwd, mock=mock)
    requests = mock.model_requests()
    assert len(requests) == 1
    got = harness_free(requests[0]["messages"])
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(RED_PNG_8X8).decode()}}
    assert got == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "What colour is "}, image, {"type": "text", "text": " and what is in the project?"}],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Red image. I should look at the files.", "signature": signature},
                {"type": "text", "text": "It is red. Let me look around."},
                {"type": "tool_use", "id": "toolu_api_ls_0001", "name": "Bash", "input": {"command": "ls", "description": "List files"}},
                {"type": "tool_use", "id": "toolu_api_read_0002", "name": "Read", "input": {"file_path": str(cwd / "notes.txt")}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_api_ls_0001", "content": "data.csv\nnotes.txt", "is_error": False},
                {"type": "tool_result", "tool_use_id": "toolu_api_read_0002", "content": "1\thello from notes", "is_error": False},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Red; two files, notes.txt says hello."}]},
        {"role": "user", "content": [{"type": "text", "text": "Thanks. One more thing?"}]},
    ]
    # The binding records that the native session now holds the history.
    binding = session.binding("claude-code")
    assert binding is not None and binding.native_id == plan.session_id and binding.through_seq == len(session) - 1


def conversation(blocks: list[sna_history.Block]) -> list[list[Any]]:
    out = []
    for b in blocks:
        if b.kind in ("status", "error"):
            continue
        d = b.to_dict()
        if ((d.get("native") or {}).get("data") or {}).get("record", {}).get("isMeta"):
            continue
        out.append([d["actor"], d["kind"], d["content"], d.get("tool"), d.get("reasoning"), d.get("embeds"), d.get("model"), d.get("message_id")])
    return out


def test_live_capture_equals_the_transcript(tmp_path: Path, anthropic_mock: Any) -> None:
    cwd = make_project(tmp_path)
    home = tmp_path / "home"
    signature = base64.b64encode(b"live-signature").decode()
    mock = anthropic_mock(
        [
            [
                {"type": "thinking", "thinking": "List first.", "signature": signature},
                {"type": "text", "text": "Listing."},
                {"type": "tool_use", "id": "toolu_live_ls_000000000001", "name": "Bash", "input": {"command": "ls", "description": "List files"}},
            ],
            [{"type": "tool_use", "id": "toolu_live_read_0000000002", "name": "Read", "input": {"file_path": str(cwd / "notes.txt")}}],
            [{"type": "text", "text": "notes.txt says hello."}],
        ]
    )
    prompt = {
        "type": "user",
        "session_id": "",
        "parent_tool_use_id": None,
        "message": {
            "role": "user",
            "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(RED_PNG_8X8).decode()}},
                {"type": "text", "text": "List the files, then read notes.txt."},
            ],
        },
    }
    result = run_claude(
        [
            "-p",
            "--input-format", "stream-json",
            "--replay-user-messages",
            "--output-format", "stream-json",
            "--verbose",
            "--allowedTools", "Bash Read",
            "--model", MODEL,
        ],
        home=home,
        cwd=cwd,
        mock=mock,
        stdin=json.dumps(prompt) + "\n",
    )
    events = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    store = sna_history.Store()
    live = store.create_session()
    for event in events:
        live.ingest("claude-code", event)
    session_id = next(e["session_id"] for e in events if e.get("type") == "system" and e.get("subtype") == "init")
    transcript = home / ".claude" / "projects" / slug(cwd) / f"{session_id}.jsonl"
    imported = store.import_file(transcript)
    got = conversation(live.blocks())
    assert got == conversation(imported.blocks())
    kinds = [(b[0], b[1]) for b in got]
    assert kinds == [
        ("user", "text"),
        ("user", "text"),
        ("assistant", "thinking"),
        ("assistant", "text"),
        ("assistant", "tool_use"),
        ("user", "tool_result"),
        ("assistant", "tool_use"),
        ("user", "tool_result"),
        ("assistant", "text"),
    ]
    assert got[2][4]["data"] == signature
    assert "notes.txt" in got[5][2] and "hello from notes" in got[7][2]
    # The run's transcript round-trips too.
    assert imported.to_native("claude-code") == [json.loads(l) for l in transcript.read_text().splitlines() if l.strip()]
    assert os.stat(transcript).st_size > 0
