"""The host (`sna_history.Host`) driving the real CLIs turn by turn against the mock model servers:
one process kept alive across turns, live capture equal to the import of the runtime's own file,
recovery after a crash (between turns and mid-turn) and after a host restart, interrupts, images,
switching runtime within one agent, and no process left behind."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sna_history
from helpers.common import RED_PNG, ROOT, cargo_executable, cli, make_project, said, wait_until
from helpers.host import RUNTIMES, HostRig, asked_and_answered, send_in_background
from helpers.mocks import held, text_reply, tool_reply
from helpers.processes import assert_gone, processes_in
from helpers.runtimes import MODEL, runtime_env


def conversation(blocks: list[sna_history.Block]) -> list[tuple[Any, ...]]:
    """What was said: text, thinking, tool calls and results, without runtime bookkeeping (status
    blocks, Claude Code's meta records)."""
    out = []
    for b in blocks:
        if b.kind not in ("text", "thinking", "tool_use", "tool_result") or b.actor == "system":
            continue
        native = b.native or {}
        if (native.get("data") or {}).get("record", {}).get("isMeta"):
            continue
        if b.actor == "user" and b.kind == "text" and b.content.startswith(("<environment_context>", "<user_instructions>", "# AGENTS.md")):
            continue
        call = (b.tool or {}).get("call_id")
        out.append((b.actor, b.kind, b.content, call))
    return out


def native_file_import(rig: HostRig, store: sna_history.Store, native_id: str) -> sna_history.Session:
    """The session the runtime's own file of the thread gives when imported."""
    if rig.runtime == "claude-code":
        (transcript,) = (rig.home / ".claude" / "projects").rglob(f"{native_id}.jsonl")
        return store.import_file(transcript)
    if rig.runtime == "codex":
        (rollout,) = (rig.home / ".codex" / "sessions").rglob(f"rollout-*-{native_id}.jsonl")
        return store.import_file(rollout)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(rig.home), "LANG": "C.UTF-8", **rig.env}
    out = subprocess.run([str(cli("opencode")), "export", native_id], cwd=rig.cwd, env=env, capture_output=True, text=True, timeout=120, check=True)
    return store.import_native("opencode", json.loads(out.stdout[out.stdout.index("{"):]))


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_three_turns_in_one_process_capture_what_the_runtime_writes(runtime: str, rig: Any, tmp_path: Path) -> None:
    r = rig(runtime, [
        tool_reply(runtime, "call_host_ls" if runtime == "codex" else "toolu_host_ls_0000000000001", "ls"),
        text_reply(runtime, "First: two files."),
        text_reply(runtime, "Second answer."),
        text_reply(runtime, "Third answer."),
    ])
    store = sna_history.Store(tmp_path / "history.db")
    with r.host(store) as host:
        agent = r.start(host, default_model=True)
        pid = agent.status().pid
        turns = [agent.send(f"Message {i}: go on.", timeout=120) for i in range(3)]
        status = agent.status()
        assert status.spawns == 1 and status.pid == pid and status.alive and not status.busy
        assert [t.text for t in turns] == ["First: two files.", "Second answer.", "Third answer."]
        assert [t.resumed_via for t in turns] == [None, None, None]
        native_id = status.native_id
        assert native_id
    requests = r.requests()
    assert len(requests) == 4
    # Turns 2 and 3 reach the same thread: each request carries the conversation so far.
    assert "Message 0" in said(requests[2]) and "First: two files." in said(requests[2])
    assert all(s in said(requests[3]) for s in ["Message 0", "Message 1", "Second answer.", "notes.txt"])
    session = store.session("s1")
    assert session.binding(runtime).native_id == native_id
    live = conversation(session.blocks())
    imported = native_file_import(r, store, native_id)
    assert live == conversation(imported.blocks())
    # The tokens captured live are those the runtime's own file records (four model responses).
    rows = {row.key: row for row in store.usage(by="session", tz="UTC").rows}
    counts = [(row.input, row.output, row.cache_read, row.cache_write, row.reasoning) for row in (rows["s1"], rows[imported.id])]
    assert counts[0] == counts[1] and rows["s1"].total > 0, (counts, rows["s1"].responses, rows[imported.id].responses)
    kinds = [(a, k) for a, k, _, _ in live]
    assert kinds == [("user", "text"), ("assistant", "tool_use"), ("user", "tool_result"), ("assistant", "text"),
                     ("user", "text"), ("assistant", "text"), ("user", "text"), ("assistant", "text")]
    events = list(agent.events())
    assert [e.cursor for e in events] == sorted(e.cursor for e in events)
    types = [e.type for e in events]
    assert types[0] == "started" and types.count("complete") == 3 and "tool_use" in types and "tool_result" in types
    assert "assistant_delta" in types or runtime == "codex"


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_killed_process_comes_back_through_its_own_resume(runtime: str, rig: Any, tmp_path: Path) -> None:
    r = rig(runtime, [text_reply(runtime, "Before the crash."), text_reply(runtime, "After the crash.")])
    store = sna_history.Store(tmp_path / "history.db")
    with r.host(store) as host:
        agent = r.start(host)
        agent.send("Remember the word teal.", timeout=120)
        pid = agent.status().pid
        os.killpg(pid, signal.SIGKILL)
        wait_until(lambda: not agent.status().alive)
        assert_gone(pid)
        assert "exited" in [e.type for e in agent.events()]
        turn = agent.send("Which word?", timeout=120)
        r.track(agent)
        assert turn.resumed_via == "native" and turn.text == "After the crash."
        assert agent.status().spawns == 2 and agent.status().pid != pid
        assert "resumed" in [e.type for e in agent.events()]
    last = said(r.requests()[-1])
    assert "Remember the word teal." in last and "Before the crash." in last and "Which word?" in last


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_process_killed_mid_turn_keeps_what_completed(runtime: str, rig: Any, tmp_path: Path) -> None:
    release = tmp_path / "release"
    call = "call_mid_ls" if runtime == "codex" else "toolu_mid_ls_00000000000001"
    r = rig(runtime, [tool_reply(runtime, call, "ls"), held(release, text_reply(runtime, "Never seen.")), text_reply(runtime, "Back again.")])
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
        kept = conversation(store.session("s1").blocks())
        assert [(a, k) for a, k, _, _ in kept] == [("user", "text"), ("assistant", "tool_use"), ("user", "tool_result")]
        turn = agent.send("And now?", timeout=120)
        r.track(agent)
        assert turn.text == "Back again." and turn.resumed_via in ("native", "replay")
    last = said(r.requests()[-1])
    assert all(s in last for s in ["List the files.", call, "notes.txt", "And now?"])


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_new_host_resumes_natively(runtime: str, rig: Any, tmp_path: Path) -> None:
    r = rig(runtime, [text_reply(runtime, "First host."), text_reply(runtime, "Second host.")])
    db = tmp_path / "history.db"
    with sna_history.Store(db) as store, r.host(store) as host:
        agent = r.start(host)
        agent.send("Remember the word amber.", timeout=120)
        first_cursor = agent.status().cursor
    with sna_history.Store(db) as store, r.host(store) as host:
        agent = host.resume("s1")
        r.track(agent)
        assert agent.status().runtime == runtime
        with pytest.raises(sna_history.ConflictError):
            host.resume("s1")
        turn = agent.send("Which word?", timeout=120)
        assert turn.resumed_via == "native" and turn.text == "Second host."
        assert all(e.cursor > first_cursor for e in agent.events())
    last = said(r.requests()[-1])
    assert "Remember the word amber." in last and "First host." in last


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_interrupt_and_image(runtime: str, rig: Any, tmp_path: Path) -> None:
    release = tmp_path / "release"
    r = rig(runtime, [held(release, text_reply(runtime, "Too late.")), text_reply(runtime, "It is red.")])
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


