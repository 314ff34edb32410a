"""The host chaos campaign (issue 47, item 2): one `sna_history.Host`, through the Python binding,
drives one agent on the real CLIs against the conformance suite's mock model servers, through a
random sequence of steps chosen by a seeded RNG with weights; after every step the invariants are
checked. A failure names the seed and the step, and prints the step log, so that
`scripts/chaos.sh STEPS SEED` runs the same sequence again.

The mocks answer every model request with a short text (their fallback); a turn is caught in flight
by the mocks' `hold_while` file: while it exists every model reply waits."""

from __future__ import annotations

import gc
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CONFORMANCE = Path(__file__).resolve().parent.parent / "conformance"
if str(CONFORMANCE) not in sys.path:
    sys.path.insert(0, str(CONFORMANCE))

import sna_history  # noqa: E402
from helpers.common import RED_PNG, bins, cli, make_project, private_env, stop  # noqa: E402
from helpers.mocks import Mock, start_mock  # noqa: E402
from helpers.processes import assert_gone  # noqa: E402
from helpers.runtimes import (  # noqa: E402
    COPILOT_CACHE,
    COPILOT_MODEL,
    GEMINI_MODEL,
    PI_ANTHROPIC_MODEL,
    PI_ANTHROPIC_PROVIDER,
    QWEN_MODEL,
    QWEN_SETTINGS,
    copilot_env,
    qwen_env,
    runtime_env,
)

# The models each runtime is started, set or switched to (the mocks echo any model back).
MODELS = {
    "claude-code": ["claude-opus-5-5", "claude-sonnet-4-5"],
    "codex": ["gpt-5.5", "gpt-5.4"],
    "opencode": ["anthropic/claude-sonnet-4-5", "anthropic/claude-opus-4-5"],
    "gemini-cli": [GEMINI_MODEL, "gemini-2.5-pro"],
    "pi": [PI_ANTHROPIC_MODEL, f"{PI_ANTHROPIC_MODEL}-2"],
    "qwen-code": [QWEN_MODEL, "qwen3-coder-plus"],
    "copilot-cli": [COPILOT_MODEL, "claude-opus-4.5"],
}
# Qwen Code's /compress compresses only a conversation whose last prompt was larger than its
# summary: its mock reports prompts that large.
QWEN_USAGE = {"prompt_tokens": 60000, "completion_tokens": 50, "total_tokens": 60050}
# The steps and their weights.
WEIGHTS = {
    "send": 30,
    "send_image": 5,
    "queued_sends": 8,
    "interrupt": 8,
    "kill_between": 8,
    "kill_during": 6,
    "drop_host": 8,
    "set_model": 6,
    "switch": 8,
    "compact": 5,
}
SESSION = "chaos"
# A message of the campaign, as `Campaign.text` writes it.
MESSAGE = re.compile(r"CHAOS-\d+-\d+-\d+: answer briefly\.")
TIMEOUT = 120


class Violation(AssertionError):
    """An invariant that did not hold (or a send that failed when it must succeed)."""


@dataclass
class Sent:
    """A send of the campaign: its text, whether its turn completed, and the turn's answer blocks."""

    text: str
    completed: bool = False
    answer_ids: list[str] = field(default_factory=list)


