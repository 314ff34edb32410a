"""`sna serve` over HTTP, driving the real CLIs against the mock model servers: the agent routes
and their answers, the event stream (cursors, reconnects), recovery after the runtime is killed,
switching runtime with `/agent/restart`, compaction (`/agent/compact`, the compactions route), the
history routes, auth (token, cookie, origin) and the error answers."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.common import QUIET_ENV, RED_PNG, cargo_executable, said, wait_until
from helpers.host import A2, INSTRUCTIONS, P1, P2, RUNTIMES
from helpers.mocks import held, summary_reply, text_reply, tool_reply
from helpers.processes import assert_gone
from helpers.runtimes import CODEX_MODEL, MODEL
from helpers.serve import track


def start_body(runtime: str, rig: Any, **extra: Any) -> dict[str, Any]:
    body = {"provider": runtime, "model": MODEL[runtime], "cwd": str(rig.cwd), **extra}
    if runtime == "claude-code":
        body["extraArgs"] = ["--allowedTools", "Bash Read"]
    return {k: v for k, v in body.items() if v is not None}


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_start_send_events_status_kill_and_resume(runtime: str, rig: Any, serve: Any) -> None:
    """Start, a turn with a tool call seen on the event stream, a waited turn answered with its
    blocks, status, kill -9 of the runtime and a resume through its own thread, kill."""
    call = "call_srv_ls" if runtime == "codex" else "toolu_srv_ls_0000000000001"
    r = rig(runtime, [tool_reply(runtime, call, "ls"), text_reply(runtime, "Two files."), text_reply(runtime, "Still here."), text_reply(runtime, "Back again.")])
    server = serve(r)
    assert server.ok("POST", "/agent/sessions", {"id": "s1", "label": "Serve test", "cwd": str(r.cwd)})["title"] == "Serve test"
    stream = server.events("s1")
    started = server.ok("POST", "/agent/start?session=s1", start_body(runtime, r))
    assert started["status"] == "started" and started["provider"] == runtime and started["sessionId"] == "s1"
    status = track(server)
    assert status["alive"] and status["agentStatus"] == "idle" and status["spawns"] == 1 and status["pid"] == started["pid"]
    again = server.ok("POST", "/agent/start?session=s1", start_body(runtime, r))
    assert again["status"] == "already_running" and again["pid"] == started["pid"]

    assert server.ok("POST", "/agent/send?session=s1", {"message": "List the files."}) == {"status": "sent"}
    stream.wait_for("complete")
    types = stream.types()
    assert types[0] == "started" and stream.events[0]["data"]["runtime"] == runtime
    for kind in ("user_message", "tool_use", "tool_result", "assistant", "complete"):
        assert kind in types, (kind, types)
    assert types.index("tool_use") < types.index("tool_result") < types.index("assistant") < types.index("complete")
    assert all(e["data"]["block"]["actor"] == "assistant" for e in stream.events if e["type"] == "assistant")
    # Cursors are the SSE ids, increasing; block events carry the stored block and its text.
    assert stream.ids == [e["cursor"] for e in stream.events] and stream.ids == sorted(set(stream.ids))
    answer = next(e for e in stream.events if e["type"] == "assistant")
    assert answer["message"] == "Two files." and answer["data"]["block"]["provider"] == runtime
    result = next(e for e in stream.events if e["type"] == "tool_result")
    assert "data.csv" in result["data"]["block"]["content"]
    wait_until(lambda: server.ok("GET", "/agent/status?session=s1")["agentStatus"] == "idle")

    waited = server.ok("POST", "/agent/send?session=s1&wait=1", {"message": "Are you there?"})
    assert waited["status"] == "completed" and waited["text"] == "Still here."
    assert [b["content"] for b in waited["blocks"] if b["actor"] == "user" and b["kind"] == "text"][0] == "Are you there?"
    status = track(server)
    assert status["spawns"] == 1 and status["nativeId"] and status["lastMessage"]["content"] == "Still here."
    assert status["messageCount"] == server.ok("GET", "/sessions/s1/blocks")["blocks"][-1]["seq"] + 1

    # The history routes see the same blocks.
    blocks = server.ok("GET", "/sessions/s1/blocks")["blocks"]
    assert [b["content"] for b in blocks if b["actor"] == "assistant" and b["kind"] == "text"][-2:] == ["Two files.", "Still here."]
    later = server.ok("GET", f"/sessions/s1/blocks?since_seq={blocks[-3]['seq']}")["blocks"]
    assert [b["seq"] for b in later] == [b["seq"] for b in blocks[-2:]]
    switches = server.ok("GET", "/sessions/s1/switches")["switches"]
    assert switches[0]["to"]["provider"] == runtime
    status_code, text, headers = server.call("GET", f"/sessions/s1/native/{runtime}")
    text = text if isinstance(text, bytes) else json.dumps(text).encode()
    assert status_code == 200 and b"Still here." in text and headers["content-type"].startswith(("application/x-ndjson", "application/json"))

    # kill -9 of the runtime: the agent notices, resume comes back through the runtime's own thread.
    pid = status["pid"]
    os.killpg(pid, signal.SIGKILL)
    wait_until(lambda: not server.ok("GET", "/agent/status?session=s1")["alive"])
    assert_gone(pid)
    assert server.ok("GET", "/agent/status?session=s1")["agentStatus"] == "disconnected"
    stream.wait_for("exited")
    resumed = server.ok("POST", "/agent/resume?session=s1", {})
    assert resumed["status"] == "resumed" and resumed["via"] == "native" and resumed["provider"] == runtime
    code, body, _ = server.call("POST", "/agent/resume?session=s1", {})
    assert code == 409 and body["code"] == "CONFLICT" and body["status"] == "error"
    status = track(server)
    assert status["spawns"] == 2 and status["alive"]
    assert server.ok("POST", "/agent/send?session=s1&wait=1", {"message": "And now?"})["text"] == "Back again."
    assert server.ok("POST", "/agent/kill?session=s1") == {"status": "killed"}
    assert server.ok("POST", "/agent/kill?session=s1") == {"status": "no_session"}
    stream.wait_for("killed")
    assert_gone(status["pid"])
    stream.close()


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_interrupt_and_image(runtime: str, rig: Any, serve: Any, tmp_path: Path) -> None:
    release = tmp_path / "release"
    r = rig(runtime, [held(release, text_reply(runtime, "Too late.")), text_reply(runtime, "It is red.")])
    server = serve(r)
    server.ok("POST", "/agent/start?session=s1", start_body(runtime, r))
    pid = track(server)["pid"]
    stream = server.events("s1")
    server.ok("POST", "/agent/send?session=s1", {"message": "Think for a long time."})
    r.wait_for_requests(1)
    assert server.ok("GET", "/agent/status?session=s1")["agentStatus"] == "busy"
    assert server.ok("POST", "/agent/interrupt?session=s1") == {"status": "interrupted"}
    stream.wait_for("interrupted")
    release.touch()
    status = track(server)
    assert status["alive"] and status["pid"] == pid
    image = {"base64": base64.b64encode(RED_PNG).decode(), "mimeType": "image/png"}
    turn = server.ok("POST", "/agent/send?session=s1&wait=1", {"message": "What colour is this?", "images": [image]})
    assert turn["text"] == "It is red."
    (embed_id,) = [k for b in turn["blocks"] if b["actor"] == "user" for k in (b.get("embeds") or {})]
    code, data, headers = server.call("GET", f"/sessions/s1/embeds/{embed_id}")
    assert code == 200 and data == RED_PNG and headers["content-type"] == "image/png"
    assert base64.b64encode(RED_PNG).decode() in json.dumps(r.requests()[-1])
    stream.close()


def test_restart_switches_runtime_and_the_stream_says_so(rig: Any, serve: Any) -> None:
    claude = rig("claude-code", [text_reply("claude-code", "Claude here: the word is teal.")], name="claude")
    codex = rig("codex", [text_reply("codex", "Codex here: it was teal.")], name="codex")
    env = {**claude.env, **codex.env}
    claude.env = env
    server = serve(claude)
    assert server.call("GET", "/agent/events?session=s1")[0] == 404  # no such session yet
    server.ok("POST", "/agent/start?session=s1", start_body("claude-code", claude))
    track(server)
    assert server.ok("POST", "/agent/send?session=s1&wait=1", {"message": "Remember the word teal."})["text"].startswith("Claude here")
    restarted = server.ok("POST", "/agent/restart?session=s1", {"provider": "codex"})
    assert restarted["status"] == "restarted" and restarted["provider"] == "codex" and restarted["via"] == "replay"
    track(server)
    turn = server.ok("POST", "/agent/send?session=s1&wait=1", {"message": "Which word?"})
    assert turn["text"] == "Codex here: it was teal."
    assert "Remember the word teal." in json.dumps(codex.mock.responses_requests()[0])
    switches = server.ok("GET", "/sessions/s1/switches")["switches"]
    assert [s["to"]["provider"] for s in switches] == ["claude-code", "codex"]
    # No model named: Codex goes on with the one it is configured with, not Claude Code's.
    assert switches[1]["to"]["model"] == CODEX_MODEL
    everything = server.events("s1", since=0)
    everything.wait_for("complete", 2)
    assert "switched" in everything.types() and everything.events[everything.types().index("switched")]["data"]["runtime"] == "codex"
    everything.close()
    server.ok("POST", "/agent/kill?session=s1")


def test_a_reconnecting_subscriber_gets_every_event_once(rig: Any, serve: Any) -> None:
    replies = [text_reply("claude-code", f"Answer {i}.") for i in range(4)]
    r = rig("claude-code", replies)
    server = serve(r)
    server.ok("POST", "/agent/start?session=s1", start_body("claude-code", r))
    track(server)
    first = server.events("s1", since=0)
    server.ok("POST", "/agent/send?session=s1&wait=1", {"message": "One."})
    first.wait_for("complete", 1)
    first.close()
    last_seen = first.ids[-1]
    # Events happen while nobody listens; then one reconnects by Last-Event-ID, one by since.
    server.ok("POST", "/agent/send?session=s1&wait=1", {"message": "Two."})
    by_header = server.events("s1", last_event_id=last_seen)
    by_since = server.events("s1", since=last_seen)
    server.ok("POST", "/agent/send?session=s1&wait=1", {"message": "Three."})
    by_header.wait_for("complete", 2)
    by_since.wait_for("complete", 2)
    whole = server.events("s1", since=0)
    whole.wait_for("complete", 3)
    for again in (by_header, by_since):
        joined = first.ids + again.ids
        assert len(joined) == len(set(joined)), "an event came twice"
        assert joined == whole.ids, "an event is missing"
        again.close()
    whole.close()
    server.ok("POST", "/agent/kill?session=s1")


def test_token_cookie_and_origin(serve: Any, tmp_path: Path) -> None:
    server = serve(token="s3cret-token")
    assert server.call("GET", "/agent/sessions", auth=False)[0] == 401
    code, body, _ = server.call("GET", "/agent/sessions", headers={"Authorization": "Bearer wrong"})
    assert code == 401 and body["code"] == "UNAUTHORIZED" and "token" in body["message"]
    assert server.call("GET", "/agent/sessions")[0] == 200
    # A page without the token goes to the login; the login page itself is open.
    code, _, headers = server.call("GET", "/", auth=False)
    assert code in (302, 303, 307) and headers["location"] == "/login"
    code, page, _ = server.call("GET", "/login", auth=False)
    assert code == 200 and b'name="token"' in page
    # /?token=… once: an HttpOnly, SameSite=Strict cookie, and the page again without the token.
    code, _, headers = server.call("GET", "/?token=s3cret-token", auth=False)
    assert code in (302, 303, 307) and headers["location"] == "/"
    cookie = headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    jar = {"Cookie": cookie.split(";")[0]}
    assert server.call("GET", "/agent/sessions", headers=jar)[0] == 200
    assert server.call("GET", "/", headers=jar)[0] == 200
    assert server.call("GET", "/agent/sessions", headers={"Cookie": "sna_session=forged"})[0] == 401
    # The login form: the right token gives a cookie, a wrong one the form again.
    code, _, headers = server.call("POST", "/login", raw=b"token=s3cret-token", headers={"Content-Type": "application/x-www-form-urlencoded"}, auth=False)
    assert code in (302, 303) and "sna_session=" in headers["set-cookie"]
    code, _, headers = server.call("POST", "/login", raw=b"token=nope", headers={"Content-Type": "application/x-www-form-urlencoded"}, auth=False)
    assert code in (302, 303) and headers["location"] == "/login?failed=1" and "set-cookie" not in headers
    # A mutating request from another site is refused even with a valid cookie; the same origin passes.
    code, body, _ = server.call("POST", "/agent/sessions", {"id": "x"}, headers={**jar, "Origin": "http://evil.example"})
    assert code == 403 and body["code"] == "FORBIDDEN"
    assert server.call("POST", "/agent/sessions", {"id": "x"}, headers={**jar, "Origin": server.url})[0] == 201
    # Anything but loopback needs a token.
    sna = cargo_executable("sna-cli", "bin", "sna")
    out = subprocess.run([str(sna), "--db", str(tmp_path / "h.db"), "serve", "--host", "0.0.0.0", "--port", "0"],
                         capture_output=True, text=True, timeout=30, env={k: v for k, v in {**os.environ, **QUIET_ENV}.items() if k != "SNA_TOKEN"})
    assert out.returncode == 1 and "without a token" in out.stderr


def test_error_answers(serve: Any, tmp_path: Path) -> None:
    server = serve(args=["--max-body-mib", "1"])
    def error(method: str, path: str, body: Any = None, **kw: Any) -> tuple[int, dict[str, Any]]:
        code, answer, _ = server.call(method, path, body, **kw)
        assert isinstance(answer, dict) and answer["status"] == "error" and answer["code"] and answer["message"], answer
        return code, answer

    code, answer = error("POST", "/agent/sessions", raw=b'{"id": ')
    assert code == 400 and answer["message"].startswith("body: not JSON")
    code, answer = error("POST", "/agent/start?session=s1", {"provider": "vim"})
    assert code == 400 and answer["message"].startswith("provider:")
    code, answer = error("POST", "/agent/start?session=s1", {"extraArgs": ["ok", 3]})
    assert code == 400 and answer["message"].startswith("extraArgs[1]:")
    code, answer = error("POST", "/agent/send?session=s1", {"message": "hi", "images": [{"base64": "@@@", "mimeType": "image/png"}]})
    assert code == 400 and answer["message"].startswith("images[0].base64:")
    code, answer = error("POST", "/agent/send?session=s1", {"message": "hi", "images": [{"base64": "JVBERi0=", "mimeType": "application/pdf"}]})
    assert code == 400 and answer["message"].startswith("images[0].mimeType:") and "not an image type" in answer["message"]
    code, answer = error("POST", "/agent/send?session=s1", {"message": "hi", "colour": "red"})
    assert code == 400 and answer["message"].startswith("colour: unknown field")
    code, answer = error("POST", "/agent/send?session=nobody", {"message": "hi"})
    assert code == 404 and "/agent/start" in answer["message"]
    assert error("GET", "/sessions/nobody/blocks")[0] == 404
    assert error("GET", "/agent/status?session=nobody")[0] == 404
    assert error("GET", "/agent/events?session=nobody")[0] == 404
    assert error("GET", "/sessions/nobody/native/codex")[0] == 404
    assert error("POST", "/agent/resume?session=nobody", {})[0] == 404
    server.ok("POST", "/agent/sessions", {"id": "taken"})
    code, answer = error("POST", "/agent/sessions", {"id": "taken"})
    assert code == 409 and answer["code"] == "CONFLICT"
    assert error("GET", "/sessions/taken/embeds/none")[0] == 404
    assert error("GET", "/sessions/taken/blocks?since_seq=x")[0] == 400
    code, answer = error("POST", "/agent/resume?session=taken", {})
    assert code == 400 and "runtime" in answer["message"]
    code, answer = error("POST", "/agent/sessions", raw=b'{"id": "' + b"x" * (1 << 20) + b'"}')
    assert code == 413 and answer["code"] == "TOO_LARGE"
    assert error("GET", "/no/such/route")[0] == 404
    assert error("DELETE", "/agent/start")[0] == 405
    assert server.call("DELETE", "/agent/sessions/taken")[0] == 200
    assert error("DELETE", "/agent/sessions/taken")[0] == 404
    # Requests must name a loopback host when there is no token (no DNS rebinding).
    assert error("GET", "/info", headers={"Host": "attacker.example"})[0] == 403


def test_load_fan_out_and_many_agents(rig: Any, serve: Any) -> None:
    """On 127.0.0.1: 100 subscribers of one session each get every event of a turn, in order; 50
    sessions listed; 20 Codex agents started and answering at once against the instant mock."""
    import threading

    r = rig("codex", [])  # every request gets the mock's instant fallback answer
    server = serve(r)
    for i in range(50):
        server.ok("POST", "/agent/sessions", {"id": f"listed-{i:02}", "label": f"Listed {i}"})
    assert {f"listed-{i:02}" for i in range(50)} <= {s["id"] for s in server.ok("GET", "/agent/sessions")["sessions"]}

    agents = [f"agent-{i:02}" for i in range(20)]
    answers: dict[str, Any] = {}
    failures: list[BaseException] = []

    def run(session: str) -> None:
        try:
            server.ok("POST", f"/agent/start?session={session}", start_body("codex", r))
            answers[session] = server.ok("POST", f"/agent/send?session={session}&wait=1", {"message": f"Hello from {session}."})
        except BaseException as e:  # noqa: BLE001 (reported below)
            failures.append(e)

    threads = [threading.Thread(target=run, args=(s,)) for s in agents]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not failures, failures
    listed = {s["id"]: s for s in server.ok("GET", "/agent/sessions")["sessions"]}
    for session in agents:
        assert answers[session]["status"] == "completed" and answers[session]["text"], answers[session]
        assert listed[session]["agent"]["alive"], listed[session]
        track(server, session)
    assert len({track(server, s)["pid"] for s in agents}) == 20

    subscribers = [server.events("agent-00") for _ in range(100)]
    server.ok("POST", "/agent/send?session=agent-00&wait=1", {"message": "Once more, for everyone."})
    reference = server.events("agent-00", since=0)
    reference.wait_for("complete", 2)
    turn = reference.ids[reference.ids.index(subscribers[0].ids[0]) if subscribers[0].ids else 0:]
    for sub in subscribers:
        sub.wait_for("complete", 1)
    for sub in subscribers:
        assert sub.ids == turn, "a subscriber missed an event or got it out of order"
        sub.close()
    reference.close()
    for session in agents:
        assert server.ok("POST", f"/agent/kill?session={session}") == {"status": "killed"}


def test_compact_over_http_and_a_switch_that_starts_from_the_summary(rig: Any, serve: Any) -> None:
    """`POST /agent/compact`: Claude Code compacts with its own `/compact` (the instructions passed on),
    the answer carries the compaction that `/sessions/{id}/compactions` then lists and the event stream
    announced; a restart in Codex replays from that compaction (the answers say so). No agent: a
    `no_session` answer; a `contextWindow` that is no whole number above 0: a 400 naming it."""
    claude = rig("claude-code", [text_reply("claude-code", "First: two files."), text_reply("claude-code", A2), summary_reply("claude-code")], name="claude")
    codex = rig("codex", [text_reply("codex", "Codex goes on from the summary.")], name="codex")
    claude.env = {**claude.env, **codex.env}
    server = serve(claude)
    server.ok("POST", "/agent/sessions", {"id": "s1", "cwd": str(claude.cwd)})
    assert server.ok("POST", "/agent/compact?session=s1", {}) == {"status": "no_session"}
    for route, body in (("start", start_body("claude-code", claude, contextWindow=0)), ("start", {"contextWindow": 1.5}), ("resume", {"contextWindow": "big"}), ("restart", {"contextWindow": -1})):
        code, answer, _ = server.call("POST", f"/agent/{route}?session=s1", body)
        assert code == 400 and answer["code"] == "INVALID_INPUT" and answer["message"].startswith("contextWindow:"), (route, body, answer)
    assert not server.ok("GET", "/agent/status?session=s1")["alive"]  # nothing was started

    started = server.ok("POST", "/agent/start?session=s1", start_body("claude-code", claude, contextWindow=200_000))
    assert started["status"] == "started" and started["via"] is None and started["replay"] is None, started  # nothing to replay
    track(server)
    stream = server.events("s1")
    first = server.ok("POST", "/agent/send?session=s1&wait=1", {"message": P1})
    assert first["text"] == "First: two files." and first["replay"] is None and first["resumedVia"] is None
    assert server.ok("POST", "/agent/send?session=s1&wait=1", {"message": P2})["text"] == A2
    assert server.ok("GET", "/sessions/s1/compactions") == {"sessionId": "s1", "compactions": []}

    compacted = server.ok("POST", "/agent/compact?session=s1", {"instructions": INSTRUCTIONS})
    assert compacted["status"] == "compacted", compacted
    compaction = compacted["compaction"]
    assert compaction["runtime"] == "claude-code" and compaction["trigger"] == "manual", compaction
    assert "SUMMARY-MARKER-claude-code" in compaction["summary"] and compaction["summary_seq"] >= compaction["boundary_seq"], compaction
    # Claude Code's summary request (its third model request) went over the turns, with the instructions.
    summarizing = said(claude.requests()[2])
    assert INSTRUCTIONS in summarizing and "FIRST-PROMPT-MARK" in summarizing and A2 in summarizing
    assert server.ok("GET", "/sessions/s1/compactions") == {"sessionId": "s1", "compactions": [compaction]}
    blocks = {b["seq"]: b for b in server.ok("GET", "/sessions/s1/blocks")["blocks"]}
    assert "SUMMARY-MARKER-claude-code" in blocks[compaction["summary_seq"]]["content"]
    stream.wait_for("compacted")
    (event,) = [e for e in stream.events if e["type"] == "compacted"]
    assert event["data"]["compaction"] == compaction
    status = track(server)
    assert status["alive"] and status["agentStatus"] == "idle" and status["spawns"] == 1

    # Codex takes over: its replay starts at the compaction (the answers of the restart and of the
    # first turn say so), and what the summary replaced is not sent again.
    restarted = server.ok("POST", "/agent/restart?session=s1", {"provider": "codex", "contextWindow": 100_000})
    assert restarted["status"] == "restarted" and restarted["via"] == "replay", restarted
    assert restarted["replay"]["compaction_seq"] == compaction["boundary_seq"] and restarted["replay"]["folded"] is None, restarted
    track(server)
    turn = server.ok("POST", "/agent/send?session=s1&wait=1", {"message": "Where were we?"})
    assert turn["text"] == "Codex goes on from the summary." and turn["resumedVia"] == "replay"
    assert turn["replay"]["compaction_seq"] == compaction["boundary_seq"], turn["replay"]
    first_codex = said(codex.requests()[0])
    assert "SUMMARY-MARKER-claude-code" in first_codex and "Where were we?" in first_codex
    assert "FIRST-PROMPT-MARK" not in first_codex and "First: two files." not in first_codex
    stream.close()
    assert server.ok("POST", "/agent/kill?session=s1") == {"status": "killed"}
