"""`sna acp` driven over stdio by an ACP client (the @agentclientprotocol/sdk package, acp_client.mjs),
the real Claude Code, Codex and OpenCode against the mock model servers: a session started in Claude
Code, switched to Codex, opened in a fresh `sna acp`, continued in OpenCode; an imported transcript
listed, loaded and continued in another runtime; a permission refused; a turn cancelled; bypass as
root refused before Claude Code runs (unless IS_SANDBOX=1); bad params
and unknown ids as JSON-RPC errors (raw JSON lines, numeric ids); the `/compact` command offered and run
through the runtime's own compaction."""

from __future__ import annotations

import base64
import json
import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import sna_history
from helpers.common import QUIET_ENV, RED_PNG, ROOT, bin_flags, cargo_executable, cli, make_project, said
from helpers.mocks import held, summary_reply, text_reply, tool_reply
from helpers.processes import assert_gone, with_home
from helpers.runtimes import MODEL, runtime_env

CLIENT = Path(__file__).parent / "acp_client.mjs"
FIXTURE = ROOT / "tests" / "fixtures" / "claude-code" / "tools-thinking" / "60aa014b-82fa-4f7d-8a5d-270b96a69979.jsonl"


@pytest.fixture(scope="module")
def sna() -> Path:
    return cargo_executable("sna-cli", "bin", "sna")


class Client:
    """One `sna acp` process behind acp_client.mjs; requests by tag, events as they come."""

    def __init__(self, sna: Path, db: Path, home: Path, env: dict[str, str], *args: str) -> None:
        argv = ["node", str(CLIENT), str(sna), "--db", str(db), "acp", *bin_flags(), "--home", str(home), *args]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=Path(__file__).parent, start_new_session=True)
        self.answers: dict[str, dict[str, Any]] = {}
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.log: list[dict[str, Any]] = []
        self.lock = threading.Condition()
        self.tags = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout
        for line in self.proc.stdout:
            message = json.loads(line)
            with self.lock:
                if "tag" in message:
                    self.answers[message["tag"]] = message
                else:
                    self.log.append(message)
                    self.events.put(message)
                self.lock.notify_all()

    def send(self, command: dict[str, Any]) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()

    def start(self, method: str, params: dict[str, Any]) -> str:
        self.tags += 1
        tag = f"t{self.tags}"
        self.send({"op": "request", "tag": tag, "method": method, "params": params})
        return tag

    def wait(self, tag: str, timeout: float = 180) -> dict[str, Any]:
        with self.lock:
            assert self.lock.wait_for(lambda: tag in self.answers, timeout), f"no answer to {tag}"
            return self.answers.pop(tag)

    def call(self, method: str, params: dict[str, Any], timeout: float = 180) -> dict[str, Any]:
        answer = self.wait(self.start(method, params), timeout)
        assert "result" in answer, answer
        return answer

    def close(self) -> tuple[int, int]:
        self.send({"op": "close", "tag": "close"})
        answer = self.wait("close", 60)
        self.proc.wait(30)
        return answer["code"], answer["pid"]


def texts(updates: list[dict[str, Any]], kind: str) -> str:
    return "".join(u["update"]["content"].get("text", "") for u in updates if u["update"]["sessionUpdate"] == kind)


def kinds(updates: list[dict[str, Any]]) -> list[str]:
    return [u["update"]["sessionUpdate"] for u in updates]


def option(options: list[dict[str, Any]], config_id: str) -> dict[str, Any]:
    (found,) = [o for o in options if o["id"] == config_id]
    return found


def setup(tmp_path: Path, anthropic_mock: Any, openai_mock: Any, claude: list[Any], codex: list[Any], opencode: list[Any]) -> tuple[dict[str, Any], Path, Path, dict[str, str]]:
    mocks = {"claude-code": anthropic_mock(claude, name="claude"), "codex": openai_mock(codex, name="codex"), "opencode": anthropic_mock(opencode, name="opencode")}
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TERM")}
    for runtime, mock in mocks.items():
        env.update(runtime_env(runtime, home, mock))
    env.update(QUIET_ENV)
    env["HOME"] = str(tmp_path / "sna-home")  # sna's own; the runtimes get --home
    return mocks, home, make_project(tmp_path), env


def initialize(client: Client) -> dict[str, Any]:
    return client.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "test", "version": "1"}})["result"]


