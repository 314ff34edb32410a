"""A small client of `sna serve` for the tests and the benchmark: starts the server (the debug `sna`
built by cargo) in its own process group, calls its routes, reads its event streams."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from .common import HERE, QUIET_ENV, bin_flags, cargo_executable


class Server:
    """`sna serve` on 127.0.0.1 with a free port; `stop()` ends it (and so every runtime it ran)."""

    def __init__(
        self,
        db: Path,
        *,
        env: dict[str, str] | None = None,
        home: Path | None = None,
        args: list[str] | None = None,
        token: str | None = None,
        sna: Path | None = None,
        bins: dict[str, Path] | None = None,
    ) -> None:
        """`bins`: each runtime's program (default: the pinned CLIs)."""
        sna = sna or cargo_executable("sna-cli", "bin", "sna")
        flags = [f"--bin={r}={path}" for r, path in bins.items()] if bins is not None else bin_flags()
        argv = [str(sna), "--db", str(db), "serve", "--port", "0", *flags, *(args or [])]
        if home:
            argv += ["--home", str(home)]
        full_env = {**os.environ, **QUIET_ENV, **(env or {})}
        full_env.pop("SNA_TOKEN", None)
        if token:
            full_env["SNA_TOKEN"] = token
        self.token = token
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env, start_new_session=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode()
        if "listening on" not in line:
            self.stop()
            raise RuntimeError(f"sna serve did not start: {line}{self.stderr}")
        self.url = line.split("listening on ", 1)[1].strip().rstrip("/")
        self.port = int(self.url.rsplit(":", 1)[1])
        self.stderr = ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self.proc.stderr:
            self.stderr = self.proc.stderr.read().decode(errors="replace")
            self.proc.stderr.close()
        if self.proc.stdout:
            self.proc.stdout.close()

    def call(self, method: str, path: str, body: Any = None, *, headers: dict[str, str] | None = None, raw: bytes | None = None, auth: bool = True) -> tuple[int, Any, dict[str, str]]:
        """One request; the answer's status, its JSON (or bytes when it is not JSON) and headers."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        if auth and self.token and "Authorization" not in all_headers and "Cookie" not in all_headers:
            all_headers["Authorization"] = f"Bearer {self.token}"
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        conn.request(method, path, body=data, headers=all_headers)
        response = conn.getresponse()
        payload = response.read()
        answer_headers = {k.lower(): v for k, v in response.getheaders()}
        conn.close()
        try:
            parsed: Any = json.loads(payload)
        except ValueError:
            parsed = payload
        return response.status, parsed, answer_headers

    def ok(self, method: str, path: str, body: Any = None) -> Any:
        status, answer, _ = self.call(method, path, body)
        assert status in (200, 201), f"{method} {path}: {status} {answer}"
        return answer

    def events(self, session: str, since: int | None = None, last_event_id: int | None = None) -> EventStream:
        return EventStream(self, session, since, last_event_id)


class EventStream:
    """A subscriber of `/agent/events` reading on its own thread: `events` fills as they arrive."""

    def __init__(self, server: Server, session: str, since: int | None, last_event_id: int | None) -> None:
        self.events: list[dict[str, Any]] = []
        self.ids: list[int] = []
        self.comments = 0
        self.error: BaseException | None = None
        self.received_at: list[float] = []
        self.conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)
        query = f"/agent/events?session={session}" + (f"&since={since}" if since is not None else "")
        headers = {"Accept": "text/event-stream"}
        if server.token:
            headers["Authorization"] = f"Bearer {server.token}"
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        self.conn.request("GET", query, headers=headers)
        # Kept apart: the connection lets go of its socket once the response is read to its end.
        self.sock = self.conn.sock
        self.response = self.conn.getresponse()
        assert self.response.status == 200, self.response.read()
        assert self.response.getheader("content-type", "").startswith("text/event-stream")
        self.closed = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        event_id: int | None = None
        data: list[str] = []
        try:
            while not self.closed.is_set():
                line = self.response.fp.readline()
                if not line:
                    return
                text = line.decode().rstrip("\r\n")
                if text.startswith(":"):
                    self.comments += 1
                elif text.startswith("id:"):
                    event_id = int(text[3:].strip())
                elif text.startswith("data:"):
                    data.append(text[5:].lstrip(" "))
                elif text == "" and data:
                    self.events.append(json.loads("\n".join(data)))
                    self.ids.append(event_id if event_id is not None else -1)
                    self.received_at.append(time.time())
                    event_id, data = None, []
        except (OSError, ValueError) as e:
            if not self.closed.is_set():
                self.error = e

    def types(self) -> list[str]:
        return [e["type"] for e in self.events]

    def wait_for(self, kind: str, count: int = 1, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while self.types().count(kind) < count:
            assert self.error is None, self.error
            assert time.monotonic() < deadline, f"no {kind} event (×{count}) in {timeout}s; got {self.types()}"
            time.sleep(0.02)

    def close(self) -> None:
        """Disconnects: the socket is shut first, which wakes the reading thread (closing the
        response while that thread reads would wait for the next byte)."""
        self.closed.set()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.thread.join(10)
        self.response.close()
        self.conn.close()


def fake_claude(folder: Path) -> Path:
    """An executable `claude` in `folder` that runs fake_claude.py with this interpreter."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "claude"
    program.write_text(f"#!/bin/sh\nexec {sys.executable} {HERE / 'fake_claude.py'} \"$@\"\n")
    program.chmod(0o755)
    return program


def track(server: Server, session: str = "s1") -> dict[str, Any]:
    """The agent status of `session`; its runtime's PID is added to `server.pids` (the `serve`
    fixture checks they are all gone after the test)."""
    status = server.ok("GET", f"/agent/status?session={session}")
    if status.get("pid"):
        server.pids.add(status["pid"])  # type: ignore[attr-defined]
    return status  # type: ignore[no-any-return]
