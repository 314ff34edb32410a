"""The host (`sna_history.Host`) driving the real Gemini CLI in its long-lived ACP mode (`gemini --acp`,
shared/formats/gemini-cli.md §6.2) against the mock Gemini API: turns in one process with a tool call
captured as the session log holds it, recovery after kill -9 through `session/load` (in the same clock
minute, the CLI's same-minute quirk), interrupts and images, model changes, and no process left behind.
test_host.py's style and helpers, for the runtime test_host.py does not run."""

from __future__ import annotations

import base64
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sna_history
from helpers.common import RED_PNG, make_project, said, wait_until
from helpers.host import Rig, asked_and_answered, rig_factory, send_in_background
from helpers.mocks import held
from helpers.processes import assert_gone
from helpers.runtimes import GEMINI_MODEL, runtime_env

RUNTIME = "gemini-cli"


def text_reply(text: str) -> list[dict[str, Any]]:
    return [{"text": text}]


def read_reply(path: str) -> list[dict[str, Any]]:
    """A model step that thinks, then calls read_file (signed, as Gemini 3 does)."""
    return [{"text": f"I should read {path} first.", "thought": True},
            {"functionCall": {"name": "read_file", "args": {"file_path": path}}, "thoughtSignature": "c2lnLXJlYWQtMQ=="}]


class GeminiRig(Rig):
    """The mock, a private HOME with Gemini CLI's settings (session cleanup off), the project, and the
    host options that point at them."""

    def start(self, host: sna_history.Host, session_id: str = "s1", **options: Any) -> sna_history.Agent:
        agent = host.start(session_id, RUNTIME, model=GEMINI_MODEL, cwd=str(self.cwd), **options)
        self.track(agent)
        return agent

    def paths(self) -> list[str]:
        """The paths of the main-turn requests (they name the model)."""
        return [r["path"] for r in self.mock.requests() if r["method"] == "POST" and r["body"] and r["body"].get("tools")]

    def log(self, native_id: str) -> Path:
        """The session log of the native session (the largest file naming it: a `session/load` leaves
        a small start-up file with the same short id)."""
        found = [p for p in (self.home / ".gemini" / "tmp").glob(f"*/chats/session-*-{native_id[:8]}.jsonl")
                 if json.loads(p.read_text().splitlines()[0]).get("sessionId") == native_id]
        assert found, f"no log of {native_id}"
        return max(found, key=lambda p: p.stat().st_size)


@pytest.fixture
def rig(tmp_path: Path, gemini_mock: Any) -> Iterator[Any]:
    """`rig(replies)`: a mock with those replies and a home set up for Gemini CLI. After the test, no
    process the host started may be left (checked by pid and process group)."""

    def build(replies: list[Any]) -> GeminiRig:
        mock = gemini_mock(replies)
        home = tmp_path / "home"
        return GeminiRig(RUNTIME, tmp_path, mock, home, make_project(tmp_path), runtime_env(RUNTIME, home, mock))

    yield from rig_factory(build)


def conversation(blocks: list[sna_history.Block], context: bool = True) -> list[tuple[Any, ...]]:
    """What was said (actor, kind, content, tool), without bookkeeping (status blocks); without the
    CLI's `<session_context>` message unless `context`."""
    out = []
    for b in blocks:
        if b.kind not in ("text", "thinking", "tool_use", "tool_result") or b.actor == "system":
            continue
        if not context and b.actor == "user" and b.kind == "text" and b.content.startswith("<session_context>"):
            continue
        out.append((b.actor, b.kind, b.content, json.dumps(b.tool, sort_keys=True) if b.tool else None))
    return out


