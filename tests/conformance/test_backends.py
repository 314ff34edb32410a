"""The conformance suite's import and export checks on PostgreSQL.

The other modules of this suite import every fixture the real CLIs wrote, export it, and drive the
CLIs with the export (resume equivalence), on SQLite. Here every one of those fixtures is imported
into a database file and into a PostgreSQL database (`SNA_TEST_POSTGRES_URL`; scripts/test.sh
starts a throwaway server): the same blocks, the same export in every runtime and format, the same
fidelity reports and the same files written for resuming in each runtime. So what the CLIs accept
from one backend they get, byte for byte, from the other.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import sna_history
from helpers.common import FIXTURES, ROOT

sys.path.insert(0, str(ROOT / "tests"))
import pgdb  # noqa: E402


def sources() -> list[Path]:
    found = [p for p in (FIXTURES / "claude-code").glob("*/*.jsonl") if p.name not in ("events.jsonl", "requests.jsonl")]
    found += list((FIXTURES / "codex").glob("*/rollout-*.jsonl"))
    found += list((FIXTURES / "opencode").glob("*/export.json"))
    found += list((FIXTURES / "gemini-cli").glob("*/session-*.jsonl"))
    found += [p for p in (FIXTURES / "pi").glob("*/*.jsonl") if p.name not in ("events.jsonl", "requests.jsonl")]
    assert len(found) >= 20
    return sorted(found)


def exports(session: sna_history.Session) -> dict[str, object]:
    """Every export of the session, or the error it gives, by runtime and format."""
    out: dict[str, object] = {}
    for runtime in sna_history.runtimes():
        for fmt in sna_history.formats(runtime):
            try:
                out[f"{runtime}/{fmt}"] = session.to_native_text(runtime, format=fmt)
                out[f"{runtime}/{fmt} report"] = session.export(runtime, format=fmt).report.to_dict()
            except sna_history.SnaError as e:
                out[f"{runtime}/{fmt}"] = f"{type(e).__name__}: {e}"
    return out


def resume_files(session: sna_history.Session, home: Path) -> dict[str, bytes]:
    """The files `prepare_resume` writes for each runtime, by path below `home`."""
    out: dict[str, bytes] = {}
    for runtime in sna_history.runtimes():
        plan = session.prepare_resume(runtime, home=home / runtime, cwd="/home/dev/project")
        for file in plan.files:
            out[str(Path(file).relative_to(home))] = Path(file).read_bytes()
    return out


@pytest.mark.parametrize("source", sources(), ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_postgres_imports_and_exports_what_a_database_file_does(source: Path, tmp_path: Path) -> None:
    on_file = sna_history.Store(tmp_path / "history.db")
    with pgdb.database("conformance") as url:
        on_server = sna_history.Store(url)
        try:
            file_session, file_outcome, file_blocks = on_file.import_source(source)
            pg_session, pg_outcome, pg_blocks = on_server.import_source(source)
            assert (pg_outcome, pg_blocks) == (file_outcome, file_blocks) == ("imported", len(file_session))
            assert [b.to_dict() for b in pg_session.blocks()] == [b.to_dict() for b in file_session.blocks()]
            assert pg_session.import_report() == file_session.import_report()
            assert on_server.sessions()[0].to_dict() | {"created_at": None, "updated_at": None} == on_file.sessions()[0].to_dict() | {
                "created_at": None,
                "updated_at": None,
            }
            ours = exports(file_session)
            assert exports(pg_session) == ours
            assert resume_files(pg_session, tmp_path / "pg") == resume_files(file_session, tmp_path / "file")
            # Imported again unchanged, from either store: nothing to do.
            assert on_server.source_unchanged(source) and on_file.source_unchanged(source)
        finally:
            on_server.close()
