"""sna-history against the real GitHub Copilot CLI (pinned in package.json), offline and without a
GitHub account, against mock_anthropic.py (bring-your-own-key).

a) resume equivalence: every fixture session log and our export of it, resumed by
   `copilot --resume` with the same next prompt, send the model the same conversation;
b) a session authored through the API (signed thinking of the model Copilot resumes with and of
   another, a tool call and its result, an answer) resumes through `prepare_resume` — a session
   folder holding only our log — with all of it but the other model's signature, and Copilot CLI
   goes on in that log;
c) a Claude Code session goes on in Copilot CLI: its texts, calls (in Copilot CLI's tools) and
   results reach the model, and only signatures of the model resumed with.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sna_history

from helpers.common import FIXTURES, jsonl, make_project
from helpers.runtimes import COPILOT_MODEL, run_copilot
from helpers.switch import check_anthropic_rules

NEXT = "Next question, please."


def session_logs() -> list[Path]:
    return sorted((FIXTURES / "copilot-cli").glob("*/*.events.jsonl"))


def with_cwd(events: list[dict[str, Any]], cwd: Path) -> list[dict[str, Any]]:
    """The events with the working directory of the session's start and resumes set to `cwd`."""
    out = json.loads(json.dumps(events))
    for event in out:
        if event["type"] in ("session.start", "session.resume") and "context" in event["data"]:
            event["data"]["context"]["cwd"] = str(cwd)
    return out


