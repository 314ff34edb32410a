"""A scripted mock of the OpenAI Chat Completions API, for Pi's `openai-completions` providers.

    python3 mock_openai_chat.py --script SCRIPT.json --log REQUESTS.jsonl --port-file PORT

Listens on 127.0.0.1 (an ephemeral port, written to --port-file once bound). Every request is
appended to --log as one JSON line: {"method", "path", "headers", "body"}.

`POST …/chat/completions` with `stream: true` answers with SSE chunks (`chat.completion.chunk`), as
shared/formats/pi.md §1.3 asks: `reasoning_content` deltas, `tool_calls` (id and name first, then the
arguments), a `finish_reason`, a usage chunk and `data: [DONE]`; without `stream` one
`chat.completion`. The script is `{"replies": [[item, ...], ...]}`, the n-th request getting the n-th
reply, with items

    {"type": "reasoning", "text": ...}                       reasoning_content
    {"type": "text", "text": ...}                            content
    {"type": "tool_call", "id": ..., "name": ..., "arguments": {...} or a JSON string}

once the replies run out, a short text. With `"side_text": TEXT` in the script, a request that
offers no tools (Qwen Code's titles and next-speaker checks) is answered with TEXT and takes no
reply. With `"usage": {...}` in the script, every reply reports that usage (Qwen Code's `/compress`
compresses only a conversation whose last prompt was larger than its summary). A paced reply (`{"items": [...], "pace": SECONDS}`, see
mock_common.Script) sends its chunks that many seconds apart, text a line at a time.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from http.server import BaseHTTPRequestHandler
from typing import Any

from mock_common import Script, recording_handler, serve

USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def arguments(item: dict[str, Any]) -> str:
    args = item.get("arguments", {})
    return args if isinstance(args, str) else json.dumps(args)


def pieces(text: str, split: bool) -> list[str]:
    parts = text.splitlines(keepends=True) if split else [text]
    return parts or [text]


def chunks(model: str, items: list[dict[str, Any]], split: bool = False, usage: dict[str, Any] | None = None) -> list[bytes]:
    """The SSE events of a streamed completion of `items`."""
    completion_id = "chatcmpl-mock" + uuid.uuid4().hex[:16]
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        body = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(body)}\n\n".encode()

    out = [chunk({"role": "assistant", "content": ""})]
    calls = 0
    for item in items:
        kind = item["type"]
        if kind == "reasoning":
            out += [chunk({"reasoning_content": t}) for t in pieces(item["text"], split)]
        elif kind == "text":
            out += [chunk({"content": t}) for t in pieces(item["text"], split)]
        elif kind == "tool_call":
            head = {"index": calls, "id": item["id"], "type": "function", "function": {"name": item["name"], "arguments": ""}}
            out.append(chunk({"tool_calls": [head]}))
            out.append(chunk({"tool_calls": [{"index": calls, "function": {"arguments": arguments(item)}}]}))
            calls += 1
        else:
            raise ValueError(f"cannot stream a {kind!r} item")
    out.append(chunk({}, "tool_calls" if calls else "stop"))
    last = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [], "usage": usage or USAGE}
    out.append(f"data: {json.dumps(last)}\n\n".encode())
    out.append(b"data: [DONE]\n\n")
    return out


def completion(model: str, items: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> dict[str, Any]:
    """The same reply as one non-streamed `chat.completion`."""
    text = "".join(i["text"] for i in items if i["type"] == "text")
    reasoning = "".join(i["text"] for i in items if i["type"] == "reasoning")
    calls = [
        {"id": i["id"], "type": "function", "function": {"name": i["name"], "arguments": arguments(i)}}
        for i in items
        if i["type"] == "tool_call"
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if reasoning:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = calls
    return {
        "id": "chatcmpl-mock" + uuid.uuid4().hex[:16],
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": usage or USAGE,
    }


def make_handler(script: Script, log_path: str) -> type[BaseHTTPRequestHandler]:
    class Handler(recording_handler(log_path)):  # type: ignore[misc]

        def not_found(self) -> None:
            self.reply(404, "application/json", b'{"error":{"message":"not here","type":"not_found"}}')

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self.record(None)
            self.not_found()

        def do_POST(self) -> None:  # noqa: N802
            body = self.read_body()
            if not self.path.split("?")[0].rstrip("/").endswith("/chat/completions"):
                self.not_found()
                return
            model = body.get("model", "mock-gpt") if isinstance(body, dict) else "mock-gpt"
            if script.side_text is not None and isinstance(body, dict) and not body.get("tools"):
                items, pace = [{"type": "text", "text": script.side_text}], 0.0
            else:
                items, pace = script.next_paced_reply()
            if not (isinstance(body, dict) and body.get("stream")):
                self.reply(200, "application/json", json.dumps(completion(model, items, script.usage)).encode())
                return
            self.reply_events(chunks(model, items, split=bool(pace), usage=script.usage), pace)

    return Handler


def main() -> int:
    return serve(__doc__, [{"type": "text", "text": "Done."}], make_handler)


if __name__ == "__main__":
    sys.exit(main())
