"""The host (`sna_history.Host`) driving the real Qwen Code (`qwen --acp`) and GitHub Copilot CLI
(`copilot --acp`) in their long-lived Agent Client Protocol modes, against the mock Chat Completions
(Qwen) and Messages (Copilot, bring-your-own-key) servers: three turns in one process with a tool
call and reasoning captured as the runtime's own file holds them, kill -9 between turns and in the
middle of one and a native resume (`session/load`) after it, interrupt, an image, a model change
in the same process, permissions asked and answered, a compaction on request, a session built
elsewhere going on, and no process left behind. test_gemini_live.py's scenarios, for the two
runtimes that share its driver."""

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
from helpers.runtimes import COPILOT_MODEL, QWEN_MODEL, QWEN_SETTINGS, copilot_env, qwen_env

RUNTIMES = ["qwen-code", "copilot-cli"]
MODEL = {"qwen-code": QWEN_MODEL, "copilot-cli": COPILOT_MODEL}
# The model each is switched to (Qwen Code takes only the models its settings list).
OTHER_MODEL = {"qwen-code": "qwen3-coder-plus", "copilot-cli": "claude-opus-4.5"}
# A prompt that large makes Qwen Code's /compress compress (it compresses only a conversation whose
# last prompt was larger than its summary).
LARGE_USAGE = {"prompt_tokens": 60000, "completion_tokens": 50, "total_tokens": 60050}


