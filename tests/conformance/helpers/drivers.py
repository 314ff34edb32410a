"""The library under test in each language: a job (drivers/README.md) goes in, its result comes out.
The `drivers` fixture (conftest.py) hands the tests one runner per language."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Callable

from .common import HERE, cargo_executable

LANGUAGES = ["python", "node", "rust"]

Runner = Callable[[dict[str, Any], Path], dict[str, Any]]


def run_driver(argv: list[str], job: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """Runs a driver program on `job` (written to `tmp`) and gives what it printed."""
    path = tmp / "job.json"
    path.write_text(json.dumps(job))
    out = subprocess.run([*argv, str(path)], capture_output=True, text=True, timeout=120, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({out.returncode}): {out.stderr.strip()}")
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def runners() -> dict[str, Runner]:
    """`runners()[language](job, tmp)`: the job's result from that language's binding. The Rust
    driver (an example of the core crate) is built when first used."""
    from drivers.job import run_job

    def rust(job: dict[str, Any], tmp: Path) -> dict[str, Any]:
        exe = cargo_executable("sna-history", "example", "conformance_job")
        return run_driver([str(exe)], job, tmp)

    return {
        "python": lambda job, tmp: run_job(job),
        "node": lambda job, tmp: run_driver(["node", str(HERE / "drivers" / "job.mjs")], job, tmp),
        "rust": rust,
    }