class Campaign:
    def __init__(self, tmp: Path, seed: int, runtimes: list[str]) -> None:
        self.tmp = tmp
        self.seed = seed
        self.rng = random.Random(seed)
        self.runtimes = runtimes
        self.log: list[str] = []
        self.sent: list[Sent] = []
        self.pids: set[int] = set()
        self.checked_files: list[str] = []
        self.cursor = 0
        self.procs: list[Any] = []
        self.hold = tmp / "hold"
        self.home = tmp / "home"
        self.cwd = make_project(tmp)
        self.db = tmp / "history.db"
        self.anthropic = self._mock("anthropic", "mock_anthropic.py")
        self.openai = self._mock("openai", "mock_openai.py")
        self.gemini = self._mock("gemini", "mock_gemini.py") if "gemini-cli" in runtimes else None
        self.chat = self._mock("chat", "mock_openai_chat.py", side_text="Mock title", usage=QWEN_USAGE) if "qwen-code" in runtimes else None
        self.env: dict[str, str] = {}
        for runtime in runtimes:
            if runtime == "qwen-code":
                self.qwen_home()
            elif runtime == "copilot-cli":
                # Copilot's unpacked runtime through HOME's cache (XDG_CACHE_HOME is OpenCode's too).
                self.env.update({k: v for k, v in copilot_env(self.home, self.anthropic).items() if k not in ("HOME", "XDG_CACHE_HOME")})
                (self.home / ".cache").mkdir(parents=True, exist_ok=True)
                (self.home / ".cache" / "copilot").symlink_to(COPILOT_CACHE / "copilot")
            else:
                self.env.update(runtime_env(runtime, self.home, self.mock_of(runtime)))
        if "pi" in runtimes:
            self.second_pi_model()
        self.store: Any = None
        self.host: Any = None
        self.agent: Any = None
        self.runtime = runtimes[0]

    # --- set-up and tear-down

    def _mock(self, name: str, server: str, **script: Any) -> Mock:
        mock, proc = start_mock(self.tmp / name, {"replies": [], "hold_while": str(self.hold), **script}, server)
        self.procs.append(proc)
        return mock

    def mock_of(self, runtime: str) -> Mock:
        if runtime == "codex":
            return self.openai
        if runtime == "gemini-cli":
            assert self.gemini is not None
            return self.gemini
        if runtime == "qwen-code":
            assert self.chat is not None
            return self.chat
        return self.anthropic

    def qwen_home(self) -> None:
        """Qwen Code's settings, with both its models listed (for `set_model` and switches) and no
        follow-up suggestion requests after each turn."""
        assert self.chat is not None
        self.env.update({k: v for k, v in qwen_env(self.home, self.chat).items() if k != "HOME"})
        base = {"baseUrl": self.chat.url.rstrip("/") + "/v1", "envKey": "OPENAI_API_KEY"}
        settings = {**QWEN_SETTINGS, "ui": {"enableFollowupSuggestions": False},
                    "modelProviders": {"openai": [{"id": m, "name": m, **base} for m in MODELS["qwen-code"]]}}
        (self.home / ".qwen" / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")

    def second_pi_model(self) -> None:
        """Pi's mock provider gets a second model, for `set_model` and switches to pick."""
        models = self.home / ".pi" / "agent" / "models.json"
        config = json.loads(models.read_text())
        listed = config["providers"][PI_ANTHROPIC_PROVIDER]["models"]
        listed.append({**listed[0], "id": MODELS["pi"][1], "name": "Mock Claude 2"})
        models.write_text(json.dumps(config, indent=2))

    def requests(self) -> int:
        return len(self.mock_of(self.runtime).runtime_requests(self.runtime))

    def open_host(self) -> None:
        self.store = sna_history.Store(self.db)
        self.host = sna_history.Host(self.store, bins=bins(self.runtimes), env=self.env, home=str(self.home))

    def start(self) -> None:
        self.open_host()
        self.agent = self.host.start(SESSION, self.runtime, model=MODELS[self.runtime][0], cwd=str(self.cwd))
        self.track()

    def close(self) -> None:
        if self.host is not None:
            self.host.close()
        self.host = self.agent = None
        if self.store is not None:
            self.store.close()
        self.store = None
        for proc in self.procs:
            stop(proc)
        self.procs = []
        self.hold.unlink(missing_ok=True)

    def track(self) -> None:
        pid = self.agent.status().pid
        if pid:
            self.pids.add(pid)

    # --- the steps

    def text(self, step: int, k: int = 0) -> str:
        """A message of the campaign (MESSAGE finds it)."""
        return f"CHAOS-{self.seed}-{step}-{k}: answer briefly."

    def send(self, step: int, images: bool = False) -> None:
        sent = Sent(self.text(step))
        self.sent.append(sent)
        try:
            turn = self.agent.send(sent.text, images=[{"data": RED_PNG, "mime": "image/png"}] if images else None, timeout=TIMEOUT)
        except sna_history.SnaError as e:
            raise Violation(f"a send failed: {e!r}") from e
        self.track()
        self.completed(sent, turn)

    def completed(self, sent: Sent, turn: Any) -> None:
        if turn.interrupted:
            return
        sent.completed = True
        sent.answer_ids = [b.id for b in turn.blocks if b.actor == "assistant" and b.kind == "text"]
        if not sent.answer_ids:
            raise Violation(f"the turn of {sent.text!r} completed without an answer")

    def in_flight(self, step: int, k: int = 0) -> tuple[Sent, threading.Thread, list[Any], list[BaseException]]:
        """A send on a thread (one in three with an image), its model reply held; returns once the
        mock has the request."""
        before = self.requests()
        self.hold.touch()
        sent = Sent(self.text(step, k))
        self.sent.append(sent)
        images = [{"data": RED_PNG, "mime": "image/png"}] if self.rng.random() < 1 / 3 else None
        turns: list[Any] = []
        failures: list[BaseException] = []

        def run() -> None:
            try:
                turns.append(self.agent.send(sent.text, images=images, timeout=TIMEOUT))
            except BaseException as e:  # noqa: BLE001 - judged by the step
                failures.append(e)

        worker = threading.Thread(target=run)
        worker.start()
        deadline = time.monotonic() + 60
        while self.requests() <= before and not failures:
            if time.monotonic() > deadline:
                self.hold.unlink(missing_ok=True)
                worker.join(TIMEOUT)
                raise Violation("the held turn never reached the model")
            time.sleep(0.05)
        self.track()
        return sent, worker, turns, failures

    def queued_sends(self, step: int) -> None:
        first = self.in_flight(step)
        queued = []
        for k in (1, 2):
            sent = Sent(self.text(step, k))
            self.sent.append(sent)
            out: list[Any] = []
            err: list[BaseException] = []

            def run(sent: Sent = sent, out: list[Any] = out, err: list[BaseException] = err) -> None:
                try:
                    out.append(self.agent.send(sent.text, timeout=TIMEOUT))
                except BaseException as e:  # noqa: BLE001
                    err.append(e)

            worker = threading.Thread(target=run)
            worker.start()
            queued.append((sent, worker, out, err))
            time.sleep(0.2)
        self.hold.unlink()
        for sent, worker, out, err in [first, *queued]:
            worker.join(TIMEOUT + 10)
            if err or not out:
                raise Violation(f"the queued send {sent.text!r} failed: {err!r}")
            self.completed(sent, out[0])

    def interrupt(self, step: int) -> None:
        sent, worker, turns, failures = self.in_flight(step)
        self.agent.interrupt()
        worker.join(60)
        self.hold.unlink()
        if failures or not turns:
            raise Violation(f"the interrupted send raised {failures!r}")
        self.completed(sent, turns[0])

    def kill(self) -> None:
        status = self.agent.status()
        pid = status.pid
        if not pid or not status.alive:
            return
        os.killpg(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while self.agent.status().alive:
            if time.monotonic() > deadline:
                raise Violation(f"the agent still says alive 30 s after kill -9 of {pid}")
            time.sleep(0.05)
        self.gone(pid)

    def kill_during(self, step: int) -> None:
        sent, worker, turns, failures = self.in_flight(step)
        self.kill()
        worker.join(60)
        self.hold.unlink()
        if turns:
            self.completed(sent, turns[0])
        elif not failures or not isinstance(failures[0], sna_history.RuntimeFailedError):
            raise Violation(f"the send whose process was killed gave {failures!r}, not RuntimeFailedError")

    def drop_host(self) -> None:
        self.agent = self.host = self.store = None
        gc.collect()
        for pid in list(self.pids):
            self.gone(pid)
        self.open_host()
        # A session that never ran has no runtime of its own to go back to: it is named.
        ran = bool(self.store.session(SESSION).blocks())
        self.agent = self.host.resume(SESSION) if ran else self.host.resume(SESSION, runtime=self.runtime, model=MODELS[self.runtime][0])
        self.track()
        self.runtime = self.agent.status().runtime

    def set_model(self) -> None:
        current = self.agent.status().model
        choices = [m for m in MODELS[self.runtime] if m != current] or MODELS[self.runtime]
        self.agent.set_model(self.rng.choice(choices))

    def switch(self) -> None:
        others = [r for r in self.runtimes if r != self.runtime]
        target = self.rng.choice(others) if others else self.runtime
        self.agent.switch(target, model=self.rng.choice(MODELS[target]))
        self.runtime = target
        self.track()

    def compact(self) -> None:
        # Judged before the compact, from the answers stored so far (seed 2026, step 1,749: Claude
        # Code's "Not enough messages to compact." was then stored as an answer; it is now a status).
        nothing = self.nothing_to_compact()
        try:
            self.agent.compact(timeout=TIMEOUT)
        except sna_history.UnsupportedError as e:
            # Gemini CLI compresses only by itself, or from its interactive screen: the host says so.
            if self.runtime != "gemini-cli":
                raise Violation(f"compact failed: {e!r}") from e
        except sna_history.RuntimeFailedError as e:
            # A runtime may decline to compact what holds no answered turn since the last
            # compaction, in its own words; anything else is a violation.
            if not nothing:
                raise Violation(f"compact failed: {e!r}") from e
        except sna_history.SnaError as e:
            raise Violation(f"compact failed: {e!r}") from e
        else:
            if self.runtime == "gemini-cli":
                raise Violation("Gemini CLI was asked to compact, and the host did not refuse")
        self.track()

    def nothing_to_compact(self) -> bool:
        """True when no turn was answered since the session's last compaction (or ever): what a
        runtime may decline to compact (Pi: "Already compacted", or no entry when all of it is
        within what it keeps)."""
        session = self.store.session(SESSION)
        after = max((c.summary_seq for c in session.compactions()), default=-1)
        return not any(b.seq > after and b.kind == "text" and b.actor == "assistant" for b in session.blocks())

    def step(self, n: int) -> str:
        name = self.rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]
        self.log.append(f"step {n}: {name} on {self.runtime}")
        if name == "send":
            self.send(n)
        elif name == "send_image":
            self.send(n, images=True)
        elif name == "queued_sends":
            self.queued_sends(n)
        elif name == "interrupt":
            self.interrupt(n)
        elif name == "kill_between":
            self.kill()
        elif name == "kill_during":
            self.kill_during(n)
        elif name == "drop_host":
            self.drop_host()
        elif name == "set_model":
            self.set_model()
        elif name == "switch":
            self.switch()
        else:
            self.compact()
        return name

    # --- the invariants

    def check(self) -> None:
        blocks = self.store.session(SESSION).blocks()
        seqs = [b.seq for b in blocks]
        if seqs and seqs != list(range(seqs[0], seqs[0] + len(seqs))):
            raise Violation(f"seq not dense: {seqs}")
        by_id: dict[str, list[int]] = {}
        # The user text blocks each of the campaign's messages is in (a runtime may merge a message
        # it dropped into the next one), found in one pass: a search per message made a long run
        # slow down as the square of its length.
        users_of: dict[str, list[int]] = {}
        for b in blocks:
            by_id.setdefault(b.id, []).append(b.seq)
            if b.actor == "user" and b.kind == "text":
                for text in set(MESSAGE.findall(b.content)):
                    users_of.setdefault(text, []).append(b.seq)
        last = -1
        for sent in self.sent:
            users = users_of.get(sent.text, [])
            if len(users) > 1:
                raise Violation(f"{sent.text!r} stored {len(users)} times (seqs {users})")
            if not sent.completed:
                continue
            if not users:
                raise Violation(f"the completed turn of {sent.text!r} has no user message stored")
            if users[0] <= last:
                raise Violation(f"{sent.text!r} stored at seq {users[0]}, before the turn completed ahead of it (seq {last})")
            last = users[0]
            for answer in sent.answer_ids:
                found = by_id.get(answer, [])
                if len(found) != 1 or found[0] <= users[0]:
                    raise Violation(f"the answer {answer} of {sent.text!r} is stored at seqs {found} (its message at {users[0]})")
        events = list(self.agent.events(since=self.cursor))
        cursors = [e.cursor for e in events]
        if any(c <= self.cursor for c in cursors) or cursors != sorted(set(cursors)):
            raise Violation(f"event cursors after {self.cursor} do not only grow: {cursors}")
        if cursors:
            self.cursor = cursors[-1]
        if self.agent.status().cursor < self.cursor:
            raise Violation(f"the status cursor {self.agent.status().cursor} is behind {self.cursor}")
        current = self.agent.status().pid
        for pid in self.pids - {current}:
            self.gone(pid)

    def gone(self, pid: int) -> None:
        """Asserts that the group of `pid` is gone, then stops tracking it: the kernel hands its
        number out again (pid_max is 32,768 on many machines, which a long run goes round), and a
        later process with that number is not the runtime process that had it."""
        assert_gone(pid)
        self.pids.discard(pid)

    def check_gone(self) -> None:
        for pid in list(self.pids):
            self.gone(pid)

    def native_file(self, runtime: str, native_id: str) -> Path:
        """The runtime's own file of the thread (OpenCode's thread, kept in its database, is written
        out by `opencode export`)."""
        if runtime == "claude-code":
            found = list((self.home / ".claude" / "projects").rglob(f"{native_id}.jsonl"))
        elif runtime == "codex":
            found = list((self.home / ".codex" / "sessions").rglob(f"rollout-*-{native_id}.jsonl"))
        elif runtime == "pi":
            found = list((self.home / ".pi" / "agent" / "sessions").rglob(f"*_{native_id}.jsonl"))
        elif runtime == "qwen-code":
            found = list((self.home / ".qwen" / "projects").glob(f"*/chats/{native_id}.jsonl"))
        elif runtime == "copilot-cli":
            found = [p for p in [self.home / ".copilot" / "session-state" / native_id / "events.jsonl"] if p.exists()]
        elif runtime == "gemini-cli":
            # A `session/load` leaves a small start-up file with the same short id: the log is the
            # largest file whose first record names the thread.
            named = [p for p in (self.home / ".gemini" / "tmp").glob(f"*/chats/session-*-{native_id[:8]}.jsonl")
                     if json.loads(p.read_text().splitlines()[0]).get("sessionId") == native_id]
            found = [max(named, key=lambda p: p.stat().st_size)] if named else []
        else:
            found = [self.opencode_export(native_id)]
        if len(found) != 1:
            raise Violation(f"{runtime}'s file of thread {native_id}: found {found}")
        return found[0]

    def check_requests_once(self, runtime: str) -> None:
        """No model request of `runtime` carries one of the campaign's messages twice."""
        for n, request in enumerate(self.mock_of(runtime).runtime_requests(runtime)):
            texts = re.findall(r"CHAOS-\d+-\d+-\d+", json.dumps(request))
            if len(texts) != len(set(texts)):
                raise Violation(f"{runtime}'s model request {n} carries a message twice: {texts}")

    def opencode_export(self, native_id: str) -> Path:
        """`opencode export` of the thread into a file. Its output goes to a file, not a pipe: piped,
        OpenCode 1.18.33 exits before its output is written past the first 128 KiB."""
        path = self.tmp / f"opencode-{native_id}-{len(self.log)}.json"
        with path.open("w") as out:
            proc = subprocess.Popen([str(cli("opencode")), "export", native_id], cwd=self.cwd, env={**private_env(self.home), **self.env},
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.PIPE, start_new_session=True)
            try:
                _, err = proc.communicate(timeout=180)
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        if proc.returncode != 0:
            raise Violation(f"opencode export {native_id} exited {proc.returncode}: {err.decode(errors='replace')[-2000:]}")
        text = path.read_text()
        path.write_text(text[text.index("{"):])
        return path

    def check_native_files(self) -> None:
        """Each runtime's own file of the thread the session is bound to, imported, holds the
        campaign's messages once each and in the store's order."""
        session = self.store.session(SESSION)
        said = {text for b in session.blocks() if b.actor == "user" and b.kind == "text" for text in MESSAGE.findall(b.content)}
        stored = [s.text for s in self.sent if s.text in said]
        position = {text: n for n, text in enumerate(stored)}
        with sna_history.Store(self.tmp / f"import-{len(self.log)}.db") as scratch:
            for runtime in self.runtimes:
                binding = session.binding(runtime)
                if binding is None:
                    continue
                path = self.native_file(runtime, binding.native_id)
                blocks = scratch.import_file(path).blocks()
                held = [s for b in blocks if b.actor == "user" and b.kind == "text"
                        for s in sorted(set(MESSAGE.findall(b.content)) & position.keys(), key=position.__getitem__)]
                self.check_requests_once(runtime)
                if len(held) != len(set(held)):
                    raise Violation(f"{runtime}'s file {path.name} holds a message twice: {held}")
                if held != [s for s in stored if s in held]:
                    raise Violation(f"{runtime}'s file {path.name} has the messages in another order than the store: {held}")
                self.checked_files.append(runtime)

    def run(self, steps: int) -> dict[str, int]:
        counts: dict[str, int] = {}
        self.start()
        for n in range(steps):
            try:
                name = self.step(n)
                self.check()
            except BaseException as e:
                self.hold.unlink(missing_ok=True)
                tail = "\n".join(self.log[-int(os.environ.get("CHAOS_TAIL", "30")):])
                raise Violation(f"seed {self.seed}, step {n} ({self.log[-1]}): {e}\n"
                                f"reproduce: scripts/chaos.sh {n + 1} {self.seed}\nlast steps:\n{tail}") from e
            counts[name] = counts.get(name, 0) + 1
        # The next send always succeeds, also after the last step.
        try:
            self.send(steps)
            self.check()
            self.check_native_files()
        except BaseException as e:
            tail = "\n".join(self.log[-int(os.environ.get("CHAOS_TAIL", "30")):])
            raise Violation(f"seed {self.seed}, after the last step: {e}\nlast steps:\n{tail}") from e
        return counts
