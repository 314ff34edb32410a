"""What the tests of the host (`sna_history.Host`), `sna serve` and `sna acp` share: a runtime's rig
(its mock, private HOME and project), a turn sent in the background, a permission asked and
answered, and the words of the compaction scenario."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sna_history

from .common import FIRST_THREE, bins
from .mocks import Mock
from .processes import assert_gone
from .runtimes import MODEL

# The runtimes test_host.py, test_serve.py and the browser test run.
RUNTIMES = list(FIRST_THREE)

# The compaction scenario (test_host_compact.py, test_serve.py, test_acp.py): the instructions for the
# summary (Claude Code and Pi take them; Codex and OpenCode have no place for them), the prompts, and
# the answer the summary must keep.
INSTRUCTIONS = "Keep the word PELICAN and the file names."
P1 = "First prompt: list the files (FIRST-PROMPT-MARK)."
P2 = "Remember the word PELICAN."
A2 = "Got it, I'll remember PELICAN."
P3 = "Third prompt, after the compaction."
P4 = "Fourth prompt, in the new runtime."


@dataclass
class Rig:
    """One runtime's mock, private HOME, project and the host options that point at them; the PIDs of
    the runtime processes its host started, each of which must be gone after the test (`gone`)."""

    runtime: str
    tmp: Path
    mock: Mock
    home: Path
    cwd: Path
    env: dict[str, str]
    pids: set[int] = field(default_factory=set)

    def bins(self) -> dict[str, str]:
        """The runtimes the host may run: this rig's own."""
        return bins([self.runtime])

    def host(self, store: sna_history.Store) -> sna_history.Host:
        return sna_history.Host(store, bins=self.bins(), env=self.env, home=str(self.home))

    def track(self, agent: sna_history.Agent) -> None:
        pid = agent.status().pid
        if pid:
            self.pids.add(pid)

    def requests(self) -> list[dict[str, Any]]:
        """The model requests the runtime sent, in order (without side requests)."""
        return self.mock.runtime_requests(self.runtime)

    def wait_for_requests(self, n: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while len(self.requests()) < n:
            assert time.monotonic() < deadline, f"the mock got {len(self.requests())} requests, not {n}"
            time.sleep(0.05)

    def gone(self) -> None:
        """No process the host started is left (checked by PID and process group)."""
        for pid in self.pids:
            assert_gone(pid)


class HostRig(Rig):
    """The rig of test_host.py's runtimes: a host that may run (and switch between) all three."""

    def bins(self) -> dict[str, str]:
        return bins(FIRST_THREE)

    def start(self, host: sna_history.Host, session_id: str = "s1", runtime: str | None = None, default_model: bool = False) -> sna_history.Agent:
        """Starts the runtime, with the test's model, or (`default_model`) the one it is configured with."""
        runtime = runtime or self.runtime
        args = ["--allowedTools", "Bash Read"] if runtime == "claude-code" else None
        agent = host.start(session_id, runtime, model=None if default_model else MODEL[runtime], cwd=str(self.cwd), args=args)
        self.track(agent)
        return agent


def rig_factory(build: Callable[..., Rig]) -> Iterator[Callable[..., Rig]]:
    """The body of a rig fixture: yields `build` (which makes a rig of the test's), and after the
    test checks with each rig's `gone` that no process its host started is left."""
    made: list[Rig] = []

    def make(*args: Any, **kw: Any) -> Rig:
        made.append(build(*args, **kw))
        return made[-1]

    yield make
    for r in made:
        r.gone()


def send_in_background(agent: Any, text: str, timeout: float = 120) -> tuple[threading.Thread, list[Any], list[BaseException]]:
    """Starts `agent.send(text)` on a thread of its own; gives the thread, the list the turn goes in
    when the send returns and the list its error goes in when it raises."""
    turns: list[Any] = []
    failures: list[BaseException] = []

    def send() -> None:
        try:
            turns.append(agent.send(text, timeout=timeout))
        except BaseException as e:  # noqa: BLE001 - handed to the test
            failures.append(e)

    worker = threading.Thread(target=send)
    worker.start()
    return worker, turns, failures


def asked_and_answered(agent: Any, text: str, allow: bool) -> tuple[dict[str, Any], Any]:
    """Sends `text` on a thread, waits for the one `permission_needed` event the turn raises,
    answers it with `allow`, and gives the event's data and the turn (its `send` result)."""
    since = agent.status().cursor
    worker, turns, _ = send_in_background(agent, text)
    asked: list[Any] = []
    deadline = time.monotonic() + 60
    while not asked and time.monotonic() < deadline:
        time.sleep(0.05)
        asked = [e for e in agent.events(since=since) if e.type == "permission_needed"]
    assert len(asked) == 1, [e.type for e in agent.events(since=since)]
    agent.answer_permission(asked[0].data["id"], allow)
    worker.join(120)
    assert turns, "the turn did not end"
    return asked[0].data, turns[0]