def test_three_turns_in_one_process_capture_what_the_log_holds(rig: Any, tmp_path: Path) -> None:
    r = rig([read_reply("notes.txt"), text_reply("First: the notes say hello."), text_reply("Second answer."), text_reply("Third answer.")])
    store = sna_history.Store(tmp_path / "history.db")
    with r.host(store) as host:
        agent = r.start(host)
        pid = agent.status().pid
        turns = [agent.send(f"Message {i}: go on.", timeout=120) for i in range(3)]
        status = agent.status()
        assert status.spawns == 1 and status.pid == pid and status.alive and not status.busy
        assert [t.text for t in turns] == ["First: the notes say hello.", "Second answer.", "Third answer."]
        assert [t.resumed_via for t in turns] == [None, None, None]
        assert all(t.usage and t.usage["input_tokens"] > 0 for t in turns)
        native_id = status.native_id
        assert native_id
    requests = r.requests()
    assert len(requests) == 4
    # The tool's output reached the model, and each later turn carries the conversation so far.
    assert "hello from notes" in said(requests[1])
    assert "Message 0" in said(requests[2]) and "First: the notes say hello." in said(requests[2])
    assert all(s in said(requests[3]) for s in ["Message 0", "Message 1", "Second answer.", "hello from notes"])
    session = store.session("s1")
    assert session.binding(RUNTIME).native_id == native_id
    live = conversation(session.blocks())
    # Live capture records what a file import of the CLI's own log gives.
    assert live == conversation(store.import_file(r.log(native_id)).blocks())
    # The tokens too: what the live session counts is what the log counts, imported on its own (in
    # one store the log's copies of the responses count once, with the live session's).
    with sna_history.Store(tmp_path / "log.db") as alone:
        alone.import_file(r.log(native_id))
        counts = [(t.input, t.output, t.cache_read, t.cache_write, t.responses) for t in (store.usage(tz="UTC").totals, alone.usage(tz="UTC").totals)]
    assert counts[0] == counts[1] and counts[0][4] == 4, counts
    kinds = [(a, k) for a, k, _, _ in conversation(session.blocks(), context=False)]
    assert kinds == [("user", "text"), ("assistant", "thinking"), ("assistant", "tool_use"), ("user", "tool_result"), ("assistant", "text"),
                     ("user", "text"), ("assistant", "text"), ("user", "text"), ("assistant", "text")]
    blocks = session.blocks()
    (call,) = [b for b in blocks if b.kind == "tool_use"]
    (result,) = [b for b in blocks if b.kind == "tool_result"]
    assert call.tool["name"] == "read_file" and json.loads(call.content) == {"file_path": "notes.txt"}
    assert "hello from notes" in result.content and result.tool["call_id"] == call.tool["call_id"]
    events = list(agent.events())
    assert [e.cursor for e in events] == sorted(e.cursor for e in events)
    types = [e.type for e in events]
    assert types[0] == "started" and types.count("complete") == 3 and "tool_use" in types and "tool_result" in types
    assert "assistant_delta" in types and "thinking_delta" in types
    # The tool's blocks went out during the first turn, before its answer.
    assert types.index("tool_result") < types.index("assistant")


def test_a_killed_process_comes_back_through_session_load(rig: Any, tmp_path: Path) -> None:
    """Killed and resumed within seconds, so in the minute the CLI named its log for: `session/load`
    would fail there (the same-minute quirk) unless the driver avoids it."""
    r = rig([text_reply("Before the crash."), text_reply("After the crash."), text_reply("Still here.")])
    store = sna_history.Store(tmp_path / "history.db")
    with r.host(store) as host:
        agent = r.start(host)
        agent.send("Remember the word teal.", timeout=120)
        pid = agent.status().pid
        native_id = agent.status().native_id
        os.killpg(pid, signal.SIGKILL)
        wait_until(lambda: not agent.status().alive)
        assert_gone(pid)
        assert "exited" in [e.type for e in agent.events()]
        turn = agent.send("Which word?", timeout=120)
        r.track(agent)
        assert turn.resumed_via == "native" and turn.text == "After the crash."
        status = agent.status()
        assert status.spawns == 2 and status.pid != pid and status.native_id == native_id
        assert "resumed" in [e.type for e in agent.events()]
        assert agent.send("And now?", timeout=120).text == "Still here."
    last = said(r.requests()[-2])
    assert "Remember the word teal." in last and "Before the crash." in last and "Which word?" in last
    assert "After the crash." in said(r.requests()[-1])
    # The history is whole and nothing of the loaded session was recorded twice.
    said_blocks = [(a, k, c) for a, k, c, _ in conversation(store.session("s1").blocks(), context=False)]
    assert said_blocks == [("user", "text", "Remember the word teal."), ("assistant", "text", "Before the crash."),
                           ("user", "text", "Which word?"), ("assistant", "text", "After the crash."),
                           ("user", "text", "And now?"), ("assistant", "text", "Still here.")]


