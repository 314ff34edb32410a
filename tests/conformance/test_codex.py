"""Conformance with the real Codex CLI (pinned in package.json) against a mock Responses API.

a) resume equivalence: `codex exec resume` of each fixture rollout and of our export of it send the
   same `input` to the model;
b) a session built through the Node API, written by `prepareResume`, resumes with exactly that
   conversation in the request's `input`;
c) `codex app-server` `thread/resume` with `path` pointing at our rollout resumes it, and with
   `history` (experimental upstream) carries our `items`;
d) a live `codex exec --json` run captured with `Session.ingest` matches the import of the rollout
   it wrote, conversation-wise.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import sna_history
from helpers.common import FIXTURES, RED_PNG_8X8, ROOT, cli, jsonl, make_project
from helpers.runtimes import codex_env, codex_home, run_codex


def rollouts() -> list[Path]:
    found = sorted((FIXTURES / "codex").glob("*/rollout-*.jsonl"))
    assert len(found) >= 5
    return found


def without_minted_ids(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items without the ids Codex mints afresh for each run (its per-turn context items) and
    without the harness passthrough Codex keeps in rollouts but does not send."""
    out = []
    for item in items:
        item = dict(item)
        item.pop("id", None)
        item.pop("internal_chat_message_metadata_passthrough", None)
        out.append(item)
    return out


def is_harness(item: dict[str, Any]) -> bool:
    """Codex's own context items: base instructions, skills/permissions, environment context."""
    if item.get("type") != "message" or item.get("role") not in ("developer", "user"):
        return False
    texts = [c.get("text", "") for c in item.get("content", [])]
    return item.get("role") == "developer" or any(t.startswith("<environment_context>") for t in texts)


@pytest.mark.parametrize("rollout", rollouts(), ids=lambda p: p.parent.name)
def test_resume_equivalence(rollout: Path, tmp_path: Path, openai_mock: Any) -> None:
    store = sna_history.Store()
    session = store.import_file(rollout)
    exported = session.to_native("codex", format="rollout")
    assert exported == [json.loads(line) for line in rollout.read_text().splitlines() if line.strip()]
    cwd = make_project(tmp_path)
    relative = rollout.name
    day = relative[len("rollout-"):len("rollout-") + 10].split("-")
    sent: dict[str, list[dict[str, Any]]] = {}
    # One HOME for both runs (its path shows in Codex's skills listing), emptied in between.
    home = tmp_path / "home"
    for variant, text in (("original", rollout.read_text()), ("exported", jsonl(exported))):
        shutil.rmtree(home, ignore_errors=True)
        mock = openai_mock([], name=variant)
        codex = codex_home(home / ".codex", mock)
        folder = codex / "sessions" / day[0] / day[1] / day[2]
        folder.mkdir(parents=True)
        (folder / relative).write_text(text)
        run_codex(
            ["exec", "resume", "--skip-git-repo-check", "--json", session.id, "Next question, please."],
            home=home,
            codex=codex,
            cwd=cwd,
        )
        requests = mock.responses_requests()
        assert len(requests) == 1, requests
        sent[variant] = requests[0]["input"]
    assert without_minted_ids(sent["exported"]) == without_minted_ids(sent["original"])
    # And our `items` are the history the CLI sent, before its fresh context and the new prompt.
    ours = session.to_native("codex")
    history = [i for i in sent["original"][1:] if not is_harness(i)][:-1]
    assert without_minted_ids([i for i in ours if not is_harness(i)]) == without_minted_ids(history)
    assert sent["original"][-1]["content"][0]["text"] == "Next question, please."