def test_switch_within_one_agent(rig: Any, tmp_path: Path) -> None:
    """Claude Code → Codex → OpenCode → Claude Code, a turn each with a tool call: each runtime's
    first request carries every text, call and result so far; three switches; attribution kept."""
    claude = rig("claude-code", [tool_reply("claude-code", "toolu_sw_ls_000000000000001", "ls"), text_reply("claude-code", "Leg one done."), text_reply("claude-code", "Leg four done.")], name="claude")
    codex = rig("codex", [tool_reply("codex", "call_sw_cat", "cat notes.txt"), text_reply("codex", "Leg two done.")], name="codex")
    opencode = rig("opencode", [tool_reply("opencode", "toolu_sw_pwd_00000000000003", "pwd"), text_reply("opencode", "Leg three done.")], name="opencode")
    env = {**claude.env, **codex.env, **opencode.env}
    for r in (claude, codex, opencode):
        r.env = env
    store = sna_history.Store(tmp_path / "history.db")
    with claude.host(store) as host:
        agent = claude.start(host)
        agent.send("Leg one: list the files.", timeout=120)
        agent.switch("codex")
        claude.track(agent)
        assert agent.send("Leg two: read notes.txt.", timeout=120).resumed_via == "replay"
        agent.switch("opencode", MODEL["opencode"])
        claude.track(agent)
        agent.send("Leg three: where are we?", timeout=120)
        agent.switch("claude-code", MODEL["claude-code"])
        claude.track(agent)
        agent.send("Leg four: sum it up.", timeout=120)
        assert agent.status().spawns == 4
        assert [e.type for e in agent.events()].count("switched") == 3
    firsts = {"codex": codex.requests()[0], "opencode": opencode.requests()[0], "claude-code": claude.requests()[-1]}
    # Each leg: its prompt, its call, the call's result (ls lists data.csv; cat shows the notes; pwd
    # prints the project), its answer.
    legs = [
        ["Leg one: list the files.", "toolu_sw_ls_000000000000001", "data.csv", "Leg one done."],
        ["Leg two: read notes.txt.", "call_sw_cat", "hello from notes", "Leg two done."],
        ["Leg three: where are we?", "toolu_sw_pwd_00000000000003", str(claude.cwd), "Leg three done."],
        ["Leg four: sum it up."],
    ]
    for request, so_far in ((firsts["codex"], legs[0] + legs[1][:1]), (firsts["opencode"], legs[0] + legs[1] + legs[2][:1]), (firsts["claude-code"], sum(legs, []))):
        missing = [s for s in so_far if s not in said(request)]
        assert missing == [], missing
    session = store.session("s1")
    assert [s.to.provider for s in session.switches()] == ["claude-code", "codex", "opencode", "claude-code"]
    by_text = {b.content: b.provider for b in session.blocks() if b.kind == "text" and b.actor == "assistant"}
    assert by_text == {"Leg one done.": "claude-code", "Leg two done.": "codex", "Leg three done.": "opencode", "Leg four done.": "claude-code"}


