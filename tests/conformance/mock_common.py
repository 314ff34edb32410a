"""What the scripted mock model servers share: the reply script and the command line
(`--script SCRIPT.json --log REQUESTS.jsonl --port-file PORT`; 127.0.0.1, an ephemeral port written to
the port file once the socket is bound)."""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ErrorReply(Exception):
    """A reply of the script that is an HTTP error: `{"status": 400, "error": BODY}`, answered with
    that status and BODY as JSON (the provider's error, say a context overflow)."""

    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body


class Script:
    """The n-th model request gets the n-th reply; then `fallback`. A reply is a list of items, or
    `{"items": [...], "wait_for": PATH, "pace": SECONDS}` (each key but items optional): with
    `wait_for` the mock holds that reply until the file PATH exists (a test creates it to let the
    turn finish; at most 120 s), so that a turn can be caught in flight; with `pace` a mock that
    streams sends the reply's events that many seconds apart (text in several deltas), so that a
    client can be seen showing a reply as it streams in. A reply `{"status": CODE, "error": BODY}`
    is an HTTP error (raised as ErrorReply; the Anthropic and Responses mocks answer with it).
    With `hold_while` (a path, the script's key of that name) every reply waits while that file
    exists (at most 120 s): the chaos campaign holds whichever turn it wants to catch in flight."""

    def __init__(self, replies: list[Any], fallback: list[dict[str, Any]], hold_while: str | None = None, side_text: str | None = None) -> None:
        self.replies = replies
        self.fallback = fallback
        self.hold_while = hold_while
        # With `side_text`, a mock answers a request that offers no tools (a harness's side request:
        # a title, a next-speaker check) with it, without taking a reply of the script.
        self.side_text = side_text
        # With `usage` (the script's key), the usage every reply reports instead of the mock's own.
        self.usage: dict[str, Any] | None = None
        self.served = 0
        self.lock = threading.Lock()

    def next_reply(self) -> list[dict[str, Any]]:
        return self.next_paced_reply()[0]

    def next_paced_reply(self) -> tuple[list[dict[str, Any]], float]:
        """The next reply's items and its pace (0: all at once)."""
        with self.lock:
            index = self.served
            self.served += 1
        reply: Any = self.replies[index] if index < len(self.replies) else self.fallback
        if self.hold_while:
            deadline = time.monotonic() + 120
            while os.path.exists(self.hold_while) and time.monotonic() < deadline:
                time.sleep(0.05)
        pace = 0.0
        if isinstance(reply, dict):
            if reply.get("wait_for"):
                deadline = time.monotonic() + 120
                while not os.path.exists(reply["wait_for"]) and time.monotonic() < deadline:
                    time.sleep(0.05)
            if reply.get("status"):
                raise ErrorReply(int(reply["status"]), reply.get("error"))
            pace = float(reply.get("pace") or 0)
            reply = reply["items"]
        return reply, pace


def recording_handler(log_path: str) -> type[BaseHTTPRequestHandler]:
    """The base of every mock's request handler: HTTP/1.1, quiet, each request appended to
    `log_path` as one JSON line (`record`, or `read_body` for a request with one), and `reply` with a
    content type and length, or `reply_events` with server-sent events (plus what `reply_headers`
    adds to either)."""
    log_lock = threading.Lock()

    class Recording(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass

        def record(self, body: Any) -> None:
            entry = {"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body}
            with log_lock, open(log_path, "a", encoding="utf-8") as log:
                log.write(json.dumps(entry) + "\n")

        def read_body(self, none_when_empty: bool = False) -> Any:
            """The request's body parsed as JSON (`{"unparsed": text}` when it is not JSON; None when
            it is empty and `none_when_empty`), recorded with the request."""
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = None if none_when_empty and not raw else json.loads(raw)
            except ValueError:
                body = {"unparsed": raw.decode("utf-8", "replace")}
            self.record(body)
            return body

        def reply_headers(self) -> dict[str, str]:
            """Headers every reply of this mock carries."""
            return {}

        def reply(self, status: int, content_type: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(payload)))
            for name, value in self.reply_headers().items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def reply_events(self, events: list[bytes], pace: float = 0) -> None:
            """A 200 answer of server-sent events, written `pace` seconds apart (at once when 0)."""
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(sum(len(e) for e in events)))
            for name, value in self.reply_headers().items():
                self.send_header(name, value)
            self.end_headers()
            for i, event in enumerate(events):
                if i and pace:
                    time.sleep(pace)
                self.wfile.write(event)
                self.wfile.flush()

    return Recording


def serve(
    doc: str | None,
    fallback: list[dict[str, Any]],
    make_handler: Callable[[Script, str], type[BaseHTTPRequestHandler]],
) -> int:
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--script", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--port-file", required=True)
    args = parser.parse_args()
    with open(args.script, encoding="utf-8") as f:
        doc_script = json.load(f)
        script = Script(doc_script.get("replies", []), fallback, doc_script.get("hold_while"), doc_script.get("side_text"))
        script.usage = doc_script.get("usage")
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(script, args.log))
    with open(args.port_file + ".tmp", "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    os.replace(args.port_file + ".tmp", args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0