def text(runtime: str, words: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": words}]


def shell(runtime: str, command: str, call_id: str = "call_1") -> list[dict[str, Any]]:
    """A model step that thinks, then runs `command` in the runtime's shell tool."""
    if runtime == "qwen-code":
        return [{"type": "reasoning", "text": f"I will run {command}."},
                {"type": "tool_call", "id": call_id, "name": "run_shell_command", "arguments": {"command": command, "description": "Run it"}}]
    return [{"type": "thinking", "thinking": f"I will run {command}.", "signature": "c2lnLWNvcGlsb3Q="},
            {"type": "tool_use", "id": f"toolu_{call_id}", "name": "bash", "input": {"command": command, "description": "Run it"}}]


def read_notes(runtime: str, cwd: Path) -> list[dict[str, Any]]:
    """A model step that thinks, then reads notes.txt (Qwen Code with read_file: its shell tool
    now and then reports a command's output empty under load)."""
    if runtime == "qwen-code":
        return [{"type": "reasoning", "text": "I will read the notes."},
                {"type": "tool_call", "id": "call_1", "name": "read_file", "arguments": {"file_path": str(cwd / "notes.txt")}}]
    return shell(runtime, "cat notes.txt")


class AcpRig(Rig):
    """The mock, a private HOME with the runtime's settings, the project, and the host options."""

    def start(self, host: sna_history.Host, session_id: str = "s1", **options: Any) -> sna_history.Agent:
        agent = host.start(session_id, self.runtime, model=MODEL[self.runtime], cwd=str(self.cwd), **options)
        self.track(agent)
        return agent

    def requests(self) -> list[dict[str, Any]]:
        """The main-turn model requests (those that offer tools), without side requests."""
        return [r["body"] for r in self.mock.requests() if r["method"] == "POST" and isinstance(r["body"], dict) and r["body"].get("tools")]

    def log(self, native_id: str) -> Path:
        """The runtime's own file of the session."""
        if self.runtime == "qwen-code":
            found = list((self.home / ".qwen" / "projects").glob(f"*/chats/{native_id}.jsonl"))
            assert len(found) == 1, found
            return found[0]
        return self.home / ".copilot" / "session-state" / native_id / "events.jsonl"


class Rigs:
    """`rig(replies, **script)` makes the test's rig; `rig.runtime` names the runtime first, so that
    the replies can be the runtime's."""

    def __init__(self, runtime: str, build: Any, cwd: Path) -> None:
        self.runtime = runtime
        self.build = build
        self.cwd = cwd

    def __call__(self, replies: list[Any], **script: Any) -> AcpRig:
        made: AcpRig = self.build(replies, **script)
        return made


@pytest.fixture(params=RUNTIMES)
def rig(request: Any, tmp_path: Path, openai_chat_mock: Any, anthropic_mock: Any) -> Iterator[Rigs]:
    """A mock with the replies and a home set up for the runtime. After the test, no process the
    host started may be left (checked by pid and process group)."""
    runtime = request.param

    def build(replies: list[Any], **script: Any) -> AcpRig:
        home = tmp_path / "home"
        if runtime == "qwen-code":
            mock = openai_chat_mock(replies, side_text="Mock title", **script)
            env = qwen_env(home, mock)
            # Both models selectable, and no follow-up suggestion requests after each turn.
            base = {"baseUrl": mock.url.rstrip("/") + "/v1", "envKey": "OPENAI_API_KEY"}
            settings = {**QWEN_SETTINGS, "ui": {"enableFollowupSuggestions": False},
                        "modelProviders": {"openai": [{"id": m, "name": m, **base} for m in (QWEN_MODEL, OTHER_MODEL[runtime])]}}
            (home / ".qwen" / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
        else:
            mock = anthropic_mock(replies, **script)
            env = copilot_env(home, mock)
        env = {k: v for k, v in env.items() if k != "HOME"}
        return AcpRig(runtime, tmp_path, mock, home, make_project(tmp_path), env)

    for made in rig_factory(build):
        yield Rigs(runtime, made, make_project(tmp_path))


def conversation(blocks: list[sna_history.Block]) -> list[tuple[Any, ...]]:
    """What was said (actor, kind, content, tool), without bookkeeping (status blocks)."""
    return [(b.actor, b.kind, b.content, json.dumps(b.tool, sort_keys=True) if b.tool else None)
            for b in blocks if b.kind in ("text", "thinking", "tool_use", "tool_result") and b.actor != "system"]


def test_three_turns_in_one_process_capture_what_the_file_holds(rig: Rigs, tmp_path: Path) -> None:
    rt = rig.runtime
    r = rig([read_notes(rt, rig.cwd), text(rt, "First: the notes say hello."), text(rt, "Second answer."), text(rt, "Third answer.")])
    store = sna_history.Store(tmp_path / "history.db")
    with r.host(store) as host:
        agent = r.start(host, permission_mode="bypassPermissions")
        pid = agent.status().pid
        turns = [agent.send(f"Message {i}: go on.", timeout=120) for i in range(3)]
        status = agent.status()
        assert status.spawns == 1 and status.pid == pid and status.alive and not status.busy
        assert [t.text for t in turns] == ["First: the notes say hello.", "Second answer.", "Third answer."]
        assert [t.resumed_via for t in turns] == [None, None, None]
        # The turn's usage as the runtime's own records have it.
        counted = "promptTokenCount" if rt == "qwen-code" else "inputTokens"
        assert all(t.usage and t.usage[counted] > 0 for t in turns), [t.usage for t in turns]
        native_id = status.native_id
        assert native_id
    requests = r.requests()
    assert len(requests) == 4
    # The tool's output reached the model, and each later turn carries the conversation so far.
    assert "hello from notes" in said(requests[1])
    assert "Message 0" in said(requests[2]) and "First: the notes say hello." in said(requests[2])
    assert all(s in said(requests[3]) for s in ["Message 0", "Message 1", "Second answer.", "hello from notes"])
    session = store.session("s1")
    assert session.binding(rt).native_id == native_id
    # Live capture records what a file import of the runtime's own file gives, block for block.
    live = [(b.actor, b.kind, b.content, b.native) for b in session.blocks()]
    imported = [(b.actor, b.kind, b.content, b.native) for b in sna_history.Store().import_file(r.log(native_id)).blocks()]
    assert live == imported
    # The tokens too: what the live session counts is what the file counts, imported on its own.
    with sna_history.Store(tmp_path / "alone.db") as alone:
        alone.import_file(r.log(native_id))
        counts = [(t.input, t.output, t.cache_read, t.cache_write, t.responses) for t in (store.usage(tz="UTC").totals, alone.usage(tz="UTC").totals)]
    assert counts[0] == counts[1] and counts[0][4] >= 4, counts
    kinds = [(a, k) for a, k, _, _ in conversation(session.blocks())]
    assert kinds == [("user", "text"), ("assistant", "thinking"), ("assistant", "tool_use"), ("user", "tool_result"), ("assistant", "text"),
                     ("user", "text"), ("assistant", "text"), ("user", "text"), ("assistant", "text")]
    blocks = session.blocks()
    (call,) = [b for b in blocks if b.kind == "tool_use"]
    (result,) = [b for b in blocks if b.kind == "tool_result"]
    assert "notes.txt" in json.dumps(json.loads(call.content))
    assert "hello from notes" in result.content and result.tool["call_id"] == call.tool["call_id"]
    assert all(b.provider == rt for b in blocks if b.actor == "assistant")
    events = list(agent.events())
    types = [e.type for e in events]
    assert types[0] == "started" and types.count("complete") == 3 and "tool_use" in types and "tool_result" in types
    assert "assistant_delta" in types
    # The tool's blocks went out during the first turn, before its answer.
    assert types.index("tool_result") < types.index("assistant")


def test_a_killed_process_comes_back_through_session_load(rig: Rigs, tmp_path: Path) -> None:
    rt = rig.runtime
    r = rig([text(rt, "Before the crash."), text(rt, "After the crash."), text(rt, "Still here.")])
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
        assert agent.send("And now?", timeout=120).text == "Still here."
    last = said(r.requests()[-2])
    assert "Remember the word teal." in last and "Before the crash." in last and "Which word?" in last
    assert "After the crash." in said(r.requests()[-1])
    # The history is whole and nothing of the loaded session was recorded twice.
    said_blocks = [(a, k, c) for a, k, c, _ in conversation(store.session("s1").blocks())]
    assert said_blocks == [("user", "text", "Remember the word teal."), ("assistant", "text", "Before the crash."),
                           ("user", "text", "Which word?"), ("assistant", "text", "After the crash."),
                           ("user", "text", "And now?"), ("assistant", "text", "Still here.")]
    live = [(b.actor, b.kind, b.content) for b in store.session("s1").blocks()]
    assert live == [(b.actor, b.kind, b.content) for b in sna_history.Store().import_file(r.log(native_id)).blocks()]


def test_a_process_killed_mid_turn_keeps_what_completed(rig: Rigs, tmp_path: Path) -> None:
    rt = rig.runtime
    release = tmp_path / "release"
    r = rig([read_notes(rt, rig.cwd), held(release, text(rt, "Never seen.")), text(rt, "Back again.")])
    store = sna_history.Store(tmp_path / "history.db")
    with r.host(store) as host:
        agent = r.start(host, permission_mode="bypassPermissions")
        worker, _, failure = send_in_background(agent, "Read the notes.")
        r.wait_for_requests(2)  # the tool ran; the answer after it is held
        wait_until(lambda: any(b.kind == "tool_result" for b in store.session("s1").blocks()))
        pid = agent.status().pid
        os.killpg(pid, signal.SIGKILL)
        worker.join(60)
        assert failure and isinstance(failure[0], sna_history.RuntimeFailedError), failure
        release.touch()
        kept = conversation(store.session("s1").blocks())
        assert [(a, k) for a, k, _, _ in kept] == [("user", "text"), ("assistant", "thinking"), ("assistant", "tool_use"), ("user", "tool_result")]
        turn = agent.send("And now?", timeout=120)
        r.track(agent)
        assert turn.text == "Back again." and turn.resumed_via == "native"
    last = said(r.requests()[-1])
    assert all(s in last for s in ["Read the notes.", "notes.txt", "hello from notes", "And now?"])


def test_interrupt_and_image(rig: Rigs, tmp_path: Path) -> None:
    rt = rig.runtime
    release = tmp_path / "release"
    r = rig([held(release, text(rt, "Too late.")), text(rt, "It is red.")])
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
        # The runtime's file keeps no image bytes: the driver records the image it sent.
        (image,) = [b for b in turn.blocks if b.actor == "user" and b.embeds]
        (embed_id,) = image.embeds
        assert agent.session.embed(embed_id) == RED_PNG
    assert base64.b64encode(RED_PNG).decode() in said(r.requests()[-1])
    texts = [(a, c) for a, k, c, _ in conversation(store.session("s1").blocks()) if k == "text"]
    assert texts[0] == ("user", "Think for a long time.") and texts[-1] == ("assistant", "It is red.")
    blocks = store.session("s1").blocks()
    asked = next(i for i, b in enumerate(blocks) if b.content == "What colour is this?")
    assert blocks[asked - 1].embeds, "the image goes just before the words it came with"


def test_set_model_reaches_the_next_request_in_the_same_process(rig: Rigs, tmp_path: Path) -> None:
    rt = rig.runtime
    r = rig([text(rt, "One."), text(rt, "Two.")])
    with r.host(sna_history.Store(tmp_path / "history.db")) as host:
        agent = r.start(host)
        agent.send("First.", timeout=120)
        agent.set_model(OTHER_MODEL[rt])
        agent.send("Second.", timeout=120)
        assert agent.status().spawns == 1 and agent.status().model == OTHER_MODEL[rt]
    assert [b["model"] for b in r.requests()] == [MODEL[rt], OTHER_MODEL[rt]]
    if rt == "qwen-code":
        # Not saved as the user's default model.
        assert "qwen3-coder-plus" not in json.dumps(json.loads((r.home / ".qwen" / "settings.json").read_text()).get("model", {}))


def test_asked_permissions_wait_for_an_answer(rig: Rigs, tmp_path: Path) -> None:
    """With ask_permissions, a shell command that writes waits as a permission_needed event:
    refused, it does not run; allowed, it runs. Answering twice is NOT_FOUND."""
    rt = rig.runtime
    # A refused call ends the turn without another model request in both runtimes.
    r = rig([shell(rt, "touch refused.txt", "call_r"), shell(rt, "touch allowed.txt", "call_a"), text(rt, "Made.")])
    store = sna_history.Store(tmp_path / "history.db")
    with r.host(store) as host:
        agent = r.start(host, ask_permissions=True)
        for allow, name in ((False, "refused.txt"), (True, "allowed.txt")):
            data, turn = asked_and_answered(agent, f"Make {name}.", allow)
            assert f"touch {name}" in json.dumps(data["input"]) and data["call_id"], data
            assert (r.cwd / name).exists() == allow
            with pytest.raises(sna_history.NotFoundError):
                agent.answer_permission(data["id"], allow)
        assert turn.text == "Made."
        assert [e.data["allow"] for e in agent.events() if e.type == "permission_answered"] == [False, True]
    results = [b for b in store.session("s1").blocks() if b.kind == "tool_result"]
    assert [bool(b.tool.get("is_error")) for b in results] == [True, False], [b.content for b in results]


@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
def test_permission_requests_follow_the_permission_mode(mode: str, rig: Rigs, tmp_path: Path) -> None:
    """A shell command that writes asks in the default mode: refused (nobody to ask);
    bypassPermissions runs it without a request."""
    rt = rig.runtime
    r = rig([shell(rt, "touch made.txt"), text(rt, "Done.")])
    store = sna_history.Store(tmp_path / "history.db")
    with r.host(store) as host:
        agent = r.start(host, permission_mode=mode)
        agent.send("Make the file.", timeout=120)
        assert not [e for e in agent.events() if e.type == "permission_needed"]
    assert (r.cwd / "made.txt").exists() == (mode == "bypassPermissions")
    (result,) = [b for b in store.session("s1").blocks() if b.kind == "tool_result"]
    assert bool(result.tool.get("is_error")) == (mode == "default"), result.content


def test_compact_on_request(rig: Rigs, tmp_path: Path) -> None:
    """`agent.compact()` sends the runtime's own command (Qwen Code's /compress, Copilot CLI's
    /compact); the compaction is recorded, and the next request starts from its summary."""
    rt = rig.runtime
    marker = f"SUMMARY-MARKER-{rt}: the user asked to remember PELICAN."
    summary = f"<state_snapshot>{marker}</state_snapshot>" if rt == "qwen-code" else marker
    script = {"usage": LARGE_USAGE} if rt == "qwen-code" else {}
    r = rig([text(rt, "Two files."), text(rt, "I will remember PELICAN."), text(rt, summary), text(rt, "You said PELICAN.")], **script)
    store = sna_history.Store(tmp_path / "history.db")
    with r.host(store) as host:
        agent = r.start(host)
        agent.send("Which files are here? Answer from what you know.", timeout=120)
        agent.send("Remember the word PELICAN.", timeout=120)
        agent.compact(timeout=120)
        assert [e for e in agent.events() if e.type == "compacted"]
        (compaction,) = store.session("s1").compactions()
        assert marker in compaction.summary
        assert agent.send("What did I ask you to remember?", timeout=120).text == "You said PELICAN."
        assert agent.status().spawns == 1
    last = said(r.requests()[-1])
    # The answers before it are in the summary only (Copilot CLI quotes the user's messages in it).
    assert marker in last and "Two files." not in last and "I will remember PELICAN." not in last


def test_a_session_built_elsewhere_goes_on_through_a_replayed_file(rig: Rigs, tmp_path: Path) -> None:
    """Blocks appended through the API, then the runtime: the host writes its file where
    `session/load` finds it; the replayed history is not recorded again."""
    rt = rig.runtime
    r = rig([text(rt, "Picked up.")])
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
    texts = [c for _, k, c, _ in conversation(store.session("plain").blocks()) if k == "text"]
    assert texts == ["Built through the API.", "Without any model named.", "Go on.", "Picked up."]


def test_sna_serve_offers_and_runs_it(rig: Rigs, serve: Any) -> None:
    """`sna serve` lists the runtime as available (its web UI's picker reads `/info`), starts it
    over HTTP and answers a waited turn with its blocks."""
    rt = rig.runtime
    r = rig([text(rt, "Served.")])
    server = serve(r, bins=r.bins())
    runtimes = {i["id"]: i["available"] for i in server.ok("GET", "/info")["runtimes"]}
    assert runtimes[rt] is True and runtimes["claude-code"] is False
    server.ok("POST", "/agent/sessions", {"id": "s1", "cwd": str(r.cwd)})
    started = server.ok("POST", "/agent/start?session=s1", {"provider": rt, "model": MODEL[rt], "cwd": str(r.cwd)})
    assert started["status"] == "started" and started["provider"] == rt
    server.pids.add(started["pid"])
    waited = server.ok("POST", "/agent/send?session=s1&wait=1", {"message": "Are you there?"})
    assert waited["status"] == "completed" and waited["text"] == "Served."
    assert [b["provider"] for b in waited["blocks"] if b["actor"] == "assistant"] == [rt]
    assert server.ok("POST", "/agent/kill?session=s1") == {"status": "killed"}
