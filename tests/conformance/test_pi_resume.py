"""sna-history against the real Pi (pinned in package.json), offline against mock_anthropic.py.

a) resume equivalence: every fixture session file and our export of it, resumed by `pi --session`
   with the same next prompt, send the model the same messages;
b) a session authored through the API (an image, thinking signed by the model Pi resumes with, a
   tool call and its result, an answer) resumes through `prepare_resume` with all of it, the
   signature included, and Pi appends to the file we wrote;
c) a Gemini CLI session goes on in Pi: its texts, call and result reach the model, and no signature
   of another model does.
"""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import sna_history

from helpers.common import FIXTURES, jsonl, make_project
from helpers.runtimes import PI_ANTHROPIC_MODEL, PI_ANTHROPIC_PROVIDER, pi_home, run_pi

NEXT = "Next question, please."


def session_files() -> list[Path]:
    return sorted(p for p in (FIXTURES / "pi").glob("*/*.jsonl") if p.name not in ("events.jsonl", "requests.jsonl"))


def with_cwd(lines: list[dict[str, Any]], cwd: Path) -> list[dict[str, Any]]:
    """The records with the header's cwd set to `cwd` (Pi refuses a header cwd that does not exist)."""
    out = [dict(r) for r in lines]
    out[0]["cwd"] = str(cwd)
    return out


@pytest.mark.parametrize("path", session_files(), ids=lambda p: p.parent.name)
def test_resume_equivalence(path: Path, tmp_path: Path, anthropic_mock: Any) -> None:
    session = sna_history.Store().import_file(str(path))
    exported = session.to_native("pi")
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert exported == lines
    assert jsonl(exported) == path.read_text(), "byte for byte"
    cwd = make_project(tmp_path)
    sent: dict[str, Any] = {}
    for variant, records in (("original", lines), ("exported", exported)):
        home = tmp_path / variant
        mock = anthropic_mock([], name=variant)
        pi_home(home, mock.url)
        file = home / "session.jsonl"
        file.write_text(jsonl(with_cwd(records, cwd)))
        run_pi(["--session", str(file), "-p", NEXT, "--mode", "json"], home=home, cwd=cwd)
        (request,) = mock.model_requests()
        sent[variant] = request["messages"]
        # Pi appended to that same file: the next prompt and its answer.
        assert NEXT in file.read_text()
    assert sent["exported"] == sent["original"]
    assert json.dumps(sent["original"][-1]).count(NEXT) == 1


def test_an_api_session_resumes_with_everything(tmp_path: Path, anthropic_mock: Any) -> None:
    cwd = make_project(tmp_path)
    png = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + b"rest-of-png"
    store = sna_history.Store(str(tmp_path / "h.db"))
    session = store.create_session(cwd=str(cwd))
    attribution = {"provider": "pi", "model_provider": "anthropic", "model": PI_ANTHROPIC_MODEL}
    scope = {"provider": "pi", "model_provider": "anthropic", "model": PI_ANTHROPIC_MODEL}
    session.extend([
        {"actor": "user", "kind": "text", "content": "Look at this ![pic](embed://pic-1) and read notes.txt",
         "embeds": {"pic-1": {"mime": "image/png", "data": png}}},
        {"actor": "assistant", "kind": "thinking", "content": "OUR-THOUGHT", "message_id": "m1",
         "reasoning": {"format": "anthropic-signature", "data": "T1VSLVNJRw==", "scope": scope}, **attribution},
        {"actor": "assistant", "kind": "tool_use", "content": json.dumps({"command": "cat notes.txt"}), "message_id": "m1",
         "tool": {"call_id": "toolu_sna_1", "name": "bash"}, **attribution},
        {"actor": "user", "kind": "tool_result", "content": "OUR-TOOL-OUTPUT", "tool": {"call_id": "toolu_sna_1", "is_error": False}},
        {"actor": "assistant", "kind": "text", "content": "OUR-ANSWER", "message_id": "m2", **attribution},
    ])
    home = tmp_path / "home"
    mock = anthropic_mock([])
    pi_home(home, mock.url)
    plan = session.prepare_resume("pi", home=str(home), cwd=str(cwd), target_model=PI_ANTHROPIC_MODEL, model_provider=PI_ANTHROPIC_PROVIDER)
    assert plan.argv[1] == "--session"
    run_pi([*plan.argv[1:], "-p", NEXT, "--mode", "json"], home=home, cwd=cwd)
    (request,) = mock.model_requests()
    messages = request["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    first = messages[0]["content"]
    assert first[0]["text"].startswith("Look at this")
    assert any(c.get("type") == "image" and c["source"]["data"] == base64.b64encode(png).decode() for c in first), first
    assistant = messages[1]["content"]
    assert assistant[0] == {"type": "thinking", "thinking": "OUR-THOUGHT", "signature": "T1VSLVNJRw=="}, "the signature of the model Pi resumes with"
    assert assistant[1]["type"] == "tool_use" and assistant[1]["input"] == {"command": "cat notes.txt"}
    result = messages[2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == assistant[1]["id"] and "OUR-TOOL-OUTPUT" in json.dumps(result)
    assert messages[3]["content"][0]["text"] == "OUR-ANSWER"
    assert NEXT in json.dumps(messages[4])
    # Pi went on in the file we wrote, and that file imports back with the new turn.
    written = Path(plan.files[0]).read_text()
    assert NEXT in written
    again = sna_history.Store().import_file(plan.files[0])
    texts = [b.content for b in again.blocks() if b.kind == "text"]
    assert "OUR-ANSWER" in texts and any(NEXT in t for t in texts)


def test_a_gemini_session_goes_on_in_pi(tmp_path: Path, anthropic_mock: Any) -> None:
    log = next((FIXTURES / "gemini-cli" / "tools-thinking").glob("session-*.jsonl"))
    session = sna_history.Store().import_file(str(log))
    cwd = make_project(tmp_path)
    home = tmp_path / "home"
    mock = anthropic_mock([])
    pi_home(home, mock.url)
    plan = session.prepare_resume("pi", home=str(home), cwd=str(cwd), target_model=PI_ANTHROPIC_MODEL, model_provider=PI_ANTHROPIC_PROVIDER)
    run_pi([*plan.argv[1:], "-p", NEXT, "--mode", "json"], home=home, cwd=cwd)
    (request,) = mock.model_requests()
    sent = json.dumps(request["messages"], ensure_ascii=False)
    for text in ["Read notes.txt, then list the project files with ls", "hello from notes", "data.csv\\nnotes.txt"]:
        assert text in sent, text
    uses = [c for m in request["messages"] if isinstance(m["content"], list) for c in m["content"] if c.get("type") == "tool_use"]
    assert [u["name"] for u in uses] == ["read", "bash"], "Gemini's read_file and run_shell_command in Pi's tools"
    assert "<session_context>" not in sent, "Gemini CLI's own context is not replayed"
    shutil.rmtree(home)
