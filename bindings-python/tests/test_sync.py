"""Store.sync_to: a local history through a shared PostgreSQL database to another file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import sna_history
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests"))
import pgdb  # noqa: E402


def _history(path: Path) -> sna_history.Store:
    store = sna_history.Store(path)
    session = store.create_session(id="py-chat", title="Chat")
    session.append(actor="user", kind="text", content="what is ![d](embed://d)?", embeds={"d": {"mime": "image/png", "data": b"\x89PNG dot"}})
    session.append(actor="assistant", kind="text", content="a dot", provider="codex", model_provider="openai", model="gpt-5.4")
    return store


def _blocks(store: sna_history.Store) -> list[dict]:
    return [b.to_dict() for info in sorted(store.sessions(), key=lambda i: i.id) for b in store.session(info.id).blocks()]


def test_sync_through_postgres_keeps_blocks_and_embeds_and_copies_nothing_twice(tmp_path: Path) -> None:
    local = _history(tmp_path / "local.db")
    with pgdb.database("pysync") as url:
        shared = sna_history.Store(url)
        report = local.sync_to(shared, origin="laptop")
        assert isinstance(report, sna_history.SyncReport)
        assert (report.sessions, report.created, report.blocks, report.embeds, report.embed_bytes) == (1, 1, 2, 1, 8)
        assert report.conflicts == [] and report.target_ahead == []
        assert report.to_dict()["blocks"] == 2
        again = local.sync_to(shared, origin="laptop")
        assert (again.blocks, again.created, again.unchanged) == (0, 0, 1)

        other = sna_history.Store(tmp_path / "other.db")
        pulled = shared.sync_to(other)
        assert pulled.created == 1
        assert _blocks(other) == _blocks(local)
        assert other.session("py-chat").embed("d") == b"\x89PNG dot"
        info = other.sessions()[0]
        assert info.origin == "laptop" and info.title == "Chat"
        assert local.sessions()[0].origin is None

        # Both sides appended: reported, neither changed.
        local.session("py-chat").append(actor="user", kind="text", content="here")
        other.session("py-chat").append(actor="user", kind="text", content="there")
        shared.close()
        shared = sna_history.Store(url)
        local.sync_to(shared)
        conflict = other.sync_to(shared).conflicts
        assert [(c.session_id, c.seq, c.source_blocks, c.target_blocks) for c in conflict] == [("py-chat", 2, 3, 3)]
        assert shared.session("py-chat").blocks()[2].content == "here"
        shared.close()


def test_sync_refuses_itself_and_bad_arguments(tmp_path: Path) -> None:
    store = _history(tmp_path / "a.db")
    with pytest.raises(sna_history.InvalidInputError, match="same store"):
        store.sync_to(store)
    with pytest.raises(TypeError):
        store.sync_to(str(tmp_path / "b.db"))  # type: ignore[arg-type]
    with pytest.raises(sna_history.InvalidInputError, match="origin"):
        store.sync_to(sna_history.Store(tmp_path / "b.db"), origin="\n")
    assert len(store.store_id()) == 32