def test_interrupt_and_image(rig: Any, tmp_path: Path) -> None:
    release = tmp_path / "release"
    r = rig([held(release, text_reply("Too late.")), text_reply("It is red.")])
    store = sna_history.Store(tmp_path / "history.db")
    with r.host(store) as host:
        agent = r.start(host)
        pid = agent.status().pid
        worker, turns, _ = send_in_background(agent, "Think for a long time.")
        r.wait_for_requests(1)
        agent.interrupt()
        worker.join(60)
        release.touch()
        assert turns and turns[0].interrupted
        assert "interrupted" in [e.type for e in agent.events()]
        assert agent.status().alive and agent.status().pid == pid
        turn = agent.send("What colour is this?", images=[{"data": RED_PNG, "mime": "image/png"}], timeout=120)
        assert turn.text == "It is red." and agent.status().spawns == 1
        assert any(b.embeds for b in turn.blocks if b.actor == "user")
    assert base64.b64encode(RED_PNG).decode() in said(r.requests()[-1])
    # The CLI drops an interrupted turn from its log (and from what the model sees next); the
    # canonical history keeps what the user said.
    texts = [(a, c) for a, k, c, _ in conversation(store.session("s1").blocks(), context=False) if k == "text"]
    assert texts[0] == ("user", "Think for a long time.") and texts[-1] == ("assistant", "It is red.")
    assert "Think for a long time." not in said(r.requests()[-1])


def test_set_model_reaches_the_next_request_in_the_same_process(rig: Any, tmp_path: Path) -> None:
    r = rig([text_reply("One."), text_reply("Two.")])
    with r.host(sna_history.Store(tmp_path / "history.db")) as host:
        agent = r.start(host)
        agent.send("First.", timeout=120)
        agent.set_model("gemini-2.5-pro")
        agent.send("Second.", timeout=120)
        assert agent.status().spawns == 1 and agent.status().model == "gemini-2.5-pro"
    assert [p.split(":")[0].rsplit("/", 1)[-1] for p in r.paths()] == [GEMINI_MODEL, "gemini-2.5-pro"]


def test_a_process_killed_mid_turn_keeps_what_completed(rig: Any, tmp_path: Path) -> None:
    release = tmp_path / "release"
    r = rig([read_reply("notes.txt"), held(release, text_reply("Never seen.")), text_reply("Back again.")])
    store = sna_history.Store(tmp_path / "history.db")
    with r.host(store) as host:
        agent = r.start(host)
        worker, _, failure = send_in_background(agent, "Read the notes.")
        r.wait_for_requests(2)  # the tool ran; the answer after it is held
        wait_until(lambda: any(b.kind == "tool_result" for b in store.session("s1").blocks()))
        pid = agent.status().pid
        os.killpg(pid, signal.SIGKILL)
        worker.join(60)
        assert failure and isinstance(failure[0], sna_history.RuntimeFailedError), failure
        release.touch()
        kept = conversation(store.session("s1").blocks(), context=False)
        assert [(a, k) for a, k, _, _ in kept] == [("user", "text"), ("assistant", "thinking"), ("assistant", "tool_use"), ("user", "tool_result")]
        turn = agent.send("And now?", timeout=120)
        r.track(agent)
        assert turn.text == "Back again." and turn.resumed_via in ("native", "replay")
    last = said(r.requests()[-1])
    assert all(s in last for s in ["Read the notes.", "read_file", "hello from notes", "And now?"])


