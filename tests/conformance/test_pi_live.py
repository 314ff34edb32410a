"""The host (`sna_history.Host`) driving the real Pi (`pi --mode rpc`, pinned in package.json) turn by
turn against mock_anthropic.py (a `models.json` provider `mockant`, `anthropic-messages`):

1. three turns in one process, the first with thinking and a bash call: what the host captured is
   what an import of Pi's own session file gives, block for block (status entries included);
2. a process killed with SIGKILL comes back on the next send through `--session <its file>`, and
   the model gets the earlier turns;
3. an interrupt mid-turn (`abort`) ends the turn as interrupted and the process lives on (an image
   goes with the next message);
4. `set_model` reaches the next request in the same process, and the process started after a
   kill runs the new model too; an unknown model is refused by name.

No process the host started may be left (checked by process group, and by HOME).
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import sna_history
from helpers.common import RED_PNG, cli, make_project, said, wait_until
from helpers.host import Rig, rig_factory, send_in_background
from helpers.mocks import held, text_reply
from helpers.processes import assert_gone, processes_with_home
from helpers.runtimes import PI_ANTHROPIC_MODEL, PI_ANTHROPIC_PROVIDER, runtime_env

OTHER_MODEL = "mock-claude-2"
SIGNATURE = "bW9jay1zaWduYXR1cmU6cGktbGl2ZQ=="


@dataclass
class PiRig(Rig):
    # Sockets bound to a port of their own and never listening (`dead_provider`): a connection to it
    # is refused, and no other test can take the port while this one runs.
    dead: list[socket.socket] = field(default_factory=list)

    def start(self, host: sna_history.Host, model: str = PI_ANTHROPIC_MODEL) -> sna_history.Agent:
        agent = host.start("s1", "pi", model=model, cwd=str(self.cwd))
        self.track(agent)
        return agent

    def session_files(self) -> list[Path]:
        return sorted((self.home / ".pi" / "agent" / "sessions").rglob("*.jsonl"))

    def gone(self) -> None:
        """No process the host started is left, nor any other with this HOME."""
        for s in self.dead:
            s.close()
        super().gone()
        assert processes_with_home(self.home) == []


@pytest.fixture
def rig(tmp_path: Path, anthropic_mock: Any) -> Iterator[Any]:
    """`rig(replies)`: the mock with those replies, a private HOME whose models.json has `mockant` with
    two models (`mock-claude`, `mock-claude-2`), the project. Afterwards no process may be left."""

    def build(replies: list[Any]) -> PiRig:
        mock = anthropic_mock(replies)
        home = tmp_path / "home"
        env = runtime_env("pi", home, mock)
        models = home / ".pi" / "agent" / "models.json"
        config = json.loads(models.read_text())
        first = config["providers"][PI_ANTHROPIC_PROVIDER]["models"][0]
        config["providers"][PI_ANTHROPIC_PROVIDER]["models"].append({**first, "id": OTHER_MODEL, "name": "Mock Claude 2"})
        models.write_text(json.dumps(config, indent=2))
        return PiRig("pi", tmp_path, mock, home, make_project(tmp_path), env)

    yield from rig_factory(build)


def shape(blocks: list[sna_history.Block]) -> list[tuple[Any, ...]]:
    """Every block as the comparison sees it: who, what, the text, the call, the reasoning, the entry
    and the model it came from."""
    return [(b.actor, b.kind, b.content, b.tool, b.reasoning, b.message_id, b.model) for b in blocks]


def file_import(r: PiRig, tmp: Path, native_id: str) -> list[sna_history.Block]:
    """The blocks an import of Pi's own file of the session gives (into a store of its own)."""
    (path,) = [p for p in r.session_files() if p.name.endswith(f"_{native_id}.jsonl")]
    with sna_history.Store(tmp / f"fresh-{time.monotonic_ns()}.db") as store:
        return store.import_file(path).blocks()


