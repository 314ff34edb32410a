"""The two store backends the concurrency tests run on: a database file, and a database of its own
on the PostgreSQL server `SNA_TEST_POSTGRES_URL` names (tests/pgdb.py)."""

from __future__ import annotations

import os
import signal
import subprocess
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


def run_workers(plan: list[tuple[str, list[str]]]) -> None:
    """Starts every worker at once (each in its own process group), waits for all, and fails
    naming each one that did not exit 0; a worker still running after 10 minutes is killed."""
    procs = [(name, subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, start_new_session=True)) for name, argv in plan]
    failures = []
    for name, proc in procs:
        try:
            _, err = proc.communicate(timeout=600)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if proc.returncode != 0:
            failures.append(f"{name} exited {proc.returncode}: {err}")
    assert not failures, failures