@pytest.mark.parametrize("turns", [1, 2])
def test_rolled_back_turns_are_left_out_as_codex_does(turns: int, tmp_path: Path, openai_mock: Any) -> None:
    """A `thread_rolled_back` line after the two-turn fixture: our `items` are the history the real
    CLI sends when it resumes that file."""
    rollout = next((FIXTURES / "codex" / "resume").glob("rollout-*.jsonl"))
    lines = [json.loads(line) for line in rollout.read_text().splitlines() if line.strip()]
    lines.append({
        "timestamp": "2026-12-02T15:50:00.000Z",
        "ordinal": lines[-1]["ordinal"] + 1,
        "type": "event_msg",
        "payload": {"type": "thread_rolled_back", "num_turns": turns},
    })
    session = sna_history.Store().import_native("codex", lines)
    cwd = make_project(tmp_path)
    home = tmp_path / "home"
    mock = openai_mock([])
    codex = codex_home(home / ".codex", mock)
    day = rollout.name[len("rollout-"):len("rollout-") + 10].split("-")
    folder = codex / "sessions" / day[0] / day[1] / day[2]
    folder.mkdir(parents=True)
    (folder / rollout.name).write_text(jsonl(session.to_native("codex", format="rollout")))
    run_codex(["exec", "resume", "--skip-git-repo-check", "--json", session.id, "Next question, please."], home=home, codex=codex, cwd=cwd)
    (request,) = mock.responses_requests()
    history = [i for i in request["input"][1:] if not is_harness(i)][:-1]
    ours = [i for i in session.to_native("codex") if not is_harness(i)]
    assert without_minted_ids(ours) == without_minted_ids(history)
    said = [c.get("text") for i in history for c in i.get("content", [])]
    assert ("Which word did I ask you to remember?" in said) is False
    assert ("Remember the word 'pineapple'." in said) is (turns == 1)


def test_node_built_session_resumes_with_that_conversation(tmp_path: Path, openai_mock: Any) -> None:
    cwd = make_project(tmp_path)
    png = tmp_path / "red.png"
    png.write_bytes(RED_PNG_8X8)
    mock = openai_mock([[{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Anything else?"}]}]])
    codex = codex_home(tmp_path / "home" / ".codex", mock)
    out = subprocess.run(
        ["node", str(Path(__file__).parent / "codex_session.mjs"), str(codex), str(cwd), str(png)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    plan = json.loads(out.stdout)
    assert plan["argv"] == ["codex", "exec", "resume", plan["sessionId"]]
    assert plan["env"] == {"CODEX_HOME": str(codex)}
    run_codex(
        ["exec", "resume", "--skip-git-repo-check", "--json", plan["sessionId"], "Thanks. One more thing?"],
        home=tmp_path / "home",
        codex=codex,
        cwd=cwd,
    )
    requests = mock.responses_requests()
    assert len(requests) == 1
    items = [i for i in requests[0]["input"][1:] if not is_harness(i)]
    image = "data:image/png;base64," + base64.b64encode(RED_PNG_8X8).decode()
    assert without_minted_ids(items) == [
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "What colour is "},
                {"type": "input_image", "image_url": image},
                {"type": "input_text", "text": "? Then look at the project."},
            ],
        },
        {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "**Looking** The image is red; now the files."}],
            "content": None,
            "encrypted_content": "gAAAAABapi-encrypted-reasoning==",
        },
        {"type": "function_call", "name": "exec_command", "arguments": '{"cmd":"ls"}', "call_id": "call_api_ls"},
        {"type": "function_call", "name": "exec_command", "arguments": '{"cmd":"cat notes.txt"}', "call_id": "call_api_cat"},
        {"type": "function_call_output", "call_id": "call_api_ls", "output": "data.csv\nnotes.txt\n"},
        {"type": "function_call_output", "call_id": "call_api_cat", "output": "hello from notes\n"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Red. Two files; notes.txt says hello."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Thanks. One more thing?"}]},
    ]


