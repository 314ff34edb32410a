"""A scripted mock of the OpenAI Responses API for driving the real Codex CLI offline.

    python3 mock_openai.py --script SCRIPT.json --log REQUESTS.jsonl --port-file PORT

Listens on 127.0.0.1 (an ephemeral port, written to --port-file once bound). Every request is
appended to --log as one JSON line: {"method", "path", "headers", "body"}.

`POST …/responses` answers with Responses SSE. The script is `{"replies": [[item, ...], ...]}`: the
n-th model request gets the n-th reply, each item sent as `response.output_item.done`, then
`response.completed`; once the replies run out, the answer is one short assistant message. An error reply (`{"status":
400, "error": {"error": {...}}}`, mock_common.Script) is answered with that status and body.
A GET on `…/responses` (a WebSocket attempt) gets a quick 404.
"""

from __future__ import annotations

import json
import sys
import uuid
from http.server import BaseHTTPRequestHandler
from typing import Any

from mock_common import ErrorReply, Script, recording_handler, serve


def stream(items: list[dict[str, Any]]) -> bytes:
    response_id = "resp_" + uuid.uuid4().hex[:16]
    out = [f"data: {json.dumps({'type': 'response.created', 'response': {'id': response_id}})}\n\n"]
    for item in items:
        out.append(f"data: {json.dumps({'type': 'response.output_item.done', 'item': item})}\n\n")
    usage = {
        "input_tokens": 10,
        "input_tokens_details": None,
        "output_tokens": 5,
        "output_tokens_details": None,
        "total_tokens": 15,
    }
    out.append(f"data: {json.dumps({'type': 'response.completed', 'response': {'id': response_id, 'usage': usage}})}\n\n")
    return "".join(out).encode()


def make_handler(script: Script, log_path: str) -> type[BaseHTTPRequestHandler]:
    class Handler(recording_handler(log_path)):  # type: ignore[misc]

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self.record(None)
            self.reply(404, "application/json", b'{"error":{"message":"not here","type":"not_found"}}')

        def do_POST(self) -> None:  # noqa: N802
            self.read_body()
            if not self.path.rstrip("/").endswith("/responses"):
                self.reply(404, "application/json", b'{"error":{"message":"not here","type":"not_found"}}')
                return
            try:
                items = script.next_reply()
            except ErrorReply as error:
                self.reply(error.status, "application/json", json.dumps(error.body).encode())
                return
            self.reply(200, "text/event-stream", stream(items))

    return Handler


def main() -> int:
    return serve(__doc__, [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}], make_handler)


if __name__ == "__main__":
    sys.exit(main())