def test_a_replay_into_a_thread_opencode_has_replaces_it(rig: Any, tmp_path: Path) -> None:
    """Codex → OpenCode → Codex → OpenCode: the second switch replays into the thread the first one
    wrote (the same session id), to which `opencode import` would add every message a second time
    (found by the chaos campaign). OpenCode's thread holds each message once, and its model is sent
    each once."""
    codex = rig("codex", [text_reply("codex", "Answer one."), text_reply("codex", "Answer three.")], name="codex")
    opencode = rig("opencode", [text_reply("opencode", "Answer two."), text_reply("opencode", "Answer four.")], name="opencode")
    env = {**codex.env, **opencode.env}
    for r in (codex, opencode):
        r.env = env
    store = sna_history.Store(tmp_path / "history.db")
    messages = ["Message one.", "Message two.", "Message three.", "Message four."]
    with codex.host(store) as host:
        agent = codex.start(host)
        agent.send(messages[0], timeout=120)
        agent.switch("opencode", MODEL["opencode"])
        codex.track(agent)
        assert agent.send(messages[1], timeout=120).resumed_via == "replay"
        thread = agent.status().native_id
        agent.switch("codex")
        codex.track(agent)
        agent.send(messages[2], timeout=120)
        agent.switch("opencode", MODEL["opencode"])
        codex.track(agent)
        assert agent.send(messages[3], timeout=120).resumed_via == "replay"
        assert agent.status().native_id == thread
    held = [b.content for b in native_file_import(opencode, store, thread).blocks() if b.actor == "user" and b.kind == "text"]
    assert held == messages
    last = said(opencode.requests()[-1])
    assert [last.count(m) for m in messages] == [1, 1, 1, 1]
    assert "Answer two." in last and last.count("Answer two.") == 1


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_asked_permissions_wait_for_an_answer(runtime: str, rig: Any, tmp_path: Path) -> None:
    """With ask_permissions, the runtime's permission request (Claude Code's can_use_tool, Codex's
    approval request, OpenCode's permission.asked) waits as a permission_needed event; refused,
    the tool does not run and the turn goes on; allowed, it runs."""
    call = {"claude-code": "toolu_ask_touch_00000000000", "codex": "call_ask_touch_", "opencode": "toolu_ask_touch_00000000000"}[runtime]
    r = rig(runtime, [
        tool_reply(runtime, call + "1", "touch refused.txt"),
        text_reply(runtime, "Not made."),
        tool_reply(runtime, call + "2", "touch allowed.txt"),
        text_reply(runtime, "Made."),
    ])
    if runtime == "opencode":
        config = r.home / ".config" / "opencode" / "opencode.json"
        config.write_text(json.dumps({**json.loads(config.read_text()), "permission": {"bash": "ask"}}))
    store = sna_history.Store(tmp_path / "history.db")
    with r.host(store) as host:
        agent = host.start("s1", runtime, model=MODEL[runtime], cwd=str(r.cwd), ask_permissions=True)
        r.track(agent)
        for allow, name, answer in ((False, "refused.txt", "Not made."), (True, "allowed.txt", "Made.")):
            data, turn = asked_and_answered(agent, f"Make {name}.", allow)
            assert f"touch {name}" in json.dumps(data["input"]) and f"touch {name}" in data["title"]
            if runtime == "claude-code":
                assert data["tool"] == "Bash" and data["call_id"] == call + ("2" if allow else "1")
            assert turn.text == answer
            assert (r.cwd / name).exists() == allow
            with pytest.raises(sna_history.NotFoundError):
                agent.answer_permission(data["id"], allow)
        assert [e.data["allow"] for e in agent.events() if e.type == "permission_answered"] == [False, True]


