"""The scripted mock model servers (mock_anthropic.py, mock_openai.py, mock_openai_chat.py,
mock_gemini.py): one started on a free port of 127.0.0.1 with its script and request log in a folder
of the test's, and the replies the tests script them with."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .common import HERE, stop


@dataclass
class Mock:
    url: str
    log: Path

    def requests(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        # The mock may be writing a line as it is read: only lines with their line break are whole.
        text = self.log.read_text()
        whole = text[: text.rfind("\n") + 1]
        return [json.loads(line) for line in whole.splitlines() if line.strip()]

    def responses_requests(self) -> list[dict[str, Any]]:
        """The bodies of the Responses calls (requests that carry `input`)."""
        return [
            r["body"]
            for r in self.requests()
            if r["method"] == "POST" and isinstance(r["body"], dict) and "input" in r["body"]
        ]

    def model_requests(self) -> list[dict[str, Any]]:
        """The bodies of the model calls (requests that carry `messages`), without a harness's side
        requests (OpenCode's title generation)."""
        from mock_anthropic import is_side_request

        return [
            r["body"]
            for r in self.requests()
            if r["method"] == "POST" and isinstance(r["body"], dict) and "messages" in r["body"] and not is_side_request(r["body"])
        ]

    def gemini_requests(self) -> list[dict[str, Any]]:
        """The bodies of Gemini CLI's main-turn calls (`:streamGenerateContent` with `tools`), without
        its side requests (router, summaries, classifiers, `:countTokens`)."""
        from mock_gemini import is_main_turn

        return [r["body"] for r in self.requests() if r["method"] == "POST" and is_main_turn(r["path"], r["body"])]

    def runtime_requests(self, runtime: str) -> list[dict[str, Any]]:
        """The model requests `runtime` sent to this mock, in order (without side requests)."""
        if runtime == "codex":
            return self.responses_requests()
        if runtime == "gemini-cli":
            return self.gemini_requests()
        if runtime == "qwen-code":
            # Its side requests (titles, next-speaker checks) offer no tools.
            return [r["body"] for r in self.requests() if r["method"] == "POST" and isinstance(r["body"], dict) and r["body"].get("tools")]
        return self.model_requests()


def start_mock(tmp: Path, script: dict[str, Any], server: str) -> tuple[Mock, subprocess.Popen[bytes]]:
    """Starts the mock `server` (a file name here) with `script`; the server takes a free port and
    writes it to a file in `tmp`, with its request log."""
    tmp.mkdir(parents=True, exist_ok=True)
    script_file = tmp / "script.json"
    script_file.write_text(json.dumps(script))
    log = tmp / "requests.jsonl"
    port_file = tmp / "port"
    proc = subprocess.Popen(
        [sys.executable, str(HERE / server), "--script", str(script_file), "--log", str(log), "--port-file", str(port_file)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 15
    while not port_file.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            raise RuntimeError(f"the mock server did not start: {proc.stderr.read().decode() if proc.stderr else ''}")
        time.sleep(0.05)
    return Mock(f"http://127.0.0.1:{port_file.read_text()}", log), proc


def mock_factory(tmp_path: Path, server: str) -> Iterator[Any]:
    """The body of the mock fixtures: yields `start(replies, name="mock", **script)`, which starts a
    mock in `tmp_path / name` (`script`: more keys of its script, `side_text`, `hold_while`); every
    mock started is stopped afterwards."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(replies: list[list[dict[str, Any]]], name: str = "mock", **script: Any) -> Mock:
        mock, proc = start_mock(tmp_path / name, {"replies": replies, **script}, server)
        procs.append(proc)
        return mock

    yield start
    for proc in procs:
        stop(proc)


# Replies, for the Anthropic and Responses mocks (Codex speaks the latter).


def text_reply(runtime: str, text: str) -> list[dict[str, Any]]:
    if runtime == "codex":
        return [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}], "phase": "final_answer"}]
    return [{"type": "text", "text": text}]


def tool_reply(runtime: str, call_id: str, command: str) -> list[dict[str, Any]]:
    if runtime == "codex":
        return [{"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": command}), "call_id": call_id}]
    name = "Bash" if runtime == "claude-code" else "bash"
    return [{"type": "tool_use", "id": call_id, "name": name, "input": {"command": command, "description": "Run it"}}]


def held(path: Path, items: list[dict[str, Any]]) -> dict[str, Any]:
    """A reply the mock holds until `path` exists (mock_common.Script)."""
    return {"wait_for": str(path), "items": items}


def summary_reply(runtime: str) -> list[dict[str, Any]]:
    """The answer to a runtime's own compaction request: a summary with a marker naming the runtime."""
    marker = f"SUMMARY-MARKER-{runtime}: the user listed the files and asked to remember PELICAN."
    if runtime == "claude-code":
        # Claude Code keeps the <summary> block of its summarizer's answer and drops the analysis.
        return text_reply(runtime, f"<analysis>\nThe user listed files.\n</analysis>\n\n<summary>\n{marker}\n</summary>")
    return text_reply(runtime, marker)


# A model request over the context window, as each provider answers it (HTTP 400).
OVERFLOW = {
    "anthropic": {"status": 400, "error": {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}}},
    "openai": {"status": 400, "error": {"error": {"message": "Your input exceeds the context window of this model. Please adjust your input and try again.", "type": "invalid_request_error", "param": "input", "code": "context_length_exceeded"}}},
}
