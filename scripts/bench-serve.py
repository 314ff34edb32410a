"""`sna serve` under load on 127.0.0.1 (BENCHMARKS.md, "sna serve").

    .venv/bin/python scripts/bench-serve.py [--turns 20] [--subscribers 100] [--seconds 5]

Uses the release `sna` (built here) with the pinned Codex CLI of tests/conformance against the
instant mock model. Reports, each against a floor measured in the same run:
1. event fan-out: for each event of N turns, the time from the moment the host recorded it (its
   timestamp, ms) to its arrival at each subscriber, with 1 subscriber (the floor) and with 100;
2. requests per second of the history routes (`/sessions/{id}/blocks`, `/switches`, `/native/…`,
   `/agent/sessions` with 50 sessions) against the static asset route `/assets/style.css` of the
   same server (the floor: what the HTTP stack alone answers), with `wrk` when it is installed,
   else a Python client (then the client is the limit, and the figures say so).
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "conformance"))

from helpers.common import make_project, stop  # noqa: E402
from helpers.mocks import start_mock  # noqa: E402
from helpers.runtimes import CODEX_MODEL, runtime_env  # noqa: E402
from helpers.serve import Server  # noqa: E402


def release_sna() -> Path:
    subprocess.run(["cargo", "build", "-q", "--release", "-p", "sna-cli"], cwd=ROOT, check=True)
    return ROOT / "target" / "release" / "sna"


def millis(timestamp: str) -> float:
    return datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp() * 1000


def fan_out(server: Server, subscribers: int, turns: int) -> list[float]:
    """Milliseconds from each event's timestamp to its arrival, at every subscriber."""
    streams = [server.events("bench") for _ in range(subscribers)]
    for i in range(turns):
        server.ok("POST", "/agent/send?session=bench&wait=1", {"message": f"Turn {i}."})
    for s in streams:
        s.wait_for("complete", turns)
    delays = []
    for s in streams:
        for event, arrived in zip(s.events, s.received_at):
            delays.append(arrived * 1000 - millis(event["timestamp"]))
        s.close()
    return delays


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def with_wrk(url: str, seconds: int) -> float:
    out = subprocess.run(["wrk", "-t2", "-c32", f"-d{seconds}s", url], capture_output=True, text=True, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("Requests/sec:"))
    return float(line.split()[1])


def with_python(server: Server, path: str, seconds: int) -> float:
    import http.client

    count = [0] * 8
    stop_at = time.monotonic() + seconds

    def worker(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.port)
        while time.monotonic() < stop_at:
            conn.request("GET", path)
            response = conn.getresponse()
            response.read()
            count[i] += 1
        conn.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(count) / seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--subscribers", type=int, default=100)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    sna = release_sna()
    tmp = Path(tempfile.mkdtemp(prefix="sna-bench-serve-"))
    mock, mock_proc = start_mock(tmp / "mock", {"replies": []}, "mock_openai.py")
    home = tmp / "home"
    env = runtime_env("codex", home, mock)
    server = Server(tmp / "history.db", env=env, home=home, sna=sna)
    try:
        subprocess.run([str(sna), "--db", str(tmp / "history.db"), "import", str(ROOT / "tests" / "fixtures" / "claude-code")], check=True, capture_output=True)
        for i in range(50):
            server.ok("POST", "/agent/sessions", {"id": f"listed-{i:02}"})
        server.ok("POST", "/agent/start?session=bench", {"provider": "codex", "model": CODEX_MODEL, "cwd": str(make_project(tmp))})
        server.ok("POST", "/agent/send?session=bench&wait=1", {"message": "Warm up."})
        one = fan_out(server, 1, args.turns)
        many = fan_out(server, args.subscribers, args.turns)
        print(f"fan-out, {args.turns} turns of Codex against the instant mock (ms from the event's timestamp to arrival):")
        for name, values in ((" 1 subscriber (floor)", one), (f"{args.subscribers} subscribers", many)):
            print(f"  {name}: median {statistics.median(values):.1f}, p95 {percentile(values, 95):.1f}, max {max(values):.1f} over {len(values)} deliveries")
        print(f"  median ratio {statistics.median(many) / max(statistics.median(one), 0.1):.2f}×")
        server.ok("POST", "/agent/kill?session=bench")

        longest = max(server.ok("GET", "/agent/sessions")["sessions"], key=lambda s: s["blockCount"])
        sid = longest["id"]
        routes = [
            ("/assets/style.css (floor)", "/assets/style.css"),
            (f"/sessions/{{id}}/blocks ({longest['blockCount']} blocks)", f"/sessions/{sid}/blocks"),
            ("/sessions/{id}/switches", f"/sessions/{sid}/switches"),
            ("/sessions/{id}/native/claude-code", f"/sessions/{sid}/native/claude-code"),
            ("/agent/sessions (57 sessions)", "/agent/sessions"),
        ]
        wrk = shutil.which("wrk")
        print(f"requests per second ({'wrk -t2 -c32' if wrk else 'Python client, 8 threads: the client is the limit'}, {args.seconds} s each):")
        floor = None
        for name, path in routes:
            _, body, _ = server.call("GET", path)
            size = len(body if isinstance(body, bytes) else json.dumps(body).encode())
            rate = with_wrk(server.url + path, args.seconds) if wrk else with_python(server, path, args.seconds)
            floor = floor or rate
            print(f"  {name}: {rate:,.0f}/s, {size / 1024:,.0f} KiB each = {rate * size / 2**20:,.0f} MiB/s ({rate / floor:.3f} of the floor's requests)")
    finally:
        server.stop()
        stop(mock_proc)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