def test_a_session_goes_from_claude_code_to_codex_then_opens_in_a_fresh_agent_and_goes_on_in_opencode(sna: Path, tmp_path: Path, anthropic_mock: Any, openai_mock: Any) -> None:
    mocks, home, cwd, env = setup(
        tmp_path,
        anthropic_mock,
        openai_mock,
        claude=[tool_reply("claude-code", "toolu_acp_ls_0000000000000001", "ls"), text_reply("claude-code", "Leg one done."), text_reply("claude-code", "Leg one, again.")],
        codex=[text_reply("codex", "Leg two done."), text_reply("codex", "The import goes on.")],
        opencode=[text_reply("opencode", "Leg three done.")],
    )
    db = tmp_path / "history.db"
    imported = subprocess.run([str(sna), "--db", str(db), "import", str(FIXTURE)], capture_output=True, text=True, env=env, check=True)
    assert imported.returncode == 0

    first = Client(sna, db, home, env)
    init = initialize(first)
    capabilities = init["agentCapabilities"]
    assert init["protocolVersion"] == 1 and init["authMethods"] == []
    assert capabilities["loadSession"] is True
    assert capabilities["promptCapabilities"]["image"] is True and capabilities["promptCapabilities"]["embeddedContext"] is True
    assert set(capabilities["sessionCapabilities"]) >= {"list", "resume"}

    new = first.call("session/new", {"cwd": str(cwd), "mcpServers": []})["result"]
    sid = new["sessionId"]
    runtimes = {o["value"] for o in option(new["configOptions"], "runtime")["options"]}
    assert {"claude-code", "codex", "opencode"} <= runtimes
    assert {o["id"] for o in new["configOptions"]} == {"runtime", "model", "permission_mode"}
    first.call("session/set_config_option", {"sessionId": sid, "configId": "runtime", "value": "claude-code"})
    first.call("session/set_config_option", {"sessionId": sid, "configId": "model", "value": MODEL["claude-code"]})

    one = first.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "Leg one: list the files."}]})
    assert one["result"]["stopReason"] == "end_turn"
    calls = [u["update"] for u in one["updates"] if u["update"]["sessionUpdate"] == "tool_call"]
    assert [c["toolCallId"] for c in calls] == ["toolu_acp_ls_0000000000000001"]
    assert calls[0]["rawInput"]["command"] == "ls" and calls[0]["kind"] == "execute" and "ls" in calls[0]["title"]
    results = [u["update"] for u in one["updates"] if u["update"]["sessionUpdate"] == "tool_call_update" and u["update"].get("status") == "completed"]
    assert results and "data.csv" in results[-1]["rawOutput"]
    assert "Leg one done." in texts(one["updates"], "agent_message_chunk")
    claude_pids = with_home(home, "stream-json")
    assert len(claude_pids) == 1

    png = base64.b64encode(RED_PNG).decode()
    again = first.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "Once more."}, {"type": "image", "data": png, "mimeType": "image/png"}]})
    assert "Leg one, again." in texts(again["updates"], "agent_message_chunk")
    assert png in said(mocks["claude-code"].model_requests()[-1])
    assert with_home(home, "stream-json") == claude_pids  # the same process served both prompts

    switched = first.call("session/set_config_option", {"sessionId": sid, "configId": "runtime", "value": "codex"})
    assert option(switched["result"]["configOptions"], "runtime")["currentValue"] == "codex"
    assert "config_option_update" in kinds(switched["updates"])
    two = first.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "Leg two: your turn."}]})
    assert two["result"]["stopReason"] == "end_turn"
    assert "Leg two done." in texts(two["updates"], "agent_message_chunk")
    codex_first = said(mocks["codex"].responses_requests()[0])
    missing = [s for s in ("Leg one: list the files.", "toolu_acp_ls_0000000000000001", "data.csv", "Leg one done.", "Leg one, again.", "Leg two: your turn.") if s not in codex_first]
    assert missing == []
    code, pid = first.close()
    assert code == 0
    assert_gone(pid)
    for p in claude_pids:
        assert_gone(p)

    second = Client(sna, db, home, env, "--page-size", "1")
    initialize(second)
    listed: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = second.call("session/list", {} if cursor is None else {"cursor": cursor})["result"]
        assert len(page["sessions"]) <= 1
        listed += page["sessions"]
        cursor = page.get("nextCursor")
        if not cursor:
            break
    assert [s["sessionId"] for s in listed][0] == sid  # newest first
    by_id = {s["sessionId"]: s for s in listed}
    assert by_id[sid]["title"] == "Leg one: list the files." and by_id[sid]["cwd"] == str(cwd)
    assert by_id["60aa014b-82fa-4f7d-8a5d-270b96a69979"]["title"].startswith("What files are in this project?")
    assert by_id[sid]["updatedAt"].endswith("Z") or "+" in by_id[sid]["updatedAt"]

    loaded = second.call("session/load", {"sessionId": sid, "cwd": str(cwd), "mcpServers": []})
    assert option(loaded["result"]["configOptions"], "runtime")["currentValue"] == "codex"
    replay = loaded["updates"]  # every one of them arrived before the answer
    users = [u["update"]["content"].get("text") or u["update"]["content"]["type"] for u in replay if u["update"]["sessionUpdate"] == "user_message_chunk"]
    assert users == ["Leg one: list the files.", "image", "Once more.", "Leg two: your turn."]
    (image,) = [u["update"]["content"] for u in replay if u["update"]["sessionUpdate"] == "user_message_chunk" and u["update"]["content"]["type"] == "image"]
    assert image == {"type": "image", "data": png, "mimeType": "image/png"}
    order = [(u["update"]["sessionUpdate"], u["update"].get("toolCallId")) for u in replay if u["update"]["sessionUpdate"] in ("tool_call", "tool_call_update")]
    assert order == [("tool_call", "toolu_acp_ls_0000000000000001"), ("tool_call_update", "toolu_acp_ls_0000000000000001")]
    agent_text = texts(replay, "agent_message_chunk")
    assert agent_text.index("Leg one done.") < agent_text.index("Leg one, again.") < agent_text.index("Leg two done.")

    second.call("session/set_config_option", {"sessionId": sid, "configId": "runtime", "value": "opencode"})
    second.call("session/set_config_option", {"sessionId": sid, "configId": "model", "value": MODEL["opencode"]})
    three = second.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "Leg three: where are we?"}]})
    assert "Leg three done." in texts(three["updates"], "agent_message_chunk")
    opencode_first = said(mocks["opencode"].model_requests()[0])
    assert [s for s in ("Leg one: list the files.", "Leg one done.", "Leg two done.", "Leg three: where are we?") if s not in opencode_first] == []

    # The imported transcript: listed, loaded (thinking and its two tool calls), continued in Codex.
    fixture_id = "60aa014b-82fa-4f7d-8a5d-270b96a69979"
    shown = second.call("session/load", {"sessionId": fixture_id, "cwd": str(cwd), "mcpServers": []})
    assert option(shown["result"]["configOptions"], "runtime")["currentValue"] == "claude-code"
    assert "agent_thought_chunk" in kinds(shown["updates"])
    assert [u["update"]["title"] for u in shown["updates"] if u["update"]["sessionUpdate"] == "tool_call"] == ["Bash: ls", "Read: /home/dev/project/notes.txt"]
    second.call("session/set_config_option", {"sessionId": fixture_id, "configId": "runtime", "value": "codex"})
    on = second.call("session/prompt", {"sessionId": fixture_id, "prompt": [{"type": "text", "text": "Go on from there."}]})
    assert "The import goes on." in texts(on["updates"], "agent_message_chunk")
    assert "What files are in this project?" in said(mocks["codex"].responses_requests()[-1])
    code, pid = second.close()
    assert code == 0
    assert_gone(pid)
    assert with_home(home, "") == set()


