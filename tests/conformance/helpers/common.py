"""What every part of the suite uses: the checkout's paths, the pinned CLIs and one run of a CLI with
a private HOME and every auto-update and non-essential traffic switched off, workspace executables
built by cargo, and a few shared values."""

from __future__ import annotations

import base64
import functools
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
ROOT = HERE.parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
BIN = HERE / "node_modules" / ".bin"

# Set for every CLI run: no self-update, no telemetry or other traffic, nothing of the real user's.
QUIET_ENV = {
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}

# Each runtime's program in node_modules/.bin.
PROGRAMS = {"claude-code": "claude", "codex": "codex", "opencode": "opencode", "pi": "pi", "gemini-cli": "gemini", "qwen-code": "qwen",
            "copilot-cli": "copilot"}
# The runtimes `sna serve`, `sna acp` and most host tests run.
FIRST_THREE = ("claude-code", "codex", "opencode")

# A 2×2 red PNG (the host tests' image) and an 8×8 one (the import and resume tests').
RED_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg=="
)
RED_PNG_8X8 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAEUlEQVR42mO4IyeHFTEMLQkAid1GAQVcagkAAAAASUVORK5CYII="
)


def make_project(root: Path) -> Path:
    """The project directory of the fixtures' scenarios: notes.txt and data.csv."""
    project = root / "project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "notes.txt").write_text("hello from notes\n")
    (project / "data.csv").write_text("a,b\n1,2\n")
    return project.resolve()


def cli(name: str) -> Path:
    """A pinned CLI installed by `npm ci` in tests/conformance (the test command does that)."""
    path = BIN / name
    if not path.exists():
        raise RuntimeError(f"{path} is missing: run `npm ci` in {HERE} (./scripts/test.sh does)")
    return path


def bins(runtimes: Iterable[str] = FIRST_THREE) -> dict[str, str]:
    """The host's `bins` option: each runtime's pinned program."""
    return {r: str(cli(PROGRAMS[r])) for r in runtimes}


def bin_flags(runtimes: Iterable[str] = FIRST_THREE) -> list[str]:
    """`--bin=RUNTIME=PATH` for `sna serve` and `sna acp`, one per runtime."""
    return [f"--bin={r}={path}" for r, path in bins(runtimes).items()]


def private_env(home: Path) -> dict[str, str]:
    """The environment every CLI run starts from: PATH, HOME=home, a TMPDIR inside it (made here),
    a plain locale, no proxy for the mocks, and QUIET_ENV."""
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "LANG": "C.UTF-8",
        "NO_PROXY": "127.0.0.1,localhost",
        **QUIET_ENV,
    }


def run_cli(name: str, args: list[str], *, env: dict[str, str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Runs a pinned CLI in its own process group (killed by PID group on timeout); fails on a
    non-zero exit with the CLI's output."""
    proc = subprocess.Popen(
        [str(cli(name)), *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(stdin, timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"{name} {' '.join(args)} timed out\nstdout: {out}\nstderr: {err}") from None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    result = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    if result.returncode != 0:
        raise AssertionError(f"{name} {' '.join(args)} exited {result.returncode}\nstdout: {out[-4000:]}\nstderr: {err[-4000:]}")
    return result


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Ends a process and its group, by PID."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    if proc.stderr:
        proc.stderr.close()


@functools.lru_cache(maxsize=None)
def cargo_executable(package: str, kind: str, name: str) -> Path:
    """Builds a target of the workspace (`kind` is `example` or `bin`) and returns its executable,
    once per process. Two pytest-xdist workers asking at once are safe: cargo holds a lock on the
    target directory, so the second waits and then finds the build done."""
    out = subprocess.run(
        ["cargo", "build", "-q", "-p", package, f"--{kind}", name, "--message-format=json"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"cannot build {name}:\n{out.stderr}")
    for line in out.stdout.splitlines():
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message.get("executable") and message["target"]["name"] == name:
            return Path(message["executable"])
    raise RuntimeError(f"cargo built no {name} executable")


def said(request: dict[str, Any]) -> str:
    """A request as one string, to look for what it carries."""
    return json.dumps(request, ensure_ascii=False)


def jsonl(records: list[Any]) -> str:
    """Records as compact JSON lines, as the runtimes write them."""
    return "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)


def wait_until(condition: Any, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)