def conversation(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages, without the `<current_datetime>` the CLI puts in front of each user text."""
    text = json.dumps(request["messages"])
    while "<current_datetime>" in text:
        start = text.index("<current_datetime>")
        end = text.index("</current_datetime>", start) + len("</current_datetime>")
        text = text[:start] + text[end:]
    return json.loads(text)


@pytest.mark.parametrize("path", session_logs(), ids=lambda p: p.parent.name)
def test_resume_equivalence(path: Path, tmp_path: Path, anthropic_mock: Any) -> None:
    session = sna_history.Store().import_file(str(path))
    exported = session.to_native("copilot-cli")
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert exported == lines
    assert jsonl(exported) == path.read_text(), "byte for byte"
    session_id = path.name.split(".")[0]
    cwd = make_project(tmp_path)
    sent: dict[str, Any] = {}
    for variant, events in (("original", lines), ("exported", exported)):
        home = tmp_path / variant
        mock = anthropic_mock([[{"type": "text", "text": "The next answer."}]], name=variant)
        folder = home / ".copilot" / "session-state" / session_id
        folder.mkdir(parents=True)
        log = folder / "events.jsonl"
        log.write_text(jsonl(with_cwd(events, cwd)))
        run_copilot(["--resume", session_id, "-p", NEXT], home=home, cwd=cwd, mock=mock)
        (request,) = [r for r in mock.model_requests() if r.get("tools")]
        check_anthropic_rules(request["messages"])
        sent[variant] = conversation(request)
        # Copilot CLI went on in that same log: the next prompt and its answer.
        assert NEXT in log.read_text() and "The next answer." in log.read_text()
    assert sent["exported"] == sent["original"]
    said = json.dumps(sent["original"])
    assert said.count(NEXT) == 1
    answers = [e["data"]["content"] for e in lines if e["type"] == "assistant.message" and e["data"].get("content")]
    if path.parent.name == "compact":
        assert "SUMMARY-MARKER-copilot-cli" in said and "There are two files" not in said
    else:
        assert answers and all(json.dumps(a)[1:-1] in said for a in answers), answers


def test_an_api_session_resumes_with_everything(tmp_path: Path, anthropic_mock: Any) -> None:
    cwd = make_project(tmp_path)
    store = sna_history.Store(str(tmp_path / "h.db"))
    session = store.create_session(cwd=str(cwd))
    ours = {"provider": "copilot-cli", "model_provider": "anthropic", "model": COPILOT_MODEL}
    other = {"provider": "claude-code", "model_provider": "anthropic", "model": "claude-opus-5-5"}
    session.extend([
        {"actor": "user", "kind": "text", "content": "Read notes.txt"},
        {"actor": "assistant", "kind": "thinking", "content": "OTHER-THOUGHT", "message_id": "m0",
         "reasoning": {"format": "anthropic-signature", "data": "T1RIRVItU0lH", "scope": other}, **other},
        {"actor": "assistant", "kind": "thinking", "content": "OUR-THOUGHT", "message_id": "m1",
         "reasoning": {"format": "anthropic-signature", "data": "T1VSLVNJRw==", "scope": ours}, **ours},
        {"actor": "assistant", "kind": "tool_use", "content": json.dumps({"command": "cat notes.txt", "description": "Show notes"}), "message_id": "m1",
         "tool": {"call_id": "toolu_sna_1", "name": "bash"}, **ours},
        {"actor": "user", "kind": "tool_result", "content": "OUR-TOOL-OUTPUT", "tool": {"call_id": "toolu_sna_1", "is_error": False}},
        {"actor": "assistant", "kind": "text", "content": "OUR-ANSWER", "message_id": "m2", **ours},
    ])
    home = tmp_path / "home"
    mock = anthropic_mock([[{"type": "text", "text": "Done."}]])
    plan = session.prepare_resume("copilot-cli", home=str(home), cwd=str(cwd), target_model=COPILOT_MODEL)
    assert plan.argv[:2] == ["copilot", "--resume"]
    assert sorted(p.name for p in Path(plan.files[0]).parent.iterdir()) == ["events.jsonl"], "the log alone"
    run_copilot(plan.argv[1:3] + ["-p", NEXT], home=home, cwd=cwd, mock=mock)
    (request,) = [r for r in mock.model_requests() if r.get("tools")]
    check_anthropic_rules(request["messages"])
    messages = conversation(request)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"], messages
    assistant = messages[1]["content"]
    assert assistant[0] == {"type": "thinking", "thinking": "OUR-THOUGHT", "signature": "T1VSLVNJRw=="}, "the signature of the model resumed with"
    assert assistant[1]["type"] == "tool_use" and assistant[1]["input"]["command"] == "cat notes.txt"
    result = messages[2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == assistant[1]["id"] and "OUR-TOOL-OUTPUT" in json.dumps(result)
    assert "OUR-ANSWER" in json.dumps(messages[3])
    assert NEXT in json.dumps(messages[4])
    sent = json.dumps(request)
    assert "T1RIRVItU0lH" not in sent and "OTHER-THOUGHT" not in sent, "no reasoning of another model"
    # Copilot CLI went on in the log we wrote, and that log imports back with the new turn.
    again = sna_history.Store().import_file(plan.files[0])
    texts = [b.content for b in again.blocks() if b.kind == "text"]
    assert "OUR-ANSWER" in texts and NEXT in texts and "Done." in texts


def test_a_claude_code_session_goes_on_in_copilot_cli(tmp_path: Path, anthropic_mock: Any) -> None:
    transcript = next(p for p in (FIXTURES / "claude-code" / "tools-thinking").glob("*.jsonl") if p.name not in ("events.jsonl", "requests.jsonl"))
    session = sna_history.Store().import_file(str(transcript))
    cwd = make_project(tmp_path)
    home = tmp_path / "home"
    mock = anthropic_mock([[{"type": "text", "text": "Done."}]])
    plan = session.prepare_resume("copilot-cli", home=str(home), cwd=str(cwd), target_model=COPILOT_MODEL)
    run_copilot(plan.argv[1:3] + ["-p", NEXT], home=home, cwd=cwd, mock=mock)
    (request,) = [r for r in mock.model_requests() if r.get("tools")]
    check_anthropic_rules(request["messages"])
    uses = [c for m in request["messages"] if isinstance(m["content"], list) for c in m["content"] if c["type"] == "tool_use"]
    assert uses and {u["name"] for u in uses} <= {"bash", "view", "glob", "grep", "edit", "create"}, uses
    original = [json.loads(line) for line in transcript.read_text().splitlines() if line.strip()]
    texts = [c["text"] for r in original if r.get("type") == "assistant" for c in r["message"]["content"] if c.get("type") == "text"]
    sent = json.dumps(request, ensure_ascii=False)
    assert texts and all(json.dumps(t, ensure_ascii=False)[1:-1] in sent for t in texts), texts
    signatures = [c["signature"] for r in original if r.get("type") == "assistant" for c in r["message"]["content"] if c.get("type") == "thinking"]
    assert signatures and not any(s in sent for s in signatures), "the Claude Code model's signatures are not the resumed model's"
