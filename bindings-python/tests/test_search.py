"""Store.search: full-text search over every session, on a database file and on PostgreSQL."""

from __future__ import annotations

import datetime
import sys
from pathlib import Path
from typing import Iterator

import pytest

import sna_history
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests"))
import pgdb  # noqa: E402


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sna_history.Store]:
    if request.param == "sqlite":
        yield sna_history.Store(tmp_path / "h.db")
        return
    with pgdb.database("pysearch") as url:
        s = sna_history.Store(url)
        yield s
        s.close()


def _fill(store: sna_history.Store) -> None:
    a = store.create_session(id="a")
    a.append(actor="user", kind="text", content="How do I handle errors in the parser?", created_at="2026-11-01T10:00:00Z")
    a.append(actor="assistant", kind="text", content="Error handling: use the ? operator.", provider="claude-code", model="claude-opus-5-5", created_at="2026-11-02T10:00:00Z")
    a.append(actor="user", kind="text", content="数据库 and crème brûlée 🚀", created_at="2026-11-03T10:00:00Z")
    b = store.create_session(id="b")
    b.append(actor="assistant", kind="text", content="parsing JSON with serde", provider="codex", model="gpt-5.4", created_at="2026-11-20T10:00:00Z")


def test_search_finds_phrases_prefixes_unicode_and_filters(store: sna_history.Store) -> None:
    _fill(store)
    hits = store.search('"error handling"')
    assert [(h.session_id, h.seq, h.kind, h.actor) for h in hits] == [("a", 1, "text", "assistant")]
    hit = hits[0]
    assert isinstance(hit, sna_history.SearchHit)
    assert hit.snippet == "«Error handling»: use the ? operator."
    assert hit.score > 0 and hit.provider == "claude-code" and hit.model == "claude-opus-5-5"
    assert hit.created_at == datetime.datetime(2026, 11, 2, 10, tzinfo=datetime.timezone.utc)
    assert hit.block_id == store.session("a").blocks()[1].id
    assert hit.to_dict()["session_id"] == "a"
    assert sorted((h.session_id, h.seq) for h in store.search("pars*")) == [("a", 0), ("b", 0)]
    assert [h.seq for h in store.search("数据库 brulee 🚀")] == [2]
    assert [h.session_id for h in store.search("pars*", runtime="codex")] == ["b"]
    assert [h.session_id for h in store.search("pars*", session="a")] == ["a"]
    assert [h.seq for h in store.search("error OR pars*", model="claude-opus-5-5")] == [1]
    assert [h.session_id for h in store.search("pars*", since="2026-11-10")] == ["b"]
    since = datetime.datetime(2026, 11, 1, 12, tzinfo=datetime.timezone.utc)
    assert [h.seq for h in store.search("error OR pars*", since=since, until="2026-11-10", kinds=["text"])] == [1]
    assert len(store.search("pars*", limit=1)) == 1


def test_bad_queries_and_options_raise_invalid_input(store: sna_history.Store) -> None:
    _fill(store)
    with pytest.raises(sna_history.InvalidInputError, match="no closing quote") as err:
        store.search('"open')
    assert err.value.field == "query"
    with pytest.raises(sna_history.InvalidInputError, match="NOT at character 1"):
        store.search("NOT x")
    with pytest.raises(sna_history.InvalidInputError, match="limit"):
        store.search("x", limit=0)
    with pytest.raises(sna_history.InvalidInputError, match="kinds"):
        store.search("x", kinds=["poem"])
    with pytest.raises(sna_history.InvalidInputError, match="since"):
        store.search("x", since="yesterday")
    with pytest.raises(sna_history.InvalidInputError, match="since"):
        store.search("x", since=3)  # type: ignore[arg-type]
