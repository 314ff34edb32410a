"""Compactions and the context budget: `Session.compactions()`, the `compaction`, `context_window`
and `models` options, and a Python summarizer writing the text of the turns a replay folds."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

import sna_history
from sna_history import Block, Compaction, Store
from conftest import ROOT

COMPACT = ROOT / "tests" / "fixtures" / "claude-code" / "compact"
MODEL = {"provider": "claude-code", "model_provider": "anthropic", "model": "claude-opus-4-5"}


def transcript(directory: Path) -> Path:
    """The runtime's own transcript of a fixture set (not its events or the mock's requests)."""
    (path,) = [p for p in directory.glob("*.jsonl") if p.name not in {"events.jsonl", "requests.jsonl"}]
    return path


def long_session(store: Store, turns: int = 100, size: int = 12_000) -> sna_history.Session:
    """`turns` turns built through the API, each a prompt, a tool call, its result (`size` bytes)
    and an answer, attributed to Claude Code: far over a 100,000-token window."""
    session = store.create_session(id="long", cwd="/home/dev/project")
    blocks: list[dict[str, object]] = []
    for i in range(turns):
        call = f"toolu_{i:04}"
        blocks.append({"actor": "user", "kind": "text", "content": f"PROMPT-{i}: look at part {i} of the log"})
        blocks.append({"actor": "assistant", "kind": "tool_use", "content": json.dumps({"command": f"sed -n {i}p log"}),
                       "tool": {"call_id": call, "name": "Bash"}, **MODEL})
        blocks.append({"actor": "user", "kind": "tool_result", "content": f"{i} " * (size // 2), "tool": {"call_id": call, "is_error": False}})
        blocks.append({"actor": "assistant", "kind": "text", "content": f"ANSWER-{i}", **MODEL})
    session.extend(blocks)
    return session


class OutOfQuota(Exception):
    pass


def test_compactions_of_an_imported_compacted_transcript() -> None:
    session = Store().import_file(transcript(COMPACT))
    (compaction,) = session.compactions()
    assert isinstance(compaction, Compaction)
    assert compaction.runtime == "claude-code" and compaction.trigger == "manual"
    assert compaction.boundary_seq < compaction.summary_seq
    assert compaction.preserved and all(seq < compaction.boundary_seq for seq in compaction.preserved)
    assert "SUMMARY-MARKER" in compaction.summary
    assert session.blocks()[compaction.summary_seq].content.find("SUMMARY-MARKER") >= 0
    assert compaction.tokens_before is None or compaction.tokens_before > 0
    assert isinstance(compaction.created_at, dt.datetime) and compaction.created_at.utcoffset() == dt.timedelta(0)
    assert compaction.created_at == session.blocks()[compaction.boundary_seq].created_at
    data = compaction.to_dict()
    assert data["boundary_seq"] == compaction.boundary_seq and data["trigger"] == "manual" and data["preserved"] == compaction.preserved
    json.dumps(data)
    assert repr(compaction).startswith(f"Compaction(runtime=\"claude-code\", boundary_seq={compaction.boundary_seq}, ")
    assert compaction == session.compactions()[0]
    assert Store().create_session().compactions() == []


def test_the_compaction_option_chooses_where_a_replay_starts() -> None:
    session = Store().import_file(transcript(COMPACT))
    latest = session.export("codex", compaction="latest")
    assert [e.action for e in latest.report.entries].count("compacted") == 1
    assert latest.report.entries == session.export("codex").report.entries, "latest is the default"
    whole = session.export("codex", compaction="none")
    assert "compacted" not in [e.action for e in whole.report.entries]
    assert len(json.dumps(whole.data)) > len(json.dumps(latest.data))
    with pytest.raises(sna_history.InvalidInputError, match="compaction") as info:
        session.export("codex", compaction="oldest")
    assert info.value.field == "compaction"
    with pytest.raises(sna_history.InvalidInputError, match="above 0") as info:
        session.to_native("codex", context_window=0)
    assert info.value.field == "context_window"
    with pytest.raises(sna_history.InvalidInputError) as info:
        session.to_native("codex", context_window="big")
    assert info.value.field == "context_window"


def test_a_replay_over_its_window_folds_whole_turns_into_the_digest() -> None:
    session = long_session(Store())
    export = session.export("codex", context_window=100_000)
    text = json.dumps(export.data)
    assert "PROMPT-99" in text and "ANSWER-99" in text and "PROMPT-0:" not in text
    assert "are in the history store: session long, seq 0" in text
    entry = export.report.entries[0]
    assert entry.action == "degraded" and "folded into one summary to fit the context budget of" in entry.message
    with pytest.raises(sna_history.LossyError, match="context budget of"):
        session.export("codex", context_window=100_000, strict=True)


def test_a_model_file_bounds_a_model_the_table_does_not_know(tmp_path: Path) -> None:
    session = long_session(Store())
    # Without a window, a model the shipped table does not know is not bounded.
    assert "PROMPT-0:" in session.to_native_text("codex", target_model="mock-model")
    models = tmp_path / "models.json"
    models.write_text(json.dumps({"models": {"mock-model": {"context_window": 100_000, "max_input": 100_000, "max_output": 8_000}}}))
    export = session.export("codex", target_model="mock-model", models=str(models))
    assert "PROMPT-0:" not in json.dumps(export.data)
    assert "mock-model in the model table of" in export.report.entries[0].message
    with pytest.raises(sna_history.InvalidInputError, match="cannot read the model file") as info:
        session.export("codex", target_model="mock-model", models=str(tmp_path / "missing.json"))
    assert info.value.field == "models"


def test_a_summarizer_gets_whole_turns_and_writes_the_fold(tmp_path: Path) -> None:
    session = long_session(Store())
    seen: list[list[Block]] = []

    def summarize(blocks: list[Block]) -> str:
        seen.append(blocks)
        # Called with the GIL held: it may use the API, the same session included.
        assert session.blocks_range(0, 1)[0].content.startswith("PROMPT-0:")
        return f"MY-SUMMARY of {len(blocks)} blocks"

    export = session.export("codex", context_window=100_000, summarizer=summarize)
    ((*folded,),) = seen
    assert all(isinstance(b, Block) for b in folded)
    assert len(folded) % 4 == 0 and len(folded) >= 4, "whole turns"
    assert [b.seq for b in folded] == list(range(len(folded)))
    assert folded[0].content.startswith("PROMPT-0:") and folded[-1].content == f"ANSWER-{len(folded) // 4 - 1}"
    text = json.dumps(export.data)
    assert f"MY-SUMMARY of {len(folded)} blocks" in text and "in the history store" not in text
    assert f"PROMPT-{len(folded) // 4}:" in text, "the first turn not folded is replayed whole"
    # Every conversion entry point takes it.
    assert "MY-SUMMARY" in json.dumps(session.to_native("codex", context_window=100_000, summarizer=summarize))
    assert "MY-SUMMARY" in session.to_native_text("codex", context_window=100_000, summarizer=summarize)
    out = tmp_path / "out.jsonl"
    report = session.export_to(out, "codex", context_window=100_000, summarizer=summarize)
    assert report.entries[0].action == "degraded" and "MY-SUMMARY" in out.read_text()
    plan = session.prepare_resume("codex", home=tmp_path, context_window=100_000, summarizer=summarize)
    assert "MY-SUMMARY" in Path(plan.files[0]).read_text()
    # None is no summarizer: the digest.
    assert "in the history store" in session.to_native_text("codex", context_window=100_000, summarizer=None)


def test_what_a_summarizer_raises_is_raised_as_it_was_and_nothing_is_written(tmp_path: Path) -> None:
    session = long_session(Store())
    quota = OutOfQuota("the summarizer is out of quota")

    def failing(blocks: list[Block]) -> str:
        raise quota

    with pytest.raises(OutOfQuota) as info:
        session.export("codex", context_window=100_000, summarizer=failing)
    assert info.value is quota
    out = tmp_path / "out.jsonl"
    with pytest.raises(OutOfQuota):
        session.export_to(out, "codex", context_window=100_000, summarizer=failing)
    assert not out.exists(), "nothing is written"
    out.write_text("before")
    with pytest.raises(OutOfQuota):
        session.export_to(out, "codex", context_window=100_000, summarizer=failing)
    assert out.read_text() == "before", "an existing file is left as it was"
    with pytest.raises(OutOfQuota):
        session.prepare_resume("codex", home=tmp_path / "home", context_window=100_000, summarizer=failing)
    assert not (tmp_path / "home").exists() and session.binding("codex") is None
    # A replay that fits never calls it.
    session.export("codex", summarizer=failing)


def test_a_summarizer_must_be_a_callable_returning_str() -> None:
    session = long_session(Store(), turns=40)
    with pytest.raises(sna_history.InvalidInputError, match="must return a str, not int") as info:
        session.export("codex", context_window=100_000, summarizer=lambda blocks: 42)  # type: ignore[arg-type, return-value]
    assert info.value.field == "summarizer"
    with pytest.raises(sna_history.InvalidInputError, match="expected a callable") as info:
        session.export("codex", context_window=100_000, summarizer="summarize")  # type: ignore[arg-type]
    assert info.value.field == "summarizer"
