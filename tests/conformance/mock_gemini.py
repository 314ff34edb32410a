"""A scripted mock of the Gemini API (`v1beta`) for driving the real Gemini CLI offline.

    python3 mock_gemini.py --script SCRIPT.json --log REQUESTS.jsonl --port-file PORT

Listens on 127.0.0.1 (an ephemeral port, written to --port-file once the socket is bound).
Every request is appended to --log as one JSON line: {"method", "path", "headers", "body"}.
The CLI is pointed here with `GOOGLE_GEMINI_BASE_URL` (shared/formats/gemini-cli.md §1).

- `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` with `tools` (a main turn) answers
  with SSE, one `data: <GenerateContentResponse>` event per part of the next scripted reply, the last
  one with `finishReason: "STOP"`; each event carries `usageMetadata`, `modelVersion` (the model of
  the URL) and one `responseId`. The script is `{"replies": [[part, ...], ...]}` with Gemini parts
  as the API returns them (`{"text": ...}`, `{"text": ..., "thought": true}`, `{"functionCall":
  {"name", "args"}, "thoughtSignature": ...}`, ...; a `functionCall` without `id` is fine, the CLI
  mints one). Once the replies run out, the answer is a short text. A paced reply (`{"items":
  [...], "pace": SECONDS, "wait_for": PATH}`, see mock_common.Script) sends its events that many
  seconds apart, each (non-thought) text part cut into several pieces.
- Every other model call is a harness side request and takes no reply of the script:
  `:generateContent` (the model router, session summaries, classifiers) answers a JSON text shaped
  by `generationConfig.responseJsonSchema` / `responseSchema` when there is one (strings "mock",
  numbers 1 — so the router's `complexity_score` is valid —, booleans false), else the plain text
  "mock summary"; a `:streamGenerateContent` without `tools` streams "mock summary";
  `:countTokens` answers `{"totalTokens": 10}`.
"""

from __future__ import annotations

import json
import re
import sys
import uuid
from http.server import BaseHTTPRequestHandler
from typing import Any

from mock_common import Script, recording_handler, serve

USAGE = {"promptTokenCount": 11, "candidatesTokenCount": 7, "totalTokenCount": 18, "thoughtsTokenCount": 0}
SIDE_TEXT = "mock summary"
MODEL_PATH = re.compile(r"^/v1(?:beta|alpha)?/models/([^/:?]+):([A-Za-z]+)")


def response(model: str, response_id: str, parts: list[dict[str, Any]], finish: bool) -> dict[str, Any]:
    """One GenerateContentResponse (one SSE event, or the whole `:generateContent` answer)."""
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = "STOP"
    return {"candidates": [candidate], "usageMetadata": USAGE, "modelVersion": model, "responseId": response_id}


def pieces(text: str) -> list[str]:
    """Text cut after each line end, or a one-line text into up to four runs of words: the deltas of
    a paced reply (at least one piece; joined they give the text back)."""
    lines = text.splitlines(keepends=True)
    if len(lines) > 1:
        return lines
    words = re.findall(r"\S+\s*|\s+", text)
    if len(words) <= 1:
        return [text]
    size = -(-len(words) // 4)
    return ["".join(words[i : i + size]) for i in range(0, len(words), size)]


def split_part(part: dict[str, Any]) -> list[dict[str, Any]]:
    """A text part as several text parts; a signature goes with the last piece. Thought parts stay
    whole: the CLI records each streamed thought part as a thought of its own."""
    if not isinstance(part.get("text"), str) or part.get("thought"):
        return [part]
    texts = pieces(part["text"])
    if len(texts) == 1:
        return [part]
    flags = {k: v for k, v in part.items() if k not in ("text", "thoughtSignature")}
    out = [{"text": t, **flags} for t in texts]
    if "thoughtSignature" in part:
        out[-1]["thoughtSignature"] = part["thoughtSignature"]
    return out


def stream_events(model: str, parts: list[dict[str, Any]], split: bool = False) -> list[bytes]:
    """The SSE events of a streamed reply: one per part (per piece with `split`)."""
    if split:
        parts = [piece for part in parts for piece in split_part(part)]
    if not parts:
        parts = [{"text": ""}]
    response_id = "resp-mock" + uuid.uuid4().hex[:16]
    return [
        f"data: {json.dumps(response(model, response_id, [part], i == len(parts) - 1))}\n\n".encode()
        for i, part in enumerate(parts)
    ]


def sample(schema: Any, name: str = "") -> Any:
    """A plausible value for a JSON schema (Gemini's upper-case `type`s too)."""
    if not isinstance(schema, dict):
        return "mock"
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return sample(schema[key][0], name)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if str(k).lower() != "null"), "string")
    kind = str(kind).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {key: sample(sub, key) for key, sub in props.items()}
    if kind == "array":
        count = int(schema.get("minItems") or 0)
        return [sample(schema.get("items"), name) for _ in range(count)]
    if kind in ("integer", "number"):
        value = 1
        if isinstance(schema.get("minimum"), (int, float)):
            value = max(value, schema["minimum"])
        if isinstance(schema.get("maximum"), (int, float)):
            value = min(value, schema["maximum"])
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "mock"


def side_text(body: Any) -> str:
    """What a side request gets: JSON for a schema'd request, else plain text."""
    config = body.get("generationConfig") if isinstance(body, dict) else None
    config = config if isinstance(config, dict) else {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    if schema is not None:
        return json.dumps(sample(schema))
    if config.get("responseMimeType") == "application/json":
        return "{}"
    return SIDE_TEXT


def is_main_turn(path: str, body: Any) -> bool:
    """A request that takes a scripted reply: a streamed model call that declares tools."""
    return ":streamGenerateContent" in path and isinstance(body, dict) and bool(body.get("tools"))


def make_handler(script: Script, log_path: str) -> type[BaseHTTPRequestHandler]:
    class Handler(recording_handler(log_path)):  # type: ignore[misc]

        def not_found(self) -> None:
            error = {"error": {"code": 404, "message": f"{self.path} is not mocked", "status": "NOT_FOUND"}}
            self.reply(404, "application/json; charset=UTF-8", json.dumps(error).encode())

        def do_HEAD(self) -> None:  # noqa: N802 - http.server's naming
            self.record(None)
            self.send_response(404)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_GET(self) -> None:  # noqa: N802
            self.record(None)
            self.not_found()

        def do_POST(self) -> None:  # noqa: N802
            body = self.read_body(none_when_empty=True)
            match = MODEL_PATH.match(self.path)
            if not match:
                self.not_found()
                return
            model, method = match.group(1), match.group(2)
            if method == "countTokens":
                self.reply(200, "application/json; charset=UTF-8", json.dumps({"totalTokens": 10}).encode())
            elif method == "streamGenerateContent":
                if is_main_turn(self.path, body):
                    parts, pace = script.next_paced_reply()
                    self.reply_events(stream_events(model, parts, split=bool(pace)), pace)
                else:
                    self.reply_events(stream_events(model, [{"text": side_text(body)}]), 0)
            elif method == "generateContent":
                answer = response(model, "resp-mock" + uuid.uuid4().hex[:16], [{"text": side_text(body)}], True)
                self.reply(200, "application/json; charset=UTF-8", json.dumps(answer).encode())
            else:
                self.not_found()

    return Handler


def main() -> int:
    return serve(__doc__, [{"text": "Done."}], make_handler)


if __name__ == "__main__":
    sys.exit(main())
