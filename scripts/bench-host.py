"""The host's cost per turn, against an instant mock model (BENCHMARKS.md, "Host").

    .venv/bin/python scripts/bench-host.py [--turns 20]

Measures, with the pinned Claude Code of tests/conformance (run `npm install` there first):
1. the floor: one `claude -p --input-format stream-json` process driven directly, a line written
   per turn and the turn timed until its `result` line;
2. the same turns through `sna_history.Host` (`agent.send`): the difference of the medians is the
   time the host adds per turn;
3. turns 2-5 in a fresh process resumed per turn (`claude -p --resume ID`), the way an app without
   a kept-alive process goes on: the ratio to the kept-alive turn is why the host exists;
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "conformance"))

import sna_history  # noqa: E402
from conftest import QUIET_ENV, cli, make_project, start_mock, stop  # noqa: E402


def rss_kib(pid: int) -> int:
    """The resident size of `pid` and every process of its group, in KiB."""
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=20)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sna-bench-host-"))
    mock, mock_proc = start_mock(tmp / "mock", {"replies": []}, "mock_anthropic.py")
    try:
        cwd = make_project(tmp)
        home = tmp / "home"
        (home / "tmp").mkdir(parents=True)
        env = {"ANTHROPIC_BASE_URL": mock.url, "ANTHROPIC_API_KEY": "sk-ant-mock-key", "TMPDIR": str(home / "tmp"), **QUIET_ENV}
        full_env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "LANG": "C.UTF-8", **env}
        model = "claude-opus-5-5"

        # 1. The floor: the CLI driven directly.
        proc = subprocess.Popen(
            [str(cli("claude")), "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--model", model],
            cwd=cwd, env=full_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True,
        )
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
        direct = []
        session_id = None
        for i in range(args.turns):
            start = time.perf_counter()
            proc.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": f"Direct turn {i}."}}) + "\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            while True:
                event = json.loads(lines.get(timeout=120))
                session_id = event.get("session_id", session_id)
                if event.get("type") == "result":
                    break
            direct.append(time.perf_counter() - start)
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(30)

        # 2. Through the host.
        store = sna_history.Store(tmp / "history.db")
        before = own_rss_kib()
        with sna_history.Host(store, bins={"claude-code": str(cli("claude"))}, env=env, home=str(home)) as host:
            agent = host.start("bench", "claude-code", model=model, cwd=str(cwd))
            hosted = []
            for i in range(args.turns):
                start = time.perf_counter()
                agent.send(f"Hosted turn {i}.", timeout=120)
                hosted.append(time.perf_counter() - start)
            pid = agent.status().pid
            runtime_rss = rss_kib(pid) if pid else 0
            host_rss = own_rss_kib() - before

        # 3. A fresh process resumed per turn.
        fresh = []
        for i in range(4):
            start = time.perf_counter()
            subprocess.run(
                [str(cli("claude")), "-p", "--resume", str(session_id), f"Fresh turn {i}.", "--model", model, "--output-format", "json"],
                cwd=cwd, env=full_env, capture_output=True, timeout=120, check=True, start_new_session=True,
            )
            fresh.append(time.perf_counter() - start)
    finally:
        stop(mock_proc)
        shutil.rmtree(tmp, ignore_errors=True)

    floor = statistics.median(direct[1:])
    through = statistics.median(hosted[1:])
    kept = through
    print(f"turns 2-{args.turns}: direct median {floor * 1000:.1f} ms, through the host {through * 1000:.1f} ms, added {(through - floor) * 1000:+.1f} ms per turn")
    print(f"a fresh process resumed per turn (turns 2-5): median {statistics.median(fresh) * 1000:.0f} ms = {statistics.median(fresh) / kept:.1f}x the kept-alive turn")
    print(f"memory per live agent: runtime process group {runtime_rss / 1024:.0f} MiB resident; the host process gained {host_rss / 1024:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