def test_a_refused_tool_and_a_cancelled_turn_leave_the_process_running(sna: Path, tmp_path: Path, anthropic_mock: Any, openai_mock: Any) -> None:
    release = tmp_path / "release"
    mocks, home, cwd, env = setup(
        tmp_path,
        anthropic_mock,
        openai_mock,
        claude=[
            tool_reply("claude-code", "toolu_acp_touch_00000000000001", "touch made.txt"),
            text_reply("claude-code", "Refused; going on."),
            held(release, text_reply("claude-code", "Too late.")),
            text_reply("claude-code", "Still here."),
            held(tmp_path / "release-2", text_reply("claude-code", "Never seen.")),
            text_reply("claude-code", "Back again."),
        ],
        codex=[],
        opencode=[],
    )
    client = Client(sna, tmp_path / "history.db", home, env, "--runtime", "claude-code", "--model", MODEL["claude-code"])
    initialize(client)
    sid = client.call("session/new", {"cwd": str(cwd), "mcpServers": []})["result"]["sessionId"]
    client.send({"op": "permissions", "answer": "reject"})
    refused = client.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "Make a file."}]})
    assert refused["result"]["stopReason"] == "end_turn"
    asked = [e["params"] for e in client.log if e.get("event") == "permission"]
    assert len(asked) == 1 and asked[0]["sessionId"] == sid
    assert asked[0]["toolCall"]["toolCallId"] == "toolu_acp_touch_00000000000001" and "touch made.txt" in asked[0]["toolCall"]["title"]
    assert {o["kind"] for o in asked[0]["options"]} == {"allow_once", "reject_once"}
    assert not (cwd / "made.txt").exists()
    failed = [u["update"] for u in refused["updates"] if u["update"]["sessionUpdate"] == "tool_call_update"]
    assert failed and failed[-1]["status"] == "failed"
    assert "Refused; going on." in texts(refused["updates"], "agent_message_chunk")
    (pid,) = with_home(home, "stream-json")

    turn = client.start("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "Think for a long time."}]})
    deadline = time.monotonic() + 60
    while len(mocks["claude-code"].model_requests()) < 3:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    client.send({"op": "notify", "method": "session/cancel", "params": {"sessionId": sid}})
    cancelled = client.wait(turn, 60)
    release.touch()
    assert cancelled["result"]["stopReason"] == "cancelled"
    assert with_home(home, "stream-json") == {pid}
    after = client.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "Still there?"}]})
    assert after["result"]["stopReason"] == "end_turn" and "Still here." in texts(after["updates"], "agent_message_chunk")
    assert with_home(home, "stream-json") == {pid}

    # The runtime dies mid-prompt: that prompt ends with an error saying so; the next one starts it again.
    dying = client.start("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "Take your time."}]})
    while len(mocks["claude-code"].model_requests()) < 5:
        assert time.monotonic() < deadline + 120
        time.sleep(0.05)
    os.killpg(pid, signal.SIGKILL)
    died = client.wait(dying, 60)
    (tmp_path / "release-2").touch()
    assert died["error"]["code"] == -32603 and "exited during the turn" in died["error"]["data"]["message"]
    back = client.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "Are you back?"}]})
    assert "Back again." in texts(back["updates"], "agent_message_chunk")
    (new_pid,) = with_home(home, "stream-json")
    assert new_pid != pid
    assert "Take your time." in said(mocks["claude-code"].model_requests()[-1])
    code, agent_pid = client.close()
    assert code == 0
    assert_gone(agent_pid)
    assert_gone(pid)
    assert_gone(new_pid)


