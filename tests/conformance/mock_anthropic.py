"""A scripted mock of the Anthropic Messages API for driving the real Claude Code CLI offline.

    python3 mock_anthropic.py --script SCRIPT.json --log REQUESTS.jsonl --port-file PORT

Listens on 127.0.0.1 (an ephemeral port, written to --port-file once the socket is bound).
Every request is appended to --log as one JSON line: {"method", "path", "headers", "body"}.

`POST /v1/messages` answers with Messages SSE. The script is `{"replies": [[block, ...], ...]}`:
the n-th model request gets the n-th reply (content blocks as the API returns them: text,
thinking with signature, tool_use); once the replies run out, the answer is a short text. A paced
reply (`{"items": [...], "pace": SECONDS}`, see mock_common.Script) streams its text a line at a
time, its events that many seconds apart; an error reply (`{"status": 400, "error": {"type":
"error", ...}}`) is answered with that status and body. The model
named in the request is echoed back. A side request of a harness — OpenCode's title generation,
recognised by its system prompt — gets a short title and takes no reply of the script; so does
Claude Code's one-token check of a model it switches to.
"""

from __future__ import annotations

import json
import sys
import uuid
from http.server import BaseHTTPRequestHandler
from typing import Any

from mock_common import ErrorReply, Script, recording_handler, serve


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def stream(model: str, blocks: list[dict[str, Any]]) -> bytes:
    return b"".join(stream_events(model, blocks))


def pieces(text: str) -> list[str]:
    """Text cut after each line end (at least one piece): the deltas of a paced reply."""
    parts = text.splitlines(keepends=True)
    return parts or [text]


def stream_events(model: str, blocks: list[dict[str, Any]], split: bool = False) -> list[bytes]:
    """The SSE events of a Messages stream of `blocks`; with `split`, text comes in several deltas."""
    message_id = "msg_mock" + uuid.uuid4().hex[:20]
    usage = {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}
    out = [
        sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage,
                },
            },
        )
    ]
    stop = "end_turn"
    for index, block in enumerate(blocks):
        kind = block["type"]
        if kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": block["thinking"]},
                {"type": "signature_delta", "signature": block["signature"]},
            ]
        elif kind == "text":
            start = {"type": "text", "text": ""}
            texts = pieces(block["text"]) if split else [block["text"]]
            deltas = [{"type": "text_delta", "text": t} for t in texts]
        elif kind == "tool_use":
            stop = "tool_use"
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
        else:
            raise ValueError(f"cannot stream a {kind!r} block")
        out.append(sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        for delta in deltas:
            out.append(sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        out.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(
        sse(
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}},
        )
    )
    out.append(sse("message_stop", {"type": "message_stop"}))
    return out


def is_side_request(body: Any) -> bool:
    """A harness's side request: OpenCode's title generation (no tools, a system prompt naming the
    title generator) or Claude Code's check of a model it is told to switch to (`max_tokens` 1)."""
    if not isinstance(body, dict) or body.get("tools"):
        return False
    if body.get("max_tokens") == 1:
        return True
    system = body.get("system")
    texts = [system] if isinstance(system, str) else [s.get("text", "") for s in system or [] if isinstance(s, dict)]
    return any("title generator" in t for t in texts)


def make_handler(script: Script, log_path: str) -> type[BaseHTTPRequestHandler]:
    class Handler(recording_handler(log_path)):  # type: ignore[misc]
        def reply_headers(self) -> dict[str, str]:
            return {"request-id": "req_mock_" + uuid.uuid4().hex[:12]}

        def do_HEAD(self) -> None:  # noqa: N802 - http.server's naming
            self.record(None)
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_GET(self) -> None:  # noqa: N802
            self.record(None)
            if self.path.startswith("/v1/models"):
                body = {"data": [{"type": "model", "id": "claude-opus-5-5", "display_name": "Mock"}], "has_more": False}
                self.reply(200, "application/json", json.dumps(body).encode())
            else:
                self.reply(404, "application/json", b'{"type":"error","error":{"type":"not_found_error","message":"no"}}')

        def do_POST(self) -> None:  # noqa: N802
            body = self.read_body()
            if self.path.startswith("/v1/messages/count_tokens"):
                self.reply(200, "application/json", b'{"input_tokens": 10}')
                return
            if not self.path.startswith("/v1/messages"):
                self.reply(404, "application/json", b'{"type":"error","error":{"type":"not_found_error","message":"no"}}')
                return
            model = body.get("model", "claude-opus-5-5") if isinstance(body, dict) else "claude-opus-5-5"
            try:
                blocks, pace = ([{"type": "text", "text": "Mock title"}], 0.0) if is_side_request(body) else script.next_paced_reply()
            except ErrorReply as error:
                self.reply(error.status, "application/json", json.dumps(error.body).encode())
                return
            if isinstance(body, dict) and body.get("stream") and pace:
                self.reply_events(stream_events(model, blocks, split=True), pace)
            elif isinstance(body, dict) and body.get("stream"):
                self.reply(200, "text/event-stream", stream(model, blocks))
            else:
                message = {
                    "id": "msg_mock" + uuid.uuid4().hex[:20],
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": blocks,
                    "stop_reason": "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                }
                self.reply(200, "application/json", json.dumps(message).encode())

    return Handler


def main() -> int:
    return serve(__doc__, [{"type": "text", "text": "Done."}], make_handler)


if __name__ == "__main__":
    sys.exit(main())
