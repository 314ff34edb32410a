"""Which processes still run, read from /proc: by PID group, by HOME, by working directory or by a
marker in the environment. Each test looks only for its own (its own HOME, folder or marker), so
tests running at the same time in other pytest-xdist workers do not count."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path


def _processes() -> Iterator[tuple[int, Path]]:
    """Every process but this one: its PID and its /proc folder."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            yield int(entry.name), entry


def _zombie(entry: Path) -> bool:
    return (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"


def assert_gone(pid: int, timeout: float = 15) -> None:
    """Neither the process nor anything of its group runs any more (a zombie counts as running)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return
        assert time.monotonic() < deadline, f"the process group {pid} is still there"
        time.sleep(0.1)


def processes_with_home(home: Path, timeout: float = 5) -> list[int]:
    """The PIDs of processes still running with HOME=home (a CLI run's leftovers), after waiting up to
    `timeout` seconds for them to go; zombies do not count."""
    deadline = time.monotonic() + timeout
    while True:
        found = sorted(with_home(home))
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def with_home(home: Path, word: str = "") -> set[int]:
    """The processes running now with HOME=home whose command line holds `word`; zombies do not count."""
    needle = f"HOME={home}".encode()
    found = set()
    for pid, entry in _processes():
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0") and word.encode() in (entry / "cmdline").read_bytes():
                if not _zombie(entry):
                    found.add(pid)
        except (OSError, IndexError):
            continue
    return found


def processes_in(path: Path) -> list[int]:
    """The processes whose working directory is under `path`."""
    found = []
    for pid, entry in _processes():
        try:
            if Path(os.readlink(entry / "cwd")).is_relative_to(path):
                found.append(pid)
        except OSError:
            continue
    return found


def marked(marker: str) -> list[int]:
    """The processes whose environment carries `marker` (a unique `NAME=value` a test gave the
    process it started, which its children inherit)."""
    found = []
    needle = marker.encode()
    for pid, entry in _processes():
        try:
            if needle in (entry / "environ").read_bytes():
                found.append(pid)
        except OSError:
            continue
    return found
