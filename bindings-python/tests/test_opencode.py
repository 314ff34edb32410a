"""The OpenCode adapter through the Python API: session documents in and out unchanged, opencode.db,
documents for sessions built here, the prelude, live capture and the import a resume needs."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
import sna_history
from conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "opencode"
NAMES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def document(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((FIXTURES / name / "export.json").read_text())
    return result


@pytest.mark.parametrize("name", NAMES)
def test_every_fixture_round_trips(name: str) -> None:
    path = FIXTURES / name / "export.json"
    store = sna_history.Store()
    sources: list[Any] = [path, str(path), path.read_text(), path.read_bytes(), document(name)]
    for i, source in enumerate(sources):
        if i < 2:
            session = store.import_file(source, session_id=f"s{i}")
        else:
            session = store.import_native("opencode", source, session_id=f"s{i}")
        export = session.export("opencode")
        assert export.report.entries == []
        assert export.data == document(name)
    assert store.import_file(path).id == document(name)["info"]["id"]


@pytest.mark.parametrize("name", NAMES)
def test_the_database_reads_like_the_export(name: str) -> None:
    store = sna_history.Store()
    from_db = store.import_file(FIXTURES / name / "opencode.db")
    assert from_db.to_native("opencode") == document(name)
    other = sna_history.Store()
    assert [s.id for s in other.import_opencode_db(FIXTURES / name / "opencode.db")] == [from_db.id]
    assert other.import_opencode_db(FIXTURES / name / "opencode.db") == []


def test_reasoning_and_tools_are_canonical() -> None:
    session = sna_history.Store().import_file(FIXTURES / "tools-reasoning" / "export.json")
    blocks = [b for b in session.blocks() if b.kind != "status"]
    thinking = blocks[1]
    assert thinking.kind == "thinking" and thinking.reasoning is not None
    assert thinking.reasoning["format"] == "anthropic-signature"
    assert thinking.reasoning["scope"] == {"provider": "opencode", "model_provider": "anthropic", "model": "claude-sonnet-4-5"}
    call, result = blocks[3], blocks[4]
    assert call.tool == {"call_id": "toolu_01OtRead00000000000000001", "name": "read"}
    assert json.loads(call.content) == {"filePath": "/home/dev/project/notes.txt"}
    assert result.kind == "tool_result" and "hello from notes" in result.content


def test_malformed_documents_name_the_json_path() -> None:
    doc = document("tools-reasoning")
    del doc["messages"][1]["parts"][3]["callID"]
    with pytest.raises(sna_history.InvalidInputError) as info:
        sna_history.Store().import_native("opencode", doc)
    assert info.value.field == "messages[1].parts[3].callID"
    with pytest.raises(sna_history.InvalidInputError) as info:
        sna_history.Store().import_native("opencode", '{"info": {"id": "ses_x"}, "messages": [')
    assert info.value.line == 1


def api_session(store: sna_history.Store, cwd: Path) -> sna_history.Session:
    session = store.create_session(cwd=cwd, title="Built in Python")
    by = {"provider": "opencode", "model_provider": "anthropic", "model": "claude-sonnet-4-5"}
    session.extend([
        {"actor": "user", "kind": "text", "content": "Look at ![dot](embed://dot) please",
         "embeds": {"dot": {"mime": "image/png", "name": "dot.png", "data": b"\x89PNG\r\n\x1a\nfake"}}},
        {"actor": "assistant", "kind": "thinking", "content": "Two commands.", **by,
         "reasoning": {"format": "anthropic-signature", "data": "SIG-py",
                       "scope": {"provider": "opencode", "model_provider": "anthropic", "model": "claude-sonnet-4-5"}}},
        {"actor": "assistant", "kind": "tool_use", "content": '{"command":"ls"}', "tool": {"call_id": "toolu_1", "name": "bash"}, **by},
        {"actor": "user", "kind": "tool_result", "content": "a.txt", "tool": {"call_id": "toolu_1"}},
        {"actor": "assistant", "kind": "tool_use", "content": '{"command":"pwd"}', "tool": {"call_id": "toolu_2", "name": "bash"}, **by},
        {"actor": "user", "kind": "tool_result", "content": "/home/dev/project", "tool": {"call_id": "toolu_2"}},
        {"actor": "assistant", "kind": "text", "content": "Done.", **by},
    ])
    return session


def test_api_sessions_become_documents(tmp_path: Path) -> None:
    session = api_session(sna_history.Store(), tmp_path)
    doc = session.to_native("opencode")
    assert doc["info"]["id"].startswith("ses_") and doc["info"]["title"] == "Built in Python"
    roles = [(m["info"]["role"], m["info"].get("finish")) for m in doc["messages"]]
    assert roles == [("user", None), ("assistant", "tool-calls"), ("assistant", "tool-calls"), ("assistant", "stop")]
    file_part = doc["messages"][0]["parts"][1]
    assert file_part["type"] == "file" and file_part["url"].startswith("data:image/png;base64,")
    tools = [p for m in doc["messages"] for p in m["parts"] if p["type"] == "tool"]
    assert [(t["callID"], t["state"]["status"], t["state"]["output"]) for t in tools] == [
        ("toolu_1", "completed", "a.txt"), ("toolu_2", "completed", "/home/dev/project")]
    assert doc == session.to_native("opencode"), "deterministic"
    prelude = session.to_native("opencode", format="prelude")
    assert isinstance(prelude, str) and "[assistant tool call bash id=toolu_2]" in prelude


def test_live_capture_from_run_json_events() -> None:
    store = sna_history.Store()
    imported = store.import_file(FIXTURES / "tools-reasoning" / "export.json")
    live = store.create_session()
    for line in (FIXTURES / "tools-reasoning" / "events.jsonl").read_text().splitlines():
        live.ingest("opencode", json.loads(line))

    def said(session: sna_history.Session) -> list[tuple[str, str]]:
        return [(b.kind, b.content) for b in session.blocks() if b.actor == "assistant" and b.kind != "status"]

    assert said(live) == said(imported) and len(said(live)) == 6


def fake_opencode(tmp_path: Path, code: int, has_session: bool = False) -> Path:
    """A stand-in for `opencode`: `session delete ID` answers as OpenCode does when it has no such
    session (or, `has_session`, deletes it); `import FILE` says so and exits `code`."""
    program = tmp_path / f"opencode-{code}-{has_session}"
    delete = 'echo "Deleted $3"; exit 0' if has_session else 'echo "Error: Session not found: $3" >&2; exit 1'
    program.write_text(f'#!/bin/sh\nif [ "$1" = session ]; then {delete}; fi\necho "Imported session: $2 from $(pwd)"\necho "oops" >&2\nexit {code}\n')
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program


def test_prepare_resume_writes_and_can_import(tmp_path: Path) -> None:
    session = api_session(sna_history.Store(), tmp_path)
    plan = session.prepare_resume("opencode", home=tmp_path / "home", cwd=tmp_path)
    (written,) = plan.files
    assert json.loads(Path(written).read_text()) == session.to_native("opencode")
    assert oct(os.stat(written).st_mode & 0o777) == "0o600"
    assert plan.setup == [["opencode", "import", written]] and plan.ran == []
    assert plan.argv == ["opencode", "run", "--session", plan.session_id]
    ok = session.prepare_resume("opencode", home=tmp_path / "home", cwd=tmp_path, run_import=True, opencode_bin=fake_opencode(tmp_path, 0))
    assert ok.setup == []
    (ran,) = ok.ran
    assert ran["status"] == 0 and ran["stdout"].startswith(f"Imported session: {written} from {tmp_path}")
    # A session OpenCode has already is deleted first (`opencode import` would add to it).
    again = session.prepare_resume("opencode", home=tmp_path / "home", cwd=tmp_path, run_import=True, opencode_bin=fake_opencode(tmp_path, 0, has_session=True))
    assert [r["argv"][1:] for r in again.ran] == [["session", "delete", again.session_id], ["import", written]]
    with pytest.raises(sna_history.SnaError, match="oops"):
        session.prepare_resume("opencode", home=tmp_path / "home", cwd=tmp_path, run_import=True, opencode_bin=fake_opencode(tmp_path, 3))


def test_import_database_detects_the_runtime_of_a_database() -> None:
    store = sna_history.Store()
    db = FIXTURES / "basic" / "opencode.db"
    [session] = store.import_database(db)
    assert session.id == document("basic")["info"]["id"]
    assert store.import_database(db, "opencode") == [], "sessions already held are skipped"
    with pytest.raises(sna_history.UnsupportedError, match="is not a Codex database"):
        store.import_database(db, "codex")
    with pytest.raises(sna_history.InvalidInputError, match="not a database of any runtime"):
        store.import_database(FIXTURES / "basic" / "export.json")
