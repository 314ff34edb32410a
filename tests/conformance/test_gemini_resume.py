"""sna-history against the real Gemini CLI (pinned in package.json), offline against mock_gemini.py.

a) resume equivalence: every fixture log, placed as the CLI left it and as sna-history exports it,
   resumed with the same next prompt, sends the model the same conversation; and our `contents`
   export is that conversation;
b) a session authored through the API (an image, thinking and a call signed for Gemini, a result, a
   call without a signature) resumes through `prepare_resume` with all of it: the signature of our
   call, the placeholder on the unsigned one, each result once, the image;
c) the CLI's session cleanup: with it off (our settings) the log placed for `--resume` survives an
   unrelated later run; with it on, `prepare_resume` takes `--session-file` instead and the log it
   keeps survives too;
d) a Claude Code session replayed into Gemini CLI: its texts, call and result reach the model.
"""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import sna_history

from helpers.common import FIXTURES, make_project
from helpers.gemini_files import place_gemini_session
from helpers.runtimes import GEMINI_FLAGS, GEMINI_MODEL, GEMINI_SETTINGS, gemini_home, run_gemini

NEXT = "Next question, please."


def logs() -> list[Path]:
    return sorted(p for p in (FIXTURES / "gemini-cli").glob("*/session-*.jsonl"))


