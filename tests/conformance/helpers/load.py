"""`sna serve` under load, with stdlib asyncio sockets: many subscribers of `/agent/events` on one
session while other sessions stream too, and slow clients (headers never finished, bodies trickled,
event streams never read) beside a client of plain requests. scripts/bench-serve-load.py reports
the figures; test_serve_load.py runs it smaller and asserts only what every client got.

The events come from fake_claude.py (`helpers.serve.fake_claude`), whose turns end at once, so that
what is measured is the server."""

from __future__ import annotations

import asyncio
import datetime
import json
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Received:
    """What one subscriber read: each event's cursor, type, delta text, and the milliseconds from
    its timestamp to its arrival."""

    cursors: list[int] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    deltas: list[str] = field(default_factory=list)
    delays: list[float] = field(default_factory=list)

    def completes(self) -> int:
        return self.types.count("complete")


def millis(timestamp: str) -> float:
    return datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp() * 1000


async def _headers(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    status = int((await reader.readline()).split()[1])
    headers = {}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers


async def request(port: int, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """One request on its own connection; the status and the JSON answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    data = json.dumps(body).encode() if body is not None else b""
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    writer.write(head.encode() + data)
    status, headers = await _headers(reader)
    payload = await reader.read()
    writer.close()
    if headers.get("transfer-encoding") == "chunked":
        payload = _unchunk(payload)
    return status, json.loads(payload) if payload else None


def _unchunk(payload: bytes) -> bytes:
    out, rest = b"", payload
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            break
        out, rest = out + rest[:size], rest[size + 2 :]
    return out


async def ok(port: int, method: str, path: str, body: Any = None) -> Any:
    status, answer = await request(port, method, path, body)
    assert status in (200, 201), f"{method} {path}: {status} {answer}"
    return answer


async def subscribe(port: int, session: str, turns: int, connected: asyncio.Event | None = None, counter: list[int] | None = None) -> Received:
    """Reads `/agent/events?session=…&since=0` until `turns` turns completed."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /agent/events?session={session}&since=0 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n".encode())
    status, headers = await _headers(reader)
    assert status == 200 and headers.get("transfer-encoding") == "chunked", (status, headers)
    if counter is not None:
        counter[0] += 1
        if connected is not None and counter[0] == counter[1]:
            connected.set()
    got = Received()
    text = ""
    try:
        while got.completes() < turns:
            size = int((await reader.readline()).strip(), 16)
            chunk = await reader.readexactly(size + 2)
            arrived = time.time() * 1000
            text += chunk[:-2].decode()
            while "\n\n" in text:
                message, text = text.split("\n\n", 1)
                data = "".join(line[5:].lstrip() for line in message.split("\n") if line.startswith("data:"))
                if not data:
                    continue  # a keepalive comment
                event = json.loads(data)
                got.cursors.append(event["cursor"])
                got.types.append(event["type"])
                if event["type"] == "assistant_delta":
                    got.deltas.append(event["delta"])
                got.delays.append(arrived - millis(event["timestamp"]))
    finally:
        writer.close()
    return got


def in_order(got: Received, reference: Received, turns: int, deltas: int) -> str | None:
    """Why `got` is not every event of `reference` in order (None when it is)."""
    if got.cursors != reference.cursors:
        missing = sorted(set(reference.cursors) - set(got.cursors))
        return f"{len(got.cursors)} events of {len(reference.cursors)}; missing {missing[:5]}…, order kept: {got.cursors == sorted(got.cursors)}"
    if got.deltas != [f"{i} " for _ in range(turns) for i in range(deltas)]:
        return "the deltas are not each turn's 0..N in order"
    return None


async def stream_sessions(port: int, sessions: dict[str, int], turns: int, cwd: Path, deltas: int) -> dict[str, list[Received]]:
    """Starts an agent (fake Claude Code) on each session and subscribes `sessions[id]` clients to
    it first; then sends `turns` messages to every session at once, one turn after the other per
    session. Every subscriber's events, by session."""
    for session in sessions:
        await ok(port, "POST", "/agent/sessions", {"id": session})
    connected = asyncio.Event()
    counter = [0, sum(sessions.values())]
    tasks = {s: [asyncio.create_task(subscribe(port, s, turns, connected, counter)) for _ in range(n)] for s, n in sessions.items()}
    await asyncio.wait_for(connected.wait(), 120)

    async def drive(session: str) -> None:
        await ok(port, "POST", f"/agent/start?session={session}", {"provider": "claude-code", "cwd": str(cwd), "extraArgs": ["--deltas", str(deltas)]})
        for turn in range(turns):
            await ok(port, "POST", f"/agent/send?session={session}&wait=1", {"message": f"Turn {turn}."})

    await asyncio.gather(*(drive(s) for s in sessions))
    return {s: await asyncio.gather(*ts) for s, ts in tasks.items()}


async def catch_up(port: int, session: str, turns: int) -> Received:
    """Every event of the session, read afterwards from the agent's kept events: the reference."""
    return await subscribe(port, session, turns)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else float("nan")


def memory_kib(pid: int) -> dict[str, int]:
    """The process's resident size now (VmRSS) and at its peak (VmHWM), in KiB, and its threads."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM", "Threads"):
            fields[name] = int(value.split()[0])
    return fields


async def plain_requests(port: int, count: int) -> list[float]:
    """`count` GET /info, one after the other, each on a new connection: milliseconds each."""
    times = []
    for _ in range(count):
        start = time.perf_counter()
        status, _ = await request(port, "GET", "/info")
        assert status == 200, status
        times.append((time.perf_counter() - start) * 1000)
    return times


@dataclass
class Slow:
    """The slow clients: their sockets and the trickling tasks."""

    sockets: list[socket.socket] = field(default_factory=list)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        for sock in self.sockets:
            sock.close()


async def slow_clients(port: int, count: int, session: str) -> Slow:
    """`count` slow clients, a third of each kind: headers never finished (a byte a second), a
    declared body trickled (a byte a second), and event streams of `session` that are never read
    (their receive buffers kept small, so that the server's writes to them stall)."""
    loop = asyncio.get_running_loop()
    slow = Slow()

    async def trickle(sock: socket.socket) -> None:
        while True:
            await asyncio.sleep(1)
            await loop.sock_sendall(sock, b"x")

    for i in range(count):
        kind = i % 3
        sock = socket.socket()
        if kind == 2:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await loop.sock_connect(sock, ("127.0.0.1", port))
        host = f"Host: 127.0.0.1:{port}\r\n"
        if kind == 0:
            await loop.sock_sendall(sock, f"GET /info HTTP/1.1\r\n{host}X-Slow: ".encode())
        elif kind == 1:
            await loop.sock_sendall(sock, f"POST /agent/sessions HTTP/1.1\r\n{host}Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{\"title\": \"".encode())
        else:
            # Never read from.
            await loop.sock_sendall(sock, f"GET /agent/events?session={session}&since=0 HTTP/1.1\r\n{host}\r\n".encode())
        if kind != 2:
            slow.tasks.append(asyncio.create_task(trickle(sock)))
        slow.sockets.append(sock)
    return slow
