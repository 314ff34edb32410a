"""The history file stays readable and writable by older SQLite: Python's own `sqlite3` module (on
Debian 12 it is SQLite 3.40, older than the 3.43 that `contentless_delete` needs) opens a store the
project wrote, lists every table's columns, reads the search index, and deletes a block and a
session; the store then reads on as if the project had deleted them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import sna_history

from conftest import ROOT

TRANSCRIPT = next((ROOT / "tests" / "fixtures" / "claude-code" / "tools-thinking").glob("*-*.jsonl"))


def write_store(path: Path) -> tuple[str, int]:
    """A store with an imported Claude Code session (usage rows, tools) and two of our own."""
    with sna_history.Store(str(path)) as store:
        imported = store.import_file(str(TRANSCRIPT))
        for name in ("keep", "drop"):
            s = store.create_session(id=name)
            s.append(actor="user", kind="text", content=f"the {name} session talks about parsers")
            s.append(actor="assistant", kind="text", content=f"{name}: zebra words to search")
        assert store.usage(by="session").rows, "the imported session reports usage"
        return imported.id, len(imported.blocks())


def test_an_older_sqlite_lists_reads_and_deletes(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    imported, imported_blocks = write_store(path)

    conn = sqlite3.connect(path)
    print("SQLite of the Python sqlite3 module:", sqlite3.sqlite_version)
    conn.execute("PRAGMA foreign_keys = ON")
    tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    assert {"sessions", "blocks", "usage", "block_search", "store_meta"} <= set(tables)
    for table in tables:
        columns = [row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')]
        assert columns, f"{table} lists no column"
    assert "contentless_delete" not in " ".join(sql for (sql,) in conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL"))

    # The index answers a query of the older SQLite's own FTS5.
    hits = conn.execute("SELECT count(*) FROM block_search WHERE block_search MATCH 'zebra'").fetchone()[0]
    assert hits == 2

    # One block, then a whole session (its blocks, usage rows and index rows go with it).
    (keep_pk,) = conn.execute(
        "SELECT b.pk FROM blocks b JOIN sessions s ON s.rowid = b.session WHERE s.id = 'keep' ORDER BY b.pk DESC LIMIT 1"
    ).fetchone()
    conn.execute("DELETE FROM blocks WHERE pk = ?", (keep_pk,))
    conn.execute("DELETE FROM sessions WHERE id = ?", (imported,))
    conn.execute("DELETE FROM sessions WHERE id = 'drop'")
    conn.commit()
    assert conn.execute("SELECT count(*) FROM usage").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM block_search WHERE block_search MATCH 'zebra'").fetchone()[0] == 0
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.execute("INSERT INTO block_search (block_search) VALUES ('integrity-check')")
    conn.close()

    with sna_history.Store(str(path)) as store:
        assert [info.id for info in store.sessions()] == ["keep"]
        assert imported_blocks > 0
        assert store.search("zebra") == []
        assert [h.session_id for h in store.search("parsers")] == ["keep"]
        assert store.usage(by="session").rows == []
        # The project writes on after the older SQLite did.
        store.session("keep").append(actor="assistant", kind="text", content="zebra again")
        assert [h.session_id for h in store.search("zebra")] == ["keep"]
