"""The two store backends the concurrency tests run on: a database file, and a database of its own
on the PostgreSQL server `SNA_TEST_POSTGRES_URL` names (scripts/test.sh starts a throwaway one;
the tests fail, not skip, without it)."""

from __future__ import annotations

import os
import re
import subprocess
import uuid
from pathlib import Path
from typing import Iterator

import pytest


def admin_url() -> str:
    url = os.environ.get("SNA_TEST_POSTGRES_URL")
    assert url, "SNA_TEST_POSTGRES_URL names the PostgreSQL server for these tests (scripts/postgres.sh start DIR prints one)"
    return url


def psql(url: str, sql: str) -> None:
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", sql], check=True, capture_output=True, text=True)


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh store location: a file path, or the URL of a new PostgreSQL database."""
    if request.param == "sqlite":
        yield str(tmp_path / "shared.db")
        return
    admin = admin_url()
    name = f"sna_conc_{uuid.uuid4().hex[:12]}"
    psql(admin, f"CREATE DATABASE {name}")
    try:
        # The same server and credentials, the new database's name in place of the admin's.
        yield re.sub(r"/[^/?]*(\?|$)", f"/{name}\\1", admin, count=1)
    finally:
        psql(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