def test_permissions_from_node(rig: Any, tmp_path: Path) -> None:
    """Node: `askPermissions` and `answerPermission` against Claude Code — the refused tool does not
    run, the turn answers, a second answer is NOT_FOUND; a PDF passed as an image is refused with
    its field before the runtime sees anything."""
    call = "toolu_node_touch_000000000001"
    r = rig("claude-code", [tool_reply("claude-code", call, "touch refused.txt"), text_reply("claude-code", "Not made.")])
    out = subprocess.run(
        ["node", str(Path(__file__).parent / "host_permission.mjs"), str(cli("claude")), str(r.home), str(r.cwd), str(tmp_path / "node.db"), r.mock.url],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    r.pids.add(result["pid"])
    assert result["badImage"]["code"] == "INVALID_INPUT" and result["badImage"]["field"] == "images[0].mime", result
    assert result["asked"]["tool"] == "Bash" and result["asked"]["call_id"] == call, result
    assert "touch refused.txt" in result["asked"]["title"]
    assert result["again"]["code"] == "NOT_FOUND", result
    assert result["text"] == "Not made."
    assert result["answered"] == [{"id": result["asked"]["id"], "allow": False}]
    assert not (r.cwd / "refused.txt").exists()
    # The refused image never reached the model: the first request is the message after it.
    requests = r.requests()
    assert "Make refused.txt." in said(requests[0]) and "%PDF" not in said(requests[0]) and "Read this." not in said(requests[0])


def test_errors_name_what_is_wrong(rig: Any, tmp_path: Path) -> None:
    r = rig("claude-code", [])
    store = sna_history.Store(tmp_path / "history.db")
    with sna_history.Host(store, bins={"codex": str(tmp_path / "no" / "codex")}, env=r.env, home=str(r.home)) as host:
        with pytest.raises(sna_history.NotFoundError, match="@openai/codex"):
            host.start("s1", "codex", cwd=str(r.cwd))
        with pytest.raises(sna_history.NotFoundError):
            host.resume("no-such-session")
        store.create_session(id="never-ran")
        with pytest.raises(sna_history.InvalidInputError, match="runtime"):
            host.resume("never-ran")
    assert not any(a.status().alive for a in host.agents())


def test_the_same_scenario_from_node(rig: Any, tmp_path: Path) -> None:
    """Node: turns in one process, events with `for await`, a kill and a native resume; a timer
    keeps firing on time while each send runs (nothing blocks the event loop)."""
    r = rig("claude-code", [text_reply("claude-code", "Noted."), text_reply("claude-code", "Teal."), text_reply("claude-code", "Still teal.")])
    out = subprocess.run(
        ["node", str(Path(__file__).parent / "host_scenario.mjs"), str(cli("claude")), str(r.home), str(r.cwd), str(tmp_path / "node.db"), r.mock.url],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    for pid in result["pids"]:
        r.pids.add(pid)
    assert [t["text"] for t in result["turns"]] == ["Noted.", "Teal.", "Still teal."]
    assert [t["resumedVia"] for t in result["turns"]] == [None, None, "native"]
    assert result["status"]["spawns"] == 1 and result["spawns"] == 2 and result["status"]["alive"]
    assert result["events"][0] == "started" and result["events"].count("complete") == 2
    assert result["conflict"] == "CONFLICT"
    assert max(result["gaps"]) < 250, result["gaps"]
    assert "Remember the word teal." in said(r.requests()[-1])


def test_the_host_examples_agree(tmp_path: Path, anthropic_mock: Any, openai_mock: Any) -> None:
    """examples/{rust,python,node}/host*: the same scenario (two turns, a kill and a native resume,
    a switch to Codex) prints the same summary in all three languages."""
    examples = ROOT / "examples"
    commands = {
        "rust": [str(cargo_executable("sna-example", "bin", "sna-host-example"))],
        "python": [sys.executable, str(examples / "python" / "host.py")],
        "node": ["node", str(examples / "node" / "host.mjs")],
    }
    printed = {}
    for language, command in commands.items():
        base = tmp_path / language
        claude_mock = anthropic_mock([text_reply("claude-code", "Teal noted."), text_reply("claude-code", "It was teal."), text_reply("claude-code", "Still teal.")], name=f"{language}-claude")
        codex_mock = openai_mock([text_reply("codex", "Teal, in Codex.")], name=f"{language}-codex")
        home = base / "home"
        env = {**os.environ, **runtime_env("claude-code", home, claude_mock), **runtime_env("codex", home, codex_mock)}
        cwd = make_project(base)
        args = [str(cli("claude")), str(cli("codex")), str(home), str(cwd), str(base / "history.db")]
        out = subprocess.run([*command, *args], env=env, capture_output=True, text=True, timeout=600, check=False)
        assert out.returncode == 0, f"{language}: {out.stderr}"
        printed[language] = out.stdout
        assert "Teal noted." in said(codex_mock.responses_requests()[0]), language
    assert printed["python"] == printed["rust"] == printed["node"]
    # Nine: four messages each way, and the <environment_context> message Codex adds to its thread.
    assert printed["rust"] == (
        "turn 1: Teal noted. (resumed: no)\n"
        "turn 2: It was teal. (resumed: no)\n"
        "after kill: Still teal. (resumed: native), processes started: 2\n"
        "in codex: Teal, in Codex. (resumed: replay)\n"
        "conversation: 9 blocks; runs: claude-code, codex\n"
    )
    assert processes_in(tmp_path) == [], "a runtime process outlived its example"


OTHER_MODEL = {"claude-code": "claude-sonnet-4-6", "codex": "gpt-5.4", "opencode": "anthropic/claude-haiku-4-5"}


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_set_model_reaches_the_next_request_in_the_same_process(runtime: str, rig: Any, tmp_path: Path) -> None:
    r = rig(runtime, [text_reply(runtime, "One."), text_reply(runtime, "Two."), text_reply(runtime, "Three.")])
    with r.host(sna_history.Store(tmp_path / "history.db")) as host:
        agent = r.start(host)
        agent.send("First.", timeout=120)
        agent.set_model(OTHER_MODEL[runtime])
        agent.send("Second.", timeout=120)
        agent.send("Third.", timeout=120)
        assert agent.status().spawns == 1 and agent.status().model == OTHER_MODEL[runtime]
        assert "model_changed" in [e.type for e in agent.events()]
    wanted = OTHER_MODEL[runtime].split("/")[-1]
    assert [q["model"] for q in r.requests()[1:]] == [wanted, wanted]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_set_model_after_the_process_died_names_the_model_at_the_resume(runtime: str, rig: Any, tmp_path: Path) -> None:
    """Found by the chaos campaign (seed 47, step 159): `set_model` after a kill -9 between turns
    wrote to the dead process ("Broken pipe") instead of keeping the model for the next start."""
    r = rig(runtime, [text_reply(runtime, "Before."), text_reply(runtime, "After.")])
    with r.host(sna_history.Store(tmp_path / "history.db")) as host:
        agent = r.start(host)
        agent.send("First.", timeout=120)
        pid = agent.status().pid
        os.killpg(pid, signal.SIGKILL)
        wait_until(lambda: not agent.status().alive)
        agent.set_model(OTHER_MODEL[runtime])
        turn = agent.send("Second.", timeout=120)
        r.track(agent)
        assert turn.text == "After." and agent.status().spawns == 2 and agent.status().model == OTHER_MODEL[runtime]
    assert r.requests()[-1]["model"] == OTHER_MODEL[runtime].split("/")[-1]


def test_a_session_built_without_models_goes_on_in_opencode(rig: Any, tmp_path: Path) -> None:
    """A session whose blocks name no model, started in OpenCode without one: the replayed
    document cannot name a model, so every message names the one OpenCode is configured with."""
    r = rig("opencode", [text_reply("opencode", "Picked up.")])
    store = sna_history.Store(tmp_path / "history.db")
    session = store.create_session(id="plain", cwd=str(r.cwd))
    session.append(actor="user", kind="text", content="Built through the API.")
    session.append(actor="assistant", kind="text", content="Without any model named.")
    with r.host(store) as host:
        agent = r.start(host, session_id="plain", default_model=True)
        turn = agent.send("Go on.", timeout=120)
        assert turn.text == "Picked up." and turn.resumed_via == "replay"
    (request,) = r.requests()
    assert request["model"] == "claude-sonnet-4-5"
    assert "Built through the API." in said(request) and "Without any model named." in said(request)
