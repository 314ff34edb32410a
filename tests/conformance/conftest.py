"""The fixtures of the conformance suite; the helpers they use, and the tests too, are in helpers/.

Every fixture works in the test's own `tmp_path` and starts its servers on free ports of 127.0.0.1,
so tests are independent of each other and run in parallel under pytest-xdist (`-n 2`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.common import make_project
from helpers.drivers import Runner, runners
from helpers.host import HostRig, rig_factory
from helpers.mocks import mock_factory
from helpers.processes import assert_gone
from helpers.runtimes import runtime_env
from helpers.serve import Server


@pytest.fixture
def anthropic_mock(tmp_path: Path) -> Iterator[Any]:
    """A factory: `anthropic_mock(replies)` starts a mock Messages API; all are stopped afterwards."""
    yield from mock_factory(tmp_path, "mock_anthropic.py")


@pytest.fixture
def openai_mock(tmp_path: Path) -> Iterator[Any]:
    """A factory: `openai_mock(replies)` starts a mock Responses API; all are stopped afterwards."""
    yield from mock_factory(tmp_path, "mock_openai.py")


@pytest.fixture
def gemini_mock(tmp_path: Path) -> Iterator[Any]:
    """A factory: `gemini_mock(replies)` starts a mock Gemini API (replies are lists of Gemini parts,
    mock_gemini.py); all are stopped afterwards."""
    yield from mock_factory(tmp_path, "mock_gemini.py")


@pytest.fixture
def openai_chat_mock(tmp_path: Path) -> Iterator[Any]:
    """A factory: `openai_chat_mock(replies)` starts a mock Chat Completions API (mock_openai_chat.py,
    for Pi's `openai-completions` provider); all are stopped afterwards."""
    yield from mock_factory(tmp_path, "mock_openai_chat.py")


@pytest.fixture(scope="session")
def drivers() -> dict[str, Runner]:
    """`drivers[language](job, tmp)`: the job's result from that language's binding."""
    return runners()


@pytest.fixture
def rig(tmp_path: Path, anthropic_mock: Any, openai_mock: Any) -> Iterator[Any]:
    """`rig(runtime, replies)`: a mock with those replies and a home set up for the runtime (one of
    Claude Code, Codex and OpenCode). After the test, no process the host started may be left
    (checked by pid and process group). test_gemini_live.py and test_pi_live.py have their own."""

    def build(runtime: str, replies: list[Any], name: str = "mock") -> HostRig:
        mock = openai_mock(replies, name=name) if runtime == "codex" else anthropic_mock(replies, name=name)
        home = tmp_path / "home"
        return HostRig(runtime, tmp_path, mock, home, make_project(tmp_path), runtime_env(runtime, home, mock))

    yield from rig_factory(build)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    """`serve(rig, **kw)`: `sna serve` with the rig's environment and HOME; stopped after the test,
    and every runtime process it started must be gone."""
    servers: list[Server] = []
    pids: set[int] = set()

    def start(rig: Any = None, **kw: Any) -> Server:
        env = rig.env if rig else {}
        home = rig.home if rig else None
        server = Server(kw.pop("db", tmp_path / "history.db"), env=env, home=home, **kw)
        server.pids = pids  # type: ignore[attr-defined]
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
    for pid in pids:
        assert_gone(pid)
