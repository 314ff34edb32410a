"""Conformance with the real OpenCode CLI (pinned in package.json) against a mock Anthropic API
(OpenCode's bundled Anthropic provider pointed at it).

a) our exported document imports with `opencode import`, and `opencode export` of the imported
   session equals it except the fields import rewrites (`projectID`, `directory`, `path`);
b) resume equivalence: `opencode run --session` on the original (the fixture's opencode.db) and on
   the re-imported copy send the same conversation;
c) a session built through the Python API → `prepare_resume(run_import=True)` → `opencode run
   --session` → the request carries exactly that conversation;
d) a live `opencode run --format json` captured with `Session.ingest` equals the import of the
   session it created, conversation-wise.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import sna_history
from helpers.common import FIXTURES, RED_PNG_8X8, cli, make_project
from helpers.runtimes import opencode_home, run_opencode, without_cache_control

NAMES = sorted(p.name for p in (FIXTURES / "opencode").iterdir() if p.is_dir())
REWRITTEN = ("projectID", "directory", "path")


def without_rewritten(document: dict[str, Any]) -> dict[str, Any]:
    info = {k: v for k, v in document["info"].items() if k not in REWRITTEN}
    return {**document, "info": info}


def opencode_export(session_id: str, home: Path, cwd: Path) -> dict[str, Any]:
    out = run_opencode(["export", session_id], home=home, cwd=cwd).stdout
    result: dict[str, Any] = json.loads(out[out.index("{"):])
    return result


def resume(session_id: str, home: Path, cwd: Path, mock: Any) -> list[dict[str, Any]]:
    """`opencode run --session` with one more prompt; the messages of the one model request."""
    run_opencode(["run", "--session", session_id, "Next", "question"], home=home, cwd=cwd)
    (request,) = mock.model_requests()
    messages: list[dict[str, Any]] = request["messages"]
    return messages


@pytest.mark.parametrize("name", NAMES)
def test_our_document_imports_and_exports_back(name: str, tmp_path: Path, anthropic_mock: Any) -> None:
    original = json.loads((FIXTURES / "opencode" / name / "export.json").read_text())
    session = sna_history.Store().import_file(FIXTURES / "opencode" / name / "export.json")
    ours = session.to_native("opencode")
    assert ours == original
    home = opencode_home(tmp_path / "home", anthropic_mock([]))
    cwd = make_project(tmp_path)
    file = tmp_path / "ours.json"
    file.write_text(json.dumps(ours, indent=2))
    out = run_opencode(["import", str(file)], home=home, cwd=cwd)
    assert f"Imported session: {session.id}" in out.stdout + out.stderr
    exported = opencode_export(session.id, home, cwd)
    assert exported["info"]["directory"] == str(cwd)
    assert without_rewritten(exported) == without_rewritten(ours)


@pytest.mark.parametrize("name", NAMES)
def test_resume_equivalence(name: str, tmp_path: Path, anthropic_mock: Any) -> None:
    fixture = FIXTURES / "opencode" / name
    session = sna_history.Store().import_file(fixture / "export.json")
    cwd = make_project(tmp_path)
    home = tmp_path / "home"
    sent = {}
    for variant in ("original", "ours"):
        shutil.rmtree(home, ignore_errors=True)
        mock = anthropic_mock([], name=variant)
        opencode_home(home, mock)
        if variant == "original":
            data = home / ".local" / "share" / "opencode"
            data.mkdir(parents=True)
            shutil.copy(fixture / "opencode.db", data / "opencode.db")
            # The session's directory is where the fixture ran; OpenCode opens it on resume.
            with sqlite3.connect(data / "opencode.db") as db:
                db.execute("UPDATE session SET directory = ?", (str(cwd),))
        else:
            file = tmp_path / "ours.json"
            file.write_text(json.dumps(session.to_native("opencode")))
            run_opencode(["import", str(file)], home=home, cwd=cwd)
        sent[variant] = resume(session.id, home, cwd, mock)
    assert sent["ours"] == sent["original"]
    assert sent["ours"][-1]["content"][0]["text"] == "Next question"
    assert len(sent["ours"]) > 2


def test_python_built_session_resumes_with_that_conversation(tmp_path: Path, anthropic_mock: Any) -> None:
    cwd = make_project(tmp_path)
    home = tmp_path / "home"
    mock = anthropic_mock([])
    opencode_home(home, mock)
    store = sna_history.Store()
    session = store.create_session(cwd=cwd, title="Built in Python")
    by = {"provider": "opencode", "model_provider": "anthropic", "model": "claude-sonnet-4-5"}
    session.extend([
        {"actor": "user", "kind": "text", "content": "What is in ![red](embed://red) and the project?",
         "embeds": {"red": {"mime": "image/png", "name": "red.png", "data": RED_PNG_8X8}}},
        {"actor": "assistant", "kind": "thinking", "content": "List, then read.", **by,
         "reasoning": {"format": "anthropic-signature", "data": "U0lHLXB5dGhvbg==",
                       "scope": {"provider": "opencode", "model_provider": "anthropic", "model": "claude-sonnet-4-5"}}},
        {"actor": "assistant", "kind": "tool_use", "content": '{"command":"ls","description":"List"}', "tool": {"call_id": "toolu_py1", "name": "bash"}, **by},
        {"actor": "assistant", "kind": "tool_use", "content": json.dumps({"filePath": str(cwd / "notes.txt")}), "tool": {"call_id": "toolu_py2", "name": "read"}, **by},
        {"actor": "user", "kind": "tool_result", "content": "data.csv\nnotes.txt", "tool": {"call_id": "toolu_py1"}},
        {"actor": "user", "kind": "tool_result", "content": "hello from notes", "tool": {"call_id": "toolu_py2"}},
        {"actor": "assistant", "kind": "text", "content": "A red square; two files.", **by},
    ])
    plan = session.prepare_resume("opencode", home=home, cwd=cwd, run_import=True, opencode_bin=cli("opencode"))
    assert plan.setup == [] and plan.ran[0]["status"] == 0, plan.ran
    assert f"Imported session: {plan.session_id}" in plan.ran[0]["stdout"] + plan.ran[0]["stderr"]
    messages = without_cache_control(resume(plan.session_id, home, cwd, mock))
    image = base64.b64encode(RED_PNG_8X8).decode()
    assert messages == [
        {"role": "user", "content": [
            {"type": "text", "text": "What is in "},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": image}},
            {"type": "text", "text": " and the project?"},
        ]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "List, then read.", "signature": "U0lHLXB5dGhvbg=="},
            {"type": "tool_use", "id": "toolu_py1", "name": "bash", "input": {"command": "ls", "description": "List"}},
            {"type": "tool_use", "id": "toolu_py2", "name": "read", "input": {"filePath": str(cwd / "notes.txt")}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_py1", "content": "data.csv\nnotes.txt"},
            {"type": "tool_result", "tool_use_id": "toolu_py2", "content": "hello from notes"},
        ]},
        {"role": "assistant", "content": [{"type": "text", "text": "A red square; two files."}]},
        {"role": "user", "content": [{"type": "text", "text": "Next question"}]},
    ]
    # What OpenCode holds is our document, followed by the new turn.
    ours = session.to_native("opencode")
    held = opencode_export(plan.session_id, home, cwd)
    assert held["messages"][: len(ours["messages"])] == ours["messages"]
    assert held["info"]["title"] == "Built in Python"


def test_live_run_capture_matches_the_export(tmp_path: Path, anthropic_mock: Any) -> None:
    cwd = make_project(tmp_path)
    home = tmp_path / "home"
    mock = anthropic_mock([
        [
            {"type": "thinking", "thinking": "I will list the files.", "signature": "U0lHLWxpdmU="},
            {"type": "text", "text": "Listing."},
            {"type": "tool_use", "id": "toolu_live1", "name": "bash", "input": {"command": "ls", "description": "List files"}},
        ],
        [{"type": "text", "text": "Two files: data.csv and notes.txt."}],
    ])
    opencode_home(home, mock)
    out = run_opencode(["run", "--format", "json", "--thinking", "List", "the", "files."], home=home, cwd=cwd).stdout
    store = sna_history.Store()
    live = store.create_session()
    session_ids = set()
    for line in out.splitlines():
        if line.startswith("{"):
            event = json.loads(line)
            session_ids.add(event["sessionID"])
            live.ingest("opencode", event)
    (session_id,) = session_ids
    exported = opencode_export(session_id, home, cwd)
    imported = store.import_native("opencode", exported)

    def said(session: sna_history.Session) -> list[tuple[str, str, str]]:
        return [(b.actor, b.kind, b.content) for b in session.blocks() if b.actor == "assistant" and b.kind != "status"]

    assert said(live) == said(imported)
    assert [k for _, k, _ in said(live)] == ["thinking", "text", "tool_use", "text"]
    results = [b.content for b in imported.blocks() if b.kind == "tool_result"]
    assert results == [b.content for b in live.blocks() if b.kind == "tool_result"] and re.search("notes.txt", results[0])
    thinking = next(b for b in live.blocks() if b.kind == "thinking")
    assert thinking.reasoning is not None and thinking.reasoning["data"] == "U0lHLWxpdmU="
