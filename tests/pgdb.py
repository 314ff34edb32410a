"""A PostgreSQL database of its own for one Python test, on the server `SNA_TEST_POSTGRES_URL` names
(scripts/test.sh starts a throwaway one with scripts/postgres.sh); the tests fail, not skip,
without it. Used by the binding tests and the concurrency tests."""

from __future__ import annotations

import os
import re
import subprocess
import uuid
from contextlib import contextmanager
from typing import Iterator


def admin_url() -> str:
    url = os.environ.get("SNA_TEST_POSTGRES_URL")
    assert url, "SNA_TEST_POSTGRES_URL names the PostgreSQL server for these tests (scripts/postgres.sh start DIR prints one)"
    return url


def psql(url: str, sql: str) -> None:
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", sql], check=True, capture_output=True, text=True)


@contextmanager
def database(tag: str) -> Iterator[str]:
    """The URL of a new, empty database, dropped afterwards."""
    admin = admin_url()
    name = f"sna_{tag}_{uuid.uuid4().hex[:12]}"
    psql(admin, f"CREATE DATABASE {name}")
    try:
        # The same server and credentials, the new database's name in place of the admin's.
        yield re.sub(r"/[^/?]*(\?|$)", f"/{name}\\1", admin, count=1)
    finally:
        psql(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