def without_context(contents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A request's contents without the `<session_context>` part the CLI makes afresh for each
    process (it names the HOME and the date)."""
    out = []
    for turn in contents:
        parts = [p for p in turn["parts"] if not str(p.get("text", "")).startswith("<session_context>")]
        if parts:
            out.append({"role": turn["role"], "parts": parts})
    return out


@pytest.mark.parametrize("log", logs(), ids=lambda p: p.parent.name)
def test_resume_equivalence(log: Path, tmp_path: Path, gemini_mock: Any) -> None:
    store = sna_history.Store()
    session = store.import_file(str(log))
    exported = session.to_native("gemini-cli")
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert exported == lines
    cwd = make_project(tmp_path)
    sent: dict[str, list[dict[str, Any]]] = {}
    home = tmp_path / "home"
    for variant, records in (("original", lines), ("exported", exported)):
        shutil.rmtree(home, ignore_errors=True)
        mock = gemini_mock([], name=variant)
        gemini_home(home, mock)
        place_gemini_session(home, cwd, session.id, records)
        run_gemini(["--resume", session.id, "-p", NEXT, *GEMINI_FLAGS], home=home, cwd=cwd, mock=mock)
        requests = mock.gemini_requests()
        assert len(requests) == 1, requests
        sent[variant] = without_context(requests[0]["contents"])
    assert sent["exported"] == sent["original"]
    # Our `contents` are what the CLI sent before the new prompt (the CLI's resume of its own
    # tool calls sends each result twice: one from toolCalls[].result, one from the user record;
    # our export of a CLI-written log carries that defect too, since it is the same log).
    ours = without_context(session.to_native("gemini-cli", format="contents")["contents"])
    history = sent["original"]
    assert history[-1]["parts"][-1] == {"text": NEXT}
    expected = [dict(t) for t in history]
    last = expected[-1]
    if len(last["parts"]) == 1:
        expected.pop()
    else:
        expected[-1] = {"role": last["role"], "parts": last["parts"][:-1]}
    assert ours == expected


def api_session(tmp_path: Path) -> tuple[sna_history.Session, Path, bytes]:
    cwd = make_project(tmp_path)
    png = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + b"rest-of-png"
    store = sna_history.Store(str(tmp_path / "h.db"))
    session = store.create_session(cwd=str(cwd))
    scope = {"provider": "gemini-cli", "model_provider": "google", "model": GEMINI_MODEL}
    attribution = {"provider": "gemini-cli", "model_provider": "google", "model": GEMINI_MODEL}
    session.extend([
        {"actor": "user", "kind": "text", "content": "Look at this ![pic](embed://pic-1) and read notes.txt",
         "embeds": {"pic-1": {"mime": "image/png", "data": png}}},
        {"actor": "assistant", "kind": "thinking", "content": "I will read the notes.", "message_id": "m1",
         "reasoning": {"format": "google-thought-signature", "data": "T1VSLVRIT1VHSFQ=", "scope": scope}, **attribution},
        {"actor": "assistant", "kind": "tool_use", "content": json.dumps({"file_path": "notes.txt"}), "message_id": "m1",
         "tool": {"call_id": "call_sna_1", "name": "read_file"},
         "reasoning": {"format": "google-thought-signature", "data": "T1VSLUNBTEwtU0lH", "scope": scope}, **attribution},
        {"actor": "user", "kind": "tool_result", "content": "OUR-TOOL-OUTPUT", "tool": {"call_id": "call_sna_1", "is_error": False}},
        {"actor": "assistant", "kind": "tool_use", "content": json.dumps({"command": "ls"}), "message_id": "m2",
         "tool": {"call_id": "call_sna_2", "name": "run_shell_command"}, **attribution},
        {"actor": "user", "kind": "tool_result", "content": "data.csv\nnotes.txt", "tool": {"call_id": "call_sna_2", "is_error": False}},
        {"actor": "assistant", "kind": "text", "content": "OUR-ANSWER: the notes say OUR-TOOL-OUTPUT.", "message_id": "m3", **attribution},
    ])
    return session, cwd, png


def test_an_api_session_resumes_with_everything(tmp_path: Path, gemini_mock: Any) -> None:
    session, cwd, png = api_session(tmp_path)
    home = tmp_path / "home"
    mock = gemini_mock([])
    gemini_home(home, mock)
    plan = session.prepare_resume("gemini-cli", home=str(home), cwd=str(cwd))
    assert plan.argv[1:3] == ["--resume", plan.session_id], plan.argv
    run_gemini([*plan.argv[1:], "-p", NEXT, *GEMINI_FLAGS], home=home, cwd=cwd, mock=mock)
    (request,) = mock.gemini_requests()
    contents = without_context(request["contents"])
    assert [t["role"] for t in contents] == ["user", "model", "user", "model", "user", "model", "user"]
    first = contents[0]["parts"]
    assert first[0]["text"].startswith("Look at this")
    assert first[1] == {"inlineData": {"data": base64.b64encode(png).decode(), "mimeType": "image/png"}}
    assert contents[1]["parts"] == [{"functionCall": {"id": "call_sna_1", "name": "read_file", "args": {"file_path": "notes.txt"}}, "thoughtSignature": "T1VSLUNBTEwtU0lH"}]
    assert contents[2]["parts"] == [{"functionResponse": {"id": "call_sna_1", "name": "read_file", "response": {"output": "OUR-TOOL-OUTPUT"}}}], "the result once"
    assert contents[3]["parts"][0]["thoughtSignature"] == "skip_thought_signature_validator"
    assert contents[5]["parts"] == [{"text": "OUR-ANSWER: the notes say OUR-TOOL-OUTPUT."}]
    assert contents[6]["parts"] == [{"text": NEXT}]
    # Our contents export is that conversation.
    assert without_context(session.to_native("gemini-cli", format="contents")["contents"]) == contents[:-1]


def test_the_cli_cleanup_never_deletes_what_we_wrote(tmp_path: Path, gemini_mock: Any) -> None:
    session, cwd, _ = api_session(tmp_path)
    # Cleanup off (our settings): --resume, and the file survives an unrelated later run.
    home = tmp_path / "home"
    mock = gemini_mock([], name="off")
    gemini_home(home, mock)
    plan = session.prepare_resume("gemini-cli", home=str(home), cwd=str(cwd))
    run_gemini([*plan.argv[1:], "-p", NEXT, *GEMINI_FLAGS], home=home, cwd=cwd, mock=mock)
    run_gemini(["-p", "Something unrelated", *GEMINI_FLAGS], home=home, cwd=cwd, mock=mock)
    assert Path(plan.files[0]).exists()
    # Cleanup on (the CLI's default): --session-file of a log kept outside the CLI's store.
    home2 = tmp_path / "home2"
    mock2 = gemini_mock([], name="on")
    settings = json.loads(json.dumps(GEMINI_SETTINGS))
    settings["general"]["sessionRetention"] = {"enabled": True}
    (home2 / ".gemini").mkdir(parents=True)
    (home2 / ".gemini" / "settings.json").write_text(json.dumps(settings))
    plan = session.prepare_resume("gemini-cli", home=str(home2), cwd=str(cwd))
    assert plan.argv[1] == "--session-file" and any("sessionRetention" in n for n in plan.notes), (plan.argv, plan.notes)
    out = run_gemini([*plan.argv[1:], "-p", NEXT, *GEMINI_FLAGS], home=home2, cwd=cwd, mock=mock2)
    assert json.loads(out.stdout)["session_id"] != plan.session_id, "the CLI imports the file under a new id"
    (request,) = mock2.gemini_requests()
    texts = json.dumps(request["contents"])
    assert "OUR-TOOL-OUTPUT" in texts and "T1VSLUNBTEwtU0lH" in texts
    run_gemini(["-p", "Something unrelated", *GEMINI_FLAGS], home=home2, cwd=cwd, mock=mock2)
    assert Path(plan.files[0]).exists()
    assert json.loads(json.dumps(settings)) == json.loads((home2 / ".gemini" / "settings.json").read_text()), "the settings file is the user's"


def test_a_claude_code_session_goes_on_in_gemini(tmp_path: Path, gemini_mock: Any) -> None:
    transcript = next(p for p in (FIXTURES / "claude-code" / "tools-thinking").glob("*.jsonl") if len(p.stem) > 30)
    store = sna_history.Store()
    session = store.import_file(str(transcript))
    cwd = make_project(tmp_path)
    home = tmp_path / "home"
    mock = gemini_mock([])
    gemini_home(home, mock)
    plan = session.prepare_resume("gemini-cli", home=str(home), cwd=str(cwd), target_model=GEMINI_MODEL)
    run_gemini([*plan.argv[1:], "-p", NEXT, *GEMINI_FLAGS], home=home, cwd=cwd, mock=mock)
    (request,) = mock.gemini_requests()
    sent = json.dumps(request["contents"])
    for block in session.blocks():
        # Every text and result but Claude Code's own harness (its tags), which is not replayed.
        if block.kind in ("text", "tool_result") and not block.content.lstrip().startswith("<"):
            assert json.dumps(block.content.strip())[1:-1] in sent, block.content
    calls = [p["functionCall"] for t in request["contents"] for p in t["parts"] if "functionCall" in p]
    assert any(c["name"] == "run_shell_command" for c in calls), calls
    assert all(p.get("thoughtSignature") in (None, "skip_thought_signature_validator") for t in request["contents"] for p in t["parts"] if "functionCall" in p), "no Anthropic signature reaches Gemini"