def test_a_session_built_elsewhere_goes_on_through_a_replayed_log(rig: Any, tmp_path: Path) -> None:
    """Blocks appended through the API, then Gemini CLI: the host writes the log where `--resume` finds
    it and the driver loads it; the replayed history is not recorded again."""
    r = rig([text_reply("Picked up.")])
    store = sna_history.Store(tmp_path / "history.db")
    session = store.create_session(id="plain", cwd=str(r.cwd))
    session.append(actor="user", kind="text", content="Built through the API.")
    session.append(actor="assistant", kind="text", content="Without any model named.")
    with r.host(store) as host:
        agent = r.start(host, session_id="plain")
        turn = agent.send("Go on.", timeout=120)
        assert turn.text == "Picked up." and turn.resumed_via == "replay"
        assert [(b.actor, b.content) for b in turn.blocks if b.kind == "text"] == [("user", "Go on."), ("assistant", "Picked up.")]
    (request,) = r.requests()
    assert "Built through the API." in said(request) and "Without any model named." in said(request)
    texts = [c for _, k, c, _ in conversation(store.session("plain").blocks(), context=False) if k == "text"]
    assert texts == ["Built through the API.", "Without any model named.", "Go on.", "Picked up."]


def shell_reply(command: str) -> list[dict[str, Any]]:
    return [{"functionCall": {"name": "run_shell_command", "args": {"command": command, "description": "make a file"}}, "thoughtSignature": "c2lnLXNoZWxs"}]


@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
def test_permission_requests_follow_the_permission_mode(mode: str, rig: Any, tmp_path: Path) -> None:
    """A shell command that writes asks for permission in the default mode: refused (nobody to ask);
    bypassPermissions runs it (YOLO mode: no request at all)."""
    r = rig([shell_reply("touch made.txt"), text_reply("Done.")])
    store = sna_history.Store(tmp_path / "history.db")
    with r.host(store) as host:
        agent = r.start(host, permission_mode=mode)
        assert agent.send("Make the file.", timeout=120).text == "Done."
    assert (r.cwd / "made.txt").exists() == (mode == "bypassPermissions")
    (result,) = [b for b in store.session("s1").blocks() if b.kind == "tool_result"]
    assert bool(result.tool.get("is_error")) == (mode == "default"), result.content


def test_asked_permissions_wait_for_an_answer(rig: Any, tmp_path: Path) -> None:
    """With ask_permissions, Gemini CLI's `session/request_permission` that the mode would refuse
    waits as a permission_needed event: refused, the command does not run and the turn goes on;
    allowed, it runs. Answering twice is NOT_FOUND."""
    r = rig([shell_reply("touch refused.txt"), text_reply("Not made."), shell_reply("touch allowed.txt"), text_reply("Made.")])
    store = sna_history.Store(tmp_path / "history.db")
    with r.host(store) as host:
        agent = r.start(host, ask_permissions=True)
        for allow, name, answer in ((False, "refused.txt", "Not made."), (True, "allowed.txt", "Made.")):
            data, turn = asked_and_answered(agent, f"Make {name}.", allow)
            assert f"touch {name}" in json.dumps(data["input"]) and data["call_id"], data
            assert turn.text == answer
            assert (r.cwd / name).exists() == allow
            with pytest.raises(sna_history.NotFoundError):
                agent.answer_permission(data["id"], allow)
        assert [e.data["allow"] for e in agent.events() if e.type == "permission_answered"] == [False, True]
    results = [b for b in store.session("s1").blocks() if b.kind == "tool_result"]
    assert [bool(b.tool.get("is_error")) for b in results] == [True, False], [b.content for b in results]