def test_three_turns_in_one_process_capture_what_pi_writes(rig: Any, tmp_path: Path) -> None:
    r = rig([
        [{"type": "thinking", "thinking": "I will read the notes with bash.", "signature": SIGNATURE},
         {"type": "tool_use", "id": "toolu_pi_live_cat_000000001", "name": "bash", "input": {"command": "cat notes.txt"}}],
        text_reply("pi", "First: the notes say hello."),
        text_reply("pi", "Second\u2028answer."),
        text_reply("pi", "Third answer."),
    ])
    store = sna_history.Store(tmp_path / "history.db")
    with r.host(store) as host:
        agent = r.start(host)
        pid = agent.status().pid
        # U+2028 inside a JSON string is no line end (pi.md §6.1).
        turns = [agent.send(f"Message {i}:\u2028go on.", timeout=120) for i in range(3)]
        status = agent.status()
        assert status.spawns == 1 and status.pid == pid and status.alive and not status.busy
        assert [t.text for t in turns] == ["First: the notes say hello.", "Second\u2028answer.", "Third answer."]
        assert [t.resumed_via for t in turns] == [None, None, None]
        assert all(t.usage and t.usage.get("output") for t in turns) and not any(t.interrupted for t in turns)
        native_id = status.native_id
        assert native_id
        events = list(agent.events())
    requests = r.requests()
    assert len(requests) == 4
    assert all(q["model"] == PI_ANTHROPIC_MODEL for q in requests)
    # Turns 2 and 3 reach the same session: each request carries the conversation so far.
    assert all(s in said(requests[2]) for s in ["Message 0", SIGNATURE, "hello from notes", "First: the notes say hello.", "Message 1"])
    assert all(s in said(requests[3]) for s in ["Message 0", "Message 1", "Second\u2028answer.", "Message 2:\u2028go on."])
    session = store.session("s1")
    assert session.binding("pi").native_id == native_id
    live = session.blocks()
    assert shape(live) == shape(file_import(r, tmp_path, native_id))
    # The tokens captured live are those of Pi's own file, imported on its own.
    (path,) = [p for p in r.session_files() if p.name.endswith(f"_{native_id}.jsonl")]
    with sna_history.Store(tmp_path / "file.db") as alone:
        alone.import_file(path)
        counts = [(t.input, t.output, t.cache_read, t.cache_write, t.responses) for t in (store.usage(tz="UTC").totals, alone.usage(tz="UTC").totals)]
    assert counts[0] == counts[1] and counts[0][4] == 4 and counts[0][1] > 0, counts
    talk = [(b.actor, b.kind) for b in live if b.actor != "system" and b.kind != "status"]
    assert talk == [("user", "text"), ("assistant", "thinking"), ("assistant", "tool_use"), ("user", "tool_result"), ("assistant", "text"),
                    ("user", "text"), ("assistant", "text"), ("user", "text"), ("assistant", "text")]
    thinking = next(b for b in live if b.kind == "thinking")
    assert thinking.content == "I will read the notes with bash."
    assert thinking.reasoning and thinking.reasoning["data"] == SIGNATURE and thinking.reasoning["format"] == "anthropic-signature"
    call = next(b for b in live if b.kind == "tool_use")
    assert call.tool and call.tool["call_id"] == "toolu_pi_live_cat_000000001" and call.tool["name"] == "bash"
    assert json.loads(call.content) == {"command": "cat notes.txt"}
    result = next(b for b in live if b.kind == "tool_result")
    assert result.tool and result.tool["call_id"] == "toolu_pi_live_cat_000000001" and result.content == "hello from notes\n"
    assert [b.provider for b in live if b.actor == "assistant"] == ["pi"] * 5
    # The file's header, model and thinking-level entries are recorded as status blocks, as import has them.
    assert [b.kind for b in live[:3]] == ["status", "status", "status"]
    assert [e.cursor for e in events] == sorted(e.cursor for e in events)
    types = [e.type for e in events]
    assert types[0] == "started" and types.count("complete") == 3
    assert {"tool_use", "tool_result", "thinking", "assistant_delta", "thinking_delta"} <= set(types)