@pytest.mark.skipif(os.getuid() != 0, reason="Claude Code refuses to bypass permissions only as root")
def test_bypass_as_root_is_refused_before_claude_code_runs_unless_a_sandbox_is_declared(sna: Path, tmp_path: Path, anthropic_mock: Any, openai_mock: Any) -> None:
    """Issue 47: `sna acp --permission-mode bypass` as root (every container) started Claude Code,
    which refused in the middle of the first turn ("cannot be used with root/sudo privileges"). The
    prompt is now refused before Claude Code runs, saying what to do; with Claude Code's own escape,
    IS_SANDBOX=1, it runs and its tools run without asking."""
    mocks, home, cwd, env = setup(
        tmp_path,
        anthropic_mock,
        openai_mock,
        claude=[tool_reply("claude-code", "toolu_acp_bypass_0000000000001", "touch made.txt"), text_reply("claude-code", "Made it.")],
        codex=[],
        opencode=[],
    )
    db = tmp_path / "history.db"
    args = ("--runtime", "claude-code", "--model", MODEL["claude-code"], "--permission-mode", "bypass")
    client = Client(sna, db, home, env, *args)
    initialize(client)
    sid = client.call("session/new", {"cwd": str(cwd), "mcpServers": []})["result"]["sessionId"]
    refused = client.wait(client.start("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "Make a file."}]}), 60)
    assert refused["error"]["code"] == -32602, refused
    message = refused["error"]["data"]["message"]
    assert message.startswith('field "permission_mode": Claude Code refuses to bypass permissions when run as root'), message
    assert "IS_SANDBOX=1" in message and "root/sudo" in message, message
    assert mocks["claude-code"].model_requests() == [] and with_home(home) == set()
    code, agent_pid = client.close()
    assert code == 0
    assert_gone(agent_pid)

    client = Client(sna, db, home, {**env, "IS_SANDBOX": "1"}, *args)
    initialize(client)
    client.call("session/resume", {"sessionId": sid, "cwd": str(cwd)})
    done = client.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "Make a file."}]})
    assert done["result"]["stopReason"] == "end_turn" and "Made it." in texts(done["updates"], "agent_message_chunk")
    assert [e for e in client.log if e.get("event") == "permission"] == []
    assert (cwd / "made.txt").exists()
    (pid,) = with_home(home, "stream-json")
    code, agent_pid = client.close()
    assert code == 0
    assert_gone(agent_pid)
    assert_gone(pid)


