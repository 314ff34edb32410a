"""The Codex adapter through the Python API: rollouts in and out line for line, the items rebuild,
malformed lines, live capture (exec --json) and the rollout file a resume needs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import sna_history
from conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "codex"


def rollout(name: str) -> Path:
    return next((FIXTURES / name).glob("rollout-*.jsonl"))


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_every_fixture_round_trips_line_for_line(name: str) -> None:
    path = rollout(name)
    store = sna_history.Store()
    session = store.import_file(path)
    assert path.name.endswith(f"{session.id}.jsonl"), "the thread id becomes the session id"
    export = session.export("codex", format="rollout")
    assert export.report.entries == []
    assert export.data == lines(path)


@pytest.mark.parametrize("kind", ["text", "bytes", "list"])
def test_every_source_type_imports(kind: str) -> None:
    path = rollout("reasoning-exec")
    source: Any = {"text": path.read_text(), "bytes": path.read_bytes(), "list": lines(path)}[kind]
    session = sna_history.Store().import_native("codex", source, session_id=f"from-{kind}")
    assert session.to_native("codex", format="rollout") == lines(path)
    thinking = next(b for b in session.blocks() if b.kind == "thinking")
    assert thinking.reasoning is not None and thinking.reasoning["format"] == "openai-encrypted"
    assert thinking.reasoning["scope"]["model"] == "gpt-5.5"
    assert (thinking.provider, thinking.model_provider, thinking.model) == ("codex", "mock", "gpt-5.5")
    call = next(b for b in session.blocks() if b.kind == "tool_use")
    assert call.tool is not None and call.tool["name"] == "exec_command"


def test_items_are_response_items_with_every_call_answered() -> None:
    session = sna_history.Store().import_file(rollout("apply-patch"))
    items = session.to_native("codex")
    assert isinstance(items, list) and all(isinstance(i, dict) for i in items)
    calls = [i["call_id"] for i in items if i["type"] in ("function_call", "custom_tool_call")]
    outputs = [i["call_id"] for i in items if i["type"] in ("function_call_output", "custom_tool_call_output")]
    assert calls and sorted(calls) == sorted(outputs)
    patch = next(i for i in items if i["type"] == "custom_tool_call")
    assert patch["input"].startswith("*** Begin Patch\n"), "raw input kept exactly"


def test_images_are_embeds_with_bytes() -> None:
    session = sna_history.Store().import_file(rollout("image"))
    block = next(b for b in session.blocks() if b.embeds)
    (embed_id, embed), = block.embeds.items()
    assert embed["mime"] == "image/png"
    data = session.embed(embed_id)
    assert isinstance(data, bytes) and data[1:4] == b"PNG"


def test_malformed_lines_are_reported_or_refused(tmp_path: Path) -> None:
    text = rollout("basic").read_text().splitlines()
    text.insert(2, '{"timestamp": "2026-12-02T15:47:40.000Z", "type": "response_item", "payload": ')
    bad = tmp_path / "rollout-bad.jsonl"
    bad.write_text("\n".join(text) + "\n")
    store = sna_history.Store()
    session = store.import_file(bad, "codex")
    report = session.import_report()
    assert [e.action for e in report.entries] == ["malformed"]
    assert "line 3" in report.entries[0].message
    with pytest.raises(sna_history.InvalidInputError) as info:
        store.import_file(bad, "codex", strict=True, session_id="strict")
    assert info.value.line == 3
    with pytest.raises(sna_history.NotFoundError):
        store.session("strict")
    claude = next((ROOT / "tests" / "fixtures" / "claude-code" / "basic").glob("*-*.jsonl"))
    with pytest.raises(sna_history.InvalidInputError, match="Claude Code history"):
        store.import_native("codex", claude)


def test_live_capture_from_exec_json_events() -> None:
    store = sna_history.Store()
    imported = store.import_file(rollout("reasoning-exec"))
    live = store.create_session()
    for line in (FIXTURES / "reasoning-exec" / "events.jsonl").read_text().splitlines():
        live.ingest("codex", json.loads(line))

    def said(session: sna_history.Session) -> list[tuple[str, str]]:
        return [(b.kind, b.content) for b in session.blocks() if b.actor == "assistant" and b.kind in ("text", "thinking")]

    assert said(live) == said(imported) and said(live)
    with pytest.raises(sna_history.InvalidInputError):
        live.ingest("codex", {"no": "type"})


def api_session(store: sna_history.Store, cwd: Path) -> sna_history.Session:
    session = store.create_session(id="0193c5a0-0000-7000-8000-0000000000c1", cwd=cwd)
    by = {"provider": "codex", "model_provider": "mock", "model": "gpt-5.5"}
    session.extend([
        {"actor": "user", "kind": "text", "content": "What is in ![shot](embed://shot)?",
         "embeds": {"shot": {"mime": "image/png", "name": "shot.png", "data": b"\x89PNG\r\n\x1a\nfake"}}},
        {"actor": "assistant", "kind": "thinking", "content": "Look at it.", **by,
         "reasoning": {"format": "openai-encrypted", "data": "gAAAAB-py",
                       "scope": {"provider": "codex", "model_provider": "mock", "model": "gpt-5.5"}}},
        {"actor": "assistant", "kind": "tool_use", "content": '{"cmd":"ls"}', "tool": {"call_id": "call_1", "name": "exec_command"}, **by},
        {"actor": "user", "kind": "tool_result", "content": "shot.png", "tool": {"call_id": "call_1"}},
        {"actor": "assistant", "kind": "text", "content": "A screenshot.", **by},
    ])
    return session


def test_prepare_resume_writes_a_legacy_rollout(tmp_path: Path) -> None:
    store = sna_history.Store()
    session = api_session(store, tmp_path)
    plan = session.prepare_resume("codex", codex_home=tmp_path / "codex", cwd=tmp_path, model_provider="mock")
    assert plan.session_id == session.id
    assert plan.argv == ["codex", "exec", "resume", session.id]
    (written,) = plan.files
    path = Path(written)
    assert path.parent.parent.parent.parent == tmp_path / "codex" / "sessions"
    assert path.name.startswith("rollout-") and path.name.endswith(f"-{session.id}.jsonl")
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    rows = lines(path)
    assert rows[0]["type"] == "session_meta" and rows[0]["payload"]["model_provider"] == "mock"
    assert all("ordinal" not in r for r in rows), "legacy mode"
    mirrors = [r["payload"]["type"] for r in rows if r["type"] == "event_msg"]
    assert "user_message" in mirrors and "agent_message" in mirrors
    items = [r["payload"] for r in rows if r["type"] == "response_item"]
    assert [i["type"] for i in items] == ["message", "reasoning", "function_call", "function_call_output", "message"]
    assert items[0]["content"][1]["image_url"].startswith("data:image/png;base64,")
    assert items[1]["encrypted_content"] == "gAAAAB-py"
    with pytest.raises(sna_history.InvalidInputError):
        session.prepare_resume("codex", codex_home=tmp_path / "codex", cwd=tmp_path, session_id="../x")


def test_foreign_reasoning_does_not_travel() -> None:
    store = sna_history.Store()
    session = api_session(store, Path("/home/dev/project"))
    export = session.export("codex", model_provider="openai", target_model="gpt-5.4")
    assert "gAAAAB-py" not in json.dumps(export.data)
    assert [e.action for e in export.report.entries] == ["dropped"]
    with pytest.raises(sna_history.LossyError):
        session.to_native("codex", model_provider="openai", target_model="gpt-5.4", strict=True)


def test_import_source_adds_only_what_a_rollout_gained(tmp_path: Path) -> None:
    original = rollout("reasoning-exec").read_text().splitlines()
    path = tmp_path / rollout("reasoning-exec").name
    path.write_text("\n".join(original[:-3]) + "\n")
    store = sna_history.Store(tmp_path / "h.db")
    session, outcome, added = store.import_source(path)
    assert outcome == "imported" and added == len(session)
    assert store.import_source(path)[1:] == ("unchanged", 0)
    path.write_text("\n".join(original) + "\n")
    again, outcome, added = store.import_source(path)
    assert (again.id, outcome) == (session.id, "appended") and added > 0
    assert again.to_native("codex", format="rollout") == lines(rollout("reasoning-exec"))


def test_source_unchanged_answers_from_the_files_look(tmp_path: Path) -> None:
    path = tmp_path / rollout("reasoning-exec").name
    path.write_bytes(rollout("reasoning-exec").read_bytes())
    os.utime(path, (1_700_000_000, 1_700_000_000))
    store = sna_history.Store(tmp_path / "h.db")
    assert store.source_unchanged(path) is False
    store.import_source(path)
    assert store.source_unchanged(path) is True
    assert store.source_unchanged(str(path)) is True
    with path.open("a") as f:
        f.write("\n")
    assert store.source_unchanged(path) is False
    with pytest.raises(sna_history.IoError, match="gone.jsonl"):
        store.source_unchanged(tmp_path / "gone.jsonl")