def test_a_killed_pi_comes_back_through_its_own_session_file(rig: Any, tmp_path: Path) -> None:
    r = rig([text_reply("pi", "Before the crash."), text_reply("pi", "After the crash.")])
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
    last = said(r.requests()[-1])
    assert all(s in last for s in ["Remember the word teal.", "Before the crash.", "Which word?"])
    # The second process appended to the same file; what the host holds is still its import.
    (path,) = r.session_files()
    assert path.name.endswith(f"_{native_id}.jsonl")
    assert shape(store.session("s1").blocks()) == shape(file_import(r, tmp_path, native_id))


def test_a_pi_killed_mid_turn_keeps_what_completed(rig: Any, tmp_path: Path) -> None:
    """Killed while the model answers after a tool ran: the call and its result are recorded already
    (read from the file as Pi wrote them); the next send goes on from them."""
    release = tmp_path / "release"
    call = "toolu_pi_mid_ls_00000000001"
    r = rig([[{"type": "tool_use", "id": call, "name": "bash", "input": {"command": "ls"}}], held(release, text_reply("pi", "Never seen.")), text_reply("pi", "Back again.")])
    store = sna_history.Store(tmp_path / "history.db")
    with r.host(store) as host:
        agent = r.start(host)
        worker, _, failure = send_in_background(agent, "List the files.")
        r.wait_for_requests(2)  # the tool ran; the answer after it is held
        wait_until(lambda: any(b.kind == "tool_result" for b in store.session("s1").blocks()))
        pid = agent.status().pid
        os.killpg(pid, signal.SIGKILL)
        worker.join(60)
        assert failure and isinstance(failure[0], sna_history.RuntimeFailedError), failure
        release.touch()
        kept = [(b.actor, b.kind) for b in store.session("s1").blocks() if b.actor != "system" and b.kind != "status"]
        assert kept == [("user", "text"), ("assistant", "tool_use"), ("user", "tool_result")]
        turn = agent.send("And now?", timeout=120)
        r.track(agent)
        assert turn.text == "Back again." and turn.resumed_via in ("native", "replay")
    last = said(r.requests()[-1])
    assert all(s in last for s in ["List the files.", call, "notes.txt", "And now?"])


def test_interrupt_mid_turn_and_an_image(rig: Any, tmp_path: Path) -> None:
    release = tmp_path / "release"
    r = rig([held(release, text_reply("pi", "Too late.")), text_reply("pi", "It is red.")])
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
        assert turn.text == "It is red." and not turn.interrupted and agent.status().spawns == 1
        assert any(b.embeds for b in turn.blocks if b.actor == "user")
        native_id = agent.status().native_id
    last = said(r.requests()[-1])
    assert base64.b64encode(RED_PNG).decode() in last and "Think for a long time." in last
    assert "Too late." not in last
    assert shape(store.session("s1").blocks()) == shape(file_import(r, tmp_path, native_id))


def test_set_model_reaches_the_next_request_in_the_same_process(rig: Any, tmp_path: Path) -> None:
    r = rig([text_reply("pi", "One."), text_reply("pi", "Two."), text_reply("pi", "Three.")])
    with r.host(sna_history.Store(tmp_path / "history.db")) as host:
        agent = r.start(host)
        pid = agent.status().pid
        agent.send("First.", timeout=120)
        with pytest.raises(sna_history.NotFoundError, match="no-such-model"):
            agent.set_model("no-such-model")
        agent.set_model(OTHER_MODEL)
        agent.send("Second.", timeout=120)
        status = agent.status()
        assert status.spawns == 1 and status.pid == pid and status.model == OTHER_MODEL
        assert "model_changed" in [e.type for e in agent.events()]
        # A process started after a kill runs the model chosen last.
        os.killpg(pid, signal.SIGKILL)
        wait_until(lambda: not agent.status().alive)
        assert agent.send("Third.", timeout=120).resumed_via == "native"
        r.track(agent)
        assert agent.status().spawns == 2
        blocks = agent.session.blocks()
    assert [q["model"] for q in r.requests()] == [PI_ANTHROPIC_MODEL, OTHER_MODEL, OTHER_MODEL]
    assert [b.model for b in blocks if b.actor == "assistant" and b.kind == "text"] == [PI_ANTHROPIC_MODEL, OTHER_MODEL, OTHER_MODEL]
    # Pi's own side effect: the model chosen is its default from now on (pi.md §2).
    settings = json.loads((r.home / ".pi" / "agent" / "settings.json").read_text())
    assert settings.get("defaultModel") == OTHER_MODEL


