"""`sna serve` under load and abuse, small: what scripts/bench-serve-load.py measures at full size,
asserting only what every client got (no timing): every subscriber gets every event in order, the
subscribers of a session do not each hold a thread of the server, slow clients do not keep other
requests from being answered, and requests the HTTP parser refuses are 4xx. The runtime is
fake_claude.py (turns that end at once)."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.common import make_project, private_env
from helpers.load import catch_up, in_order, memory_kib, ok, plain_requests, request, slow_clients, stream_sessions, subscribe
from helpers.serve import Server, fake_claude

TURNS, DELTAS = 3, 20
# A generous guard against a hang, not a timing.
GUARD = 120


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    home = tmp_path / "home"
    server = Server(tmp_path / "history.db", env=private_env(home), home=home, bins={"claude-code": fake_claude(tmp_path / "bin")})
    yield server
    server.stop()


def test_every_subscriber_gets_every_event_in_order(server: Server, tmp_path: Path) -> None:
    sessions = {"busy": 200, **{f"other-{i}": 2 for i in range(10)}}

    async def run() -> None:
        got = await asyncio.wait_for(stream_sessions(server.port, sessions, TURNS, make_project(tmp_path), DELTAS), GUARD)
        for session, received in got.items():
            assert len(received) == sessions[session]
            reference = await catch_up(server.port, session, TURNS)
            assert reference.completes() == TURNS and len(reference.deltas) == TURNS * DELTAS
            for one in received:
                assert in_order(one, reference, TURNS, DELTAS) is None, f"{session}: {in_order(one, reference, TURNS, DELTAS)}"

    asyncio.run(run())


def test_the_subscribers_of_a_session_do_not_each_hold_a_thread(server: Server, tmp_path: Path) -> None:
    async def run() -> None:
        await ok(server.port, "POST", "/agent/sessions", {"id": "busy"})
        await ok(server.port, "POST", "/agent/start?session=busy", {"provider": "claude-code", "cwd": str(make_project(tmp_path))})
        status = await ok(server.port, "GET", "/agent/status?session=busy")
        # 300 subscribers from now on, all waiting: nothing happens in the session.
        waiting = [asyncio.create_task(subscribe(server.port, "busy", 1)) for _ in range(300)]
        await asyncio.sleep(3)
        threads = memory_kib(server.proc.pid)["Threads"]
        assert threads < 100, f"{threads} threads for 300 waiting subscribers"
        # A turn reaches every one of them.
        await ok(server.port, "POST", "/agent/send?session=busy&wait=1", {"message": "Hello."})
        done = await asyncio.wait_for(asyncio.gather(*waiting), GUARD)
        assert all(one.completes() == 1 and one.cursors[-1] > status["cursor"] for one in done)
        assert len({tuple(one.cursors) for one in done}) == 1

    asyncio.run(run())


def test_slow_clients_do_not_keep_others_from_an_answer(server: Server, tmp_path: Path) -> None:
    async def run() -> None:
        await ok(server.port, "POST", "/agent/sessions", {"id": "busy"})
        await ok(server.port, "POST", "/agent/start?session=busy", {"provider": "claude-code", "cwd": str(make_project(tmp_path)), "extraArgs": ["--deltas", str(DELTAS)]})
        slow = await slow_clients(server.port, 60, "busy")
        try:
            watcher = asyncio.create_task(subscribe(server.port, "busy", TURNS))

            async def turns() -> None:
                for turn in range(TURNS):
                    await ok(server.port, "POST", "/agent/send?session=busy&wait=1", {"message": f"Turn {turn}."})

            answered, _ = await asyncio.wait_for(asyncio.gather(plain_requests(server.port, 50), turns()), GUARD)
            assert len(answered) == 50
            watched = await asyncio.wait_for(watcher, GUARD)
            assert in_order(watched, await catch_up(server.port, "busy", TURNS), TURNS, DELTAS) is None
        finally:
            await slow.close()
        assert (await request(server.port, "GET", "/info"))[0] == 200

    asyncio.run(run())


def raw(server: Server, data: bytes) -> bytes:
    """What the server answers to `data` on a connection of its own (until it closes it)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as conn:
        conn.sendall(data)
        out = b""
        while chunk := conn.recv(65536):
            out += chunk
    return out


def test_what_the_http_parser_refuses_is_4xx_and_the_server_goes_on(server: Server) -> None:
    host = f"Host: 127.0.0.1:{server.port}\r\nConnection: close\r\n"
    for data, status in [
        # Over the parser's 1,000 headers, or a head over its 2 MiB: hyper's 431 (with an empty body).
        (f"GET /info HTTP/1.1\r\n{host}{''.join(f'X-{i}: v{chr(13)}{chr(10)}' for i in range(1200))}\r\n", b"431"),
        (f"GET /info HTTP/1.1\r\n{host}X-Big: {'a' * 3_000_000}\r\n\r\n", b"431"),
        # A NUL or a space in the request line is not HTTP: 400.
        (f"GET /sessions/a\x00b/blocks HTTP/1.1\r\n{host}\r\n", b"400"),
        (f"GET /sessions/a b/blocks HTTP/1.1\r\n{host}\r\n", b"400"),
        # `..` sent as is reaches no file: the router has no such route.
        (f"GET /assets/../../Cargo.toml HTTP/1.1\r\n{host}\r\n", b"404"),
        (f"GET /assets/..%2F..%2FCargo.toml HTTP/1.1\r\n{host}\r\n", b"404"),
    ]:
        answer = raw(server, data.encode())
        assert answer.split(b" ", 2)[1] == status, (data[:80], answer[:200])
        assert b"[workspace]" not in answer
    # Over the server's 100 header fields, or a head of a megabyte: 431 with the JSON error shape.
    for data in [
        f"GET /info HTTP/1.1\r\n{host}{''.join(f'X-{i}: v{chr(13)}{chr(10)}' for i in range(200))}\r\n",
        f"GET /info HTTP/1.1\r\n{host}X-Big: {'a' * 1_000_000}\r\n\r\n",
    ]:
        head, _, body = raw(server, data.encode()).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 431"), head[:200]
        assert json.loads(body)["code"] == "TOO_LARGE", body[:300]
    # A header of 100 KB is within the limit and answered.
    assert raw(server, f"GET /info HTTP/1.1\r\n{host}X-Big: {'a' * 100_000}\r\n\r\n".encode()).startswith(b"HTTP/1.1 200")