def rpc(proc: subprocess.Popen[str], id: int, method: str, params: Any) -> dict[str, Any]:
    assert proc.stdin and proc.stdout
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\n")
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        assert line, "sna acp closed stdout"
        message = json.loads(line)  # stdout holds nothing but protocol lines
        if message.get("id") == id:
            return message


def test_bad_params_and_unknown_ids_are_json_rpc_errors(sna: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG")}
    # Claude Code may start for the cancelled prompt: its API is a closed local port.
    env.update(QUIET_ENV, HOME=str(tmp_path), ANTHROPIC_BASE_URL="http://127.0.0.1:9", ANTHROPIC_API_KEY="sk-ant-none")
    proc = subprocess.Popen([str(sna), "--db", str(tmp_path / "h.db"), "acp", "--bin", f"claude-code={cli('claude')}"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        assert rpc(proc, 1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})["result"]["protocolVersion"] == 1
        unknown = rpc(proc, 2, "session/load", {"sessionId": "no-such", "cwd": str(tmp_path), "mcpServers": []})["error"]
        assert unknown["code"] == -32002 and unknown["data"]["sessionId"] == "no-such"
        unknown = rpc(proc, 3, "session/prompt", {"sessionId": "no-such", "prompt": [{"type": "text", "text": "hi"}]})["error"]
        assert unknown["code"] == -32002
        unknown = rpc(proc, 4, "session/resume", {"sessionId": "no-such", "cwd": str(tmp_path)})["error"]
        assert unknown["code"] == -32002
        relative = rpc(proc, 5, "session/new", {"cwd": "project", "mcpServers": []})["error"]
        assert relative["code"] == -32602 and relative["data"]["field"] == "cwd"
        missing = rpc(proc, 6, "session/new", {"mcpServers": []})["error"]
        assert missing["code"] == -32602 and "cwd" in json.dumps(missing)
        sid = rpc(proc, 7, "session/new", {"cwd": str(tmp_path), "mcpServers": []})["result"]["sessionId"]
        bad = rpc(proc, 8, "session/set_config_option", {"sessionId": sid, "configId": "runtime", "value": "vim"})["error"]
        assert bad["code"] == -32602 and "vim" in bad["data"]["message"]
        bad = rpc(proc, 9, "session/set_config_option", {"sessionId": sid, "configId": "colour", "value": "red"})["error"]
        assert bad["code"] == -32602 and bad["data"]["field"] == "configId"
        bad = rpc(proc, 10, "session/list", {"cursor": "yesterday"})["error"]
        assert bad["code"] == -32602 and bad["data"]["field"] == "cursor"
        empty = rpc(proc, 11, "session/prompt", {"sessionId": sid, "prompt": []})["error"]
        assert empty["code"] == -32602 and "prompt" in empty["data"]["message"]
        image = rpc(proc, 12, "session/prompt", {"sessionId": sid, "prompt": [{"type": "image", "data": "%%%", "mimeType": "image/png"}]})["error"]
        assert image["code"] == -32602 and "prompt[0].data" in image["data"]["message"]
        listed = rpc(proc, 13, "session/list", {})["result"]["sessions"]
        assert [s["sessionId"] for s in listed] == [sid]
        # A cancel right after the prompt (Claude Code still starting: no turn to interrupt yet)
        # still ends it as cancelled; a second prompt meanwhile is refused.
        assert proc.stdin and proc.stdout
        for line in (
            {"jsonrpc": "2.0", "id": 14, "method": "session/prompt", "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}},
            {"jsonrpc": "2.0", "id": 15, "method": "session/prompt", "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "again"}]}},
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}},
        ):
            proc.stdin.write(json.dumps(line) + "\n")
        proc.stdin.flush()
        answers: dict[int, dict[str, Any]] = {}
        while len(answers) < 2:
            message = json.loads(proc.stdout.readline())
            if message.get("id") in (14, 15):
                answers[message["id"]] = message
        assert answers[14].get("result", {}).get("stopReason") == "cancelled", answers[14]
        assert answers[15]["error"]["code"] == -32600 and "a prompt is running" in answers[15]["error"]["message"]
    finally:
        assert proc.stdin
        proc.stdin.close()
        assert proc.wait(30) == 0
        assert proc.stderr
        proc.stderr.close()


def commands_offered(client: Client, sid: str, timeout: float = 30) -> list[dict[str, Any]]:
    """The `available_commands_update` updates of `sid` the client got (after the answer to
    `session/new`, so looked for in the log), waiting up to `timeout` for the first."""
    deadline = time.monotonic() + timeout
    while True:
        with client.lock:
            found = [e["params"]["update"] for e in client.log if e.get("event") == "update" and e["params"]["sessionId"] == sid and e["params"]["update"]["sessionUpdate"] == "available_commands_update"]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_the_compact_command_runs_the_runtime_s_own_compaction(sna: Path, tmp_path: Path, anthropic_mock: Any, openai_mock: Any) -> None:
    """`sna acp` offers `/compact` after `session/new` (and `session/load`); the prompt
    `/compact keep the word PELICAN` runs Claude Code's own compaction with those instructions instead
    of a message: one compaction in the store, a chunk naming it, `end_turn`."""
    mocks, home, cwd, env = setup(
        tmp_path, anthropic_mock, openai_mock,
        claude=[text_reply("claude-code", "The word is PELICAN, noted."), summary_reply("claude-code"), text_reply("claude-code", "After the compaction.")],
        codex=[], opencode=[],
    )
    db = tmp_path / "history.db"
    client = Client(sna, db, home, env, "--runtime", "claude-code", "--model", MODEL["claude-code"])
    initialize(client)
    sid = client.call("session/new", {"cwd": str(cwd), "mcpServers": []})["result"]["sessionId"]
    (offered,) = commands_offered(client, sid)
    (command,) = offered["availableCommands"]
    assert command["name"] == "compact" and "compaction" in command["description"], command
    assert command["input"]["hint"], command

    turn = client.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "Remember the word PELICAN (FIRST-PROMPT-MARK)."}]})
    assert "The word is PELICAN, noted." in texts(turn["updates"], "agent_message_chunk")
    (pid,) = with_home(home, "stream-json")
    compacted = client.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "/compact keep the word PELICAN"}]})
    assert compacted["result"]["stopReason"] == "end_turn", compacted
    said_back = texts(compacted["updates"], "agent_message_chunk")
    assert said_back.startswith("compacted by claude-code (manual") and "summary at seq" in said_back, said_back
    # Claude Code's summary request: the second model request, over the first turn, with the
    # instructions; the command itself was no message to the model.
    requests = mocks["claude-code"].model_requests()
    assert len(requests) == 2
    summarizing = said(requests[1])
    assert "keep the word PELICAN" in summarizing and "FIRST-PROMPT-MARK" in summarizing
    after = client.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "And now?"}]})
    assert "After the compaction." in texts(after["updates"], "agent_message_chunk")
    assert "SUMMARY-MARKER-claude-code" in said(mocks["claude-code"].model_requests()[2])
    assert with_home(home, "stream-json") == {pid}  # the same process compacted and went on

    # Opened again: the history replayed, the command offered once more.
    loaded = client.call("session/load", {"sessionId": sid, "cwd": str(cwd), "mcpServers": []})
    assert kinds(loaded["updates"])[-1] == "available_commands_update"
    code, agent_pid = client.close()
    assert code == 0
    assert_gone(agent_pid)
    assert_gone(pid)

    (compaction,) = sna_history.Store(db).session(sid).compactions()
    assert compaction.runtime == "claude-code" and compaction.trigger == "manual"
    assert "SUMMARY-MARKER-claude-code" in compaction.summary
    assert f"summary at seq {compaction.summary_seq}" in said_back