def test_switch_from_claude_code_to_pi_and_back(rig: Any, tmp_path: Path) -> None:
    """Claude Code → Pi (a replay: the host writes Pi's session file, Pi opens it with `--session`) →
    Claude Code, a tool call in each of the first two legs: each runtime's first request carries every
    text, call and result so far, and Pi's leg is recorded once, from what Pi appended to that file."""
    r = rig([
        [{"type": "tool_use", "id": "toolu_sw_ls_000000000000001", "name": "Bash", "input": {"command": "ls", "description": "List"}}],
        text_reply("pi", "Leg one done."),
        [{"type": "tool_use", "id": "toolu_sw_cat_00000000000002", "name": "bash", "input": {"command": "cat notes.txt"}}],
        text_reply("pi", "Leg two done."),
        text_reply("pi", "Leg three done."),
    ])
    r.env.update(runtime_env("claude-code", r.home, r.mock))
    store = sna_history.Store(tmp_path / "history.db")
    bins = {"pi": str(cli("pi")), "claude-code": str(cli("claude"))}
    with sna_history.Host(store, bins=bins, env=r.env, home=str(r.home)) as host:
        agent = host.start("s1", "claude-code", model="claude-opus-5-5", cwd=str(r.cwd), args=["--allowedTools", "Bash Read"])
        r.track(agent)
        agent.send("Leg one: list the files.", timeout=120)
        claude_requests = len(r.requests())
        agent.switch("pi", PI_ANTHROPIC_MODEL)
        r.track(agent)
        turn = agent.send("Leg two: read notes.txt.", timeout=120)
        assert turn.resumed_via == "replay" and turn.text == "Leg two done."
        pi_first = r.requests()[claude_requests]
        agent.switch("claude-code", "claude-opus-5-5")
        r.track(agent)
        agent.send("Leg three: sum it up.", timeout=120)
        assert agent.status().spawns == 3
    leg_one = ["Leg one: list the files.", "toolu_sw_ls_000000000000001", "data.csv", "Leg one done."]
    leg_two = ["Leg two: read notes.txt.", "toolu_sw_cat_00000000000002", "hello from notes", "Leg two done."]
    assert pi_first["model"] == PI_ANTHROPIC_MODEL
    assert [s for s in leg_one + leg_two[:1] if s not in said(pi_first)] == []
    assert [s for s in leg_one + leg_two + ["Leg three: sum it up."] if s not in said(r.requests()[-1])] == []
    blocks = store.session("s1").blocks()
    by_text = {b.content: b.provider for b in blocks if b.kind == "text" and b.actor == "assistant"}
    assert by_text == {"Leg one done.": "claude-code", "Leg two done.": "pi", "Leg three done.": "claude-code"}
    prompts = [b.content for b in blocks if b.actor == "user" and b.kind == "text" and b.content.startswith("Leg")]
    assert prompts == ["Leg one: list the files.", "Leg two: read notes.txt.", "Leg three: sum it up."]
    pi_calls = [b for b in blocks if b.kind == "tool_use" and b.provider == "pi"]
    assert [json.loads(b.content) for b in pi_calls] == [{"command": "cat notes.txt"}]


