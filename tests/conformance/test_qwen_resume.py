"""sna-history against the real Qwen Code (pinned in package.json), offline against
mock_openai_chat.py.

a) resume equivalence: every fixture chat file and our export of it, resumed by `qwen --resume`
   with the same next prompt, send the model the same conversation;
b) a session authored through the API (an image, a thought, signed thinking of another vendor, a
   tool call and its result, an answer) resumes through `prepare_resume` with all of it but the
   signed thinking, and Qwen Code goes on in the file we wrote;
c) a Claude Code session goes on in Qwen Code: its texts, calls (in Qwen Code's tools) and results
   reach the model, and no signature does.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import sna_history

from helpers.common import FIXTURES, jsonl, make_project
from helpers.runtimes import QWEN_MODEL, run_qwen

NEXT = "Next question, please."
# Side requests (titles, next-speaker checks) offer no tools: answered with this, not a reply.
SIDE = "Mock title"


def chat_files() -> list[Path]:
    return sorted(p for p in (FIXTURES / "qwen-code").glob("*/*.jsonl") if p.name not in ("events.jsonl", "requests.jsonl"))


def folder(cwd: Path) -> str:
    """Qwen Code's project folder name of `cwd`."""
    return "".join(c if c.isascii() and (c.isalnum() or c == "-") else "-" for c in str(cwd))


def main_turns(mock: Any) -> list[dict[str, Any]]:
    """The bodies of the main-turn requests (those that offer tools)."""
    return [r["body"] for r in mock.requests() if r["method"] == "POST" and isinstance(r["body"], dict) and r["body"].get("tools")]


def conversation(body: dict[str, Any], home: Path) -> list[dict[str, Any]]:
    """The messages after the system prompt, with the private HOME named the same in every run."""
    return json.loads(json.dumps(body["messages"][1:]).replace(str(home), "/HOME"))


@pytest.mark.parametrize("path", chat_files(), ids=lambda p: p.parent.name)
def test_resume_equivalence(path: Path, tmp_path: Path, openai_chat_mock: Any) -> None:
    session = sna_history.Store().import_file(str(path))
    exported = session.to_native("qwen-code")
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert exported == lines
    assert jsonl(exported) == path.read_text(), "byte for byte"
    cwd = make_project(tmp_path)
    (cwd / "pixel.png").write_bytes(b"")
    sent: dict[str, Any] = {}
    for variant, records in (("original", lines), ("exported", exported)):
        home = tmp_path / variant
        mock = openai_chat_mock([[{"type": "text", "text": "The next answer."}]], name=variant, side_text=SIDE)
        chats = home / ".qwen" / "projects" / folder(cwd) / "chats"
        chats.mkdir(parents=True)
        file = chats / path.name
        # Qwen Code loads a chat only when its first record's cwd is the project it runs in.
        file.write_text(jsonl([{**r, "cwd": str(cwd)} if "cwd" in r else r for r in records]))
        run_qwen([NEXT, "--resume", path.stem], home=home, cwd=cwd, mock=mock)
        (request,) = main_turns(mock)
        sent[variant] = conversation(request, home)
        # Qwen Code went on in that same file: the next prompt and its answer.
        assert NEXT in file.read_text() and "The next answer." in file.read_text()
    assert sent["exported"] == sent["original"]
    assert json.dumps(sent["original"][-1]).count(NEXT) == 1
    # What the fixture said before reaches the model (the compressed one: from its summary on).
    said = json.dumps(sent["original"], ensure_ascii=False)
    if path.parent.name == "compact":
        assert "SUMMARY-MARKER-qwen-code" in said and "There are two files" not in said
    else:
        answers = [p["text"] for r in lines if r["type"] == "assistant" for p in r["message"]["parts"] if "text" in p and not p.get("thought")]
        assert answers and all(a in said for a in answers), answers


