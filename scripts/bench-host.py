"""The host's cost per turn, against instant mock models (BENCHMARKS.md, "The host").

    .venv/bin/python scripts/bench-host.py [--turns 20] [--runtime claude-code|codex|opencode ...]

For each runtime, with the pinned CLIs of tests/conformance (run `npm install` there first):
1. the floor: the runtime's long-lived mode driven directly — Claude Code's stream-json (a line in,
   its `result` out), Codex's app-server (`turn/start` until `turn/completed`), OpenCode's server
   (`prompt_async`, then its event stream until the session is idle, as capture needs; the
   message call that answers when the turn is done, without events, is printed too);
2. the same turns through `sna_history.Host` (`agent.send`): the difference of the medians of turns
   2..N is the time the host adds per turn;
3. turns 2-5 in a fresh process resumed per turn (`claude -p --resume`, `codex exec resume`,
   `opencode run --session`), the way an app without a kept-alive process goes on: the ratio to the
   kept-alive turn is why the host exists;
4. memory: the resident size of the runtime's process group per live agent, and what the host
   process gains per agent.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "conformance"))

import sna_history  # noqa: E402
from helpers.common import cli, make_project, stop  # noqa: E402
from helpers.mocks import start_mock  # noqa: E402
from helpers.runtimes import CODEX_MODEL, OPENCODE_MODEL, runtime_env  # noqa: E402

MODEL = {"claude-code": "claude-opus-5-5", "codex": CODEX_MODEL, "opencode": OPENCODE_MODEL}
PROGRAM = {"claude-code": "claude", "codex": "codex", "opencode": "opencode"}


def rss_kib(pid: int) -> int:
    """The resident size of every process of the group `pid`, in KiB."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.getpgid(int(entry)) != pid:
                continue
            for line in Path(f"/proc/{entry}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except (OSError, ProcessLookupError):
            continue
    return total


def own_rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Lines:
    """A process's stdout, line by line, read on a thread."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.queue: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [self.queue.put(line) for line in proc.stdout or []], daemon=True).start()

    def until(self, done: Callable[[str], bool]) -> str:
        while True:
            line = self.queue.get(timeout=120)
            if done(line):
                return line


def timed(turns: int, turn: Callable[[int], None]) -> list[float]:
    times = []
    for i in range(turns):
        start = time.perf_counter()
        turn(i)
        times.append(time.perf_counter() - start)
    return times


def direct(runtime: str, turns: int, env: dict[str, str], cwd: Path) -> tuple[list[float], str]:
    """The floor: the turns through the runtime's long-lived mode, driven directly; and its thread id."""
    program = str(cli(PROGRAM[runtime]))
    popen: dict[str, Any] = {"cwd": cwd, "env": env, "stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL, "text": True, "start_new_session": True}
    if runtime == "claude-code":
        proc = subprocess.Popen([program, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--model", MODEL[runtime]], **popen)
        lines = Lines(proc)
        ids: list[str] = []

        def claude_turn(i: int) -> None:
            proc.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": f"Direct turn {i}."}}) + "\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            result = json.loads(lines.until(lambda line: '"type":"result"' in line))
            ids.append(result["session_id"])

        times = timed(turns, claude_turn)
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(30)
        return times, ids[-1]
    if runtime == "codex":
        proc = subprocess.Popen([program, "app-server"], **popen)
        lines = Lines(proc)
        counter = iter(range(1, 1_000_000))

        def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
            rid = next(counter)
            proc.stdin.write(json.dumps({"id": rid, "method": method, "params": params}) + "\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            reply: dict[str, Any] = json.loads(lines.until(lambda line: line.startswith(f'{{"id":{rid},')))
            return reply["result"]  # type: ignore[no-any-return]

        request("initialize", {"clientInfo": {"name": "bench", "title": None, "version": "0"}, "capabilities": {"experimentalApi": True}})
        proc.stdin.write(json.dumps({"method": "initialized"}) + "\n")  # type: ignore[union-attr]
        thread = request("thread/start", {"cwd": str(cwd)})["thread"]["id"]

        def codex_turn(i: int) -> None:
            request("turn/start", {"threadId": thread, "input": [{"type": "text", "text": f"Direct turn {i}.", "text_elements": []}]})
            lines.until(lambda line: '"method":"turn/completed"' in line)

        times = timed(turns, codex_turn)
        stop(proc)  # type: ignore[arg-type]
        return times, thread
    proc = subprocess.Popen([program, "serve", "--hostname", "127.0.0.1", "--port", "0"], **popen)
    line = Lines(proc).until(lambda line: "listening on http://" in line)
    base = "http://" + line.split("listening on http://", 1)[1].strip()

    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(base + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            text = response.read()
            answer: dict[str, Any] = json.loads(text) if text else {}
            return answer

    session = post("/session", {})["id"]
    provider, model = MODEL[runtime].split("/", 1)

    def body(i: int) -> dict[str, Any]:
        return {"parts": [{"type": "text", "text": f"Direct turn {i}."}], "model": {"providerID": provider, "modelID": model}}

    # With capture, as the host does: prompt_async, then the event stream until the session is idle.
    events: queue.Queue[str] = queue.Queue()

    def listen() -> None:
        with urllib.request.urlopen(base + "/event", timeout=600) as response:
            for raw in response:
                events.put(raw.decode())

    threading.Thread(target=listen, daemon=True).start()
    while '"server.connected"' not in events.get(timeout=30):
        pass

    def async_turn(i: int) -> None:
        post(f"/session/{session}/prompt_async", body(i))
        while '"session.idle"' not in events.get(timeout=120):
            pass

    times = timed(turns, async_turn)
    # Without capture: the message call answers when the turn is done. (Last, so that the session
    # is left as a finished turn leaves it: `opencode run --session` waits on one stopped while
    # busy with its title.)
    blocking = timed(turns, lambda i: post(f"/session/{session}/message", body(i)) and None)
    stop(proc)  # type: ignore[arg-type]
    print(f"opencode: turns 2-{turns} with POST /session/{{id}}/message (no event stream) {statistics.median(blocking[1:]) * 1000:.1f} ms")
    return times, session


def fresh(runtime: str, native_id: str, env: dict[str, str], cwd: Path) -> list[float]:
    """Turns 2-5 in a fresh process resumed per turn."""
    program = str(cli(PROGRAM[runtime]))
    commands = {
        "claude-code": lambda i: [program, "-p", "--resume", native_id, f"Fresh turn {i}.", "--model", MODEL[runtime], "--output-format", "json"],
        "codex": lambda i: [program, "exec", "resume", "--skip-git-repo-check", "--json", native_id, f"Fresh turn {i}."],
        "opencode": lambda i: [program, "run", "--session", native_id, "-m", MODEL[runtime], f"Fresh turn {i}."],
    }
    return timed(4, lambda i: subprocess.run(commands[runtime](i), cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=120, check=True, start_new_session=True) and None)


def hosted(runtime: str, turns: int, extra: dict[str, str], home: Path, cwd: Path, db: Path) -> tuple[list[float], int, int]:
    """The turns through the host; the runtime's resident size and what the host process gained."""
    store = sna_history.Store(db)
    before = own_rss_kib()
    with sna_history.Host(store, bins={runtime: str(cli(PROGRAM[runtime]))}, env=extra, home=str(home)) as host:
        agent = host.start("bench", runtime, model=MODEL[runtime], cwd=str(cwd))
        times = timed(turns, lambda i: agent.send(f"Hosted turn {i}.", timeout=120) and None)
        pid = agent.status().pid
        runtime_rss = rss_kib(pid) if pid else 0
        host_rss = own_rss_kib() - before
    store.close()
    return times, runtime_rss, host_rss


def bench(runtime: str, turns: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="sna-bench-host-"))
    server = "mock_openai.py" if runtime == "codex" else "mock_anthropic.py"
    mock, mock_proc = start_mock(tmp / "mock", {"replies": []}, server)
    try:
        cwd = make_project(tmp)
        home = tmp / "home"
        extra = runtime_env(runtime, home, mock)
        # The environment the host gives its processes: this process's, HOME, the runtime's own.
        # (The same for the floor: Codex alone is ~6 ms slower per turn with this machine's full
        # environment than with PATH and HOME only.)
        env = {**os.environ, "HOME": str(home), **extra}
        floor_times, native_id = direct(runtime, turns, env, cwd)
        host_times, runtime_rss, host_rss = hosted(runtime, turns, extra, home, cwd, tmp / "history.db")
        # Fresh processes get only PATH, HOME and the runtime's variables, as the conformance suite
        # runs them: with this machine's whole environment `opencode run --session` finishes the turn
        # and then does not exit.
        fresh_times = fresh(runtime, native_id, {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "LANG": "C.UTF-8", **extra}, cwd)
    finally:
        stop(mock_proc)
        shutil.rmtree(tmp, ignore_errors=True)
    floor = statistics.median(floor_times[1:])
    through = statistics.median(host_times[1:])
    again = statistics.median(fresh_times)
    print(f"{runtime}: turns 2-{turns} direct {floor * 1000:.1f} ms, through the host {through * 1000:.1f} ms "
          f"(added {(through - floor) * 1000:+.1f} ms); a fresh process per turn {again * 1000:.0f} ms = {again / through:.1f}x; "
          f"runtime {runtime_rss / 1024:.0f} MiB resident, host +{host_rss / 1024:.1f} MiB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--runtime", action="append", choices=sorted(MODEL))
    args = parser.parse_args()
    for runtime in args.runtime or sorted(MODEL):
        bench(runtime, args.turns)
    return 0


if __name__ == "__main__":
    sys.exit(main())