def dead_provider(r: PiRig, retries: int, delay_ms: int) -> None:
    """Adds the provider `deadant` (the mock's, at a port nobody listens on) to models.json, and Pi's
    retry settings: `retries` runs after the first, `delay_ms` before the first retry, no retry in the
    provider's client."""
    s = socket.socket()
    r.dead.append(s)
    s.bind(("127.0.0.1", 0))
    dead = s.getsockname()[1]
    models = r.home / ".pi" / "agent" / "models.json"
    config = json.loads(models.read_text())
    config["providers"]["deadant"] = {**config["providers"][PI_ANTHROPIC_PROVIDER], "baseUrl": f"http://127.0.0.1:{dead}"}
    models.write_text(json.dumps(config, indent=2))
    settings = r.home / ".pi" / "agent" / "settings.json"
    retry = {"maxRetries": retries, "baseDelayMs": delay_ms, "provider": {"maxRetries": 0}}
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "retry": retry}))


def test_a_failed_run_that_pi_retries_ends_the_turn_once(rig: Any, tmp_path: Path) -> None:
    """A provider that refuses connections: Pi retries by itself (`auto_retry_start` after each failed
    `agent_end`), so the turn ends only after its last attempt, once, with Pi's error; the process lives
    on and the next turn runs on a working model."""
    r = rig([text_reply("pi", "Working again.")])
    dead_provider(r, retries=2, delay_ms=100)
    store = sna_history.Store(tmp_path / "history.db")
    with r.host(store) as host:
        agent = r.start(host, model=f"deadant/{PI_ANTHROPIC_MODEL}")
        pid = agent.status().pid
        with pytest.raises(sna_history.RuntimeFailedError, match="(?i)connection"):
            agent.send("Anyone there?", timeout=120)
        # The turn ended after the last attempt: all three are recorded when send returns.
        assert len([b for b in store.session("s1").blocks() if b.kind == "error" and b.actor == "assistant"]) == 3
        events = list(agent.events())
        # One turn error (the error blocks of the attempts are events of their own).
        turn_errors = [e.data.get("message", "") for e in events if e.type == "error" and "block" not in e.data]
        assert len(turn_errors) == 1 and "onnection" in turn_errors[0], turn_errors
        assert "complete" not in [e.type for e in events]
        assert agent.status().alive and agent.status().pid == pid
        agent.set_model(f"{PI_ANTHROPIC_PROVIDER}/{PI_ANTHROPIC_MODEL}")
        turn = agent.send("And now?", timeout=120)
        assert turn.text == "Working again." and agent.status().spawns == 1
        native_id = agent.status().native_id
    blocks = store.session("s1").blocks()
    errors = [b for b in blocks if b.kind == "error" and b.actor == "assistant"]
    assert len(errors) == 3  # the first attempt and two retries, each an entry of the file
    assert shape(blocks) == shape(file_import(r, tmp_path, native_id))
    assert "Anyone there?" in said(r.requests()[-1])


def test_an_interrupt_while_pi_waits_to_retry_ends_the_turn(rig: Any, tmp_path: Path) -> None:
    """Pi waits before it retries a failed run; an abort then ends the wait (`auto_retry_end`, no
    `agent_end`): the turn ends as interrupted."""
    r = rig([])
    dead_provider(r, retries=3, delay_ms=60_000)
    store = sna_history.Store(tmp_path / "history.db")
    with r.host(store) as host:
        agent = r.start(host, model=f"deadant/{PI_ANTHROPIC_MODEL}")
        worker, turns, _ = send_in_background(agent, "Anyone there?")
        wait_until(lambda: any(b.kind == "error" for b in store.session("s1").blocks()))
        time.sleep(1)  # past the window in which a failed run's end waits for Pi's word on a retry
        assert agent.status().busy
        started = time.monotonic()
        agent.interrupt()
        worker.join(30)
        assert turns and turns[0].interrupted and time.monotonic() - started < 10
        assert "interrupted" in [e.type for e in agent.events()]
        assert agent.status().alive and not agent.status().busy
