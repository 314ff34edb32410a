"""The Claude Code adapter through the Python API: every source type, lossless export, the Messages
rebuild, malformed input, live capture and resume files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import sna_history
from conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "claude-code"


def transcript(name: str) -> Path:
    return next(p for p in (FIXTURES / name).glob("*.jsonl") if p.name not in ("events.jsonl", "requests.jsonl"))


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("kind", ["path", "str_path", "text", "bytes", "list"])
def test_every_source_type_imports_and_exports_losslessly(kind: str) -> None:
    path = transcript("tools-thinking")
    store = sna_history.Store()
    source: Any = {
        "path": path,
        "str_path": None,
        "text": path.read_text(),
        "bytes": path.read_bytes(),
        "list": records(path),
    }[kind]
    if kind == "str_path":
        session = store.import_file(str(path))
    elif kind == "path":
        session = store.import_file(path, "claude-code")
    else:
        session = store.import_native("claude-code", source, session_id=f"from-{kind}")
    data = session.to_native("claude-code")
    assert isinstance(data, list) and data == records(path)
    export = session.export("claude-code")
    assert export.data == data and export.report.entries == []
    kinds = [(b.actor, b.kind) for b in session.blocks() if b.kind != "status"]
    assert ("assistant", "thinking") in kinds and ("user", "tool_result") in kinds


def test_messages_format_is_a_request_body() -> None:
    store = sna_history.Store()
    session = store.import_file(transcript("parallel-tools"))
    body = session.to_native("claude-code", format="messages")
    assert set(body) == {"messages"}
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user", "assistant"]
    results = body["messages"][2]["content"]
    assert [r["type"] for r in results] == ["tool_result", "tool_result"]


def test_images_are_embeds_with_bytes() -> None:
    store = sna_history.Store()
    session = store.import_file(transcript("image"))
    block = next(b for b in session.blocks() if b.embeds)
    (embed_id, embed), = block.embeds.items()
    assert embed["mime"] == "image/png"
    data = session.embed(embed_id)
    assert isinstance(data, bytes) and data[1:4] == b"PNG" and len(data) == embed["size"]


def test_malformed_lines_are_reported_or_refused(tmp_path: Path) -> None:
    lines = transcript("basic").read_text().splitlines()
    lines.insert(3, '{"type": "user", "message": ')
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    store = sna_history.Store()
    session = store.import_file(bad, "claude-code")
    report = session.import_report()
    assert [e.action for e in report.entries] == ["malformed"]
    assert "line 4" in report.entries[0].message
    error = next(b for b in session.blocks() if b.kind == "error")
    assert error.content == '{"type": "user", "message": '
    with pytest.raises(sna_history.InvalidInputError) as info:
        store.import_file(bad, "claude-code", strict=True, session_id="strict")
    assert info.value.line == 4 and info.value.code == "INVALID_INPUT"
    with pytest.raises(sna_history.NotFoundError):
        store.session("strict")


def test_detection_refuses_what_is_not_a_transcript(tmp_path: Path) -> None:
    other = tmp_path / "notes.jsonl"
    other.write_text('{"hello": "world"}\n')
    with pytest.raises(sna_history.InvalidInputError, match="could not detect the runtime"):
        sna_history.Store().import_file(other)


def test_live_capture_from_stream_json_events() -> None:
    store = sna_history.Store()
    live = store.create_session()
    added = []
    for line in (FIXTURES / "tools-thinking" / "events.jsonl").read_text().splitlines():
        added.extend(live.ingest("claude-code", json.loads(line)))
    assert all(isinstance(b, sna_history.Block) for b in added)
    kinds = [(b.actor, b.kind) for b in live.blocks() if b.kind not in ("status", "error")]
    assert kinds[:3] == [("assistant", "thinking"), ("assistant", "text"), ("assistant", "tool_use")]
    thinking = next(b for b in live.blocks() if b.kind == "thinking")
    assert thinking.reasoning is not None and thinking.reasoning["format"] == "anthropic-signature"
    with pytest.raises(sna_history.InvalidInputError, match="type"):
        live.ingest("claude-code", {"no": "type"})


def test_prepare_resume_writes_the_transcript(tmp_path: Path) -> None:
    store = sna_history.Store()
    session = store.create_session(cwd=str(tmp_path))
    session.append(actor="user", kind="text", content="Hello there")
    session.append(actor="assistant", kind="text", content="Hi!", provider="claude-code", model_provider="anthropic", model="claude-opus-5-5")
    plan = session.prepare_resume("claude-code", config_dir=tmp_path / "config", cwd=tmp_path)
    assert plan.argv == ["claude", "--resume", plan.session_id]
    assert plan.env == {"CLAUDE_CONFIG_DIR": str(tmp_path / "config")}
    assert plan.cwd == str(tmp_path)
    (written,) = plan.files
    assert written.startswith(str(tmp_path / "config" / "projects"))
    rows = records(Path(written))
    assert [r["type"] for r in rows] == ["user", "assistant", "last-prompt"]
    assert oct(os.stat(written).st_mode & 0o777) == "0o600"
    with pytest.raises(sna_history.InvalidInputError, match="UUID"):
        session.prepare_resume("claude-code", home=tmp_path, cwd=tmp_path, session_id="../../x")


def test_strict_export_turns_loss_into_lossy_error() -> None:
    store = sna_history.Store()
    session = store.create_session()
    session.append(actor="user", kind="text", content="Think about it")
    session.append(actor="assistant", kind="thinking", content="unsigned thoughts")
    session.append(actor="assistant", kind="text", content="Done")
    export = session.export("claude-code")
    assert [e.action for e in export.report.entries] == ["dropped"]
    assert export.report.entries[0].block_id == session.blocks()[1].id
    with pytest.raises(sna_history.LossyError):
        session.to_native("claude-code", strict=True)
    text = session.to_native("claude-code", format="messages", foreign_reasoning="text")
    assert text["messages"][1]["content"][0] == {"type": "text", "text": "[reasoning] unsigned thoughts"}


def test_anthropic_message_bodies_import() -> None:
    store = sna_history.Store()
    body = {
        "system": "Be brief.",
        "messages": [
            {"role": "user", "content": "What is 2+2?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "calc", "input": {"expr": "2+2"}},
                ],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "4"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "4"}]},
        ],
    }
    session = store.import_native("claude-code", body)
    kinds = [(b.actor, b.kind) for b in session.blocks()]
    assert kinds == [("system", "text"), ("user", "text"), ("assistant", "tool_use"), ("user", "tool_result"), ("assistant", "text")]
    out = session.to_native("claude-code", format="messages")
    assert out["system"] == [{"type": "text", "text": "Be brief."}]
    assert [m["content"] for m in out["messages"]][0] == [{"type": "text", "text": "What is 2+2?"}]
    assert out["messages"][1]["content"][0]["input"] == {"expr": "2+2"}