class AppServer:
    """A `codex app-server` over stdio (newline-delimited JSON-RPC without the "jsonrpc" field)."""

    def __init__(self, home: Path, codex: Path, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [str(cli("codex")), "app-server"],
            cwd=cwd,
            env=codex_env(home, codex),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        self.next_id = 1
        self.seen: list[dict[str, Any]] = []
        # A thread reads stdout: select() on the pipe misses lines already in Python's buffer.
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def read(self, timeout: float) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"codex app-server said nothing for {timeout}s; so far: {self.seen[-5:]}") from None
        if line is None:
            raise AssertionError(f"codex app-server exited; so far: {self.seen[-5:]}")
        message: dict[str, Any] = json.loads(line)
        self.seen.append(message)
        return message

    def request(self, method: str, params: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        rid = self.next_id
        self.next_id += 1
        self.send({"id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            message = self.read(max(0.1, deadline - time.monotonic()))
            if message.get("id") == rid and "method" not in message:
                if "error" in message:
                    raise AssertionError(f"{method} failed: {message['error']}")
                return message["result"]  # type: ignore[no-any-return]
            if "method" in message and "id" in message:
                # A request from the server (approvals): accept.
                self.send({"id": message["id"], "result": {"decision": "accept"}})

    def wait_until_idle(self, since: int = 0, timeout: float = 120) -> dict[str, Any]:
        """The first notification after `seen[since]` that ends the turn: `turn/completed`, or the
        thread going back to idle (0.169.0 does not always send the former), waiting if needed."""

        def ends(message: dict[str, Any]) -> bool:
            method = message.get("method")
            idle = method == "thread/status/changed" and message.get("params", {}).get("status", {}).get("type") == "idle"
            return method == "turn/completed" or idle

        for message in self.seen[since:]:
            if ends(message):
                return message
        deadline = time.monotonic() + timeout
        while True:
            message = self.read(max(0.1, deadline - time.monotonic()))
            if ends(message):
                return message
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": {"decision": "accept"}})

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


@pytest.mark.parametrize("mode", ["path", "history"])
def test_app_server_resumes_our_rollout(mode: str, tmp_path: Path, openai_mock: Any) -> None:
    cwd = make_project(tmp_path)
    store = sna_history.Store()
    session = store.import_file(next(p for p in rollouts() if p.parent.name == "reasoning-exec"))
    mock = openai_mock([])
    home = tmp_path / "home"
    codex = codex_home(home / ".codex", mock)
    # The host's path: prepare_resume writes the rollout, thread/resume opens it by path.
    plan = session.prepare_resume("codex", codex_home=codex, cwd=cwd)
    rollout = Path(plan.files[0])
    assert rollout.read_text() == jsonl(session.to_native("codex", format="rollout"))
    server = AppServer(home, codex, cwd)
    try:
        server.request("initialize", {"clientInfo": {"name": "sna_test", "title": None, "version": "0.0.1"}, "capabilities": {"experimentalApi": True}})
        server.send({"method": "initialized"})
        params: dict[str, Any] = {"threadId": session.id, "cwd": str(cwd), "approvalPolicy": "never", "sandbox": "danger-full-access"}
        if mode == "path":
            params["path"] = str(rollout)
        else:
            params["history"] = session.to_native("codex")
        result = server.request("thread/resume", params)
        thread_id = result["thread"]["id"]
        if mode == "path":
            assert thread_id == session.id
        since = len(server.seen)
        server.request("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "And now?", "text_elements": []}]})
        server.wait_until_idle(since)
    finally:
        server.close()
    requests = mock.responses_requests()
    assert len(requests) == 1
    sent = [i for i in requests[0]["input"][1:] if not is_harness(i)]
    ours = [i for i in session.to_native("codex") if not is_harness(i)]
    assert without_minted_ids(sent[:-1]) == without_minted_ids(ours)
    assert sent[-1]["content"][0]["text"] == "And now?"


def test_live_exec_capture_matches_the_rollout(tmp_path: Path, openai_mock: Any) -> None:
    cwd = make_project(tmp_path)
    mock = openai_mock(
        [
            [
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Listing** first."}], "content": None, "encrypted_content": "gAAAAABlive=="},
                {"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\": \"ls\"}", "call_id": "call_live_ls"},
            ],
            [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Two files here.", "annotations": []}], "phase": "final_answer"}],
        ]
    )
    home = tmp_path / "home"
    codex = codex_home(home / ".codex", mock)
    result = run_codex(["exec", "--skip-git-repo-check", "--json", "List the files."], home=home, codex=codex, cwd=cwd)
    events = [json.loads(line) for line in result.stdout.splitlines() if line.strip().startswith("{")]
    store = sna_history.Store()
    live = store.create_session()
    for event in events:
        live.ingest("codex", event)
    thread_id = next(e["thread_id"] for e in events if e["type"] == "thread.started")
    (rollout,) = list((codex / "sessions").rglob(f"rollout-*-{thread_id}.jsonl"))
    imported = store.import_file(rollout)

    def view(blocks: list[sna_history.Block]) -> list[tuple[str, str, str]]:
        return [(b.actor, b.kind, b.content) for b in blocks if b.actor == "assistant" and b.kind in ("text", "thinking")]

    assert view(live.blocks()) == view(imported.blocks()) == [
        ("assistant", "thinking", "**Listing** first."),
        ("assistant", "text", "Two files here."),
    ]
    live_results = [b.content for b in live.blocks() if b.kind == "tool_result"]
    file_results = [b.content for b in imported.blocks() if b.kind == "tool_result"]
    assert len(live_results) == len(file_results) == 1
    assert "notes.txt" in live_results[0] and "notes.txt" in file_results[0]
    assert imported.to_native("codex", format="rollout") == [json.loads(l) for l in rollout.read_text().splitlines() if l.strip()]
    assert ROOT.exists()
