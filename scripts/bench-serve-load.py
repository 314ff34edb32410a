"""`sna serve` under load and abuse on 127.0.0.1 (docs/benchmarks.md, "sna serve under load").

    .venv/bin/python scripts/bench-serve-load.py [--subscribers 1000] [--sessions 50] [--turns 5]
        [--deltas 20] [--slow 200] [--requests 200] [--sna PATH]

Uses the release `sna` (built here unless --sna names one) and fake_claude.py as the runtime (turns
that end at once), so that the server is what is measured:
1. fan-out: `--subscribers` clients of `/agent/events` on one session while `--sessions` other
   sessions stream at once (a subscriber each); every subscriber's events are checked against the
   session's whole list (read afterwards), and the delay from each event's timestamp to its arrival
   is reported (p50/p99), with the server's resident memory (VmRSS now, VmHWM its peak);
2. slow clients: p95 of a plain `GET /info` (a new connection each) alone, then beside `--slow`
   slow clients (headers never finished, bodies trickled, event streams never read) while the busy
   session streams more turns to a subscriber that must get them all.
The client is one Python process: its own scheduling is in the delays (the figures say so).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "conformance"))

from helpers.common import make_project, private_env  # noqa: E402
from helpers.load import catch_up, in_order, memory_kib, ok, percentile, plain_requests, slow_clients, stream_sessions, subscribe  # noqa: E402
from helpers.serve import Server, fake_claude  # noqa: E402


def cpu_seconds(pid: int) -> float:
    """The user and system CPU time of the process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def release_sna() -> Path:
    subprocess.run(["nice", "-n", "10", "cargo", "build", "-q", "--release", "-p", "sna-cli"], cwd=ROOT, check=True)
    return ROOT / "target" / "release" / "sna"


async def run(server: Server, args: argparse.Namespace, cwd: Path) -> None:
    port, pid = server.port, server.proc.pid
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"sna serve, {args.turns} turns of {args.deltas} deltas per session, fake Claude Code (instant)")
    sessions = {"busy": args.subscribers, **{f"other-{i:02}": 1 for i in range(args.sessions)}}
    started, client, served = time.monotonic(), resource.getrusage(resource.RUSAGE_SELF), cpu_seconds(pid)
    got = await stream_sessions(port, sessions, args.turns, cwd, args.deltas)
    took = time.monotonic() - started
    used = resource.getrusage(resource.RUSAGE_SELF)
    client_cpu = used.ru_utime + used.ru_stime - client.ru_utime - client.ru_stime
    server_cpu = cpu_seconds(pid) - served
    wrong = 0
    for session, received in got.items():
        reference = await catch_up(port, session, args.turns)
        for one in received:
            if (why := in_order(one, reference, args.turns, args.deltas)) is not None:
                wrong += 1
                print(f"  {session}: {why}")
    busy = [d for r in got["busy"] for d in r.delays]
    others = [d for s, rs in got.items() if s != "busy" for r in rs for d in r.delays]
    memory = memory_kib(pid)
    events = len(got["busy"][0].cursors)
    print(f"1. fan-out: {args.subscribers} subscribers on one session + {args.sessions} sessions streaming ({took:.1f} s)")
    print(f"   {'':34} {'deliveries':>10} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for name, delays in ((f"busy session ({events} events each)", busy), (f"{args.sessions} other sessions", others)):
        print(f"   {name:34} {len(delays):>10} {statistics.median(delays):>8.1f} {percentile(delays, 99):>8.1f} {max(delays):>8.1f}")
    print(f"   subscribers missing an event or out of order: {wrong} of {sum(sessions.values())}")
    print(f"   server: VmRSS {memory['VmRSS'] / 1024:.0f} MiB, peak VmHWM {memory['VmHWM'] / 1024:.0f} MiB, {memory['Threads']} threads")
    print(f"   CPU meanwhile: the server {server_cpu:.1f} s, this client {client_cpu:.1f} s (of {took:.1f} s on {os.cpu_count()} cores)")

    floor = await plain_requests(port, args.requests)
    slow = await slow_clients(port, args.slow, "busy")
    await asyncio.sleep(2)
    more = args.turns + 3
    watcher = asyncio.create_task(subscribe(port, "busy", more))

    async def turns() -> None:
        for turn in range(3):
            await ok(port, "POST", "/agent/send?session=busy&wait=1", {"message": f"More {turn}."})

    beside, _ = await asyncio.gather(plain_requests(port, args.requests), turns())
    watched = await asyncio.wait_for(watcher, 120)
    await slow.close()
    why = in_order(watched, await catch_up(port, "busy", more), more, args.deltas)
    memory = memory_kib(pid)
    print(f"2. slow clients: {args.slow} (a third each: headers never finished, bodies trickled, event streams never read)")
    print(f"   {'GET /info, a connection each':34} {'requests':>10} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for name, times in (("alone (floor)", floor), (f"beside {args.slow} slow clients", beside)):
        print(f"   {name:34} {len(times):>10} {statistics.median(times):>8.2f} {percentile(times, 95):>8.2f} {max(times):>8.2f}")
    print(f"   3 more turns of the busy session meanwhile: its new subscriber got {'every event in order' if why is None else why}")
    print(f"   server: VmRSS {memory['VmRSS'] / 1024:.0f} MiB, peak VmHWM {memory['VmHWM'] / 1024:.0f} MiB, {memory['Threads']} threads")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--deltas", type=int, default=20)
    parser.add_argument("--slow", type=int, default=200)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--sna", type=Path)
    args = parser.parse_args()
    sna = args.sna or release_sna()
    tmp = Path(tempfile.mkdtemp(prefix="sna-bench-load-"))
    home = tmp / "home"
    server = Server(tmp / "history.db", env=private_env(home), home=home, sna=sna, bins={"claude-code": fake_claude(tmp / "bin")})
    try:
        asyncio.run(run(server, args, make_project(tmp)))
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