def test_an_api_session_resumes_with_everything(tmp_path: Path, openai_chat_mock: Any) -> None:
    cwd = make_project(tmp_path)
    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAEklEQVR4nGP4z8CAFWEFQ/8/wW7s32EAAAAASUVORK5CYII="
    )
    store = sna_history.Store(str(tmp_path / "h.db"))
    session = store.create_session(cwd=str(cwd))
    qwen = {"provider": "qwen-code", "model_provider": "alibaba", "model": QWEN_MODEL}
    claude_scope = {"provider": "claude-code", "model_provider": "anthropic", "model": "claude-sonnet-4-5"}
    session.extend([
        {"actor": "user", "kind": "text", "content": "Look at this ![pic](embed://pic-1) and read notes.txt",
         "embeds": {"pic-1": {"mime": "image/png", "data": png}}},
        {"actor": "assistant", "kind": "thinking", "content": "CLAUDE-THOUGHT", "message_id": "m0",
         "reasoning": {"format": "anthropic-signature", "data": "Q0xBVURFLVNJRw==", "scope": claude_scope},
         "provider": "claude-code", "model_provider": "anthropic", "model": "claude-sonnet-4-5"},
        {"actor": "assistant", "kind": "thinking", "content": "OUR-THOUGHT", "message_id": "m1", **qwen},
        {"actor": "assistant", "kind": "tool_use", "content": json.dumps({"command": "cat notes.txt"}), "message_id": "m1",
         "tool": {"call_id": "call_sna_1", "name": "run_shell_command"}, **qwen},
        {"actor": "user", "kind": "tool_result", "content": "OUR-TOOL-OUTPUT", "tool": {"call_id": "call_sna_1", "is_error": False}},
        {"actor": "assistant", "kind": "text", "content": "OUR-ANSWER", "message_id": "m2", **qwen},
    ])
    home = tmp_path / "home"
    mock = openai_chat_mock([[{"type": "text", "text": "Done."}]], side_text=SIDE)
    plan = session.prepare_resume("qwen-code", home=str(home), cwd=str(cwd))
    assert plan.argv[:2] == ["qwen", "--resume"]
    report = session.export("qwen-code").report
    assert any(e.action == "dropped" and "anthropic-signature" in e.message for e in report.entries), report
    run_qwen([NEXT, *plan.argv[1:]], home=home, cwd=cwd, mock=mock)
    (request,) = main_turns(mock)
    messages = request["messages"][1:]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant", "user"], [m["role"] for m in messages]
    first = messages[0]["content"]
    assert any(c.get("type") == "text" and c["text"].startswith("Look at this") for c in first), first
    assert any(c.get("type") == "image_url" and base64.b64encode(png).decode() in c["image_url"]["url"] for c in first), "the image reaches the model"
    assistant = messages[1]
    assert assistant.get("reasoning_content") == "OUR-THOUGHT"
    (call,) = assistant["tool_calls"]
    assert call["function"]["name"] == "run_shell_command" and json.loads(call["function"]["arguments"]) == {"command": "cat notes.txt"}
    assert messages[2]["tool_call_id"] == call["id"] and "OUR-TOOL-OUTPUT" in json.dumps(messages[2])
    assert "OUR-ANSWER" in json.dumps(messages[3])
    assert NEXT in json.dumps(messages[4])
    sent = json.dumps(request)
    assert "Q0xBVURFLVNJRw==" not in sent and "CLAUDE-THOUGHT" not in sent, "no reasoning of another vendor"
    # Qwen Code went on in the file we wrote, and that file imports back with the new turn.
    written = Path(plan.files[0]).read_text()
    assert NEXT in written
    again = sna_history.Store().import_file(plan.files[0])
    texts = [b.content for b in again.blocks() if b.kind == "text"]
    assert "OUR-ANSWER" in texts and any(NEXT in t for t in texts) and "Done." in texts


def test_a_claude_code_session_goes_on_in_qwen_code(tmp_path: Path, openai_chat_mock: Any) -> None:
    transcript = next(p for p in (FIXTURES / "claude-code" / "tools-thinking").glob("*.jsonl") if p.name not in ("events.jsonl", "requests.jsonl"))
    session = sna_history.Store().import_file(str(transcript))
    cwd = make_project(tmp_path)
    home = tmp_path / "home"
    mock = openai_chat_mock([[{"type": "text", "text": "Done."}]], side_text=SIDE)
    plan = session.prepare_resume("qwen-code", home=str(home), cwd=str(cwd))
    run_qwen([NEXT, *plan.argv[1:]], home=home, cwd=cwd, mock=mock)
    (request,) = main_turns(mock)
    messages = request["messages"][1:]
    calls = [c for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    results = [m for m in messages if m["role"] == "tool"]
    assert calls and len(results) == len(calls), messages
    assert {c["function"]["name"] for c in calls} <= {"run_shell_command", "read_file", "glob", "grep_search", "edit", "write_file"}, calls
    assert [r["tool_call_id"] for r in results] == [c["id"] for c in calls]
    original = [json.loads(line) for line in transcript.read_text().splitlines() if line.strip()]
    texts = [c["text"] for r in original if r.get("type") == "assistant" for c in r["message"]["content"] if c.get("type") == "text"]
    said = [m["content"] if isinstance(m["content"], str) else "".join(c.get("text", "") for c in m["content"] or []) for m in messages]
    assert texts and all(any(t in s for s in said) for t in texts), (texts, said)
    signatures = [c["signature"] for r in original if r.get("type") == "assistant" for c in r["message"]["content"] if c.get("type") == "thinking"]
    assert signatures and not any(s in json.dumps(request) for s in signatures), "no Claude signature reaches Qwen Code's model"
