"""The two store backends the concurrency tests run on: a database file, and a database of its own
on the PostgreSQL server `SNA_TEST_POSTGRES_URL` names (tests/pgdb.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import pgdb  # noqa: E402


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh store location: a file path, or the URL of a new PostgreSQL database."""
    if request.param == "sqlite":
        yield str(tmp_path / "shared.db")
        return
    with pgdb.database("conc") as url:
        yield url
